"""``TimelineRow``: one line of a run's timeline, as the CLI and the report show it."""

from __future__ import annotations

import attrs
from pyrsistent.typing import PVector

from agents.records.frozen import EMPTY_VECTOR, to_float, to_pvector
from agents.records.record import Record
from agents.records.signals import StopReason
from agents.records.step import StepType

__all__ = ["TimelineRow"]


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
