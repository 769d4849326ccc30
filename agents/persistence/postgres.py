"""``PostgresSessionStore`` and ``AsyncPostgresSessionStore``: sessions in PostgreSQL
(psycopg 3), for several processes or machines sharing them. The only module that imports
psycopg, lazily.

Same layout and rules as the SQLite store; the version check locks the session's row
(``SELECT ... FOR UPDATE``), so concurrent writers to one session are serialised and exactly
one wins per version. Both stores run the same sans-IO plans of ``agents.persistence.sql``:
the blocking one on ``psycopg.Connection``, the async one on ``psycopg.AsyncConnection``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Self, cast

from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.errors import SessionConflict, StateDecodeError, StoreUnavailable, UsageError
from agents.persistence.blob_rows import SQLBlobStore
from agents.persistence.known import Known
from agents.persistence.leases import lease_key
from agents.persistence.plans import Handle, Many, Plan, Query, T, drive
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
from agents.persistence.sql_store import SQLSessionStore
from agents.records.redaction import REDACTED, dsn_secrets, environment_secrets, redacted_dsn, scrub
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["AsyncPostgresSessionStore", "PostgresRunLeases", "PostgresSessionStore"]


_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


class _Hidden:
    """A DSN kept for connecting, shown as ``[redacted]`` wherever the object is shown."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return REDACTED


def _unusable(path: str, dsn: str, exc: Exception) -> StateDecodeError:
    """A connection failure, without the DSN's password (a server may echo it)."""
    return StateDecodeError(f"{path}: cannot use the database ({_reason(dsn, exc)})")


def _unavailable(path: str, dsn: str, exc: Exception) -> StoreUnavailable:
    """The server's failure during a call, without the DSN's password."""
    return StoreUnavailable(f"{path}: the database failed ({_reason(dsn, exc)})")


def _reason(dsn: str, exc: Exception) -> str:
    text = " ".join(str(exc).split())  # one line: the server's message may hold several
    return scrub(text, (*dsn_secrets(dsn), *environment_secrets(os.environ)))


class PostgresSessionStore(SQLSessionStore):
    """Sessions in the PostgreSQL database named by ``dsn`` (needs ``psycopg``: the
    ``postgres`` extra)."""

    _for_update = " FOR UPDATE"

    def __init__(
        self, dsn: str, *, clock: Clock | None = None, ids: IdFactory | None = None
    ) -> None:
        super().__init__(clock=clock, ids=ids)
        import psycopg

        self._psycopg = psycopg
        self._errors = psycopg.errors
        self.path = redacted_dsn(dsn)
        self._dsn = _Hidden(dsn)
        failure = None
        try:
            self._db: Any = psycopg.connect(dsn, autocommit=True)
            with self._transaction() as db:
                db.perform(Query("SELECT pg_advisory_xact_lock(4242)"))  # one schema creator
                self._check_schema(db)
        except psycopg.Error as exc:
            failure = _unusable(self.path, dsn, exc)
        if failure is not None:  # raised here: the driver's error (and the DSN) not chained
            raise failure

    @contextmanager
    def _transaction(self) -> Iterator[Handle]:
        with self._lock, self._available():
            try:
                with self._db.transaction():
                    yield Handle(self._db, "%s")
            except self._errors.UniqueViolation as exc:
                raise SessionConflict(f"a concurrent write won ({exc})") from None

    @contextmanager
    def _read(self) -> Iterator[Handle]:
        with self._lock, self._available(), self._db.transaction():  # one snapshot for all
            self._db.execute(_SNAPSHOT)  # the read's SELECTs
            yield Handle(self._db, "%s")

    @contextmanager
    def _available(self) -> Iterator[None]:
        """A connection the server ended (a restart, a failover) replaced before a call;
        the server's operational failures as ``StoreUnavailable`` (without the DSN)."""
        failure = None
        try:
            if self._db.broken:
                self._db = self._psycopg.connect(self._dsn.value, autocommit=True)
            yield
        except self._psycopg.OperationalError as exc:
            failure = _unavailable(self.path, self._dsn.value, exc)
        if failure is not None:  # raised here: the driver's error (and the DSN) not chained
            raise failure

    def run_leases(self) -> PostgresRunLeases:
        """Leases telling the processes sharing this database which of them runs a
        session (``agents.persistence.leases``), on a connection of their own."""
        return PostgresRunLeases(self._dsn.value)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.path!r})"


_TRY_LOCK: Final = "SELECT pg_try_advisory_lock(%s)"


class PostgresRunLeases:
    """Run leases as PostgreSQL advisory locks (session-level, a 63-bit key for each
    session id and schema) held on a connection of their own: the server releases them
    when the connection goes, with the process. If that connection is lost, so are the
    leases: the next call connects again and takes them again, unless another process took
    one meanwhile (which may then resume that run; its own store connection was lost too,
    as a rule, and the run fails at its next checkpoint, the other's save conflicting)."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self._dsn = _Hidden(dsn)
        self.path = redacted_dsn(dsn)
        self._lock = threading.Lock()
        self._db: Any = None
        self._mine: set[str] = set()
        self._schema = ""
        self._closed = False

    def _call(self, text: str, session_id: str) -> bool:
        """Run the lock function ``text`` on the session's lock (the caller holds
        ``_lock``); once more on a new connection when the server had ended this one
        (found only by using it: a lock function is safe to send again, the first one's
        lock having gone with its connection)."""
        if self._closed:
            raise UsageError(f"the run leases on {self.path} are closed")
        failure = None
        for _ in range(2):
            try:
                if self._db is None or self._db.closed or self._db.broken:
                    self._connect()
                row = self._db.execute(text, (self._key(session_id),)).fetchone()
                return bool(row[0])
            except self._psycopg.Error as exc:
                failure = _unavailable(self.path, self._dsn.value, exc)
                if self._db is None or not self._db.broken:
                    break
        assert failure is not None
        raise failure  # the driver's error (and the DSN) not chained

    def _connect(self) -> None:
        self._db = self._psycopg.connect(self._dsn.value, autocommit=True)
        # advisory locks are the database's: the schema the sessions are in tells the
        # stores sharing one database apart
        self._schema = str(self._db.execute("SELECT current_schema()").fetchone()[0])
        lost, self._mine = self._mine, set()  # gone with the old connection: taken again,
        for held in lost:  # unless another process has one by now
            if self._db.execute(_TRY_LOCK, (self._key(held),)).fetchone()[0]:
                self._mine.add(held)

    def _key(self, session_id: str) -> int:
        return lease_key(f"{self._schema}\0{session_id}")

    def acquire(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._mine:  # advisory locks nest within a connection: not twice
                return False
            taken = self._call(_TRY_LOCK, session_id)
            if taken:
                self._mine.add(session_id)
            return taken

    def release(self, session_id: str) -> None:
        with self._lock:
            if session_id in self._mine:
                self._mine.discard(session_id)
                self._call("SELECT pg_advisory_unlock(%s)", session_id)

    def held(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._mine:
                return False
            if not self._call(_TRY_LOCK, session_id):
                return True
            self._call("SELECT pg_advisory_unlock(%s)", session_id)
            return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._mine.clear()
            if self._db is not None:
                self._db.close()  # the server releases every lock of the connection

    def __repr__(self) -> str:
        return f"PostgresRunLeases({self.path!r})"


class AsyncPostgresSessionStore:
    """The asyncio twin of ``PostgresSessionStore``: same tables, same rules, every method a
    coroutine. Open it with ``await AsyncPostgresSessionStore.open(dsn)`` (or
    ``async with``); one connection, its statements serialised by an ``asyncio.Lock``.
    ``blobs`` is the blobs table as a ``BlobStore``, as the blocking store's: a loaded
    part reads its bytes where no ``await`` can be (a driver building a request), so it
    reads them over a blocking connection of its own, opened when first needed."""

    _for_update = " FOR UPDATE"

    def __init__(
        self, dsn: str, *, clock: Clock | None = None, ids: IdFactory | None = None
    ) -> None:
        self._dsn = _Hidden(dsn)
        self._clock = clock or SystemClock()
        self._ids = ids or RandomIds()
        self._lock = asyncio.Lock()
        self._known = Known()  # what the rows hold, as this store wrote or read them
        self._db: Any = None
        self.path = redacted_dsn(dsn)
        self._blocking_db: Any = None
        self._blocking_lock = threading.Lock()
        self.blobs = SQLBlobStore(self._blocking, self._blocking)  # the bytes parts refer to

    @classmethod
    async def open(
        cls, dsn: str, *, clock: Clock | None = None, ids: IdFactory | None = None
    ) -> Self:
        """Connect and create the tables if missing."""
        store = cls(dsn, clock=clock, ids=ids)
        await store.connect()
        return store

    async def connect(self) -> None:
        import psycopg

        self._psycopg = psycopg
        self._errors = psycopg.errors
        failure = None
        try:
            self._db = await psycopg.AsyncConnection.connect(self._dsn.value, autocommit=True)
            await self._run(_locked_schema_plan(self.path), write=True)
        except psycopg.Error as exc:
            failure = _unusable(self.path, self._dsn.value, exc)
        if failure is not None:  # raised here: the driver's error (and the DSN) not chained
            raise failure

    async def __aenter__(self) -> Self:
        if self._db is None:
            await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection (and the blobs' own)."""
        async with self._lock:
            if self._db is not None:
                await self._db.close()
        with self._blocking_lock:
            if self._blocking_db is not None:
                self._blocking_db.close()

    def _blocking(self, plan: Plan[T]) -> T:
        """Run ``plan`` (the blobs table's) in a transaction of the blocking connection."""
        with self._blocking_lock:
            failure = None
            try:
                if self._blocking_db is None or self._blocking_db.broken:
                    self._blocking_db = self._psycopg.connect(self._dsn.value, autocommit=True)
                with self._blocking_db.transaction():
                    return drive(plan, Handle(self._blocking_db, "%s"))
            except self._psycopg.OperationalError as exc:
                failure = _unavailable(self.path, self._dsn.value, exc)
            raise failure

    async def _run(self, plan: Plan[T], *, write: bool) -> T:
        if self._db is None:
            raise UsageError(
                "the store is not open: use `await AsyncPostgresSessionStore.open(dsn)`"
            )
        async with self._lock:
            failure = None
            try:
                if self._db.broken:  # the server ended it (a restart, a failover)
                    self._db = await self._psycopg.AsyncConnection.connect(
                        self._dsn.value, autocommit=True
                    )
                if not write:
                    async with self._db.transaction():  # one snapshot for all the SELECTs
                        await self._db.execute(_SNAPSHOT)
                        return await _drive(plan, self._db)
                async with self._db.transaction():
                    return await _drive(plan, self._db)
            except self._errors.UniqueViolation as exc:
                raise SessionConflict(f"a concurrent write won ({exc})") from None
            except self._psycopg.OperationalError as exc:
                failure = _unavailable(self.path, self._dsn.value, exc)
            raise failure  # the driver's error (and the DSN) not chained

    async def create(
        self, state: AgentState, session_id: str | None = None, parent_session_id: str | None = None
    ) -> Session:
        session = new_session(state, session_id, parent_session_id, self._clock, self._ids)
        return await self._run(create_plan(session, self._known, self.blobs), write=True)

    async def save(self, session: Session) -> Session:
        """Commit ``session.state`` if the stored version is still ``session.version``."""
        plan = save_plan(session, self._clock.now(), self._for_update, self._known, self.blobs)
        return await self._run(plan, write=True)

    async def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        """Commit a state whose last step is ``step_execution``: O(step)."""
        check_checkpoint(session, step_execution)
        return await self.save(session)

    async def load(self, session_id: str) -> Session:
        plan = load_plan(self.path, session_id, self._known, self.blobs)
        return await self._run(plan, write=False)

    async def list(self) -> list[Session]:
        return await self._run(list_plan(self.path), write=False)

    async def exists(self, session_id: str) -> bool:
        """Whether a session is stored under ``session_id`` (without loading it)."""
        return await self._run(exists_plan(session_id), write=False)

    async def delete(self, session_id: str) -> None:
        self._known.forget(session_id)
        await self._run(delete_plan(session_id), write=True)

    def __repr__(self) -> str:
        return f"AsyncPostgresSessionStore({self.path!r})"


def _locked_schema_plan(path: str) -> Plan[None]:
    yield Query("SELECT pg_advisory_xact_lock(4242)")  # one schema creator at a time
    yield from schema_plan(path)


async def _drive(plan: Plan[T], connection: Any) -> T:
    """Run ``plan`` on a ``psycopg.AsyncConnection``."""
    result: Any = None
    while True:
        try:
            op = plan.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)
        if type(op) is Many:
            result = None
            if op.rows:
                async with connection.cursor() as cursor:
                    await cursor.executemany(op.text.replace("?", "%s"), op.rows)
            continue
        assert type(op) is Query
        cursor = await connection.execute(op.text.replace("?", "%s"), op.parameters)
        if op.fetch == "one":
            result = await cursor.fetchone()
        elif op.fetch == "all":
            result = await cursor.fetchall()
        else:
            result = cursor.rowcount if op.fetch == "count" else None
