"""``SQLiteSessionStore``: the embedded default (stdlib ``sqlite3``, WAL).

The layout and the write rules are ``agents.persistence.sql``'s: every completed step and
every message is its own row, so a checkpoint costs O(step); every write is one transaction
(``BEGIN IMMEDIATE``) that checks the session's version first.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from agents.core.clock import Clock, IdFactory
from agents.errors import InvalidArgument, StateDecodeError, StoreUnavailable
from agents.persistence.leases import FileRunLeases
from agents.persistence.plans import Handle
from agents.persistence.sql_store import SQLSessionStore
from agents.records.arguments import amount
from agents.records.arguments import path as checked_path
from agents.shell.files import unusable

__all__ = ["SQLiteSessionStore"]


class SQLiteSessionStore(SQLSessionStore):
    """Sessions in one SQLite file. ``synchronous="NORMAL"`` (the default) survives a killed
    process; ``"FULL"`` also survives power loss. A write waits up to ``timeout`` seconds
    for another connection's to end (then ``StoreUnavailable``)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        timeout: float = 30.0,
        clock: Clock | None = None,
        ids: IdFactory | None = None,
    ) -> None:
        super().__init__(clock=clock, ids=ids)
        if synchronous not in ("NORMAL", "FULL"):
            raise InvalidArgument(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = os.fspath(checked_path(path, "SQLiteSessionStore: path"))
        timeout = amount(timeout, "timeout", zero=True)
        try:
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=timeout
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            with self._transaction() as db:
                self._check_schema(db)
        except sqlite3.DatabaseError as exc:
            raise StateDecodeError(f"{self.path}: not a usable SQLite store ({exc})", "$") from None
        except ValueError as exc:  # (sqlite3's refusal of a NUL character)
            why = unusable(exc)
            raise StateDecodeError(f"{self.path}: not a usable SQLite store ({why})", "$") from None

    @contextmanager
    def _transaction(self) -> Iterator[Handle]:
        with self._lock, self._available():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield Handle(self._db, "?")
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # not when SQLite rolled back by itself
                    self._db.execute("ROLLBACK")
                raise

    @contextmanager
    def _read(self) -> Iterator[Handle]:
        with self._lock, self._available():
            self._db.execute("BEGIN")  # deferred: one WAL snapshot for all the SELECTs
            try:
                yield Handle(self._db, "?")
            finally:
                if self._db.in_transaction:
                    self._db.execute("COMMIT")

    @contextmanager
    def _available(self) -> Iterator[None]:
        """SQLite's operational failures (locked past the timeout, disk full, I/O) as
        ``StoreUnavailable``."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"{self.path}: {exc}") from None

    def run_leases(self) -> FileRunLeases | None:
        """Leases telling the processes sharing this file which of them runs a session
        (``agents.persistence.leases``): locks in the file ``<path>-runs``. ``None`` for
        a database in memory (one process), where the system has no ``fcntl``, or where
        that file cannot be made (a folder no process may write to: none runs a session)."""
        if self.path in ("", ":memory:"):
            return None
        try:
            return FileRunLeases(self.path + "-runs")
        except (ImportError, OSError):
            return None

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"
