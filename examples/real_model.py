"""A small tool-using agent against a real provider, named by environment variables.

    AGENTS_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=sk-... .venv/bin/python examples/real_model.py

``AGENTS_MODEL`` is any litellm model name; the provider's usual key variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, …) is read by litellm. Optional:
``AGENTS_API_BASE`` for an OpenAI-compatible server, ``AGENTS_RECORD=path.jsonl`` to record
every model call for offline replay. Without ``AGENTS_MODEL`` it prints how to run and exits.
"""

from __future__ import annotations

import os
import sys

from agents import AgentLoop, AgentState, LiteLLMDriver, RecordingInterceptor, tool


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: the first factor
        b: the second factor
    """
    return a * b


def main() -> int:
    """Run the agent once and print its timeline and answer."""
    model = os.environ.get("AGENTS_MODEL")
    if not model:
        print(__doc__)
        return 0
    options = {}
    if os.environ.get("AGENTS_API_BASE"):
        options["api_base"] = os.environ["AGENTS_API_BASE"]
    interceptors = []
    if os.environ.get("AGENTS_RECORD"):
        interceptors.append(RecordingInterceptor(os.environ["AGENTS_RECORD"]))
    loop = AgentLoop(
        LiteLLMDriver(model, **options),
        tools=[multiply],
        interceptors=interceptors,
        max_steps=6,
        max_cost=0.10,
        time_limit=120,
    )
    final = loop.run(
        AgentState.initial(
            "Use the multiply tool for arithmetic.", messages=["What is 12.5 times 3.2?"]
        )
    )
    for step_execution in final.step_executions:
        step = step_execution.step
        tools = ", ".join(e.name for e in step.tool_executions) or "-"
        print(
            f"{step_execution.number}  {step.step_type.value:15} {tools:10} "
            f"{step.usage.total_tokens:6} tokens  {step_execution.duration:.2f} s"
        )
    status = final.status.value if final.status else "none"
    print(f"{status}: {final.final_response or final.execution.error}")
    print(f"cost: ${final.usage.cost:.6f}")
    return 0 if status == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
