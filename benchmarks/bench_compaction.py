"""What context compaction costs per step: the tool-loop workload at N = 1,000 with no
compaction, with a token window, and with ``Summarization`` at two budgets.

Side by side in one process; the figures that matter are the ratios to the plain run. The
summariser is answered by the same instant test model, so the numbers are the engine's own
work: counting tokens before every request, moving messages, the extra ``Infer`` and the
step's ``Compaction`` record. With ``--quick``, N = 200 and fewer repeats.

Run: ``.venv/bin/python benchmarks/bench_compaction.py [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_steps import ADD, best_per_step

from agents import (
    AgentLoop,
    AgentState,
    InferenceRequest,
    InferenceResponse,
    Summarization,
    TokenWindowCompiler,
    ToolCall,
)
from agents.testing import FunctionDriver, SequentialIds, TickingClock

SUMMARY = InferenceResponse(content="The user is adding numbers; the tool answered each time.")


def prepared(n: int, **options: Any) -> Callable[[], AgentState]:
    """A run of ``n`` steps (one ``add`` call each, then an answer); summaries answered
    at once by the same model."""
    calls = [[ToolCall(id=f"c{i}", name="add", arguments={"a": i, "b": 1})] for i in range(n - 1)]

    def model(request: InferenceRequest, answers: list[Any]) -> Any:
        if request.messages and request.messages[0].content.startswith("You compress"):
            return SUMMARY
        return answers.pop()

    initial = AgentState.initial("You add numbers.", messages=["go"])

    def run() -> AgentState:
        answers: list[Any] = ["done", *reversed(calls)]
        loop = AgentLoop(
            FunctionDriver(lambda request: model(request, answers)),
            tools=[ADD],
            max_steps=n,
            clock=TickingClock(),
            ids=SequentialIds(),
            **options,
        )
        final = loop.run(initial)
        assert final.step_count == n, (final.step_count, final.execution.error)
        return final

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeats = (200, 2) if args.quick else (1_000, 5)
    variants = {
        "no compaction": {},
        "token window (2,000 tokens)": {"message_compiler": TokenWindowCompiler(2_000)},
        "Summarization(2,000, 1,000)": {"compaction": Summarization(2_000, 1_000)},
        "Summarization(8,000, 4,000)": {"compaction": Summarization(8_000, 4_000)},
    }
    plain = None
    print(f"N={n:,}, µs per step (best of {repeats}); the model answers at once")
    for name, options in variants.items():
        run = prepared(n, **options)
        final = run()
        summaries = sum(
            1 for s in final.steps if s.compaction is not None and s.compaction.summarizing
        )
        per_step = best_per_step(run, n, repeats)
        plain = plain or per_step
        print(
            f"  {name:30} {per_step:8.1f} µs  {per_step / plain:5.2f}x"
            f"   ({summaries} summaries, {len(final.steps[-1].input_messages)} messages sent last)"
        )


if __name__ == "__main__":
    main()
