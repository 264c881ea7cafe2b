//! Signed records (format 3): an agent signs each record it writes with its SSH key, and every
//! reader that has a trust root checks the signatures.
//!
//! The cryptography is OpenSSH's: records are signed with `ssh-keygen -Y sign` and checked with
//! `ssh-keygen -Y verify` (the `sshsig` format, namespace [`NAMESPACE`]), the tools git uses
//! for SSH-signed commits, so a record can be checked without `pair` (docs/signing.md). Each
//! run is bounded in time ([`TIMEOUT`]) and reads its message on standard input.
//!
//! **Who may sign as whom** is not the board's to say (anyone who can write the board could add
//! a key to it): it is the verifier's trust root, an allowed-signers file (`--allowed-signers
//! FILE`, `$PAIR_ALLOWED_SIGNERS`, or git's `gpg.ssh.allowedSignersFile`, the file `git log
//! --show-signature` reads), whose principals are agent ids. The key an agent signs with comes
//! from `--signing-key`, `$PAIR_SIGNING_KEY`, or git's `user.signingkey` when `gpg.format` is
//! `ssh`.
//!
//! **Where signatures are checked.** `validate` checks every record ([`check_board`]); a write
//! checks every record written since the last one it can trust ([`check_since`]): its writer's
//! own last record, or the last repair, each verified, since the write that added it checked
//! every record before it. A write whose own signature its trust root does not vouch for is
//! refused (exit 6), so is a write on a signed board without a key or a trust root.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::board::journal::{self, NAMESPACE, Record};
use crate::error::{Error, FieldError, Result};

/// How long one run of `ssh-keygen` may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The key and the trust root a command was given (`--signing-key`, `--allowed-signers` or
/// their variables); git's configuration stands in for either that is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    pub signing_key: Option<PathBuf>,
    pub allowed_signers: Option<PathBuf>,
}

/// The allowed-signers file signatures are checked against, and where it was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRoot {
    pub file: PathBuf,
    /// `--allowed-signers` (or its variable), or `gpg.ssh.allowedSignersFile`.
    pub source: &'static str,
}

impl TrustRoot {
    /// Why this file cannot be checked against (missing, not a file, unreadable, or a key
    /// rather than a list of allowed signers), in words naming it and where it was named; its
    /// content is never quoted.
    pub fn unusable(&self) -> Option<String> {
        let named = format!("the trust root {} ({})", self.file.display(), self.source);
        let why = match std::fs::metadata(&self.file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such file".to_string(),
            Err(e) => e.to_string(),
            Ok(m) if !m.is_file() => "not a file".to_string(),
            Ok(_) => match std::fs::read(&self.file) {
                Err(e) => e.to_string(),
                Ok(b) if b.windows(11).any(|w| w == b"PRIVATE KEY") => {
                    "it holds a private key, not a list of allowed signers (ssh-keygen(1), \
                     ALLOWED SIGNERS)"
                        .to_string()
                }
                Ok(_) => return None,
            },
        };
        Some(format!(
            "cannot read {named}: {why}; no signature was checked. Name the allowed-signers file \
             (--allowed-signers FILE, $PAIR_ALLOWED_SIGNERS, or git's gpg.ssh.allowedSignersFile)"
        ))
    }
}

/// git's answer to `git config --get KEY`, as the user's configuration gives it in `dir`.
fn git_config(dir: &Path, key: &str) -> Option<String> {
    let out = crate::repo::git::as_user(dir, &["config", "--get", key]).ok()?;
    if !out.status.success() {
        return None;
    }
    let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!v.is_empty()).then_some(v)
}

/// A path from git's configuration, `~/` read as the home directory.
fn config_path(v: &str) -> PathBuf {
    match (v.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(v),
    }
}

/// The directory whose git configuration applies to the board at `path`.
pub fn config_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if p.is_dir() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl Keys {
    /// The signing key: the one given, else git's `user.signingkey` when `gpg.format` is `ssh`.
    pub fn signing_key(&self, dir: &Path) -> Option<PathBuf> {
        if let Some(k) = &self.signing_key {
            return Some(k.clone());
        }
        if git_config(dir, "gpg.format").as_deref() != Some("ssh") {
            return None;
        }
        git_config(dir, "user.signingkey")
            .filter(|k| !k.starts_with("key::"))
            .map(|k| config_path(&k))
    }

    /// The trust root: the file given, else git's `gpg.ssh.allowedSignersFile`.
    pub fn trust_root(&self, dir: &Path) -> Option<TrustRoot> {
        if let Some(f) = &self.allowed_signers {
            return Some(TrustRoot {
                file: f.clone(),
                source: "--allowed-signers",
            });
        }
        git_config(dir, "gpg.ssh.allowedSignersFile").map(|f| TrustRoot {
            file: config_path(&f),
            source: "gpg.ssh.allowedSignersFile",
        })
    }
}

/// Run `ssh-keygen` with `args`, `input` on its standard input, for at most [`TIMEOUT`]: its
/// exit status (`None`: killed at the limit), stdout and stderr.
fn ssh_keygen(args: &[&OsStr], input: &[u8]) -> Result<(Option<i32>, Vec<u8>, Vec<u8>)> {
    let cannot = |e: std::io::Error| Error::CannotRun {
        message: match e.kind() {
            std::io::ErrorKind::NotFound => "cannot sign or check a record: `ssh-keygen` was \
                                             not found on PATH (install OpenSSH's client)"
                .to_string(),
            _ => format!("cannot sign or check a record: running ssh-keygen failed: {e}"),
        },
    };
    let mut child = Command::new("ssh-keygen")
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let (out, err) = std::thread::scope(|s| {
        let input = input.to_vec();
        s.spawn(move || {
            if let Some(mut w) = stdin.take() {
                let _ = w.write_all(&input);
            }
        });
        let out = s.spawn(move || {
            let mut v = Vec::new();
            if let Some(r) = stdout.as_mut() {
                let _ = r.take(1 << 20).read_to_end(&mut v);
            }
            v
        });
        let err = s.spawn(move || {
            let mut v = Vec::new();
            if let Some(r) = stderr.as_mut() {
                let _ = r.take(1 << 16).read_to_end(&mut v);
            }
            v
        });
        let deadline = Instant::now() + TIMEOUT;
        let mut nap = Duration::from_micros(200);
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break st.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(Duration::from_millis(20));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        (
            (status, out.join().unwrap_or_default()),
            err.join().unwrap_or_default(),
        )
    });
    Ok((out.0, out.1, err))
}

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Sign `message` with the key at `key` (`ssh-keygen -Y sign`): the signature's base64 on one
/// line, as a record's `sig=` carries it. The key never leaves the file: only its signature
/// is read.
pub fn sign(key: &Path, message: &[u8]) -> std::result::Result<String, String> {
    let args = [
        OsStr::new("-Y"),
        OsStr::new("sign"),
        OsStr::new("-q"),
        OsStr::new("-n"),
        OsStr::new(NAMESPACE),
        OsStr::new("-f"),
        key.as_os_str(),
    ];
    let (status, out, err) = ssh_keygen(&args, message).map_err(|e| e.to_string())?;
    if status != Some(0) {
        return Err(format!(
            "cannot sign the record with the key {}: ssh-keygen said {:?} (give an SSH private \
             key without a passphrase, or its public key with the private one in ssh-agent)",
            key.display(),
            first_line(&err)
        ));
    }
    let text = String::from_utf8_lossy(&out);
    let b64: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect();
    if b64.is_empty()
        || !b64
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
    {
        return Err("ssh-keygen gave no signature".into());
    }
    Ok(b64)
}

/// The armored form of a record's signature, as `ssh-keygen -Y verify -s` reads it.
pub fn armored(sig: &str) -> String {
    format!("-----BEGIN SSH SIGNATURE-----\n{sig}\n-----END SSH SIGNATURE-----\n")
}

/// Whether `sig` is a good signature of `message` by `principal` under the trust root
/// (`ssh-keygen -Y verify`). An error only when it could not be asked.
pub fn verify(trust: &TrustRoot, principal: &str, message: &[u8], sig: &str) -> Result<bool> {
    let mut file = tempfile::Builder::new()
        .prefix("pair-sig")
        .tempfile()
        .map_err(|e| Error::io(Path::new("pair-sig"), "create a temporary file", e))?;
    file.write_all(armored(sig).as_bytes())
        .map_err(|e| Error::io(file.path(), "write", e))?;
    let args = [
        OsStr::new("-Y"),
        OsStr::new("verify"),
        OsStr::new("-n"),
        OsStr::new(NAMESPACE),
        OsStr::new("-f"),
        trust.file.as_os_str(),
        OsStr::new("-I"),
        OsStr::new(principal),
        OsStr::new("-s"),
        file.path().as_os_str(),
    ];
    let (status, _, _) = ssh_keygen(&args, message)?;
    Ok(status == Some(0))
}

/// One record as read for its signature: its line number, its writer, the message signed and
/// the signature.
struct Signed {
    line: u32,
    by: Option<String>,
    command: String,
    message: Vec<u8>,
    sig: Option<String>,
    content: Option<String>,
}

/// The records of a signed board's journal with what their signatures cover, and the board's
/// identity; `None` when the board is not signed or its journal does not read (which the
/// journal's own checks report).
fn signed_records(bytes: &[u8]) -> Option<(Vec<Signed>, usize)> {
    // An unsigned board (every board but format 3) costs one look at its `format` line.
    if crate::board::format::declared(bytes).is_none_or(|f| f < journal::SIGNED_FROM) {
        return None;
    }
    let doc = crate::board::document::Document::parse(bytes).ok()?;
    let parsed = crate::law::validate::check_frontmatter(&doc).ok()?;
    // A later format may sign otherwise: it is read as far as this version can.
    if !(journal::SIGNED_FROM..=crate::board::format::CURRENT)
        .contains(&crate::board::format::of(&parsed.fm))
    {
        return None;
    }
    let board = parsed.fm.journal.as_ref()?.board.clone()?;
    let lines = journal::section_lines(&doc)?;
    let mut out = Vec::new();
    let mut first_signed = None;
    for (n, l) in &lines {
        let r: Record = Record::parse(l, *n).ok()?;
        if r.sig.is_some() && first_signed.is_none() {
            first_signed = Some(out.len());
        }
        out.push(Signed {
            line: *n,
            by: r.by.clone(),
            command: r.command.clone(),
            message: journal::signed_message(&board, l),
            sig: r.sig.clone(),
            content: r.content.clone(),
        });
    }
    let first = first_signed.unwrap_or(out.len().saturating_sub(1));
    Some((out, first))
}

/// What checking a board's signatures found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Checked {
    /// The allowed-signers file checked against (`None`: none was named).
    pub trust_root: Option<String>,
    /// Where it was named.
    pub source: Option<&'static str>,
    /// How many records carry a good signature.
    pub verified: usize,
    /// The agents with a record the trust root could not vouch for.
    pub unvouched: Vec<String>,
    #[serde(skip)]
    pub errors: Vec<FieldError>,
    #[serde(skip)]
    pub warnings: Vec<FieldError>,
}

/// The field of an error that is the verifier's, not the board's: its trust root is missing
/// or cannot be read, so nothing was checked (and a repair of the board is no answer).
pub const TRUST_ROOT_FIELD: &str = "trust_root";

fn trust_error(message: String) -> FieldError {
    FieldError {
        field: TRUST_ROOT_FIELD.into(),
        line: None,
        message,
    }
}

fn sig_error(line: Option<u32>, message: String) -> FieldError {
    FieldError {
        field: "journal.sig".into(),
        line,
        message,
    }
}

/// The verdicts on records `idx` (indices into `records`), checked in parallel.
fn verify_all(trust: &TrustRoot, records: &[Signed], idx: &[usize]) -> Result<Vec<bool>> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let chunk = idx.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = idx
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|&i| {
                            let r = &records[i];
                            match (&r.by, &r.sig) {
                                (Some(by), Some(sig)) => verify(trust, by, &r.message, sig),
                                _ => Ok(false),
                            }
                        })
                        .collect::<Result<Vec<bool>>>()
                })
            })
            .collect();
        let mut all = Vec::with_capacity(idx.len());
        for h in handles {
            all.extend(h.join().unwrap_or_else(|_| {
                Err(Error::CannotRun {
                    message: "a signature check stopped".into(),
                })
            })?);
        }
        Ok(all)
    })
}

/// Why a record's signature does not stand, in words.
fn why(r: &Signed, trust: &TrustRoot) -> String {
    match (&r.by, &r.sig) {
        (None, _) => "this record names no writer, and a signed board takes signed records only; \
                      it was written outside pair, or by a pair that does not sign"
            .into(),
        (Some(by), None) => format!(
            "this record by {by} carries no signature, and a signed board takes signed records \
             only: it was written outside pair, or by a pair that does not sign"
        ),
        (Some(by), Some(_)) => format!(
            "the signature of this record by {by} does not verify against {} ({}): it was \
             signed by a key that file does not vouch for as {by}, or for another board, place \
             or content, or the record was changed after it was signed",
            trust.file.display(),
            trust.source
        ),
    }
}

/// The content of the board `bytes` as its last record must name it ([`journal::content_digest`]).
fn current_content(bytes: &[u8]) -> Option<String> {
    let head = journal::journal_heading(bytes)?;
    Some(journal::content_digest(&bytes[..head]))
}

/// Whether the last record names the board's current content; the error when it does not.
fn content_error(bytes: &[u8], last: &Signed) -> Option<FieldError> {
    let found = current_content(bytes);
    (found.is_none() || last.content != found).then(|| {
        sig_error(
            Some(last.line),
            "the board is not the one its last signed record names (`content=`): it was changed \
             outside pair after that write, so no signature covers what it holds now. Restore \
             it from the board's history, or repair the board"
                .into(),
        )
    })
}

/// `validate`'s check of a signed board: every record from the first signed one on is signed
/// and verifies against the trust root, and the last one names the board as it is. A record
/// that fails before the last verified repair is a warning (the repair recorded the journal as
/// it stood), any other an error. `None` when the board is not signed.
pub fn check_board(bytes: &[u8], keys: &Keys, dir: &Path) -> Option<Checked> {
    let (records, first) = signed_records(bytes)?;
    let mut checked = Checked::default();
    let Some(trust) = keys.trust_root(dir) else {
        checked.errors.push(trust_error(
            "this board is signed, and no trust root was named to check its records against: \
             give --allowed-signers FILE (or $PAIR_ALLOWED_SIGNERS), or set git's \
             gpg.ssh.allowedSignersFile"
                .into(),
        ));
        return Some(checked);
    };
    checked.trust_root = Some(trust.file.display().to_string());
    checked.source = Some(trust.source);
    if let Some(why) = trust.unusable() {
        checked.errors.push(trust_error(why));
        return Some(checked);
    }
    let idx: Vec<usize> = (first..records.len()).collect();
    let good = match verify_all(&trust, &records, &idx) {
        Ok(g) => g,
        Err(e) => {
            checked.errors.push(sig_error(None, e.to_string()));
            return Some(checked);
        }
    };
    let repair = idx
        .iter()
        .zip(&good)
        .filter(|(i, ok)| **ok && records[**i].command == journal::REPAIR)
        .map(|(i, _)| *i)
        .next_back();
    for (&i, ok) in idx.iter().zip(&good) {
        let r = &records[i];
        if *ok {
            checked.verified += 1;
            continue;
        }
        if let Some(by) = &r.by
            && !checked.unvouched.contains(by)
        {
            checked.unvouched.push(by.clone());
        }
        match repair.filter(|at| i < *at) {
            Some(at) => checked.warnings.push(sig_error(
                Some(r.line),
                format!(
                    "{}; the repair at line {} recorded the journal as it stood",
                    why(r, &trust),
                    records[at].line
                ),
            )),
            None => checked.errors.push(sig_error(Some(r.line), why(r, &trust))),
        }
    }
    if let Some(last) = records.last()
        && let Some(e) = content_error(bytes, last)
    {
        checked.errors.push(e);
    }
    Some(checked)
}

/// A write's check of the signed board it found: every record written since the last one it can
/// trust — the writer's own last record or the last repair, verified — is signed and verifies,
/// and the board is the one its last record names. A repair checks nothing (it records the board
/// as it stands, and its own record is signed). `Ok` when the board is not signed.
pub fn check_since(
    path: &Path,
    bytes: &[u8],
    keys: &Keys,
    writer: Option<&str>,
    repair: bool,
) -> Result<()> {
    let Some((records, first)) = signed_records(bytes) else {
        return Ok(());
    };
    let dir = config_dir(path);
    let trust = need_trust(keys, &dir)?;
    if repair {
        return Ok(());
    }
    let mut errors = Vec::new();
    if let Some(last) = records.last()
        && let Some(e) = content_error(bytes, last)
    {
        errors.push(e);
    }
    // Newest first, in batches that grow from one: most writes stop at the writer's own last
    // record, one or two records back.
    let mut i = records.len();
    let mut batch = 1;
    'walk: while i > first {
        let from = i.saturating_sub(batch).max(first);
        batch = (batch * 2).min(16);
        let idx: Vec<usize> = (from..i).rev().collect();
        let good = verify_all(&trust, &records, &idx)?;
        for (&k, ok) in idx.iter().zip(&good) {
            let r = &records[k];
            if !ok {
                errors.push(sig_error(Some(r.line), why(r, &trust)));
                continue;
            }
            if errors.is_empty()
                && (r.command == journal::REPAIR || (r.by.is_some() && r.by.as_deref() == writer))
            {
                break 'walk;
            }
        }
        i = from;
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(path, errors, false))
    }
}

/// The trust root a write on a signed board needs, or its refusal (exit 6).
fn need_trust(keys: &Keys, dir: &Path) -> Result<TrustRoot> {
    let trust = keys.trust_root(dir).ok_or_else(|| {
        Error::protocol(
            "this board is signed: a write checks the records before it, and its own \
             signature, against a trust root, and none was named. Give --allowed-signers FILE \
             (or $PAIR_ALLOWED_SIGNERS), or set git's gpg.ssh.allowedSignersFile",
        )
    })?;
    match trust.unusable() {
        Some(why) => Err(Error::protocol(format!(
            "this board is signed, and {why}; nothing was written"
        ))),
        None => Ok(trust),
    }
}

/// What a write on a signed board signs with: its key and trust root, refused (exit 6) when
/// either is missing or the writer is nobody.
pub fn signer_for(path: &Path, keys: &Keys, writer: Option<&str>) -> Result<(PathBuf, TrustRoot)> {
    let dir = config_dir(path);
    let Some(writer) = writer.filter(|w| crate::board::frontmatter::is_agent_id(w)) else {
        return Err(Error::protocol(
            "this board is signed: every record names its writer and carries the writer's \
             signature, so a write must name its agent (--agent, or --as for a raw write)",
        ));
    };
    let trust = need_trust(keys, &dir)?;
    let key = keys.signing_key(&dir).ok_or_else(|| {
        Error::protocol(format!(
            "this board is signed: {writer}'s write must be signed with {writer}'s SSH key, and \
             none was given. Give --signing-key KEY (or $PAIR_SIGNING_KEY), or set git's \
             user.signingkey with gpg.format ssh"
        ))
    })?;
    Ok((key, trust))
}
