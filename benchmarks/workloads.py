"""The workloads of the second performance round, for ``python -m benchmarks``.

Each gives the two sides of one ratio, measured in one process (interleaved where two systems
are compared): the tool loop with the clock and ids a user gets by default, its growth to
N = 10,000 with the garbage collector on, a compacting SQL session step, and a durable step
against raw DBOS (in a subprocess: DBOS is configured once per process).
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bench_steps import ADD, _time_once, bare_run

from agents import (
    AgentLoop,
    AgentState,
    InferenceResponse,
    SessionRuntime,
    SQLiteSessionStore,
    Summarization,
    TokenWindowCompiler,
    ToolCall,
)
from agents.testing import FunctionDriver, ScriptedDriver, call, reply

HERE = Path(__file__).resolve().parent


def default_run(n: int) -> Callable[[], AgentState]:
    """``AgentLoop(driver, tools=[add])`` as a user writes it: the wall clock and random ids."""
    driver = ScriptedDriver([call("add", a=i, b=1) for i in range(n - 1)] + [reply("done")])
    loop = AgentLoop(driver, tools=[ADD], max_steps=n)
    initial = AgentState.initial("You add numbers.", messages=["go"])

    def run() -> AgentState:
        driver.reset()
        final = loop.run(initial)
        assert final.step_count == n, final.step_count
        return final

    return run


def defaults(rounds: int) -> dict[str, float]:
    """µs per step with the defaults at N = 100 against the bare loop (interleaved pairs),
    and at N = 10,000 against N = 100 (interleaved, collector on: each run starts after a
    full collection and collects as a service would while it runs)."""
    small, bare, large = default_run(100), bare_run(100), default_run(10_000)
    small(), bare(), large()
    ours, floor, big = [], [], []
    for _ in range(rounds):
        for _ in range(10):
            ours.append(_time_once(small, 100))
            floor.append(_time_once(bare, 100))
        big.append(_time_once(large, 10_000))
    return {"agents": min(ours), "bare": min(floor), "agents 10,000": min(big)}


# -- a compacting SQL session -----------------------------------------------------------------

SUMMARY = InferenceResponse(content="The user is adding numbers; the tool answered each time.")
COMPACTING: dict[str, dict[str, Any]] = {
    "plain": {},
    "token window (2,000)": {"message_compiler": TokenWindowCompiler(2_000)},
    "Summarization(2,000, 1,000)": {"compaction": Summarization(2_000, 1_000)},
}


class _Timed:
    """A session store whose checkpoints note when they end: the time between two is one
    step, the engine's part and the checkpoint's."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.ends: list[float] = []

    def checkpoint(self, session: Any, step_execution: Any) -> Any:
        done = self.store.checkpoint(session, step_execution)
        self.ends.append(time.perf_counter())
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _session_step(store: Any, n: int, options: dict[str, Any]) -> tuple[float, list[float]]:
    """µs per step of an ``n``-step session run, checkpointed every step, and each step's
    µs (from the end of one checkpoint to the end of the next)."""
    calls = [[ToolCall(id=f"c{i}", name="add", arguments={"a": i, "b": 1})] for i in range(n - 1)]
    answers: list[Any] = ["done", *reversed(calls)]

    def model(request: Any) -> Any:
        if request.messages and request.messages[0].content.startswith("You compress"):
            return SUMMARY
        return answers.pop()

    timed = _Timed(store)
    runtime = SessionRuntime(
        timed,
        lambda session: AgentLoop(FunctionDriver(model), tools=[ADD], max_steps=n, **options),
    )
    session_id = uuid.uuid4().hex
    runtime.create(AgentState.initial("You add numbers."), session_id=session_id)
    start = time.perf_counter()
    final = runtime.send(session_id, "go")
    elapsed = time.perf_counter() - start
    assert final.state is not None
    assert final.state.step_count == n
    ends = [start, *timed.ends]
    return elapsed / n * 1e6, [(b - a) * 1e6 for a, b in itertools.pairwise(ends)]


WINDOW: Final = 200  # steps: the stretches whose per-step cost the flatness check compares


def compacting_sessions(sizes: list[int]) -> dict[str, dict[str, Any]]:
    """µs per checkpointed step on SQLite, plain and compacting: the average over a run at
    each size, and, in the run of the largest size, the mean step of its last ``WINDOW``
    steps and of the ``WINDOW`` steps from its 300th (``stretches``; the best of two runs
    each). Both stretches are past the token budget, which a run reaches after about 125
    steps (before it nothing is compacted, so a run's average at N = 100 is a plain
    run's); compared within one run they tell whether a step costs more as the history
    grows, apart from the drift between two runs (two stretches of 100 steps from runs of
    1,000 and 333 steps measured 0.75x to 1.25x for the same code)."""
    out: dict[str, dict[str, Any]] = {}
    largest = sizes[-1]
    first = min(300, max(largest - 2 * WINDOW, 0))
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteSessionStore(f"{folder}/sessions.sqlite")
        for name, options in COMPACTING.items():
            found: dict[str, Any] = {"average": {}, "stretches": {}}
            for n in sizes:
                runs = [_session_step(store, n, options) for _ in range(2)]
                found["average"][n] = min(average for average, _ in runs)
                if n == largest:
                    for begin in (first, largest - WINDOW):
                        stretch = (begin + 1, begin + WINDOW)
                        found["stretches"][stretch] = min(
                            statistics.fmean(steps[begin : begin + WINDOW]) for _, steps in runs
                        )
            out[name] = found
    return out


# -- DBOS ---------------------------------------------------------------------------------------


def regression(quick: bool) -> dict[str, Any] | str:
    """``bench_regress.py --json`` in its own process: regressing recorded runs against
    running them, and the peak memory at two numbers of runs."""
    return _script("bench_regress.py", quick)


def tracing(quick: bool) -> dict[str, Any] | str:
    """``bench_otel.py --json`` in its own process: a 100-step run traced live with the
    SDK's batch processor against the same run untraced."""
    return _script("bench_otel.py", quick)


def serving(quick: bool) -> dict[str, Any] | str:
    """``bench_serve.py --json`` in its own process: 100 sessions through the HTTP API
    against the same runs in process."""
    return _script("bench_serve.py", quick)


def _script(name: str, quick: bool) -> dict[str, Any] | str:
    done = subprocess.run(
        [sys.executable, str(HERE / name), "--json", *(["--quick"] if quick else [])],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1:]}"
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def content(quick: bool) -> dict[str, Any] | str:
    """``bench_content.py --json`` in its own process: a 100-step run holding a 5 MB image
    against the same run with text, and where the image is stored."""
    return _script("bench_content.py", quick)


def evals(quick: bool) -> dict[str, Any] | str:
    """``bench_evals.py --json`` in its own process: evaluate against arun alone, and
    rescore against the run it scores again."""
    return _script("bench_evals.py", quick)


def durable(quick: bool) -> dict[str, Any] | str:
    """``bench_durable.py --json`` in its own process: ours and raw DBOS per agent step."""
    return _script("bench_durable.py", quick)
