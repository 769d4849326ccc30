"""A session's message log in the SQL stores: the ``messages`` rows, appended to and
never rewritten.

The conversation is the log from a position on and the compaction buffer the positions
just before it (``Layout``, kept in the session's head under ``LAYOUT_KEY``). Compaction
moves those positions, not rows; a step row refers to the messages its request sent by
position (a ``LogRef``: ranges of the log, and the messages that are not in it, such as
the system prompt and a summary), so it keeps its meaning whatever happens to the
sections later. Loading decodes each logged message once and shares it between the
sections and every step input holding it.
"""

from __future__ import annotations

import itertools
from typing import Any, Final, NamedTuple

from agents.errors import InvalidArgument, StateDecodeError
from agents.persistence.known import Rows
from agents.persistence.plans import Many, Plan, Query
from agents.records.codec import Prebuilt, decode_field, encode_value, from_dict, loads, value_json
from agents.records.context import MessageStore
from agents.records.frozen import History
from agents.records.state import AgentState

__all__ = ["LAYOUT_KEY", "Layout", "Positions", "log_messages", "state_of"]


# Kept in the stored head beside the state's fields, removed before the state is decoded.
LAYOUT_KEY: Final = "agents_store"


class Layout(NamedTuple):
    """Where a session's sections sit in its message log: ``size`` rows; the conversation
    from position ``conversation`` to the end, the buffer from ``buffer`` to the
    conversation. ``archived`` is the pair as of the last archived step (the suspended
    step's compaction is counted again when that step is archived)."""

    size: int = 0
    conversation: int = 0
    buffer: int = 0
    archived: tuple[int, int] = (0, 0)

    @classmethod
    def stored(cls, data: Any, rows: int) -> Layout | None:
        """The layout a head records; a new one for a store with no rows yet, ``None``
        for rows of the first layout (no ``log`` recorded)."""
        if isinstance(data, dict) and "log" in data:
            found = [data.get("log"), data.get("conversation"), data.get("buffer")]
            archived = data.get("archived")
            if isinstance(archived, list) and len(archived) == 2:
                found += archived
            numbers = [n for n in found if type(n) is int]
            if len(numbers) != 5 or len(found) != 5:
                raise StateDecodeError(f"unreadable message log layout {data!r}", LAYOUT_KEY)
            size, start, first, *rest = numbers
            if not 0 <= first <= start <= size:
                raise StateDecodeError(f"unreadable message log layout {data!r}", LAYOUT_KEY)
            return cls(size, start, first, (rest[0], rest[1]))
        return cls() if rows == 0 else None

    @property
    def settled(self) -> bool:
        """No suspended step's compaction is counted in the sections' positions."""
        return (self.conversation, self.buffer) == self.archived

    def after(self, compaction: Any) -> Layout:
        """Where the sections are after ``compaction`` (moved messages leave the
        conversation for the buffer; a summary empties the buffer)."""
        if compaction is None:
            return self._replace(conversation=self.archived[0], buffer=self.archived[1])
        conversation = self.archived[0] + compaction.moved
        buffer = conversation if compaction.summarizing else self.archived[1]
        return self._replace(
            conversation=conversation, buffer=buffer, archived=(conversation, buffer)
        )

    def placed(self, buffer: int) -> Layout:
        """The buffer and the conversation placed again at the end of the log."""
        return self._replace(buffer=self.size, conversation=self.size + buffer)


def log_messages(
    session_id: str, state: AgentState, layout: Layout, stored_steps: int, rows: Rows | None
) -> Plan[tuple[Layout, Layout]]:
    """Append the state's new messages to the log; where its sections now sit, and the
    layout as of its archived steps. The stored layout moved by the compactions of the
    steps not stored yet (and of a suspended step) says where the buffer and the
    conversation should be; where the log does not hold them there, they are appended
    again (the log starts again when no stored step row refers to it). ``rows``: what
    this store knows the rows hold, if it does."""
    context, execution = state.context, state.execution
    conversation, buffer = context.store.messages, context.store.buffer
    for step_execution in state.step_executions.items_from(stored_steps):
        layout = layout.after(step_execution.step.compaction)
    current = execution.current_step if execution is not None else None
    place = layout.after(current.compaction if current is not None else None)
    if not (yield from _still_placed(session_id, place, conversation, buffer, rows)):
        if stored_steps == 0:  # no step row refers to the log: start it again
            yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
            place = Layout()
        place = place.placed(len(buffer))
        yield Many(
            "INSERT INTO messages VALUES (?, ?, ?)",
            [(session_id, place.size + k, value_json(m)) for k, m in enumerate(buffer)],
        )
        place = place._replace(size=place.conversation)
        moved = current.compaction.moved if current and current.compaction else 0
        layout = place._replace(archived=(place.conversation - moved, place.buffer))
    yield Many(
        "INSERT INTO messages VALUES (?, ?, ?)",
        [
            (session_id, position, value_json(message))
            for position, message in enumerate(
                conversation.items_from(place.size - place.conversation), start=place.size
            )
        ],
    )
    return place, layout


def _still_placed(
    session_id: str,
    place: Layout,
    conversation: History[Any],
    buffer: History[Any],
    rows: Rows | None,
) -> Plan[bool]:
    """Whether the log holds the buffer and the conversation where ``place`` says: the
    positions fit, and the rows from the buffer's position on are those messages — judged
    by what this store knows they hold (``rows``), or else by reading them all. (Judging
    by the rows at the ends of each section let a message edited in the middle go
    unstored.)"""
    size, start, first = place.size, place.conversation, place.buffer
    if not 0 <= first <= start <= size or start - first != len(buffer):
        return False
    if start + len(conversation) < size:  # the log holds more than the conversation
        return False
    if rows is not None:
        return rows.hold(first, start, size, buffer, conversation)
    found = yield Query(
        "SELECT position, data FROM messages WHERE session_id = ? AND position >= ? "
        "ORDER BY position",
        (session_id, first),
        fetch="all",
    )
    wanted = list(itertools.chain(buffer, itertools.islice(conversation, size - start)))
    if len(found) != len(wanted):
        return False
    return all(
        at == position and data == value_json(message)
        for position, ((at, data), message) in enumerate(zip(found, wanted, strict=True), first)
    )


class Positions:
    """The log positions of the messages of the state being written (its buffer and
    conversation), for the references of its step rows."""

    def __init__(self, conversation: History[Any], buffer: History[Any], place: Layout):
        self.conversation, self.buffer, self.place = conversation, buffer, place
        self._index: dict[int, int] | None = None

    def of(self, message: Any) -> int | None:
        """The position of this very message (by identity), if it is in the sections."""
        if self._index is None:
            index = {id(m): at for at, m in enumerate(self.buffer, start=self.place.buffer)}
            start = self.place.conversation
            index.update({id(m): at for at, m in enumerate(self.conversation, start=start)})
            self._index = index
        return self._index.get(id(message))

    def reference(self, step: Any) -> dict[str, Any]:
        """A step's input messages as a ``LogRef``: ranges of log positions (``[start,
        end]``) and, for messages not in the log (the system prompt, a summary), the
        messages themselves. The two usual shapes — the head then the conversation so far,
        and the head then a window of it — are found without looking message by message."""
        parts = _Parts()
        messages = step.input_messages
        head, body = messages.head, messages.body()
        buffer, place = self.buffer, self.place
        size = len(buffer)
        if not size:
            parts.literal(head)
        elif len(head) >= size and head[len(head) - size :] == tuple(buffer):
            parts.literal(head[: len(head) - size])
            parts.span(place.buffer, place.conversation)
        else:
            parts.each(head, self)
        conversation, start = self.conversation, place.conversation
        length, known = len(body), step.conversation_length
        if body.is_prefix_of(conversation):
            parts.span(start, start + length)
        elif (
            known is not None
            and length <= known <= len(conversation)
            and tuple(itertools.islice(conversation.items_from(known - length), length))
            == tuple(body)
        ):
            parts.span(start + known - length, start + known)
        else:
            parts.each(body, self)
        return {"kind": "LogRef", "parts": parts.parts}


class _Parts:
    """A ``LogRef``'s parts as they are added: adjoining ranges merge."""

    def __init__(self) -> None:
        self.parts: list[Any] = []

    def span(self, start: int, end: int) -> None:
        if start == end:
            return
        last = self.parts[-1] if self.parts else None
        if type(last) is list and last[1] == start:
            last[1] = end
        else:
            self.parts.append([start, end])

    def literal(self, messages: Any) -> None:
        self.parts.extend(encode_value(message) for message in messages)

    def each(self, messages: Any, positions: Positions) -> None:
        for message in messages:
            at = positions.of(message)
            if at is None:
                self.parts.append(encode_value(message))
            else:
                self.span(at, at + 1)


def state_of(data: Any, messages: list[str], steps: list[str]) -> tuple[AgentState, Layout | None]:
    """The state a head, its message rows and its step rows describe, and the layout of
    its log (``None`` for rows of the first layout). Every message of the log is decoded
    once and shared by the sections and the step inputs that hold it."""
    layout = Layout.stored(data.pop(LAYOUT_KEY, None), len(messages) + len(steps))
    rows = [loads(text) for text in steps]
    store = data["context"]["store"]
    if layout is None:  # rows of the first layout: the conversation's
        store["messages"] = [loads(text) for text in messages]
    else:
        if len(messages) != layout.size:
            raise InvalidArgument(f"the message log has {len(messages)} rows, its layout {layout}")
        log = decode_field(MessageStore, "messages", [loads(text) for text in messages])
        start, first = layout.conversation, layout.buffer
        store["messages"] = Prebuilt(History(log.items_from(start)))
        store["buffer"] = Prebuilt(History(itertools.islice(log.items_from(first), start - first)))
        for number, row in enumerate(rows, start=1):
            step = row["step"]
            held = step["input_messages"]
            if type(held) is dict and held.get("kind") == "LogRef":
                step["input_messages"] = Prebuilt(_resolved(held, log, number))
    if data.get("execution") is not None:
        data["execution"]["step_executions"] = rows
    return from_dict(data, AgentState), layout


def _resolved(reference: dict[str, Any], log: History[Any], number: int) -> History[Any]:
    """A step's input messages from its ``LogRef``: ranges of the log and messages."""
    parts = reference.get("parts")
    if set(reference) != {"kind", "parts"} or type(parts) is not list:
        raise StateDecodeError(
            "a LogRef has exactly 'kind' and a list of 'parts'", f"step {number}"
        )
    items: list[Any] = []
    for part in parts:
        if type(part) is list:
            if len(part) != 2 or not all(type(at) is int for at in part):
                raise StateDecodeError("a LogRef range is [start, end]", f"step {number}")
            begin, end = part
            if not 0 <= begin < end <= len(log):
                raise StateDecodeError(
                    f"a LogRef range [{begin}, {end}] is outside the log ({len(log)} rows)",
                    f"step {number}",
                )
            items.extend(itertools.islice(log.items_from(begin), end - begin))
        else:
            items.extend(decode_field(MessageStore, "messages", [part]))
    return History(items)
