"""Transitions are pure: they return new values and never change their inputs
(docs/design/records.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from scripts import TOOLS, scripts, texts

from agents import (
    AgentLoop,
    AgentState,
    ErrorInfo,
    Message,
    StepExecution,
    StopReason,
    StopSignal,
)
from agents.core.transitions import archive_step, begin_execution, finish_execution, record_error
from agents.testing import ScriptedDriver, SequentialIds, TickingClock

AT = datetime(2025, 1, 1, tzinfo=UTC)


def states(script):
    loop = AgentLoop(ScriptedDriver(script), tools=TOOLS, clock=TickingClock(), ids=SequentialIds())
    return list(loop.iterate(AgentState.initial("system", messages=["go"])))


@given(scripts, texts, st.sampled_from(list(StopReason)))
def test_with_methods_do_not_mutate(script, text, reason):
    """Every ``with_*`` transition leaves its input byte-identical."""
    for state in states(script):
        before = state.to_json()
        state.with_user_message(text)
        state.with_system_prompt(text)
        state.with_metadata("k", text)
        state.with_messages([Message.user(text)])
        state.with_stop_signal(StopSignal(reason=reason, message=text))
        state.with_execution_continued()
        state.for_next_execution()
        state.with_llm_config(model=text)
        assert state.to_json() == before


@given(scripts, st.sampled_from(list(StopReason)))
def test_core_transitions_do_not_mutate(script, reason):
    """The machine's pure transitions return new states and leave inputs alone."""
    for state in states(script):
        before = state.to_json()
        begin_execution(state, AT, "execution-x", "agent-x")
        if state.execution is not None:
            state.with_stop_signal(StopSignal(reason=reason))
            record_error(state, ErrorInfo(type="X", message=str(reason)))
            last = state.step_executions.last()
            if last is not None:
                archive_step(
                    state,
                    StepExecution(number=99, step=last.step, started_at=AT, completed_at=AT),
                    [Message.user("x")],
                )
            finish_execution(state, state.execution.status, AT)
        assert state.to_json() == before
