"""What logging costs: a suppressed log call, and a run with structlog configured.

docs/design/events.md: a suppressed log call must cost about a microsecond. Measures, in one
process:

- one ``logger.debug(...)`` call with the run's fields when structlog filters debug out;
- µs per step of the tool-loop workload (``bench_steps.engine_run``) with structlog not
  configured (the library is silent and builds no events) against structlog configured at
  info (events are built and step-level ones are filtered out), and with a listener.

Run: ``.venv/bin/python benchmarks/bench_logging.py [--quick]``
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_steps import engine_run


def suppressed_call_us(number: int) -> float:
    """µs per ``debug`` call on a logger filtering at info."""
    with open(os.devnull, "w") as sink:
        logger = structlog.make_filtering_bound_logger(logging.INFO)(
            structlog.PrintLogger(sink), [], {}
        )
        return _best(logger, number)


def _best(logger: Any, number: int) -> float:
    fields = {"agent_id": "a", "execution_id": "e", "step": 3}
    best = min(
        timeit.repeat(lambda: logger.debug("step_completed", **fields), number=number, repeat=7)
    )
    return best / number * 1e6


def per_step(n: int, repeats: int, **options: Any) -> float:
    """Best µs per step over ``repeats`` runs of the tool-loop workload."""
    run = engine_run(n, **options)
    run()
    samples = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) / n * 1e6)
    return min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 5 if args.quick else 31
    print(
        f"suppressed debug call: {suppressed_call_us(20_000 if args.quick else 200_000):.2f} µs"
        " (target: about 1 µs)"
    )

    structlog.reset_defaults()
    silent = per_step(100, repeats)
    with open(os.devnull, "w") as sink:
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
            logger_factory=structlog.PrintLoggerFactory(sink),
            cache_logger_on_first_use=True,
        )
        logged = per_step(100, repeats)
        structlog.reset_defaults()
    events: list[object] = []
    listened = per_step(100, repeats, listeners=[events.append])
    print(
        f"µs/step at N=100: silent {silent:.1f}; structlog at info {logged:.1f} "
        f"({logged / silent:.2f}x); with a listener {listened:.1f} ({listened / silent:.2f}x)"
    )


if __name__ == "__main__":
    main()
