"""One step of the machine (docs/design/loop.md phases 3 and 4): UseTools — the request, the model's
answer, the approval gate, the tool calls and their results — then AfterStep and
ShouldStop. ``step`` is the generator that yields the step's effects (``Infer``,
``InvokeTools``); the functions around each yield prepare the effect and take in its
result, and return what they changed. ``agents.core.machine.execute`` runs it once per
step, between ``before_step`` and the next (``agents.core.phases``).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from datetime import datetime
from typing import Any, Final

from pyrsistent import pvector

from agents.core.compaction import compact, plan_compaction
from agents.core.goals import goal_after_step, goal_started
from agents.core.hooks import HookContext, HookTrigger
from agents.core.outputs import check_final_output
from agents.core.run import Draft, MachineFailure, Run, new_draft
from agents.core.stopping import decide_stop
from agents.core.tool_batch import (
    ToolBatch,
    batch_signals,
    finish_tools,
    finished_before,
    questions,
    resumed_executions,
    still_to_make,
    suspend_for_inputs,
    tool_effect,
)
from agents.core.transitions import (
    archive_step,
    record_error,
    tool_message,
)
from agents.records.effects import Failed, Infer, InvokeTools, Progress, ToolInvocation
from agents.records.events import (
    ContextCompacted,
    InferenceCompleted,
    StepCompleted,
    StepStarted,
)
from agents.records.frozen import EMPTY_VECTOR, to_pvector
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message, ToolCall
from agents.records.record import maker
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, StepExecution

__all__ = ["Effect", "should_stop", "step"]

Effect = Infer | InvokeTools | Progress

# Positional constructors for the records made every step (see ``agents.records.record.maker``),
# which took about a fifth off a plain step (records made per step were a quarter of its cost).
_make_step: Final = maker(AgentStep)
_make_step_execution: Final = maker(StepExecution)
_step_completed_event: Final = maker(StepCompleted)  # (made every step someone listens)


# -- phases 3 and 4: a step -------------------------------------------------------------------


def step(
    run: Run, state: AgentState, number: int, started: datetime, resuming: AgentStep | None
) -> Generator[Effect, Any, AgentState]:
    """UseTools, AfterStep and ShouldStop: the step made, archived and announced; the state
    (``run.stopping`` says whether the run stops after it). Its effects are yielded here;
    what it has so far is its ``Draft``. The helpers are called only when there is
    something for them to do (compaction, hooks, events, approvals, several calls): on the
    plain path a call costs about 1 % of a step (docs/architecture.md, "What a step costs").
    """
    draft: Draft = new_draft(Draft)
    try:
        state = _open(run, state, draft, number, started, resuming)
        if resuming is None:  # the request and the model's answer
            if run.compactor is not None:
                state = yield from _compact(run, state, draft)
            if run.before_inference_hooks:
                state = _before_inference(run, state, draft)
            if run.input_rewritten:  # else the request is the conversation behind its head
                _count_conversation(run, state, draft)
            assert draft.request is not None  # _open made it
            result = yield Infer(draft.request, run.agent_id, run.execution_id, number)
            if type(result) is Failed:
                raise MachineFailure(result.error)
            draft.response = result
            if run.answer_checks:  # events, AFTER_INFERENCE hooks, finish reasons
                state = _answered(run, state, draft, result)
        response = draft.response
        assert response is not None
        calls: Sequence[ToolCall] = response.tool_calls
        if calls:  # the tool calls (of a step resumed with a human's answers: those not made)
            batch: ToolBatch | None = None
            effect: InvokeTools | None
            calls = calls if resuming is None else still_to_make(calls, resuming.tool_executions)
            if run.plain_tools and len(calls) == 1 and not run.approval_tools:  # the common case
                only = ToolInvocation(
                    run.new_id("tool"), calls[0], run.now(), run.execution_id, number, state
                )
                effect = InvokeTools((only,), True)
            else:
                state, effect, batch = tool_effect(run, state, draft, calls)
                if run.stopping:  # suspended: the step waits, unarchived, for a human's decisions
                    return state
            outcome = () if effect is None else (yield effect)
            if batch is not None:  # hooks or events: AFTER_TOOL_USE and ToolCallCompleted
                state, executions = finish_tools(run, state, draft.made, batch, outcome, number)
            elif type(outcome) is Failed:
                raise MachineFailure(outcome.error, finished_before(outcome))
            else:
                executions = outcome
            if resuming is not None:
                state, executions = resumed_executions(state, response, resuming, executions)
            draft.executions = executions
            output = draft.output = [response.to_message(), *map(tool_message, executions)]
        else:
            executions = ()
            output = draft.output = [response.to_message()]
        made = draft.made = _make_step(
            draft.id,
            draft.input_messages,
            pvector(output),
            response,
            pvector(executions),
            EMPTY_VECTOR,
            draft.compaction,
            draft.conversation_length,
        )
        for done in executions:  # AfterStep: the signals the batch carries (checked inline)
            if done.stop_signal is not None or done.terminate or done.error is not None:
                if questions(executions):  # a call waits for a human: so does the step
                    return suspend_for_inputs(run, state, draft, executions)
                state = batch_signals(run, state, executions, number)
                break
        if run.after_step_hooks:
            state = _after_step(run, state, draft, made)
    except MachineFailure as failure:
        run.stopping = True
        return _failed(run, state, failure, draft)
    return should_stop(run, state, made, number, started, draft.request)


def _open(
    run: Run,
    state: AgentState,
    draft: Draft,
    number: int,
    started: datetime,
    resuming: AgentStep | None,
) -> AgentState:
    """The draft of a new step (steering and the goal's objective delivered, its id, the
    request compiled), or of the suspended step, whose model answered already; then
    ``StepStarted``."""
    draft.number = number
    draft.started = started
    draft.executions = ()
    draft.output = draft.made = None
    if resuming is None:
        if state.context.steering or state.goal is not None:
            state = _before_request(state, started)
        draft.id = run.new_id("step")
        draft.input_messages, draft.request = run.compiler.compile(state)
        draft.response = draft.compaction = draft.conversation_length = None
    else:
        draft.id = resuming.id
        draft.input_messages = resuming.input_messages
        draft.request = None
        draft.response = resuming.response
        draft.compaction = resuming.compaction
        draft.conversation_length = resuming.conversation_length
    if run.detail_emit is not None:  # last: a listener's failure fails the step drafted
        run.detail_emit(
            StepStarted(agent_id=run.agent_id, execution_id=run.execution_id, step=number)
        )
    return state


def _before_request(state: AgentState, started: datetime) -> AgentState:
    """Steering joins the conversation right before the next inference; an active goal's
    objective at the goal's first step."""
    if state.context.steering:
        state = state.with_context(state.context.with_steering_delivered())
    if state.goal is not None:
        state = goal_started(state, started)
    return state


def _compact(run: Run, state: AgentState, draft: Draft) -> Generator[Effect, Any, AgentState]:
    """The compaction the policy plans before this step's request (its summary is an
    ``Infer`` of its own), and the request compiled again; a failed summary fails the step."""
    plan = plan_compaction(run.compactor, state.context, draft.number)
    if plan is None:
        return state
    state, compaction = yield from compact(
        state, plan, run.agent_id, run.execution_id, draft.number
    )
    draft.compaction = compaction
    draft.input_messages, draft.request = run.compiler.compile(state)
    if compaction.error is not None:
        draft.conversation_length = len(state.context.store.messages)
        raise MachineFailure(compaction.error)
    if run.step_emit is not None:
        run.step_emit(
            ContextCompacted(
                agent_id=run.agent_id,
                execution_id=run.execution_id,
                step=draft.number,
                compaction=compaction,
            )
        )
    return state


def _before_inference(run: Run, state: AgentState, draft: Draft) -> AgentState:
    """BEFORE_INFERENCE hooks, which may rewrite the request (the step's input is what the
    model is sent)."""
    request = draft.request
    assert request is not None
    context = run.run_hooks(
        state,
        run.before_inference_hooks,
        HookContext(
            trigger=HookTrigger.BEFORE_INFERENCE,
            state=state,
            step=AgentStep(id=draft.id, input_messages=draft.input_messages),
            request=request,
        ),
        draft.number,
    )
    draft.request = request = context.request or request
    draft.input_messages = request.messages
    return context.state


def _count_conversation(run: Run, state: AgentState, draft: Draft) -> None:
    """The conversation's length, kept with the step when its input is not the whole
    conversation behind the head, or its sections change (the codec then writes earlier
    inputs whole, without their head): ``at_step`` needs it."""
    length = len(state.context.store.messages)
    sent = draft.input_messages
    if run.compactor is not None or len(sent) - len(sent.head) != length:
        draft.conversation_length = length


def _answered(run: Run, state: AgentState, draft: Draft, response: InferenceResponse) -> AgentState:
    """The model's answer taken in: its event, AFTER_INFERENCE hooks (which may rewrite
    it), and the stop a finish reason asks for."""
    number = draft.number
    if run.detail_emit is not None:
        run.detail_emit(
            InferenceCompleted(
                agent_id=run.agent_id, execution_id=run.execution_id, step=number, response=response
            )
        )
    if run.after_inference_hooks:
        context = run.run_hooks(
            state,
            run.after_inference_hooks,
            HookContext(
                trigger=HookTrigger.AFTER_INFERENCE,
                state=state,
                step=AgentStep(id=draft.id, input_messages=draft.input_messages, response=response),
                request=draft.request,
                response=response,
            ),
            number,
        )
        state = context.state
        response = draft.response = context.response or response
    if response.finish_reason in run.finish_reasons:
        signal = StopSignal(
            reason=StopReason.FINISH_REASON,
            message=f"finish_reason={response.finish_reason}",
            context={"finish_reason": response.finish_reason},
            source="stop_on_finish_reasons",
        )
        state = run.with_signal(state, signal, number)
    return state


def _after_step(run: Run, state: AgentState, draft: Draft, made: AgentStep) -> AgentState:
    """AFTER_STEP hooks, over the step made."""
    context = HookContext(
        trigger=HookTrigger.AFTER_STEP,
        state=state,
        step=made,
        request=draft.request,
        response=made.response,
    )
    return run.run_hooks(state, run.after_step_hooks, context, draft.number).state


def should_stop(
    run: Run,
    state: AgentState,
    made: AgentStep,
    number: int,
    started: datetime,
    request: InferenceRequest | None = None,
) -> AgentState:
    """AfterStep's end: structured output, the goal, ShouldStop (docs/design/loop.md step 4); the
    step archived with what joins the conversation after it (``run.stopping``: whether to stop)."""
    response = made.response
    assert response is not None
    if run.cancellation is not None:
        state = run.cancel_if_asked(state, number)
    feedback: Message | None = None
    if state.context.response_format is not None and not response.tool_calls:
        state, feedback = check_final_output(state, response, run.outputs, number)
        run.signals_added(state, number)
    goal_prompt: Message | None = None
    if state.goal is not None and state.goal.active:
        state, goal_prompt = goal_after_step(state, made)
        run.signals_added(state, number)
    execution = state.execution
    assert execution is not None  # (inlined: this runs every step)
    stop, natural = decide_stop(execution.continuation, bool(response.tool_calls))
    follow_ups = state.context.follow_ups if natural is not None else ()
    # The run would complete: queued follow-ups, or the goal's prompt, start a new step.
    if follow_ups or (natural is not None and goal_prompt is not None):
        stop, natural = False, None
    else:
        goal_prompt = None
    if natural is not None:
        state = run.with_signal(state, natural, number)
    # A summary's and sub-agents' usage counts too.
    usage = made.usage if made.tool_executions or made.compaction is not None else response.usage
    run.tokens += usage.input_tokens + usage.output_tokens
    run.cost += usage.cost
    execution = state.execution
    assert execution is not None
    archived = _make_step_execution(number, made, started, run.now(), execution.continuation)
    state = archive_step(state, archived, made.output_messages)
    if feedback is not None:  # the model tries again, told what was wrong
        state = state.with_message(feedback)
    if follow_ups:
        state = state.with_context(state.context.with_follow_ups_delivered())
    if goal_prompt is not None:
        state = state.with_message(goal_prompt)
    if run.step_emit is not None:
        try:
            _step_completed(run, state, number, request)
        except MachineFailure as failure:
            run.stopping = True
            return run.fail(state, failure.error, number)
    run.stopping = stop
    return state


def _failed(run: Run, state: AgentState, failure: MachineFailure, draft: Draft) -> AgentState:
    """A step that failed, archived as an ERROR step with what its draft had
    (docs/design/loop.md)."""
    executions = draft.executions or failure.finished
    output, made, number = draft.output, draft.made, draft.number
    failed = AgentStep(
        id=draft.id,
        input_messages=draft.input_messages,
        response=draft.response,
        tool_executions=to_pvector(executions),
        output_messages=to_pvector(output) if output is not None else EMPTY_VECTOR,
        errors=to_pvector([*(made.errors if made is not None else ()), failure.error]),
        compaction=draft.compaction,
        conversation_length=draft.conversation_length,
    )
    state = run.fail(state, failure.error, number)
    assert state.execution is not None
    archived = StepExecution(
        number=number,
        step=failed,
        started_at=draft.started,
        completed_at=run.now(),
        continuation=state.execution.continuation,
    )
    state = archive_step(state, archived, output)
    if run.step_emit is not None:
        try:
            _step_completed(run, state, number, draft.request)
        except MachineFailure as listener_failure:
            state = record_error(state, listener_failure.error)
    return state


def _step_completed(
    run: Run, state: AgentState, number: int, request: InferenceRequest | None
) -> None:
    assert run.step_emit is not None
    assert state.execution is not None
    last = state.execution.step_executions.last()
    assert last is not None
    run.step_emit(
        _step_completed_event(run.agent_id, run.execution_id, number, last, state, request)
    )
