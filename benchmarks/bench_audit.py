"""What auditing costs: logging a run, verifying a log, and rewinding a long history.

In one process, side by side:

- the FACTS workload (scripted model, one ``add`` tool) at N = 1,000 steps, with and without
  an ``AuditLog`` listener (fsync at every step boundary and at the end);
- ``AuditLog.verify`` on a log of 100,000 records, in MB of log per second;
- ``state.at_step(k)`` on a 10,000-step history against one ``with_metadata`` call.

Run: ``.venv/bin/python benchmarks/bench_audit.py [--quick]``
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_steps import ADD

from agents import AgentLoop, AgentState, AuditLog
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply


def run(n: int, directory: Path | None) -> float:
    """Seconds for one run of ``n`` steps, audited into ``directory`` when given."""
    driver = ScriptedDriver([call("add", a=i, b=1) for i in range(n - 1)] + [reply("done")])
    loop = AgentLoop(driver, tools=[ADD], max_steps=n, clock=TickingClock(), ids=SequentialIds())
    state = AgentState.initial("You add numbers.", messages=["go"])
    gc.collect()
    if directory is None:
        start = time.perf_counter()
        loop.run(state)
        return time.perf_counter() - start
    path = directory / f"run-{time.perf_counter_ns()}.jsonl"
    start = time.perf_counter()
    with AuditLog.open(path) as log:
        loop.with_listeners(log).run(state)
    elapsed = time.perf_counter() - start
    path.unlink()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as folder:
        directory = Path(folder)
        plain = min(run(1_000, None) for _ in range(repeats))
        audited = min(run(1_000, directory) for _ in range(repeats))
        print(
            f"N=1,000: plain {plain * 1000:.1f} ms, audited {audited * 1000:.1f} ms "
            f"({audited / plain:.1f}x; target <= 2x)"
        )
        fsync = directory / "fsync.bin"
        with fsync.open("wb") as handle:
            start = time.perf_counter()
            for _ in range(200):
                handle.write(b"x" * 512 + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            per_fsync = (time.perf_counter() - start) / 200
        print(
            f"  one fsync on this disk: {per_fsync * 1e6:.0f} µs = "
            f"{per_fsync / (plain / 1_000):.1f} plain steps"
        )

        big = directory / "big.jsonl"
        steps = 10_000 if args.quick else 16_700  # about 6 records per step
        driver = ScriptedDriver([call("add", a=i, b=1) for i in range(steps - 1)] + [reply("done")])
        with AuditLog.open(big) as log:
            AgentLoop(
                driver,
                tools=[ADD],
                max_steps=steps,
                listeners=[log],
                clock=TickingClock(),
                ids=SequentialIds(),
            ).run(AgentState.initial(messages=["go"]))
        size = big.stat().st_size
        start = time.perf_counter()
        records = AuditLog.verify(big)
        elapsed = time.perf_counter() - start
        print(
            f"verify: {records:,} records, {size / 1e6:.1f} MB in {elapsed:.2f} s = "
            f"{size / 1e6 / elapsed:.0f} MB/s (target >= 50 MB/s)"
        )

    history = AgentLoop(
        ScriptedDriver([call("add", a=i, b=1) for i in range(9_999)] + [reply("done")]),
        tools=[ADD],
        max_steps=10_000,
        clock=TickingClock(),
        ids=SequentialIds(),
    ).run(AgentState.initial(messages=["go"]))
    number = 2_000
    rewind = min(timeit.repeat(lambda: history.at_step(7_000), number=number, repeat=5))
    change = min(timeit.repeat(lambda: history.with_metadata("k", 1), number=number, repeat=5))
    print(
        f"at_step(7,000) of 10,000 steps: {rewind / number * 1e6:.1f} µs; one with_metadata: "
        f"{change / number * 1e6:.1f} µs; ratio {rewind / change:.1f}x (target <= 10x)"
    )


if __name__ == "__main__":
    main()
