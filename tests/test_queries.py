"""History queries (docs/design/auditing.md): timeline, tool executions by criteria, at_step,
fork."""

from __future__ import annotations

import pytest
from helpers import add, echo, explode, initial, make_loop

from agents import (
    ExecutionStatus,
    HookContext,
    HookTrigger,
    StepType,
    StopReason,
    TimelineRow,
    Usage,
    hook,
)
from agents.testing import SequentialIds, call, calls, reply

USAGE = Usage(input_tokens=10, output_tokens=4, cost=0.5)
SCRIPT = [
    calls(call("add", a=1, b=2), call("explode"), usage=USAGE),
    calls(call("echo", text="a"), call("add", a=2, b=2), usage=USAGE),
    calls(call("echo", text="b"), usage=USAGE),
    reply("done", usage=USAGE),
]


@hook(HookTrigger.BEFORE_TOOL_USE)
def no_b(context: HookContext) -> HookContext:
    if context.tool_call.arguments.get("text") == "b":
        return context.with_tool_blocked("no b")
    return context


def history():
    return make_loop(*SCRIPT, tools=[add, echo, explode], hooks=[no_b]).run(initial())


def test_timeline_has_a_row_per_step_and_the_stop_reason_last():
    """Rows carry step, type, tools, tokens, cost and duration."""
    rows = history().timeline()
    assert [row.step for row in rows] == [1, 2, 3, 4]
    assert [row.step_type for row in rows] == [
        StepType.ERROR,
        StepType.TOOL_EXECUTION,
        StepType.TOOL_EXECUTION,
        StepType.FINAL_RESPONSE,
    ]
    assert list(rows[1].tools) == ["echo", "add"]
    assert (rows[0].input_tokens, rows[0].output_tokens, rows[0].cost) == (10, 4, 0.5)
    assert all(row.duration > 0 for row in rows)
    assert [row.stop_reason for row in rows] == [None, None, None, StopReason.COMPLETED]
    assert TimelineRow.from_json(rows[0].to_json()) == rows[0]
    for start in (1, 3, 4, 5):  # the rows from a step on (a server sends the last one)
        assert history().timeline(start=start) == rows[start - 1 :]


def test_find_tool_executions_by_name_failure_block_and_step():
    """Each criterion filters; failed means an error that is not a block."""
    state = history()
    assert [e.value for e in state.find_tool_executions(name="add")] == [3, 4]
    assert [e.name for e in state.find_tool_executions(failed=True)] == ["explode"]
    assert [e.arguments["text"] for e in state.find_tool_executions(blocked=True)] == ["b"]
    assert [e.name for e in state.find_tool_executions(step=2)] == ["echo", "add"]
    assert state.find_tool_executions(name="echo", blocked=False, step=2)[0].value == "a"
    assert len(state.find_tool_executions()) == 5


def test_at_step_rewinds_and_running_continues_from_there():
    """``at_step(k)`` is IN_PROGRESS after step k; running it gives the same history."""
    original = history()
    second = original.at_step(2)
    assert second.status is ExecutionStatus.IN_PROGRESS
    assert second.step_count == 2
    assert second.steps == original.steps[:2]
    assert list(second.messages) == list(original.steps[2].input_messages.body())
    resumed = make_loop(
        *SCRIPT[2:], tools=[add, echo, explode], hooks=[no_b], ids=SequentialIds("again-")
    ).run(second)
    assert [s.step_type for s in resumed.steps] == [s.step_type for s in original.steps]
    assert [(m.role, m.content) for m in resumed.messages] == [
        (m.role, m.content) for m in original.messages
    ]
    assert resumed.final_response == "done"
    assert original.at_step(4) is original
    assert original.at_step(0).step_count == 0
    with pytest.raises(ValueError, match="4 steps"):
        original.at_step(5)


def test_at_step_shares_structure():
    """The rewound steps share chunks with the original (cheap, no copying)."""
    state = make_loop(*[call("add", a=i, b=1) for i in range(100)], reply("x"), max_steps=200).run(
        initial()
    )
    rewound = state.at_step(70)
    assert rewound.step_executions._chunks[0] is state.step_executions._chunks[0]


def test_fork_starts_a_new_agent_from_a_step():
    """A fork has new ids at its next run and names its parent."""
    original = history()
    forked = original.fork(at_step=1)
    assert forked.agent_id is None and forked.parent_agent_id == original.agent_id
    assert forked.status is ExecutionStatus.PENDING
    continued = make_loop(
        reply("forked answer"), tools=[add, echo, explode], ids=SequentialIds("fork-")
    ).run(forked)
    assert continued.agent_id == "fork-agent-1"
    assert continued.parent_agent_id == original.agent_id
    assert continued.execution.execution_id == "fork-execution-1"
    assert [s.step_type for s in continued.steps] == [StepType.ERROR, StepType.FINAL_RESPONSE]
    assert continued.final_response == "forked answer"
