"""Conversation messages and the tool calls a model asks for."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs
from pyrsistent.typing import PMap, PVector

from agents.records.compiled import replace_fields
from agents.records.content import Content, HasContent, Part, checked_content, to_content
from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR, same_value, to_pmap, to_pvector
from agents.records.record import Record, maker
from agents.records.registry import OPTIONAL

__all__ = ["Message", "Role", "ToolCall", "make_message"]


class Role(enum.Enum):
    """Who wrote a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@attrs.frozen(kw_only=True)
class ToolCall(Record):
    """One tool call requested by the model; ``arguments`` is the parsed JSON object.

    ``raw_arguments`` keeps the model's original text when it was not a valid JSON object
    (``arguments`` is then empty and the call fails with a message the model can read).
    ``provider_fields`` keeps what the provider sent with the call for its own use (Gemini's
    ``thought_signature``), given back to it unchanged with the conversation.
    """

    id: str
    name: str
    arguments: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)
    raw_arguments: str | None = None
    provider_fields: PMap[str, Any] = attrs.field(
        default=EMPTY_MAP, converter=to_pmap, metadata={OPTIONAL: True}
    )

    def with_arguments(self, arguments: Mapping[str, Any]) -> ToolCall:
        """A copy with other arguments (the raw text is dropped: they are now valid)."""
        frozen = to_pmap(arguments)
        if frozen == self.arguments and self.raw_arguments is None:
            return self
        return replace_fields(self, arguments=frozen, raw_arguments=None)

    def with_name(self, name: str) -> ToolCall:
        """A copy calling another tool."""
        return self if name == self.name else replace_fields(self, name=name)


@attrs.frozen(kw_only=True)
class Message(Record, HasContent):
    """One message of the conversation, as the model sees it."""

    role: Role
    content: Content = attrs.field(default="", converter=to_content)
    tool_calls: PVector[ToolCall] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    tool_call_id: str | None = None
    name: str | None = None
    metadata: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)

    @classmethod
    def user(cls, content: str | Part | Iterable[str | Part]) -> Message:
        """A user message: text, a part (an image...), or a list of text and parts
        (``InvalidType`` for anything else)."""
        return cls(role=Role.USER, content=checked_content(content))

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message."""
        return cls(role=Role.SYSTEM, content=checked_content(text))

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolCall] = ()) -> Message:
        """An assistant message, optionally requesting tool calls."""
        content = checked_content(text)
        return make_message(Role.ASSISTANT, content, to_pvector(tool_calls), None, None, EMPTY_MAP)

    @classmethod
    def tool(cls, call_id: str, name: str, content: str | Iterable[str | Part]) -> Message:
        """The result of tool call ``call_id`` as the model will read it (text, or parts)."""
        content = checked_content(content)
        return make_message(Role.TOOL, content, EMPTY_VECTOR, call_id, name, EMPTY_MAP)

    def with_metadata(self, key: str, value: Any) -> Message:
        """A copy with one metadata entry set."""
        frozen = to_pmap({key: value})[key]
        if key in self.metadata and same_value(self.metadata[key], frozen):
            return self
        return replace_fields(self, metadata=self.metadata.set(key, frozen))


make_message: Final = maker(Message)
"""``make_message(role, content, tool_calls, tool_call_id, name, metadata)``: a message from
already-converted parts, skipping ``__init__`` (the loop's hot path)."""
