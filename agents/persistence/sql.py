"""The SQL layout shared by the SQLite and PostgreSQL stores.

Layout: a session row holds the version and the state's *head* (everything but the
conversation and the archived steps); every message and every completed step is its own
row, steps referring to the conversation instead of copying it. A checkpoint therefore
writes one step row, the new messages and the head: O(step), not O(history). When the
sections those references lean on change (context compaction, a new system prompt), the
rows written as references since the last such change are written again, whole; the head
keeps where they start (``agents_store.refs_from``), so that stays O(recent steps). Every write is
one transaction that first checks the version (``SessionConflict`` changes nothing), and
every read sees one snapshot (a deferred SQLite transaction; a REPEATABLE READ, READ ONLY one
in PostgreSQL), so a load racing a write never mixes two versions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Final, TypeVar

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
    encode_step_execution,
    encode_value,
    from_dict,
    step_execution_json,
    to_dict,
    value_json,
)
from agents.records.frozen import History
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["SCHEMA_VERSION", "SQLSessionStore"]

T = TypeVar("T")

SCHEMA_VERSION: Final = 1

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


def save_plan(session: Session, now: datetime, for_update: str) -> Plan[Session]:
    """Commit ``session.state`` if the stored version is still ``session.version``."""
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
    yield from _write(
        session.session_id, state, message_count, step_count, execution_id, stored_head
    )
    yield Query(
        "UPDATE sessions SET version = ?, updated_at = ? WHERE session_id = ?",
        (version + 1, encode_value(now), session.session_id),
    )
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
) -> Plan[None]:
    """Write what changed since the stored counts (or everything, when the stored rows are
    not a prefix of the new state).

    A step row refers to the conversation and the sections before it (``MessagesRef``)
    where it can. When those change — compaction moved messages out, a summary or a new
    system prompt arrived — the rows written as references are written again as they
    encode now (whole, mostly); rows written whole do not depend on them. The head records
    from which step on rows may be references (``refs_from``; every row before it is
    whole), so only the newest rows are written again and a compacting run writes each
    step row about twice, not at every checkpoint. Whether the stored steps are this
    state's is judged apart from the input messages, before any of that."""
    messages = state.messages
    execution = state.execution
    steps = state.step_executions
    execution_id = execution.execution_id if execution is not None else None
    head = _head(state)
    stored = json.loads(stored_head) if stored_head else {}
    refs_from = stored.pop(_STORE_KEY, {}).get("refs_from", 1)
    messages_kept = yield from _is_prefix(session_id, messages, stored_messages)
    if not messages_kept:
        yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
        stored_messages = 0
    if execution_id != stored_execution or not (
        yield from _steps_prefix(session_id, state, stored_steps)
    ):
        yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
        stored_steps, refs_from = 0, 1
    elif stored_steps and (not messages_kept or _sections(stored) != _sections(head)):
        refs_from = yield from _rewrite_references(session_id, state, stored_steps, refs_from)
    yield Many(
        "INSERT INTO messages VALUES (?, ?, ?)",
        [
            (session_id, position, value_json(messages[position]))
            for position in range(stored_messages, len(messages))
        ],
    )
    rows = []
    first_reference = len(steps) + 1
    for index in range(stored_steps, len(steps)):
        data, text = step_execution_json(steps[index], state.context)
        if first_reference > len(steps) and _is_reference(data):
            first_reference = index + 1
        rows.append((session_id, index + 1, text))
    if refs_from > stored_steps:  # every stored row is whole: the new ones decide
        refs_from = first_reference
    yield Many("INSERT INTO steps VALUES (?, ?, ?)", rows)
    yield Query(
        "UPDATE sessions SET head = ?, execution_id = ?, message_count = ?, step_count = ? "
        "WHERE session_id = ?",
        (
            _json({**head, _STORE_KEY: {"refs_from": refs_from}}),
            execution_id,
            len(messages),
            len(steps),
            session_id,
        ),
    )


# Kept in the stored head beside the state's fields, removed before the state is decoded.
_STORE_KEY: Final = "agents_store"


def _is_reference(data: Any) -> bool:
    return type(data["step"]["input_messages"]) is dict


def _sections(head: Any) -> Any:
    """What step references depend on besides the conversation: the system prompt and
    the summary and buffer sections (from a stored or new head)."""
    context = head.get("context") or {}
    store = context.get("store") or {}
    return context.get("system_prompt"), store.get("summary"), store.get("buffer")


def _rewrite_references(
    session_id: str, state: AgentState, stored: int, refs_from: int
) -> Plan[int]:
    """The stored step rows from ``refs_from`` on (the only ones that may be references)
    written again as they encode now; the new ``refs_from``."""
    steps = state.step_executions
    updates = []
    lowest = stored + 1
    for number in range(refs_from, stored + 1):
        data, text = step_execution_json(steps[number - 1], state.context)
        if number < lowest and _is_reference(data):
            lowest = number
        updates.append((text, session_id, number))
    yield Many("UPDATE steps SET data = ? WHERE session_id = ? AND number = ?", updates)
    return lowest


def _is_prefix(session_id: str, messages: Any, stored: int) -> Plan[bool]:
    if stored == 0:
        return True
    if stored > len(messages):
        return False
    row = yield Query(
        "SELECT data FROM messages WHERE session_id = ? AND position = ?",
        (session_id, stored - 1),
        fetch="one",
    )
    return row is not None and row[0] == value_json(messages[stored - 1])


def _steps_prefix(session_id: str, state: AgentState, stored: int) -> Plan[bool]:
    """Whether the stored steps are the state's first ones, judged by the last stored one
    apart from its input messages: those may refer to sections that changed since, which
    ``_rewrite_references`` mends; anything else differing means another history."""
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
    last = steps[stored - 1]  # encoded without its input, which is not compared (and may be long)
    now = encode_step_execution(
        last._evolve(step=last.step._evolve(input_messages=History())), state.context
    )
    return bool(_without_input(json.loads(row[0])) == _without_input(now))


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
        "SELECT data FROM messages WHERE session_id = ? ORDER BY position",
        (session_id,),
        fetch="all",
    )
    steps = yield Query(
        "SELECT data FROM steps WHERE session_id = ? ORDER BY number", (session_id,), fetch="all"
    )
    version, parent, created_at, updated_at, head = row
    where = f"{path}: session {session_id!r}"
    try:
        data = json.loads(head)
        data.pop(_STORE_KEY, None)
        data["context"]["store"]["messages"] = [json.loads(m[0]) for m in messages]
        if data.get("execution") is not None:
            data["execution"]["step_executions"] = [json.loads(s[0]) for s in steps]
        state = from_dict(data, AgentState)
    except (ValueError, KeyError, TypeError) as exc:
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
        plan = save_plan(session, self._clock.now(), self._for_update)
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
    """The state without its conversation and archived steps (those have rows of their own)."""
    execution = state.execution
    light = state._evolve(
        context=state.context.with_messages(()),
        execution=None if execution is None else execution._evolve(step_executions=()),
    )
    return to_dict(light)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)
