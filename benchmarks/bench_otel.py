"""Live tracing: a 100-step run with ``OTelListener`` and the OpenTelemetry SDK's batch
span processor, against the same run untraced, and against the same run traced by hand: a
listener making the same spans with the same attributes (built beforehand) through the
SDK's ``start_span`` and ``end``. What the listener adds beyond that, as a share of the
SDK's own cost (the hand-traced run less the untraced one), is the figure (aim: at most
0.5x). Interleaved rounds, the best of each.

``python benchmarks/bench_otel.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

from agents import (
    AgentLoop,
    AgentState,
    ExecutionCompleted,
    ExecutionStarted,
    StepCompleted,
    ToolCall,
    tool,
)
from agents.otel import OTelListener, plan_run
from agents.testing import FunctionDriver


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Counting(SpanExporter):
    """An exporter that counts what the batch processor hands it (no network)."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Any) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def loop(steps: int, listeners: Any = ()) -> AgentLoop:
    def model(request: Any) -> Any:
        done = (len(request.messages) - 2) // 2
        if done < steps - 1:
            return [ToolCall(id=f"c{done}", name="add", arguments={"a": done, "b": 1})]
        return "done"

    return AgentLoop(FunctionDriver(model), tools=[add], max_steps=steps, listeners=listeners)


_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}


class ByHand:
    """What code written by hand for the same spans costs: a listener that, as each step
    completes, starts and ends that step's spans with the SDK (``start_span``, ``end``)
    inside the run's span, with the same names, kinds, times and attributes — made
    beforehand, from the plans of the same run: what is left is the SDK's work."""

    event_types = frozenset({ExecutionStarted, StepCompleted, ExecutionCompleted})

    def __init__(self, tracer: Any, plans: list[Any]) -> None:
        *steps, run = plans  # plan_run gives the run's own span last
        self.tracer = tracer
        self.run = (run.name, _KINDS[run.kind], dict(run.attributes), run.start, run.end)
        self.steps: dict[int, list[Any]] = {}
        for plan in steps:
            step = plan.attributes["agents.step"]
            made = (plan.name, _KINDS[plan.kind], dict(plan.attributes), plan.start, plan.end)
            self.steps.setdefault(step, []).append(made)
        self.span: Any = None
        self.inside: Any = None

    def __call__(self, event: Any) -> None:
        if isinstance(event, StepCompleted):
            for name, kind, attributes, start, end in self.steps[event.step]:
                span = self.tracer.start_span(
                    name, context=self.inside, kind=kind, attributes=attributes, start_time=start
                )
                span.end(end_time=end)
        elif isinstance(event, ExecutionStarted):
            name, kind, attributes, start, _ = self.run
            self.span = self.tracer.start_span(
                name, kind=kind, attributes=attributes, start_time=start
            )
            self.inside = trace.set_span_in_context(self.span)
        elif isinstance(event, ExecutionCompleted):
            self.span.end(end_time=self.run[4])


def measure(steps: int, rounds: int) -> dict[str, Any]:
    exporter = Counting()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    start = AgentState.initial("You add numbers.", messages=["go"])
    plain = loop(steps)
    hand = ByHand(provider.get_tracer("by hand"), plan_run(plain.run(start)))
    runs = {
        "untraced": plain,
        "by hand": loop(steps, [hand]),
        "listener": loop(steps, [OTelListener(provider)]),
    }
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):  # interleaved
        for name, runner in runs.items():
            began = time.perf_counter()
            runner.run(start)
            best[name] = min(best[name], time.perf_counter() - began)
    provider.shutdown()
    sdk = best["by hand"] - best["untraced"]
    beyond = best["listener"] - best["by hand"]
    return {
        "steps": steps,
        "untraced us/step": best["untraced"] / steps * 1e6,
        "traced us/step": best["listener"] / steps * 1e6,
        "ratio": best["listener"] / best["untraced"],
        "SDK by hand us/step": sdk / steps * 1e6,
        "listener beyond the SDK us/step": beyond / steps * 1e6,
        "beyond the SDK, share of its cost": beyond / sdk,
        "spans exported": exporter.spans,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(100, 5 if args.quick else 30)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        print(f"{key:>34}: {value:,.2f}" if isinstance(value, float) else f"{key:>34}: {value}")


if __name__ == "__main__":
    main()
