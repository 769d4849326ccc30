"""The SQL layout shared by the SQLite and PostgreSQL stores.

Layout: a session row holds the version and the state's *head* (everything but the
conversation, the buffer and the archived steps); every message and every completed step
is its own row. The message rows are the session's log, appended to and never rewritten:
the conversation and the buffer are ranges of it (``_Layout``, kept in the head), and a
step row refers to the messages its request sent by position (``LogRef``). A checkpoint
therefore writes one step row, the new messages and the head: O(step), not O(history),
compaction included (it moves positions, not rows). Every write is one transaction that
first checks the version (``SessionConflict`` changes nothing), and every read sees one
snapshot (a deferred SQLite transaction; a REPEATABLE READ, READ ONLY one in PostgreSQL),
so a load racing a write never mixes two versions.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Final, NamedTuple, TypeVar

from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.errors import SessionConflict, SessionNotFound, StateDecodeError
from agents.persistence.anchors import ANCHORS_TABLE, anchor_plan, read_anchor_plan
from agents.persistence.events import (
    EVENTS_TABLE,
    append_event_batches_plan,
    append_events_plan,
    delete_events_plan,
    last_event_plan,
    read_events_plan,
)
from agents.persistence.plans import Handle, Many, Plan, Query, drive
from agents.persistence.session import Session
from agents.records.codec import (
    Prebuilt,
    decode_field,
    encode_value,
    from_dict,
    loads,
    step_row_json,
    to_dict,
    value_json,
)
from agents.records.context import MessageStore
from agents.records.frozen import History
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["SCHEMA_VERSION", "SQLSessionStore"]

T = TypeVar("T")

SCHEMA_VERSION: Final = 2
"""2: the ``messages`` rows are an append-only log (``_write``). A version-1 store is
upgraded when opened: its rows are read as they are, and each session's are written
again in the log layout at its next save."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS agents_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    parent_session_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    head TEXT NOT NULL,
    execution_id TEXT,
    message_count INTEGER NOT NULL,
    step_count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, position INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
);
CREATE TABLE IF NOT EXISTS steps (
    session_id TEXT NOT NULL, number INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session_id, number)
);
"""


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# -- plans ------------------------------------------------------------------------------------


def schema_plan(path: str) -> Plan[None]:
    """Create the tables if missing; refuse a store of another schema version."""
    for statement in [*_SCHEMA.split(";"), ANCHORS_TABLE, EVENTS_TABLE]:
        if statement.strip():
            yield Query(statement)
    row = yield Query("SELECT version FROM agents_schema", fetch="one")
    if row is None:
        yield Query("INSERT INTO agents_schema VALUES (?)", (SCHEMA_VERSION,))
    elif row[0] == 1:  # read as it is; each session moves to the log layout when saved
        yield Query("UPDATE agents_schema SET version = ?", (SCHEMA_VERSION,))
    elif row[0] != SCHEMA_VERSION:
        raise StateDecodeError(
            f"{path}: store schema version {row[0]}, this version of agents reads {SCHEMA_VERSION}",
            "agents_schema.version",
        )


def new_session(
    state: AgentState,
    session_id: str | None,
    parent_session_id: str | None,
    clock: Clock,
    ids: IdFactory,
) -> Session:
    """The version-1 session ``create`` stores."""
    now = clock.now()
    return Session(
        session_id=session_id or ids.new_id("session"),
        version=1,
        state=state,
        parent_session_id=parent_session_id,
        created_at=now,
        updated_at=now,
    )


def create_plan(session: Session) -> Plan[Session]:
    assert session.state is not None
    assert session.created_at is not None
    exists = yield Query(
        "SELECT 1 FROM sessions WHERE session_id = ?", (session.session_id,), fetch="one"
    )
    if exists:
        raise SessionConflict(f"session {session.session_id!r} already exists")
    now = encode_value(session.created_at)
    yield Query(
        "INSERT INTO sessions VALUES (?, 1, ?, ?, ?, '{}', NULL, 0, 0)",
        (session.session_id, session.parent_session_id, now, now),
    )
    yield from _write(session.session_id, session.state, 0, 0, None)
    return session


def save_plan(
    session: Session, now: datetime, for_update: str, written: _Written | None = None
) -> Plan[Session]:
    """Commit ``session.state`` if the stored version is still ``session.version``
    (``written``: what this store wrote last, to spare re-reading it)."""
    state = session.state
    if state is None:
        raise ValueError("save() needs a session with a state")
    row = yield Query(
        "SELECT version, execution_id, message_count, step_count, head FROM sessions "
        "WHERE session_id = ?" + for_update,
        (session.session_id,),
        fetch="one",
    )
    if row is None:
        raise SessionNotFound(f"no session {session.session_id!r}")
    version, execution_id, message_count, step_count, stored_head = row
    if version != session.version:
        raise SessionConflict(
            f"session {session.session_id!r} is at version {version}; the write was "
            f"based on version {session.version}"
        )
    known = written.last(session.session_id, version, step_count) if written else None
    yield from _write(
        session.session_id,
        state,
        message_count,
        step_count,
        execution_id,
        stored_head,
        known,
        (version + 1, encode_value(now)),
    )
    if written is not None:
        written.note(session.session_id, version + 1, state.step_executions)
    return session._evolve(version=session.version + 1, updated_at=now)


def check_checkpoint(session: Session, step_execution: StepExecution) -> None:
    if session.state is None or session.state.step_executions.last() is not step_execution:
        raise ValueError("checkpoint() commits a state whose last step is the one given")


def _write(
    session_id: str,
    state: AgentState,
    stored_messages: int,
    stored_steps: int,
    stored_execution: str | None,
    stored_head: str | None = None,
    known_last: StepExecution | None = None,
    stamp: tuple[int, str] | None = None,
) -> Plan[None]:
    """Write what changed since the stored counts: the new step rows, the messages new to
    the log and the head.

    The ``messages`` rows are the session's message log, appended to and never rewritten:
    the conversation is the log from a position on, and the buffer the positions just
    before it (``_Layout``). Context compaction moves messages from the conversation to
    the buffer and summarises the buffer away: positions move, rows stay, so a step row
    can refer to the messages its request sent by position (``LogRef``) for good. Where
    the stored layout no longer describes the state (a conversation edited by hand, say),
    the buffer and the conversation are appended to the log again. Whether the stored
    steps are this state's is judged apart from their input messages."""
    context = state.context
    conversation, buffer = context.store.messages, context.store.buffer
    execution = state.execution
    steps = state.step_executions
    execution_id = execution.execution_id if execution is not None else None
    stored = loads(stored_head) if stored_head else {}
    layout = _Layout.stored(stored.get(_STORE_KEY), stored_messages + stored_steps)
    another_run = execution_id != stored_execution
    if (
        layout is None
        or (another_run and not layout.settled)
        or not (
            another_run
            or (0 < stored_steps <= len(steps) and known_last is steps[stored_steps - 1])
            or (yield from _steps_prefix(session_id, state, stored_steps))
        )
    ):
        # rows of the first layout (conversation rows, relative references), a rewound
        # run going on differently, or a new run after one left suspended mid-step: the
        # stored positions cannot be moved on by the new steps' compactions, so the log
        # starts again with the steps
        yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
        yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
        layout, stored_steps = _Layout(), 0
    elif another_run:  # the log goes on under the new run's steps
        yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
        stored_steps = 0
    place, layout = yield from _log_messages(session_id, state, layout, stored_steps)
    where = _Positions(conversation, buffer, place)
    yield Many(
        "INSERT INTO steps VALUES (?, ?, ?)",
        [
            (session_id, number, step_row_json(se, where.reference(se.step)))
            for number, se in enumerate(steps.items_from(stored_steps), start=stored_steps + 1)
        ],
    )
    stored_layout = {
        "log": place.conversation + len(conversation),
        "conversation": place.conversation,
        "buffer": place.buffer,
        "archived": list(layout.archived),
    }
    columns = "head = ?, execution_id = ?, message_count = ?, step_count = ?"
    values: list[Any] = [_json({**_head(state), _STORE_KEY: stored_layout}), execution_id]
    values += [len(conversation), len(steps)]
    if stamp is not None:  # a save: the new version and its time
        columns += ", version = ?, updated_at = ?"
        values += stamp
    yield Query(f"UPDATE sessions SET {columns} WHERE session_id = ?", (*values, session_id))


def _log_messages(
    session_id: str, state: AgentState, layout: _Layout, stored_steps: int
) -> Plan[tuple[_Layout, _Layout]]:
    """Append the state's new messages to the log; where its sections now sit, and the
    layout as of its archived steps. The stored layout moved by the compactions of the
    steps not stored yet (and of a suspended step) says where the buffer and the
    conversation should be; where the log does not hold them there, they are appended
    again (the log starts again when no stored step row refers to it)."""
    context, execution = state.context, state.execution
    conversation, buffer = context.store.messages, context.store.buffer
    stored_start = layout.conversation
    for step_execution in state.step_executions.items_from(stored_steps):
        layout = layout.after(step_execution.step.compaction)
    current = execution.current_step if execution is not None else None
    place = layout.after(current.compaction if current is not None else None)
    if not (yield from _still_placed(session_id, place, stored_start, conversation, buffer)):
        if stored_steps == 0:  # no step row refers to the log: start it again
            yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
            place = _Layout()
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


class _Written:
    """The last step each session's last save by this store wrote, with the version it
    made: a save based on that version whose state holds that very step is known to
    extend the stored steps (records are immutable), without reading the step row back."""

    def __init__(self, size: int = 1_024) -> None:
        self.size = size
        self._last: dict[str, tuple[int, int, StepExecution | None]] = {}

    def last(self, session_id: str, version: int, steps: int) -> StepExecution | None:
        """The last step this store wrote, if the stored row is at ``version`` with
        ``steps`` steps as that write left it."""
        found = self._last.get(session_id)
        if found is None or found[:2] != (version, steps):
            return None
        return found[2]

    def note(self, session_id: str, version: int, steps: History[StepExecution]) -> None:
        if len(self._last) >= self.size:
            self._last.clear()
        self._last[session_id] = (version, len(steps), steps.last())


# Kept in the stored head beside the state's fields, removed before the state is decoded.
_STORE_KEY: Final = "agents_store"


class _Layout(NamedTuple):
    """Where a session's sections sit in its message log: ``size`` rows; the conversation
    from position ``conversation`` to the end, the buffer from ``buffer`` to the
    conversation. ``archived`` is the pair as of the last archived step (the suspended
    step's compaction is counted again when that step is archived)."""

    size: int = 0
    conversation: int = 0
    buffer: int = 0
    archived: tuple[int, int] = (0, 0)

    @classmethod
    def stored(cls, data: Any, rows: int) -> _Layout | None:
        """The layout a head records; a new one for a store with no rows yet, ``None``
        for rows of the first layout (no ``log`` recorded)."""
        if isinstance(data, dict) and "log" in data:
            found = [data.get("log"), data.get("conversation"), data.get("buffer")]
            archived = data.get("archived")
            if isinstance(archived, list) and len(archived) == 2:
                found += archived
            numbers = [n for n in found if type(n) is int]
            if len(numbers) != 5 or len(found) != 5:
                raise StateDecodeError(f"unreadable message log layout {data!r}", _STORE_KEY)
            size, start, first, *rest = numbers
            if not 0 <= first <= start <= size:
                raise StateDecodeError(f"unreadable message log layout {data!r}", _STORE_KEY)
            return cls(size, start, first, (rest[0], rest[1]))
        return cls() if rows == 0 else None

    @property
    def settled(self) -> bool:
        """No suspended step's compaction is counted in the sections' positions."""
        return (self.conversation, self.buffer) == self.archived

    def after(self, compaction: Any) -> _Layout:
        """Where the sections are after ``compaction`` (moved messages leave the
        conversation for the buffer; a summary empties the buffer)."""
        if compaction is None:
            return self._replace(conversation=self.archived[0], buffer=self.archived[1])
        conversation = self.archived[0] + compaction.moved
        buffer = conversation if compaction.summarizing else self.archived[1]
        return self._replace(
            conversation=conversation, buffer=buffer, archived=(conversation, buffer)
        )

    def placed(self, buffer: int) -> _Layout:
        """The buffer and the conversation placed again at the end of the log."""
        return self._replace(buffer=self.size, conversation=self.size + buffer)


def _still_placed(
    session_id: str,
    place: _Layout,
    stored_start: int,
    conversation: History[Any],
    buffer: History[Any],
) -> Plan[bool]:
    """Whether the log holds the buffer and the conversation where ``place`` says: the
    positions fit, and the rows at the ends of each section are those messages (the
    conversation's first one only when it moved since ``stored_start``)."""
    size, start, first = place.size, place.conversation, place.buffer
    if not 0 <= first <= start <= size or start - first != len(buffer):
        return False
    if start + len(conversation) < size:  # the log holds more than the conversation
        return False
    wanted: dict[int, Any] = {}
    if buffer:
        wanted[first], wanted[start - 1] = buffer[0], buffer[len(buffer) - 1]
    if size > start:
        if start != stored_start:
            wanted[start] = conversation[0]
        wanted[size - 1] = conversation[size - 1 - start]
    if not wanted:
        return True
    marks = ", ".join("?" * len(wanted))
    rows = yield Query(
        f"SELECT position, data FROM messages WHERE session_id = ? AND position IN ({marks})",
        (session_id, *wanted),
        fetch="all",
    )
    found = dict(rows)
    return all(found.get(at) == value_json(message) for at, message in wanted.items())


class _Positions:
    """The log positions of the messages of the state being written (its buffer and
    conversation), for the references of its step rows."""

    def __init__(self, conversation: History[Any], buffer: History[Any], place: _Layout):
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

    def each(self, messages: Any, positions: _Positions) -> None:
        for message in messages:
            at = positions.of(message)
            if at is None:
                self.parts.append(encode_value(message))
            else:
                self.span(at, at + 1)


def _steps_prefix(session_id: str, state: AgentState, stored: int) -> Plan[bool]:
    """Whether the stored steps are the state's first ones, judged by the last stored one
    apart from its input messages (a reference, not compared)."""
    steps = state.step_executions
    if stored == 0:
        return True
    if stored > len(steps):
        return False
    row = yield Query(
        "SELECT data FROM steps WHERE session_id = ? AND number = ?",
        (session_id, stored),
        fetch="one",
    )
    if row is None:
        return False
    last = steps[stored - 1]
    return bool(_without_input(loads(row[0])) == _without_input(loads(step_row_json(last, None))))


def _without_input(data: Any) -> Any:
    step = {key: value for key, value in data["step"].items() if key != "input_messages"}
    return {**data, "step": step}


def load_plan(path: str, session_id: str) -> Plan[Session]:
    row = yield Query(
        "SELECT version, parent_session_id, created_at, updated_at, head "
        "FROM sessions WHERE session_id = ?",
        (session_id,),
        fetch="one",
    )
    if row is None:
        raise SessionNotFound(f"no session {session_id!r}")
    messages = yield Query(
        "SELECT position, data FROM messages WHERE session_id = ? ORDER BY position",
        (session_id,),
        fetch="all",
    )
    steps = yield Query(
        "SELECT data FROM steps WHERE session_id = ? ORDER BY number", (session_id,), fetch="all"
    )
    version, parent, created_at, updated_at, head = row
    where = f"{path}: session {session_id!r}"
    try:
        if any(row[0] != at for at, row in enumerate(messages)):
            raise ValueError("the message rows are not numbered 0, 1, 2...")
        state = _state(loads(head), [m[1] for m in messages], [s[0] for s in steps])
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise StateDecodeError(f"{where}: unreadable rows ({exc})", "$") from None
    except StateDecodeError as exc:
        raise StateDecodeError(f"{where}: {exc.reason}", exc.path) from None
    return Session(
        session_id=session_id,
        version=version,
        state=state,
        parent_session_id=parent,
        created_at=_time(created_at),
        updated_at=_time(updated_at),
    )


def _state(data: Any, messages: list[str], steps: list[str]) -> AgentState:
    """The state a head, its message rows and its step rows describe. Every message of the
    log is decoded once and shared by the sections and the step inputs that hold it."""
    layout = data.pop(_STORE_KEY, None)
    rows = [loads(text) for text in steps]
    store = data["context"]["store"]
    if not (isinstance(layout, dict) and "log" in layout):  # the first layout
        store["messages"] = [loads(text) for text in messages]
    else:
        size, start, first = layout["log"], layout["conversation"], layout["buffer"]
        if len(messages) != size or not 0 <= first <= start <= size:
            raise ValueError(f"the message log has {len(messages)} rows, its layout {layout}")
        log = decode_field(MessageStore, "messages", [loads(text) for text in messages])
        store["messages"] = Prebuilt(History(log.items_from(start)))
        store["buffer"] = Prebuilt(History(itertools.islice(log.items_from(first), start - first)))
        for number, row in enumerate(rows, start=1):
            step = row["step"]
            held = step["input_messages"]
            if type(held) is dict and held.get("kind") == "LogRef":
                step["input_messages"] = Prebuilt(_resolved(held, log, number))
    if data.get("execution") is not None:
        data["execution"]["step_executions"] = rows
    return from_dict(data, AgentState)


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


def list_plan() -> Plan[list[Session]]:
    rows = yield Query(
        "SELECT session_id, version, parent_session_id, created_at, updated_at "
        "FROM sessions ORDER BY created_at, session_id",
        fetch="all",
    )
    return [
        Session(
            session_id=r[0],
            version=r[1],
            state=None,
            parent_session_id=r[2],
            created_at=_time(r[3]),
            updated_at=_time(r[4]),
        )
        for r in rows
    ]


def delete_plan(session_id: str) -> Plan[None]:
    deleted = yield Query("DELETE FROM sessions WHERE session_id = ?", (session_id,), fetch="count")
    if not deleted:
        raise SessionNotFound(f"no session {session_id!r}")
    yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
    yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
    yield from delete_events_plan(session_id)


class SQLSessionStore:
    """Sessions in SQL tables through blocking connections; subclasses connect and run
    transactions."""

    path: str
    _for_update = ""  # row locks where the database has them

    def __init__(self, *, clock: Clock | None = None, ids: IdFactory | None = None) -> None:
        self._clock = clock or SystemClock()
        self._ids = ids or RandomIds()
        self._lock = threading.Lock()
        self._audit_logs: list[Any] = []  # anchored in every save's transaction
        self._saved = _Written()

    def _transaction(self) -> AbstractContextManager[Handle]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Handle]:
        raise NotImplementedError

    def _check_schema(self, db: Handle) -> None:
        drive(schema_plan(self.path), db)

    def _written(self, plan: Plan[T]) -> T:
        with self._transaction() as db:
            return drive(plan, db)

    def _got(self, plan: Plan[T]) -> T:
        with self._read() as db:
            return drive(plan, db)

    def create(
        self, state: AgentState, session_id: str | None = None, parent_session_id: str | None = None
    ) -> Session:
        session = new_session(state, session_id, parent_session_id, self._clock, self._ids)
        return self._written(create_plan(session))

    def save(self, session: Session) -> Session:
        """Commit ``session.state`` if the stored version is still ``session.version`` (and,
        in the same transaction, the anchors of the audit logs attached to the store)."""
        plan = save_plan(session, self._clock.now(), self._for_update, self._saved)
        return self._written(_with_anchors(plan, self._audit_logs))

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        """Commit a state whose last step is ``step_execution``: one step row, the new
        messages and the head."""
        check_checkpoint(session, step_execution)
        return self.save(session)

    def load(self, session_id: str) -> Session:
        return self._got(load_plan(self.path, session_id))

    def list(self) -> list[Session]:
        return self._got(list_plan())

    def delete(self, session_id: str) -> None:
        self._written(delete_plan(session_id))

    def attach_audit_log(self, log: Any) -> None:
        """Anchor ``log`` (an ``AuditLog`` opened with ``anchor=`` this store) in each save's
        transaction, with the step row it records (``AuditLog.anchor_head``)."""
        self._audit_logs.append(log)

    def detach_audit_log(self, log: Any) -> None:
        """Stop anchoring ``log`` (it was closed)."""
        if log in self._audit_logs:
            self._audit_logs.remove(log)

    def anchor_audit_log(self, log_id: str, records: int, head: str) -> None:
        """Keep an audit log's anchor (``agents.persistence.anchors``)."""
        self._written(anchor_plan(log_id, records, head))

    def audit_anchor(self, log_id: str) -> tuple[int, str] | None:
        """An audit log's anchor: its record count and last hash."""
        return self._got(read_anchor_plan(log_id))

    def append_events(self, session_id: str, events: Sequence[str]) -> Sequence[int]:
        """Append events (JSON texts) to a session's event log, in one transaction; their
        numbers (``agents.persistence.events``)."""
        return self._written(append_events_plan(session_id, events))

    def append_event_batches(
        self, batches: Sequence[tuple[str, Sequence[str]]]
    ) -> Sequence[Sequence[int]]:
        """Append several sessions' events (``(session_id, texts)`` each) in one
        transaction; their numbers, batch by batch."""
        return self._written(append_event_batches_plan(batches))

    def last_event(self, session_id: str) -> int:
        """The number of a session's last event (0 for none)."""
        return self._got(last_event_plan(session_id))

    def events(
        self, session_id: str, after: int = 0, limit: int = 1000
    ) -> Sequence[tuple[int, str]]:
        """A session's events numbered after ``after``: ``(number, JSON text)``."""
        return self._got(read_events_plan(session_id, after, limit))


def _with_anchors(plan: Plan[T], logs: list[Any]) -> Plan[T]:
    """``plan``, then the anchors of ``logs``, in one transaction."""
    result = yield from plan
    for log in list(logs):
        head = log.anchor_head()
        if head is not None:
            yield from anchor_plan(*head)
    return result


def _head(state: AgentState) -> Any:
    """The state without its conversation, buffer and archived steps (those have rows of
    their own)."""
    execution = state.execution
    context = state.context
    light = state._evolve(
        context=context.with_store(context.store._evolve(messages=History(), buffer=History())),
        execution=None if execution is None else execution._evolve(step_executions=()),
    )
    return to_dict(light)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)
