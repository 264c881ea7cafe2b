//! `pair mcp`: the commands an agent runs, as the tools of an MCP server over stdio.
//!
//! The official Rust SDK (`rmcp`) speaks the protocol. This module lists the tools that
//! [`crate::cli::mcp`] reads from the command line's definitions, turns each call into the
//! command line it stands for, parses that with the command line's own parser and runs the
//! resulting [`crate::cli::Cli`] with [`super::run_with`]: the same handler, the same JSON as
//! `--json` (docs/json.md), the same refusals.
//!
//! A server of a project (`pair mcp PROJECT`) keeps the board the last `next` named as its
//! current board, on which every other tool acts, and the cursor its waiting `next` (the
//! project's poll) goes on from.
//!
//! A call runs on a thread of its own while the server goes on reading: a waiting `poll`
//! reports progress each time it goes to sleep (and every few seconds), and a client's
//! `notifications/cancelled` fires the call's [`Interrupt`], which ends the wait at once.
//!
//! The server bounds its work: a line is read up to [`lines::MAX_LINE`] (and answered with a
//! JSON-RPC error when it cannot be taken), at most [`RUNNING`] calls run at once, the calls in
//! flight hold at most [`ARGUMENTS_KIB`] of arguments, and when its input ends every call in
//! flight stops waiting, so the process exits.

mod lines;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, Prompt, PromptMessage, Role, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value as Json, json};

use super::{Call, Outcome};
use crate::cli::mcp::{self as tools, Fixed, McpArgs, Tool};
use crate::cli::{Cli, Cmd};
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;
use crate::store::wait::Interrupt;

/// The server's instructions: the protocol in short, for an agent that has only the server.
const INSTRUCTIONS: &str = include_str!("../../templates/mcp/instructions.md");

/// The instructions of a server of a project: `next` names the board the other tools act on.
const PROJECT_INSTRUCTIONS: &str = include_str!("../../templates/mcp/instructions-project.md");

/// The prompt that carries the skill (`pair skill`).
const PROMPT: &str = "pair";

/// How often a call that is still running says so (besides each time a wait goes to sleep).
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The calls that run at once: an agent's waiting `poll` (which holds its place while it
/// waits) and three more. Each holds what its command reads (a `status` on a 15 MiB board
/// about 40 MB at its peak), so this bounds the server's memory; the others wait their turn.
pub const RUNNING: usize = 4;

/// What the calls in flight (running or waiting their turn) may hold of arguments, in KiB:
/// 64 MiB. A call counts its arguments' JSON, and at least [`CALL_KIB`]; one that would go over
/// is answered at once that the server is busy. 256 calls of a few arguments each hold 1 MiB.
pub const ARGUMENTS_KIB: u32 = 64 << 10;

/// The least a call counts against [`ARGUMENTS_KIB`]: what a call in flight holds besides its
/// arguments.
const CALL_KIB: u32 = 4;

/// The methods this server serves, each with the reading of its params: a request of one of
/// them whose params do not read is answered "invalid params" (`-32602`) with the reader's
/// words, not "method not found".
const SERVED: &[(&str, Reads)] = &[
    ("initialize", reads::<rmcp::model::InitializeRequestParams>),
    ("tools/list", reads::<Option<PaginatedRequestParams>>),
    ("tools/call", reads::<CallToolRequestParams>),
    ("prompts/list", reads::<Option<PaginatedRequestParams>>),
    ("prompts/get", reads::<GetPromptRequestParams>),
];

/// The JSON-RPC error of a call refused because the calls in flight hold [`ARGUMENTS_KIB`]
/// already (one of the codes JSON-RPC leaves to servers).
const BUSY: i32 = -32000;

type Reads = fn(Json) -> std::result::Result<(), serde_json::Error>;

fn reads<T: serde::de::DeserializeOwned>(
    params: Json,
) -> std::result::Result<(), serde_json::Error> {
    serde_json::from_value::<T>(params).map(drop)
}

pub fn serve(
    a: McpArgs,
    origin: crate::board::journal::Origin,
    transcript: Option<std::path::PathBuf>,
    keys: crate::signature::Keys,
) -> Result<Outcome> {
    super::agent_arg("--agent", &a.agent)?;
    super::timeout(a.timeout)?;
    let (closed, input_closed) = tokio::sync::watch::channel(false);
    let project = crate::project::is_project(&a.board).then(|| a.board.clone());
    let server = Server::new(
        Fixed {
            board: a.board,
            project,
            agent: a.agent,
            timeout: a.timeout,
            origin,
            transcript,
            keys,
            read_roots: a.read_roots,
        },
        input_closed,
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .enable_io()
        .build()
        .map_err(|e| Error::io(&stdio(), "start the MCP server", e))?;
    let served = runtime.block_on(async move {
        // Made inside the runtime: a pipe registers with its reactor.
        let (input, output) = protocol_streams()?;
        let running = match server.serve(lines::Lines::new(input, output, closed)).await {
            Ok(running) => running,
            // The client went away before it said anything: nothing to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => {
                return Err(Error::io(
                    &stdio(),
                    "start the MCP session",
                    std::io::Error::other(e),
                ));
            }
        };
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| Error::io(&stdio(), "serve MCP", std::io::Error::other(e)))
    });
    // A call still running (a write under way when the client went away) ends before the
    // process does: its interrupt fired when the input ended, so a wait ends at once.
    drop(runtime);
    served?;
    Ok(Outcome {
        json: json!({"schema": SCHEMA}),
        text: String::new(),
        code: 0,
        warnings: vec![],
        printed: true,
    })
}

fn stdio() -> PathBuf {
    PathBuf::from("(standard input and output)")
}

/// The protocol's streams: this process's standard input and output, moved to descriptors of
/// their own. Standard input becomes `/dev/null` and standard output goes to standard error, so
/// that nothing a command does (a child that inherits them, a stray print) can read from or
/// write into the protocol.
///
/// A pipe (what clients give) is read and written without blocking, on the protocol's own
/// thread; anything else (a file, a terminal) through the runtime's blocking pool.
fn protocol_streams() -> Result<(Input, Output)> {
    use std::os::fd::{AsFd, BorrowedFd};
    // A copy numbered 3 or above, closed on exec (`F_DUPFD_CLOEXEC`).
    let moved = |fd: BorrowedFd<'_>, what: &'static str| {
        fd.try_clone_to_owned()
            .map(std::fs::File::from)
            .map_err(|e| Error::io(&stdio(), what, e))
    };
    let input = moved(
        std::io::stdin().as_fd(),
        "keep standard input for the protocol",
    )?;
    let output = moved(
        std::io::stdout().as_fd(),
        "keep standard output for the protocol",
    )?;
    let null = std::fs::File::open("/dev/null")
        .map_err(|e| Error::io(std::path::Path::new("/dev/null"), "open", e))?;
    crate::sys::redirect_std(null.as_fd(), 0)
        .and_then(|()| crate::sys::redirect_std(std::io::stderr().as_fd(), 1))
        .map_err(|e| Error::io(&stdio(), "set standard input and output aside", e))?;
    let is_pipe = |f: &std::fs::File| {
        use std::os::unix::fs::FileTypeExt;
        f.metadata().is_ok_and(|m| m.file_type().is_fifo())
    };
    Ok((
        if is_pipe(&input) {
            Box::new(
                tokio::net::unix::pipe::Receiver::from_file(input)
                    .map_err(|e| Error::io(&stdio(), "read standard input", e))?,
            )
        } else {
            Box::new(tokio::fs::File::from_std(input))
        },
        if is_pipe(&output) {
            Box::new(
                tokio::net::unix::pipe::Sender::from_file(output)
                    .map_err(|e| Error::io(&stdio(), "write standard output", e))?,
            )
        } else {
            Box::new(tokio::fs::File::from_std(output))
        },
    ))
}

type Input = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Output = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

#[derive(Clone)]
struct Server(Arc<State>);

struct State {
    fixed: Fixed,
    tools: Vec<Tool>,
    listed: Vec<rmcp::model::Tool>,
    instructions: String,
    /// The places of the calls that run at once ([`RUNNING`]).
    running: Arc<tokio::sync::Semaphore>,
    /// The KiB of arguments the calls in flight may hold ([`ARGUMENTS_KIB`]).
    admitted: Arc<tokio::sync::Semaphore>,
    /// Becomes true when the protocol's input ends.
    input_closed: tokio::sync::watch::Receiver<bool>,
    /// A server of a project: the board the last `next` named, which the other tools act on
    /// (none before the first `next`, or when the last named none).
    current: std::sync::Mutex<Option<String>>,
    /// A server of a project: the cursor its waiting `next` goes on from (the project's
    /// `poll --after`), the one the last waiting `next` answered; none before the first.
    cursor: std::sync::Mutex<Option<String>>,
}

impl Server {
    fn new(fixed: Fixed, input_closed: tokio::sync::watch::Receiver<bool>) -> Server {
        let tools = if fixed.project.is_some() {
            tools::project_tools()
        } else {
            tools::tools()
        };
        let listed = listing(&tools);
        let instructions = instructions(&fixed);
        Server(Arc::new(State {
            fixed,
            tools,
            listed,
            instructions,
            running: Arc::new(tokio::sync::Semaphore::new(RUNNING)),
            admitted: Arc::new(tokio::sync::Semaphore::new(ARGUMENTS_KIB as usize)),
            input_closed,
            current: std::sync::Mutex::new(None),
            cursor: std::sync::Mutex::new(None),
        }))
    }

    /// Returns when the protocol's input has ended (at once if it has).
    async fn input_closed(&self) {
        let mut closed = self.0.input_closed.clone();
        // An error is the transport gone: the input has ended too.
        let _ = closed.wait_for(|closed| *closed).await.map(drop);
    }
}

/// The `tools/list` answer: each tool's name, one-line description and input schema.
pub fn listing(tools: &[Tool]) -> Vec<rmcp::model::Tool> {
    tools
        .iter()
        .map(|t| rmcp::model::Tool::new(t.name.clone(), t.description.clone(), t.schema()))
        .collect()
}

/// The server's instructions for the agent and blackboard it was started for.
pub fn instructions(fixed: &Fixed) -> String {
    let shared = tools::SHARED_ARGS
        .iter()
        .map(|(name, what)| format!("`{name}`: {what}"))
        .collect::<Vec<_>>()
        .join("; ");
    if fixed.project.is_some() {
        PROJECT_INSTRUCTIONS
    } else {
        INSTRUCTIONS
    }
    .trim_end()
    .replace("{agent}", &fixed.agent)
    .replace("{shared}", &shared)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("pair", env!("CARGO_PKG_VERSION")))
        .with_instructions(self.0.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.0.listed.clone()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CustomResult, McpError> {
        // rmcp hands over a request of a method it knows whose params did not read as one.
        let CustomRequest { method, params, .. } = request;
        let Some((_, reads)) = SERVED.iter().find(|(served, _)| *served == method) else {
            return Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, method, None));
        };
        let why = match params.map(reads) {
            None => "it has none".into(),
            Some(Err(e)) => e.to_string(),
            Some(Ok(())) => "they do not read as its request's".into(),
        };
        Err(McpError::invalid_params(
            format!("invalid params of {method}: {why}"),
            None,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.0.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            PROMPT,
            Some("How a doer or reviewer agent runs the pair protocol (the skill)"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, McpError> {
        if request.name != PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt named {:?}; the prompt is {PROMPT:?}",
                    request.name
                ),
                None,
            ));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            super::skill::SKILL,
        )])
        .with_description("How a doer or reviewer agent runs the pair protocol")
        .into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let started = Instant::now();
        let Some(tool) = self.0.tools.iter().find(|t| t.name == request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "no tool named {:?}: tools/list names the tools this server has",
                    request.name
                ),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let fixed = match self.fixed_for(tool) {
            Ok(fixed) => fixed,
            Err(e) => return Ok(self.no_board(&e).into()),
        };
        // A waiting `next` of a project goes on from the server's cursor; the first starts
        // where the boards' journals end when it runs.
        let waits = fixed.project.is_some() && tool.name == "next" && waits(&args);
        let prepared = if waits {
            prepare_project_wait(tool, &args, &fixed, self.cursor().as_deref())
        } else {
            prepare(tool, &args, &fixed)
        };
        let (mut cli, mut argv) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                let here = self.here(&fixed, tool, self.current());
                return Ok(self.refusal(&e, here.as_ref()).into());
            }
        };
        let total = match &cli.command {
            Cmd::Poll(p) if p.wait => Some(p.timeout),
            Cmd::Next(n) if n.wait => Some(n.timeout),
            _ => None,
        };
        let Ok(admitted) = self
            .0
            .admitted
            .clone()
            .try_acquire_many_owned(weight(&args))
        else {
            return Err(McpError::new(
                ErrorCode(BUSY),
                format!(
                    "the server is busy: the calls in flight hold {} MiB of arguments; call \
                     again when one has ended",
                    ARGUMENTS_KIB >> 10
                ),
                None,
            ));
        };
        let progress = context.meta.get_progress_token();
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        // Its turn among the calls that run at once; one cancelled meanwhile (or whose client
        // went away) gives its place up without running.
        let place = {
            let queued = format!("{} waits its turn: {RUNNING} calls run at once", tool.name);
            let turn = self.0.running.clone().acquire_owned();
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    place = &mut turn => break place.ok(),
                    _ = context.ct.cancelled() => break None,
                    _ = self.input_closed() => break None,
                    _ = ticks.tick() => notify(&context, &progress, started, total, &queued).await,
                }
            }
        };
        let Some(place) = place else {
            return Err(McpError::internal_error(
                format!("{} was cancelled before it ran", tool.name),
                None,
            ));
        };
        let (tx, mut waiting) = tokio::sync::mpsc::unbounded_channel::<String>();
        let interrupt = Interrupt::new(move |what| {
            let _ = tx.send(what.to_string());
        });
        let reads = reads_files(&args).then(|| fixed.clone());
        let starts_cursor = (waits && self.cursor().is_none()).then(|| fixed.board.clone());
        let call_interrupt = interrupt.clone();
        // The places are given back when the command ends, not when the call is answered.
        let mut task = tokio::task::spawn_blocking(move || {
            let _places = (admitted, place);
            if let Some(project) = starts_cursor {
                let token =
                    super::project_poll::cursor_now(&project, &crate::store::Session::new(true))?
                        .token();
                if let Cmd::Poll(p) = &mut cli.command {
                    p.after = Some(token.clone());
                }
                if let Some(at) = argv.iter().position(|w| w == "--after") {
                    argv[at + 1] = token;
                }
            }
            let call = Call {
                argv: Some(argv),
                interrupt: Some(call_interrupt),
                // A call that names a file reads it only inside its board's places: a file
                // there, never one the server's user can read elsewhere.
                places: reads.as_ref().map(file_places),
            };
            super::run_with(cli, call)
        });
        let mut cancelled = false;
        let mut said = format!("{} is running", tool.name);
        let joined = loop {
            tokio::select! {
                joined = &mut task => break joined,
                _ = context.ct.cancelled(), if !cancelled => {
                    // The client cancelled (or went away): end the wait; the call's answer
                    // is not sent.
                    interrupt.fire();
                    cancelled = true;
                }
                _ = self.input_closed(), if !cancelled => {
                    // Nobody will read the answer: end the wait, so the server can exit.
                    interrupt.fire();
                    cancelled = true;
                }
                Some(what) = waiting.recv() => {
                    said = format!("waiting: {what}");
                    notify(&context, &progress, started, total, &said).await;
                }
                _ = ticks.tick() => notify(&context, &progress, started, total, &said).await,
            }
        };
        // `next` names the board the tools act on from now on.
        let current = match &joined {
            Ok(Ok(outcome)) if fixed.project.is_some() && tool.name == "next" => {
                self.named(&outcome.json)
            }
            _ => self.current(),
        };
        let here = self.here(&fixed, tool, current);
        let result = match joined {
            Ok(Ok(outcome)) => self.result(outcome, here.as_ref()),
            Ok(Err(e)) => self.refusal(&e, here.as_ref()),
            Err(e) => {
                return Err(McpError::internal_error(
                    format!("{} did not finish: {e}", tool.name),
                    None,
                ));
            }
        };
        if crate::text::settings().verbose {
            eprintln!(
                "pair: verbose: mcp: {} took {:.1} ms",
                tool.name,
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        Ok(result.into())
    }
}

/// Whether a call names a file to read (an argument `NAME_file`, or a review target).
fn reads_files(args: &Map<String, Json>) -> bool {
    args.keys().any(|k| k.ends_with("_file") || k == "review")
}

/// The directories a call's files may be read from: the board's own (for a board in a git ref,
/// the server's working directory stands for it), the worktree the board records, and each
/// `--read-root` the server was started with.
fn file_places(fixed: &Fixed) -> Vec<PathBuf> {
    let mut places = fixed.read_roots.clone();
    if crate::store::location::is_git(&fixed.board) {
        places.extend(std::env::current_dir().ok());
    } else {
        places.push(
            fixed
                .board
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf),
        );
    }
    let recorded = crate::store::snapshot(
        &fixed.board,
        crate::store::Depth::Head,
        &crate::store::Session::new(true),
    )
    .and_then(|snap| snap.frontmatter())
    .ok()
    .and_then(|v| v.parsed.fm.worktree);
    places.extend(recorded.map(PathBuf::from));
    places
}

/// What a call counts against [`ARGUMENTS_KIB`]: its arguments' JSON in KiB, at least
/// [`CALL_KIB`].
fn weight(args: &Map<String, Json>) -> u32 {
    /// Counts the bytes written to it.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; a map of JSON values always serialises.
    let _ = serde_json::to_writer(&mut count, args);
    u32::try_from(count.0.div_ceil(1024))
        .unwrap_or(u32::MAX)
        .max(CALL_KIB)
}

/// Say that a call is still running, when the client asked for progress.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: &Option<ProgressToken>,
    started: Instant,
    total: Option<f64>,
    message: &str,
) {
    let Some(token) = token else { return };
    let mut param = ProgressNotificationParam::new(token.clone(), started.elapsed().as_secs_f64())
        .with_message(message.to_string());
    if let Some(total) = total {
        param = param.with_total(total);
    }
    let _ = context.peer.notify_progress(param).await;
}

/// A call as the command it stands for: its command line (after `pair`) and the parsed
/// [`Cli`], with what the server fixes (JSON output; `poll`'s shorter default wait).
pub fn prepare(tool: &Tool, args: &Map<String, Json>, fixed: &Fixed) -> Result<(Cli, Vec<String>)> {
    let argv = tool.command_line(args, fixed)?;
    let mut cli = tools::parse(&argv)?;
    cli.global.json = true;
    if !args.contains_key("timeout") {
        match &mut cli.command {
            Cmd::Poll(p) if p.wait => p.timeout = tools::POLL_TIMEOUT_S,
            Cmd::Next(n) if n.wait => n.timeout = tools::POLL_TIMEOUT_S,
            _ => {}
        }
    }
    cli.resolve()?;
    // The session and model were fixed when the server started.
    cli.global.session = fixed.origin.session.clone();
    cli.global.model = fixed.origin.model.clone();
    cli.global.transcript = fixed.transcript.clone();
    cli.global.signing_key = fixed.keys.signing_key.clone();
    cli.global.allowed_signers = fixed.keys.allowed_signers.clone();
    Ok((cli, argv))
}

impl Server {
    /// A command's result: its JSON, with the exit code its command line would have exited
    /// with (`exit`), its warnings, and each suggested command also as a call.
    fn result(&self, outcome: Outcome, here: Option<&Here>) -> CallToolResult {
        let mut json = outcome.json;
        if let Some(obj) = json.as_object_mut() {
            obj.insert("exit".into(), json!(outcome.code));
            if !outcome.warnings.is_empty() && !obj.contains_key("warnings") {
                obj.insert("warnings".into(), json!(outcome.warnings));
            }
        }
        calls_in(&self.0.tools, here, &mut json);
        CallToolResult::success(vec![ContentBlock::text(json.to_string())])
    }

    /// A refusal: the command line's JSON error envelope, its hint also as a call.
    fn refusal(&self, e: &Error, here: Option<&Here>) -> CallToolResult {
        let mut envelope = crate::render::output::envelope(e);
        // Said in the tools' own words: their arguments, not the command line's flags.
        if let Error::NoText { what, flag } = e {
            envelope["error"]["message"] = json!(format!(
                "give the {what} as `{flag}` (the text itself) or `{flag}_file` (a file the \
                 server reads)"
            ));
        }
        calls_in(&self.0.tools, here, &mut envelope);
        CallToolResult::error(vec![ContentBlock::text(envelope.to_string())])
    }

    /// The refusal of a board tool on a server of a project before `next` named a board: its
    /// hint is `next`.
    fn no_board(&self, e: &Error) -> CallToolResult {
        let mut envelope = crate::render::output::envelope(e);
        let project = self
            .0
            .fixed
            .project
            .as_deref()
            .unwrap_or(&self.0.fixed.board);
        let argv: Vec<String> = vec![
            "next".into(),
            "--agent".into(),
            self.0.fixed.agent.clone(),
            super::project::project_word(project),
        ];
        let mut full = vec!["pair".to_string()];
        full.extend(argv.iter().cloned());
        envelope["error"]["hint"] = json!({
            "argv": full,
            "command": crate::render::output::command_line(&argv),
        });
        let here = Here {
            project: project.to_path_buf(),
            board: None,
        };
        calls_in(&self.0.tools, Some(&here), &mut envelope);
        CallToolResult::error(vec![ContentBlock::text(envelope.to_string())])
    }
}

/// Beside each suggested command line in a result (`command`, or a hint's `argv`: a list of
/// words starting with `pair`), the call of the tool that stands for it (`tool`: `{name,
/// arguments}`, null when its command is no tool).
pub fn calls(tools: &[Tool], json: &mut Json) {
    calls_in(tools, None, json);
}

/// [`calls`] on a server of a project (`here`): a suggested command on the board the call acted
/// on is a call of its tool; a wait on the project (`next --wait`, the project's `poll`) is a
/// waiting `next`; a command on any other board is no call here (`tool` null: `next` names
/// the board to act on).
pub fn calls_in(tools: &[Tool], here: Option<&Here>, json: &mut Json) {
    match json {
        Json::Object(obj) => {
            let suggested = ["command", "argv"].iter().find_map(|key| {
                let words: Vec<String> = obj
                    .get(*key)?
                    .as_array()?
                    .iter()
                    .map(|w| w.as_str().map(String::from))
                    .collect::<Option<_>>()?;
                (words.first().map(String::as_str) == Some("pair")).then_some(words)
            });
            if let Some(words) = suggested {
                let call = tools::call_on(tools, &words).and_then(|(call, board)| match here {
                    None => Some(call),
                    Some(here) => in_project(here, call, board.as_deref()),
                });
                obj.insert("tool".into(), call.unwrap_or(Json::Null));
            }
            for (_, v) in obj.iter_mut() {
                calls_in(tools, here, v);
            }
        }
        Json::Array(items) => items.iter_mut().for_each(|v| calls_in(tools, here, v)),
        _ => {}
    }
}

/// Where a server of a project acts: its project, and the board a call acted on (for `next`,
/// the board it named). A suggested command on another board has no call here.
pub struct Here {
    pub project: PathBuf,
    pub board: Option<String>,
}

/// Whether a call asks to wait.
fn waits(args: &Map<String, Json>) -> bool {
    args.get("wait") == Some(&Json::Bool(true))
}

/// What a cursor not yet known is written as until the call that starts it reads the project.
const CURSOR_UNKNOWN: &str = "0";

/// A waiting `next` on a server of a project, as the project's poll from the server's cursor
/// (`pair poll PROJECT --agent ID --after CURSOR --wait`): it returns when the agent has a step,
/// or another agent wrote on any board, with what `next` answers plus those records.
pub fn prepare_project_wait(
    tool: &Tool,
    args: &Map<String, Json>,
    fixed: &Fixed,
    cursor: Option<&str>,
) -> Result<(Cli, Vec<String>)> {
    // The call's arguments are checked as `next`'s.
    tool.command_line(args, fixed)?;
    let timeout = match args.get("timeout") {
        Some(Json::String(t)) => t.clone(),
        Some(t) if !t.is_null() => t.to_string(),
        _ => tools::POLL_TIMEOUT_S.to_string(),
    };
    let argv: Vec<String> = [
        "poll",
        &fixed.board.display().to_string(),
        "--agent",
        &fixed.agent,
        "--after",
        cursor.unwrap_or(CURSOR_UNKNOWN),
        "--wait",
        "--timeout",
        &timeout,
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    let mut cli = tools::parse(&argv)?;
    cli.global.json = true;
    cli.resolve()?;
    cli.global.session = fixed.origin.session.clone();
    cli.global.model = fixed.origin.model.clone();
    cli.global.transcript = fixed.transcript.clone();
    cli.global.signing_key = fixed.keys.signing_key.clone();
    cli.global.allowed_signers = fixed.keys.allowed_signers.clone();
    Ok((cli, argv))
}

impl Server {
    /// The board the last `next` named, if any.
    fn current(&self) -> Option<String> {
        self.0.current.lock().ok().and_then(|c| c.clone())
    }

    fn cursor(&self) -> Option<String> {
        self.0.cursor.lock().ok().and_then(|c| c.clone())
    }

    /// Take what a `next` answered: the board of its step becomes the current board (none
    /// when it names no step: nothing now, or done), and a waiting one's cursor is kept.
    fn named(&self, answer: &Json) -> Option<String> {
        let board = answer["step"]["board"].as_str().map(String::from);
        if let Ok(mut current) = self.0.current.lock() {
            *current = board.clone();
        }
        if let Some(cursor) = answer["cursor"].as_str()
            && let Ok(mut kept) = self.0.cursor.lock()
        {
            *kept = Some(cursor.to_string());
        }
        board
    }

    /// What a call works on: the server's board; on a server of a project, the project for
    /// `next` and the current board for any other tool that takes a board (refused when `next`
    /// named none).
    fn fixed_for(&self, tool: &Tool) -> Result<Fixed> {
        let mut fixed = self.0.fixed.clone();
        let Some(project) = &fixed.project else {
            return Ok(fixed);
        };
        if tool.name == "next" {
            fixed.board = project.clone();
            return Ok(fixed);
        }
        if !tool.takes_board() {
            return Ok(fixed);
        }
        let Some(board) = self.current() else {
            return Err(Error::Usage(format!(
                "no board to act on: this server serves the project {}, and `{}` acts on the \
                 board the last `next` named; `next` has named none (it was not called yet, or \
                 found nothing for you then). Call `next` (wait=true to wait for work) first",
                fixed.board.display(),
                tool.name
            )));
        };
        fixed.board = PathBuf::from(board);
        Ok(fixed)
    }

    fn here(&self, fixed: &Fixed, tool: &Tool, current: Option<String>) -> Option<Here> {
        let project = fixed.project.clone()?;
        Some(Here {
            project,
            board: if tool.name == "next" || !tool.takes_board() {
                current
            } else {
                Some(fixed.board.display().to_string())
            },
        })
    }
}

/// Whether two words name the same board or project.
fn same_place(a: &str, b: &std::path::Path) -> bool {
    let a = std::path::Path::new(a);
    if crate::store::location::is_git(a) || crate::store::location::is_git(b) {
        return a == b;
    }
    match (std::path::absolute(a), std::path::absolute(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A suggested call on a server of a project ([`calls_in`]).
fn in_project(here: &Here, call: Json, board: Option<&str>) -> Option<Json> {
    let on_project = board.is_some_and(|b| same_place(b, &here.project));
    match call["name"].as_str() {
        Some("next") => Some(call),
        Some("poll") if on_project => Some(json!({"name": "next", "arguments": {"wait": true}})),
        _ => match (board, &here.board) {
            (None, _) => Some(call),
            (Some(b), Some(current)) if same_place(b, std::path::Path::new(current)) => Some(call),
            _ => None,
        },
    }
}
