"""Regression tests on recorded runs: regressing 1,000 recorded 20-step runs with
``tools="record"`` against running the same 1,000 runs on a scripted model, and the memory a
regression holds as the number of runs grows (the runs are read one at a time).

``python benchmarks/bench_regress.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from agents import AgentLoop, AgentState, AuditLog, ToolCall, tool
from agents.testing import FunctionDriver, SequentialIds, TickingClock
from agents.testing.regression import regress


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def loop(steps: int) -> AgentLoop:
    """A 20-step agent: 19 tool calls, then an answer (a fresh clock and ids)."""

    def model(request: Any) -> Any:
        done = (len(request.messages) - 2) // 2
        if done < steps - 1:
            return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
        return "done"

    return AgentLoop(
        FunctionDriver(model),
        tools=[add],
        max_steps=steps,
        clock=TickingClock(),
        ids=SequentialIds(),
    )


def initial(index: int) -> AgentState:
    return AgentState.initial("You add numbers.", messages=[f"go {index}"])


def record(folder: Path, runs: int, steps: int) -> None:
    for index in range(runs):
        with AuditLog.open(folder / f"run-{index:05}.jsonl", durability="none") as log:
            loop(steps).with_listeners(log).run(initial(index))


def run_all(runs: int, steps: int) -> float:
    start = time.perf_counter()
    for index in range(runs):
        loop(steps).run(initial(index))
    return time.perf_counter() - start


def regress_all(folder: Path, steps: int) -> tuple[float, Any]:
    start = time.perf_counter()
    report = regress(loop(steps), [folder], tools="record")
    elapsed = time.perf_counter() - start
    assert report.ok, report.summary()
    return elapsed, report


def peak_memory(folder: Path, steps: int) -> int:
    """The peak of what one regression over ``folder`` allocates, measured on its second
    pass: the first interns each file name (pathlib does), and the interpreter's table of
    interned strings, growing past a size, is reallocated whole (0.9 MB once, at 1,000
    names), which would be counted as the regression's own memory. Between runs a full
    collection empties the interpreter's free lists: CPython keeps up to 2,000 freed
    tuples of each small size for reuse, which tracemalloc counts as allocated, and how
    many it keeps depends on when the collector last ran, not on what regress holds."""
    regress(loop(steps), [folder], tools="record")
    gc.collect()
    tracemalloc.start()
    regress(loop(steps), [folder], tools="record", keep=lambda *_: gc.collect())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def measure(runs: int, steps: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        small, large = folder / "small", folder / "large"
        small.mkdir()
        large.mkdir()
        record(large, runs, steps)
        for path in sorted(large.iterdir())[: runs // 10]:
            (small / path.name).write_bytes(path.read_bytes())
        plain, regressed = [], []
        for _ in range(repeats):  # interleaved
            plain.append(run_all(runs, steps))
            regressed.append(regress_all(large, steps)[0])
        return {
            "runs": runs,
            "steps": steps,
            "run s": min(plain),
            "regress s": min(regressed),
            "ratio": min(regressed) / min(plain),
            f"peak MB ({runs // 10} runs)": peak_memory(small, steps) / 1e6,
            f"peak MB ({runs} runs)": peak_memory(large, steps) / 1e6,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(20 if args.quick else 1_000, 20, 1 if args.quick else 3)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        print(f"{key:>22}: {value:,.3f}" if isinstance(value, float) else f"{key:>22}: {value}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
