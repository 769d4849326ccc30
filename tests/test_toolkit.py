"""The property-testing toolkit (docs/design/testing.md): strategies, invariants, the state
machine, plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import add, echo, initial, make_loop
from hypothesis import find, given, settings
from hypothesis import strategies as st

from agents import (
    AgentLoop,
    AgentState,
    ExecutionStatus,
    InvariantViolation,
    Message,
    StopReason,
    StopSignal,
    ToolCall,
    Usage,
)
from agents.records.compiled import replace_fields
from agents.testing import (
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    assert_invariants,
    call,
    calls,
    check_invariants,
    reply,
)
from agents.testing.strategies import (
    AgentMachine,
    agent_states,
    from_schema,
    inference_responses,
    messages,
    scripts,
    tool_calls,
)

pytest_plugins = ["pytester"]


def run(script, tools=(add, echo)) -> AgentState:
    return AgentLoop(
        ScriptedDriver(script), tools=tools, clock=TickingClock(), ids=SequentialIds()
    ).run(initial())


# -- strategies ---------------------------------------------------------------------------


@given(agent_states(tools=[add, echo]))
def test_generated_histories_satisfy_every_invariant(state):
    """``agent_states()`` gives complete, sound histories."""
    assert state.status.terminal
    assert check_invariants(state) == []


@given(scripts([add, echo], failures=False, final_answer=True))
def test_scripts_without_failures_only_make_valid_calls(script):
    """With ``failures=False`` every call is valid and every execution succeeds."""
    final = run(script)
    assert all(execution.ok for execution in final.tool_executions)
    assert final.status is ExecutionStatus.COMPLETED


@given(from_schema(add.parameters))
def test_schema_values_pass_the_tools_validation(arguments):
    """Values drawn from a tool's schema are accepted by its validator."""
    _, error = add._validator(arguments, "")
    assert error is None


@given(tool_calls([add], arguments={"add": {"a": st.just(7)}}, invalid=False))
def test_argument_strategies_can_be_overridden(step):
    """``arguments=`` replaces the strategy of a parameter."""
    response = ScriptedDriver([step]).infer(None)
    assert response.tool_calls[0].arguments["a"] == 7


@given(messages(), inference_responses([add]))
def test_messages_and_responses_are_records(message, response):
    """The smaller strategies give records that round-trip through the codec."""
    assert Message.from_json(message.to_json()) == message
    assert type(response).from_json(response.to_json()) == response


def test_failures_shrink_to_a_minimal_script():
    """A property violation shrinks to the shortest script that shows it."""
    invalid_json = find(
        scripts([add]),
        lambda s: any(e.tool_call.raw_arguments is not None for e in run(s).tool_executions),
    )
    assert invalid_json == [calls(call("add", '{"truncated": '), usage=Usage())]
    failing = find(scripts([add]), lambda s: run(s).status is ExecutionStatus.FAILED)
    assert failing == []  # no answer at all: the scripted model has nothing to say


# -- invariants: every hand-made corruption is caught --------------------------------------


def sound_state() -> AgentState:
    state = make_loop(
        calls(call("add", a=1, b=2), call("echo", text="x")),
        call("add", a=3, b=4),
        reply("done"),
        tools=[add, echo],
    ).run(initial())
    assert check_invariants(state) == []
    return state


def with_steps(state: AgentState, step_executions) -> AgentState:
    return state.with_execution(
        replace_fields(state.execution, step_executions=list(step_executions))
    )


def test_a_dropped_step_is_caught():
    """Removing a step breaks the numbering."""
    state = sound_state()
    steps = list(state.step_executions)
    problems = check_invariants(with_steps(state, [steps[0], steps[2]]))
    assert any("not contiguous" in p for p in problems)


def test_a_duplicated_execution_is_caught():
    """An execution answering a call twice is caught."""
    state = sound_state()
    steps = list(state.step_executions)
    first = steps[0]
    executions = list(first.step.tool_executions)
    doubled = replace_fields(
        first, step=replace_fields(first.step, tool_executions=[*executions, executions[0]])
    )
    problems = check_invariants(with_steps(state, [doubled, *steps[1:]]))
    assert any("exactly one execution" in p for p in problems)


def test_reordered_timestamps_are_caught():
    """A step that ends before it starts, or starts before the previous one, is caught."""
    state = sound_state()
    steps = list(state.step_executions)
    second = steps[1]
    backwards = replace_fields(
        second, started_at=second.completed_at, completed_at=second.started_at
    )
    problems = check_invariants(with_steps(state, [steps[0], backwards, steps[2]]))
    assert any("completes before it starts" in p for p in problems)
    swapped = with_steps(
        state, [replace_fields(steps[0], number=1), replace_fields(steps[2], number=2)]
    )
    early = replace_fields(swapped.step_executions[1], started_at=steps[0].started_at)
    assert any(
        "starts before" in p
        for p in check_invariants(
            with_steps(
                state,
                [steps[0], replace_fields(early, number=2), replace_fields(steps[2], number=3)],
            )
        )
    )


def test_a_status_inconsistent_with_its_signals_is_caught():
    """A COMPLETED status with a forced signal is caught."""
    state = sound_state()
    execution = state.execution
    forced = execution.with_stop_signal(StopSignal(reason=StopReason.STEPS_LIMIT))
    forced = replace_fields(
        forced,
        continuation=replace_fields(
            forced.continuation,
            stop_signals=[
                StopSignal(reason=StopReason.STEPS_LIMIT),
                *execution.continuation.stop_signals,
            ],
        ),
    )
    problems = check_invariants(state.with_execution(forced))
    assert any("forced signal steps_limit but status completed" in p for p in problems)


def test_an_orphan_tool_message_is_caught():
    """A tool message that answers no call of the previous assistant message is caught."""
    state = sound_state()
    orphan = state.with_messages([*state.messages, Message.tool("nobody", "add", "1")])
    problems = check_invariants(orphan)
    assert any("answers call 'nobody'" in p for p in problems)


def test_assert_invariants_lists_every_violation():
    """``assert_invariants`` raises InvariantViolation with all the problems."""
    state = sound_state()
    steps = list(state.step_executions)
    broken = with_steps(state, [steps[1]]).with_messages(
        [*state.messages, Message.tool("nobody", "add", "1")]
    )
    with pytest.raises(InvariantViolation) as info:
        assert_invariants(broken)
    assert len(info.value.violations) >= 2


def test_an_executed_call_the_model_never_asked_for_is_caught():
    """An execution whose call id was not requested is caught."""
    state = sound_state()
    steps = list(state.step_executions)
    first = steps[0]
    stranger = replace_fields(
        first.step.tool_executions[0],
        tool_call=ToolCall(id="stranger", name="add", arguments={"a": 1, "b": 1}),
    )
    tampered = replace_fields(
        first,
        step=replace_fields(first.step, tool_executions=[stranger, first.step.tool_executions[1]]),
    )
    assert check_invariants(with_steps(state, [tampered, *steps[1:]]))


# -- the state machine --------------------------------------------------------------------


class CalculatorMachine(AgentMachine):
    """A user's machine: their tools, their property."""

    tools = (add, echo)

    def check(self, state: AgentState) -> None:
        for execution in state.tool_executions:
            if execution.name == "add" and execution.ok:
                assert execution.value == execution.arguments["a"] + execution.arguments["b"]


CalculatorMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=12, deadline=None
)
TestCalculatorMachine = CalculatorMachine.TestCase


ROOT = Path(__file__).resolve().parent.parent


# -- the pytest plugin --------------------------------------------------------------------


def test_plugin_fixtures_work_in_a_users_project(pytester):
    """A project gets agent_clock, agent_ids, scripted_loop and captured_events."""
    pytester.makepyfile(
        """
        from agents import AgentState
        from agents.testing import call, reply
        from helpers_for_plugin import add

        def test_uses_the_fixtures(scripted_loop, captured_events, agent_clock, agent_ids):
            loop = scripted_loop(call("add", a=1, b=2), reply("3"), tools=[add],
                                 listeners=[captured_events])
            final = loop.run(AgentState.initial(messages=["1+2?"]))
            assert final.final_response == "3"
            assert final.agent_id == "agent-1"
            assert captured_events.names[-1] == "ExecutionCompleted"
            assert final.created_at.year == 2025
        """
    )
    pytester.makepyfile(
        helpers_for_plugin="""
        from agents import tool

        @tool
        def add(a: int, b: int) -> int:
            \"\"\"Add.\"\"\"
            return a + b
    """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_plugin_leaves_other_projects_alone(pytester):
    """A project that never asks for the fixtures runs as before."""
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    listed = pytester.runpytest("-p", "no:cacheprovider", "--fixtures")
    assert any("scripted_loop" in line for line in listed.outlines)  # the plugin is loaded


def test_scripted_loops_work_under_given_as_the_docs_show(pytester):
    """The property-testing page's ``@given`` example, run by pytest through the plugin:
    it passes; the same test with the function-scoped ``scripted_loop`` is refused by
    Hypothesis's health check (why ``scripted_loops`` exists)."""
    page = (ROOT / "docs" / "how-to" / "property-testing.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "scripted_loops" in b)
    pytester.makepyfile(test_docs_example=block)
    pytester.makepyfile(
        test_function_scoped=block.replace("scripted_loops", "scripted_loop").replace(
            "test_doubling_is_reported", "test_with_a_function_scoped_fixture"
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert any("function_scoped_fixture" in line for line in result.outlines)
