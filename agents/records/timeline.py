"""``TimelineRow``: one line of a run's timeline, as the CLI and the report show it."""

from __future__ import annotations

from typing import Any

import attrs
from pyrsistent.typing import PVector

from agents.records.frozen import EMPTY_VECTOR, to_float, to_pvector
from agents.records.record import Record
from agents.records.signals import StopReason
from agents.records.step import StepType

__all__ = ["TimelineRow", "timeline_rows"]


@attrs.frozen(kw_only=True)
class TimelineRow(Record):
    """One step: number, type, tools called, tokens, cost, duration; the stop reason is set
    on the last row of a finished execution."""

    step: int
    step_type: StepType
    tools: PVector[str] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = attrs.field(default=0.0, converter=to_float)
    duration: float = attrs.field(default=0.0, converter=to_float)
    stop_reason: StopReason | None = None


def timeline_rows(execution: Any, stop_reason: StopReason | None, start: int) -> list[TimelineRow]:
    """A row per step of ``execution`` (an ``ExecutionState``) from step ``start``; the
    last row of a finished one carries ``stop_reason``."""
    finished = execution.status.terminal
    last = len(execution.step_executions)
    rows = []
    for step_execution in execution.step_executions.items_from(max(0, start - 1)):
        step = step_execution.step
        usage = step.usage
        rows.append(
            TimelineRow(
                step=step_execution.number,
                step_type=step.step_type,
                tools=[e.name for e in step.tool_executions],
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost=usage.cost,
                duration=step_execution.duration,
                stop_reason=stop_reason if finished and step_execution.number == last else None,
            )
        )
    return rows
