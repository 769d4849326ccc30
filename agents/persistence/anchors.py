"""Audit-log anchors: a session store keeps, for each audit log, how many records it had and
the hash of the last one, so that a log cut short — whole runs off its end — is caught by
``AuditLog.verify(path, anchor=store)`` (``agents verify FILE --anchor DATABASE``).

A log is known by the hash of its first record (``log_id``): it moves with the file and no
other log has it. Anchors only move forward (a write naming fewer records than the stored
anchor changes nothing), so runs writing one log from several threads may anchor it in any
order.
"""

from __future__ import annotations

from typing import Final, Protocol

from agents.persistence.plans import Plan, Query

__all__ = ["ANCHORS_TABLE", "AuditAnchors", "anchor_plan", "read_anchor_plan"]

# Part of every SQL store's schema (``agents.persistence.sql``): created with the store, or
# when a store made before anchors existed is next opened.
ANCHORS_TABLE: Final = """
CREATE TABLE IF NOT EXISTS agents_audit_anchors (
    log_id TEXT PRIMARY KEY, records INTEGER NOT NULL, head TEXT NOT NULL
)"""


class AuditAnchors(Protocol):
    """A store that keeps audit-log anchors (the SQLite, PostgreSQL and in-memory stores)."""

    def anchor_audit_log(self, log_id: str, records: int, head: str) -> None: ...

    def audit_anchor(self, log_id: str) -> tuple[int, str] | None: ...


def anchor_plan(log_id: str, records: int, head: str) -> Plan[None]:
    """Move ``log_id``'s anchor forward to ``records`` records ending with ``head``."""
    yield Query(
        "INSERT INTO agents_audit_anchors (log_id, records, head) VALUES (?, ?, ?) "
        "ON CONFLICT (log_id) DO UPDATE SET records = excluded.records, head = excluded.head "
        "WHERE excluded.records > agents_audit_anchors.records",
        (log_id, records, head),
    )


def read_anchor_plan(log_id: str) -> Plan[tuple[int, str] | None]:
    """``log_id``'s anchor: its record count and last hash (``None`` if it has none)."""
    row = yield Query(
        "SELECT records, head FROM agents_audit_anchors WHERE log_id = ?", (log_id,), fetch="one"
    )
    return None if row is None else (int(row[0]), str(row[1]))
