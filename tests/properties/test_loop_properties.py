"""Properties of the loop over generated model behaviours (docs/design/loop.md,
docs/design/determinism.md)."""

from __future__ import annotations

import asyncio
import copy

from hypothesis import given
from hypothesis import strategies as st
from scripts import TOOLS, scripts

from agents import AgentLoop, AgentState, ExecutionStatus
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, check_invariants


def run(script, **options):
    loop = AgentLoop(
        ScriptedDriver(script), tools=TOOLS, clock=TickingClock(), ids=SequentialIds(), **options
    )
    return loop.run(AgentState.initial("system", messages=["go"]))


@given(scripts)
def test_the_loop_never_raises_and_every_invariant_holds(script):
    """Whatever the model does, run returns a terminal state satisfying every invariant."""
    final = run(script)
    assert final.status in (
        ExecutionStatus.COMPLETED,
        ExecutionStatus.STOPPED,
        ExecutionStatus.FAILED,
    )
    assert check_invariants(final) == []


@given(scripts)
def test_every_requested_call_has_exactly_one_execution(script):
    """Each step answers each of its requested calls once, in order (failed steps may stop
    after the calls that finished)."""
    final = run(script)
    for step in final.steps:
        requested = [c.id for c in step.requested_tool_calls]
        executed = [e.tool_call.id for e in step.tool_executions]
        if step.errors:
            assert executed == requested[: len(executed)]
        else:
            assert executed == requested


@given(scripts)
def test_step_numbers_are_contiguous_and_usage_adds_up(script):
    """Steps are numbered 1..n and the total usage is the sum of the steps."""
    final = run(script)
    assert [se.number for se in final.step_executions] == list(range(1, final.step_count + 1))
    total_input = sum(se.usage.input_tokens for se in final.step_executions)
    assert final.usage.input_tokens == total_input


@given(scripts)
def test_same_script_same_bytes(script):
    """Two runs with the same script, ticking clock and sequential ids give identical JSON."""
    assert run(script).to_json() == run(script).to_json()


@given(scripts, st.integers(min_value=0, max_value=4))
def test_max_steps_bounds_the_step_count(script, limit):
    """With ``max_steps=k`` no execution runs more than k steps."""
    assert run(script, max_steps=limit).step_count <= limit


@given(scripts)
def test_codec_round_trip_of_generated_states_is_identity(script):
    """Every state of a generated run, intermediate ones included, survives the codec."""
    loop = AgentLoop(ScriptedDriver(script), tools=TOOLS, clock=TickingClock(), ids=SequentialIds())
    for state in loop.iterate(AgentState.initial("system", messages=["go"])):
        assert AgentState.from_json(state.to_json()) == state


@given(scripts)
def test_arun_gives_the_same_history_as_run(script):
    """The async runner records byte-identical histories."""
    loop = AgentLoop(ScriptedDriver(script), tools=TOOLS, clock=TickingClock(), ids=SequentialIds())
    async_state = asyncio.run(loop.arun(AgentState.initial("system", messages=["go"])))
    assert async_state.to_json() == run(script).to_json()


@given(scripts)
def test_running_never_mutates_the_input_state(script):
    """The input state is unchanged by a run, even when resumed from a mid-run state."""
    loop = AgentLoop(ScriptedDriver(script), tools=TOOLS, clock=TickingClock(), ids=SequentialIds())
    states = list(loop.iterate(AgentState.initial("system", messages=["go"])))
    for state in states:
        snapshot = copy.deepcopy(state.to_json())
        AgentLoop(
            ScriptedDriver(script),
            tools=TOOLS,
            clock=TickingClock(),
            ids=SequentialIds(),
            max_steps=2,
        ).run(state)
        assert state.to_json() == snapshot
