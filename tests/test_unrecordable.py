"""Records that user code hands the engine and that could not be recorded: a hook's state
made with ``attrs.evolve`` and a wrong type, a driver's answer with ``content=None`` or a
text for its usage, a tool interceptor's execution with a time as text. Each fails the run
where it enters — a recorded error naming the hook or driver and the field — instead of
crashing the engine (``'str' object has no attribute 'active'``) or leaving a final state
that no store, audit log or ``to_json`` can write.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from helpers import add, initial, make_loop

from agents import (
    AgentLoop,
    ConfigurationError,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    InferenceResponse,
    ToolCall,
    hook,
    tool_interceptor,
)
from agents.drivers.replay import RecordedInference, ReplayDriver
from agents.persistence.runtime import SessionRuntime
from agents.persistence.sqlite import SQLiteSessionStore
from agents.records.encoding import check_changes
from agents.testing import FunctionDriver, SequentialIds, TickingClock, call, reply


def _failed_with(final: Any, kind: str, *words: str) -> None:
    assert final.status is ExecutionStatus.FAILED
    error = final.execution.error
    assert error.type == kind, error
    for word in words:
        assert word in error.message, error.message
    final.to_json()  # the failed run can be written (and so stored, audited, sent)


# -- a state built by hand --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"goal": "finish the job"}, "AgentState.goal holds str, not Goal or None"),
        ({"context": None}, "AgentState.context holds NoneType, not AgentContext"),
        ({"execution": "running"}, "AgentState.execution holds str, not ExecutionState or None"),
    ],
    ids=["goal", "context", "execution"],
)
@pytest.mark.parametrize("runner", ["run", "arun", "iterate"])
def test_a_state_built_by_hand_that_cannot_be_recorded_is_a_configuration_error(
    change, words, runner
):
    """Given to the run, such a state raised the engine's own error from deep inside
    (``AttributeError: 'str' object has no attribute 'active'``): now a
    ``ConfigurationError`` that names the field (the misuse a run raises for)."""
    import asyncio

    loop = make_loop(reply("done"), tools=[])
    bad = attrs.evolve(initial(), **change)
    runners = {
        "run": lambda: loop.run(bad),
        "arun": lambda: asyncio.run(loop.arun(bad)),
        "iterate": lambda: list(loop.iterate(bad)),
    }
    with pytest.raises(ConfigurationError) as refused:
        runners[runner]()
    assert str(refused.value).startswith("the state given to the run cannot be recorded: ")
    assert words in str(refused.value)
    assert loop.run(initial()).status is ExecutionStatus.COMPLETED  # the loop is unharmed


# -- hooks ------------------------------------------------------------------------------------


@hook(HookTrigger.AFTER_STEP, name="goal_as_text")
def goal_as_text(context: HookContext) -> HookContext:
    return context.with_state(attrs.evolve(context.state, goal="finish the job"))


@hook(HookTrigger.BEFORE_TOOL_USE, name="renamed_call")
def renamed_call(context: HookContext) -> HookContext:
    assert context.tool_call is not None
    return attrs.evolve(context, tool_call=attrs.evolve(context.tool_call, name=7))


@hook(HookTrigger.BEFORE_TOOL_USE, name="reason_as_number")
def reason_as_number(context: HookContext) -> HookContext:
    return attrs.evolve(context, blocked_reason=403)


@hook(HookTrigger.BEFORE_STEP, name="response_as_dict")
def response_as_dict(context: HookContext) -> HookContext:
    return attrs.evolve(context, response={"content": "hi"})


@pytest.mark.parametrize(
    ("found", "words"),
    [
        (goal_as_text, ["goal_as_text", "AgentState.goal holds str"]),
        (renamed_call, ["renamed_call", "ToolCall.name holds int"]),
        (reason_as_number, ["reason_as_number", "blocked_reason that is a int"]),
        (response_as_dict, ["response_as_dict", "a response that is a dict"]),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_a_hook_handing_back_what_cannot_be_recorded_fails_the_run(found, words):
    """The hook's failure is recorded (``HookReturnError``), on the state as it was before
    the hook: the run ends FAILED and its state can be written."""
    loop = make_loop(call("add", a=1, b=2), reply("done"), hooks=[found])
    _failed_with(loop.run(initial()), "HookReturnError", *words)


def test_a_session_run_by_such_a_hook_is_stored_failed(tmp_path):
    """Through ``SessionRuntime`` on a real SQLite store: the send returns the session,
    stored FAILED with the hook's error (it raised the engine's AttributeError, and the
    session stayed where the run began)."""
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    loop = make_loop(call("add", a=1, b=2), reply("done"), hooks=[goal_as_text])
    runtime = SessionRuntime(store, lambda session: loop)
    created = store.create(initial())
    sent = runtime.send(created.session_id, "add one and two")
    _failed_with(sent.state, "HookReturnError", "goal_as_text")
    assert store.load(created.session_id).state == sent.state


def test_a_hook_changing_a_long_run_checks_what_it_changed():
    """A hook that sets metadata on a long run's state is let through (the history it
    shares with the state it was given is not looked at again)."""

    @hook(HookTrigger.AFTER_STEP, name="count")
    def count(context: HookContext) -> HookContext:
        return context.with_state(context.state.with_metadata("seen", context.state.step_count))

    script = [call("add", a=i, b=1) for i in range(40)] + [reply("done")]
    final = make_loop(*script, hooks=[count], max_steps=50).run(initial())
    assert final.status is ExecutionStatus.COMPLETED
    assert final.metadata["seen"] == 40  # the step count before the last step is archived


# -- drivers and interceptors -------------------------------------------------------------------


class _ProviderDriver:
    """A driver of one's own (not one of the library's, which check their answers where
    they make them): it answers with ``answer``."""

    def __init__(self, answer: InferenceResponse) -> None:
        self.answer = answer

    def infer(self, request: Any) -> InferenceResponse:
        return self.answer

    async def ainfer(self, request: Any) -> InferenceResponse:
        return self.answer


_BAD_ANSWERS = [
    (InferenceResponse(content=b"hi"), "InferenceResponse.content holds bytes"),  # type: ignore[arg-type]
    (InferenceResponse(content="x", usage="lots"), "InferenceResponse.usage holds str"),  # type: ignore[arg-type]
    (InferenceResponse(content="x", usage=None), "InferenceResponse.usage holds NoneType"),  # type: ignore[arg-type]
    (InferenceResponse(tool_calls=[{"id": "c1"}]), "holds a dict item, not ToolCall"),
    (
        InferenceResponse(tool_calls=[ToolCall(id=1, name="add", arguments={})]),  # type: ignore[arg-type]
        "ToolCall.id holds int",
    ),
]


@pytest.mark.parametrize("runner", ["run", "arun"])
@pytest.mark.parametrize(("answer", "says"), _BAD_ANSWERS)
def test_a_driver_answer_that_cannot_be_recorded_fails_the_step(answer, says, runner):
    """``InvalidResponse`` naming the field, in both runners (the usage as text raised
    AttributeError out of ``run``; the others completed with a state nobody could write)."""
    loop = AgentLoop(
        _ProviderDriver(answer), tools=[add], clock=TickingClock(), ids=SequentialIds()
    )
    if runner == "run":
        final = loop.run(initial())
    else:
        import asyncio

        final = asyncio.run(loop.arun(initial()))
    _failed_with(final, "InvalidResponse", "cannot be recorded", says)


def test_an_inference_interceptor_answer_is_checked_whatever_the_driver():
    """The scripted driver's answers are checked when its script is made; an interceptor
    between it and the run is checked at every step."""

    class Sloppy:
        def intercept_inference(self, request: Any, call_next: Any) -> InferenceResponse:
            return attrs.evolve(call_next(request), model=12)

    final = make_loop(reply("done"), interceptors=[Sloppy()]).run(initial())
    _failed_with(final, "InvalidResponse", "InferenceResponse.model holds int")


def test_function_and_scripted_drivers_check_the_answers_they_are_given():
    """A function's answer fails its step (``TypeError`` naming the field); a script with
    an answer that cannot be recorded is refused when it is made."""

    def model(request: Any) -> Any:
        return [ToolCall(id="c1", name=("add",), arguments={})]  # type: ignore[arg-type]

    final = AgentLoop(FunctionDriver(model), tools=[add]).run(initial())
    _failed_with(final, "TypeError", "answer cannot be recorded", "ToolCall.name holds tuple")
    with pytest.raises(ConfigurationError, match="script step 1 cannot be recorded"):
        make_loop(reply("a"), InferenceResponse(content="b", model=5))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="recorded inference 1"):
        ReplayDriver([RecordedInference(step=1, messages=None, response="hi", error=None)])  # type: ignore[arg-type]


def test_a_tool_interceptor_execution_that_cannot_be_recorded_fails_the_run():
    """As an interceptor that raises does: the run fails with its error, naming the field
    (the execution it returned is not recorded)."""

    @tool_interceptor
    def sloppy(call: ToolCall, call_next: Any) -> Any:
        return attrs.evolve(call_next(call), error="it failed")

    loop = make_loop(call("add", a=1, b=2), reply("done"), interceptors=[sloppy])
    final = loop.run(initial())
    _failed_with(final, "TypeError", "tool interceptor", "ToolExecution.error holds str")
    assert not final.tool_executions


def test_check_changes_skips_what_is_shared_and_finds_what_is_new():
    """Only what differs from the record it was made from is looked at: a bad message
    appended to a conversation is found; a state compared with itself costs nothing."""
    state = initial()
    check_changes(state, state)
    bad = attrs.evolve(state.context.store.messages[0], content=5)
    grown = state.with_context(
        state.context.with_store(
            attrs.evolve(state.context.store, messages=[*state.context.store.messages, bad])
        )
    )
    with pytest.raises(TypeError, match=r"Message\.content holds int"):
        check_changes(grown, state)
