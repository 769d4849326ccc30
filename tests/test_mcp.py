"""Tools from MCP servers, and agents served as MCP servers: against
real servers from the package registry (``mcp-server-time``, ``mcp-server-git``), the
official ``mcp`` client, and a small server of the official SDK for the failure cases."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import add, agents_cli, initial
from mcp_servers import FAILING, GIT, HOSTILE, TIME

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    Role,
    ToolCall,
    hook,
)
from agents.errors import InvalidType
from agents.mcp import MCPServerHTTP, MCPServerStdio
from agents.mcp.sampling import SAMPLING_KEY
from agents.testing import (
    FunctionDriver,
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    call,
    calls,
    capture_events,
    reply,
)
from agents.testing.regression import regress

TESTS = Path(__file__).parent


def assert_replays(log: Path) -> None:
    """``agents replay LOG --verify`` passes, in a process of its own (no server needed)."""
    replayed = subprocess.run(
        [sys.executable, "-m", "agents", "replay", log.name, "--verify"],
        capture_output=True,
        text=True,
        cwd=log.parent,
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def time_server(**options: Any) -> MCPServerStdio:
    return MCPServerStdio(TIME, ["--local-timezone", "UTC"], **options)


def failing(**options: Any) -> MCPServerStdio:
    return MCPServerStdio(sys.executable, [FAILING], **options)


def loop_of(*script: Any, tools: Any, **options: Any) -> AgentLoop:
    options.setdefault("clock", TickingClock())
    options.setdefault("ids", SequentialIds())
    return AgentLoop(ScriptedDriver(script), tools=tools, **options)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_scripted_model_asks_mcp_server_time_and_reads_the_answer():
    """``mcp-server-time`` over stdio: the model asks ``get_current_time`` for UTC, the
    answer reaches it as the tool result; the run records the catalogue it was offered."""
    server = time_server()
    loop = loop_of(call("get_current_time", timezone="UTC"), reply("done"), tools=[add, server])
    final = loop.run(initial())
    (execution,) = final.tool_executions
    assert execution.error is None
    assert execution.value["timezone"] == "UTC" and "datetime" in execution.value
    tool_message = final.messages[2]
    assert tool_message.role.value == "tool" and '"timezone": "UTC"' in tool_message.content
    (catalogue,) = final.metadata["agents.tool_sources"]
    assert catalogue["server"]["name"] == "mcp-time"
    assert {t["name"] for t in catalogue["tools"]} == {"get_current_time", "convert_time"}
    assert server._connection is None  # opened for the run, closed with it


def test_mcp_server_git_on_a_temporary_repository(tmp_path):
    """``mcp-server-git`` over stdio: the model asks for the repository's status."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for command in (
        ["git", "init", "-q"],
        [
            "git",
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ],
    ):
        subprocess.run(command, cwd=repo, check=True)
    (repo / "new.txt").write_text("hello\n")
    server = MCPServerStdio(GIT, ["--repository", str(repo)], prefix="git")
    loop = loop_of(call("git_git_status", repo_path=str(repo)), reply("done"), tools=[server])
    final = loop.run(initial())
    (execution,) = final.tool_executions
    assert execution.error is None, execution.error
    assert "new.txt" in execution.value


def test_a_recorded_mcp_run_replays_and_regresses_without_the_server(tmp_path):
    """The audit log of a run with MCP calls replays offline (``agents replay --verify``),
    with no server process anywhere."""
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        loop = loop_of(
            call("get_current_time", timezone="UTC"), reply("done"), tools=[time_server()]
        )
        loop.with_listeners(log).run(initial())
    replayed = subprocess.run(
        [sys.executable, "-m", "agents", "replay", "run.jsonl", "--verify"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PATH": "/usr/bin:/bin"},  # no mcp-server-time to be found
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # A regression test without the server: the model was offered its tools, and now is
    # not — what changed is the request's tool schemas.
    gone = MCPServerStdio("/nonexistent/mcp-server-time")
    change = regress(loop_of(reply("x"), tools=[gone]), [tmp_path / "run.jsonl"]).runs[0].change
    assert change is not None and (change.kind, change.part) == ("request", "tool schemas")


def summarizing_model(request: Any) -> Any:
    """Asks ``summarize`` (or the tool its user message names) about a text, answers a
    sampling request ("You summarize.") with "short: ...", and ends with the tool's answer."""
    first = request.messages[0]
    if first.role is Role.SYSTEM and first.content == "You summarize.":
        return f"short: {request.messages[-1].content}"
    done = [m for m in request.messages if m.role is Role.TOOL]
    if not done:
        name = request.messages[-1].content
        return [ToolCall(id="call-1", name=name, arguments={"text": "a long text"})]
    return f"done: {done[-1].content}"


@pytest.mark.parametrize("era", ["stdio", "http-2025"])
def test_a_servers_sampling_request_is_answered_by_the_runs_model_and_recorded(era, tmp_path):
    """The server asks the client's model during a call (2026: inside the call's answer;
    2025: a request of its own): the run's driver answers, in a one-step run kept on the
    call's execution (``child``) with ids derived from the call; the audit log replays
    without the server or the model."""
    process = None
    if era == "stdio":
        server: Any = MCPServerStdio(sys.executable, [FAILING])
    else:
        port = free_port()
        process = start_http(sys.executable, FAILING, era, str(port), port=port)
        server = MCPServerHTTP(f"http://127.0.0.1:{port}/mcp")
    loop = AgentLoop(
        FunctionDriver(summarizing_model), tools=[server], clock=TickingClock(), ids=SequentialIds()
    )
    try:
        with AuditLog.open(tmp_path / "run.jsonl") as log:
            final = loop.with_listeners(log).run(AgentState.initial(messages=["summarize"]))
    finally:
        if process is not None:
            process.kill()
            process.wait()
    (execution,) = final.tool_executions
    assert execution.value == "summary: short: a long text (by FunctionDriver)", execution
    child = execution.child
    assert child is not None and child.status.value == "completed"
    assert [(m.role.value, m.content) for m in child.messages] == [
        ("user", "a long text"),
        ("assistant", "short: a long text"),
    ]
    assert child.context.system_prompt == "You summarize."
    assert dict(child.llm_config) == {"max_tokens": 40, "temperature": 0.0}
    assert child.agent_id == "execution-1.1.call-1.sampling"
    assert child.parent_agent_id == final.agent_id
    assert child.metadata[SAMPLING_KEY]["server"] == server.label
    assert final.final_response == f"done: {execution.value}"
    assert_replays(tmp_path / "run.jsonl")


@pytest.mark.parametrize("era", ["stdio", "http-2025"])
def test_a_servers_elicitation_suspends_the_run_until_a_human_answers(era, tmp_path):
    """The server asks a human during a call (2026: inside the call's answer; 2025: a
    request of its own): the run suspends with the question; the state is stored and, in
    another server session, resumed with the answer — the call is made again and the
    server receives the answer; the audit log replays without the server."""
    process = None
    if era == "stdio":

        def server() -> Any:
            return failing()
    else:
        port = free_port()
        process = start_http(sys.executable, FAILING, era, str(port), port=port)

        def server() -> Any:
            return MCPServerHTTP(f"http://127.0.0.1:{port}/mcp")

    script = [call("greet", id="call-1"), reply("greeted")]
    try:
        with AuditLog.open(tmp_path / "run.jsonl") as log:
            waiting = loop_of(*script, tools=[server()], listeners=[log]).run(initial())
            assert waiting.status.value == "suspended"
            (question,) = waiting.pending_inputs
            assert question.call_id == "call-1"
            assert question.message == "Whom shall I greet?"
            assert question.schema["properties"]["name"]["type"] == "string"
            stored = AgentState.from_json(waiting.with_input("call-1", {"name": "Ada"}).to_json())
            # (a new model too: the step's answer is in the state, not asked again)
            final = loop_of(reply("greeted"), tools=[server()], listeners=[log]).run(stored)
    finally:
        if process is not None:
            process.kill()
            process.wait()
    assert final.status.value == "completed", final.execution
    (execution,) = final.tool_executions
    assert execution.value == "hello Ada (greeting 1)"  # the tool ran once, with the answer
    (answer,) = execution.inputs
    assert (answer.action, dict(answer.content)) == ("accept", {"name": "Ada"})
    assert_replays(tmp_path / "run.jsonl")


def test_a_declined_question_reaches_the_server_and_elicitation_can_be_turned_off():
    """A declined question is the server's to handle; ``elicitation=False``: the server
    is told the client takes none, and its tool fails — the run goes on."""
    script = [call("greet", id="call-1"), reply("ok")]
    loop = loop_of(*script, tools=[failing()])
    waiting = loop.run(initial())
    declined = waiting.with_input("call-1", action="decline")
    final = loop_of(reply("ok"), tools=[failing()]).run(declined)
    assert final.tool_executions[0].value == "nobody to greet (decline)"
    final = loop_of(*script, tools=[failing(elicitation=False)]).run(initial())
    (execution,) = final.tool_executions
    assert execution.error is not None and execution.error.type == "MCPToolError"
    assert final.status.value == "completed" and len(final.pending_inputs) == 0


def test_sampling_turned_off_or_asked_twice_fails_the_call_not_the_run():
    """``sampling=False``: the server is told the client cannot sample, and its tool
    fails; a second request in one call is refused, the first one's run kept."""
    off = MCPServerStdio(sys.executable, [FAILING], sampling=False)
    final = AgentLoop(FunctionDriver(summarizing_model), tools=[off]).run(
        AgentState.initial(messages=["summarize"])
    )
    (execution,) = final.tool_executions
    assert execution.error is not None and execution.child is None
    assert final.final_response is not None and final.final_response.startswith("done: ")
    twice = MCPServerStdio(sys.executable, [FAILING])
    final = AgentLoop(FunctionDriver(summarizing_model), tools=[twice]).run(
        AgentState.initial(messages=["summarize_twice"])
    )
    (execution,) = final.tool_executions
    assert execution.error is not None and "one sampling request per tool call" in (
        execution.error.message
    )
    assert execution.child is not None and execution.child.final_response is not None
    assert final.status.value == "completed"


def test_hooks_block_mcp_calls_and_approvals_gate_them():
    """An MCP call is an ordinary tool call: a hook blocks it; an approval gate suspends
    the run until someone answers."""

    @hook(HookTrigger.BEFORE_TOOL_USE, name="no_convert")
    def no_convert(context: HookContext) -> HookContext:
        if context.tool_call is not None and context.tool_call.name == "convert_time":
            return context.with_tool_blocked("no conversions")
        return context

    script = [
        calls(
            call("convert_time", source_timezone="UTC", time="10:00", target_timezone="UTC"),
            call("get_current_time", timezone="UTC"),
        ),
        reply("done"),
    ]
    final = loop_of(*script, tools=[time_server()], hooks=[no_convert]).run(initial())
    blocked, answered = final.tool_executions
    assert blocked.blocked and answered.error is None
    gated = loop_of(*script, tools=[time_server(requires_approval=["get_current_time"])])
    suspended = gated.run(initial())
    assert suspended.status.value == "suspended"
    assert [c.name for c in suspended.pending_approvals] == ["get_current_time"]
    resumed = gated.run(suspended.with_approval(suspended.pending_approvals[0].id, True))
    assert resumed.status.value == "completed"


def test_requires_approval_gates_by_either_name_and_refuses_a_text():
    """``requires_approval="get_current_time"`` became the set of its letters, and a name
    with the prefix (``clock_get_current_time``, the name the run sees) matched no tool:
    both let the calls run with no approval. A text is refused; either name gates."""
    with pytest.raises(InvalidType, match=r"write \['get_current_time'\]"):
        time_server(requires_approval="get_current_time")
    script = [call("clock_get_current_time", timezone="UTC"), reply("done")]
    for named in ("get_current_time", "clock_get_current_time"):
        gated = loop_of(*script, tools=[time_server(prefix="clock", requires_approval=[named])])
        suspended = gated.run(initial())
        assert [c.name for c in suspended.pending_approvals] == ["clock_get_current_time"]
        assert suspended.tool_executions == []


def test_one_session_per_run_and_held_sessions_across_runs():
    """A run keeps one session (a stateful server keeps its state); ``with server:`` keeps
    it across runs; it stops when released."""
    server = failing()
    script = [call("count"), call("count"), call("pid"), reply("done")]
    first = loop_of(*script, tools=[server]).run(initial())
    counts = [e.value for e in first.tool_executions[:2]]
    assert counts == [1, 2]
    pid = first.tool_executions[2].value
    assert wait_gone(pid)  # the run opened it, the run closed it
    with server:
        a = loop_of(call("count"), reply("x"), tools=[server]).run(initial())
        b = loop_of(call("count"), call("pid"), reply("x"), tools=[server]).run(initial())
        assert [a.tool_executions[0].value, b.tool_executions[0].value] == [1, 2]
        held = b.tool_executions[1].value
        assert alive(held)
    assert wait_gone(held)


def test_a_server_that_says_its_tools_changed_is_listed_again():
    """``notifications/tools/list_changed``: the next run is offered the new catalogue."""
    server = failing()
    with server:
        first = loop_of(call("grow"), reply("x"), tools=[server]).run(initial())
        assert first.tool_executions[0].value == "grown"
        second = loop_of(call("late"), reply("x"), tools=[server]).run(initial())
    assert second.tool_executions[0].value == "here now"
    names = {t["name"] for t in second.metadata["agents.tool_sources"][0]["tools"]}
    assert "late" in names and "late" not in {
        t["name"] for t in first.metadata["agents.tool_sources"][0]["tools"]
    }


def test_many_concurrent_async_runs_share_one_session():
    """A thousand-run service shape in small: ``arun`` runs at once, one server process."""
    server = failing()

    async def everything() -> list[AgentState]:
        return await asyncio.gather(
            *(loop_of(call("pid"), reply("x"), tools=[server]).arun(initial()) for _ in range(8))
        )

    finals = asyncio.run(everything())
    pids = {final.tool_executions[0].value for final in finals}
    assert len(pids) == 1
    assert wait_gone(pids.pop())


def test_failures_are_failed_tool_executions_never_a_hang():
    """The server's ``isError``, a deadline passed (per server, overridden per tool), the
    server process killed mid-call: each a failed execution the model reads, at once; the
    calls after it start the server again (once each) and are answered; the run goes on
    to its answer."""
    server = failing(timeout=30.0, tool_timeouts={"slow": 0.5})
    script = [
        call("fail", reason="no luck"),
        call("slow", seconds=5),
        calls(call("crash"), call("count")),
        call("count"),
        reply("done"),
    ]
    started = time.monotonic()
    # One call after another: a count beside the crash in parallel was answered before
    # the process died now and then (3 runs in 40), and the test failed.
    final = loop_of(*script, tools=[server], tool_execution="sequential").run(initial())
    took = time.monotonic() - started
    errors = [e.error for e in final.tool_executions]
    assert all(error is not None for error in errors[:3])
    assert "no luck" in errors[0].message
    assert errors[1].type in ("ToolTimeout", "TimeoutError")
    assert errors[2].type == "MCPToolError"  # the process died under the call
    assert errors[3] is None and errors[4] is None  # started again for the next calls
    assert final.status.value == "completed" and final.final_response == "done"
    assert took < 15  # the slow call was abandoned at its deadline, nothing waited for more


def test_a_failing_server_fails_only_its_own_tools():
    """A server that cannot start offers no tools; the run goes on with the others'. A
    call of a tool nobody offered says why the server offered none."""
    broken = MCPServerStdio("/nonexistent/server")
    script = calls(call("get_current_time", timezone="UTC"), call("read_file", path="x"))
    loop = loop_of(script, reply("done"), tools=[broken, time_server()])
    final = loop.run(initial())
    timed, unknown = final.tool_executions
    assert timed.error is None
    recorded = final.metadata["agents.tool_sources"]
    assert recorded[0]["server"] == "server"
    assert recorded[0]["error"].startswith("the MCP server server did not start")
    assert unknown.error.type == "UnknownTool"
    assert unknown.error.message.startswith("unknown tool 'read_file'; available tools: ")
    assert unknown.error.message.endswith("; " + recorded[0]["error"])


def test_tools_a_state_cannot_hold_are_left_out_and_the_rest_work(tmp_path):
    """A server listing a tool whose schema holds ``NaN``, a second tool of one name and a
    schema that is no schema (what the SDK's servers never send; a hand-written one does):
    the run offers the tools it can (the broken schema checked by the server alone),
    records why the others are left out, and ends as any run does — it raised
    ``NestingError``, ``ConfigurationError`` and ``AttributeError`` before."""
    hostile = MCPServerStdio(sys.executable, [HOSTILE])
    loop = loop_of(
        call("echo", text="hi"),
        call("loose", anything=[1]),
        call("odd", x=1),
        reply("done"),
        tools=[hostile, add],
    )
    with AuditLog.open(tmp_path / "hostile.jsonl") as log:
        final = loop.with_listeners(log).run(initial())
    assert final.status is ExecutionStatus.COMPLETED
    echo, loose, odd = final.tool_executions
    assert echo.value == {"said": "hi"} and echo.error is None
    assert loose.error is None  # offered; its arguments checked by the server alone
    assert odd.error is not None and odd.error.type == "UnknownTool"
    listed = final.metadata["agents.tool_sources"][0]["tools"]
    assert [t["name"] for t in listed] == ["echo", "odd", "echo", "loose"]
    assert "input_schema" in listed[0] and "input_schema" in listed[3]
    assert listed[1]["error"].startswith("left out: its input schema is not usable JSON (nan")
    assert listed[2]["error"] == "left out: the server lists another tool named 'echo'"
    assert AgentState.from_json(final.to_json()) == final
    assert_replays(tmp_path / "hostile.jsonl")


def test_an_answer_that_is_no_message_fails_the_call_at_once(tmp_path):
    """A server whose answer to a call is cut short (no JSON-RPC message, which the SDK
    drops, tied to no request): the call fails at once, saying so — it waited for its
    deadline (60 s by default) and said it took too long — and the session goes on."""
    hostile = MCPServerStdio(sys.executable, [HOSTILE])
    loop = loop_of(
        call("echo", text="garble"),
        call("echo", text="hi"),
        reply("done"),
        tools=[hostile],
    )
    started = time.monotonic()
    final = loop.run(initial())
    assert time.monotonic() - started < 20
    assert final.status is ExecutionStatus.COMPLETED
    garbled, fine = final.tool_executions
    assert garbled.error is not None and garbled.error.type == "MCPToolError"
    assert "not a JSON-RPC message" in garbled.error.message
    assert "took longer" not in garbled.error.message
    assert fine.value == {"said": "hi"} and fine.error is None


def test_an_answer_that_is_no_message_before_the_caller_watches(monkeypatch):
    """The server's garbled answer may come before the calling thread starts watching the
    session for faults: the call still fails at once (the watch came after the call was
    sent, and such a call waited for its deadline). The caller is slowed here to make the
    race certain."""
    from agents.mcp.connection import Connection

    watch = Connection.watch

    def slow_watch(self: Connection) -> Any:
        time.sleep(0.5)  # the answer arrives meanwhile
        return watch(self)

    monkeypatch.setattr(Connection, "watch", slow_watch)
    hostile = MCPServerStdio(sys.executable, [HOSTILE], timeout=8.0)
    loop = loop_of(call("echo", text="garble"), reply("done"), tools=[hostile])
    started = time.monotonic()
    final = loop.run(initial())
    assert time.monotonic() - started < 6
    (garbled,) = final.tool_executions
    assert garbled.error is not None and "not a JSON-RPC message" in garbled.error.message


def test_the_cli_prints_no_traceback_for_an_answer_that_is_no_message(tmp_path):
    """``agents run`` of an agent whose MCP server garbles an answer: the run records the
    failed call and the command prints no traceback (the SDK logs one for each line it
    cannot parse, with a piece of that line)."""
    (tmp_path / "garbling.py").write_text(
        "import sys\n"
        "from agents import AgentLoop\n"
        "from agents.mcp import MCPServerStdio\n"
        "from agents.testing import ScriptedDriver, call, reply\n"
        "def make():\n"
        f"    server = MCPServerStdio(sys.executable, [{HOSTILE!r}])\n"
        "    script = [call('echo', text='garble'), reply('done')]\n"
        "    return AgentLoop(ScriptedDriver(script), tools=[server])\n",
        encoding="utf-8",
    )
    result = agents_cli("run", "garbling:make", "--out", "run.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "garble" not in result.stderr, result.stderr
    (garbled,) = AuditLog.read(tmp_path / "run.jsonl").tool_executions
    assert garbled.error is not None and "not a JSON-RPC message" in garbled.error.message


_LISTING = "send(text.replace('\"maximum\": 0', '\"maximum\": NaN'))"
_INITIALIZE = '        elif method == "tools/list":'
_CUT_INITIALIZE = (
    '            send(json.dumps({"jsonrpc": "2.0", "id": number, "result": result})[:50])\n'
    "            continue\n"
)


@pytest.mark.parametrize(
    ("where", "replaced", "by", "said"),
    [
        ("tool list", _LISTING, "send(text[:60])\n            continue", "list of its tools"),
        ("handshake", _INITIALIZE, _CUT_INITIALIZE + _INITIALIZE, "during the handshake"),
    ],
)
def test_a_start_answered_by_what_is_no_message_is_said_at_once(
    tmp_path, where, replaced, by, said
):
    """A server whose answer to the tool list, or to ``initialize`` (the handshake), is cut
    short: the run starts at once with no tools from it, the catalogue saying why (it
    waited 30 s, or 41 s, and said "in time"), and the server it started is gone."""
    script = tmp_path / "server.py"
    source = Path(HOSTILE).read_text()
    assert replaced in source
    script.write_text(source.replace(replaced, by, 1))
    loop = loop_of(reply("done"), tools=[MCPServerStdio(sys.executable, [str(script)])])
    started = time.monotonic()
    final = loop.run(initial())
    assert time.monotonic() - started < 15, where
    assert final.status is ExecutionStatus.COMPLETED
    error = final.metadata["agents.tool_sources"][0]["error"]
    assert error.startswith("the MCP server python did not start: MCPToolError: ")
    assert "not a JSON-RPC message" in error and said in error
    left = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True)
    assert left.stdout == ""


def test_a_tool_list_the_sdk_refuses_is_said_in_one_line(tmp_path):
    """A server whose tool list the SDK refuses (a schema of ``"type": "string"``) offers no
    tools, and why is one line in the recorded catalogue (it was the SDK's task group)."""
    script = tmp_path / "server.py"
    source = Path(HOSTILE).read_text()
    script.write_text(
        source.replace('"inputSchema": OBJECT}', '"inputSchema": {"type": "string"}}', 1)
    )
    loop = loop_of(
        call("echo", text="hi"),
        reply("done"),
        tools=[MCPServerStdio(sys.executable, [str(script)])],
    )
    final = loop.run(initial())
    error = final.metadata["agents.tool_sources"][0]["error"]
    assert error.startswith("the MCP server python did not start: ValidationError: ")
    assert "\n" not in error and "inputSchema" in error


def test_no_orphan_server_after_the_run_is_killed(tmp_path):
    """``kill -9`` of a process in the middle of an MCP call: the server it started does
    not outlive it."""
    script = tmp_path / "victim.py"
    script.write_text(
        f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from helpers import initial
from agents import AgentLoop
from agents.mcp import MCPServerStdio
from agents.testing import ScriptedDriver, call, reply
server = MCPServerStdio({sys.executable!r}, [{FAILING!r}])
loop = AgentLoop(ScriptedDriver([call("pid"), call("slow", seconds=60), reply("x")]),
                 tools=[server], listeners=[lambda event: print(event, flush=True)])
loop.run(initial())
"""
    )
    victim = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    pid = None
    assert victim.stdout is not None
    for line in victim.stdout:
        if "ToolCallCompleted" in line or "StepCompleted" in line:
            break
    children = subprocess.run(
        ["pgrep", "-P", str(victim.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children, "the server process should be running"
    pid = int(children[0])
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    victim.stdout.close()
    assert wait_gone(pid), "the MCP server outlived the run that started it"


def test_inside_a_starlette_lifespan():
    """A session opened in an app's lifespan and used by requests in other tasks: no
    "exit cancel scope in a different task", the server stops with the app."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    server = failing()

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with server:
            yield

    async def ask(request: Any) -> JSONResponse:
        final = await loop_of(call("pid"), reply("x"), tools=[server]).arun(initial())
        return JSONResponse({"pid": final.tool_executions[0].value})

    app = Starlette(routes=[Route("/", ask)], lifespan=lifespan)
    with TestClient(app) as client:
        pids = {client.get("/").json()["pid"] for _ in range(3)}
        assert len(pids) == 1
        pid = pids.pop()
        assert alive(pid)
    assert wait_gone(pid)


# -- streamable HTTP, and agents as MCP servers ----------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def start_http(*command: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(list(command), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port)
    return process


@pytest.mark.parametrize("era", ["http", "http-2025"])
def test_an_http_server_restarted_between_calls_is_reconnected_once(era):
    """``MCPServerHTTP``: calls over streamable HTTP; the server restarts (on the 2025
    protocols its session is gone, a 404): the session is opened again and the call sent
    again, not a fatal error."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    first = start_http(sys.executable, FAILING, era, str(port), port=port)
    try:
        server = MCPServerHTTP(url, headers={"Authorization": "Bearer sk-http-secret-0001"})
        with server:
            before = loop_of(call("count"), reply("x"), tools=[server]).run(initial())
            assert before.tool_executions[0].value == 1
            first.kill()
            first.wait()
            first = start_http(sys.executable, FAILING, era, str(port), port=port)
            after = loop_of(call("count"), reply("x"), tools=[server]).run(initial())
        assert after.tool_executions[0].error is None, after.tool_executions[0].error
        assert after.tool_executions[0].value == 1  # a new server process, a new session
        assert "sk-http-secret-0001" not in repr(server) + after.to_json()
    finally:
        first.kill()
        first.wait()


def test_an_http_call_span_names_its_session(tmp_path):
    """Over streamable HTTP the ``tools/call`` span carries ``mcp.session.id``, the id the
    server gave the session (the one the call came on), recorded with the catalogue."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.semconv._incubating.attributes import mcp_attributes

    from agents.otel import OTelListener, export
    from agents.otel import spans as planned

    port = free_port()  # a server of the 2025 protocols: the 2026 one has no sessions
    process = start_http(sys.executable, FAILING, "http-2025", str(port), port=port)
    try:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        server = MCPServerHTTP(f"http://127.0.0.1:{port}/mcp")
        loop = loop_of(call("session"), reply("ok"), tools=[server])
        final = loop.with_listeners(OTelListener(provider)).run(initial())
    finally:
        process.kill()
        process.wait()
    given = final.tool_executions[0].value
    assert isinstance(given, str) and len(given) >= 16, given
    assert final.metadata["agents.tool_sources"][0]["session"] == given
    (live,) = [s for s in exporter.get_finished_spans() if s.name == "tools/call session"]
    assert planned.MCP_SESSION == mcp_attributes.MCP_SESSION_ID
    assert live.attributes[mcp_attributes.MCP_SESSION_ID] == given
    exporter.clear()
    export(final, provider)  # after the fact, from the recorded catalogue: the same
    (later,) = [s for s in exporter.get_finished_spans() if s.name == "tools/call session"]
    assert later.attributes == live.attributes


ECHO_AGENT = """
from agents import AgentLoop, AgentState
from agents.testing import FunctionDriver

def answer(request):
    return "you said: " + request.messages[-1].content

loop = AgentLoop(FunctionDriver(answer))
"""


def official_client_call(target: Any, message: str) -> tuple[str, list[str]]:
    from mcp import Client

    async def main() -> tuple[str, list[str]]:
        async with Client(target, read_timeout_seconds=30) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("echoer", {"message": message})
            assert not result.is_error, result
            return result.content[0].text, tools

    return asyncio.run(main())


def test_mcp_serve_answers_the_official_client_over_stdio(tmp_path):
    """``agents mcp-serve MODULE:ATTR``: the official client starts it, lists one tool,
    calls it; the run is in the audit log."""
    from mcp.client.stdio import StdioServerParameters

    (tmp_path / "echo_agent.py").write_text(ECHO_AGENT)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agents",
            "mcp-serve",
            "echo_agent:loop",
            "--name",
            "echoer",
            "--audit-log",
            str(tmp_path / "served.jsonl"),
        ],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    text, tools = official_client_call(parameters, "hello there")
    assert tools == ["echoer"] and text == "you said: hello there"
    assert AuditLog.read(tmp_path / "served.jsonl").final_response == "you said: hello there"


def test_mcp_serve_answers_text_that_is_not_unicode_with_the_replacement_character(tmp_path):
    """An answer holding a lone surrogate (a file name that is not UTF-8, say), which MCP's
    own types refuse to write (the server process died of it): the client gets U+FFFD in
    its place, the audit log the text itself."""
    from mcp.client.stdio import StdioServerParameters

    agent = ECHO_AGENT.replace('"you said: "', '"file report-\\udcff.txt; you said: "')
    (tmp_path / "echo_agent.py").write_text(agent)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "agents", "mcp-serve", "echo_agent:loop", "--name", "echoer"),
            *("--audit-log", str(tmp_path / "served.jsonl")),
        ],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    text, _ = official_client_call(parameters, "hi")
    assert text == "file report-\ufffd.txt; you said: hi"
    recorded = AuditLog.read(tmp_path / "served.jsonl").final_response
    assert recorded == "file report-\udcff.txt; you said: hi"


def test_mcp_serve_answers_the_official_client_over_streamable_http(tmp_path):
    """``agents mcp-serve ... --transport http --port 0``: it prints the URL it serves at
    (the port the system chose), where the official client finds it."""
    (tmp_path / "echo_agent.py").write_text(ECHO_AGENT)
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "agents", "mcp-serve", "echo_agent:loop"),
            *("--name", "echoer", "--transport", "http", "--port", "0"),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving echo_agent:loop as MCP tool 'echoer' on http://127.0.0.1:")
        url = line.split(" on ", 1)[1].strip()
        assert url.endswith("/mcp")
        text, tools = official_client_call(url, "over http")
        assert tools == ["echoer"] and text == "you said: over http"
        # ... and this library's own client calls it as a tool of another agent:
        served = MCPServerHTTP(url)
        final = loop_of(call("echoer", message="nested"), reply("ok"), tools=[served]).run(
            initial()
        )
        assert final.tool_executions[0].value == "you said: nested"
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


def test_mcp_serve_over_http_with_a_token_answers_only_those_who_send_it(tmp_path):
    """``agents mcp-serve ... --transport http --token T`` (or ``$AGENTS_MCP_TOKEN``): a
    request without ``Authorization: Bearer T`` gets a one-line JSON 401 (there was no
    token option: any process that could reach the port ran the agent); this library's
    client sending the header calls the agent as before."""
    import urllib.error
    import urllib.request

    (tmp_path / "echo_agent.py").write_text(ECHO_AGENT)
    port = free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "agents", "mcp-serve", "echo_agent:loop"),
            *("--name", "echoer", "--transport", "http", "--port", str(port)),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "AGENTS_MCP_TOKEN": "t0ken-for-the-test"},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_listening(port)
        hello = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        ).encode()
        for header in ({}, {"Authorization": "Bearer wrong"}):
            request = urllib.request.Request(
                url,
                data=hello,
                headers={"Content-Type": "application/json", **header},
                method="POST",
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
            assert json.loads(refused.value.read()) == {"error": "a bearer token is required"}
        without = MCPServerHTTP(url)
        final = loop_of(call("echoer", message="x"), reply("ok"), tools=[without]).run(initial())
        (refused_call,) = final.tool_executions  # its tools could not even be listed
        assert refused_call.error is not None and refused_call.error.type == "UnknownTool"
        assert refused_call.error.message == (  # it said "available tools: none", no more
            "unknown tool 'echoer'; available tools: none; the MCP server "
            f"{url} did not start: MCPError: Server returned an error response "
            "(HTTP 401 Unauthorized)"
        )
        assert "you said" not in final.to_json()
        served = MCPServerHTTP(url, headers={"Authorization": "Bearer t0ken-for-the-test"})
        final = loop_of(call("echoer", message="nested"), reply("ok"), tools=[served]).run(
            initial()
        )
        assert final.tool_executions[0].value == "you said: nested"
        assert "t0ken-for-the-test" not in final.to_json() + repr(served)
    finally:
        process.terminate()
        process.wait(10)
    refused_stdio = agents_cli("mcp-serve", "echo_agent:loop", "--token", "t", cwd=tmp_path)
    assert refused_stdio.returncode == 2
    assert "stdio has no requests to refuse" in refused_stdio.stderr


def test_the_catalogue_is_json_and_secrets_stay_out(tmp_path):
    """What a run records of its servers is plain JSON; a server's environment (which may
    hold credentials) is in no repr, record or error."""
    server = time_server(env={"TIME_API_TOKEN": "tok-mcp-secret-42"})
    final = loop_of(call("get_current_time", timezone="UTC"), reply("ok"), tools=[server]).run(
        initial()
    )
    json.loads(final.to_json())
    assert "tok-mcp-secret-42" not in repr(server) + final.to_json()


def _support_server(tmp_path: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "agents", "mcp-serve", "examples.support_agent:loop", "--name", "support"),
            *("--audit-log", str(tmp_path / "served.jsonl")),
        ],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(TESTS.parent), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )


def test_a_run_waiting_for_approval_says_so_and_a_later_call_continues_it(tmp_path):
    """Behind ``agents mcp-serve``, a run that waits for approval never answers an empty
    success: to a client without elicitation it says which call waits, and the session to
    continue with; the call with ``approvals`` continues the same run (which waits again
    for the next refund, then finishes). A session that waits no more is an error."""
    from mcp import Client

    async def main() -> list[Any]:
        async with Client(_support_server(tmp_path), read_timeout_seconds=30) as client:
            first = await client.call_tool("support", {"message": "Refund A-1"})
            text = first.content[0].text
            session = text.split("session '", 1)[1].split("'", 1)[0]
            rejected = await client.call_tool(
                "support", {"session": session, "approvals": {"call_2": False}}
            )
            approved = await client.call_tool(
                "support", {"session": session, "approvals": {"call_3": True}}
            )
            again = await client.call_tool(
                "support", {"session": session, "approvals": {"call_3": True}}
            )
            return [first, rejected, approved, again]

    first, rejected, approved, again = asyncio.run(main())
    assert not first.is_error and "call 'call_2': refund(" in first.content[0].text
    assert '"amount": 400.0' in first.content[0].text and "approvals=" in first.content[0].text
    assert not rejected.is_error and "call 'call_3'" in rejected.content[0].text
    assert not approved.is_error and approved.content[0].text == "Refunded 40.00 on A-1."
    assert again.is_error and "no run waits" in again.content[0].text
    final = AuditLog.read(tmp_path / "served.jsonl")
    assert final.status is ExecutionStatus.COMPLETED
    assert [e.blocked for e in final.tool_executions] == [False, True, False]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_taking_elicitation_is_asked_for_the_approval(tmp_path, mode):
    """A client that takes elicitation requests is asked, through the official SDK, to
    approve each call the run waits for — within the call on the handshake protocol
    (``legacy``), by input-required rounds on 2026-07-28 (``auto``): one call to the
    tool, the run to its end."""
    from mcp import Client
    from mcp_types import ElicitResult

    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(context: Any, params: Any) -> Any:
        asked.append((params.message, dict(params.requested_schema)))
        approved = "400.0" not in params.message  # the oversized refund is refused
        return ElicitResult(action="accept", content={"approved": approved})

    async def main() -> Any:
        async with Client(
            _support_server(tmp_path),
            read_timeout_seconds=30,
            elicitation_callback=decide,
            mode=mode,
        ) as client:
            return await client.call_tool("support", {"message": "Refund A-1"})

    result = asyncio.run(main())
    assert not result.is_error and result.content[0].text == "Refunded 40.00 on A-1."
    assert [message.split("(", 1)[0] for message, _ in asked] == [
        "The agent wants to call refund",
        "The agent wants to call refund",
    ]
    assert asked[0][1]["required"] == ["approved"]


def test_a_tools_question_is_answered_by_a_later_call_or_by_elicitation(tmp_path):
    """A tool that asks a human (``ToolContext.ask``) behind ``agents mcp-serve``: a client
    without elicitation is told the question and its schema, and answers it with
    ``answers`` (a bad answer is an error, and the run still waits); a client with
    elicitation answers the question itself."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import ElicitResult

    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agents", "mcp-serve", "serve_agent:loop", "--name", "booker"],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(TESTS), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )

    async def decide(context: Any, params: Any) -> Any:
        assert params.message == "Which date for the table?"
        return ElicitResult(action="accept", content={"date": "June 1"})

    async def main() -> list[Any]:
        async with Client(parameters, read_timeout_seconds=30) as client:
            asked = await client.call_tool("booker", {"message": "book table"})
            session = asked.content[0].text.split("session '", 1)[1].split("'", 1)[0]
            bad = await client.call_tool(
                "booker", {"session": session, "answers": {"b1": {"date": 4}}}
            )
            good = await client.call_tool(
                "booker", {"session": session, "answers": {"b1": {"date": "May 4"}}}
            )
        async with Client(parameters, read_timeout_seconds=30, elicitation_callback=decide) as c:
            elicited = await c.call_tool("booker", {"message": "book table"})
        return [asked, bad, good, elicited]

    asked, bad, good, elicited = asyncio.run(main())
    assert not asked.is_error
    assert "call 'b1' asks: Which date for the table?" in asked.content[0].text
    assert '"required": ["date"]' in asked.content[0].text
    assert bad.is_error and "does not fit" in bad.content[0].text
    assert good.content[0].text == "tool said: booked table on May 4"
    assert elicited.content[0].text == "tool said: booked table on June 1"


# -- servers that die, never start, cannot be found, or garble -----------------------------------


def _server_processes(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return found.stdout.split()


def test_a_held_server_whose_process_died_is_started_again_at_the_next_call(tmp_path):
    """A server held open with ``with server:`` whose process is killed: the next call
    starts it again (once), recorded as a ``ToolServerRestarted`` event, and every later
    run's calls succeed. A restart that fails waits before the next try (backoff): a call
    meanwhile fails at once, saying when; once the server can start, a call restarts it."""
    from agents import ToolServerRestarted

    broken = tmp_path / "broken"
    server = MCPServerStdio(sys.executable, [HOSTILE, "unless", str(broken)])
    marker = f"{HOSTILE} unless {broken}"
    every: list[Any] = []
    with server:
        for attempt in range(4):
            events = capture_events()
            loop = loop_of(call("echo", text=f"run {attempt}"), reply("done"), tools=[server])
            final = loop.with_listeners(events).run(initial())
            assert final.tool_executions[0].value == {"said": f"run {attempt}"}
            restarted = [e for e in events.events if isinstance(e, ToolServerRestarted)]
            assert len(restarted) == (1 if attempt in (1, 2) else 0), attempt
            every += restarted
            if attempt < 2:
                (pid,) = _server_processes(marker)
                os.kill(int(pid), signal.SIGKILL)
                time.sleep(0.3)
        for restart in every:
            assert (restart.server, restart.step) == ("python", 1)
            assert "ended" in restart.reason
        (pid,) = _server_processes(marker)
        broken.touch()  # now it cannot start
        os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.3)
        loop = loop_of(call("echo", text="a"), call("echo", text="b"), reply("x"), tools=[server])
        failed = loop.run(initial())
        first, second = (e.error.message for e in failed.tool_executions)
        assert "did not start" in first
        assert "the next is tried in" in second  # no start tried meanwhile
        broken.unlink()
        time.sleep(0.6)  # the backoff after one failed start: 0.5 s
        final = loop_of(call("echo", text="c"), reply("done"), tools=[server]).run(initial())
        assert final.tool_executions[0].value == {"said": "c"}, final.tool_executions[0].error
    assert _server_processes(marker) == []


@pytest.mark.parametrize("mode", ["silent", "endless"])
def test_a_start_that_never_finishes_leaves_no_process_or_thread(mode):
    """A server that never answers ``initialize``, or whose tool list pages without end:
    after ``start_timeout`` the run goes on without its tools, and the start is given up —
    its process stopped and its thread ended. Three runs leave none behind."""
    server = MCPServerStdio(sys.executable, [HOSTILE, mode], start_timeout=1.0)
    for _ in range(3):
        final = loop_of(reply("done"), tools=[server]).run(initial())
        assert final.status is ExecutionStatus.COMPLETED
        (source,) = final.metadata["agents.tool_sources"]
        assert "did not start within 1 s" in source["error"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
        _server_processes(f"{HOSTILE} {mode}")
        or any(t.name.startswith("agents-mcp") for t in threading.enumerate())
    ):
        time.sleep(0.1)
    assert _server_processes(f"{HOSTILE} {mode}") == []
    assert [t.name for t in threading.enumerate() if t.name.startswith("agents-mcp")] == []


def test_a_missing_program_says_which_and_the_os_error_without_a_traceback(tmp_path):
    """A server whose program does not exist: the reason names the command and the OS
    error; ``agents run`` of such an agent prints no child's traceback."""
    for command, said in (
        ("/nonexistent/mcp-server", "cannot run '/nonexistent/mcp-server': No such file"),
        ("no-such-mcp-server-here", "cannot run 'no-such-mcp-server-here': No such file"),
    ):
        final = loop_of(reply("done"), tools=[MCPServerStdio(command)]).run(initial())
        (source,) = final.metadata["agents.tool_sources"]
        assert said in source["error"], source["error"]
    (tmp_path / "missing.py").write_text(
        "from agents import AgentLoop\n"
        "from agents.mcp import MCPServerStdio\n"
        "from agents.testing import ScriptedDriver, reply\n"
        "def make():\n"
        "    server = MCPServerStdio('/nonexistent/mcp-server')\n"
        "    return AgentLoop(ScriptedDriver([reply('done')]), tools=[server])\n"
    )
    done = agents_cli("run", "missing:make", "--input", "hi", "--out", "r.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "execvp" not in done.stderr


def test_a_line_that_is_not_utf8_fails_the_call_at_once_and_the_session_goes_on():
    """A server writing a line of bytes that are not UTF-8: the call in flight fails at
    once with a reason naming it (not at its deadline), and the next call is answered."""
    hostile = MCPServerStdio(sys.executable, [HOSTILE], timeout=8.0)
    loop = loop_of(call("echo", text="bytes"), call("echo", text="ok"), reply("x"), tools=[hostile])
    started = time.monotonic()
    final = loop.run(initial())
    assert time.monotonic() - started < 4
    garbled, answered = final.tool_executions
    assert "a line that is not UTF-8" in garbled.error.message
    assert answered.value == {"said": "ok"}


def test_an_mcp_image_and_an_embedded_pdf_become_parts():
    """Image and embedded-resource content of a real MCP server (the official SDK) become
    parts of the tool's message, bytes checked; an image that belies its media type fails
    the call with a ContentError, the run going on."""
    from agents import DocumentPart, ImagePart, TextPart

    server = failing()
    loop = loop_of(call("screenshot"), call("lying_image"), reply("done"), tools=[server])
    final = loop.run(initial())
    shot, lying = final.tool_executions
    assert shot.ok and shot.value is None
    caption, image, pdf = final.messages[2].parts
    assert caption == TextPart(text="the login page")
    assert type(image) is ImagePart and image.data().startswith(b"\x89PNG")
    assert type(pdf) is DocumentPart and pdf.name == "file:///report.pdf"
    assert lying.error is not None and "lack its signature" in lying.error.message
    assert final.final_response == "done"


PICTURE_AGENT = """
from agents import AgentLoop, ImagePart, InferenceResponse, DocumentPart
from agents.testing import FunctionDriver

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(20)
PDF = b"%PDF-1.4 a document"

def answer(request):
    return InferenceResponse(content=[
        "Here is the chart.",
        ImagePart.from_bytes(PNG, "image/png"),
        DocumentPart.from_bytes(PDF, "application/pdf"),
    ])

loop = AgentLoop(FunctionDriver(answer))
"""


def test_mcp_serve_answers_with_the_images_and_documents_of_the_final_response(tmp_path):
    """A final response holding an image and a PDF: the official client gets the text, an
    ``ImageContent`` and an embedded resource with the bytes; the audit log keeps them as
    blobs beside it."""
    import base64

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    (tmp_path / "picture_agent.py").write_text(PICTURE_AGENT)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "agents", "mcp-serve", "picture_agent:loop", "--name", "painter"),
            *("--audit-log", str(tmp_path / "served.jsonl")),
        ],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )

    async def main() -> Any:
        async with Client(parameters, read_timeout_seconds=30) as client:
            return await client.call_tool("painter", {"message": "draw"})

    result = asyncio.run(main())
    assert not result.is_error, result
    text, image, document = result.content
    assert (text.type, text.text) == ("text", "Here is the chart.")
    assert (image.type, image.mime_type) == ("image", "image/png")
    assert base64.b64decode(image.data).startswith(bytes.fromhex("89504e47"))
    assert document.type == "resource"
    assert base64.b64decode(document.resource.blob) == b"%PDF-1.4 a document"
    assert str(document.resource.uri).startswith("urn:sha256:")
    final = AuditLog.read(tmp_path / "served.jsonl")
    assert final.last_step.response.parts[1].data().startswith(bytes.fromhex("89504e47"))
    assert AuditLog.verify(tmp_path / "served.jsonl") == 3


def test_a_server_is_described_as_it_must_be_or_refused_when_made():
    """``MCPServerStdio("x", args="--verbose")`` ran the server with nine arguments, one a
    letter each; ``sampling="no"`` answered the server's sampling requests (a non-empty
    text is true); a command, a prefix or a URL that is no text, and a URL of another
    scheme, were taken and failed at the first run; ``env=5`` and ``headers=5`` raised a
    bare ``TypeError``. Each is an ``InvalidType`` naming it, where the server is made;
    a header's value is never shown."""
    refused = {
        "MCPServerStdio: command is text": lambda: MCPServerStdio(5),
        "MCPServerStdio: args is a list, not the text '--verbose'": lambda: MCPServerStdio(
            "x", args="--verbose"
        ),
        "MCPServerStdio: args is a list of texts, not holding int": lambda: MCPServerStdio(
            "x", ["--port", 8000]
        ),
        "MCPServerStdio: env is a map of texts, not int": lambda: MCPServerStdio("x", env=5),
        "MCPServerStdio: env is a map of texts, not holding str: int": lambda: MCPServerStdio(
            "x", env={"PORT": 8000}
        ),
        "prefix is text": lambda: MCPServerStdio("x", prefix=5),
        "sampling is True or False, not 'no'": lambda: MCPServerStdio("x", sampling="no"),
        "elicitation is True or False": lambda: MCPServerStdio("x", elicitation=None),
        "tool_timeouts is a map, not list": lambda: MCPServerStdio("x", tool_timeouts=[1]),
        "MCPServerHTTP: url is an http:// or https:// URL, not 'int'": lambda: MCPServerHTTP(5),
        "MCPServerHTTP: url is an http:// or https:// URL, not 'ftp://user:[redacted]@host/": (
            lambda: MCPServerHTTP("ftp://user:hunter2@host/mcp")
        ),
        "MCPServerHTTP: headers is a map of texts, not holding str: int": lambda: MCPServerHTTP(
            "http://127.0.0.1:1/mcp", headers={"Authorization": 1234}
        ),
    }
    for said, make in refused.items():
        with pytest.raises(InvalidType) as caught:
            make()
        assert str(caught.value).startswith(said), str(caught.value)
        assert "hunter2" not in str(caught.value) and "1234" not in str(caught.value)
    server = MCPServerStdio(TIME, [Path("--local-timezone"), "UTC"], env={"A": "b"})
    assert server.args == (Path("--local-timezone"), "UTC")
