"""The SQL layout shared by the SQLite and PostgreSQL stores.

Layout: a session row holds the version and the state's *head* (everything but the
conversation and the archived steps); every message and every completed step is its own
row, steps referring to the conversation instead of copying it. A checkpoint therefore
writes one step row, the new messages and the head: O(step), not O(history). Every write is
one transaction that first checks the version (``SessionConflict`` changes nothing).
"""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from typing import Any, Final

from agents.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.codec import encode_step_execution, encode_value, from_dict, to_dict
from agents.errors import SessionConflict, SessionNotFound, StateDecodeError
from agents.persistence.session import Session
from agents.state import AgentState
from agents.step import StepExecution

__all__ = ["SCHEMA_VERSION", "Handle", "SQLSessionStore"]

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


class Handle:
    """A connection seen through ``?`` placeholders, whatever the driver's style."""

    def __init__(self, connection: Any, placeholder: str) -> None:
        self._connection = connection
        self._placeholder = placeholder

    def _sql(self, text: str) -> str:
        return text if self._placeholder == "?" else text.replace("?", self._placeholder)

    def execute(self, text: str, parameters: Any = ()) -> Any:
        return self._connection.execute(self._sql(text), parameters)

    def executemany(self, text: str, rows: list[Any]) -> None:
        if rows:
            self._connection.cursor().executemany(self._sql(text), rows)


class SQLSessionStore:
    """Sessions in SQL tables; subclasses connect and run transactions."""

    path: str
    _for_update = ""  # row locks where the database has them

    def __init__(self, *, clock: Clock | None = None, ids: IdFactory | None = None) -> None:
        self._clock = clock or SystemClock()
        self._ids = ids or RandomIds()
        self._lock = threading.Lock()

    def _transaction(self) -> AbstractContextManager[Handle]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Handle]:
        raise NotImplementedError

    def _check_schema(self, db: Handle) -> None:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        row = db.execute("SELECT version FROM agents_schema").fetchone()
        if row is None:
            db.execute("INSERT INTO agents_schema VALUES (?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise StateDecodeError(
                f"{self.path}: store schema version {row[0]}, this version of agents "
                f"reads {SCHEMA_VERSION}",
                "agents_schema.version",
            )

    # -- writing ----------------------------------------------------------------------------

    def create(
        self, state: AgentState, session_id: str | None = None, parent_session_id: str | None = None
    ) -> Session:
        now = self._clock.now()
        session = Session(
            session_id=session_id or self._ids.new_id("session"),
            version=1,
            state=state,
            parent_session_id=parent_session_id,
            created_at=now,
            updated_at=now,
        )
        with self._transaction() as db:
            exists = db.execute(
                "SELECT 1 FROM sessions WHERE session_id = ?", (session.session_id,)
            ).fetchone()
            if exists:
                raise SessionConflict(f"session {session.session_id!r} already exists")
            db.execute(
                "INSERT INTO sessions VALUES (?, 1, ?, ?, ?, '{}', NULL, 0, 0)",
                (session.session_id, parent_session_id, encode_value(now), encode_value(now)),
            )
            self._write(db, session.session_id, state, 0, 0, None)
        return session

    def save(self, session: Session) -> Session:
        """Commit ``session.state`` if the stored version is still ``session.version``."""
        state = session.state
        if state is None:
            raise ValueError("save() needs a session with a state")
        now = self._clock.now()
        with self._transaction() as db:
            row = db.execute(
                "SELECT version, execution_id, message_count, step_count FROM sessions "
                "WHERE session_id = ?" + self._for_update,
                (session.session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session.session_id!r}")
            version, execution_id, message_count, step_count = row
            if version != session.version:
                raise SessionConflict(
                    f"session {session.session_id!r} is at version {version}; the write was "
                    f"based on version {session.version}"
                )
            self._write(db, session.session_id, state, message_count, step_count, execution_id)
            db.execute(
                "UPDATE sessions SET version = ?, updated_at = ? WHERE session_id = ?",
                (version + 1, encode_value(now), session.session_id),
            )
        return session._evolve(version=session.version + 1, updated_at=now)

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        """Commit a state whose last step is ``step_execution``: one step row, the new
        messages and the head."""
        if session.state is None or session.state.step_executions.last() is not step_execution:
            raise ValueError("checkpoint() commits a state whose last step is the one given")
        return self.save(session)

    def _write(
        self,
        db: Handle,
        session_id: str,
        state: AgentState,
        stored_messages: int,
        stored_steps: int,
        stored_execution: str | None,
    ) -> None:
        """Write what changed since the stored counts (or everything, when the stored rows
        are not a prefix of the new state)."""
        messages = state.messages
        execution = state.execution
        steps = state.step_executions
        execution_id = execution.execution_id if execution is not None else None
        if not self._is_prefix(db, session_id, messages, stored_messages):
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            stored_messages = 0
        if execution_id != stored_execution or not self._steps_prefix(
            db, session_id, state, stored_steps
        ):
            db.execute("DELETE FROM steps WHERE session_id = ?", (session_id,))
            stored_steps = 0
        db.executemany(
            "INSERT INTO messages VALUES (?, ?, ?)",
            [
                (session_id, position, _json(encode_value(messages[position])))
                for position in range(stored_messages, len(messages))
            ],
        )
        db.executemany(
            "INSERT INTO steps VALUES (?, ?, ?)",
            [
                (session_id, index + 1, _json(encode_step_execution(steps[index], state.context)))
                for index in range(stored_steps, len(steps))
            ],
        )
        db.execute(
            "UPDATE sessions SET head = ?, execution_id = ?, message_count = ?, step_count = ? "
            "WHERE session_id = ?",
            (_json(_head(state)), execution_id, len(messages), len(steps), session_id),
        )

    @staticmethod
    def _is_prefix(db: Handle, session_id: str, messages: Any, stored: int) -> bool:
        if stored == 0:
            return True
        if stored > len(messages):
            return False
        row = db.execute(
            "SELECT data FROM messages WHERE session_id = ? AND position = ?",
            (session_id, stored - 1),
        ).fetchone()
        return row is not None and row[0] == _json(encode_value(messages[stored - 1]))

    @staticmethod
    def _steps_prefix(db: Handle, session_id: str, state: AgentState, stored: int) -> bool:
        steps = state.step_executions
        if stored == 0:
            return True
        if stored > len(steps):
            return False
        row = db.execute(
            "SELECT data FROM steps WHERE session_id = ? AND number = ?", (session_id, stored)
        ).fetchone()
        return row is not None and row[0] == _json(
            encode_step_execution(steps[stored - 1], state.context)
        )

    # -- reading ----------------------------------------------------------------------------

    def load(self, session_id: str) -> Session:
        with self._read() as db:
            row = db.execute(
                "SELECT version, parent_session_id, created_at, updated_at, head "
                "FROM sessions WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {session_id!r}")
            messages = [
                r[0]
                for r in db.execute(
                    "SELECT data FROM messages WHERE session_id = ? ORDER BY position",
                    (session_id,),
                )
            ]
            steps = [
                r[0]
                for r in db.execute(
                    "SELECT data FROM steps WHERE session_id = ? ORDER BY number", (session_id,)
                )
            ]
        version, parent, created_at, updated_at, head = row
        where = f"{self.path}: session {session_id!r}"
        try:
            data = json.loads(head)
            data["context"]["store"]["messages"] = [json.loads(m) for m in messages]
            if data.get("execution") is not None:
                data["execution"]["step_executions"] = [json.loads(s) for s in steps]
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

    def list(self) -> list[Session]:
        with self._read() as db:
            rows = db.execute(
                "SELECT session_id, version, parent_session_id, created_at, updated_at "
                "FROM sessions ORDER BY created_at, session_id"
            ).fetchall()
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

    def delete(self, session_id: str) -> None:
        with self._transaction() as db:
            deleted = db.execute(
                "DELETE FROM sessions WHERE session_id = ?", (session_id,)
            ).rowcount
            if not deleted:
                raise SessionNotFound(f"no session {session_id!r}")
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM steps WHERE session_id = ?", (session_id,))


def _head(state: AgentState) -> Any:
    """The state without its conversation and archived steps (those have rows of their own)."""
    execution = state.execution
    light = state._evolve(
        context=state.context.with_messages(()),
        execution=None if execution is None else execution._evolve(step_executions=()),
    )
    return to_dict(light)


def _time(text: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(text)
