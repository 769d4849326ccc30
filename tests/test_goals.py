"""Goals (docs/design/sessions.md): an objective pursued until ``complete_goal`` or a spent
budget."""

from __future__ import annotations

from datetime import timedelta

import pytest
from helpers import add, initial

from agents import (
    AgentLoop,
    AgentState,
    ConfigurationError,
    ExecutionStatus,
    Goal,
    StopReason,
    Usage,
    tool,
)
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply


def make_loop(*script, tools=(add,), **options):
    """A scripted loop that keeps every request, so tests can see the tools offered."""
    options.setdefault("clock", TickingClock())
    options.setdefault("ids", SequentialIds())
    driver = ScriptedDriver(script, keep_requests=True)
    return AgentLoop(driver, tools=tools, **options), driver


def _names(request):
    return [schema["name"] for schema in request.tools]


def test_the_goal_runs_until_complete_goal_is_called():
    """The objective arrives at the first step; a plain reply gets a continuation prompt
    instead of completing; ``complete_goal`` completes the goal and ends the run."""
    state = initial().with_goal(Goal("Add 1 and 2, then report."))
    loop, driver = make_loop(
        reply("Let me think."),
        call("add", a=1, b=2),
        call("complete_goal", summary="1 + 2 = 3"),
    )
    final = loop.run(state)
    assert final.status is ExecutionStatus.COMPLETED
    assert final.stop_reason is StopReason.COMPLETED
    assert final.stop_signal is not None and final.stop_signal.source == "goal"
    assert final.goal is not None and final.goal.status == "complete"
    assert final.step_count == 3
    first_input = final.steps[0].input_messages
    assert first_input[-1].content == "Goal: Add 1 and 2, then report."
    second_input = final.steps[1].input_messages
    assert second_input[-1].content.startswith("Continue working on the goal: Add 1 and 2")
    assert all("complete_goal" in _names(request) for request in driver.requests)
    assert final.goal.started_at == final.step_executions[0].started_at


def test_without_a_goal_the_tool_is_not_offered():
    loop, driver = make_loop(reply("hi"))
    final = loop.run(initial())
    assert _names(driver.requests[0]) == ["add"]
    assert final.goal is None


def test_token_budget_stops_the_run_and_limits_the_goal():
    """Tokens of every step count; once the budget is spent the run stops before the next
    step with TOKEN_LIMIT and the goal is ``budget_limited``."""
    used = Usage(input_tokens=60, output_tokens=10)
    state = initial().with_goal(Goal("Keep going.", token_budget=100))
    loop, _ = make_loop(reply("one", usage=used), reply("two", usage=used), reply("three"))
    final = loop.run(state)
    assert final.status is ExecutionStatus.STOPPED
    assert final.stop_reason is StopReason.TOKEN_LIMIT
    assert final.step_count == 2
    assert final.goal is not None
    assert final.goal.status == "budget_limited"
    assert final.goal.tokens_used == 140


def test_time_budget_counts_injected_clock_time_across_executions():
    """The time budget starts at the goal's first step and spans executions."""
    clock = TickingClock(step=timedelta(seconds=1))
    state = initial().with_goal(Goal("Keep going.", time_budget=30))
    loop, _ = make_loop(call("add", a=1, b=1), max_steps=1, clock=clock)
    first = loop.run(state)
    assert first.status is ExecutionStatus.STOPPED
    assert first.stop_reason is StopReason.STEPS_LIMIT
    assert first.goal is not None and first.goal.status == "active"  # other limits keep it
    started = first.goal.started_at
    loop, _ = make_loop(*[reply(f"r{i}") for i in range(100)], max_steps=None, clock=clock)
    second = loop.run(first.with_user_message("go on"))
    assert second.status is ExecutionStatus.STOPPED
    assert second.stop_reason is StopReason.TIME_LIMIT
    assert second.goal is not None and second.goal.status == "budget_limited"
    assert second.goal.started_at == started
    last_start = second.step_executions[-1].started_at
    assert (last_start - started).total_seconds() < 30


def test_goal_survives_the_codec():
    goal = Goal("x", token_budget=5, time_budget=1.5)
    state = initial().with_goal(goal)
    back = AgentState.from_json(state.to_json())
    assert back == state and back.goal == goal


@pytest.mark.parametrize(
    "kwargs",
    [
        {"token_budget": 0},
        {"time_budget": -1.0},
        {"token_budget": True},
        {"time_budget": float("nan")},  # was kept: never spent
        {"time_budget": float("inf")},  # was kept: the state's to_json raised ValueError
    ],
)
def test_bad_budgets_are_rejected(kwargs):
    with pytest.raises(ValueError, match="finite number > 0"):
        Goal("x", **kwargs)


def test_bad_status_is_rejected():
    with pytest.raises(ValueError, match="status must be one of"):
        Goal("x", status="done")


def test_complete_goal_is_a_reserved_tool_name():
    @tool(name="complete_goal")
    def mine() -> str:
        """Mine."""
        return "x"

    with pytest.raises(ConfigurationError, match="reserved"):
        make_loop(reply("x"), tools=[mine])


def test_complete_goal_without_a_goal_does_not_end_the_run():
    """Not offered without a goal; a model calling it anyway gets a harmless answer."""
    loop, _ = make_loop(call("complete_goal"), reply("done"))
    final = loop.run(initial())
    assert final.status is ExecutionStatus.COMPLETED and final.step_count == 2
