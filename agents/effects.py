"""Effects: what the step machine asks its runner to do, as data.

The machine never calls a model or a tool. It yields ``Infer`` and ``InvokeTools`` and
receives their results (or ``Failed``); ``Progress`` hands a continuing state to the runner
(``iterate`` yields it). Sync, async, replay and durable runners all drive the same machine.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import attrs

from agents.errors import ErrorInfo
from agents.inference import InferenceRequest
from agents.messages import ToolCall

if TYPE_CHECKING:
    from agents.state import AgentState

__all__ = ["Failed", "Infer", "InvokeTools", "Progress", "ToolInvocation"]


@attrs.frozen(slots=True)
class Infer:
    """Ask the model: the runner sends back an ``InferenceResponse`` or ``Failed``."""

    request: InferenceRequest


@attrs.frozen(slots=True)
class ToolInvocation:
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


@attrs.frozen(slots=True)
class InvokeTools:
    """Run a batch: the runner sends back one ``ToolExecution`` per invocation, in order.

    A failure that escapes the tool layer (an interceptor raising) comes back as ``Failed``
    with the executions finished before it.
    """

    invocations: tuple[ToolInvocation, ...]
    sequential: bool


@attrs.frozen(slots=True)
class Progress:
    """A step finished and the run goes on; the runner sends back nothing."""

    state: AgentState


@attrs.frozen(slots=True)
class Failed:
    """An effect raised: the error as data, and any tool executions already finished."""

    error: ErrorInfo
    finished: tuple[object, ...] = ()
