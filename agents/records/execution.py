"""One execution of the loop: its status, archived steps, signals and first error."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, Final

import attrs
from pyrsistent.typing import PVector

from agents.records.arguments import switch
from agents.records.codec import OPTIONAL
from agents.records.compiled import replace_fields
from agents.records.error_info import ErrorInfo
from agents.records.frozen import (
    EMPTY_VECTOR,
    History,
    deep_freeze,
    to_history,
    to_optional_pvector,
    to_pvector,
)
from agents.records.inputs import InputAnswer, InputRequest
from agents.records.messages import ToolCall
from agents.records.record import Record
from agents.records.signals import EMPTY_CONTINUATION, ExecutionContinuation, StopReason, StopSignal
from agents.records.step import AgentStep, StepExecution

__all__ = ["TERMINAL_STATUSES", "ApprovalDecision", "ExecutionState", "ExecutionStatus"]


class ExecutionStatus(enum.Enum):
    """Where an execution is in its life."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        """COMPLETED, STOPPED or FAILED: a new run starts a new execution."""
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES: Final = frozenset(
    {ExecutionStatus.COMPLETED, ExecutionStatus.STOPPED, ExecutionStatus.FAILED}
)
_NO_STEPS: Final[History[StepExecution]] = to_history(())


def _decided(_: Any, field: Any, value: Any) -> None:
    """A decision is ``True`` or ``False``: the loop runs a call whose decision is true as
    Python tests it, so ``"false"`` (a form's, a JSON body's) would run it."""
    switch(value, "approved")


@attrs.frozen(kw_only=True)
class ApprovalDecision(Record):
    """A human's answer about a tool call that needs approval."""

    call_id: str
    approved: bool = attrs.field(validator=_decided)
    reason: str = ""


@attrs.frozen(kw_only=True)
class ExecutionState(Record):
    """The current (or last) execution of an agent.

    ``execution_id`` and ``started_at`` are ``None`` only for a PENDING execution created
    by ``with_stop_signal`` before any run; ``current_step`` holds a step in progress only
    while the execution is suspended inside it.
    """

    execution_id: str | None
    status: ExecutionStatus
    started_at: datetime | None = None
    completed_at: datetime | None = None
    step_executions: History[StepExecution] = attrs.field(default=_NO_STEPS, converter=to_history)
    current_step: AgentStep | None = None
    continuation: ExecutionContinuation = EMPTY_CONTINUATION
    error: ErrorInfo | None = None
    final_output: Any = attrs.field(default=None, converter=deep_freeze)
    pending_approvals: PVector[ToolCall] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    approvals: PVector[ApprovalDecision] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    # Questions tool calls of ``current_step`` asked and no one answered yet, and the
    # answers given, for those calls to be made again with (None: none; written only then).
    pending_inputs: PVector[InputRequest] | None = attrs.field(
        default=None, converter=to_optional_pvector, metadata={OPTIONAL: True}
    )
    inputs: PVector[InputAnswer] | None = attrs.field(
        default=None, converter=to_optional_pvector, metadata={OPTIONAL: True}
    )

    @classmethod
    def pending(cls, execution_id: str | None = None) -> ExecutionState:
        """An execution that has not started yet."""
        return cls(execution_id=execution_id, status=ExecutionStatus.PENDING)

    @property
    def step_count(self) -> int:
        """How many steps were archived."""
        return len(self.step_executions)

    def with_status(self, status: ExecutionStatus) -> ExecutionState:
        """A copy with another status."""
        return self if status is self.status else replace_fields(self, status=status)

    def with_stop_signal(self, signal: StopSignal) -> ExecutionState:
        """A copy with one more stop signal."""
        return replace_fields(self, continuation=self.continuation.with_signal(signal))

    def with_continuation(self, continuation: ExecutionContinuation) -> ExecutionState:
        """A copy with another continuation."""
        if continuation is self.continuation:
            return self
        return replace_fields(self, continuation=continuation)

    def with_error(self, error: ErrorInfo) -> ExecutionState:
        """A copy recording ``error`` (the first error is kept) and its ERROR signal."""
        signal = StopSignal(reason=StopReason.ERROR, message=error.describe())
        return replace_fields(
            self,
            error=self.error if self.error is not None else error,
            continuation=self.continuation.with_signal(signal),
        )

    def with_step_execution(self, step_execution: StepExecution) -> ExecutionState:
        """A copy with one more archived step."""
        return replace_fields(self, step_executions=self.step_executions.append(step_execution))
