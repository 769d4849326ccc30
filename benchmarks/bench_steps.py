"""Engine overhead per step: ``AgentLoop.run`` against a bare dict-and-list loop.

The tool-loop workload: a scripted model that calls one ``add`` tool every step and answers
at the last one. Both loops run side by side in one process at each N; the figures that
matter are the ratios (engine / bare, and µs per step at N=10,000 / N=100), not the absolute
times. Also measures ``import agents`` against ``import attrs, pyrsistent, structlog`` in
fresh interpreters and checks that litellm is not imported.

Run: ``.venv/bin/python benchmarks/bench_steps.py [--quick]``
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from agents import AgentLoop, AgentState, tool
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD = tool(add)


# -- the engine ---------------------------------------------------------------------------


def engine_run(n: int, **options: Any) -> Callable[[], Any]:
    """A prepared engine run of ``n`` steps.

    The script, the loop (immutable: a service builds it once) and the initial state are
    made outside the timing, as the bare loop's script is.
    """
    driver = ScriptedDriver([call("add", a=i, b=1) for i in range(n - 1)] + [reply("done")])
    options.setdefault("clock", TickingClock())
    options.setdefault("ids", SequentialIds())
    loop = AgentLoop(driver, tools=[ADD], max_steps=n, **options)
    initial = AgentState.initial("You add numbers.", messages=["go"])

    def run() -> Any:
        driver.reset()
        final = loop.run(initial)
        assert final.step_count == n, final.step_count
        return final

    return run


# -- the floor: plain dicts and lists ---------------------------------------------------


def bare_run(n: int) -> Callable[[], Any]:
    """The same workload with plain dicts and lists: no records, hooks, events or checks."""
    script: list[dict[str, Any]] = [
        {
            "content": "",
            "tool_calls": [{"id": f"call_{i + 1}", "name": "add", "arguments": {"a": i, "b": 1}}],
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        for i in range(n - 1)
    ] + [{"content": "done", "tool_calls": [], "usage": {"input_tokens": 0, "output_tokens": 0}}]
    tools = {"add": add}

    def run() -> Any:
        answers = iter(script)

        def model(request: dict[str, Any]) -> dict[str, Any]:
            return next(answers)

        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You add numbers."},
            {"role": "user", "content": "go"},
        ]
        steps: list[dict[str, Any]] = []
        tokens = 0
        for number in range(1, n + 1):
            response = model({"messages": messages, "tools": ["add"]})
            tokens += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]
            messages.append(
                {
                    "role": "assistant",
                    "content": response["content"],
                    "tool_calls": response["tool_calls"],
                }
            )
            results = []
            for tool_call in response["tool_calls"]:
                value = tools[tool_call["name"]](**tool_call["arguments"])
                results.append({"id": tool_call["id"], "value": value})
                messages.append(
                    {"role": "tool", "tool_call_id": tool_call["id"], "content": str(value)}
                )
            steps.append({"number": number, "response": response, "results": results})
            if not response["tool_calls"]:
                break
        return steps

    return run


def _time_once(run: Callable[[], Any], n: int) -> float:
    """µs per step of one whole run (after a full collection, so runs start alike)."""
    gc.collect()
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / n * 1e6


def best_per_step(run: Callable[[], Any], n: int, repeats: int) -> float:
    """Best µs per step over ``repeats`` whole runs (noise only ever adds time)."""
    return min(_time_once(run, n) for _ in range(repeats))


def _growth(rounds: int) -> float:
    """Engine µs/step at N=10,000 over N=100, the two interleaved so drift hits both alike."""
    small, large = engine_run(100), engine_run(10_000)
    small()
    large()
    small_us, large_us = [], []
    for _ in range(rounds):
        large_us.append(_time_once(large, 10_000))
        small_us.extend(_time_once(small, 100) for _ in range(10))
    return min(large_us) / min(small_us)


def _import_time(statement: str, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    sizes = [10, 100, 1_000, 10_000]
    results: dict[str, Any] = {"steps": []}
    print(
        f"{'N':>7}  {'engine µs/step':>15}  {'bare µs/step':>13}  {'ratio':>6}"
        f"  {'(median ratio)':>14}"
    )
    for n in sizes:
        if args.quick:
            repeats = 3
        else:
            repeats = 41 if n <= 100 else 11 if n <= 1_000 else 7
        engine, bare = engine_run(n), bare_run(n)
        engine()  # warm up
        bare()
        engine_us, bare_us = [], []
        for _ in range(repeats):  # interleaved, so both see the same machine moments
            engine_us.append(_time_once(engine, n))
            bare_us.append(_time_once(bare, n))
        # Best of the repeats: timing noise only ever adds time (the timeit convention).
        e, b = min(engine_us), min(bare_us)
        median_ratio = statistics.median(engine_us) / statistics.median(bare_us)
        results["steps"].append(
            {
                "n": n,
                "engine_us": e,
                "bare_us": b,
                "ratio": e / b,
                "engine_median_us": statistics.median(engine_us),
                "bare_median_us": statistics.median(bare_us),
                "median_ratio": median_ratio,
            }
        )
        print(f"{n:>7}  {e:>15.1f}  {b:>13.2f}  {e / b:>6.1f}  {median_ratio:>14.1f}")
    by_n = {row["n"]: row for row in results["steps"]}
    growth = by_n[10_000]["engine_us"] / by_n[100]["engine_us"]
    interleaved = _growth(3 if args.quick else 7)
    results["growth_10000_vs_100"] = growth
    results["growth_interleaved"] = interleaved
    print(f"\nengine / bare at N=100: {by_n[100]['ratio']:.1f}x (target <= 12x)")
    print(
        f"engine µs/step at N=10,000 / N=100: {growth:.2f}x (target <= 1.25x); "
        f"measured interleaved: {interleaved:.2f}x"
    )

    import_repeats = 3 if args.quick else 9
    ours = _import_time("import agents", import_repeats)
    base = _import_time("import attrs, pyrsistent, structlog", import_repeats)
    litellm_loaded = (
        subprocess.run(
            [sys.executable, "-c", "import sys, agents; print('litellm' in sys.modules)"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        == "True"
    )
    results.update(
        import_agents_s=ours,
        import_base_s=base,
        import_ratio=ours / base,
        litellm_imported=litellm_loaded,
    )
    print(
        f"import agents: {ours * 1000:.0f} ms; import attrs, pyrsistent, structlog: "
        f"{base * 1000:.0f} ms; ratio {ours / base:.2f}x (target <= 3x); "
        f"litellm imported: {litellm_loaded}"
    )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
