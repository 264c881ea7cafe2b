"""Drive `pair mcp` with the official MCP Python SDK, as an agent's client would.

Run by tests/it/mcp.rs (which checks the exit status and prints the transcript summary this
prints on stdout); it needs the `mcp` package (scripts/mcp-clients.sh installs it).

    client.py lifecycle --pair PAIR --dir DIR --tools a,b,… --examples FILE
        Two servers on one board (a doer and a reviewer, separate processes) take a task from
        `init` to COMMITTED with an objection raised, resolved and accepted, a waiting `poll`
        woken by the other agent's write, a refused call and its structured error, a wait that
        returns at its timeout without a progress token, and a cancelled wait. Also checks that
        the tools are the agent commands and that every schema is plain JSON Schema that
        validates each tool's documented examples.

    client.py project --pair PAIR --dir DIR
        A project of three boards in one repository (doer d1 on two of them, d2 on the third,
        alice reviewing all three), each agent with its own `pair mcp PROJECT --agent ID`
        server. Each agent only calls `next` (waiting) and the call it names, filling in its
        placeholders, until every board is COMMITTED; a file outside the current board's places
        is refused once.

    client.py latency --pair PAIR --dir DIR --runs N
        Measure how soon a waiting `poll` returns after the other agent's write, through MCP
        and as `pair poll --wait`, and print the medians.

    client.py self-check
        Fail: shows that the checks run (each is an explicit `raise`, never an `assert`, which
        `python -O` or `PYTHONOPTIMIZE` would switch off).

Run it isolated (`python -I`), so no `PYTHON*` variable of the environment changes it.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STEPS = []


class CheckFailed(Exception):
    """A check of the client's run that did not hold."""


def expect(condition, message):
    """Fail the run unless `condition` holds: an explicit raise, which `python -O` and
    `PYTHONOPTIMIZE` do not switch off as they do `assert`."""
    if not condition:
        raise CheckFailed(message)


def step(text):
    """One line of the transcript summary."""
    STEPS.append(text)
    print(f"mcp-client: {text}", file=sys.stderr, flush=True)


class Agent:
    """One agent: its own `pair mcp` server process and client session."""

    def __init__(self, session, init, pid, name):
        self.session = session
        self.init = init
        self.pid = pid
        self.name = name

    async def call(self, tool, progress=None, **args):
        """A call that must succeed: its JSON result."""
        result = await self.session.call_tool(tool, args, progress_callback=progress)
        text = result.content[0].text
        expect(not result.is_error, f"{self.name}: {tool} {args} was refused: {text}")
        return json.loads(text)

    async def refused(self, tool, **args):
        """A call that must be refused: its error envelope."""
        result = await self.session.call_tool(tool, args)
        text = result.content[0].text
        expect(result.is_error, f"{self.name}: {tool} {args} was not refused: {text}")
        return json.loads(text)["error"]

    async def poll_until_turn(self, **args):
        """Poll with wait until it is this agent's turn (a bounded number of rounds)."""
        for _ in range(10):
            turn = await self.call("poll", wait=True, timeout=30, **args)
            if turn["your_turn"] or turn["terminal"]:
                return turn
        raise AssertionError(f"{self.name}: never got the turn")


async def start(stack, pair, board, agent, cwd, run_dir):
    """Start `pair mcp` for one agent on a board or a project."""
    # Through `sh`, which records its pid and execs it.
    pidfile = Path(run_dir) / f"{agent}.pid"
    params = StdioServerParameters(
        command="/bin/sh",
        args=["-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), pair, "mcp", board, "--agent", agent],
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    init = await session.initialize()
    pid = int(pidfile.read_text().strip())
    return Agent(session, init, pid, agent)


def inotify_fds(pid):
    """How many inotify instances the process holds (a waiting `poll` holds one)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd) == "anon_inode:inotify":
                count += 1
        except OSError:
            pass
    return count


def children(pid):
    """The process's child processes."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return out


async def until(what, check, seconds=20):
    """Wait for a condition (checked, not assumed after a sleep), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def check_tools(listed, instructions, expected, examples):
    """The tools are the agent commands; schemas are plain and validate the examples."""
    names = sorted(t.name for t in listed)
    expect(names == sorted(expected), f"tools {names} are not the agent commands {sorted(expected)}")
    schemas = {t.name: t.input_schema for t in listed}
    for name, schema in schemas.items():
        text = json.dumps(schema)
        expect("$ref" not in text and "$defs" not in text, f"{name}: {text}")
        jsonschema.Draft202012Validator.check_schema(schema)
        for fixed in ["agent", "board", "json", "color", "quiet", "verbose", "tokens", "cost"]:
            expect(fixed not in schema.get("properties", {}), f"{name} takes `{fixed}`")
        if name not in ("poll", "next"):  # their timeouts bound a wait, not the lock
            expect("timeout" not in schema.get("properties", {}), f"{name} takes `timeout`")
    checked = 0
    for example in examples:
        schema = schemas[example["name"]]
        jsonschema.validate(example["arguments"], schema)
        checked += 1
    expect(checked >= len(schemas), f"only {checked} examples for {len(schemas)} tools")
    size = len(json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listed]}))
    step(
        f"tools/list: {len(names)} tools, the agent commands; every schema plain JSON Schema "
        f"(no $ref/$defs), {checked} documented examples valid; instructions {len(instructions)} "
        f"bytes"
    )


async def lifecycle(opts):
    run_dir = Path(opts.dir)
    repo = run_dir / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "doer@example.com")
    git(repo, "config", "user.name", "Doer")
    (repo / "upload.py").write_text("def upload(data):\n    return send(data)\n")
    git(repo, "add", "upload.py")
    git(repo, "commit", "-q", "-m", "initial")
    board = str(repo / "task.md")
    examples = json.loads(Path(opts.examples).read_text())

    async with AsyncExitStack() as stack:
        doer = await start(stack, opts.pair, board, "doer", str(repo), run_dir)
        alice = await start(stack, opts.pair, board, "alice", str(repo), run_dir)
        expect(doer.pid != alice.pid, 'doer.pid != alice.pid')
        listed = (await alice.session.list_tools()).tools
        instructions = alice.init.instructions or ""
        expect("`alice`" in instructions and "`poll`" in instructions, instructions)
        check_tools(listed, instructions, opts.tools.split(","), examples)
        prompts = (await alice.session.list_prompts()).prompts
        expect([p.name for p in prompts] == ["pair"], prompts)
        skill = await alice.session.get_prompt("pair")
        expect("## 2. The loop" in skill.messages[0].content.text, '"## 2. The loop" in skill.messages[0].content.text')
        step("prompt `pair` is the skill")

        # The reviewer waits for a board that does not exist yet; the doer creates it.
        progress = []
        waiting = asyncio.Event()

        async def heard(value, total, message):
            progress.append((value, total, message))
            waiting.set()

        first = asyncio.create_task(alice.call("poll", progress=heard, wait=True, timeout=60))
        await asyncio.wait_for(waiting.wait(), 30)
        expect("to be created" in progress[0][2], progress)
        await doer.call("init", goal="Retry failed uploads", reviewers=["alice"], max_rounds=3)
        turn = await asyncio.wait_for(first, 60)
        expect(turn["your_turn"] and turn["next"]["tool"]["name"] == "register", turn)
        step("alice's waiting poll reported progress while the board did not exist; doer: init; "
             "alice's poll woke: her turn to register")
        call = turn["next"]["tool"]
        registered = await alice.call(call["name"], **call["arguments"])
        expect(registered["exit"] == 0, registered)

        # The reviewer waits for her turn while the doer works; each write of the doer's wakes
        # the wait, which reports progress and goes on waiting.
        progress.clear()
        waiting.clear()
        review = asyncio.create_task(alice.call("poll", progress=heard, wait=True, timeout=60))
        await asyncio.wait_for(waiting.wait(), 30)
        expect(progress[0][2].startswith("waiting: DRAFT"), progress)

        # A refused call: a human gate without the user's approval (while alice's call waits on
        # her server).
        error = await doer.refused("advance", phase="PLANNING")
        expect(error["code"] == 6 and error["kind"] == "protocol", error)
        expect("--user-approved" in error["hint"]["command"], error)
        hint = error["hint"]["tool"]
        expect(hint == {"name": "advance", "arguments": {"phase": "PLANNING", "user_approved": True}}, hint)
        step("doer: advance PLANNING without user_approved refused: exit 6 protocol, hint.tool given")
        moved = await doer.call(hint["name"], **hint["arguments"])
        expect(moved["phase"] == "PLANNING", moved)
        await until(
            "alice's wait to see PLANNING",
            lambda: any(m.startswith("waiting: PLANNING") for _, _, m in progress),
        )
        step("doer: the hint's call as given moved to PLANNING; alice's wait woke, reported it, "
             "and waits on")

        error = await doer.refused("note", section="Evidence", note_file="-")
        expect(error["code"] == 4 and error["kind"] == "usage", error)
        error = await doer.refused("poll", bogus=True)
        expect(error["code"] == 4 and "bogus" in error["message"], error)
        step("note_file `-` and an unknown argument refused as usage errors (exit 4)")

        plan = "#### Step 1\n\nRetry each failed upload.\n\n#### Step 2\n\nTest it.\n"
        await doer.call("submit", artifact="plan", note=plan, user_approved=True)
        turn = await asyncio.wait_for(review, 60)
        expect(turn["your_turn"] and turn["exit"] == 0 and turn["review"]["target"] == "plan", turn)
        expect(turn["waited_ms"] > 0 and len(progress) >= 2, (turn, progress))
        step(
            f"doer: submit plan; alice's waiting poll woke with her turn ({len(progress)} "
            f"progress notifications, the last: {progress[-1][2]!r})"
        )

        # Round 1: an objection and changes requested.
        diff = await alice.call("diff")
        expect("Retry each failed upload" in diff["content"], diff)
        objection = await alice.call(
            "object",
            severity="blocking",
            anchor="#### Step 1",
            title="Retries never end",
            evidence="Step 1 retries without a cap",
            fix="Cap the retries at 5",
        )
        blk = objection["id"]
        verdict = turn["next"]["tool"]
        expect(verdict["name"] == "verdict", turn["next"])
        await alice.call(
            "verdict",
            verdict="CHANGES_REQUESTED",
            revision=turn["review"]["counter"],
            artifact_sha256=diff["sha256"],
            objections=[blk],
            note="The retries need a cap.",
        )
        step(f"alice: diff, object {blk} (blocking), verdict CHANGES_REQUESTED")

        turn = await doer.poll_until_turn()
        expect(turn["phase"] == "PLAN_CHANGES_REQUESTED", turn)
        await doer.call("resolve", id=blk, resolution="Retries are capped at 5", surfaces=["Step 1"])
        plan2 = plan.replace("Retry each failed upload.", "Retry each failed upload, at most 5 times.")
        await doer.call("submit", artifact="plan", note=plan2, user_approved=True)
        step(f"doer: resolve {blk}, submit plan revision 2")

        turn = await alice.poll_until_turn()
        await alice.call("accept", id=blk)
        diff = await alice.call("diff")
        await alice.call(
            "verdict",
            verdict="APPROVED",
            revision=turn["review"]["counter"],
            artifact_sha256=diff["sha256"],
            note="Sound now.",
        )
        step(f"alice: accept {blk}, verdict APPROVED on revision {turn['review']['counter']}")

        # The doer follows next.tool to make the worktree.
        turn = await doer.poll_until_turn()
        expect(turn["phase"] == "PLAN_APPROVED", turn)
        call = turn["next"]["tool"]
        expect(call["name"] == "worktree-create", turn["next"])
        made = await doer.call(call["name"], **call["arguments"])
        worktree = Path(made["worktree"]["worktree"])
        step(f"doer: {call['name']} {call['arguments']} (next.tool as given)")

        # A wait without a progress token is bounded by its timeout: a result, not an error.
        started = time.monotonic()
        bounded = await alice.call("poll", wait=True, timeout=1)
        expect(not bounded["your_turn"] and bounded["exit"] == 10, bounded)
        step(f"alice: poll wait timeout=1 without a progress token returned exit 10 (a result) in {time.monotonic() - started:.1f} s")

        # A cancelled wait ends at once and leaves nothing behind.
        cancel_heard = asyncio.Event()

        async def heard_cancel(value, total, message):
            cancel_heard.set()

        # The bounded wait above lets go of its watch on a thread of its own once it has
        # answered: wait for that, rather than expect it to be done already.
        await until("the bounded wait to let go of its watch", lambda: inotify_fds(alice.pid) == 0)
        doomed = asyncio.create_task(alice.call("poll", progress=heard_cancel, wait=True, timeout=300))
        await asyncio.wait_for(cancel_heard.wait(), 30)
        expect(inotify_fds(alice.pid) == 1, "the waiting poll holds its watch")
        cancelled_at = time.monotonic()
        doomed.cancel()
        try:
            await doomed
        except asyncio.CancelledError:
            pass
        await until("the cancelled wait to let go of its watch", lambda: inotify_fds(alice.pid) == 0)
        released = time.monotonic() - cancelled_at
        expect(children(alice.pid) == [], children(alice.pid))
        after = await alice.call("poll")
        expect(after["exit"] == 10, after)
        step(
            f"alice: a waiting poll cancelled by the client: its watch released in "
            f"{released * 1000:.0f} ms, no child process left, the server still answers"
        )

        # Code: the doer stages a change in the worktree and submits it.
        (worktree / "upload.py").write_text(
            "def upload(data, tries=5):\n"
            "    for _ in range(tries):\n"
            "        if send(data):\n"
            "            return True\n"
            "    return False\n"
        )
        git(worktree, "add", "upload.py")
        await doer.call("submit", artifact="code", note="Retries capped at 5.")
        turn = await alice.poll_until_turn()
        diff = await alice.call("diff")
        expect("tries=5" in diff["content"], diff)
        await alice.call(
            "verdict",
            verdict="APPROVED",
            revision=turn["review"]["counter"],
            artifact_sha256=diff["sha256"],
            note="Good.",
        )
        step("doer: submit code (staged); alice: diff, verdict APPROVED")

        turn = await doer.poll_until_turn()
        expect(turn["phase"] == "READY_TO_COMMIT", turn)
        git(worktree, "add", "-u")
        git(worktree, "commit", "-q", "-m", "Cap upload retries")
        call = turn["next"]["tool"]
        expect(call["name"] == "advance", turn["next"])
        committed = await doer.call(call["name"], **call["arguments"])
        expect(committed["phase"] == "COMMITTED", committed)
        step(f"doer: commit, {call['name']} {call['arguments']} (next.tool as given)")

        final = await alice.call("poll", wait=True, timeout=30)
        expect(final["terminal"] and final["exit"] == 11, final)
        ledger = await alice.call("objections")
        states = {o["id"]: o["state"] for o in ledger["objections"]}
        expect(states == {blk: "accepted"}, ledger)
        step(f"alice: poll returned exit 11 (terminal, COMMITTED); ledger {states}")

    print(json.dumps({"steps": STEPS}))


async def project(opts):
    """Two doers and a reviewer through a three-board project, each only calling `next` and
    the call it names."""
    run_dir = Path(opts.dir)
    repo = run_dir / "repo"
    boards = repo / "boards"
    boards.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "doer@example.com")
    git(repo, "config", "user.name", "Doer")
    for name in "abc":
        (repo / f"{name}.py").write_text(f"def {name}():\n    return 0\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")
    doers = {"a": "d1", "b": "d1", "c": "d2"}
    for name, doer in doers.items():
        subprocess.run(
            [opts.pair, "init", str(boards / f"{name}.md"), "--goal", f"Make {name}() return 1",
             "--doer", doer, "--reviewers", "alice"],
            check=True, capture_output=True,
        )
    outside = repo / "outside.txt"
    outside.write_text("not a board's file\n")

    def phases():
        out = subprocess.run([opts.pair, "ls", str(boards), "--json"], check=True,
                             capture_output=True, text=True).stdout
        return {row["name"]: row["phase"] for row in json.loads(out)["boards"]}

    worktrees = {}
    calls = {"d1": [], "d2": [], "alice": []}
    refused = []

    def fill(name, step, call):
        """The call `next` named, its placeholders filled in as an agent would."""
        args = dict(call["arguments"])
        board = Path(step["board"])
        for key, value in list(args.items()):
            if value == "FILE":
                text = {"submit": "#### Step 1\n\nReturn 1.\n" if args.get("artifact") == "plan"
                        else "Returns 1 now.\n", "verdict": "Sound.\n"}.get(call["name"], "Done.\n")
                note = board.parent / f"{step['name']}-{call['name']}-{len(calls[name])}.txt"
                note.write_text(text)
                args[key] = str(note)
            elif value == "VERDICT":
                args[key] = "APPROVED"
        expect(not any(v in ("FILE", "VERDICT") for v in args.values()), (call, args))
        return args

    async def work(agent):
        # `next` at once after each step; with nothing to do, the waiting `next` (the project's
        # poll), which also returns when another agent writes.
        waits = False
        for _ in range(400):
            turn = await agent.call("next", **({"wait": True, "timeout": 30} if waits else {}))
            expect(("cursor" in turn) == waits, turn)
            if turn["exit"] == 11:
                return
            if not turn["found"]:
                expect(turn["step"] is None and turn["next"]["tool"] == {"name": "next", "arguments": {"wait": True}}, turn)
                if all(p == "COMMITTED" for p in phases().values()):
                    return
                waits = True
                continue
            waits = False
            step = turn["step"]
            call = turn["next"]["tool"]
            expect(call is not None and call["name"] != "next", turn)
            args = fill(agent.name, step, call)
            if call["name"] == "submit" and args.get("artifact") == "plan" and not refused:
                # A file outside the current board's places is refused before it is read (by
                # the first doer to get here).
                refused.append(agent.name)
                error = await agent.refused("submit", **{**args, "note_file": str(outside)})
                expect(error["code"] == 4 and "outside the places" in error["message"], error)
            if call["name"] == "submit" and args.get("artifact") == "code":
                tree = worktrees[step["name"]]
                (tree / f"{step['name']}.py").write_text(f"def {step['name']}():\n    return 1\n")
                git(tree, "add", f"{step['name']}.py")
            if call["name"] == "advance" and args.get("phase") == "COMMITTED":
                tree = worktrees[step["name"]]
                git(tree, "commit", "-q", "-m", f"Make {step['name']}() return 1")
            result = await agent.call(call["name"], **args)
            if call["name"] == "worktree-create":
                worktrees[step["name"]] = Path(result["worktree"]["worktree"])
            calls[agent.name].append(f"{step['name']}:{call['name']}")
        raise CheckFailed(f"{agent.name}: the boards did not all reach COMMITTED: {phases()}")

    async with AsyncExitStack() as stack:
        agents = [await start(stack, opts.pair, str(boards), name, str(repo), run_dir)
                  for name in ("d1", "d2", "alice")]
        instructions = agents[0].init.instructions or ""
        expect("`next`" in instructions and "`d1`" in instructions, instructions)
        listed = {t.name: t for t in (await agents[0].session.list_tools()).tools}
        expect("project" not in listed["next"].input_schema.get("properties", {}), listed["next"])
        # A board tool before `next` named a board: refused, `next` is the call to make.
        error = await agents[2].refused("status")
        expect(error["hint"]["tool"] == {"name": "next", "arguments": {}}, error)
        step("alice: status before any next refused, hint.tool is next")
        await asyncio.gather(*(work(agent) for agent in agents))

    final = phases()
    expect(final == {"a": "COMMITTED", "b": "COMMITTED", "c": "COMMITTED"}, final)
    expect(len(refused) == 1, refused)
    for name in "abc":
        log = subprocess.run(["git", "log", "--oneline", "-1", f"pair/{name}"], cwd=repo,
                             check=True, capture_output=True, text=True).stdout
        expect(f"Make {name}() return 1" in log, log)
    step(f"{refused[0]}: a file outside the current board's places refused (exit 4)")
    for name, made in calls.items():
        step(f"{name}: {', '.join(made)}")
    step(f"every board COMMITTED: {final}")
    print(json.dumps({"steps": STEPS, "calls": calls}))


async def latency(opts):
    """Wake-up latency of a waiting poll, through MCP and as `pair poll --wait`: from the start
    of the `pair submit` that gives the reviewer the turn to the waiting poll's answer (the
    response through MCP, the process's exit on the command line)."""
    run_dir = Path(opts.dir)
    board = str(run_dir / "task.md")

    def pair(*args):
        subprocess.run([opts.pair, *args], check=True, capture_output=True)

    pair("init", board, "--goal", "Measure", "--reviewers", "alice", "--yolo")
    pair("register", board, "--agent", "alice")
    pair("advance", board, "--agent", "doer", "PLANNING")
    mcp_ms, cli_ms = [], []
    revision = 0
    presence = run_dir / ".task.md.pair" / "presence" / "alice.json"

    def presence_pid(path):
        try:
            return json.loads(path.read_text())["pid"]
        except (OSError, ValueError, KeyError):
            return None

    def submit():
        started = time.monotonic()
        pair("submit", board, "--agent", "doer", "plan", "--note", f"plan {revision}")
        return started

    # The same server read by the thinnest client there is (JSON lines on its pipes, for the
    # benchmark only): the wake-up as the server gives it, without the SDK's own work.
    raw = await asyncio.create_subprocess_exec(
        opts.pair, "mcp", board, "--agent", "alice",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )

    async def send(message):
        raw.stdin.write((json.dumps(message) + "\n").encode())
        await raw.stdin.drain()

    async def receive(until_id=None, method=None):
        while True:
            message = json.loads(await raw.stdout.readline())
            if message.get("id") == until_id or message.get("method") == method:
                return message

    await send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})
    await receive(until_id=0)
    await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw_ms = []

    async with AsyncExitStack() as stack:
        alice = await start(stack, opts.pair, board, "alice", str(run_dir), run_dir)
        for _ in range(opts.runs):
            for kind in ("mcp", "raw", "cli"):
                revision += 1
                if kind == "mcp":
                    ready = asyncio.Event()

                    async def heard(value, total, message):
                        ready.set()

                    task = asyncio.create_task(alice.call("poll", progress=heard, wait=True, timeout=30))
                    await asyncio.wait_for(ready.wait(), 30)
                    started = submit()
                    turn = await task
                    mcp_ms.append((time.monotonic() - started) * 1000)
                    expect(turn["your_turn"], turn)
                elif kind == "raw":
                    await send({"jsonrpc": "2.0", "id": revision, "method": "tools/call", "params": {
                        "name": "poll", "arguments": {"wait": True, "timeout": 30},
                        "_meta": {"progressToken": revision}}})
                    await receive(method="notifications/progress")
                    started = submit()
                    answer = await receive(until_id=revision)
                    raw_ms.append((time.monotonic() - started) * 1000)
                    expect(json.loads(answer["result"]["content"][0]["text"])["your_turn"], answer)
                else:
                    proc = await asyncio.create_subprocess_exec(
                        opts.pair, "poll", board, "--agent", "alice", "--wait", "--timeout", "30", "--json",
                        stdout=asyncio.subprocess.PIPE,
                    )
                    # Waiting: it has read the board and written its presence record (what
                    # it does just before it sleeps, as the server's progress notification).
                    await until("the poll to wait", lambda: presence_pid(presence) == proc.pid)
                    started = submit()
                    out, _ = await proc.communicate()
                    cli_ms.append((time.monotonic() - started) * 1000)
                    expect(json.loads(out)["your_turn"], out)
                pair("verdict", board, "--agent", "alice", "CHANGES_REQUESTED", "--revision", str(revision), "--note", "again")
    raw.stdin.close()
    await raw.wait()

    def figures(ms):
        return {"median": round(statistics.median(ms), 1), "p90": round(sorted(ms)[int(len(ms) * 0.9)], 1)}

    print(json.dumps({
        "runs": opts.runs,
        "mcp_python_sdk_ms": figures(mcp_ms),
        "mcp_json_lines_ms": figures(raw_ms),
        "poll_wait_process_ms": figures(cli_ms),
    }))


def main():
    if sys.argv[1:] == ["self-check"]:
        # A check that cannot hold: the run must fail, however Python was started.
        expect(False, "the client's checks are live")
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["lifecycle", "project", "latency"])
    parser.add_argument("--pair", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--tools", default="")
    parser.add_argument("--examples", default="")
    parser.add_argument("--runs", type=int, default=20)
    opts = parser.parse_args()
    modes = {"lifecycle": lifecycle, "project": project, "latency": latency}
    asyncio.run(modes[opts.mode](opts))


if __name__ == "__main__":
    main()
