"""Concurrency: 1,000 runs at once through ``arun``, 5 steps each, the model taking
20 ms a call, against the ideal time (5 x 20 ms) — and where the time above the ideal goes.

The runner (``python -m benchmarks``) takes its concurrency row from ``concurrent`` here;
this script also prints the profile that row is written up with in docs/benchmarks.md:

- the ratio with the synchronous ``add`` tool as a user writes it (on a worker thread) and
  with ``thread=False`` (on the event loop), the garbage collector on and off;
- the same program without the engine (a coroutine appending two dicts a step): what
  asyncio's own scheduling costs, with and without a hand-off to a worker thread a step;
- the CPU of the 5,000 steps alone (no model latency), on and off the collector, against
  the same runs one after another through ``run``;
- the collector's work during a batch, by generation, and the objects it tracks for each
  run in flight;
- how long a tool call waits for its result on a worker thread and on the event loop
  (from the tool interceptor's ``call_next`` to its result).

``python benchmarks/bench_concurrency.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agents import AgentLoop, AgentState, InferenceRequest, ToolCall, tool
from agents.testing import FunctionDriver
from agents.tools.threads import to_thread


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ON_A_THREAD = tool(add)
ON_THE_LOOP = tool(add, thread=False)


def answer(request: InferenceRequest, steps: int) -> list[ToolCall] | str:
    """The benchmarks' model: a call of ``add`` at each of the first ``steps - 1`` steps
    (counted from the request's messages), then the answer."""
    done = (len(request.messages) - 2) // 2
    if done < steps - 1:
        return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
    return "done"


def agent(tool_: Any, latency: float, steps: int, *, interceptors: tuple[Any, ...] = ()) -> Any:
    """The benchmark's agent: ``steps - 1`` tool calls, then an answer, each model call
    taking ``latency`` seconds."""

    async def model(request: InferenceRequest) -> list[ToolCall] | str:
        await asyncio.sleep(latency)
        return answer(request, steps)

    return AgentLoop(
        FunctionDriver(model), tools=[tool_], interceptors=interceptors, max_steps=steps
    )


INITIAL = AgentState.initial("You add numbers.", messages=["go"])


def _batch(loop: AgentLoop, runs: int, steps: int) -> float:
    async def everything() -> float:
        start = time.perf_counter()
        finals = await asyncio.gather(*(loop.arun(INITIAL) for _ in range(runs)))
        elapsed = time.perf_counter() - start
        assert all(f.step_count == steps for f in finals)
        return elapsed

    return asyncio.run(everything())


def concurrent(tool_: Any, runs: int, latency: float, steps: int) -> float:
    """Seconds for ``runs`` runs at once (best of three after a warm-up)."""
    loop = agent(tool_, latency, steps)
    _batch(loop, runs, steps)  # warm up
    return min(_batch(loop, runs, steps) for _ in range(3))


def bare(runs: int, latency: float, steps: int, *, hand_off: bool) -> float:
    """The same shape without the engine: each run sleeps ``latency`` and appends two
    dicts a step (``hand_off``: and hands one call a step to a worker thread)."""

    async def one() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "system"}, {"role": "user"}]
        for done in range(steps):
            await asyncio.sleep(latency)
            result = await to_thread(add, done, 1) if hand_off else add(done, 1)
            messages += [{"role": "assistant", "step": done}, {"role": "tool", "r": result}]
        return messages

    async def everything() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(runs)))
        return time.perf_counter() - start

    asyncio.run(everything())
    return min(asyncio.run(everything()) for _ in range(3))


@contextmanager
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def one_after_another(runs: int, steps: int) -> float:
    """The same runs through ``run`` one after another (a sync model, the tool inline)."""

    loop = AgentLoop(
        FunctionDriver(lambda request: answer(request, steps)), tools=[ON_THE_LOOP], max_steps=steps
    )
    best = float("inf")
    for _ in range(4):
        start = time.perf_counter()
        for _ in range(runs):
            loop.run(INITIAL)
        best = min(best, time.perf_counter() - start)
    return best


def collections(runs: int, latency: float, steps: int) -> dict[int, tuple[float, float]]:
    """Per batch: collections of each generation and milliseconds in them."""
    loop = agent(ON_THE_LOOP, latency, steps)
    _batch(loop, runs, steps)
    found = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
    began = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            entry = found[info["generation"]]
            entry[0] += 1
            entry[1] += time.perf_counter() - began[0]

    batches = 3
    gc.collect()
    gc.callbacks.append(callback)
    try:
        for _ in range(batches):
            _batch(loop, runs, steps)
    finally:
        gc.callbacks.remove(callback)
    return {g: (n / batches, seconds * 1000 / batches) for g, (n, seconds) in found.items()}


def in_flight(runs: int, latency: float, steps: int) -> dict[str, float]:
    """Objects the collector tracks for each run in flight (counted mid-batch, after a
    full collection), and what a full collection takes then and before the batch."""
    loop = agent(ON_THE_LOOP, latency, steps)

    def full() -> float:
        start = time.perf_counter()
        gc.collect()
        return (time.perf_counter() - start) * 1000

    async def counted() -> dict[str, float]:
        gc.collect()
        idle = full()
        before = len(gc.get_objects())
        batch = asyncio.gather(*(loop.arun(INITIAL) for _ in range(runs)))
        await asyncio.sleep(latency * (steps / 2 + 0.25))  # mid-run, between two steps
        busy = full()
        tracked = len(gc.get_objects()) - before
        await batch
        return {
            "tracked objects per run in flight": tracked / runs,
            "a full collection, ms, mid-batch": busy,
            "a full collection, ms, before it": idle,
        }

    return asyncio.run(counted())


def waits(tool_: Any, runs: int, latency: float, steps: int) -> tuple[float, float]:
    """Median and 90th percentile, in ms, of a tool call's wait for its result."""
    seen: list[float] = []

    async def timed(call: ToolCall, call_next: Callable[[ToolCall], Awaitable[Any]]) -> Any:
        start = time.perf_counter()
        result = await call_next(call)
        seen.append(time.perf_counter() - start)
        return result

    loop = agent(tool_, latency, steps, interceptors=(_Interceptor(timed),))
    _batch(loop, runs, steps)
    seen.clear()
    _batch(loop, runs, steps)
    deciles = statistics.quantiles(seen, n=10)
    return deciles[4] * 1000, deciles[8] * 1000


class _Interceptor:
    def __init__(self, function: Any) -> None:
        self.intercept_tool = function


def measure(runs: int, latency: float, steps: int) -> dict[str, Any]:
    ideal = latency * steps
    found: dict[str, Any] = {"runs": runs, "steps": steps, "ideal ms": ideal * 1000}
    found["thread x"] = concurrent(ON_A_THREAD, runs, latency, steps) / ideal
    found["inline x"] = concurrent(ON_THE_LOOP, runs, latency, steps) / ideal
    with collector_off():
        found["thread, collector off x"] = concurrent(ON_A_THREAD, runs, latency, steps) / ideal
        found["inline, collector off x"] = concurrent(ON_THE_LOOP, runs, latency, steps) / ideal
    found["bare asyncio x"] = bare(runs, latency, steps, hand_off=False) / ideal
    found["bare asyncio + hand-off x"] = bare(runs, latency, steps, hand_off=True) / ideal
    per_step = 1e6 / (runs * steps)
    found["CPU µs/step at once"] = concurrent(ON_THE_LOOP, runs, 0.0, steps) * per_step
    with collector_off():
        found["CPU µs/step at once, collector off"] = (
            concurrent(ON_THE_LOOP, runs, 0.0, steps) * per_step
        )
    found["CPU µs/step one after another (run)"] = one_after_another(runs, steps) * per_step
    for generation, (count, ms) in collections(runs, latency, steps).items():
        found[f"gen {generation}: collections, ms per batch"] = f"{count:.1f}, {ms:.1f}"
    found.update(in_flight(runs, latency, steps))
    for label, tool_ in (("thread", ON_A_THREAD), ("inline", ON_THE_LOOP)):
        median, p90 = waits(tool_, runs, latency, steps)
        found[f"tool wait ms ({label}) p50, p90"] = f"{median:.2f}, {p90:.2f}"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(100 if args.quick else 1_000, 0.02, 5)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        shown = f"{value:,.2f}" if isinstance(value, float) else value
        print(f"{key:>40}: {shown}")


if __name__ == "__main__":
    main()
