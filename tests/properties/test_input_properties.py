"""Properties of questions for a human (docs/design/sessions.md as this project extends it):
whatever the batches and the answers, a run suspended for questions, stored and resumed any number
of times, ends with every call made once per question plus once, the answers kept in order,
every invariant holding, and the same JSON every time."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agents import AgentLoop, AgentState, ExecutionStatus, ToolContext, tool
from agents.testing import (
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    call,
    calls,
    check_invariants,
    reply,
)

ANSWER = {"type": "object", "properties": {"n": {"type": "integer"}}}


@tool
def quiz(questions: int, context: ToolContext) -> list[Any]:
    """Asks ``questions`` questions, one after the other; answers with what it was told."""
    told = []
    for number in range(questions):
        answer = context.ask(f"question {number}", ANSWER)
        told.append([answer.action, dict(answer.content or {})])
    return told


@tool
def plain(x: int) -> int:
    """No question."""
    return x


call_specs = st.lists(
    st.one_of(st.integers(0, 2).map(lambda n: ("quiz", n)), st.just(("plain", 0))),
    min_size=1,
    max_size=4,
)
answers = st.lists(
    st.one_of(
        st.integers(-5, 5).map(lambda n: ("accept", {"n": n})),
        st.sampled_from([("decline", None), ("cancel", None)]),
    ),
    min_size=12,
    max_size=12,
)


def script_of(batches: list[list[tuple[str, int]]]) -> list[Any]:
    steps: list[Any] = []
    for index, batch in enumerate(batches):
        steps.append(
            calls(
                *(
                    call(name, id=f"c{index}-{position}", questions=n)
                    if name == "quiz"
                    else call(name, id=f"c{index}-{position}", x=position)
                    for position, (name, n) in enumerate(batch)
                )
            )
        )
    return [*steps, reply("done")]


def answered_run(
    batches: list[list[tuple[str, int]]], given_answers: list[Any], stored: list[bool], mode: str
) -> tuple[AgentState, list[Any]]:
    loop = AgentLoop(
        ScriptedDriver(script_of(batches)),
        tools=[quiz, plain],
        clock=TickingClock(),
        ids=SequentialIds(),
        tool_execution=mode,
    )
    state = loop.run(AgentState.initial("system", messages=["go"]))
    asked: list[Any] = []
    turn = 0
    while state.status is ExecutionStatus.SUSPENDED:
        assert check_invariants(state) == []
        for question in state.pending_inputs:
            action, content = given_answers[turn % len(given_answers)]
            asked.append((question.call_id, question.message, action, content))
            state = state.with_input(question.call_id, content, action=action)
            turn += 1
        if stored[turn % len(stored)]:
            state = AgentState.from_json(state.to_json())
        state = loop.run(state)
    return state, asked


@settings(max_examples=150, deadline=None)
@given(
    st.lists(call_specs, min_size=1, max_size=3),
    answers,
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.sampled_from(["sequential", "parallel"]),
)
def test_questions_resume_to_the_same_story_every_time(batches, given_answers, stored, mode):
    final, asked = answered_run(batches, given_answers, stored, mode)
    assert final.status is ExecutionStatus.COMPLETED
    assert check_invariants(final) == []
    executions = {e.tool_call.id: e for e in final.tool_executions}
    for index, batch in enumerate(batches):
        for position, (name, n) in enumerate(batch):
            execution = executions[f"c{index}-{position}"]
            if name == "plain":
                assert execution.value == position and execution.inputs is None
                continue
            mine = [a for a in asked if a[0] == execution.tool_call.id]
            assert [a[1] for a in mine] == [f"question {k}" for k in range(n)]  # in order
            assert [list(v) for v in execution.value] == [
                [action, content or {}] for _, _, action, content in mine
            ]
            assert len(execution.inputs or ()) == n
    again, _ = answered_run(batches, given_answers, [not s for s in stored], mode)
    assert again.to_json() == final.to_json()  # stored or not, the same JSON
