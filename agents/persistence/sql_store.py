"""``SQLSessionStore``: sessions in SQL tables through a blocking connection — the SQLite
store and the blocking PostgreSQL store. It drives the sans-IO plans of
``agents.persistence.sql`` (the layout and its write rules) in one transaction a write and
one snapshot a read; a subclass connects and opens those transactions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.persistence.anchors import anchor_plan, read_anchor_plan
from agents.persistence.blob_rows import SQLBlobStore
from agents.persistence.events import (
    append_event_batches_plan,
    append_events_plan,
    last_event_plan,
    read_events_plan,
)
from agents.persistence.known import Known
from agents.persistence.plans import Handle, Plan, T, drive
from agents.persistence.session import Session
from agents.persistence.sql import (
    check_checkpoint,
    create_plan,
    delete_plan,
    exists_plan,
    list_plan,
    load_plan,
    new_session,
    save_plan,
    schema_plan,
)
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["SQLSessionStore"]


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
        self._known = Known()
        self.blobs = SQLBlobStore(self._written, self._got)  # the bytes the parts refer to

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
        return self._written(create_plan(session, self._known, self.blobs))

    def save(self, session: Session) -> Session:
        """Commit ``session.state`` if the stored version is still ``session.version`` (and,
        in the same transaction, the anchors of the audit logs attached to the store)."""
        plan = save_plan(session, self._clock.now(), self._for_update, self._known, self.blobs)
        return self._written(_with_anchors(plan, self._audit_logs))

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        """Commit a state whose last step is ``step_execution``: one step row, the new
        messages and the head."""
        check_checkpoint(session, step_execution)
        return self.save(session)

    def save_with_events(
        self,
        session: Session,
        events: Sequence[str],
        step_execution: StepExecution | None = None,
    ) -> tuple[Session, Sequence[int]]:
        """``save`` (``checkpoint`` with ``step_execution``) and ``append_events`` of the
        session's ``events``, in one transaction: both are committed or neither is. The
        saved session and the events' numbers."""
        if step_execution is not None:
            check_checkpoint(session, step_execution)
        plan = _with_events(
            save_plan(session, self._clock.now(), self._for_update, self._known, self.blobs),
            session.session_id,
            events,
        )
        return self._written(_with_anchors(plan, self._audit_logs))

    def load(self, session_id: str) -> Session:
        return self._got(load_plan(self.path, session_id, self._known, self.blobs))

    def list(self) -> list[Session]:
        return self._got(list_plan(self.path))

    def exists(self, session_id: str) -> bool:
        """Whether a session is stored under ``session_id`` (without loading it)."""
        return self._got(exists_plan(session_id))

    def delete(self, session_id: str) -> None:
        self._known.forget(session_id)
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
        return self._written(append_events_plan(session_id, events, self._for_update))

    def append_event_batches(
        self, batches: Sequence[tuple[str, Sequence[str]]]
    ) -> Sequence[Sequence[int]]:
        """Append several sessions' events (``(session_id, texts)`` each) in one
        transaction; their numbers, batch by batch."""
        return self._written(append_event_batches_plan(batches, self._for_update))

    def last_event(self, session_id: str) -> int:
        """The number of a session's last event (0 for none)."""
        return self._got(last_event_plan(session_id))

    def events(
        self, session_id: str, after: int = 0, limit: int = 1000
    ) -> Sequence[tuple[int, str]]:
        """A session's events numbered after ``after``: ``(number, JSON text)``."""
        return self._got(read_events_plan(session_id, after, limit))


def _with_events(
    plan: Plan[Session], session_id: str, events: Sequence[str]
) -> Plan[tuple[Session, list[int]]]:
    """``plan``, then ``events`` appended to the session's event log."""
    saved = yield from plan
    numbers = (yield from append_events_plan(session_id, events)) if events else []
    return saved, numbers


def _with_anchors(plan: Plan[T], logs: list[Any]) -> Plan[T]:
    """``plan``, then the anchors of ``logs``, in one transaction."""
    result = yield from plan
    for log in list(logs):
        head = log.anchor_head()
        if head is not None:
            yield from anchor_plan(*head)
    return result
