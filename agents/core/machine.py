"""The step machine: one execution as a generator of effects (SPEC §3).

``execute`` walks the phases BeforeExecution → [BeforeStep → UseTools → AfterStep →
ShouldStop] → AfterExecution. It calls hooks (synchronous functions of their input, like
workflow code) and yields ``Infer``, ``InvokeTools`` and ``Progress``; the runner performs
them and sends back the results. The machine never calls a model or a tool, never reads the
wall clock (the clock and id factory are injected) and never raises for a failure inside the
run: failures are recorded in the state it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Final

from pyrsistent import pvector

from agents.core.cancellation import CancellationToken
from agents.core.compaction import compact, plan_compaction
from agents.core.hooks import Hook, HookContext, HookTrigger
from agents.core.phases import (
    Machine,
    MachineFailure,
    RequestCompiler,
    finish_tools,
    finished_before,
    goal_after_step,
    goal_budgets,
    plan_tools,
    run_hook_chain,
    runs_sequentially,
    tool_signals,
)
from agents.core.stopping import decide_stop, limit_signals
from agents.core.transitions import (
    add_signal,
    archive_step,
    begin_execution,
    finish_execution,
    record_error,
    terminal_status,
    tool_message,
)
from agents.records.effects import Failed, Infer, InvokeTools, Progress, ToolInvocation
from agents.records.error_info import ErrorInfo
from agents.records.events import (
    ContextCompacted,
    Event,
    ExecutionCompleted,
    ExecutionFailed,
    ExecutionStarted,
    ExecutionStopped,
    InferenceCompleted,
    StepCompleted,
    StepStarted,
    StopSignalReceived,
    ToolCallStarted,
)
from agents.records.execution import ExecutionStatus
from agents.records.frozen import EMPTY_VECTOR, deep_freeze, deep_thaw, to_pvector
from agents.records.goal import COMPLETE_GOAL
from agents.records.inference import InferenceResponse
from agents.records.messages import Message, ToolCall
from agents.records.output import check_output, output_validator
from agents.records.record import maker
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, StepExecution, ToolExecution

__all__ = ["Effect", "Machine", "MachineFailure", "execute"]  # the config and failure re-exported

Effect = Infer | InvokeTools | Progress

# Positional constructors for the records made every step (see ``agents.records.record.maker``),
# and the named tuples' own constructor without their Python-level ``__new__``.
_tuple_new: Final = tuple.__new__
_make_step: Final = maker(AgentStep)
_make_step_execution: Final = maker(StepExecution)
Emit = Callable[[Event], None]

_BEFORE_EXECUTION: Final = HookTrigger.BEFORE_EXECUTION
_BEFORE_STEP: Final = HookTrigger.BEFORE_STEP
_BEFORE_INFERENCE: Final = HookTrigger.BEFORE_INFERENCE
_AFTER_INFERENCE: Final = HookTrigger.AFTER_INFERENCE
_BEFORE_TOOL_USE: Final = HookTrigger.BEFORE_TOOL_USE
_AFTER_TOOL_USE: Final = HookTrigger.AFTER_TOOL_USE
_AFTER_STEP: Final = HookTrigger.AFTER_STEP
_ON_STOP: Final = HookTrigger.ON_STOP
_AFTER_EXECUTION: Final = HookTrigger.AFTER_EXECUTION
_ON_ERROR: Final = HookTrigger.ON_ERROR


def execute(
    state: AgentState,
    machine: Machine,
    emit: Emit | None = None,
    cancellation: CancellationToken | None = None,
    *,
    progress: bool = True,
    step_events: bool = True,
) -> Generator[Effect, Any, AgentState]:
    """Run one execution of ``state``; yields effects, returns the final state.

    With ``progress=False`` no ``Progress`` effect is yielded (``run`` does not need one);
    with ``step_events=False`` only run-level events are built (nobody wants the
    step-level ones: no listener, and the log filters debug out).
    """
    clock = machine.clock
    ids = machine.ids
    hooks = machine.hooks
    before_step_hooks = hooks[_BEFORE_STEP]
    before_inference_hooks = hooks[_BEFORE_INFERENCE]
    after_inference_hooks = hooks[_AFTER_INFERENCE]
    after_step_hooks = hooks[_AFTER_STEP]
    tool_hooks = bool(hooks[_BEFORE_TOOL_USE] or hooks[_AFTER_TOOL_USE])
    step_emit = emit if step_events else None
    plain_tools = not tool_hooks and step_emit is None
    read_clock = clock.now
    new_id = ids.new_id
    limits = machine.limits
    max_steps = limits.max_steps
    other_limits = not (
        limits.max_tokens is None and limits.max_cost is None and limits.time_limit is None
    )
    compactor = machine.compactor
    finish_reasons = machine.stop_on_finish_reasons
    stop_on_tool_error = machine.stop_on_tool_error
    compiler = RequestCompiler(
        to_pvector([s for s in machine.tools.schemas if s["name"] != COMPLETE_GOAL]),
        to_pvector(machine.tools.schemas),
        machine.message_compiler,
    )
    outputs = _Outputs(machine.output_retries)
    on_error_ran = False

    now = clock.now()
    state, resumed = begin_execution(
        state,
        now,
        None
        if state.execution is not None
        and state.execution.execution_id
        and not state.execution.status.terminal  # a finished execution is replaced
        else ids.new_id("execution"),
        None if state.agent_id is not None else ids.new_id("agent"),
    )
    execution = state.execution
    assert execution is not None
    execution_id = execution.execution_id or ""
    agent_id = state.agent_id
    started_at = execution.started_at
    tokens = 0
    cost = 0.0
    for step_execution in execution.step_executions:
        usage = step_execution.step.usage
        tokens += usage.input_tokens + usage.output_tokens
        cost += usage.cost
    signal_count = len(execution.continuation.stop_signals)

    def signals_added(current: AgentState, step: int | None) -> None:
        """Emit StopSignalReceived for signals added since the last look."""
        nonlocal signal_count
        assert current.execution is not None
        signals = current.execution.continuation.stop_signals
        if emit is not None:
            for signal in signals[signal_count:]:
                emit(
                    StopSignalReceived(
                        agent_id=agent_id, execution_id=execution_id, step=step, signal=signal
                    )
                )
        signal_count = len(signals)

    def fail(current: AgentState, error: ErrorInfo, step: int | None) -> AgentState:
        """Record ``error`` and run ON_ERROR once."""
        nonlocal on_error_ran
        current = record_error(current, error)
        signals_added(current, step)
        if on_error_ran:
            return current
        on_error_ran = True
        on_error = hooks[_ON_ERROR]
        if on_error:
            try:
                context = run_hook_chain(
                    on_error, HookContext(trigger=_ON_ERROR, state=current, error=error)
                )
                current = context.state
            except MachineFailure as failure:
                current = record_error(current, failure.error)
            signals_added(current, step)
        return current

    def cancel_if_asked(current: AgentState, step: int | None) -> AgentState:
        if cancellation is None or not cancellation.cancelled:
            return current
        assert current.execution is not None
        if current.execution.continuation.has_reason(StopReason.USER_REQUESTED):
            return current
        current = add_signal(
            current,
            StopSignal(
                reason=StopReason.USER_REQUESTED,
                message=cancellation.message,
                source="cancellation",
            ),
        )
        signals_added(current, step)
        return current

    def run_hooks(
        current: AgentState, found: tuple[Hook, ...], context: HookContext, step: int | None
    ) -> HookContext:
        context = run_hook_chain(found, context)
        if context.state is not current:
            signals_added(context.state, step)
        return context

    # -- phase 1: BeforeExecution ----------------------------------------------------------
    stopping = False
    try:
        if emit is not None:
            emit(
                ExecutionStarted(
                    agent_id=agent_id, execution_id=execution_id, state=state, resumed=resumed
                )
            )
        if hooks[_BEFORE_EXECUTION]:
            state = run_hooks(
                state,
                hooks[_BEFORE_EXECUTION],
                HookContext(trigger=_BEFORE_EXECUTION, state=state),
                None,
            ).state
        state = cancel_if_asked(state, None)
        assert state.execution is not None
        stopping = state.execution.continuation.should_stop
    except MachineFailure as failure:
        state = fail(state, failure.error, None)
        stopping = True

    # -- the steps -------------------------------------------------------------------------
    approval_tools = frozenset(t.name for t in machine.tools.values() if t.requires_approval)
    resuming: AgentStep | None = None
    resumed_step_id: str | None = None  # decisions apply to the step they were asked for
    assert state.execution is not None
    if state.execution.current_step is not None:  # resumed after approvals were given
        resuming = state.execution.current_step
        resumed_step_id = resuming.id
        state = state._evolve(
            execution=state.execution._evolve(current_step=None, pending_approvals=EMPTY_VECTOR)
        )
    while not stopping:
        assert state.execution is not None
        number = len(state.execution.step_executions) + 1
        step_started = read_clock()

        if resuming is None:  # a step suspended for approvals has passed BeforeStep
            # phase 2: BeforeStep
            try:
                if cancellation is not None:
                    state = cancel_if_asked(state, None)
                if (max_steps is not None and number > max_steps) or (
                    other_limits and limits.due(number - 1, tokens, cost, started_at, step_started)
                ):
                    before = state
                    assert state.execution is not None
                    for signal in limit_signals(
                        limits,
                        state.execution.continuation,
                        steps=number - 1,
                        tokens=tokens,
                        cost=cost,
                        started_at=started_at,
                        now=step_started,
                    ):
                        state = add_signal(state, signal)
                    if state is not before:
                        signals_added(state, None)
                if state.goal is not None and state.goal.active:
                    goal_state = goal_budgets(state, step_started)
                    if goal_state is not state:
                        state = goal_state
                        signals_added(state, None)
                if before_step_hooks:
                    state = run_hooks(
                        state,
                        before_step_hooks,
                        HookContext(trigger=_BEFORE_STEP, state=state),
                        None,
                    ).state
            except MachineFailure as failure:
                state = fail(state, failure.error, None)
                break
            assert state.execution is not None
            if state.execution.continuation.should_stop:
                break

        # phase 3: UseTools
        if resuming is None:
            if state.context.steering:  # steering arrives right before the next inference
                state = state.with_context(state.context.with_steering_delivered())
            goal = state.goal
            if goal is not None and goal.active and goal.started_at is None:
                # The objective arrives as a user message at the goal's first step.
                state = state.with_goal(goal._evolve(started_at=step_started)).with_user_message(
                    f"Goal: {goal.objective}"
                )
            step_id = new_id("step")
            input_messages, request = compiler.compile(state)
            compaction = None
            conversation_length = None
        else:
            step_id, input_messages = resuming.id, resuming.input_messages
            request = None
            compaction = resuming.compaction
            conversation_length = resuming.conversation_length
        response: InferenceResponse | None = None
        executions: tuple[ToolExecution, ...] = ()
        output: list[Message] | None = None
        step: AgentStep | None = None
        try:
            if step_emit is not None:
                step_emit(StepStarted(agent_id=agent_id, execution_id=execution_id, step=number))
            if resuming is None:
                assert request is not None
                if compactor is not None:
                    plan = plan_compaction(compactor, state.context, number)
                    if plan is not None:
                        state, compaction = yield from compact(
                            state, plan, agent_id, execution_id, number
                        )
                        input_messages, request = compiler.compile(state)
                        if compaction.error is not None:
                            conversation_length = len(state.context.store.messages)
                            raise MachineFailure(compaction.error)
                        if step_emit is not None:
                            step_emit(
                                ContextCompacted(
                                    agent_id=agent_id,
                                    execution_id=execution_id,
                                    step=number,
                                    compaction=compaction,
                                )
                            )
                if before_inference_hooks:
                    context = run_hooks(
                        state,
                        before_inference_hooks,
                        HookContext(
                            trigger=_BEFORE_INFERENCE,
                            state=state,
                            step=AgentStep(id=step_id, input_messages=input_messages),
                            request=request,
                        ),
                        number,
                    )
                    state = context.state
                    request = context.request or request
                    # The step records what the model was sent, hook rewrites included.
                    input_messages = request.messages
                length = len(state.context.store.messages)
                if (
                    compactor is not None
                    or len(input_messages) - len(input_messages.head) != length
                ):
                    # Not all sent, or sections that change (the codec then writes earlier
                    # inputs whole, without their head): at_step needs the count.
                    conversation_length = length
                result = yield _tuple_new(Infer, (request, agent_id, execution_id, number))
                if type(result) is Failed:
                    raise MachineFailure(result.error)
                response = result
                if step_emit is not None:
                    step_emit(
                        InferenceCompleted(
                            agent_id=agent_id,
                            execution_id=execution_id,
                            step=number,
                            response=response,
                        )
                    )
                if after_inference_hooks:
                    context = run_hooks(
                        state,
                        after_inference_hooks,
                        HookContext(
                            trigger=_AFTER_INFERENCE,
                            state=state,
                            step=AgentStep(
                                id=step_id, input_messages=input_messages, response=response
                            ),
                            request=request,
                            response=response,
                        ),
                        number,
                    )
                    state = context.state
                    response = context.response or response
                if response.finish_reason in finish_reasons:
                    state = add_signal(
                        state,
                        StopSignal(
                            reason=StopReason.FINISH_REASON,
                            message=f"finish_reason={response.finish_reason}",
                            context={"finish_reason": response.finish_reason},
                            source="stop_on_finish_reasons",
                        ),
                    )
                    signals_added(state, number)
            else:  # resuming a step suspended for approvals: the model already answered
                response = resuming.response
                assert response is not None
            resuming = None

            calls = response.tool_calls
            denied: dict[str, str] = {}
            if calls and approval_tools:
                held, denied = _approval_gate(
                    state, calls, approval_tools, decided=step_id == resumed_step_id
                )
                if held:  # suspend: the step waits, unarchived, for a human's decisions
                    state = _suspend(
                        state,
                        AgentStep(
                            id=step_id,
                            input_messages=input_messages,
                            response=response,
                            compaction=compaction,
                            conversation_length=conversation_length,
                        ),
                        held,
                    )
                    break
            if calls:
                step = (
                    AgentStep(id=step_id, input_messages=input_messages, response=response)
                    if tool_hooks
                    else None
                )
                if plain_tools and not denied:  # no hooks, listeners or denials: short path
                    if len(calls) == 1:
                        invocations: tuple[ToolInvocation, ...] = (
                            _tuple_new(
                                ToolInvocation,
                                (
                                    new_id("tool"),
                                    calls[0],
                                    read_clock(),
                                    execution_id,
                                    number,
                                    state,
                                ),
                            ),
                        )
                    else:
                        invocations = tuple(
                            [
                                _tuple_new(
                                    ToolInvocation,
                                    (new_id("tool"), c, read_clock(), execution_id, number, state),
                                )
                                for c in calls
                            ]
                        )
                    outcome = yield _tuple_new(
                        InvokeTools,
                        (
                            invocations,
                            len(invocations) < 2 or runs_sequentially(machine, invocations),
                        ),
                    )
                    if type(outcome) is Failed:
                        raise MachineFailure(outcome.error, finished_before(outcome))
                    executions = outcome
                else:
                    batch = plan_tools(
                        state, step, calls, number, execution_id, machine, run_hooks, denied
                    )
                    state = batch.state
                    if batch.invocations:
                        if step_emit is not None:
                            for invocation in batch.invocations:
                                step_emit(
                                    ToolCallStarted(
                                        agent_id=agent_id,
                                        execution_id=execution_id,
                                        step=number,
                                        tool_call=invocation.tool_call,
                                    )
                                )
                        outcome = yield InvokeTools(batch.invocations, batch.sequential)
                    else:
                        outcome = ()
                    state, executions = finish_tools(
                        state,
                        step,
                        batch,
                        outcome,
                        number,
                        execution_id,
                        agent_id,
                        machine,
                        step_emit,
                        run_hooks,
                    )
                output = [response.to_message(), *map(tool_message, executions)]
                step = _make_step(
                    step_id,
                    input_messages,
                    pvector(output),
                    response,
                    pvector(executions),
                    EMPTY_VECTOR,  # errors
                    compaction,
                    conversation_length,
                )
                for done in executions:
                    if (
                        done.stop_signal is not None
                        or done.terminate
                        or (stop_on_tool_error and done.error is not None)
                    ):
                        state = tool_signals(state, executions, stop_on_tool_error)
                        signals_added(state, number)
                        break
            else:
                output = [response.to_message()]
                step = _make_step(
                    step_id,
                    input_messages,
                    pvector(output),
                    response,
                    EMPTY_VECTOR,
                    EMPTY_VECTOR,
                    compaction,
                    conversation_length,
                )

            # phase 4: AfterStep
            if after_step_hooks:
                state = run_hooks(
                    state,
                    after_step_hooks,
                    HookContext(
                        trigger=_AFTER_STEP,
                        state=state,
                        step=step,
                        request=request,
                        response=response,
                    ),
                    number,
                ).state
        except MachineFailure as failure:
            executions = executions or failure.finished
            step = AgentStep(
                id=step_id,
                input_messages=input_messages,
                response=response,
                tool_executions=to_pvector(executions),
                output_messages=to_pvector(output) if output is not None else EMPTY_VECTOR,
                errors=to_pvector([*(step.errors if step is not None else ()), failure.error]),
                compaction=compaction,
                conversation_length=conversation_length,
            )
            state = fail(state, failure.error, number)
            assert state.execution is not None
            state = archive_step(
                state,
                StepExecution(
                    number=number,
                    step=step,
                    started_at=step_started,
                    completed_at=clock.now(),
                    continuation=state.execution.continuation,
                ),
                output,
            )
            if step_emit is not None:
                try:
                    _emit_step_completed(step_emit, state, agent_id, execution_id, number)
                except MachineFailure as listener_failure:
                    state = record_error(state, listener_failure.error)
            break

        if cancellation is not None:
            state = cancel_if_asked(state, number)
        assert state.execution is not None
        feedback: Message | None = None
        if state.context.response_format is not None and not response.tool_calls:
            state, feedback = _check_final_output(state, response, outputs, number)
            signals_added(state, number)
        assert state.execution is not None
        goal_prompt: Message | None = None
        if state.goal is not None and state.goal.active:
            state, goal_prompt = goal_after_step(state, step)
            signals_added(state, number)
        assert state.execution is not None
        stop, natural = decide_stop(state.execution.continuation, bool(response.tool_calls))
        follow_ups = state.context.follow_ups if natural is not None else ()
        # The run would complete: queued follow-ups, or the goal's prompt, start a new step.
        if follow_ups or (natural is not None and goal_prompt is not None):
            stop, natural = False, None
        else:
            goal_prompt = None
        if natural is not None:
            state = add_signal(state, natural)
            signals_added(state, number)
        assert state.execution is not None
        # A summary's and sub-agents' usage counts too.
        usage = step.usage if executions or compaction is not None else response.usage
        tokens += usage.input_tokens + usage.output_tokens
        cost += usage.cost
        state = archive_step(
            state,
            _make_step_execution(
                number, step, step_started, read_clock(), state.execution.continuation
            ),
            output,
        )
        if feedback is not None:  # the model tries again, told what was wrong
            state = state.with_message(feedback)
        if follow_ups:
            state = state.with_context(state.context.with_follow_ups_delivered())
        if goal_prompt is not None:
            state = state.with_message(goal_prompt)
        if step_emit is not None:
            try:
                _emit_step_completed(step_emit, state, agent_id, execution_id, number)
            except MachineFailure as failure:
                state = fail(state, failure.error, number)
                break
        if stop:
            break
        if progress:
            yield Progress(state)

    # -- phase 5: AfterExecution -----------------------------------------------------------
    for trigger in (_ON_STOP, _AFTER_EXECUTION):
        if hooks[trigger]:
            try:
                state = run_hooks(
                    state, hooks[trigger], HookContext(trigger=trigger, state=state), None
                ).state
            except MachineFailure as failure:
                state = fail(state, failure.error, None)
    status = terminal_status(state)
    completed_at = clock.now()
    state = finish_execution(state, status, completed_at)
    if emit is not None:
        assert state.execution is not None
        try:
            if status is ExecutionStatus.STOPPED:
                emit(
                    ExecutionStopped(
                        agent_id=agent_id,
                        execution_id=execution_id,
                        signal=state.execution.continuation.highest_signal,
                    )
                )
            elif status is ExecutionStatus.FAILED:
                emit(
                    ExecutionFailed(
                        agent_id=agent_id, execution_id=execution_id, error=state.execution.error
                    )
                )
            emit(
                ExecutionCompleted(
                    agent_id=agent_id, execution_id=execution_id, status=status, state=state
                )
            )
        except MachineFailure as failure:
            # A critical listener failed on the last events: nothing re-enters phase 5.
            state = finish_execution(
                record_error(state, failure.error), ExecutionStatus.FAILED, completed_at
            )
    return state


class _Outputs:
    """Structured output checks of one run: the validator (per schema) and failures so far."""

    __slots__ = ("failures", "retries", "schema", "validator")

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self.failures = 0
        self.schema: object = None
        self.validator: Any = None

    def check(self, schema: Any, content: str) -> tuple[Any, str | None]:
        if schema is not self.schema:
            self.schema, self.validator = schema, output_validator(deep_thaw(schema))
        return check_output(content, self.validator)


def _check_final_output(
    state: AgentState, response: InferenceResponse, outputs: _Outputs, number: int
) -> tuple[AgentState, Message | None]:
    """A final answer under a response format: keep it, send it back, or give up."""
    execution = state.execution
    assert execution is not None
    if execution.continuation.stop_signals:
        return state, None  # the run stops anyway (a limit, an error): nothing to check
    value, problem = outputs.check(state.context.response_format, response.content)
    if problem is None:
        return state._evolve(execution=execution._evolve(final_output=deep_freeze(value))), None
    if outputs.failures >= outputs.retries:
        return add_signal(
            state,
            StopSignal(
                reason=StopReason.RETRY_LIMIT,
                message=f"no valid structured answer after {outputs.failures + 1} tries: {problem}",
                context={"output_retries": outputs.retries, "step": number},
                source="response_format",
            ),
        ), None
    outputs.failures += 1
    feedback = Message.user(
        f"Your answer could not be used: {problem}. Answer again with only a JSON value "
        "that follows the requested schema."
    ).with_metadata("agents", "output_feedback")
    return state.with_execution_continued(), feedback


def _approval_gate(
    state: AgentState, calls: Any, approval_tools: frozenset[str], *, decided: bool
) -> tuple[list[ToolCall], dict[str, str]]:
    """Calls that still wait for a decision, and the denied ones with their reasons.

    Decisions count only for the step they were asked for (``decided``): a later call that
    happens to reuse an id waits for a decision of its own."""
    assert state.execution is not None
    decisions = {d.call_id: d for d in state.execution.approvals} if decided else {}
    held: list[ToolCall] = []
    denied: dict[str, str] = {}
    for call in calls:
        if call.name not in approval_tools:
            continue
        decision = decisions.get(call.id)
        if decision is None:
            held.append(call)
        elif not decision.approved:
            denied[call.id] = f"denied: {decision.reason}" if decision.reason else "denied"
    return held, denied


def _suspend(state: AgentState, step: AgentStep, held: list[ToolCall]) -> AgentState:
    """The state with the step in progress kept and the calls waiting for approval."""
    assert state.execution is not None
    return state._evolve(
        execution=state.execution._evolve(current_step=step, pending_approvals=to_pvector(held))
    )


def _emit_step_completed(
    emit: Emit, state: AgentState, agent_id: str | None, execution_id: str, number: int
) -> None:
    assert state.execution is not None
    last = state.execution.step_executions.last()
    assert last is not None
    emit(
        StepCompleted(
            agent_id=agent_id,
            execution_id=execution_id,
            step=number,
            step_execution=last,
            state=state,
        )
    )
