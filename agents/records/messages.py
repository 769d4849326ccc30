"""Conversation messages and the tool calls a model asks for."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from pyrsistent.typing import PMap, PVector

from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR, same_value, to_pmap, to_pvector
from agents.records.record import Record, slot_setter

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
    """

    id: str
    name: str
    arguments: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)
    raw_arguments: str | None = None

    def with_arguments(self, arguments: Mapping[str, Any]) -> ToolCall:
        """A copy with other arguments (the raw text is dropped: they are now valid)."""
        frozen = to_pmap(arguments)
        if frozen == self.arguments and self.raw_arguments is None:
            return self
        return self._evolve(arguments=frozen, raw_arguments=None)

    def with_name(self, name: str) -> ToolCall:
        """A copy calling another tool."""
        return self if name == self.name else self._evolve(name=name)


@attrs.frozen(kw_only=True)
class Message(Record):
    """One message of the conversation, as the model sees it."""

    role: Role
    content: str = ""
    tool_calls: PVector[ToolCall] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    tool_call_id: str | None = None
    name: str | None = None
    metadata: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message."""
        return cls(role=Role.USER, content=text)

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message."""
        return cls(role=Role.SYSTEM, content=text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolCall] = ()) -> Message:
        """An assistant message, optionally requesting tool calls."""
        return make_message(Role.ASSISTANT, text, to_pvector(tool_calls), None, None)

    @classmethod
    def tool(cls, call_id: str, name: str, content: str) -> Message:
        """The result of tool call ``call_id`` as the model will read it."""
        return make_message(Role.TOOL, content, EMPTY_VECTOR, call_id, name)

    def with_content(self, content: str) -> Message:
        """A copy with other text."""
        return self if content == self.content else self._evolve(content=content)

    def with_metadata(self, key: str, value: Any) -> Message:
        """A copy with one metadata entry set."""
        frozen = to_pmap({key: value})[key]
        if key in self.metadata and same_value(self.metadata[key], frozen):
            return self
        return self._evolve(metadata=self.metadata.set(key, frozen))


_new = object.__new__
_set_role = slot_setter(Message, "role")
_set_content = slot_setter(Message, "content")
_set_tool_calls = slot_setter(Message, "tool_calls")
_set_tool_call_id = slot_setter(Message, "tool_call_id")
_set_name = slot_setter(Message, "name")
_set_metadata = slot_setter(Message, "metadata")


def make_message(
    role: Role,
    content: str,
    tool_calls: PVector[ToolCall],
    tool_call_id: str | None,
    name: str | None,
) -> Message:
    """A message from already-converted parts, skipping ``__init__`` (the loop's hot path)."""
    message: Message = _new(Message)
    _set_role(message, role)
    _set_content(message, content)
    _set_tool_calls(message, tool_calls)
    _set_tool_call_id(message, tool_call_id)
    _set_name(message, name)
    _set_metadata(message, EMPTY_MAP)
    return message
