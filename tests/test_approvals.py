"""Approvals (docs/design/sessions.md): calls that need a human wait, survive storage, and run or
are blocked as decided, without asking the model again."""

from __future__ import annotations

import pytest
from helpers import add, initial, make_loop

from agents import (
    AgentState,
    ExecutionStatus,
    InMemorySessionStore,
    SessionRuntime,
    StateDecodeError,
    StepType,
    tool,
)
from agents.errors import InvalidType
from agents.testing import call, calls, capture_events, check_invariants, reply

done: list[str] = []


@tool(requires_approval=True)
def wire(amount: int, to: str) -> str:
    """Wire money (needs a human's approval)."""
    done.append(f"{amount}->{to}")
    return f"wired {amount} to {to}"


SCRIPT = [calls(call("wire", amount=500, to="bob"), call("add", a=1, b=2)), reply("all set")]


def suspended_state():
    done.clear()
    loop = make_loop(*SCRIPT, tools=[wire, add])
    return loop, loop.run(initial())


def test_a_call_needing_approval_suspends_the_run_and_holds_its_batch():
    """The run ends SUSPENDED; nothing of the batch ran; the pending call is listed."""
    _, state = suspended_state()
    assert state.status is ExecutionStatus.SUSPENDED
    assert [c.name for c in state.pending_approvals] == ["wire"]
    assert state.step_count == 0 and done == []
    assert state.execution.current_step.response.tool_calls[1].name == "add"
    assert check_invariants(state) == []
    assert AgentState.from_json(state.to_json()) == state  # survives storage


def test_approval_runs_the_calls_without_asking_the_model_again():
    """After approval the batch runs and the model answers once more, no re-asking."""
    loop, state = suspended_state()
    final = loop.run(state.with_approval("call_1", approved=True))
    assert final.status is ExecutionStatus.COMPLETED
    assert done == ["500->bob"]
    assert [e.value for e in final.tool_executions] == ["wired 500 to bob", 3]
    assert final.final_response == "all set"
    assert final.execution.execution_id == state.execution.execution_id
    assert [s.step_type for s in final.steps] == [StepType.TOOL_EXECUTION, StepType.FINAL_RESPONSE]
    assert len(final.pending_approvals) == 0


def test_denial_records_a_blocked_call_with_the_reason():
    """A denied call is blocked; the model reads the reason; the rest of the batch runs."""
    events = capture_events()
    loop, state = suspended_state()
    final = loop.with_listeners(events).run(
        state.with_approval("call_1", approved=False, reason="limit exceeded")
    )
    wire_execution, add_execution = final.tool_executions
    assert wire_execution.blocked and wire_execution.error.message == "denied: limit exceeded"
    assert add_execution.value == 3
    assert done == []
    assert "ToolCallBlocked" in events.names
    assert final.messages[2].content == "Error: ToolBlocked: denied: limit exceeded"


def test_running_without_a_decision_suspends_again():
    """Resuming with the approval still missing changes nothing."""
    loop, state = suspended_state()
    again = loop.run(state)
    assert again.status is ExecutionStatus.SUSPENDED
    assert [c.id for c in again.pending_approvals] == ["call_1"]
    assert done == []


def test_approving_an_unknown_call_is_an_error():
    """Only pending calls can be decided."""
    _, state = suspended_state()
    with pytest.raises(ValueError, match="no pending approval"):
        state.with_approval("call_9", approved=True)


@pytest.mark.parametrize("decision", ["false", "no", 0, 1, None])
def test_a_decision_that_is_not_true_or_false_is_refused_and_nothing_runs(decision):
    """``with_approval(id, "false")`` (a form's value, a JSON body's text) was kept as
    it was, and the loop, testing it as Python does, ran the call: the money was wired.
    A decision is ``True`` or ``False``; anything else is an ``InvalidType``, through a
    session runtime too, and the call still waits."""
    _, state = suspended_state()
    with pytest.raises(InvalidType, match="approved is True or False"):
        state.with_approval("call_1", decision)
    store = InMemorySessionStore()
    runtime = SessionRuntime(store, lambda session: make_loop(*SCRIPT, tools=[wire, add]))
    runtime.create(session_id="s")
    runtime.send("s", "pay bob")
    with pytest.raises(InvalidType):
        runtime.approve("s", "call_1", decision)
    assert done == [] and [c.name for c in runtime.get("s").state.pending_approvals] == ["wire"]
    forged = state.with_approval("call_1", False).to_json()
    with pytest.raises(StateDecodeError, match="approvals"):
        AgentState.from_json(forged.replace('"approved":false', '"approved":"false"'))


def test_sessions_keep_pending_approvals_and_approve_resumes():
    """A suspended session is stored; ``approve`` decides and resumes it."""
    done.clear()
    store = InMemorySessionStore()

    model = make_loop(*SCRIPT, tools=[wire, add])  # one model across requests

    def loop_factory(session):
        return model

    runtime = SessionRuntime(store, loop_factory)
    runtime.create(session_id="s")
    waiting = runtime.send("s", "pay bob")
    assert waiting.state.status is ExecutionStatus.SUSPENDED
    assert [c.name for c in runtime.get("s").state.pending_approvals] == ["wire"]
    final = runtime.approve("s", "call_1", approved=True)
    assert final.state.status is ExecutionStatus.COMPLETED
    assert done == ["500->bob"]


def test_decisions_apply_only_to_the_step_they_were_asked_for():
    """A later call reusing an id is not approved by an old decision."""
    done.clear()
    loop = make_loop(
        call("wire", amount=1, to="a", id="same"),
        call("wire", amount=2, to="b", id="same"),
        reply("x"),
        tools=[wire],
    )
    first = loop.run(initial())
    second = loop.run(first.with_approval("same", approved=True))
    assert done == ["1->a"]
    assert second.status is ExecutionStatus.SUSPENDED
    assert second.pending_approvals[0].arguments["amount"] == 2
