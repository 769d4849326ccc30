"""A step's tool calls as a batch: the approval gate, BEFORE_TOOL_USE hooks, the
invocations to perform, AFTER_TOOL_USE hooks, and the signals the results carry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from agents.core.hooks import HookContext, HookTrigger
from agents.core.run import Draft, Machine, MachineFailure, Run
from agents.core.transitions import blocked_execution
from agents.records.compiled import replace_fields
from agents.records.effects import Failed, InvokeTools, ToolInvocation
from agents.records.events import ToolCallBlocked, ToolCallCompleted, ToolCallStarted
from agents.records.frozen import to_pvector
from agents.records.inference import InferenceResponse
from agents.records.inputs import InputRequest
from agents.records.messages import ToolCall
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, ToolExecution
from agents.tools.outcomes import asked

__all__ = [
    "ToolBatch",
    "approval_gate",
    "batch_signals",
    "finish_tools",
    "finished_before",
    "plain_invocations",
    "plan_tools",
    "questions",
    "resumed_executions",
    "runs_sequentially",
    "still_to_make",
    "suspend",
    "suspend_for_inputs",
    "tool_effect",
    "tool_signals",
    "waiting_step",
]


class ToolBatch(NamedTuple):
    """The calls of a step as planned: each call as finally made, blocked ones recorded."""

    state: AgentState
    planned: tuple[tuple[ToolCall, ToolExecution | None], ...]
    invocations: tuple[ToolInvocation, ...]
    sequential: bool


def plan_tools(
    run: Run,
    state: AgentState,
    step: AgentStep | None,
    calls: Any,
    number: int,
    denied: Mapping[str, str] | None = None,
) -> ToolBatch:
    """BEFORE_TOOL_USE hooks in call order, then ids and start times for the calls to run."""
    machine = run.machine
    clock = machine.clock
    ids = machine.ids
    execution_id = run.execution_id
    run_hooks = run.run_hooks
    before = machine.hooks[HookTrigger.BEFORE_TOOL_USE]
    if not before and not denied:  # the common case: every call runs as asked
        invocations = tuple(
            ToolInvocation(ids.new_id("tool"), call, clock.now(), execution_id, number, state)
            for call in calls
        )
        return ToolBatch(
            state,
            tuple((call, None) for call in calls),
            invocations,
            runs_sequentially(machine, invocations),
        )
    planned: list[tuple[ToolCall, ToolExecution | None]] = []
    for call in calls:
        if denied and call.id in denied:  # a human said no: recorded as blocked
            planned.append(
                (call, blocked_execution(ids.new_id("tool"), call, denied[call.id], clock.now()))
            )
            continue
        if before:
            context = run_hooks(
                state,
                before,
                HookContext(
                    trigger=HookTrigger.BEFORE_TOOL_USE,
                    state=state,
                    step=step,
                    response=step.response if step is not None else None,
                    tool_call=call,
                ),
                number,
            )
            state = context.state
            call = context.tool_call or call
            if context.blocked_reason is not None:
                planned.append(
                    (
                        call,
                        blocked_execution(
                            ids.new_id("tool"), call, context.blocked_reason, clock.now()
                        ),
                    )
                )
                continue
        planned.append((call, None))
    invocations = tuple(
        ToolInvocation(ids.new_id("tool"), call, clock.now(), execution_id, number, state)
        for call, held in planned
        if held is None
    )
    return ToolBatch(state, tuple(planned), invocations, runs_sequentially(machine, invocations))


def runs_sequentially(machine: Machine, invocations: tuple[ToolInvocation, ...]) -> bool:
    """Whether a batch runs one call at a time: by configuration, size, or a tool's flag."""
    if not machine.parallel or len(invocations) < 2:
        return True
    tools = machine.tools
    for invocation in invocations:
        found = tools.get(invocation.tool_call.name)
        if found is not None and found.sequential:
            return True
    return False


def finish_tools(
    run: Run,
    state: AgentState,
    step: AgentStep | None,
    batch: ToolBatch,
    outcome: Any,
    number: int,
) -> tuple[AgentState, tuple[ToolExecution, ...]]:
    """Completion times in call order, events, then AFTER_TOOL_USE hooks in call order."""
    if type(outcome) is Failed:
        raise MachineFailure(outcome.error, finished_before(outcome))
    results: tuple[ToolExecution, ...] = outcome
    emit, agent_id, execution_id = run.detail_emit, run.agent_id, run.execution_id
    run_hooks = run.run_hooks
    after = run.hooks[HookTrigger.AFTER_TOOL_USE]
    if not after and emit is None and len(results) == len(batch.planned):
        return state, results
    executions: list[ToolExecution] = []
    index = 0
    for call, held in batch.planned:
        if held is None:
            execution = results[index]
            index += 1
            if execution.error is not None and asked(execution) is not None:
                executions.append(execution)  # waits for a human: nothing to announce yet
                continue
            if emit is not None:
                emit(
                    ToolCallCompleted(
                        agent_id=agent_id,
                        execution_id=execution_id,
                        step=number,
                        tool_execution=execution,
                    )
                )
        else:
            execution = held
            if emit is not None:
                emit(
                    ToolCallBlocked(
                        agent_id=agent_id,
                        execution_id=execution_id,
                        step=number,
                        tool_execution=execution,
                    )
                )
        if after:
            try:
                context = run_hooks(
                    state,
                    after,
                    HookContext(
                        trigger=HookTrigger.AFTER_TOOL_USE,
                        state=state,
                        step=step,
                        response=step.response if step is not None else None,
                        tool_call=call,
                        tool_execution=execution,
                    ),
                    number,
                )
            except MachineFailure as failure:
                raise MachineFailure(failure.error, (*executions, execution)) from None
            state = context.state
            execution = context.tool_execution or execution
        executions.append(execution)
    return state, tuple(executions)


def finished_before(failed: Failed) -> tuple[ToolExecution, ...]:
    """The executions a failed batch finished before the failure."""
    return tuple(e for e in failed.finished if type(e) is ToolExecution)


def tool_signals(
    state: AgentState, executions: tuple[ToolExecution, ...], stop_on_tool_error: bool
) -> AgentState:
    """Signals carried by the batch: StopAgent, unanimous terminate, tool errors."""
    ran = 0
    terminate = True
    failed: ToolExecution | None = None
    for execution in executions:
        if execution.stop_signal is not None:
            state = state.with_stop_signal(execution.stop_signal)
        if not execution.blocked:
            ran += 1
            terminate = terminate and execution.terminate
        if failed is None and execution.failed:
            failed = execution
    if ran and terminate:
        names = sorted({e.name for e in executions if not e.blocked})
        state = state.with_stop_signal(
            StopSignal(
                reason=StopReason.COMPLETED,
                message="a tool asked to terminate the run",
                source=", ".join(names),
            )
        )
    if stop_on_tool_error and failed is not None and failed.error is not None:
        state = state.with_stop_signal(
            StopSignal(
                reason=StopReason.ERROR,
                message=failed.error.describe(),
                context={"tool": failed.name, "tool_call_id": failed.tool_call.id},
                source="stop_on_tool_error",
            )
        )
    return state


def approval_gate(
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


def suspend(state: AgentState, step: AgentStep, held: list[ToolCall]) -> AgentState:
    """The state with the step in progress kept and the calls waiting for approval."""
    assert state.execution is not None
    return replace_fields(
        state,
        execution=replace_fields(
            state.execution, current_step=step, pending_approvals=to_pvector(held)
        ),
    )


def questions(executions: tuple[ToolExecution, ...]) -> list[InputRequest]:
    """What the calls that stopped to ask a human asked (``InputRequired``), in call order."""
    return [request for request in map(asked, executions) if request is not None]


def suspend_for_inputs(
    run: Run, state: AgentState, draft: Draft, executions: tuple[ToolExecution, ...]
) -> AgentState:
    """The state with the step in progress kept, with the calls that finished, and the
    questions the others asked (the answers given so far are kept for them); the run
    stops there, SUSPENDED."""
    assert state.execution is not None
    run.stopping = True
    run.waiting_request = draft.request
    requests = questions(executions)
    finished = [e for e in executions if asked(e) is None]
    step = replace_fields(waiting_step(draft), tool_executions=to_pvector(finished))
    return replace_fields(
        state,
        execution=replace_fields(
            state.execution, current_step=step, pending_inputs=to_pvector(requests)
        ),
    )


def still_to_make(calls: Sequence[ToolCall], kept: Sequence[ToolExecution]) -> Sequence[ToolCall]:
    """The calls of a resumed step that have no result yet (a step suspended for a
    human's answers kept the results of the calls that finished)."""
    if not kept:
        return calls
    finished = {e.tool_call.id for e in kept}
    return [call for call in calls if call.id not in finished]


def resumed_executions(
    state: AgentState,
    response: InferenceResponse,
    resumed: AgentStep,
    executions: tuple[ToolExecution, ...],
) -> tuple[AgentState, tuple[ToolExecution, ...]]:
    """A step resumed with a human's answers: the calls made again with them, between the
    ones that had finished (call order), each with the answers it was given; the answers
    leave the execution once no call waits for more."""
    execution = state.execution
    assert execution is not None
    kept, answers = resumed.tool_executions, execution.inputs
    if not kept and answers is None:  # resumed after approvals
        return state, executions
    by_call = {e.tool_call.id: e for e in kept}
    made = iter(executions)
    merged: list[ToolExecution] = []
    waiting = False
    for call in response.tool_calls:
        done = by_call.get(call.id)
        if done is None:
            done = next(made)
            if done.error is not None and asked(done) is not None:
                waiting = True
            else:
                given = [a for a in answers or () if a.call_id == call.id]
                if given:
                    done = replace_fields(done, inputs=to_pvector(given))
        merged.append(done)
    if not waiting and answers is not None:
        state = replace_fields(
            state, execution=replace_fields(execution, inputs=None, pending_inputs=None)
        )
    return state, tuple(merged)


# -- the effect that runs a step's calls --------------------------------------------------


def waiting_step(draft: Draft) -> AgentStep:
    """A step suspended for approvals: its input and the model's answer, unarchived."""
    return AgentStep(
        id=draft.id,
        input_messages=draft.input_messages,
        response=draft.response,
        compaction=draft.compaction,
        conversation_length=draft.conversation_length,
    )


def tool_effect(
    run: Run, state: AgentState, draft: Draft, calls: Any
) -> tuple[AgentState, InvokeTools | None, ToolBatch | None]:
    """The calls other than one plain call: the approval gate (``run.stopping`` when the
    step is suspended for decisions), BEFORE_TOOL_USE hooks and events (a ``ToolBatch``),
    or several plain calls; the effect that runs them (``draft.made``: the step so far,
    for the hooks); ``calls``: the answer's calls, or those of a resumed step still to make."""
    response = draft.response
    assert response is not None
    number = draft.number
    denied: dict[str, str] = {}
    if run.approval_tools:
        held, denied = approval_gate(
            state, calls, run.approval_tools, decided=draft.id == run.resumed_step_id
        )
        if held:
            run.stopping = True
            run.waiting_request = draft.request
            return suspend(state, waiting_step(draft), held), None, None
    if run.tool_hooks:
        draft.made = AgentStep(id=draft.id, input_messages=draft.input_messages, response=response)
    if run.plain_tools and not denied:  # no hooks, listeners or denials
        return state, plain_invocations(run, state, calls, number), None
    batch = plan_tools(run, state, draft.made, calls, number, denied)
    if run.detail_emit is not None:
        for invocation in batch.invocations:
            run.detail_emit(
                ToolCallStarted(
                    agent_id=run.agent_id,
                    execution_id=run.execution_id,
                    step=number,
                    tool_call=invocation.tool_call,
                )
            )
    effect = InvokeTools(batch.invocations, batch.sequential) if batch.invocations else None
    return batch.state, effect, batch


def plain_invocations(run: Run, state: AgentState, calls: Any, number: int) -> InvokeTools:
    """The ``InvokeTools`` effect for calls that run as asked: ids and start times in call
    order."""
    new_id, now, execution_id = run.new_id, run.now, run.execution_id
    invocations = tuple(
        [ToolInvocation(new_id("tool"), c, now(), execution_id, number, state) for c in calls]
    )
    sequential = runs_sequentially(run.machine, invocations)
    return InvokeTools(invocations, sequential)


def batch_signals(
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
