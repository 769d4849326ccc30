"""Run leases (``agents.persistence.leases``): which process runs a stored session now —
one holder at a time, across processes, and gone with a process that dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.persistence.leases import FileRunLeases, RunLeases


@pytest.fixture(params=["file", "postgresql"])
def make_leases(request: Any, tmp_path: Path) -> Iterator[Callable[[], RunLeases]]:
    """A maker of holders sharing one place: a lock file, or a PostgreSQL schema."""
    made: list[RunLeases] = []
    if request.param == "file":
        where = str(tmp_path / "sessions.sqlite-runs")

        def make() -> RunLeases:
            made.append(FileRunLeases(where))
            return made[-1]
    else:
        from agents.persistence.postgres import PostgresRunLeases

        dsn = request.getfixturevalue("postgres_dsn")

        def make() -> RunLeases:
            made.append(PostgresRunLeases(dsn))
            return made[-1]

    make.where = where if request.param == "file" else dsn  # type: ignore[attr-defined]
    make.kind = request.param  # type: ignore[attr-defined]
    yield make
    for leases in made:
        leases.close()


def test_a_lease_has_one_holder_at_a_time(make_leases):
    """While one holder has a session's lease, another cannot take it and sees it held;
    once given back, the other takes it. Other sessions' leases are free meanwhile."""
    first, second = make_leases(), make_leases()
    assert first.acquire("s1")
    assert not first.acquire("s1")  # not twice, even by its holder
    assert not second.acquire("s1")
    assert second.held("s1") and not first.held("s1")
    assert second.acquire("s2") and first.held("s2")
    first.release("s1")
    assert not second.held("s1")
    assert second.acquire("s1")
    assert first.held("s1")


def test_releasing_a_lease_one_does_not_hold_does_nothing(make_leases):
    """A holder giving back a lease it never took leaves the real holder's in place."""
    first, second = make_leases(), make_leases()
    assert first.acquire("s")
    second.release("s")
    assert second.held("s") and not second.acquire("s")


def test_closing_a_holder_gives_back_its_leases(make_leases):
    """A holder closed (a server shutting down) lets go of every lease it had."""
    first, second = make_leases(), make_leases()
    assert first.acquire("a") and first.acquire("b")
    first.close()
    assert second.acquire("a") and second.acquire("b")


_HOLDER = """
import sys, time
kind, where, session = sys.argv[1:4]
if kind == "file":
    from agents.persistence.leases import FileRunLeases
    leases = FileRunLeases(where)
else:
    from agents.persistence.postgres import PostgresRunLeases
    leases = PostgresRunLeases(where)
print("held" if leases.acquire(session) else "busy", flush=True)
time.sleep(600)
"""


def test_a_lease_goes_with_the_process_that_held_it(make_leases):
    """Another process's lease is held until that process dies — killed, without a word —
    and free at once after."""
    mine = make_leases()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_HOLDER), make_leases.kind, make_leases.where, "s"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        assert mine.held("s") and not mine.acquire("s")
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    for _ in range(100):  # the server sees its client gone within moments
        if mine.acquire("s"):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the dead process's lease was never freed")


def test_stores_in_two_schemas_of_one_database_do_not_share_leases(postgres_dsn):
    """Advisory locks belong to the whole database: the schema the sessions live in is part
    of a lease, so two applications sharing a database never block each other's runs."""
    from agents.persistence.postgres import PostgresRunLeases

    public = postgres_dsn.rsplit("options=", 1)[0].rstrip("?&")  # the database's own schema
    own, other = PostgresRunLeases(postgres_dsn), PostgresRunLeases(public)
    try:
        assert own.acquire("s") and other.acquire("s")
    finally:
        own.close()
        other.close()


def test_the_stores_offer_their_leases(tmp_path, postgres_dsn):
    """The SQLite store's leases are locks in a file beside it, the PostgreSQL store's
    advisory locks; a SQLite database in memory (one process) has none."""
    from agents import PostgresSessionStore, SQLiteSessionStore

    store = SQLiteSessionStore(tmp_path / "s.sqlite")
    leases = store.run_leases()
    assert isinstance(leases, FileRunLeases)
    assert leases.path == os.path.realpath(tmp_path / "s.sqlite-runs")
    leases.close()
    assert SQLiteSessionStore(":memory:").run_leases() is None
    postgres = PostgresSessionStore(postgres_dsn)
    held, other = postgres.run_leases(), postgres.run_leases()
    try:
        assert held.acquire("x") and not other.acquire("x")
    finally:
        held.close()
        other.close()
        postgres.close()


def test_a_postgresql_holder_shows_no_password():
    """The leases keep the DSN to connect, and never show its password."""
    from agents.persistence.postgres import PostgresRunLeases

    leases = PostgresRunLeases("postgresql://agent:hunter2-lease-secret@127.0.0.1:1/nowhere")
    assert "hunter2-lease-secret" not in repr(leases)
    from agents import StoreUnavailable

    with pytest.raises(StoreUnavailable) as failure:  # a server down: 503, not 422
        leases.acquire("s")
    shown = f"{failure.value!r} {failure.value} {failure.value.__cause__!r}"
    assert "hunter2-lease-secret" not in shown
    leases.close()


def test_a_lease_file_that_cannot_be_made_leaves_the_store_without_leases(tmp_path):
    """Where the file beside the database cannot be opened (here a folder has its name),
    the SQLite store offers no leases — it raised ``IsADirectoryError``, and ``agents
    serve`` could not start."""
    from agents import SQLiteSessionStore

    (tmp_path / "s.sqlite-runs").mkdir()
    store = SQLiteSessionStore(tmp_path / "s.sqlite")
    assert store.run_leases() is None
    store.close()


def test_a_postgresql_holder_whose_connection_was_ended_takes_its_leases_again(postgres_dsn):
    """The server ends the leases' connection (a restart, an idle timeout): the next call
    connects again and takes back the leases the holder had, so no other process sees its
    runs as free (they were all lost, with every later call failing)."""
    import psycopg

    from agents.persistence.postgres import PostgresRunLeases

    mine, other = PostgresRunLeases(postgres_dsn), PostgresRunLeases(postgres_dsn)
    try:
        assert mine.acquire("s")
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (mine._db.info.backend_pid,))
        assert not mine.held("t")  # connects again, and takes "s" back
        assert other.held("s") and not other.acquire("s")
        mine.release("s")
        assert other.acquire("s")
    finally:
        mine.close()
        other.close()
