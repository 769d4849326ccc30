"""``agents serve`` under load: 100 sessions at once, each a 10-step scripted run
through the HTTP API (a message answered with Server-Sent Events) on SQLite; requests per
second, p50 and p99 latency of a run, and the server's time per step against the same runs
through the session runtime in process (same store kind, same checkpoints): five rounds,
alternating the sides, and the medians.

The server's own cost is its process's CPU time (every thread: the runs, uvicorn, the event
writer) per step, against the CPU time of the same runs in process: the clients, 100
streams read by httpx in this process, share the machine's two cores with the server and
take more CPU than it does, so the wall-clock ratio says as much about them.

"The same runs in process" are the same 100 sessions run at once, a thread each, as a
service running them without HTTP would: running concurrently costs CPU of its own
(threads contending for the interpreter), which is not the server's overhead. The same runs
one after another are measured and published too (``against one after another``).

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
import threading
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


def loop(steps: int = STEPS) -> AgentLoop:
    """The served agent: a tool call a step, then an answer (nine calls by default)."""

    def answer(request: Any) -> Any:
        done = sum(1 for m in request.messages if m.role.value == "tool")
        if done < steps - 1:
            return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
        return "done"

    return AgentLoop(FunctionDriver(answer), tools=[add], max_steps=steps)


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


def in_process(folder: Path, sessions: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of the same runs through the session runtime here."""
    runtime = SessionRuntime(SQLiteSessionStore(folder / "in-process.sqlite"), lambda s: loop())
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(sessions):
        session = runtime.create(AgentState.initial())
        final = runtime.send(session.session_id, "go")
        assert final.state is not None
        assert final.state.step_count == STEPS
    return time.perf_counter() - started, time.process_time() - cpu


def in_process_threads(folder: Path, sessions: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of the same runs through the session runtime here, all at
    once, a thread each (as a service running them without HTTP would): the cost of
    running concurrently, which the server pays too, without the server's own."""
    runtime = SessionRuntime(SQLiteSessionStore(folder / "threads.sqlite"), lambda s: loop())
    ids = [runtime.create(AgentState.initial()).session_id for _ in range(sessions)]
    finals: list[Any] = []
    threads = [
        threading.Thread(target=lambda i=i: finals.append(runtime.send(i, "go"))) for i in ids
    ]
    started, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    used = time.process_time() - cpu
    wall = time.perf_counter() - started
    assert len(finals) == sessions
    assert all(f.state.step_count == STEPS for f in finals)
    return wall, used


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system, all threads) a process has used so far (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(sessions: int, rounds: int = 3) -> dict[str, Any]:
    """``rounds`` rounds, each the runs through the server, then in process (alternated, so
    that the machine's drift falls on both sides); the medians of the rounds."""
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
        walls, served_cpu, local_walls, local_cpus = [], [], [], []
        thread_walls, thread_cpus = [], []
        latencies: list[float] = []
        try:
            _wait_listening(port)
            asyncio.run(through_http(f"http://127.0.0.1:{port}", 2))  # imports, first requests
            in_process(folder, 2)  # warm up
            for _ in range(rounds):
                before = cpu_seconds(server.pid)
                wall, found = asyncio.run(through_http(f"http://127.0.0.1:{port}", sessions))
                after = cpu_seconds(server.pid)
                walls.append(wall)
                latencies += found
                if after is not None and before is not None:
                    served_cpu.append(after - before)
                local, local_cpu = in_process(folder, sessions)
                local_walls.append(local)
                local_cpus.append(local_cpu)
                thread_wall, thread_cpu = in_process_threads(folder, sessions)
                thread_walls.append(thread_wall)
                thread_cpus.append(thread_cpu)
        finally:
            server.terminate()
            server.wait(10)
    steps = sessions * STEPS
    ordered = sorted(latencies)
    wall, together = statistics.median(walls), statistics.median(thread_walls)
    apart = statistics.median(local_walls)
    together_cpu, apart_cpu = statistics.median(thread_cpus), statistics.median(local_cpus)
    server_cpu = statistics.median(served_cpu) if served_cpu else None
    return {
        "sessions": sessions,
        "steps per run": STEPS,
        "rounds": rounds,
        "runs per second": sessions / wall,
        "p50 s": statistics.median(ordered),
        "p99 s": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
        "server ms per step": wall / steps * 1e3,
        "in-process ms per step": together / steps * 1e3,
        "ratio": wall / together,
        "server CPU ms per step": None if server_cpu is None else server_cpu / steps * 1e3,
        "in-process CPU ms per step": together_cpu / steps * 1e3,
        "CPU ratio": None if server_cpu is None else server_cpu / together_cpu,
        "CPU ratios by round": [
            round(a / b, 2) for a, b in zip(served_cpu, thread_cpus, strict=False)
        ],
        "in-process ms per step, one after another": apart / steps * 1e3,
        "in-process CPU ms per step, one after another": apart_cpu / steps * 1e3,
        "CPU ratio against one after another": (
            None if server_cpu is None else server_cpu / apart_cpu
        ),
    }


# -- one client against twenty ---------------------------------------------------------------
#
# The AG-UI endpoint (a new thread per run, three tool calls then an answer: the work of
# the side-by-side with pydantic-ai), its clients in a process of their own, each a
# closed loop: a run, then the next. The server's CPU per run and runs per second, with
# one client and with twenty, on SQLite and in memory.

AGUI_STEPS = 4


def serve_store(store: str, port: int) -> None:
    """The server of the clients' measure: ``store`` ``memory`` or a SQLite file."""
    from agents import InMemorySessionStore
    from agents.serve.asgi import app, run_server

    kept = InMemorySessionStore() if store == "memory" else SQLiteSessionStore(store)
    run_server(app(lambda session: loop(AGUI_STEPS), store=kept), "127.0.0.1", port)


async def agui_clients(base: str, clients: int, runs: int) -> float:
    """Seconds for ``runs`` AG-UI runs by ``clients`` closed-loop clients (a warm-up
    first)."""
    numbers = iter(range(10**9))

    async def one(client: httpx.AsyncClient) -> None:
        body = {
            "threadId": f"t{next(numbers)}",
            "runId": "r",
            "messages": [{"id": "u", "role": "user", "content": "go"}],
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": None,
        }
        async with client.stream("POST", f"{base}/ag-ui", json=body, timeout=300) as reply:
            assert reply.status_code == 200
            async for line in reply.aiter_lines():
                if "RUN_FINISHED" in line or "RUN_ERROR" in line:
                    break

    limits = httpx.Limits(max_connections=clients + 5)
    async with httpx.AsyncClient(limits=limits) as client:
        for _ in range(5):
            await one(client)
        left = [runs]

        async def worker() -> None:
            while left[0] > 0:
                left[0] -= 1
                await one(client)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return time.perf_counter() - started


def measure_clients(runs: int, rounds: int) -> dict[str, Any]:
    """For each store, one client against twenty (alternated, ``rounds`` rounds, a server
    process per measure): the medians of runs per second and of the server's CPU per run."""
    out: dict[str, Any] = {}
    here = str(Path(__file__).resolve())
    for store in ("sqlite", "memory"):
        found: dict[int, dict[str, list[float]]] = {1: {"rps": [], "cpu": []}}
        found[20] = {"rps": [], "cpu": []}
        for _ in range(rounds):
            for clients in (1, 20):
                with tempfile.TemporaryDirectory() as directory:
                    port = free_port()
                    kind = "memory" if store == "memory" else str(Path(directory) / "s.sqlite")
                    server = subprocess.Popen(
                        [sys.executable, here, "--serve", kind, str(port)],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    try:
                        _wait_listening(port)
                        before = cpu_seconds(server.pid)
                        done = subprocess.run(
                            [sys.executable, here, "--clients", str(port), str(clients), str(runs)],
                            capture_output=True,
                            text=True,
                            check=True,
                        )
                        after = cpu_seconds(server.pid)
                    finally:
                        server.terminate()
                        server.wait(10)
                    wall = float(done.stdout.strip().splitlines()[-1])
                    found[clients]["rps"].append(runs / wall)
                    if before is not None and after is not None:
                        found[clients]["cpu"].append((after - before) / runs * 1e3)
        one, twenty = found[1], found[20]
        rps = [statistics.median(one["rps"]), statistics.median(twenty["rps"])]
        cpu = [statistics.median(one["cpu"]), statistics.median(twenty["cpu"])]
        out[store] = {
            "runs per second, 1 client": rps[0],
            "runs per second, 20 clients": rps[1],
            "runs per second ratio": rps[1] / rps[0],
            "server CPU ms per run, 1 client": cpu[0],
            "server CPU ms per run, 20 clients": cpu[1],
            "server CPU per run ratio": cpu[1] / cpu[0],
        }
    return out


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:  # the server of measure_clients, in a process
        serve_store(sys.argv[2], int(sys.argv[3]))
        return
    if sys.argv[1:2] == ["--clients"]:  # its clients, in a process of their own
        port, clients, runs = map(int, sys.argv[2:5])
        print(asyncio.run(agui_clients(f"http://127.0.0.1:{port}", clients, runs)))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(20 if args.quick else 100, 1 if args.quick else 5)
    found["clients"] = measure_clients(20 if args.quick else 800, 1 if args.quick else 3)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        if key == "clients":
            for store, figures in value.items():
                for name, figure in figures.items():
                    print(f"{store + ', ' + name:>45}: {figure:,.3f}")
            continue
        print(f"{key:>45}: {value:,.3f}" if isinstance(value, float) else f"{key:>45}: {value}")


if __name__ == "__main__":
    main()
