"""``PostgresSessionStore``: sessions in PostgreSQL (psycopg 3), for several processes or
machines sharing them. The only module that imports psycopg, lazily.

Same layout and rules as the SQLite store; the version check locks the session's row
(``SELECT ... FOR UPDATE``), so concurrent writers to one session are serialised and exactly
one wins per version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agents.clock import Clock, IdFactory
from agents.errors import SessionConflict, StateDecodeError
from agents.persistence.sql import Handle, SQLSessionStore

__all__ = ["PostgresSessionStore"]


class PostgresSessionStore(SQLSessionStore):
    """Sessions in the PostgreSQL database named by ``dsn`` (needs ``psycopg``: the
    ``postgres`` extra)."""

    _for_update = " FOR UPDATE"

    def __init__(
        self, dsn: str, *, clock: Clock | None = None, ids: IdFactory | None = None
    ) -> None:
        super().__init__(clock=clock, ids=ids)
        import psycopg

        self._errors = psycopg.errors
        self.path = re.sub(r"(password=|:)([^@\s/]+)@", r"\1[redacted]@", dsn)
        try:
            self._db: Any = psycopg.connect(dsn, autocommit=True)
            with self._transaction() as db:
                db.execute("SELECT pg_advisory_xact_lock(4242)")  # one schema creator
                self._check_schema(db)
        except psycopg.Error as exc:
            raise StateDecodeError(f"{self.path}: cannot use the database ({exc})", "$") from None

    @contextmanager
    def _transaction(self) -> Iterator[Handle]:
        with self._lock:
            try:
                with self._db.transaction():
                    yield Handle(self._db, "%s")
            except self._errors.UniqueViolation as exc:
                raise SessionConflict(f"a concurrent write won ({exc})") from None

    @contextmanager
    def _read(self) -> Iterator[Handle]:
        with self._lock:
            yield Handle(self._db, "%s")

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.path!r})"
