"""Evaluations: 1,000 cases of 5 trials each on a scripted model through ``evaluate``, against
the same 5,000 runs through ``arun`` alone (``concurrency`` 8 both); and ``rescore`` of the
evaluation's folder against the time it took to run into it.

``python benchmarks/bench_evals.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents import AgentLoop, AgentState, InferenceRequest
from agents.evals import Case, evaluate, rescore
from agents.evals.scorers import equals
from agents.testing import FunctionDriver


def answer(request: InferenceRequest) -> str:
    """A scripted model: the sum of the question."""
    a, b = (int(x) for x in request.messages[-1].text.split("+"))
    return str(a + b)


def agent() -> AgentLoop:
    return AgentLoop(FunctionDriver(answer))


def cases(n: int) -> list[Case]:
    return [Case(f"case-{i}", f"{i}+1", str(i + 1)) for i in range(n)]


async def arun_alone(loop: AgentLoop, states: list[AgentState], concurrency: int) -> None:
    """The same runs through ``arun``, ``concurrency`` at once: the floor."""
    waiting = iter(states)

    async def worker() -> None:
        for state in waiting:
            await loop.arun(state)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def measure(n: int, trials: int, repeats: int) -> dict[str, Any]:
    dataset = cases(n)
    states = [case.initial() for case in dataset for _ in range(trials)]
    plain = evaluated = kept = rescored = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        asyncio.run(arun_alone(agent(), states, 8))
        plain = min(plain, time.perf_counter() - start)
        start = time.perf_counter()
        evaluate(agent(), dataset, [equals()], trials=trials)
        evaluated = min(evaluated, time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        evaluate(agent(), dataset, [equals()], trials=trials, out=Path(folder) / "run")
        kept = time.perf_counter() - start
        start = time.perf_counter()
        rescore(Path(folder) / "run", [equals()])
        rescored = time.perf_counter() - start
    return {
        "cases": n,
        "trials": trials,
        "arun alone s": plain,
        "evaluate s": evaluated,
        "evaluate ratio": evaluated / plain,
        "evaluate with out s": kept,
        "rescore s": rescored,
        "rescore ratio": rescored / kept,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(50 if args.quick else 1_000, 5, 1 if args.quick else 3)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        print(f"{key:>22}: {value:,.3f}" if isinstance(value, float) else f"{key:>22}: {value}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
