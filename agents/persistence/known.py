"""What a SQL store knows its rows hold: the very records it last created, saved or
loaded for each session, so that a save compares its state with them instead of reading
rows back — every message and step, not only the rows at the ends (judging by those let
a message edited in the middle go unstored)."""

from __future__ import annotations

import itertools
import weakref
from typing import Any, NamedTuple

from agents.records.frozen import History

__all__ = ["Known", "Rows"]


class Rows(NamedTuple):
    """What a session's rows hold at a stored version (and head), as the very records
    written or read: the steps of its step rows, and its message log from the buffer's
    position on (the buffer, then the conversation)."""

    version: int
    head: str
    steps: History[Any]
    buffer: History[Any]
    conversation: History[Any]
    buffer_at: int
    conversation_at: int

    def hold_steps(self, steps: History[Any], stored: int) -> bool:
        """Whether the step rows are the first ``stored`` of ``steps`` (by identity, a
        chunk of 32 at a time, where the state grew from these)."""
        return len(self.steps) == stored and self.steps.is_prefix_of(steps)

    def hold(
        self, first: int, start: int, size: int, buffer: History[Any], conversation: History[Any]
    ) -> bool:
        """Whether the log holds ``buffer`` at ``[first, start)`` and the conversation's
        first messages at ``[start, size)``."""
        if first < self.buffer_at or size != self.conversation_at + len(self.conversation):
            return False
        if (first, start) == (self.buffer_at, self.conversation_at):  # nothing moved
            return (buffer is self.buffer or buffer == self.buffer) and (
                self.conversation.is_prefix_of(conversation)
            )
        logged = itertools.chain(self.buffer, self.conversation)
        wanted = itertools.chain(buffer, conversation)
        return tuple(itertools.islice(logged, first - self.buffer_at, None)) == tuple(
            itertools.islice(wanted, size - first)
        )


class _Held(NamedTuple):
    """``Rows`` with its records held weakly."""

    version: int
    head: str
    steps: weakref.ref[History[Any]]
    buffer: weakref.ref[History[Any]]
    conversation: weakref.ref[History[Any]]
    buffer_at: int
    conversation_at: int


class Known:
    """The rows this store last created, saved or read, session by session (up to
    ``size`` sessions): a save based on that version compares its state with them. A
    version and head another writer made are not known. The records are held weakly: once
    no state holds them (the run is over), the store knows nothing of the session and
    keeps none of its history alive."""

    def __init__(self, size: int = 1_024) -> None:
        self.size = size
        self._held: dict[str, _Held] = {}

    def rows(self, session_id: str, version: int, head: str | None) -> Rows | None:
        """What the session's rows hold, if they are at ``version`` with ``head`` as this
        store last left or saw them, and the records are still held."""
        held = self._held.get(session_id)
        if held is None or held.version != version or held.head != head:
            return None
        steps, buffer, conversation = held.steps(), held.buffer(), held.conversation()
        if steps is None or buffer is None or conversation is None:
            return None
        return Rows(
            version, held.head, steps, buffer, conversation, held.buffer_at, held.conversation_at
        )

    def note(self, session_id: str, rows: Rows) -> None:
        """The session's rows now hold ``rows``."""
        if len(self._held) >= self.size and session_id not in self._held:
            self._held = {key: h for key, h in self._held.items() if h.steps() is not None}
            if len(self._held) >= self.size:
                self._held.clear()
        self._held[session_id] = _Held(
            rows.version,
            rows.head,
            weakref.ref(rows.steps),
            weakref.ref(rows.buffer),
            weakref.ref(rows.conversation),
            rows.buffer_at,
            rows.conversation_at,
        )

    def forget(self, session_id: str) -> None:
        self._held.pop(session_id, None)
