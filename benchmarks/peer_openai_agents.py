"""The tool-loop workload on the OpenAI Agents SDK (run in the SDK's own virtualenv).

    python peer_openai_agents.py '[10, 100]' REPEATS BUDGET_SECONDS

Prints JSON: ``{"version": ..., "import_s": ..., "us_per_step": {"10": ..., "100": null}}``
(``null`` past the time budget: the next size is skipped when the last one, scaled by its
growth, would take longer than the budget). Started with ``cwd="/"`` so the ``agents``
imported is the SDK, not this repository's package.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from importlib.metadata import version
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agents import Agent, ModelSettings, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Scripted(Model):
    """Asks for ``add`` until call n, then answers "done"."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        if self.calls < self.n:
            item: Any = ResponseFunctionToolCall(
                id=f"fc{self.calls}",
                call_id=f"c{self.calls}",
                name="add",
                arguments=json.dumps({"a": self.calls, "b": 1}),
                type="function_call",
                status="completed",
            )
        else:
            item = ResponseOutputMessage(
                id="m",
                content=[ResponseOutputText(text="done", type="output_text", annotations=[])],
                role="assistant",
                status="completed",
                type="message",
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def per_step(n: int, repeats: int) -> float:
    model = Scripted(n)
    agent = Agent(
        name="adder",
        instructions="You add numbers.",
        model=model,
        tools=[add],
        model_settings=ModelSettings(),
    )
    best = float("inf")
    for _ in range(repeats):
        model.calls = 0
        gc.collect()
        start = time.perf_counter()
        result = Runner.run_sync(agent, "go", max_turns=n + 1)
        best = min(best, time.perf_counter() - start)
        assert result.final_output == "done", result.final_output
    return best / n * 1e6


def main() -> None:
    sizes, repeats, budget = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import agents"], check=True, cwd="/")
    import_s = time.perf_counter() - start
    times: dict[str, float | None] = {}
    previous: tuple[int, float] | None = None
    growth = 1.0
    for n in sizes:
        if previous is not None and previous[1] * 1e-6 * n * growth > budget:
            times[str(n)] = None
            continue
        us = per_step(n, repeats)
        if previous is not None:
            growth = max(1.0, us / previous[1])
        times[str(n)] = us
        previous = (n, us)
    print(
        json.dumps(
            {"version": version("openai-agents"), "import_s": import_s, "us_per_step": times}
        )
    )


if __name__ == "__main__":
    main()
