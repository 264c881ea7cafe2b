//! A real OpenSSH `sshd` on 127.0.0.1, started by the test as root on a free port, in a
//! directory of its own: its host key, its configuration, the public keys it accepts
//! (`authorized_keys`, read for one server account whose login shell is `git-shell`) and its
//! log. The remote of git boards reached as `ssh://ACCOUNT@127.0.0.1:PORT/path/repo.git`.

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";
pub const GIT_SHELL: &str = "/usr/bin/git-shell";

/// Whether the OpenSSH server and client and `git-shell` are installed.
pub fn ssh_installed() -> bool {
    Path::new(SSHD).is_file()
        && Path::new(GIT_SHELL).is_file()
        && ["ssh", "ssh-keygen", "ssh-agent", "ssh-add"]
            .iter()
            .all(|p| crate::common::prereq::on_path(p))
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`, at most 10 s.
pub fn wait_listening(port: u16, what: &str) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what} did not start listening on 127.0.0.1:{port}"
        );
        sleep(Duration::from_millis(20));
    }
}

/// `sshd -D` on 127.0.0.1, public keys only, for one account; stopped when dropped.
pub struct Sshd {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
    /// The host's public key, as `known_hosts` names it (`TYPE BASE64`).
    pub host_key: String,
}

impl Sshd {
    /// Starts sshd in `dir` (made here) for `account` only, accepting the keys in
    /// `dir/authorized_keys` (none at first: see [`Sshd::authorize`]).
    pub fn start(dir: &Path, account: &str) -> Sshd {
        fs::create_dir_all(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        // The privilege separation directory sshd insists on (made at boot by its service).
        if !Path::new("/run/sshd").is_dir() {
            fs::create_dir_all("/run/sshd").unwrap();
            fs::set_permissions("/run/sshd", fs::Permissions::from_mode(0o755)).unwrap();
        }
        let key = dir.join("host_ed25519");
        let made = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "test host", "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success(), "ssh-keygen for the host key");
        let host_key = fs::read_to_string(dir.join("host_ed25519.pub")).unwrap();
        let host_key = host_key
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        // Read by sshd as the account: world-readable, like a home's authorized_keys.
        let keys = dir.join("authorized_keys");
        fs::write(&keys, "").unwrap();
        fs::set_permissions(&keys, fs::Permissions::from_mode(0o644)).unwrap();
        let port = free_port();
        let config = dir.join("sshd_config");
        fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {key}\nPidFile none\n\
                 AuthorizedKeysFile {keys}\nAllowUsers {account}\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nPermitRootLogin no\nX11Forwarding no\nAllowTcpForwarding no\n\
                 AllowAgentForwarding no\nPrintMotd no\nLogLevel VERBOSE\n",
                key = key.display(),
                keys = keys.display(),
            ),
        )
        .unwrap();
        let log = fs::File::create(dir.join("sshd.log")).unwrap();
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut d = Sshd {
            child,
            port,
            dir: dir.to_path_buf(),
            host_key,
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = d.child.try_wait() {
                panic!("sshd exited ({status}): {}", d.log());
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sshd did not start: {}",
                d.log()
            );
            sleep(Duration::from_millis(20));
        }
        d
    }

    /// Accepts the public key `line` (an `.pub` file's content) for the account.
    pub fn authorize(&self, line: &str) {
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(self.dir.join("authorized_keys"))
            .unwrap();
        writeln!(f, "{}", line.trim()).unwrap();
    }

    /// No key is accepted any more.
    pub fn revoke_all(&self) {
        fs::write(self.dir.join("authorized_keys"), "").unwrap();
    }

    /// The line a client's `known_hosts` needs to trust this server.
    pub fn known_hosts_line(&self) -> String {
        format!("[127.0.0.1]:{} {}\n", self.port, self.host_key)
    }

    /// What sshd logged so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // sshd -D ends its connections' processes with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
