"""What the loop asks a model (``InferenceRequest``) and what it answers (``InferenceResponse``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs
from pyrsistent.typing import PMap, PVector

from agents.errors import InvalidArgument
from agents.records.compiled import replace_fields
from agents.records.content import Content, HasContent, to_content
from agents.records.frozen import (
    EMPTY_MAP,
    EMPTY_VECTOR,
    History,
    deep_freeze,
    same_value,
    to_history,
    to_pmap,
    to_pvector,
)
from agents.records.messages import Message, Role, ToolCall, make_message
from agents.records.record import Record
from agents.records.registry import OPTIONAL
from agents.records.usage import ZERO_USAGE, Usage

__all__ = ["FINISH_REASONS", "FinishReason", "InferenceRequest", "InferenceResponse"]

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error"]
FINISH_REASONS: Final[frozenset[str]] = frozenset(
    {"stop", "tool_calls", "length", "content_filter", "error"}
)


def _to_schemas(value: Iterable[Mapping[str, Any]]) -> PVector[PMap[str, Any]]:
    if type(value) is type(EMPTY_VECTOR):
        return value
    return to_pvector([deep_freeze(schema) for schema in value])


def _check_finish_reason(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in FINISH_REASONS:
        raise InvalidArgument(
            f"{attribute.name} must be one of {sorted(FINISH_REASONS)}, got {value!r}"
        )


@attrs.frozen(kw_only=True)
class InferenceRequest(Record):
    """Messages, tool schemas (``{"name", "description", "parameters"}``) and options."""

    messages: History[Message] = attrs.field(converter=to_history)
    tools: PVector[PMap[str, Any]] = attrs.field(default=EMPTY_VECTOR, converter=_to_schemas)
    model: str | None = None
    response_format: Any = attrs.field(default=None, converter=deep_freeze)
    options: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)

    def with_messages(self, messages: Sequence[Message]) -> InferenceRequest:
        """A copy sending other messages."""
        history = to_history(messages)
        return (
            self if same_value(history, self.messages) else replace_fields(self, messages=history)
        )

    def with_options(self, **options: Any) -> InferenceRequest:
        """A copy with options merged in."""
        merged = to_pmap({**self.options, **options})
        return self if same_value(merged, self.options) else replace_fields(self, options=merged)

    def tool_names(self) -> list[str]:
        """The names of the offered tools, in order."""
        return [str(schema["name"]) for schema in self.tools]


@attrs.frozen(kw_only=True)
class InferenceResponse(Record, HasContent):
    """One model answer: its content (text, or parts: reasoning and text in the order the
    model gave them), tool calls, why it ended, and what it cost."""

    content: Content = attrs.field(default="", converter=to_content)
    tool_calls: PVector[ToolCall] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    finish_reason: str = attrs.field(default="stop", validator=_check_finish_reason)
    usage: Usage = ZERO_USAGE
    model: str | None = None
    raw: Any = attrs.field(default=None, converter=deep_freeze)
    moved_media: PVector[str] = attrs.field(
        default=EMPTY_VECTOR, converter=to_pvector, metadata={OPTIONAL: True}
    )
    """The calls whose tool results' images, audio or documents the driver sent in a user
    message after them, as providers take none in a tool's result (docs/design/content.md):
    the state says what the model was shown, and how."""

    def with_tool_calls(self, tool_calls: Iterable[ToolCall]) -> InferenceResponse:
        """A copy requesting other tool calls."""
        calls = to_pvector(tool_calls)
        return (
            self if same_value(calls, self.tool_calls) else replace_fields(self, tool_calls=calls)
        )

    def to_message(self) -> Message:
        """The assistant message this answer adds to the conversation."""
        return make_message(Role.ASSISTANT, self.content, self.tool_calls, None, None, EMPTY_MAP)
