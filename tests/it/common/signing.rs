//! SSH keys for signed boards: real ed25519 keys made by `ssh-keygen`, one per agent, and an
//! allowed-signers file vouching for them (the trust root).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory of keys, one per agent, and the allowed-signers file that names them.
pub struct Signers {
    dir: tempfile::TempDir,
}

impl Signers {
    /// A key for each agent, and an allowed-signers file with each key under its agent's name.
    pub fn new(agents: &[&str]) -> Signers {
        let s = Signers {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(s.allowed(), "").unwrap();
        for a in agents {
            s.add(a, a);
        }
        s
    }

    /// Make a key `name` and vouch for it as `principal`.
    pub fn add(&self, name: &str, principal: &str) {
        self.make(name);
        self.vouch(principal, name);
    }

    /// Make a key `name` that no allowed-signers line names.
    pub fn make(&self, name: &str) {
        let out = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(self.key(name))
            .output()
            .expect("ssh-keygen runs");
        assert!(out.status.success(), "ssh-keygen: {out:?}");
    }

    /// Add a line to the allowed-signers file: the key `name`'s public key, as `principal`.
    pub fn vouch(&self, principal: &str, name: &str) {
        let public = std::fs::read_to_string(format!("{}.pub", self.key(name).display())).unwrap();
        self.vouch_line(&format!("{principal} {}", public.trim()));
    }

    /// Add a line to the allowed-signers file as it is.
    pub fn vouch_line(&self, line: &str) {
        let mut text = std::fs::read_to_string(self.allowed()).unwrap();
        text.push_str(line);
        text.push('\n');
        std::fs::write(self.allowed(), text).unwrap();
    }

    /// The private key file of `name`.
    pub fn key(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.key"))
    }

    /// The allowed-signers file.
    pub fn allowed(&self) -> PathBuf {
        self.dir.path().join("allowed_signers")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The global flags that sign as `name` and check against the allowed-signers file.
    pub fn flags(&self, name: &str) -> Vec<String> {
        vec![
            "--signing-key".into(),
            self.key(name).display().to_string(),
            "--allowed-signers".into(),
            self.allowed().display().to_string(),
        ]
    }

    /// The flag that checks against the allowed-signers file.
    pub fn trust(&self) -> Vec<String> {
        vec![
            "--allowed-signers".into(),
            self.allowed().display().to_string(),
        ]
    }
}
