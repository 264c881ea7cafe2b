//! A real web server serving git's smart HTTP protocol: `lighttpd` on 127.0.0.1, started by the
//! test on a free port, running `git http-backend` as a CGI program for the bare repositories of
//! a directory, behind basic authentication (a user and token per line of a file the test
//! writes, re-read on every request, so a token is revoked by rewriting it). The remote of git
//! boards reached as `http://127.0.0.1:PORT/git/repo.git`.

use crate::common::sshd::{free_port, wait_listening};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub const LIGHTTPD: &str = "/usr/sbin/lighttpd";

/// `git http-backend`, in git's exec path.
pub fn http_backend() -> Option<PathBuf> {
    let out = Command::new("git").arg("--exec-path").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some(dir.join("git-http-backend")).filter(|p| p.is_file())
}

/// Whether lighttpd (with its CGI and authentication modules) and `git http-backend` are
/// installed.
pub fn httpd_installed() -> bool {
    Path::new(LIGHTTPD).is_file()
        && Path::new("/usr/lib/lighttpd/mod_authn_file.so").is_file()
        && http_backend().is_some()
}

/// lighttpd in the foreground; stopped when dropped.
pub struct Httpd {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Httpd {
    /// Serves the repositories under `repos` at `/git/`, in `dir` (made here), accepting the
    /// `(user, token)` pairs of `users`.
    pub fn start(dir: &Path, repos: &Path, users: &[(&str, &str)]) -> Httpd {
        fs::create_dir_all(dir.join("htdocs")).unwrap();
        let port = free_port();
        let d = |p: &str| dir.join(p).display().to_string();
        let config = dir.join("lighttpd.conf");
        fs::write(
            &config,
            format!(
                "server.modules = (\"mod_alias\", \"mod_setenv\", \"mod_auth\", \
                 \"mod_authn_file\", \"mod_cgi\")\n\
                 server.bind = \"127.0.0.1\"\nserver.port = {port}\n\
                 server.document-root = \"{htdocs}\"\nserver.errorlog = \"{log}\"\n\
                 server.max-request-size = 65536\n\
                 auth.backend = \"plain\"\nauth.backend.plain.userfile = \"{users}\"\n\
                 auth.require = ( \"/git/\" => ( \"method\" => \"basic\", \"realm\" => \"git\", \
                 \"require\" => \"valid-user\" ) )\n\
                 alias.url = ( \"/git\" => \"{backend}\" )\n\
                 $HTTP[\"url\"] =~ \"^/git\" {{\n\
                 \x20 cgi.assign = ( \"\" => \"\" )\n\
                 \x20 setenv.add-environment = ( \"GIT_PROJECT_ROOT\" => \"{repos}\", \
                 \"GIT_HTTP_EXPORT_ALL\" => \"1\" )\n}}\n",
                htdocs = d("htdocs"),
                log = d("error.log"),
                users = d("users"),
                backend = http_backend().expect("git http-backend").display(),
                repos = repos.display(),
            ),
        )
        .unwrap();
        let h = Httpd {
            child: Command::new(LIGHTTPD)
                .arg("-D")
                .arg("-f")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(dir.join("stderr.log")).unwrap())
                .spawn()
                .unwrap(),
            port,
            dir: dir.to_path_buf(),
        };
        h.set_users(users);
        wait_listening(port, "lighttpd");
        h
    }

    /// The accepted `(user, token)` pairs from now on: a token left out is revoked.
    pub fn set_users(&self, users: &[(&str, &str)]) {
        let path = self.dir.join("users");
        let tmp = self.dir.join("users.new");
        let text: String = users.iter().map(|(u, t)| format!("{u}:{t}\n")).collect();
        fs::write(&tmp, text).unwrap();
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600)).unwrap();
        fs::rename(&tmp, &path).unwrap();
    }

    /// The address of the repository `name` (e.g. `remote.git`), with no credential in it.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/git/{name}", self.port)
    }

    /// What lighttpd logged so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Httpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
