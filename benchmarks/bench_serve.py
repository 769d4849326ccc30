"""``agents serve`` under load (issue 20): 100 sessions at once, each a 10-step scripted run
through the HTTP API (a message answered with Server-Sent Events) on SQLite; requests per
second, p50 and p99 latency of a run, and the server's time per step against the same runs
through the session runtime in process (same store kind, same checkpoints).

``python benchmarks/bench_serve.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore, ToolCall, tool
from agents.testing import FunctionDriver

STEPS = 10


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def answer(request: Any) -> Any:
    done = sum(1 for m in request.messages if m.role.value == "tool")
    if done < STEPS - 1:
        return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
    return "done"


def loop() -> AgentLoop:
    """The served agent: nine tool calls, then an answer."""
    return AgentLoop(FunctionDriver(answer), tools=[add], max_steps=STEPS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def one_session(client: httpx.AsyncClient, base: str) -> float:
    session = (await client.post(f"{base}/sessions", json={})).json()["session_id"]
    started = time.perf_counter()
    async with client.stream(
        "POST", f"{base}/sessions/{session}/messages", json={"message": "go"}, timeout=300
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("event: RunEnded"):
                break
    return time.perf_counter() - started


async def through_http(base: str, sessions: int) -> tuple[float, list[float]]:
    limits = httpx.Limits(max_connections=sessions + 10)
    async with httpx.AsyncClient(limits=limits) as client:
        started = time.perf_counter()
        latencies = await asyncio.gather(*(one_session(client, base) for _ in range(sessions)))
        return time.perf_counter() - started, list(latencies)


def in_process(folder: Path, sessions: int) -> float:
    runtime = SessionRuntime(SQLiteSessionStore(folder / "in-process.sqlite"), lambda s: loop())
    started = time.perf_counter()
    for _ in range(sessions):
        session = runtime.create(AgentState.initial())
        final = runtime.send(session.session_id, "go")
        assert final.state is not None
        assert final.state.step_count == STEPS
    return time.perf_counter() - started


def measure(sessions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agents",
                "serve",
                "bench_serve:loop",
                "--port",
                str(port),
                "--database",
                str(folder / "served.sqlite"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            wall, latencies = asyncio.run(through_http(f"http://127.0.0.1:{port}", sessions))
        finally:
            server.terminate()
            server.wait(10)
        local = in_process(folder, sessions)
    steps = sessions * STEPS
    ordered = sorted(latencies)
    return {
        "sessions": sessions,
        "steps per run": STEPS,
        "runs per second": sessions / wall,
        "p50 s": statistics.median(ordered),
        "p99 s": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
        "server ms per step": wall / steps * 1e3,
        "in-process ms per step": local / steps * 1e3,
        "ratio": wall / local,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(20 if args.quick else 100)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        print(f"{key:>24}: {value:,.3f}" if isinstance(value, float) else f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
