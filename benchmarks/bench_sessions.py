"""Checkpoint cost per step, per store, at N = 10 and N = 1,000 steps (should be flat).

The FACTS workload (scripted model, one ``add`` tool) through ``SessionRuntime.send``, which
commits a checkpoint after every step; µs per step and bytes stored per step, side by side
in one process. PostgreSQL is measured when ``AGENTS_TEST_POSTGRES_DSN`` (default
``postgresql://postgres@127.0.0.1:5432/test``) reaches a server.

Run: ``.venv/bin/python benchmarks/bench_sessions.py [--quick]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_steps import ADD

from agents import (
    AgentLoop,
    AgentState,
    InMemorySessionStore,
    SessionRuntime,
    SQLiteSessionStore,
)
from agents.testing import ScriptedDriver, call, reply

DSN = os.environ.get("AGENTS_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def per_step(store: Any, n: int) -> float:
    """µs per step of a session run of ``n`` steps, checkpointed every step."""
    script = [call("add", a=i, b=1) for i in range(n - 1)] + [reply("done")]

    def loop_factory(session: Any) -> AgentLoop:
        return AgentLoop(ScriptedDriver(script), tools=[ADD], max_steps=n)

    runtime = SessionRuntime(store, loop_factory)
    session_id = uuid.uuid4().hex
    runtime.create(AgentState.initial("You add."), session_id=session_id)
    start = time.perf_counter()
    final = runtime.send(session_id, "go")
    elapsed = time.perf_counter() - start
    assert final.state is not None
    assert final.state.step_count == n
    return elapsed / n * 1e6


def stored_bytes(connection: Any, session_id: str | None = None) -> int:
    rows = connection.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM steps").fetchone()[0]
    messages = connection.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM messages").fetchone()[
        0
    ]
    return int(rows) + int(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = (10, 300) if args.quick else (10, 1_000)
    stores: list[tuple[str, Any]] = [("memory", lambda: InMemorySessionStore())]
    folder = Path(tempfile.mkdtemp())
    stores.append(("sqlite", lambda: SQLiteSessionStore(folder / f"{uuid.uuid4().hex}.db")))
    try:
        from agents import PostgresSessionStore

        PostgresSessionStore(DSN).close()
        stores.append(("postgres", lambda: PostgresSessionStore(DSN)))
    except Exception as exc:
        print(f"postgres: not measured ({exc})")
    print(f"{'store':>9}  " + "  ".join(f"µs/step N={n:<5}" for n in sizes) + "  ratio")
    for name, make in stores:
        results = [min(per_step(make(), n) for _ in range(3 if n <= 100 else 1)) for n in sizes]
        print(
            f"{name:>9}  "
            + "  ".join(f"{r:>14.0f}" for r in results)
            + f"  {results[-1] / results[0]:>5.2f}x (target <= 1.25x)"
        )
    import sqlite3

    for n in sizes:
        path = folder / f"bytes-{n}.db"
        per_step(SQLiteSessionStore(path), n)
        with sqlite3.connect(path) as connection:
            total = stored_bytes(connection)
        print(f"sqlite bytes stored per step at N={n}: {total / n:.0f}")


if __name__ == "__main__":
    main()
