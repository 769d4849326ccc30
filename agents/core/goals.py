"""Goals (docs/design/sessions.md) as the machine runs them: the objective at the goal's first
step, its budgets at BeforeStep, and after each step either completion or the prompt to go on.
(The ``Goal`` record is ``agents.records.goal``; the ``complete_goal`` tool is in
``agents.tools.tool``.)"""

from __future__ import annotations

from datetime import datetime

from agents.records.compiled import replace_fields
from agents.records.goal import COMPLETE_GOAL
from agents.records.messages import Message
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep

__all__ = ["goal_after_step", "goal_budgets", "goal_started"]


def goal_started(state: AgentState, now: datetime) -> AgentState:
    """At an active goal's first step: its start time, and its objective as a user
    message."""
    goal = state.goal
    if goal is None or not goal.active or goal.started_at is not None:
        return state
    return state.with_goal(replace_fields(goal, started_at=now)).with_user_message(
        f"Goal: {goal.objective}"
    )


def goal_budgets(state: AgentState, now: datetime) -> AgentState:
    """A spent goal budget stops the run (TOKEN_LIMIT or TIME_LIMIT, source "goal")."""
    goal = state.goal
    assert goal is not None
    reason, message = None, ""
    if goal.token_budget is not None and goal.tokens_used >= goal.token_budget:
        reason = StopReason.TOKEN_LIMIT
        message = f"goal used {goal.tokens_used} tokens of its budget of {goal.token_budget}"
    elif goal.time_budget is not None and goal.started_at is not None:
        elapsed = (now - goal.started_at).total_seconds()
        if elapsed >= goal.time_budget:
            reason = StopReason.TIME_LIMIT
            message = f"goal ran {elapsed:g} s of its budget of {goal.time_budget:g} s"
    if reason is None:
        return state
    state = state.with_goal(replace_fields(goal, status="budget_limited"))
    return state.with_stop_signal(StopSignal(reason=reason, message=message, source="goal"))


def goal_after_step(state: AgentState, step: AgentStep) -> tuple[AgentState, Message | None]:
    """Count the step's tokens; a successful ``complete_goal`` completes the goal and the
    run; otherwise the prompt that keeps the model on the goal."""
    goal = state.goal
    assert goal is not None
    usage = step.usage
    goal = replace_fields(
        goal, tokens_used=goal.tokens_used + usage.input_tokens + usage.output_tokens
    )
    if any(e.name == COMPLETE_GOAL and e.ok for e in step.tool_executions):
        state = state.with_goal(replace_fields(goal, status="complete"))
        return state.with_stop_signal(
            StopSignal(reason=StopReason.COMPLETED, message="the goal is complete", source="goal")
        ), None
    prompt = Message.user(
        f"Continue working on the goal: {goal.objective}. Call {COMPLETE_GOAL} when it is achieved."
    ).with_metadata("agents", "goal_prompt")
    return state.with_goal(goal), prompt
