"""One step of the machine (SPEC §3 phases 3 and 4): UseTools — the request, the model's
answer, the approval gate, the tool calls and their results — then AfterStep and
ShouldStop. ``step`` is the generator that yields the step's effects (``Infer``,
``InvokeTools``); the functions around each yield prepare the effect and take in its
result, and return what they changed. ``agents.core.machine.execute`` runs it once per
step, between ``before_step`` and the next (``agents.core.phases``).
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from typing import Any, Final, NamedTuple

from pyrsistent import pvector

from agents.core.compaction import compact, plan_compaction
from agents.core.goals import goal_after_step, goal_started
from agents.core.hooks import HookContext, HookTrigger
from agents.core.outputs import check_final_output
from agents.core.run import MachineFailure, Run
from agents.core.stopping import decide_stop
from agents.core.tool_batch import (
    ToolBatch,
    approval_gate,
    finish_tools,
    finished_before,
    plan_tools,
    runs_sequentially,
    suspend,
    tool_signals,
)
from agents.core.transitions import (
    archive_step,
    continuation,
    record_error,
    tool_message,
)
from agents.records.effects import Failed, Infer, InvokeTools, Progress, ToolInvocation
from agents.records.events import (
    ContextCompacted,
    InferenceCompleted,
    StepCompleted,
    StepStarted,
    ToolCallStarted,
)
from agents.records.frozen import EMPTY_VECTOR, History, to_pvector
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message
from agents.records.record import maker
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, Compaction, StepExecution, ToolExecution

__all__ = ["Effect", "Partial", "should_stop", "step"]

Effect = Infer | InvokeTools | Progress

# Positional constructors for the records made every step (see ``agents.records.record.maker``),
# and the named tuples' own constructor without their Python-level ``__new__``: together
# they took about a fifth off a plain step (FACTS.md: records made per step were 25 %).
_tuple_new: Final = tuple.__new__
_make_step: Final = maker(AgentStep)
_make_step_execution: Final = maker(StepExecution)

_BEFORE_INFERENCE: Final = HookTrigger.BEFORE_INFERENCE
_AFTER_INFERENCE: Final = HookTrigger.AFTER_INFERENCE
_AFTER_STEP: Final = HookTrigger.AFTER_STEP


class Partial(NamedTuple):
    """What a step that failed had made so far (archived as its ERROR step)."""

    step_id: str
    input_messages: History[Message]
    response: InferenceResponse | None
    executions: tuple[ToolExecution, ...]
    output: list[Message] | None
    made: AgentStep | None
    compaction: Compaction | None
    conversation_length: int | None


# -- phases 3 and 4: a step -------------------------------------------------------------------


def step(  # noqa: C901, PLR0912, PLR0915 -- one generator, locals across its yields (below)
    run: Run, state: AgentState, number: int, started: datetime, resuming: AgentStep | None
) -> Generator[Effect, Any, AgentState]:
    """UseTools, AfterStep and ShouldStop: the step made, archived and announced; the state
    (``run.stopping`` says whether the run stops after it).

    This is the one long function of the machine, on purpose: the step's effects are
    yielded here and what it makes is kept in local variables, the helpers returning what
    they change and called only when there is something for them to do (hooks, events,
    compaction, approvals). A per-step object, a generator per effect, or the request and
    tool-call helpers on the plain path each cost 1-4 % of a plain step (instructions
    counted under callgrind for benchmarks/bench_steps.py's workload, docs/architecture.md).
    """
    if resuming is None:
        if state.context.steering or state.goal is not None:
            state = _before_request(state, started)
        step_id = run.new_id("step")
        input_messages, request = run.compiler.compile(state)
        compaction = conversation_length = response = None
    else:  # suspended for approvals: the model answered already
        step_id, input_messages, request = resuming.id, resuming.input_messages, None
        compaction, conversation_length = resuming.compaction, resuming.conversation_length
        response = resuming.response
    executions: tuple[ToolExecution, ...] = ()
    output: list[Message] | None = None
    made: AgentStep | None = None
    try:
        if run.step_emit is not None:
            run.step_emit(
                StepStarted(agent_id=run.agent_id, execution_id=run.execution_id, step=number)
            )
        if resuming is None:
            assert request is not None  # compiled above
            if run.compactor is not None:
                state, compaction, input_messages, request = yield from _compact(
                    run, state, number, input_messages, request
                )
                if compaction is not None and compaction.error is not None:
                    conversation_length = len(state.context.store.messages)
                    raise MachineFailure(compaction.error)
            if run.before_inference_hooks:
                state, request = _before_inference(
                    run, state, step_id, input_messages, request, number
                )
                input_messages = request.messages  # what the model was sent, rewrites too
            length = len(state.context.store.messages)
            if (
                run.compactor is not None
                or len(input_messages) - len(input_messages.head) != length
            ):
                # Not all sent, or sections that change (the codec then writes earlier
                # inputs whole, without their head): at_step needs the count.
                conversation_length = length
            result = yield _tuple_new(Infer, (request, run.agent_id, run.execution_id, number))
            if type(result) is Failed:
                raise MachineFailure(result.error)
            response = result
            if run.answer_checks:  # events, AFTER_INFERENCE hooks, finish reasons
                state, response = _answered(
                    run, state, step_id, input_messages, request, result, number
                )
        assert response is not None
        calls = response.tool_calls
        if calls:
            denied: dict[str, str] = {}
            if run.approval_tools:
                held, denied = approval_gate(
                    state, calls, run.approval_tools, decided=step_id == run.resumed_step_id
                )
                if held:  # suspend: the step waits, unarchived, for a human's decisions
                    waiting = _waiting(
                        step_id, input_messages, response, compaction, conversation_length
                    )
                    run.stopping = True
                    return suspend(state, waiting, held)
            if run.tool_hooks:  # the step so far, for the hooks' context
                made = AgentStep(id=step_id, input_messages=input_messages, response=response)
            batch = None
            effect: InvokeTools | None
            if run.plain_tools and not denied and len(calls) == 1:  # the common case
                only = (run.new_id("tool"), calls[0], run.now(), run.execution_id, number, state)
                effect = _tuple_new(InvokeTools, ((_tuple_new(ToolInvocation, only),), True))
            elif run.plain_tools and not denied:  # no hooks, listeners or denials
                effect = _plain_invocations(run, state, calls, number)
            else:
                batch = _planned(run, state, made, calls, number, denied)
                state = batch.state
                effect = (
                    InvokeTools(batch.invocations, batch.sequential) if batch.invocations else None
                )
            outcome = () if effect is None else (yield effect)
            if batch is not None:  # hooks or events: AFTER_TOOL_USE and ToolCallCompleted
                state, executions = finish_tools(run, state, made, batch, outcome, number)
            elif type(outcome) is Failed:
                raise MachineFailure(outcome.error, finished_before(outcome))
            else:
                executions = outcome
            output = [response.to_message(), *map(tool_message, executions)]
        else:
            output = [response.to_message()]
        made = _make_step(
            step_id,
            input_messages,
            pvector(output),
            response,
            pvector(executions),
            EMPTY_VECTOR,
            compaction,
            conversation_length,
        )
        for done in executions:  # signals the batch carries (checked inline: every step)
            if done.stop_signal is not None or done.terminate or done.error is not None:
                state = _tool_signals(run, state, executions, number)
                break
        if run.after_step_hooks:
            context = HookContext(
                trigger=_AFTER_STEP, state=state, step=made, request=request, response=response
            )
            state = run.run_hooks(state, run.after_step_hooks, context, number).state
    except MachineFailure as failure:
        partial = Partial(
            step_id,
            input_messages,
            response,
            executions,
            output,
            made,
            compaction,
            conversation_length,
        )
        run.stopping = True
        return _failed(run, state, failure, partial, number, started)
    return should_stop(run, state, made, number, started)


def _before_request(state: AgentState, started: datetime) -> AgentState:
    """Steering joins the conversation right before the next inference; an active goal's
    objective at the goal's first step."""
    if state.context.steering:
        state = state.with_context(state.context.with_steering_delivered())
    if state.goal is not None:
        state = goal_started(state, started)
    return state


def _compact(
    run: Run, state: AgentState, number: int, input_messages: History[Message], request: Any
) -> Generator[Effect, Any, tuple[AgentState, Compaction | None, History[Message], Any]]:
    """The compaction the policy plans before this step's request, and the request again;
    a failed summary is returned in the compaction, for the step to fail."""
    plan = plan_compaction(run.compactor, state.context, number)
    if plan is None:
        return state, None, input_messages, request
    state, compaction = yield from compact(state, plan, run.agent_id, run.execution_id, number)
    input_messages, request = run.compiler.compile(state)
    if compaction.error is None and run.step_emit is not None:
        run.step_emit(
            ContextCompacted(
                agent_id=run.agent_id,
                execution_id=run.execution_id,
                step=number,
                compaction=compaction,
            )
        )
    return state, compaction, input_messages, request


def _before_inference(
    run: Run,
    state: AgentState,
    step_id: str,
    input_messages: History[Message],
    request: InferenceRequest,
    number: int,
) -> tuple[AgentState, InferenceRequest]:
    """BEFORE_INFERENCE hooks, which may rewrite the request."""
    context = run.run_hooks(
        state,
        run.before_inference_hooks,
        HookContext(
            trigger=_BEFORE_INFERENCE,
            state=state,
            step=AgentStep(id=step_id, input_messages=input_messages),
            request=request,
        ),
        number,
    )
    return context.state, context.request or request


def _waiting(
    step_id: str,
    input_messages: History[Message],
    response: InferenceResponse,
    compaction: Compaction | None,
    conversation_length: int | None,
) -> AgentStep:
    """A step suspended for approvals: its input and the model's answer, unarchived."""
    return AgentStep(
        id=step_id,
        input_messages=input_messages,
        response=response,
        compaction=compaction,
        conversation_length=conversation_length,
    )


def _answered(
    run: Run,
    state: AgentState,
    step_id: str,
    input_messages: History[Message],
    request: InferenceRequest,
    response: InferenceResponse,
    number: int,
) -> tuple[AgentState, InferenceResponse]:
    """The model's answer taken in: its event, AFTER_INFERENCE hooks (which may rewrite
    it), and the stop a finish reason asks for."""
    if run.step_emit is not None:
        run.step_emit(
            InferenceCompleted(
                agent_id=run.agent_id, execution_id=run.execution_id, step=number, response=response
            )
        )
    if run.after_inference_hooks:
        context = run.run_hooks(
            state,
            run.after_inference_hooks,
            HookContext(
                trigger=_AFTER_INFERENCE,
                state=state,
                step=AgentStep(id=step_id, input_messages=input_messages, response=response),
                request=request,
                response=response,
            ),
            number,
        )
        state = context.state
        response = context.response or response
    if response.finish_reason in run.finish_reasons:
        signal = StopSignal(
            reason=StopReason.FINISH_REASON,
            message=f"finish_reason={response.finish_reason}",
            context={"finish_reason": response.finish_reason},
            source="stop_on_finish_reasons",
        )
        state = run.with_signal(state, signal, number)
    return state, response


def _plain_invocations(run: Run, state: AgentState, calls: Any, number: int) -> InvokeTools:
    """The ``InvokeTools`` effect for calls that run as asked: ids and start times in call
    order."""
    new_id, now, execution_id = run.new_id, run.now, run.execution_id
    invocations = tuple(
        [
            _tuple_new(ToolInvocation, (new_id("tool"), c, now(), execution_id, number, state))
            for c in calls
        ]
    )
    sequential = runs_sequentially(run.machine, invocations)
    return _tuple_new(InvokeTools, (invocations, sequential))


def _planned(
    run: Run,
    state: AgentState,
    made: AgentStep | None,
    calls: Any,
    number: int,
    denied: dict[str, str],
) -> ToolBatch:
    """The calls after BEFORE_TOOL_USE hooks (which may block them) and denials, with
    ``ToolCallStarted`` for those that run."""
    batch = plan_tools(run, state, made, calls, number, denied)
    if run.step_emit is not None:
        for invocation in batch.invocations:
            run.step_emit(
                ToolCallStarted(
                    agent_id=run.agent_id,
                    execution_id=run.execution_id,
                    step=number,
                    tool_call=invocation.tool_call,
                )
            )
    return batch


def _tool_signals(
    run: Run, state: AgentState, executions: tuple[ToolExecution, ...], number: int
) -> AgentState:
    """The signals the batch carries: ``StopAgent``, a unanimous terminate, a tool error
    under ``stop_on_tool_error``."""
    stop_on_tool_error = run.stop_on_tool_error
    for done in executions:
        if (
            done.stop_signal is not None
            or done.terminate
            or (stop_on_tool_error and done.error is not None)
        ):
            state = tool_signals(state, executions, stop_on_tool_error)
            run.signals_added(state, number)
            return state
    return state  # only errors, and stop_on_tool_error is off


def should_stop(
    run: Run, state: AgentState, made: AgentStep, number: int, started: datetime
) -> AgentState:
    """AfterStep's end: structured output, the goal, ShouldStop (SPEC §3 step 4); the step
    archived with what joins the conversation after it (``run.stopping``: whether to stop)."""
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
            _step_completed(run, state, number)
        except MachineFailure as failure:
            run.stopping = True
            return run.fail(state, failure.error, number)
    run.stopping = stop
    return state


def _failed(
    run: Run,
    state: AgentState,
    failure: MachineFailure,
    partial: Partial,
    number: int,
    started: datetime,
) -> AgentState:
    """A step that failed, archived as an ERROR step with what it had (SPEC §3)."""
    executions = partial.executions or failure.finished
    output = partial.output
    made = partial.made
    failed = AgentStep(
        id=partial.step_id,
        input_messages=partial.input_messages,
        response=partial.response,
        tool_executions=to_pvector(executions),
        output_messages=to_pvector(output) if output is not None else EMPTY_VECTOR,
        errors=to_pvector([*(made.errors if made is not None else ()), failure.error]),
        compaction=partial.compaction,
        conversation_length=partial.conversation_length,
    )
    state = run.fail(state, failure.error, number)
    archived = StepExecution(
        number=number,
        step=failed,
        started_at=started,
        completed_at=run.now(),
        continuation=continuation(state),
    )
    state = archive_step(state, archived, output)
    if run.step_emit is not None:
        try:
            _step_completed(run, state, number)
        except MachineFailure as listener_failure:
            state = record_error(state, listener_failure.error)
    return state


def _step_completed(run: Run, state: AgentState, number: int) -> None:
    assert run.step_emit is not None
    assert state.execution is not None
    last = state.execution.step_executions.last()
    assert last is not None
    run.step_emit(
        StepCompleted(
            agent_id=run.agent_id,
            execution_id=run.execution_id,
            step=number,
            step_execution=last,
            state=state,
        )
    )
