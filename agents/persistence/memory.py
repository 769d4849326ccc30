"""``InMemorySessionStore``: sessions in a dict (tests, single-process services)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.errors import SessionConflict, SessionNotFound
from agents.persistence.session import Session, recreated
from agents.records.compiled import replace_fields
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["InMemorySessionStore"]


class InMemorySessionStore:
    """A thread-safe in-process store; states are immutable values, so nothing is copied."""

    def __init__(self, *, clock: Clock | None = None, ids: IdFactory | None = None) -> None:
        self._clock = clock or SystemClock()
        self._ids = ids or RandomIds()
        self._sessions: dict[str, Session] = {}
        self._anchors: dict[str, tuple[int, str]] = {}
        self._events: dict[str, list[str]] = {}
        self._audit_logs: list[Any] = []
        self._lock = threading.Lock()

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
        with self._lock:
            if session.session_id in self._sessions:
                raise SessionConflict(f"session {session.session_id!r} already exists")
            self._sessions[session.session_id] = session
        return session

    def load(self, session_id: str) -> Session:
        with self._lock:
            try:
                return self._sessions[session_id]
            except KeyError:
                raise SessionNotFound(f"no session {session_id!r}") from None

    def exists(self, session_id: str) -> bool:
        """Whether a session is stored under ``session_id``."""
        with self._lock:
            return session_id in self._sessions

    def save(self, session: Session) -> Session:
        with self._lock:
            return self._save_locked(session)

    def save_with_events(
        self,
        session: Session,
        events: Sequence[str],
        step_execution: StepExecution | None = None,
    ) -> tuple[Session, Sequence[int]]:
        """``save`` and ``append_events`` of the session's ``events`` at once (a reader sees
        both or neither): the saved session and the events' numbers."""
        with self._lock:
            saved = self._save_locked(session)
            return saved, self._append_locked(session.session_id, events)

    def _save_locked(self, session: Session) -> Session:
        stored = self._sessions.get(session.session_id)
        if stored is None:
            raise SessionNotFound(f"no session {session.session_id!r}")
        if stored.version != session.version:
            raise SessionConflict(
                f"session {session.session_id!r} is at version {stored.version}; "
                f"the write was based on version {session.version}"
            )
        if stored.created_at != session.created_at:
            raise SessionConflict(recreated(session.session_id))
        saved = replace_fields(session, version=session.version + 1, updated_at=self._clock.now())
        self._sessions[session.session_id] = saved
        heads = [log.anchor_head() for log in self._audit_logs]
        for head in heads:
            if head is not None:
                self._anchor_locked(*head)
        return saved

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        return self.save(session)

    def list(self) -> list[Session]:
        with self._lock:
            return [replace_fields(s, state=None) for s in self._sessions.values()]

    def delete(self, session_id: str) -> None:
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise SessionNotFound(f"no session {session_id!r}")
            self._events.pop(session_id, None)

    def attach_audit_log(self, log: Any) -> None:
        """Anchor ``log`` at every save, with the state it saves (as the SQL stores do)."""
        self._audit_logs.append(log)

    def detach_audit_log(self, log: Any) -> None:
        """Stop anchoring ``log``."""
        if log in self._audit_logs:
            self._audit_logs.remove(log)

    def anchor_audit_log(self, log_id: str, records: int, head: str) -> None:
        """Keep an audit log's anchor (``agents.persistence.anchors``): only forward."""
        with self._lock:
            self._anchor_locked(log_id, records, head)

    def _anchor_locked(self, log_id: str, records: int, head: str) -> None:
        kept = self._anchors.get(log_id)
        if kept is None or records > kept[0]:
            self._anchors[log_id] = (records, head)

    def audit_anchor(self, log_id: str) -> tuple[int, str] | None:
        """An audit log's anchor: its record count and last hash."""
        with self._lock:
            return self._anchors.get(log_id)

    def append_events(self, session_id: str, events: Sequence[str]) -> Sequence[int]:
        """Append events (JSON texts) to a session's event log; their numbers."""
        return self.append_event_batches([(session_id, events)])[0]

    def append_event_batches(
        self, batches: Sequence[tuple[str, Sequence[str]]]
    ) -> Sequence[Sequence[int]]:
        """Append several sessions' events at once (a reader sees all of them or none);
        their numbers, batch by batch."""
        with self._lock:
            return [self._append_locked(session_id, texts) for session_id, texts in batches]

    def _append_locked(self, session_id: str, texts: Sequence[str]) -> Sequence[int]:
        log = self._events.setdefault(session_id, [])
        first = len(log) + 1
        log.extend(texts)
        return list(range(first, first + len(texts)))

    def last_event(self, session_id: str) -> int:
        """The number of a session's last event (0 for none)."""
        with self._lock:
            return len(self._events.get(session_id, []))

    def events(
        self, session_id: str, after: int = 0, limit: int = 1000
    ) -> Sequence[tuple[int, str]]:
        """A session's events numbered after ``after``: ``(number, JSON text)``."""
        with self._lock:
            log = self._events.get(session_id, [])
            return [(after + i + 1, text) for i, text in enumerate(log[after : after + limit])]
