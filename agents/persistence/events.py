"""A session's event log: what happened in its runs, in order, as JSON text, each event
numbered from 1 within its session. ``agents serve`` streams it (the numbers are the
Server-Sent Events ids), so a client that lost its stream asks for what came after the last
number it saw — from any server process sharing the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from agents.persistence.plans import Many, Plan, Query

__all__ = [
    "EVENTS_TABLE",
    "SessionEvents",
    "append_event_batches_plan",
    "append_events_plan",
    "last_event_plan",
    "read_events_plan",
]

# Part of every SQL store's schema (``agents.persistence.sql``), created with the store or
# when a store made before it is next opened.
EVENTS_TABLE: Final = """
CREATE TABLE IF NOT EXISTS agents_session_events (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
)"""


class SessionEvents(Protocol):
    """A store that keeps sessions' event logs (the SQLite, PostgreSQL and in-memory
    stores)."""

    def append_events(self, session_id: str, events: Sequence[str]) -> Sequence[int]: ...

    def events(
        self, session_id: str, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, str]]: ...


def append_events_plan(
    session_id: str, events: Sequence[str], for_update: str = ""
) -> Plan[list[int]]:
    """Append ``events`` (JSON texts) to the session's log; their numbers. With
    ``for_update`` (row locks, where the database has them), the writers of one session take
    turns on its row (``lock_sessions_plan``)."""
    if for_update:
        yield from lock_sessions_plan([session_id], for_update)
    row = yield Query(
        "SELECT MAX(seq) FROM agents_session_events WHERE session_id = ?",
        (session_id,),
        fetch="one",
    )
    last = int(row[0]) if row is not None and row[0] is not None else 0
    numbers = list(range(last + 1, last + 1 + len(events)))
    yield Many(
        "INSERT INTO agents_session_events (session_id, seq, data) VALUES (?, ?, ?)",
        [(session_id, number, text) for number, text in zip(numbers, events, strict=True)],
    )
    return numbers


def append_event_batches_plan(
    batches: Sequence[tuple[str, Sequence[str]]], for_update: str = ""
) -> Plan[list[list[int]]]:
    """Append each batch of events (``(session_id, texts)``) in turn, in one transaction
    (a server writing the events of many sessions' runs at once); their numbers."""
    if for_update:  # every session's row at once, in one order: two writers cannot deadlock
        yield from lock_sessions_plan(sorted({session_id for session_id, _ in batches}), for_update)
    numbers = []
    for session_id, events in batches:
        numbers.append((yield from append_events_plan(session_id, events)))
    return numbers


def lock_sessions_plan(session_ids: Sequence[str], for_update: str) -> Plan[None]:
    """Lock the sessions' rows until the transaction ends. An event's number is the last
    one's plus one: two transactions of PostgreSQL (READ COMMITTED) reading the same last
    number collided on the log's key, and the one that lost failed its events. Holding the
    row, a writer reads the last number after the other's commit. (SQLite's transactions
    take turns anyway: ``for_update`` is empty there.)"""
    for session_id in session_ids:
        yield Query("SELECT 1 FROM sessions WHERE session_id = ?" + for_update, (session_id,))


def last_event_plan(session_id: str) -> Plan[int]:
    """The number of the session's last event (0 for none)."""
    row = yield Query(
        "SELECT MAX(seq) FROM agents_session_events WHERE session_id = ?",
        (session_id,),
        fetch="one",
    )
    return int(row[0]) if row is not None and row[0] is not None else 0


def read_events_plan(session_id: str, after: int, limit: int) -> Plan[list[tuple[int, str]]]:
    """The session's events numbered after ``after``, at most ``limit`` of them."""
    rows = yield Query(
        "SELECT seq, data FROM agents_session_events WHERE session_id = ? AND seq > ? "
        "ORDER BY seq LIMIT ?",
        (session_id, after, limit),
        fetch="all",
    )
    return [(int(seq), str(data)) for seq, data in rows]


def delete_events_plan(session_id: str) -> Plan[None]:
    """Forget a session's events (with the session)."""
    yield Query("DELETE FROM agents_session_events WHERE session_id = ?", (session_id,))
