"""The SQL layout shared by the SQLite and PostgreSQL stores.

Layout: a session row holds the version and the state's *head* (everything but the
conversation, the buffer and the archived steps); every message and every completed step
is its own row. The message rows are the session's log, appended to and never rewritten:
the conversation and the buffer are ranges of it (``Layout``, kept in the head), and a
step row refers to the messages its request sent by position (``LogRef``). A checkpoint
therefore writes one step row, the new messages and the head: O(step), not O(history),
compaction included (it moves positions, not rows). Every write is one transaction that
first checks the version (``SessionConflict`` changes nothing), and every read sees one
snapshot (a deferred SQLite transaction; a REPEATABLE READ, READ ONLY one in PostgreSQL),
so a load racing a write never mixes two versions.

The layout is written here once, as sans-IO plans (``agents.persistence.plans``); the
blocking stores drive them through ``agents.persistence.sql_store``, the asynchronous
PostgreSQL store on its own connection (``agents.persistence.postgres``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from agents.core.clock import Clock, IdFactory
from agents.errors import InvalidArgument, SessionConflict, SessionNotFound, StateDecodeError
from agents.persistence.anchors import ANCHORS_TABLE
from agents.persistence.blob_rows import BLOBS_TABLE, MENTION, with_blobs
from agents.persistence.events import (
    EVENTS_TABLE,
    delete_events_plan,
)
from agents.persistence.known import Known, Rows
from agents.persistence.message_log import LAYOUT_KEY, Layout, Positions, log_messages, state_of
from agents.persistence.plans import Many, Plan, Query
from agents.persistence.session import Session, recreated, storable_id
from agents.records.blobs import BlobStore, bind_blobs
from agents.records.codec import (
    encode_value,
    loads,
    step_row_json,
    to_dict,
)
from agents.records.compiled import replace_fields
from agents.records.frozen import History
from agents.records.json_text import dumps
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = [
    "SCHEMA_VERSION",
    "check_checkpoint",
    "create_plan",
    "delete_plan",
    "list_plan",
    "load_plan",
    "new_session",
    "save_plan",
    "schema_plan",
]

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


# -- plans ------------------------------------------------------------------------------------


def schema_plan(path: str) -> Plan[None]:
    """Create the tables if missing; refuse a store of another schema version."""
    for statement in [*_SCHEMA.split(";"), ANCHORS_TABLE, EVENTS_TABLE, BLOBS_TABLE]:
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


def create_plan(
    session: Session, known: Known | None = None, blobs: BlobStore | None = None
) -> Plan[Session]:
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
    written = yield from with_blobs(
        _write(session.session_id, session.state, 0, 0, None), session.state, blobs
    )
    if known is not None:
        known.note(session.session_id, written)
    return session


def save_plan(
    session: Session,
    now: datetime,
    for_update: str,
    known: Known | None = None,
    blobs: BlobStore | None = None,
) -> Plan[Session]:
    """Commit ``session.state`` if the stored version is still ``session.version``
    (``known``: what this store knows its rows hold, to spare reading them back)."""
    state = session.state
    if state is None:
        raise InvalidArgument("save() needs a session with a state")
    row = yield Query(
        "SELECT version, execution_id, message_count, step_count, head, created_at "
        "FROM sessions WHERE session_id = ?" + for_update,
        (session.session_id,),
        fetch="one",
    )
    if row is None:
        raise SessionNotFound(f"no session {session.session_id!r}")
    version, execution_id, message_count, step_count, stored_head, created_at = row
    if version != session.version:
        raise SessionConflict(
            f"session {session.session_id!r} is at version {version}; the write was "
            f"based on version {session.version}"
        )
    if _time(created_at, f"session {session.session_id!r}", "created_at") != session.created_at:
        raise SessionConflict(recreated(session.session_id))
    rows = known.rows(session.session_id, version, stored_head) if known else None
    written = yield from with_blobs(
        _write(
            session.session_id,
            state,
            message_count,
            step_count,
            execution_id,
            stored_head,
            rows,
            (version + 1, encode_value(now)),
        ),
        state,
        blobs,
    )
    if known is not None:
        known.note(session.session_id, written)
    return replace_fields(session, version=session.version + 1, updated_at=now)


def check_checkpoint(session: Session, step_execution: StepExecution) -> None:
    if session.state is None or session.state.step_executions.last() is not step_execution:
        raise InvalidArgument("checkpoint() commits a state whose last step is the one given")


def _write(
    session_id: str,
    state: AgentState,
    stored_messages: int,
    stored_steps: int,
    stored_execution: str | None,
    stored_head: str | None = None,
    rows: Rows | None = None,
    stamp: tuple[int, str] | None = None,
) -> Plan[Rows]:
    """Write what changed since the stored counts: the new step rows, the messages new to
    the log and the head (a save's new version and time in ``stamp``; a new session's is
    1); what the rows hold then. ``rows``: what this store knows they hold now, if it
    does; else whether they are the state's is read from them, every one.

    The ``messages`` rows are the session's message log, appended to and never rewritten:
    the conversation is the log from a position on, and the buffer the positions just
    before it (``Layout``). Context compaction moves messages from the conversation to
    the buffer and summarises the buffer away: positions move, rows stay, so a step row
    can refer to the messages its request sent by position (``LogRef``) for good. Where
    the stored layout no longer describes the state (a conversation edited by hand, say),
    the buffer and the conversation are appended to the log again; where the stored steps
    are not this state's first ones, the log starts again with the steps."""
    context = state.context
    conversation, buffer = context.store.messages, context.store.buffer
    execution = state.execution
    steps = state.step_executions
    execution_id = execution.execution_id if execution is not None else None
    stored = loads(stored_head) if stored_head else {}
    layout = Layout.stored(stored.get(LAYOUT_KEY), stored_messages + stored_steps)
    another_run = execution_id != stored_execution
    if (
        layout is None
        or (another_run and not layout.settled)
        or not (another_run or (yield from _steps_held(session_id, steps, stored_steps, rows)))
    ):
        # rows of the first layout (conversation rows, relative references), a rewound
        # run going on differently, or a new run after one left suspended mid-step: the
        # stored positions cannot be moved on by the new steps' compactions, so the log
        # starts again with the steps
        yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
        yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
        layout, stored_steps, rows = Layout(), 0, None
    elif another_run:  # the log goes on under the new run's steps
        yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
        stored_steps = 0
    place, layout = yield from log_messages(session_id, state, layout, stored_steps, rows)
    where = Positions(conversation, buffer, place)
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
    head = dumps({**_head(state), LAYOUT_KEY: stored_layout}, exotic=True)  # as json writes it
    values: list[Any] = [head, execution_id, len(conversation), len(steps)]
    if stamp is not None:  # a save: the new version and its time
        columns += ", version = ?, updated_at = ?"
        values += stamp
    yield Query(f"UPDATE sessions SET {columns} WHERE session_id = ?", (*values, session_id))
    version = stamp[0] if stamp is not None else 1
    return Rows(version, head, steps, buffer, conversation, place.buffer, place.conversation)


def _steps_held(
    session_id: str, steps: History[StepExecution], stored: int, rows: Rows | None
) -> Plan[bool]:
    """Whether the stored step rows are the state's first steps: by what this store knows
    they hold, or else read back, every one, and compared apart from their input
    messages (a row holds them as a reference into the log, checked with the log)."""
    if stored == 0:
        return True
    if stored > len(steps):
        return False
    if rows is not None:
        return rows.hold_steps(steps, stored)
    found = yield Query(
        "SELECT number, data FROM steps WHERE session_id = ? ORDER BY number",
        (session_id,),
        fetch="all",
    )
    return len(found) == stored and all(
        number == expected
        and _without_input(loads(data)) == _without_input(loads(step_row_json(step, None)))
        for expected, ((number, data), step) in enumerate(zip(found, steps, strict=False), start=1)
    )


def _without_input(data: Any) -> Any:
    step = {key: value for key, value in data["step"].items() if key != "input_messages"}
    return {**data, "step": step}


def exists_plan(session_id: str) -> Plan[bool]:
    """Whether a session is stored under ``session_id`` (its header read, not its rows)."""
    if not storable_id(session_id):
        return False
    row = yield Query("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,), fetch="one")
    return row is not None


def load_plan(
    path: str, session_id: str, known: Known | None = None, blobs: BlobStore | None = None
) -> Plan[Session]:
    """A stored session; with ``blobs`` (the store's own), the parts its rows refer to
    read their bytes from there when they are needed."""
    if not storable_id(session_id):  # no session has it (and the database would refuse it)
        raise SessionNotFound(f"no session {session_id!r}")
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
            raise InvalidArgument("the message rows are not numbered 0, 1, 2...")
        state, layout = state_of(loads(head), [m[1] for m in messages], [s[0] for s in steps])
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise StateDecodeError(f"{where}: unreadable rows ({exc})", "$") from None
    except StateDecodeError as exc:
        raise StateDecodeError(f"{where}: {exc.reason}", exc.path) from None
    texts = (head, *(m[1] for m in messages), *(s[0] for s in steps))
    if blobs is not None and any(MENTION in text for text in texts):
        bind_blobs(state, blobs)
    if known is not None and layout is not None:
        sections = state.context.store
        known.note(
            session_id,
            Rows(
                version,
                head,
                state.step_executions,
                sections.buffer,
                sections.messages,
                layout.buffer,
                layout.conversation,
            ),
        )
    return _session(where, session_id, version, state, parent, created_at, updated_at)


def list_plan(path: str) -> Plan[list[Session]]:
    rows = yield Query(
        "SELECT session_id, version, parent_session_id, created_at, updated_at "
        "FROM sessions ORDER BY created_at, session_id",
        fetch="all",
    )
    return [_session(f"{path}: session {r[0]!r}", r[0], r[1], None, *r[2:]) for r in rows]


def _session(
    where: str,
    session_id: str,
    version: Any,
    state: AgentState | None,
    parent: str | None,
    created_at: Any,
    updated_at: Any,
) -> Session:
    """A session from its row, whose version and times are checked: a row changed outside
    the store is a ``StateDecodeError`` naming the session and the column."""
    if type(version) is not int:
        raise StateDecodeError(
            f"{where}: its version is {version!r:.40}, not a whole number", "version"
        )
    return Session(
        session_id=session_id,
        version=version,
        state=state,
        parent_session_id=parent,
        created_at=_time(created_at, where, "created_at"),
        updated_at=_time(updated_at, where, "updated_at"),
    )


def delete_plan(session_id: str) -> Plan[None]:
    if not storable_id(session_id):
        raise SessionNotFound(f"no session {session_id!r}")
    deleted = yield Query("DELETE FROM sessions WHERE session_id = ?", (session_id,), fetch="count")
    if not deleted:
        raise SessionNotFound(f"no session {session_id!r}")
    yield Query("DELETE FROM messages WHERE session_id = ?", (session_id,))
    yield Query("DELETE FROM steps WHERE session_id = ?", (session_id,))
    yield from delete_events_plan(session_id)


def _head(state: AgentState) -> Any:
    """The state without its conversation, buffer and archived steps (those have rows of
    their own)."""
    execution = state.execution
    context = state.context
    light = replace_fields(
        state,
        context=context.with_store(
            replace_fields(context.store, messages=History(), buffer=History())
        ),
        execution=None if execution is None else replace_fields(execution, step_executions=()),
    )
    return to_dict(light)


def _time(text: Any, where: str, column: str) -> datetime:
    """The time a row's ``column`` holds (as ``encode_value`` wrote it)."""
    try:
        return datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise StateDecodeError(
            f"{where}: its {column} is {text!r:.40}, not an ISO 8601 time", column
        ) from None
