"""Record and replay (docs/design/drivers.md): offline, byte-identical, and divergences named
precisely."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import add, echo, initial, make_loop
from llm_server import LLMServer, answer, fault, tool_calls

from agents import (
    AgentLoop,
    AgentState,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    LiteLLMDriver,
    RecordingInterceptor,
    ReplayDriver,
    StateDecodeError,
    hook,
)
from agents.drivers.replay import request_hash
from agents.records.compiled import replace_fields
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, calls, fail, reply

SCRIPT = [
    calls(call("add", a=1, b=2), call("echo", text="x")),
    call("add", a="bad", b=1),
    reply("done"),
]


def replayed(driver, **options) -> AgentLoop:
    return AgentLoop(
        driver, tools=[add, echo], clock=TickingClock(), ids=SequentialIds(), **options
    )


def test_replay_from_state_is_byte_identical():
    """Replaying a recorded history with the same clock and ids gives the same JSON."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    replay = replayed(ReplayDriver.from_state(recorded)).run(initial())
    assert replay.to_json() == recorded.to_json()


def test_replay_crosses_runners():
    """A run recorded with ``run`` replays byte-identically with ``arun``, and back."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    async_replay = asyncio.run(replayed(ReplayDriver.from_state(recorded)).arun(initial()))
    assert async_replay.to_json() == recorded.to_json()
    async_recorded = asyncio.run(make_loop(*SCRIPT, tools=[add, echo]).arun(initial()))
    sync_replay = replayed(ReplayDriver.from_state(async_recorded)).run(initial())
    assert sync_replay.to_json() == async_recorded.to_json()


def test_replay_reproduces_a_failed_inference():
    """A recorded driver failure is replayed as the same failure."""
    recorded = make_loop(call("add", a=1, b=1), fail(TimeoutError("slow")), tools=[add, echo]).run(
        initial()
    )
    assert recorded.status is ExecutionStatus.FAILED
    replay = replayed(ReplayDriver.from_state(recorded)).run(initial())
    assert replay.to_json() == recorded.to_json()


def test_divergent_request_names_step_and_field():
    """A request that differs from the record ends the run FAILED with step and field."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    replay = replayed(ReplayDriver.from_state(recorded)).run(initial("something else"))
    assert replay.status is ExecutionStatus.FAILED
    error = replay.execution.error
    assert error.type == "ReplayDivergence"
    assert dict(error.details) == {"step": 1, "field": "messages[1].content"}


def test_divergence_in_a_later_step_and_in_tool_results():
    """A tool that now answers differently diverges at the next step's tool message."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())

    @hook(HookTrigger.AFTER_TOOL_USE)
    def tamper(context: HookContext) -> HookContext:
        execution = context.tool_execution
        if execution is not None and execution.name == "echo":
            return context.with_tool_execution(execution.with_value("changed"))
        return context

    replay = replayed(ReplayDriver.from_state(recorded), hooks=[tamper]).run(initial())
    assert dict(replay.execution.error.details) == {"step": 2, "field": "messages[4].content"}
    assert replay.step_count == 2
    assert [e.value for e in replay.steps[0].tool_executions] == [3, "changed"]
    assert replay.steps[1].response is None  # the divergent inference was not answered


def test_count_mismatch_and_exhausted_recording():
    """A different number of messages is ``messages``; running past the record is ``steps``."""
    recorded = make_loop(reply("only"), tools=[add, echo]).run(initial())
    longer = initial().with_user_message("and more")
    diverged = replayed(ReplayDriver.from_state(recorded)).run(longer)
    assert dict(diverged.execution.error.details) == {"step": 1, "field": "messages"}

    driver = ReplayDriver.from_state(recorded)
    replayed(driver).run(initial())
    again = replayed(driver).run(initial())
    assert dict(again.execution.error.details) == {"step": 2, "field": "steps"}


def test_replay_from_a_state_file(tmp_path):
    """A state JSON file replays like the state."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    path = tmp_path / "run.json"
    path.write_text(recorded.to_json(), encoding="utf-8")
    replay = replayed(ReplayDriver.from_file(path)).run(initial())
    assert replay.to_json() == recorded.to_json()


def test_recording_real_http_then_replaying_offline(tmp_path):
    """Record a LiteLLM run against the server; replay the file with the server gone."""
    path = tmp_path / "recording.jsonl"
    with LLMServer() as server, RecordingInterceptor(path) as recorder:
        server.plan(tool_calls(("c1", "add", {"a": 4, "b": 5})), fault(500), answer("9"))
        driver = LiteLLMDriver(
            "openai/test-model", api_base=server.base_url, api_key="sk-x", sleep=lambda s: None
        )
        recorded = replayed(driver, interceptors=[recorder]).run(initial())
    assert recorded.final_response == "9"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["InferenceRecord"] * 2
    assert lines[0]["request_hash"] == request_hash(_request_of(lines[0]))
    replay = replayed(ReplayDriver.from_file(path)).run(initial())
    assert replay.to_json() == recorded.to_json()


def _request_of(line):
    from agents import InferenceRequest

    return InferenceRequest.from_dict(line["request"])


def test_recording_keeps_errors_and_never_the_api_key(tmp_path):
    """A failed inference is recorded as its error; credentials are not in the file."""
    path = tmp_path / "recording.jsonl"
    with LLMServer() as server, RecordingInterceptor(path) as recorder:
        server.plan(fault(401, message="nope"))
        driver = LiteLLMDriver(
            "openai/test-model", api_base=server.base_url, api_key="sk-secret-abcdefgh"
        )
        recorded = replayed(driver, interceptors=[recorder]).run(initial())
    text = path.read_text(encoding="utf-8")
    assert "sk-secret-abcdefgh" not in text
    assert json.loads(text)["error"]["details"]["status_code"] == 401
    replay = replayed(ReplayDriver.from_file(path)).run(initial())
    assert replay.to_json() == recorded.to_json()


def test_a_recording_of_answers_holding_unicode_line_breaks_replays(tmp_path):
    """JSON strings hold U+2028, NEL and the other breaks ``str.splitlines`` splits at,
    raw: a recording was read with it, so an answer holding one could not be replayed
    (its line cut in two; a first line cut read as "expected kind 'AgentState'")."""
    path = tmp_path / "calls.jsonl"
    answer = "one\u2028two\x85three\x1cfour\u2029"
    with RecordingInterceptor(path) as recorder:
        model = ScriptedDriver([reply(answer), reply(answer)])
        recorded = replayed(model, interceptors=[recorder]).run(initial())
    assert path.read_text(encoding="utf-8").count("\n") == 1 and "\u2028" in path.read_text()
    replay = replayed(ReplayDriver.from_file(path)).run(initial())
    assert replay.final_response == answer and replay.to_json() == recorded.to_json()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("", "empty"),
        ('{"kind": "InferenceRecord"}\nnot json\n', "line 1"),
        ('{"kind": "InferenceRecord", "request": {}}\n', "line 1"),
        ("[1, 2]", "expected"),
    ],
)
def test_malformed_files_are_typed_errors(tmp_path, content, fragment):
    """Broken recordings and state files raise StateDecodeError naming file and line."""
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StateDecodeError, match=fragment):
        ReplayDriver.from_file(path)


def test_state_round_trip_keeps_replayability():
    """A replay from a state decoded from JSON equals the original run."""
    recorded = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    decoded = AgentState.from_json(recorded.to_json())
    assert replayed(ReplayDriver.from_state(decoded)).run(initial()).to_json() == (
        recorded.to_json()
    )


# -- agents replay --verify on genuine runs -----------------------------


def _replay_verify(path):
    import contextlib
    import io

    from agents.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["replay", "--verify", str(path)])
    return code, out.getvalue()


def test_a_follow_up_run_replays_from_its_audit_log(tmp_path):
    """The follow-up example of docs/how-to/goals.md, audited, replays (it diverged at
    step 1 on continuation.stop_signals: the replay began without the queued follow-up)."""
    from agents import AuditLog

    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        loop = AgentLoop(
            ScriptedDriver([reply("first answer"), reply("second answer")]),
            clock=TickingClock(),
            ids=SequentialIds(),
            listeners=[log],
        )
        loop.run(AgentState.initial(messages=["question"]).with_follow_up("and another?"))
    code, output = _replay_verify(path)
    assert code == 0, output
    assert "replay matches the record" in output


def test_steering_added_before_an_approval_replays(tmp_path):
    """A run suspended for approval, steered and approved, replays segment by segment (it
    diverged at step 2 on a stop signal's message: the replay never saw the steering)."""
    from agents import AuditLog, tool

    @tool(requires_approval=True)
    def transfer(amount: int) -> str:
        """Move money."""
        return f"moved {amount}"

    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        loop = make_loop(
            call("transfer", amount=5), reply("done"), tools=[transfer], listeners=[log]
        )
        suspended = loop.run(initial())
        assert suspended.status is ExecutionStatus.SUSPENDED
        call_id = suspended.pending_approvals[0].id
        final = loop.run(suspended.with_steering_message("be quick").with_approval(call_id, True))
    assert final.status is ExecutionStatus.COMPLETED
    assert "be quick" in [m.content for m in final.steps[1].input_messages]
    code, output = _replay_verify(path)
    assert code == 0, output


def test_a_changed_record_still_diverges(tmp_path):
    """Replay stays a check: a record whose model answer was edited diverges (the edited
    state is written as a state document)."""
    final = make_loop(*SCRIPT, tools=[add, echo]).run(initial())
    step = final.step_executions[0]
    edited = replace_fields(
        step.step,
        output_messages=step.step.output_messages.set(
            0, replace_fields(step.step.output_messages[0], content="something else")
        ),
    )
    changed = final.with_execution(
        replace_fields(
            final.execution,
            step_executions=final.execution.step_executions.prefix(0)
            .append(replace_fields(step, step=edited))
            .extend(final.execution.step_executions.items_from(1)),
        )
    )
    path = tmp_path / "changed.json"
    path.write_text(changed.to_json(), encoding="utf-8")
    code, output = _replay_verify(path)
    assert code == 1
    assert "replay diverges at step 1" in output


def test_a_state_file_with_approvals_replays(tmp_path):
    """A state document holds the approval decisions: its replay suspends where the run
    did and answers as the record did."""
    from agents import tool

    @tool(requires_approval=True)
    def transfer(amount: int) -> str:
        """Move money."""
        return f"moved {amount}"

    loop = make_loop(call("transfer", amount=5), reply("done"), tools=[transfer])
    suspended = loop.run(initial())
    final = loop.run(suspended.with_approval(suspended.pending_approvals[0].id, False, "no"))
    path = tmp_path / "final.json"
    path.write_text(final.to_json(), encoding="utf-8")
    code, output = _replay_verify(path)
    assert code == 0, output


def test_runs_stopped_from_outside_replay_and_regress_as_recorded(tmp_path):
    """A cancellation after a step and a time limit past the last step are signals a new
    run cannot raise by itself: the record gives them back (and only a record holding one
    has the hooks that do, which cost every step their call)."""
    from agents import AuditLog, CancellationToken, StopReason, tool
    from agents.replaying import replay
    from agents.runfiles import load_record
    from agents.testing.regression import regress

    token = CancellationToken()

    @tool
    def cancel_now() -> str:
        """Cancel the run."""
        token.cancel("user left")
        return "cancelled"

    cancelled = make_loop(call("cancel_now"), call("cancel_now"), reply("x"), tools=[cancel_now])
    timed = make_loop(call("add", a=1, b=2), reply("3"), time_limit=0.0015)
    for name, loop, options, tools in (
        ("cancelled", cancelled, {"cancellation": token}, [cancel_now]),
        ("timed", timed, {}, [add]),
    ):
        path = tmp_path / f"{name}.jsonl"
        with AuditLog.open(path) as log:
            final = loop.with_listeners(log).run(initial(), **options)
        want = StopReason.USER_REQUESTED if name == "cancelled" else StopReason.TIME_LIMIT
        assert final.stop_reason is want and final.step_count == 1
        replayed = replay(load_record(str(path)))
        assert replayed.difference is None and replayed.state.stop_reason is want
        again = make_loop(reply("never asked"), tools=tools)
        assert regress(again, [path], tools="record").ok, name
