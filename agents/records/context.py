"""The conversation an agent carries: message sections, system prompt, metadata."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import attrs
from pyrsistent.typing import PMap, PVector

from agents.errors import ConfigurationError, InvalidType
from agents.records.compiled import replace_fields
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
from agents.records.messages import Message
from agents.records.record import Record

__all__ = ["SECTIONS", "AgentContext", "MessageStore", "checked_message"]

SECTIONS: Final = ("messages", "buffer", "summary")
_EMPTY: Final[History[Message]] = to_history(())


@attrs.frozen(kw_only=True)
class MessageStore(Record):
    """Named message sections: ``messages`` (the conversation), ``buffer`` and ``summary``.

    The model sees them in the order system prompt, summary, buffer, messages; only
    ``messages`` grows during a run (compaction moves old messages to the other two).
    """

    messages: History[Message] = attrs.field(default=_EMPTY, converter=to_history)
    buffer: History[Message] = attrs.field(default=_EMPTY, converter=to_history)
    summary: History[Message] = attrs.field(default=_EMPTY, converter=to_history)

    def section(self, name: str) -> History[Message]:
        """The messages of section ``name``."""
        if name not in SECTIONS:
            raise ConfigurationError(f"unknown message section {name!r}; known: {SECTIONS}")
        section: History[Message] = getattr(self, name)
        return section

    def with_section(self, name: str, messages: Iterable[Message]) -> MessageStore:
        """A copy with section ``name`` replaced (``TypeError`` for an item that is not a
        ``Message``)."""
        current = self.section(name)
        if type(messages) is not History:  # a History is made of records already
            messages = [checked_message(m, "a message section") for m in messages]
        new = to_history(messages)
        if new is current:
            return self
        return replace_fields(self, **{name: new})

    def with_message(self, message: Message, section: str = "messages") -> MessageStore:
        """A copy with ``message`` appended to ``section``."""
        checked_message(message, "with_message")
        if section == "messages":
            return replace_fields(self, messages=self.messages.append(message))
        return replace_fields(self, **{section: self.section(section).append(message)})


_EMPTY_STORE: Final = MessageStore()


@attrs.frozen(kw_only=True)
class AgentContext(Record):
    """Everything the model is shown: message sections, system prompt, response format."""

    store: MessageStore = _EMPTY_STORE
    system_prompt: str = ""
    metadata: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)
    response_format: Any = attrs.field(default=None, converter=deep_freeze)
    steering: PVector[Message] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)
    follow_ups: PVector[Message] = attrs.field(default=EMPTY_VECTOR, converter=to_pvector)

    @property
    def messages(self) -> History[Message]:
        """The conversation section."""
        return self.store.messages

    def head(self) -> tuple[Message, ...]:
        """What precedes the conversation in a request: system prompt, summary, buffer."""
        store = self.store
        if not (store.summary or store.buffer):
            return (Message.system(self.system_prompt),) if self.system_prompt else ()
        prompt = (Message.system(self.system_prompt),) if self.system_prompt else ()
        return (*prompt, *store.summary, *store.buffer)

    def compile(self) -> History[Message]:
        """The messages a request sends, sharing the conversation's structure."""
        return self.store.messages.with_head(self.head())

    def with_messages(self, messages: Iterable[Message]) -> AgentContext:
        """A copy with the conversation replaced."""
        store = self.store.with_section("messages", messages)
        return self if store is self.store else replace_fields(self, store=store)

    def with_message(self, message: Message) -> AgentContext:
        """A copy with ``message`` appended to the conversation."""
        return replace_fields(self, store=self.store.with_message(message))

    def with_appended(self, messages: Iterable[Message]) -> AgentContext:
        """A copy with several messages appended to the conversation."""
        messages = [checked_message(m, "with_appended") for m in messages]
        store = self.store
        return replace_fields(
            self, store=replace_fields(store, messages=store.messages.extend(messages))
        )

    def with_store(self, store: MessageStore) -> AgentContext:
        """A copy with other sections."""
        return self if store is self.store else replace_fields(self, store=store)

    def with_system_prompt(self, prompt: str) -> AgentContext:
        """A copy with another system prompt."""
        if type(prompt) is not str:
            raise InvalidType(f"a system prompt is a str, not {type(prompt).__name__}")
        return self if prompt == self.system_prompt else replace_fields(self, system_prompt=prompt)

    def with_metadata(self, key: str, value: Any) -> AgentContext:
        """A copy with one metadata entry set."""
        if type(key) is not str:
            raise InvalidType(f"a metadata key is a str, not {type(key).__name__}")
        frozen = deep_freeze(value)
        if key in self.metadata and same_value(self.metadata[key], frozen):
            return self
        return replace_fields(self, metadata=self.metadata.set(key, frozen))

    def with_steering(self, message: Message) -> AgentContext:
        """A copy with a message queued for right before the next inference."""
        checked_message(message, "with_steering")
        return replace_fields(self, steering=self.steering.append(message))

    def with_follow_up(self, message: Message) -> AgentContext:
        """A copy with a message queued for when the run would otherwise complete."""
        checked_message(message, "with_follow_up")
        return replace_fields(self, follow_ups=self.follow_ups.append(message))

    def with_steering_delivered(self) -> AgentContext:
        """The queued steering messages moved into the conversation."""
        if not self.steering:
            return self
        store = self.store
        return replace_fields(
            self,
            store=replace_fields(store, messages=store.messages.extend(self.steering)),
            steering=EMPTY_VECTOR,
        )

    def with_follow_ups_delivered(self) -> AgentContext:
        """The queued follow-ups moved into the conversation, together."""
        if not self.follow_ups:
            return self
        store = self.store
        return replace_fields(
            self,
            store=replace_fields(store, messages=store.messages.extend(self.follow_ups)),
            follow_ups=EMPTY_VECTOR,
        )

    def with_response_format(self, response_format: Any) -> AgentContext:
        """A copy asking for structured output."""
        frozen = deep_freeze(response_format)
        if same_value(frozen, self.response_format):
            return self
        return replace_fields(self, response_format=frozen)


def checked_message(message: Any, where: str) -> Message:
    """``message``, or a ``TypeError`` saying what ``where`` takes: a state holding
    anything else in a message's place encodes and cannot be read back."""
    if not isinstance(message, Message):
        raise InvalidType(
            f"{where} takes a Message, not {type(message).__name__} "
            "(text: Message.user(...), or AgentState.with_user_message)"
        )
    return message
