"""How the command line names what happened: a call's outcome, a run's status."""

from __future__ import annotations

from typing import Any, Final

from agents.records.execution import ExecutionStatus

__all__ = ["call_labels", "call_outcome", "describe_status", "waiting_for"]

_QUESTION: Final = 80  # characters of a question shown on one line


def call_outcome(execution: Any) -> str:
    """``ok``, ``blocked``, ``failed`` or ``stopped``: how a tool call ended."""
    if execution.blocked:
        return "blocked"
    if execution.error is not None:
        return "failed"
    if execution.stop_signal is not None:
        return "stopped"
    return "ok"


def call_labels(step_execution: Any) -> list[str]:
    """Each call of a step by its tool's name, with how it ended unless it went well."""
    labels = []
    for execution in step_execution.step.tool_executions:
        outcome = call_outcome(execution)
        labels.append(execution.name if outcome == "ok" else f"{execution.name} ({outcome})")
    return labels


def describe_status(state: Any) -> str:
    """The status, and what it means when the run has not ended."""
    status = state.status
    if status is None:
        return "not run"
    if status is ExecutionStatus.IN_PROGRESS:
        return (
            f"{status.value} (incomplete: the record ends after step {state.step_count}, "
            "before the run finished)"
        )
    if status is ExecutionStatus.SUSPENDED:
        return f"{status.value} (waiting for {'; '.join(waiting_for(state)) or 'nothing'})"
    return str(status.value)


def waiting_for(state: Any) -> list[str]:
    """What a suspended run waits for, one line each: the approvals of its calls, and the
    answers to the questions its calls asked (a long question cut short)."""
    waiting = []
    approvals = ", ".join(f"{c.name} ({c.id})" for c in state.pending_approvals)
    if approvals:
        waiting.append(f"approval: {approvals}")
    for request in state.pending_inputs:
        text = " ".join(request.message.split())
        if len(text) > _QUESTION:
            text = text[: _QUESTION - 1] + "…"
        waiting.append(f"an answer to call {request.call_id}: {text!r}")
    return waiting
