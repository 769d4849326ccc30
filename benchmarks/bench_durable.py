"""What durability costs: an agent run as a DBOS workflow against the same run in process.

The tool-loop workload (a model asking for one ``add`` call per step, then answering) at N = 10
and N = 100 steps: in process (``loop.run``), then as a DBOS workflow on a SQLite system
database and on PostgreSQL (a fresh database on the server of ``AGENTS_TEST_POSTGRES_DSN``,
default ``postgresql://postgres@127.0.0.1:5432/test``; skipped when none answers). Every
agent step is two DBOS steps (the model call and the tool call), each checkpointed before
the run goes on. µs per agent step, side by side in one process.

Against it, on the same database in the same process: a **raw DBOS** workflow doing the same
work by hand — per agent step one DBOS step calling the same model function on
the conversation as plain dicts and one calling ``add``, each result stored by the same
serializer — so the ratio is what this library adds on top of DBOS itself (records, the
step machine, the recorded clock and ids).

Run: ``.venv/bin/python benchmarks/bench_durable.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_steps import ADD
from dbos import DBOS

from agents import AgentLoop, AgentState, InferenceRequest, ToolCall
from agents.durable.dbos import DurableAgent, launch, shutdown
from agents.testing import FunctionDriver

DSN = os.environ.get("AGENTS_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def model(request: InferenceRequest) -> list[ToolCall] | str:
    """Asks for ``add`` until the conversation holds the number of steps in the first user
    message (read in O(1): the system prompt, the user message, then a pair per step)."""
    goal = int(request.messages[1].content)
    done = (len(request.messages) - 2) // 2
    if done < goal - 1:
        return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
    return "done"


LOOP = AgentLoop(FunctionDriver(model), tools=[ADD], max_steps=None)
AGENT = DurableAgent(LOOP, "bench")


def _raw_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The same decision as ``model``, on plain dicts, answering as a chat API would."""
    goal = int(messages[1]["content"])
    done = (len(messages) - 2) // 2
    if done < goal - 1:
        call = {"id": f"c{done}", "name": "add", "arguments": {"a": done, "b": 1}}
        return {"content": "", "tool_calls": [call]}
    return {"content": "done", "tool_calls": []}


def _raw_tool(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"value": ADD.function(**arguments)}


@DBOS.workflow(name="bench.raw")
def raw_workflow(goal: int) -> int:
    """The raw DBOS counterpart: a conversation of plain dicts, a DBOS step per model
    call and per tool call."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You add numbers."},
        {"role": "user", "content": str(goal)},
    ]
    steps = 0
    while True:
        steps += 1
        answer = DBOS.run_step({"name": "infer"}, _raw_model, messages)
        messages.append({"role": "assistant", **answer})
        if not answer["tool_calls"]:
            return steps
        for call in answer["tool_calls"]:
            result = DBOS.run_step({"name": "tool"}, _raw_tool, call["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(result)})


def raw_run(state: AgentState) -> Any:
    steps = raw_workflow(int(state.messages[-1].content))

    class Done:  # what per_step checks
        step_count = steps

    return Done


def initial(n: int) -> AgentState:
    return AgentState.initial("You add numbers.", messages=[str(n)])


def per_step(run: object, n: int, repeats: int) -> float:
    """Median µs per step over ``repeats`` runs of ``n`` steps."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        final = run(initial(n))  # type: ignore[operator]
        times.append(time.perf_counter() - start)
        assert final.step_count == n, final.step_count
    return statistics.median(times) / n * 1e6


def measure(
    label: str, url: str, sizes: dict[int, int], plain: dict[int, float]
) -> dict[str, dict[int, float]]:
    """µs per agent step, ours and raw DBOS, interleaved run by run at each size."""
    launch(url)
    out: dict[str, dict[int, float]] = {"agents": {}, "raw DBOS": {}}
    try:
        AGENT.run(initial(3))  # warm up: connections, tables
        raw_run(initial(3))
        for n, repeats in sizes.items():
            ours, raw = [], []
            for _ in range(repeats):
                ours.append(per_step(AGENT.run, n, 1))
                raw.append(per_step(raw_run, n, 1))
            durable, bare = statistics.median(ours), statistics.median(raw)
            out["agents"][n], out["raw DBOS"][n] = durable, bare
            print(
                f"{label:>8}  N={n:<4} {durable:9.0f} µs/step   raw DBOS {bare:6.0f} µs/step"
                f"   {durable / bare:5.2f}x   in process {plain[n]:6.0f} µs/step"
                f"   ({durable / 2:.0f} µs per DBOS step)"
            )
    finally:
        shutdown()
    return out


def postgres_url() -> str | None:
    try:
        import psycopg
    except ImportError:
        return None
    try:
        admin = psycopg.connect(DSN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        return None
    name = f"agents_bench_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE DATABASE {name}")
    admin.close()
    return DSN.partition("?")[0].rsplit("/", 1)[0] + "/" + name


def drop(url: str) -> None:
    import psycopg

    with psycopg.connect(DSN, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {url.rsplit('/', 1)[1]} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON last")
    args = parser.parse_args()
    sizes = {10: 3, 100: 1} if args.quick else {10: 9, 100: 3}
    plain = {n: per_step(LOOP.run, n, 50) for n in sizes}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = measure("sqlite", f"sqlite:///{folder}/system.sqlite", sizes, plain)
    url = postgres_url()
    if url is None:
        print(f"postgres: no server at {DSN}; skipped")
    else:
        try:
            results["postgres"] = measure("postgres", url, sizes, plain)
        finally:
            drop(url)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
