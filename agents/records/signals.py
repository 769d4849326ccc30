"""Stop signals: why a run stops, as data that lasts the execution."""

from __future__ import annotations

import enum
from typing import Any, Final

import attrs
from pyrsistent.typing import PMap, PVector

from agents.records.compiled import replace_fields
from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR, to_pmap, to_pvector
from agents.records.record import Record

__all__ = ["ExecutionContinuation", "StopReason", "StopSignal"]


class StopReason(enum.Enum):
    """Why a run stopped; a lower ``priority`` wins when several signals exist."""

    ERROR = "error"
    STOP_REQUESTED = "stop_requested"
    USER_REQUESTED = "user_requested"
    STEPS_LIMIT = "steps_limit"
    TOKEN_LIMIT = "token_limit"
    COST_LIMIT = "cost_limit"
    TIME_LIMIT = "time_limit"
    RETRY_LIMIT = "retry_limit"
    FINISH_REASON = "finish_reason"
    COMPLETED = "completed"
    UNKNOWN = "unknown"

    @property
    def priority(self) -> int:
        """0 (``ERROR``) is the most important, 10 (``UNKNOWN``) the least."""
        return _PRIORITY[self]

    @property
    def forced(self) -> bool:
        """Whether this reason ends the run as STOPPED (all but natural endings)."""
        return self not in (StopReason.FINISH_REASON, StopReason.COMPLETED)


_PRIORITY: Final = {reason: index for index, reason in enumerate(StopReason)}


@attrs.frozen(kw_only=True)
class StopSignal(Record):
    """A request to stop, with its reason, a message, context data and where it came from."""

    reason: StopReason
    message: str = ""
    context: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)
    source: str | None = None

    def explain(self) -> str:
        """One line: reason, message and source."""
        text = self.reason.value
        if self.message:
            text += f": {self.message}"
        if self.source:
            text += f" (from {self.source})"
        return text


@attrs.frozen(kw_only=True)
class ExecutionContinuation(Record):
    """The stop signals of an execution and whether the current step asked to go on."""

    stop_signals: PVector[StopSignal] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    continuation_requested: bool = False

    @property
    def highest_signal(self) -> StopSignal | None:
        """The signal with the lowest priority number; ties go to the first added."""
        best: StopSignal | None = None
        for signal in self.stop_signals:
            if best is None or signal.reason.priority < best.reason.priority:
                best = signal
        return best

    @property
    def should_stop(self) -> bool:
        """A signal exists and no continuation was requested."""
        return bool(self.stop_signals) and not self.continuation_requested

    def has_reason(self, reason: StopReason) -> bool:
        """Whether a signal with ``reason`` was added."""
        return any(signal.reason is reason for signal in self.stop_signals)

    def with_signal(self, signal: StopSignal) -> ExecutionContinuation:
        """A copy with ``signal`` added."""
        return replace_fields(self, stop_signals=self.stop_signals.append(signal))

    def with_continuation_requested(self, requested: bool = True) -> ExecutionContinuation:
        """A copy asking (or no longer asking) to go on after the current step."""
        if requested == self.continuation_requested:
            return self
        return replace_fields(self, continuation_requested=requested)

    def explain(self) -> str:
        """Why the execution stops or goes on, in one line."""
        highest = self.highest_signal
        if highest is None:
            return "continuing: no stop signal"
        if self.continuation_requested:
            return f"continuing: continuation requested despite {highest.explain()}"
        return f"stopping: {highest.explain()}"


EMPTY_CONTINUATION: Final = ExecutionContinuation()
