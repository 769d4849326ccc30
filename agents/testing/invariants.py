"""Invariants every history must satisfy, whatever the model, tools or hooks did
(docs/design/testing.md)."""

from __future__ import annotations

from agents.errors import InvariantViolation, StateDecodeError
from agents.records.codec import REDACTED, from_json, to_json
from agents.records.execution import ExecutionStatus
from agents.records.messages import Role
from agents.records.signals import StopReason
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.records.usage import ZERO_USAGE

__all__ = ["assert_invariants", "check_invariants"]


def check_invariants(state: AgentState) -> list[str]:
    """The invariants ``state`` violates, each as one sentence; empty when all hold."""
    problems: list[str] = []
    execution = state.execution
    if execution is None:
        return _round_trip(state)
    step_executions = list(execution.step_executions)

    for index, step_execution in enumerate(step_executions, start=1):
        if step_execution.number != index:
            problems.append(
                f"step numbers are not contiguous: position {index} holds step "
                f"{step_execution.number}"
            )
            break

    for step_execution in step_executions:
        step = step_execution.step
        requested = [c.id for c in step.requested_tool_calls]
        executed = [e.tool_call.id for e in step.tool_executions]
        failed_before_tools = step.errors and not step.tool_executions
        if requested != executed and not (failed_before_tools or _partial(step_execution)):
            problems.append(
                f"step {step_execution.number}: requested calls {requested} but executions "
                f"answer {executed} (each call needs exactly one execution, in order)"
            )

    total = ZERO_USAGE
    for step_execution in step_executions:
        total = total + step_execution.step.usage
    if total != state.usage:
        problems.append(f"usage {state.usage} is not the sum of the steps {total}")

    problems.extend(_timestamps(state))
    problems.extend(_status(state))
    problems.extend(_tool_messages(state))
    problems.extend(_questions(state))
    problems.extend(_round_trip(state))
    return problems


def _partial(step_execution: StepExecution) -> bool:
    """An ERROR step may hold only the executions finished before the failure."""
    step = step_execution.step
    if not step.errors:
        return False
    requested = [c.id for c in step.requested_tool_calls]
    executed = [e.tool_call.id for e in step.tool_executions]
    return len(executed) <= len(requested) and len(set(executed)) == len(executed)


def _timestamps(state: AgentState) -> list[str]:
    execution = state.execution
    assert execution is not None
    problems: list[str] = []
    previous = execution.started_at
    for step_execution in execution.step_executions:
        if step_execution.completed_at < step_execution.started_at:
            problems.append(f"step {step_execution.number} completes before it starts")
        if previous is not None and step_execution.started_at < previous:
            problems.append(
                f"step {step_execution.number} starts before the previous step (or the "
                "execution) did"
            )
        problems.extend(
            f"tool execution {e.id} completes before it starts"
            for e in step_execution.step.tool_executions
            if e.completed_at < e.started_at
        )
        previous = step_execution.completed_at
    if (
        execution.completed_at is not None
        and previous is not None
        and execution.completed_at < previous
    ):
        problems.append("the execution completes before its last step")
    return problems


def _status(state: AgentState) -> list[str]:
    execution = state.execution
    assert execution is not None
    status = execution.status
    highest = execution.continuation.highest_signal
    if not status.terminal:
        return []
    if highest is None:
        return [f"status {status.value} without a stop signal"]
    failed = execution.error is not None or highest.reason is StopReason.ERROR
    if failed and status is not ExecutionStatus.FAILED:
        return [f"an error was recorded but the status is {status.value}"]
    if not failed and highest.reason.forced and status is not ExecutionStatus.STOPPED:
        return [f"forced signal {highest.reason.value} but status {status.value}"]
    if not failed and not highest.reason.forced and status is not ExecutionStatus.COMPLETED:
        return [f"natural signal {highest.reason.value} but status {status.value}"]
    return []


def _tool_messages(state: AgentState) -> list[str]:
    problems: list[str] = []
    previous_calls: set[str] = set()
    for index, message in enumerate(state.messages):
        if message.role is Role.TOOL:
            if message.tool_call_id not in previous_calls:
                problems.append(
                    f"message {index} answers call {message.tool_call_id!r}, which the "
                    "previous assistant message did not make"
                )
        elif message.role is Role.ASSISTANT:
            previous_calls = {call.id for call in message.tool_calls}
        else:
            previous_calls = set()
    return problems


def _questions(state: AgentState) -> list[str]:
    """Questions for a human wait in a suspended step, each asked by one of its calls that
    has no result; an answer kept on an execution answers that execution's call."""
    execution = state.execution
    assert execution is not None
    problems: list[str] = []
    pending = state.pending_inputs
    step = execution.current_step
    if pending and (step is None or execution.status is not ExecutionStatus.SUSPENDED):
        problems.append(f"questions wait ({[q.call_id for q in pending]}) outside a suspended step")
    elif pending and step is not None:
        calls = {c.id for c in step.requested_tool_calls}
        done = {e.tool_call.id for e in step.tool_executions}
        problems.extend(
            f"a question waits for call {q.call_id!r}, which the step did not make or "
            "which has a result"
            for q in pending
            if q.call_id not in calls or q.call_id in done
        )
    for step_execution in execution.step_executions:
        for done_call in step_execution.step.tool_executions:
            problems.extend(
                f"step {step_execution.number}: execution {done_call.id} keeps an answer to "
                f"call {answer.call_id!r}"
                for answer in done_call.inputs or ()
                if answer.call_id != done_call.tool_call.id
            )
    return problems


def _round_trip(state: AgentState) -> list[str]:
    try:
        text = to_json(state)
        back = from_json(text, AgentState)
    except (StateDecodeError, TypeError, ValueError) as exc:
        return [f"the codec round trip fails: {exc}"]
    if to_json(back) != text:
        return ["the codec round trip does not give the same JSON"]
    if back != state and REDACTED not in text:  # redacted secrets cannot come back
        return ["the codec round trip does not give the same state"]
    return []


def assert_invariants(state: AgentState) -> None:
    """Raise ``InvariantViolation`` listing every violated invariant."""
    problems = check_invariants(state)
    if problems:
        raise InvariantViolation(problems)
