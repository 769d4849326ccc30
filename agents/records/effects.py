"""Effects: what the step machine asks its runner to do, as data.

The machine never calls a model or a tool. It yields ``Infer`` and ``InvokeTools`` and
receives their results (or ``Failed``); ``Progress`` hands a continuing state to the runner
(``iterate`` yields it). Sync, async, replay and durable runners all drive the same machine.

Effects are named tuples rather than attrs records: they are made several times per step
and never stored, and a tuple is the cheapest immutable value Python has.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from agents.records.error_info import ErrorInfo
from agents.records.inference import InferenceRequest
from agents.records.messages import ToolCall

if TYPE_CHECKING:
    from agents.records.state import AgentState

__all__ = ["Failed", "Infer", "InvokeTools", "Progress", "ToolInvocation"]


class Infer(NamedTuple):
    """Ask the model: the runner sends back an ``InferenceResponse`` or ``Failed``.

    The ids say which run and step asked, for the events the answer may produce on its way
    (streamed pieces, retried attempts)."""

    request: InferenceRequest
    agent_id: str | None = None
    execution_id: str | None = None
    step: int = 0


class ToolInvocation(NamedTuple):
    """One call to perform, with the id and start time the machine gave it."""

    id: str
    tool_call: ToolCall
    started_at: datetime
    execution_id: str
    step: int
    state: AgentState

    @property
    def idempotency_key(self) -> tuple[str, int, str]:
        """``(execution_id, step, tool_call_id)``: stable across a crash and a resume."""
        return (self.execution_id, self.step, self.tool_call.id)


class InvokeTools(NamedTuple):
    """Run a batch: the runner sends back one ``ToolExecution`` per invocation, in order.

    The runner reads each ``completed_at`` from the loop's clock in call order (right after
    the call for a batch of one, after the whole batch otherwise). A failure that escapes
    the tool layer (an interceptor raising) comes back as ``Failed`` with the executions
    finished before it.
    """

    invocations: tuple[ToolInvocation, ...]
    sequential: bool


class Progress(NamedTuple):
    """A step finished and the run goes on; the runner sends back nothing."""

    state: AgentState


class Failed(NamedTuple):
    """An effect raised: the error as data, and any tool executions already finished."""

    error: ErrorInfo
    finished: tuple[object, ...] = ()
