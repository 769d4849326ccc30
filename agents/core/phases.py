"""The phases of one execution around its steps (docs/design/loop.md): BeforeExecution, BeforeStep
and AfterExecution, as functions over the execution in progress (``Run``). A step's own
phases are in ``agents.core.step_phases``.

``agents.core.machine.execute`` calls them in order: ``before_execution``; for each step
``before_step``, then ``step``; ``after_execution``.
"""

from __future__ import annotations

from datetime import datetime

from agents.core.goals import goal_budgets
from agents.core.hooks import HookContext, HookTrigger
from agents.core.run import MachineFailure, Run
from agents.core.stopping import limit_signals
from agents.core.transitions import (
    begin_execution,
    finish_execution,
    record_error,
    terminal_status,
)
from agents.records.compiled import replace_fields
from agents.records.events import (
    ExecutionCompleted,
    ExecutionFailed,
    ExecutionStarted,
    ExecutionStopped,
)
from agents.records.execution import ExecutionStatus
from agents.records.frozen import EMPTY_VECTOR
from agents.records.state import AgentState
from agents.records.step import AgentStep

__all__ = ["after_execution", "before_execution", "before_step", "resumed_step"]


# -- phase 1: BeforeExecution -----------------------------------------------------------------


def before_execution(run: Run, state: AgentState) -> AgentState:
    """Start (or resume) the execution, emit ``ExecutionStarted``, run BEFORE_EXECUTION
    hooks; ``run.stopping`` says whether the run stops before any step."""
    execution = state.execution
    state, resumed = begin_execution(
        state,
        run.now(),
        None
        if execution is not None
        and execution.execution_id
        and not execution.status.terminal  # a finished execution is replaced
        else run.new_id("execution"),
        None if state.agent_id is not None else run.new_id("agent"),
    )
    run.begin(state)
    try:
        if run.emit is not None:
            run.emit(
                ExecutionStarted(
                    agent_id=run.agent_id,
                    execution_id=run.execution_id,
                    state=state,
                    resumed=resumed,
                )
            )
        if run.hooks[HookTrigger.BEFORE_EXECUTION]:
            context = HookContext(trigger=HookTrigger.BEFORE_EXECUTION, state=state)
            state = run.run_hooks(
                state, run.hooks[HookTrigger.BEFORE_EXECUTION], context, None
            ).state
        state = run.cancel_if_asked(state, None)
    except MachineFailure as failure:
        run.stopping = True
        return run.fail(state, failure.error, None)
    assert state.execution is not None  # begin_execution made it
    run.stopping = state.execution.continuation.should_stop
    return state


def resumed_step(run: Run, state: AgentState) -> tuple[AgentState, AgentStep | None]:
    """A step suspended for approvals or a human's answers, taken out of the execution to
    be finished (the decisions and answers the state holds apply to it alone); while a
    question is unanswered, the run stops at once, still suspended."""
    execution = state.execution
    if execution is None or execution.current_step is None:
        return state, None
    if execution.pending_inputs:  # questions nobody answered yet: the step goes on waiting
        run.stopping = True
        return state, None
    suspended = execution.current_step
    run.resumed_step_id = suspended.id
    state = replace_fields(
        state,
        execution=replace_fields(execution, current_step=None, pending_approvals=EMPTY_VECTOR),
    )
    return state, suspended


# -- phase 2: BeforeStep ----------------------------------------------------------------------


def before_step(run: Run, state: AgentState, number: int, now: datetime) -> AgentState:
    """Cancellation, the limits, the goal's budgets, BEFORE_STEP hooks; ``run.stopping``
    says whether the run stops here (no step is recorded).

    (Phases return the state alone and say "stop" through ``run``: a tuple per phase and
    step made young collections more frequent, ~4 % of a plain step with the collector on.)
    """
    try:
        if run.cancellation is not None:
            state = run.cancel_if_asked(state, None)
        if (run.max_steps is not None and number > run.max_steps) or (
            run.other_limits
            and run.limits.due(number - 1, run.tokens, run.cost, run.started_at, now)
        ):
            before = state
            assert state.execution is not None
            for signal in limit_signals(
                run.limits,
                state.execution.continuation,
                steps=number - 1,
                tokens=run.tokens,
                cost=run.cost,
                started_at=run.started_at,
                now=now,
            ):
                state = state.with_stop_signal(signal)
            if state is not before:
                run.signals_added(state, None)
        if state.goal is not None and state.goal.active:
            spent = goal_budgets(state, now)
            if spent is not state:
                state = spent
                run.signals_added(state, None)
        if run.before_step_hooks:
            context = HookContext(trigger=HookTrigger.BEFORE_STEP, state=state)
            state = run.run_hooks(state, run.before_step_hooks, context, None).state
    except MachineFailure as failure:
        run.stopping = True
        return run.fail(state, failure.error, None)
    execution = state.execution
    assert execution is not None  # (inlined: this runs every step)
    run.stopping = execution.continuation.should_stop
    return state


# -- phase 5: AfterExecution ------------------------------------------------------------------


def after_execution(run: Run, state: AgentState) -> AgentState:
    """ON_STOP and AFTER_EXECUTION hooks, the terminal status, the last events."""
    for trigger in (HookTrigger.ON_STOP, HookTrigger.AFTER_EXECUTION):
        if run.hooks[trigger]:
            try:
                context = HookContext(trigger=trigger, state=state)
                state = run.run_hooks(state, run.hooks[trigger], context, None).state
            except MachineFailure as failure:
                state = run.fail(state, failure.error, None)
    status = terminal_status(state)
    completed_at = run.now()
    state = finish_execution(state, status, completed_at)
    if run.emit is None:
        return state
    try:
        _last_events(run, state, status)
    except MachineFailure as failure:
        # A critical listener failed on the last events: nothing re-enters phase 5.
        state = finish_execution(
            record_error(state, failure.error), ExecutionStatus.FAILED, completed_at
        )
    return state


def _last_events(run: Run, state: AgentState, status: ExecutionStatus) -> None:
    emit, agent_id, execution_id = run.emit, run.agent_id, run.execution_id
    assert emit is not None
    assert state.execution is not None
    if status is ExecutionStatus.STOPPED:
        signal = state.execution.continuation.highest_signal
        emit(ExecutionStopped(agent_id=agent_id, execution_id=execution_id, signal=signal))
    elif status is ExecutionStatus.FAILED:
        error = state.execution.error
        emit(ExecutionFailed(agent_id=agent_id, execution_id=execution_id, error=error))
    waiting = run.waiting_request if status is ExecutionStatus.SUSPENDED else None
    emit(
        ExecutionCompleted(
            agent_id=agent_id,
            execution_id=execution_id,
            status=status,
            state=state,
            request=waiting,
        )
    )
