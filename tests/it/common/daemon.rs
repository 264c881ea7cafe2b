//! `git daemon` serving a directory of bare repositories on 127.0.0.1, pushes enabled: the remote
//! of git boards that agents reach only over the network.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// `git daemon` serving the remote's directory on 127.0.0.1, with pushes enabled.
pub struct Daemon {
    pub child: Child,
    pub port: u16,
    pub base: PathBuf,
}

/// The `git-daemon` program (run directly: `git daemon` would run it as a child, which
/// killing `git` leaves running).
pub fn daemon_program() -> Option<PathBuf> {
    let out = Command::new("git").args(["--exec-path"]).output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some(dir.join("git-daemon")).filter(|p| p.is_file())
}

pub fn daemon_installed() -> bool {
    daemon_program().is_some()
}

impl Daemon {
    pub fn start(base: &Path, port: Option<u16>) -> Daemon {
        let port = port.unwrap_or_else(|| {
            TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        });
        let child = Command::new(daemon_program().expect("git-daemon"))
            .arg("--enable=receive-pack")
            .arg("--export-all")
            .arg("--reuseaddr")
            .arg("--informative-errors")
            .arg(format!("--base-path={}", base.display()))
            .arg("--listen=127.0.0.1")
            .arg(format!("--port={port}"))
            .arg(base)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let d = Daemon {
            child,
            port,
            base: base.to_path_buf(),
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "git daemon did not start"
            );
            sleep(Duration::from_millis(20));
        }
        d
    }

    pub fn board(&self, refname: &str) -> String {
        format!(
            "git+git://127.0.0.1:{}/remote.git#{refname}:task.md",
            self.port
        )
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}
