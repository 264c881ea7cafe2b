//! The protocol's transport: one JSON-RPC message a line, read with a bound, and an answer for
//! every line the server cannot take.
//!
//! rmcp's own stream transport drops a line that is not JSON, or is longer than its bound,
//! without a word, so the client waits for an answer until its own timeout; and its typed error
//! cannot say `"id": null`. This one answers such a line with a parse error (`-32700`,
//! `"id": null`) and a JSON value that is no message with an invalid request (`-32600`, with
//! the request's id when it has one), and reads on. A line is never held beyond
//! [`MAX_LINE`]: the rest of a longer one is read and thrown away as it comes. Every message
//! is written whole under one lock, so two answers never interleave.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value as Json, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use super::{Input, Output};

/// The longest line the server reads, its newline included: 4 MiB, four times the largest
/// entry a command takes (1 MiB), so any note fits with room for JSON's escapes. A longer line
/// is answered with a parse error and thrown away as it is read.
pub const MAX_LINE: usize = 4 << 20;

/// JSON-RPC's codes for what the server cannot take.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// The byte order mark a client may put before its first message.
const BOM: &[u8] = b"\xEF\xBB\xBF";

pub struct Lines {
    read: BufReader<Input>,
    /// The line read so far (never more than [`MAX_LINE`] bytes).
    line: Vec<u8>,
    /// Throwing away the rest of a line over the bound, up to its newline.
    skipping: bool,
    write: Arc<Mutex<Option<Output>>>,
    /// The answer to the last line the server could not take, being written: the next line is
    /// read once it is, so a client that does not read its answers holds at most one.
    answering: Option<JoinHandle<()>>,
    /// Told when the input ends, so that calls in flight stop waiting.
    closed: watch::Sender<bool>,
}

/// What one bounded read of a line found.
enum Read {
    /// A whole line, its newline included, is in `line`.
    Line,
    /// The line is longer than [`MAX_LINE`]; nothing of it is kept.
    Long,
    /// The input ended (or cannot be read).
    End,
}

/// What a whole line is to the server.
enum Taken {
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to do: a blank line, or a notification the server does not know (a
    /// notification is never answered).
    Nothing,
    /// The JSON-RPC error that answers it, as a line.
    Answer(Vec<u8>),
}

impl Lines {
    pub fn new(read: Input, write: Output, closed: watch::Sender<bool>) -> Lines {
        Lines {
            read: BufReader::with_capacity(64 << 10, read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
            closed,
        }
    }

    /// Read up to the next newline without holding more than [`MAX_LINE`] bytes of it.
    ///
    /// Cancel-safe (the service polls it beside other work): the buffer gives nothing up until
    /// `consume`, and what was taken from it is in `line` or thrown away by then, with no
    /// await in between.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Read::End);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let found = if self.skipping {
                self.skipping = newline.is_none();
                None
            } else if self.line.len().saturating_add(take) > MAX_LINE {
                self.line.clear();
                self.skipping = newline.is_none();
                Some(Read::Long)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Read::Line)
            };
            self.read.consume(take);
            if let Some(found) = found {
                return Ok(found);
            }
        }
    }
}

/// A whole line as a message, or what answers it.
fn take(line: &[u8]) -> Taken {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Taken::Nothing;
    }
    let e = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => return Taken::Message(Box::new(message)),
        Err(e) => e,
    };
    if !matches!(e.classify(), serde_json::error::Category::Data) {
        return Taken::Answer(error(
            Json::Null,
            PARSE_ERROR,
            &format!("the line is not JSON: {e}"),
        ));
    }
    // JSON, but no message this server takes: answered with the request's id when it has one
    // the client can match.
    #[derive(serde::Deserialize, Default)]
    struct Head {
        id: Option<Json>,
        method: Option<Json>,
    }
    // Only an object has them (serde would read a struct from an array too).
    let object = line.trim_ascii_start().starts_with(b"{");
    let head: Head = object
        .then(|| serde_json::from_slice(line).ok())
        .flatten()
        .unwrap_or_default();
    match head.id {
        None if head.method.is_some() => Taken::Nothing,
        id => Taken::Answer(error(
            id.filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Json::Null),
            INVALID_REQUEST,
            &format!("not a JSON-RPC message this server takes: {e}"),
        )),
    }
}

/// A JSON-RPC error response, as a line.
fn error(id: Json, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// The answer to a line over the bound.
fn too_long() -> Vec<u8> {
    error(
        Json::Null,
        PARSE_ERROR,
        &format!(
            "the line is longer than the server reads ({MAX_LINE} bytes, 4 MiB) and was \
             dropped: give a long text as a file (`note_file`)"
        ),
    )
}

/// Write one whole line under the output's lock.
async fn write_line(write: &Mutex<Option<Output>>, line: &[u8]) -> std::io::Result<()> {
    let mut write = write.lock().await;
    let Some(out) = write.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the protocol's output is closed",
        ));
    };
    out.write_all(line).await?;
    out.flush().await
}

impl Transport<RoleServer> for Lines {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let write = self.write.clone();
        async move { write_line(&write, &line.map_err(std::io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if let Some(answering) = self.answering.as_mut() {
                // Its failure is the output's: the input ends too, and is seen below.
                let _ = answering.await;
                self.answering = None;
            }
            let answer = match self.read_line().await {
                Ok(Read::Line) => {
                    let taken = take(&self.line);
                    self.line.clear();
                    match taken {
                        Taken::Message(message) => return Some(*message),
                        Taken::Nothing => continue,
                        Taken::Answer(answer) => answer,
                    }
                }
                Ok(Read::Long) => too_long(),
                Ok(Read::End) | Err(_) => {
                    self.closed.send_replace(true);
                    return None;
                }
            };
            let write = self.write.clone();
            self.answering = Some(tokio::spawn(async move {
                let _ = write_line(&write, &answer).await;
            }));
        }
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}
