"""Live tracing (issue 19): a 100-step run with ``OTelListener`` and the OpenTelemetry
SDK's batch span processor, against the same run untraced (interleaved, best of each).

``python benchmarks/bench_otel.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agents import AgentLoop, AgentState, ToolCall, tool
from agents.otel import OTelListener
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


def measure(steps: int, rounds: int) -> dict[str, Any]:
    exporter = Counting()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    plain, traced = loop(steps), loop(steps, [OTelListener(provider)])
    start = AgentState.initial("You add numbers.", messages=["go"])
    untraced_s, traced_s = [], []
    for _ in range(rounds):  # interleaved
        began = time.perf_counter()
        plain.run(start)
        untraced_s.append(time.perf_counter() - began)
        began = time.perf_counter()
        traced.run(start)
        traced_s.append(time.perf_counter() - began)
    provider.shutdown()
    return {
        "steps": steps,
        "untraced us/step": min(untraced_s) / steps * 1e6,
        "traced us/step": min(traced_s) / steps * 1e6,
        "ratio": min(traced_s) / min(untraced_s),
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
        print(f"{key:>18}: {value:,.2f}" if isinstance(value, float) else f"{key:>18}: {value}")


if __name__ == "__main__":
    main()
