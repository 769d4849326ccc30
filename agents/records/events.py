"""Event records: what happened during a run, sent to listeners and to the log.

Every event names its ``agent_id``, ``execution_id`` and ``step`` (the step number, ``None``
outside a step). ``ExecutionStarted``, ``StepCompleted`` and ``ExecutionCompleted`` carry the
live state (``StepCompleted`` also the step execution); those fields are for listeners in
the same process and are never serialized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final

import attrs

from agents.records.error_info import ErrorInfo
from agents.records.execution import ExecutionStatus
from agents.records.frozen import to_float
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import ToolCall
from agents.records.signals import StopSignal
from agents.records.step import Compaction, StepExecution, ToolExecution

if TYPE_CHECKING:
    from agents.records.state import AgentState

__all__ = [
    "DETAIL_EVENTS",
    "LIVE_FIELDS",
    "REPORTED_EVENTS",
    "ContextCompacted",
    "Event",
    "ExecutionCompleted",
    "ExecutionFailed",
    "ExecutionStarted",
    "ExecutionStopped",
    "InferenceCompleted",
    "InferenceDelta",
    "InferenceRetry",
    "ReasoningDelta",
    "StepCompleted",
    "StepStarted",
    "StopSignalReceived",
    "ToolCallBlocked",
    "ToolCallCompleted",
    "ToolCallStarted",
]

LIVE_FIELDS = frozenset({"state", "step_execution", "request"})
"""Fields holding live records for in-process listeners; never serialized."""


@attrs.frozen(kw_only=True)
class Event:
    """Base of all events: which agent, execution and step it belongs to."""

    agent_id: str | None
    execution_id: str | None
    step: int | None = None

    level: ClassVar[str] = "debug"
    """The log level: step-level events at debug, run-level ones at info, failures at
    warning."""


@attrs.frozen(kw_only=True)
class ExecutionStarted(Event):
    """An execution began (or resumed); carries the live state."""

    state: AgentState = attrs.field(repr=False, eq=False)
    resumed: bool = False
    level: ClassVar[str] = "info"


@attrs.frozen(kw_only=True)
class StepStarted(Event):
    """A step began (BeforeStep passed its checkpoint)."""


@attrs.frozen(kw_only=True)
class ContextCompacted(Event):
    """Messages moved to the buffer, and the buffer summarised if the compaction says so,
    before the step's request."""

    compaction: Compaction


@attrs.frozen(kw_only=True)
class InferenceCompleted(Event):
    """The model answered."""

    response: InferenceResponse


@attrs.frozen(kw_only=True)
class InferenceDelta(Event):
    """A piece of a streamed answer: text, or part of a tool call (name, id, arguments).

    ``attempt`` is the attempt it belongs to: pieces of a failed attempt are not part of
    the final answer."""

    content: str = ""
    attempt: int = 1
    tool_call_index: int | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    arguments: str = ""


@attrs.frozen(kw_only=True)
class ReasoningDelta(Event):
    """A piece of the model's streamed reasoning (its thinking, or a summary of it), for
    the ``attempt`` it belongs to; the whole reasoning is in the answer's parts."""

    content: str = ""
    attempt: int = 1


@attrs.frozen(kw_only=True)
class InferenceRetry(Event):
    """An inference attempt failed and will be retried after ``delay`` seconds."""

    attempt: int
    error: ErrorInfo
    delay: float = attrs.field(converter=to_float)
    level: ClassVar[str] = "info"


@attrs.frozen(kw_only=True)
class ToolCallStarted(Event):
    """A tool call is about to run."""

    tool_call: ToolCall


@attrs.frozen(kw_only=True)
class ToolCallCompleted(Event):
    """A tool call finished (successfully or not)."""

    tool_execution: ToolExecution


@attrs.frozen(kw_only=True)
class ToolCallBlocked(Event):
    """A tool call was blocked and did not run."""

    tool_execution: ToolExecution


@attrs.frozen(kw_only=True)
class ToolServerRestarted(Event):
    """A tool server whose process had ended (an MCP server over stdio) was started again
    for call ``call_id``; ``reason`` says why it had to be."""

    server: str
    call_id: str
    reason: str
    level: ClassVar[str] = "warning"


@attrs.frozen(kw_only=True)
class StepCompleted(Event):
    """A step was archived; carries the live step execution and the live state after it
    (what joined the conversation after the step's own messages included: output feedback,
    follow-ups, a goal's prompt)."""

    step_execution: StepExecution = attrs.field(repr=False, eq=False)
    state: AgentState = attrs.field(repr=False, eq=False)
    # The request the step sent (None when the model had answered before a resumption):
    # what the model was offered besides the messages (tools, model, options), which the
    # step record does not hold; the audit log keeps it.
    request: InferenceRequest | None = attrs.field(default=None, repr=False, eq=False)


@attrs.frozen(kw_only=True)
class StopSignalReceived(Event):
    """A stop signal was added to the execution."""

    signal: StopSignal
    level: ClassVar[str] = "info"


@attrs.frozen(kw_only=True)
class ExecutionStopped(Event):
    """The execution ends STOPPED; ``signal`` is the highest signal."""

    signal: StopSignal | None
    level: ClassVar[str] = "info"


@attrs.frozen(kw_only=True)
class ExecutionFailed(Event):
    """The execution ends FAILED with ``error``."""

    error: ErrorInfo | None
    level: ClassVar[str] = "warning"


@attrs.frozen(kw_only=True)
class ExecutionCompleted(Event):
    """The last event of every run; carries the terminal status and the live final state."""

    status: ExecutionStatus
    state: AgentState = attrs.field(repr=False, eq=False)
    # For a run SUSPENDED in a step whose model answered: the request that step sent (its
    # StepCompleted, after the resumption, has none), which the audit log keeps.
    request: InferenceRequest | None = attrs.field(default=None, repr=False, eq=False)
    level: ClassVar[str] = "info"


DETAIL_EVENTS: Final = frozenset(
    {StepStarted, InferenceCompleted, ToolCallStarted, ToolCallCompleted, ToolCallBlocked}
)
"""A step's start and the events of its inside: built only when a listener may act on them
(a step's end, ``StepCompleted``, says all of it). A listener may say which events it acts
on (an ``event_types`` attribute, a set of event classes); when every listener says so and
none names these, the loop does not build them (listeners still receive every event that is
built: ``event_types`` is a promise, not a filter)."""

REPORTED_EVENTS: Final = frozenset({InferenceDelta, ReasoningDelta, InferenceRetry})
"""What a driver or an interceptor reports from inside an inference (streamed pieces,
retried attempts: ``agents.shell.reporting``): reported only when a listener may act on
them, as ``DETAIL_EVENTS`` are built."""
