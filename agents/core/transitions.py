"""Pure transitions of the step machine: ``(record, outcome) -> record``.

Time and ids arrive as values; nothing here reads a clock, a random source or does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from agents.errors import InvalidArgument
from agents.records.compiled import replace_fields
from agents.records.context import AgentContext, MessageStore
from agents.records.error_info import ErrorInfo
from agents.records.execution import ExecutionState, ExecutionStatus
from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR
from agents.records.messages import Message, Role, make_message
from agents.records.record import updater
from agents.records.redaction import redact
from agents.records.signals import StopReason
from agents.records.state import AgentState
from agents.records.step import StepExecution, ToolExecution

__all__ = [
    "archive_step",
    "begin_execution",
    "blocked_execution",
    "finish_execution",
    "record_error",
    "render_tool_result",
    "terminal_status",
    "tool_message",
]


def begin_execution(
    state: AgentState, now: datetime, new_execution_id: str | None, agent_id: str | None
) -> tuple[AgentState, bool]:
    """Phase 1: start a new execution or resume the current one; ``True`` when resumed.

    A finished execution is cleared first; an IN_PROGRESS or SUSPENDED one continues as it
    is; a PENDING one starts, keeping its id and signals. ``new_execution_id`` is used only
    when the execution has no id yet; ``agent_id`` only when the agent has none.
    """
    if state.agent_id is None or state.created_at is None:
        state = replace_fields(
            state,
            agent_id=state.agent_id if state.agent_id is not None else agent_id,
            created_at=state.created_at if state.created_at is not None else now,
            updated_at=state.updated_at if state.updated_at is not None else now,
        )
    execution = state.execution
    if execution is not None and execution.status.terminal:
        state = state.for_next_execution()
        execution = None
    if execution is not None and execution.status in (
        ExecutionStatus.IN_PROGRESS,
        ExecutionStatus.SUSPENDED,
    ):
        resumed = replace_fields(execution, status=ExecutionStatus.IN_PROGRESS, completed_at=None)
        return replace_fields(state, execution=resumed), True
    if execution is None:
        execution = ExecutionState(execution_id=new_execution_id, status=ExecutionStatus.PENDING)
    started = replace_fields(
        execution,
        execution_id=execution.execution_id or new_execution_id,
        status=ExecutionStatus.IN_PROGRESS,
        started_at=now,
        completed_at=None,
    )
    return replace_fields(
        state, execution=started, execution_count=state.execution_count + 1
    ), False


def _execution(state: AgentState) -> ExecutionState:
    """The state's execution (the machine starts one before anything else)."""
    execution = state.execution
    if execution is None:
        raise InvalidArgument("the state has no execution")
    return execution


def record_error(state: AgentState, error: ErrorInfo) -> AgentState:
    """The state with ``error`` recorded (first error kept) and its ERROR signal added."""
    return replace_fields(state, execution=_execution(state).with_error(error))


def archive_step(
    state: AgentState, step_execution: StepExecution, messages: Iterable[Message] | None
) -> AgentState:
    """Phase 4: append the step's messages (if given), archive it, clear the continuation."""
    execution = _execution(state)
    continuation = execution.continuation
    if continuation.continuation_requested:
        continuation = replace_fields(continuation, continuation_requested=False)
    execution = _with_step(
        execution, execution.step_executions.append(step_execution), continuation
    )
    if messages is None:
        return replace_fields(state, execution=execution, updated_at=step_execution.completed_at)
    context = state.context
    store = context.store
    return _with_step_and_messages(
        state,
        _with_store(context, _with_messages(store, store.messages.extend(messages))),
        execution,
        step_execution.completed_at,
    )


# Archiving runs once per step and always changes the same fields: positional updaters.
_with_step = updater(ExecutionState, "step_executions", "continuation")
_with_step_and_messages = updater(AgentState, "context", "execution", "updated_at")
_with_store = updater(AgentContext, "store")
_with_messages = updater(MessageStore, "messages")


def terminal_status(state: AgentState) -> ExecutionStatus:
    """Phase 5: FAILED, else SUSPENDED, else STOPPED (forced signal), else COMPLETED."""
    execution = _execution(state)
    highest = execution.continuation.highest_signal
    if execution.error is not None or (highest is not None and highest.reason is StopReason.ERROR):
        return ExecutionStatus.FAILED
    if execution.pending_approvals or execution.pending_inputs:
        return ExecutionStatus.SUSPENDED
    if highest is not None and highest.reason.forced:
        return ExecutionStatus.STOPPED
    return ExecutionStatus.COMPLETED


def finish_execution(state: AgentState, status: ExecutionStatus, now: datetime) -> AgentState:
    """The state with its execution ended in ``status`` at ``now``."""
    execution = replace_fields(_execution(state), status=status, completed_at=now)
    return replace_fields(state, execution=execution, updated_at=now)


def render_tool_result(execution: ToolExecution) -> str:
    """What the model reads for a tool execution.

    Strings as they are, other values as JSON with sorted keys, the values under secret
    keys written ``"[redacted]"`` (docs/design/events.md: the model's provider, the stored
    conversation and the logs never get them; the execution's ``value`` keeps them for the
    program); a failure as ``Error: <type>: <message>``; a stop request as ``Stopped: <message>``.
    """
    if execution.error is not None:
        return f"Error: {execution.error.describe()}"
    if execution.stop_signal is not None:
        return f"Stopped: {execution.stop_signal.message}"
    value: Any = execution.value
    kind = type(value)
    if kind is str:
        return cast(str, value)
    if kind is int:
        return str(value)
    return json.dumps(redact(value), sort_keys=True, ensure_ascii=False)


def tool_message(execution: ToolExecution) -> Message:
    """The tool message answering ``execution``'s call."""
    call = execution.tool_call
    content = execution.content  # the parts the tool gave, unless it failed or stopped
    if not content or execution.error is not None or execution.stop_signal is not None:
        content = render_tool_result(execution)
    return make_message(Role.TOOL, content, EMPTY_VECTOR, call.id, call.name, EMPTY_MAP)


def blocked_execution(execution_id: str, call: Any, reason: str, at: datetime) -> ToolExecution:
    """The record of a call a hook (or a denied approval) kept from running."""
    return ToolExecution(
        id=execution_id,
        tool_call=call,
        error=ErrorInfo(type="ToolBlocked", message=reason),
        blocked=True,
        started_at=at,
        completed_at=at,
    )
