"""What one step did: the tool executions, the step itself, and the step as archived."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, Protocol

import attrs
from pyrsistent.typing import PMap, PVector

from agents.records.codec import MESSAGES_REF, OPTIONAL, RECORD
from agents.records.compiled import replace_fields
from agents.records.content import Content, to_content
from agents.records.error_info import ErrorInfo
from agents.records.frozen import (
    EMPTY_VECTOR,
    History,
    deep_freeze,
    same_value,
    to_history,
    to_optional_pvector,
    to_pvector,
)
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.inputs import InputAnswer
from agents.records.messages import Message, ToolCall
from agents.records.record import Record
from agents.records.signals import EMPTY_CONTINUATION, ExecutionContinuation, StopSignal
from agents.records.usage import ZERO_USAGE, Usage

__all__ = ["AgentStep", "Compaction", "StepExecution", "StepType", "SubagentRun", "ToolExecution"]


class SubagentRun(Protocol):
    """What a step reads of a sub-agent's run kept on a ``ToolExecution``: it is the
    sub-agent's final ``AgentState`` (this module cannot name it: a state is made of
    steps), so narrow it with ``isinstance(execution.child, AgentState)``."""

    @property
    def usage(self) -> Usage:
        """What the sub-agent's run used."""
        ...


class StepType(enum.Enum):
    """What kind of step it was, derived from its contents."""

    TOOL_EXECUTION = "tool_execution"
    FINAL_RESPONSE = "final_response"
    ERROR = "error"


@attrs.frozen(kw_only=True)
class ToolExecution(Record):
    """The outcome of one tool call: a value, or an error, a block, or a stop request."""

    id: str
    tool_call: ToolCall
    value: Any = attrs.field(default=None, converter=deep_freeze)
    error: ErrorInfo | None = None
    blocked: bool = False
    terminate: bool = False
    stop_signal: StopSignal | None = None
    started_at: datetime
    completed_at: datetime
    # A sub-agent's whole run (its final AgentState), kept for audit; its usage counts in
    # the step that called it. Written by the codec only when set.
    child: SubagentRun | None = attrs.field(
        default=None, metadata={OPTIONAL: True, RECORD: "AgentState"}
    )
    # What the call asked a human while it ran, with the answers, in the order asked (the
    # call was made again with them: docs/design/sessions.md). Written by the codec only when set.
    inputs: PVector[InputAnswer] | None = attrs.field(
        default=None, converter=to_optional_pvector, metadata={OPTIONAL: True}
    )
    # What the tool gave back as parts (an image, a document...: docs/design/content.md),
    # which its message carries; "" when its ``value`` is the message. Written when set.
    content: Content = attrs.field(default="", converter=to_content, metadata={OPTIONAL: True})

    @property
    def name(self) -> str:
        """The name of the called tool."""
        return self.tool_call.name

    @property
    def arguments(self) -> PMap[str, Any]:
        """The arguments of the call."""
        return self.tool_call.arguments

    @property
    def ok(self) -> bool:
        """No error and not blocked."""
        return self.error is None and not self.blocked

    @property
    def has_error(self) -> bool:
        """An error was recorded (a block records one too)."""
        return self.error is not None

    @property
    def failed(self) -> bool:
        """An error that is not a block."""
        return self.error is not None and not self.blocked

    @property
    def was_blocked(self) -> bool:
        """A hook or a denied approval kept the call from running."""
        return self.blocked

    @property
    def duration(self) -> float:
        """Seconds from start to completion."""
        return (self.completed_at - self.started_at).total_seconds()

    def with_value(self, value: Any) -> ToolExecution:
        """A copy with another value (the error, if any, stays)."""
        frozen = deep_freeze(value)
        return self if same_value(frozen, self.value) else replace_fields(self, value=frozen)

    def with_error(self, error: ErrorInfo | None) -> ToolExecution:
        """A copy with another error."""
        return self if error is self.error else replace_fields(self, error=error)

    def with_completed_at(self, completed_at: datetime) -> ToolExecution:
        """A copy with another completion time."""
        if same_value(completed_at, self.completed_at):
            return self
        return replace_fields(self, completed_at=completed_at)


@attrs.frozen(kw_only=True)
class Compaction(Record):
    """What context compaction did before a step's request: ``moved`` messages
    went from the front of the conversation to the end of the buffer; when the buffer was
    summarised, ``summarized`` is the buffer that was (moved messages included),
    ``previous_summary`` the summary it replaced, and ``request`` with ``response`` (or
    ``error``) the summariser's model call. Enough to replay the call and to rewind the
    message sections (``AgentState.at_step``)."""

    moved: int = 0
    summarized: History[Message] = attrs.field(default=(), converter=to_history)
    previous_summary: History[Message] = attrs.field(default=(), converter=to_history)
    request: InferenceRequest | None = None
    response: InferenceResponse | None = None
    error: ErrorInfo | None = None

    @property
    def summarizing(self) -> bool:
        """The buffer was sent to the model to be summarised."""
        return self.request is not None

    @property
    def usage(self) -> Usage:
        """The usage of the summariser's call (zero without one, or when it failed)."""
        return self.response.usage if self.response is not None else ZERO_USAGE


@attrs.frozen(kw_only=True)
class AgentStep(Record):
    """One step: the messages the model saw, its answer, the tool executions, any errors."""

    id: str
    input_messages: History[Message] = attrs.field(
        converter=to_history, metadata={MESSAGES_REF: True}
    )
    output_messages: PVector[Message] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    response: InferenceResponse | None = None
    tool_executions: PVector[ToolExecution] = attrs.field(
        default=EMPTY_VECTOR, converter=to_pvector
    )
    errors: PVector[ErrorInfo] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    # Context compaction done before the request (moving messages, a summary); written by
    # the codec only when set.
    compaction: Compaction | None = attrs.field(default=None, metadata={OPTIONAL: True})
    # How many conversation messages there were when the request was made, recorded when
    # the request did not send exactly them (a token window, a hook's rewrite) and in runs
    # with context compaction, so that the state can be rewound to the step
    # (``AgentState.at_step``); written only when set.
    conversation_length: int | None = attrs.field(default=None, metadata={OPTIONAL: True})

    @property
    def step_type(self) -> StepType:
        """ERROR if errors or a failed tool, else TOOL_EXECUTION if tools were requested."""
        if self.errors or any(execution.failed for execution in self.tool_executions):
            return StepType.ERROR
        if self.response is not None and self.response.tool_calls:
            return StepType.TOOL_EXECUTION
        return StepType.FINAL_RESPONSE

    @property
    def requested_tool_calls(self) -> PVector[ToolCall]:
        """The tool calls the model asked for."""
        return self.response.tool_calls if self.response is not None else EMPTY_VECTOR

    @property
    def executed_tool_calls(self) -> list[ToolCall]:
        """The calls that ran (not blocked), as they were finally made."""
        return [e.tool_call for e in self.tool_executions if not e.blocked]

    @property
    def usage(self) -> Usage:
        """The usage of the model call (zero if it failed), plus that of the summary made
        before it and of the sub-agents its tool calls ran."""
        usage = self.response.usage if self.response is not None else ZERO_USAGE
        if self.compaction is not None:
            usage = usage + self.compaction.usage
        for execution in self.tool_executions:
            if execution.child is not None:
                usage = usage + execution.child.usage
        return usage

    def with_error(self, error: ErrorInfo) -> AgentStep:
        """A copy with one more error."""
        return replace_fields(self, errors=self.errors.append(error))


@attrs.frozen(kw_only=True)
class StepExecution(Record):
    """A finished step as archived in the execution: number, times, continuation."""

    number: int
    step: AgentStep
    started_at: datetime
    completed_at: datetime
    continuation: ExecutionContinuation = EMPTY_CONTINUATION

    @property
    def duration(self) -> float:
        """Seconds from BeforeStep to AfterStep: inference and tool time."""
        return (self.completed_at - self.started_at).total_seconds()

    @property
    def usage(self) -> Usage:
        """The usage of the step's model call."""
        return self.step.usage

    @property
    def step_type(self) -> StepType:
        """The type of the archived step."""
        return self.step.step_type
