"""Regressing a genuine run against the agent that made it finds no change."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from runs import SCHEMA, TOOLS, loop_of, perform, scenarios, start_of

from agents import AgentLoop, AgentState, HookContext, HookTrigger, hook, tool
from agents.testing.regression import regress


@settings(max_examples=60, deadline=None)
@given(scenarios)
def test_the_agent_that_made_a_run_tells_its_story_again(scenario):
    """Random runs over every feature (approvals, steering, follow-ups, goals, sub-agents,
    compaction, structured output, failures): the same agent, with a fresh clock and ids
    like the recording's, gives the same JSON byte for byte; with other tools answers
    from the record, the same story."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.jsonl"
        perform(scenario, log)
        report = regress(loop_of(scenario), [log], exact=True)
        assert report.ok, report.summary()
        assert regress(loop_of(scenario), [log], tools="record").ok


# -- a change to what the provider receives is never "same" --------------------------------------


@tool(name="add")
def add_described(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


class ModelOfItsOwn:
    """A driver whose own settings go with every request (``request_defaults``)."""

    def __init__(self, driver: Any, **defaults: Any) -> None:
        self.driver, self.defaults = driver, defaults

    def request_defaults(self) -> dict[str, Any]:
        return self.defaults

    def infer(self, request: Any) -> Any:
        return self.driver.infer(request)


def _message_changed_at(step: int) -> Any:
    @hook(HookTrigger.BEFORE_INFERENCE, name="reworded")
    def reworded(context: HookContext) -> HookContext:
        request = context.request
        if request is None or context.state.step_count + 1 != step:
            return context
        *before, last = request.messages
        changed = attrs.evolve(last, content=f"{last.content} (reworded)")
        return context.with_request(request.with_messages([*before, changed]))

    return reworded


def _other_schema(state: AgentState) -> AgentState:
    if state.context.response_format is None:
        return state.with_response_format(SCHEMA)
    return state.with_response_format({**SCHEMA, "required": []})


# each: (loop, state, step) -> the changed agent, and the part regress names
CHANGES: dict[str, tuple[Callable[[AgentLoop, AgentState, int], Any], set[str]]] = {
    "system prompt": (
        lambda loop, state, _: (loop, state.with_system_prompt("You are tested again.")),
        {"system prompt"},
    ),
    "model": (lambda loop, state, _: (loop, state.with_llm_config(model="other")), {"parameters"}),
    "setting": (
        lambda loop, state, _: (loop, state.with_llm_config(temperature=0.5)),
        {"parameters"},
    ),
    "response format": (lambda loop, state, _: (loop, _other_schema(state)), {"parameters"}),
    "tool schema": (
        lambda loop, state, _: (
            loop.with_options(tools=[add_described, *(t for t in TOOLS if t.name != "add")]),
            state,
        ),
        {"tool schemas"},
    ),
    "the driver's model": (
        lambda loop, state, _: (
            loop.with_driver(ModelOfItsOwn(loop.driver, model="theirs", top_p=0.9)),
            state,
        ),
        {"parameters"},
    ),
    "a message": (
        lambda loop, state, step: (loop.with_hooks(_message_changed_at(step)), state),
        {"messages", "system prompt"},
    ),
}


@settings(max_examples=100, deadline=None)
@given(scenarios, st.sampled_from(sorted(CHANGES)), st.data())
def test_a_change_to_what_the_provider_receives_is_changed_at_its_first_step(
    scenario, changed, data
):
    """For any recorded run, the agent as a ``(loop, state)`` pair is the same; one change
    to what a provider receives — the system prompt, a message, a tool's schema, the
    response format, the model or a setting (the state's or the driver's own) — is a
    changed request at the first step it reaches, with its tools live or answered from
    the record."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.jsonl"
        performed = perform(scenario, log)
        steps = performed.final.step_count
        assume(steps >= 1)
        step = 1 if changed != "a message" else data.draw(st.integers(1, steps), label="step")
        start = start_of(scenario)
        for tools in ("live", "record"):
            assert regress((loop_of(scenario), start), [log], tools=tools).ok
            make, parts = CHANGES[changed]
            report = regress(make(loop_of(scenario), start, step), [log], tools=tools)
            (outcome,) = report.runs
            change = outcome.change
            assert change is not None, f"{changed} reported as same ({tools})"
            assert (change.step, change.kind) == (step, "request"), change.describe()
            assert change.part in parts, change.describe()
