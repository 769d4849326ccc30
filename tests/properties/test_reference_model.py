"""Our engine against a naive reference model of docs/design/loop.md, on generated scripts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from reference import run_reference
from scripts import TOOLS

from agents import AgentLoop, AgentState
from agents.testing import ScriptedDriver, SequentialIds, TickingClock
from agents.testing.strategies import scripts

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}

# At least 2,000 generated runs in the default test command; the "thorough" profile asks for
# more (HYPOTHESIS_PROFILE=thorough runs 50,000).
EXAMPLES = max(2_000, settings().max_examples)


def observed(final: AgentState) -> dict:
    """The engine's run in the reference's terms."""
    steps = []
    for step in final.steps:
        outcomes = []
        for execution in step.tool_executions:
            if execution.stop_signal is not None:
                outcomes.append({"stop": execution.stop_signal.message})
            elif execution.error is not None:
                outcomes.append({"error": execution.error.type})
            elif execution.terminate:
                outcomes.append({"value": execution.value, "terminate": True})
            else:
                outcomes.append({"value": execution.value})
        steps.append({"type": step.step_type.value, "outcomes": outcomes})
    result = {"steps": steps, "status": final.status.value, "reason": final.stop_reason.value}
    if final.execution.error is not None and final.status.value == "failed":
        result["error"] = final.execution.error.type
    return result


def _thaw(value):
    from agents.records.frozen import deep_thaw

    return deep_thaw(value)


def normalised(run: dict) -> dict:
    return {
        **run,
        "steps": [
            {**step, "outcomes": [{k: _thaw(v) for k, v in o.items()} for o in step["outcomes"]]}
            for step in run["steps"]
        ],
    }


@settings(max_examples=EXAMPLES)
@given(scripts(TOOLS, max_steps=6), st.integers(min_value=0, max_value=7))
def test_engine_matches_the_reference_model(script, max_steps):
    """Same step types, same tool outcomes, same terminal status and stop reason."""
    loop = AgentLoop(
        ScriptedDriver(script),
        tools=TOOLS,
        max_steps=max_steps,
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    final = loop.run(AgentState.initial("system", messages=["go"]))
    expected = run_reference(script, TOOLS_BY_NAME, max_steps)
    assert normalised(observed(final)) == normalised(expected)
