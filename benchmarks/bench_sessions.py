"""Checkpoint cost per step, per store, at N = 10 and N = 1,000 steps (should be flat).

The tool-loop workload (scripted model, one ``add`` tool) through ``SessionRuntime.send``, which
commits a checkpoint after every step; µs per step and bytes stored per step, side by side
in one process. PostgreSQL is measured when ``AGENTS_TEST_POSTGRES_DSN`` (default
``postgresql://postgres@127.0.0.1:5432/test``) reaches a server. LangGraph's ``SqliteSaver``
runs the same workload (an agent node and a tool node per step) when ``langgraph`` and
``langgraph-checkpoint-sqlite`` are installed, at N = 10 and N = 300 only: its checkpoints
grow with the history, and N = 1,000 would write about half a gigabyte.

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
    compare_langgraph(folder)


def langgraph_per_step(path: Path, n: int) -> tuple[float, float]:
    """µs and checkpoint bytes per step of the same workload on LangGraph + SqliteSaver."""
    import sqlite3

    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    def agent(state: Any) -> Any:
        done = sum(1 for m in state["messages"] if isinstance(m, ToolMessage))
        if done >= n - 1:
            return {"messages": [AIMessage(content="done")]}
        call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"c{done}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    def tools(state: Any) -> Any:
        call = state["messages"][-1].tool_calls[0]
        result = str(call["args"]["a"] + call["args"]["b"])
        return {"messages": [ToolMessage(content=result, tool_call_id=call["id"])]}

    def route(state: Any) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    connection = sqlite3.connect(path, check_same_thread=False)
    app = graph.compile(checkpointer=SqliteSaver(connection))
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 4 * n}
    start = time.perf_counter()
    out = app.invoke({"messages": [HumanMessage("go")]}, config)
    elapsed = time.perf_counter() - start
    assert out["messages"][-1].content == "done"
    size = connection.execute(
        "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint)), 0) FROM checkpoints)"
        " + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
    ).fetchone()[0]
    connection.close()
    return elapsed / n * 1e6, size / n


def compare_langgraph(folder: Path) -> None:
    try:
        import langgraph.checkpoint.sqlite
        import langgraph.graph  # noqa: F401
    except ImportError as exc:
        print(f"langgraph SqliteSaver: not measured ({exc})")
        return
    import sqlite3

    print("same workload, N = 10 and N = 300:")
    for n in (10, 300):
        path = folder / f"ours-{n}.db"
        ours = min(per_step(SQLiteSessionStore(path), n) for _ in range(3))
        with sqlite3.connect(path) as connection:
            ours_bytes = stored_bytes(connection) / (3 * n)
        theirs, theirs_bytes = min(
            langgraph_per_step(folder / f"lg-{n}-{i}.db", n) for i in range(3)
        )
        print(
            f"  N={n:<4} agents sqlite {ours:>6.0f} µs/step {ours_bytes:>7.0f} B/step   "
            f"langgraph SqliteSaver {theirs:>6.0f} µs/step {theirs_bytes:>8.0f} B/step   "
            f"({theirs / ours:.1f}x time, {theirs_bytes / ours_bytes:.0f}x bytes)"
        )


if __name__ == "__main__":
    main()
