"""The building blocks the step machine runs: its configuration, hook chains, the request
compiler, and a step's tool batch (BEFORE_TOOL_USE hooks, invocations, AFTER_TOOL_USE hooks,
the signals tools carry). ``agents.core.machine`` sequences them into phases (SPEC §3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple

import attrs

from agents.core.clock import Clock, IdFactory
from agents.core.hooks import Hook, HookContext, HookTrigger
from agents.core.stopping import Limits
from agents.core.transitions import add_signal, blocked_execution
from agents.records.effects import Failed, ToolInvocation
from agents.records.error_info import ErrorInfo
from agents.records.events import Event, ToolCallBlocked, ToolCallCompleted
from agents.records.frozen import EMPTY_MAP, History
from agents.records.goal import COMPLETE_GOAL
from agents.records.inference import InferenceRequest
from agents.records.messages import Message, ToolCall
from agents.records.record import maker
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, ToolExecution
from agents.tools.tool import Tools

__all__ = [
    "Machine",
    "MachineFailure",
    "RequestCompiler",
    "RunHooks",
    "ToolBatch",
    "finish_tools",
    "finished_before",
    "goal_after_step",
    "goal_budgets",
    "plan_tools",
    "run_hook_chain",
    "runs_sequentially",
    "tool_signals",
]

Emit = Callable[[Event], None]
_make_request: Final = maker(InferenceRequest)
_BEFORE_TOOL_USE: Final = HookTrigger.BEFORE_TOOL_USE
_AFTER_TOOL_USE: Final = HookTrigger.AFTER_TOOL_USE


class MachineFailure(Exception):
    """An exception inside the run, already turned into data."""

    def __init__(self, error: ErrorInfo, finished: tuple[ToolExecution, ...] = ()) -> None:
        super().__init__(error.describe())
        self.error = error
        self.finished = finished

    @property
    def error_info(self) -> ErrorInfo:
        """The failure as data (read when it escapes through a driver or interceptor)."""
        return self.error


@attrs.frozen(kw_only=True)
class Machine:
    """What a loop fixes for its runs: tools, hooks per trigger, limits, clock and ids."""

    tools: Tools
    hooks: Mapping[HookTrigger, tuple[Hook, ...]]
    limits: Limits
    stop_on_finish_reasons: frozenset[str]
    stop_on_tool_error: bool
    parallel: bool
    output_retries: int = 2
    clock: Clock
    ids: IdFactory
    message_compiler: Any = None  # a MessageCompiler; None sends everything (the default)
    compactor: Any = None  # a Compactor (agents.core.compaction); None never compacts


def run_hook_chain(hooks: tuple[Hook, ...], context: HookContext) -> HookContext:
    for hook in hooks:
        try:
            result = hook.function(context)
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            raise MachineFailure(
                error.with_details({"hook": hook.name, "trigger": context.trigger.value})
            ) from exc
        if type(result) is not HookContext:
            raise MachineFailure(
                ErrorInfo(
                    type="HookReturnError",
                    message=f"hook {hook.name!r} returned {type(result).__name__}, "
                    "expected the HookContext it was given (or a changed copy)",
                    details={"hook": hook.name, "trigger": context.trigger.value},
                )
            )
        if type(result.state) is not AgentState or result.state.execution is None:
            raise MachineFailure(
                ErrorInfo(
                    type="HookReturnError",
                    message=f"hook {hook.name!r} returned a context whose state is not an "
                    "AgentState with an execution",
                    details={"hook": hook.name, "trigger": context.trigger.value},
                )
            )
        context = result
    return context


class RequestCompiler:
    """Compiles each step's messages and request, caching what rarely changes: the head
    (system prompt, summary, buffer) and the model options."""

    __slots__ = (
        "buffer",
        "goal_schemas",
        "head",
        "llm_config",
        "message_compiler",
        "model",
        "options",
        "prompt",
        "schemas",
        "summary",
    )

    def __init__(self, schemas: Any, goal_schemas: Any = None, messages: Any = None) -> None:
        self.message_compiler = messages
        self.schemas = schemas
        self.goal_schemas = schemas if goal_schemas is None else goal_schemas
        self.prompt: str | None = None
        self.summary: object = None
        self.buffer: object = None
        self.head: tuple[Message, ...] = ()
        self.llm_config: object = None
        self.model: str | None = None
        self.options: Any = EMPTY_MAP

    def compile(self, state: AgentState) -> tuple[History[Message], InferenceRequest]:
        context = state.context
        store = context.store
        if (
            context.system_prompt != self.prompt
            or store.summary is not self.summary
            or store.buffer is not self.buffer
        ):
            self.prompt, self.summary, self.buffer = (
                context.system_prompt,
                store.summary,
                store.buffer,
            )
            self.head = context.head()
        llm_config = state.llm_config
        if llm_config is not self.llm_config:
            self.llm_config = llm_config
            self.model = llm_config.get("model") if llm_config else None
            self.options = llm_config.discard("model") if llm_config else EMPTY_MAP
        if self.message_compiler is None:
            messages = store.messages.with_head(self.head)
        else:
            messages = self.message_compiler.compile(context)
        request = _make_request(
            messages,
            self.goal_schemas if state.goal is not None and state.goal.active else self.schemas,
            self.model,
            context.response_format,
            self.options,
        )
        return messages, request


RunHooks = Callable[[AgentState, tuple[Hook, ...], HookContext, "int | None"], HookContext]


class ToolBatch(NamedTuple):
    """The calls of a step as planned: each call as finally made, blocked ones recorded."""

    state: AgentState
    planned: tuple[tuple[ToolCall, ToolExecution | None], ...]
    invocations: tuple[ToolInvocation, ...]
    sequential: bool


def plan_tools(
    state: AgentState,
    step: AgentStep | None,
    calls: Any,
    number: int,
    execution_id: str,
    machine: Machine,
    run_hooks: RunHooks,
    denied: Mapping[str, str] | None = None,
) -> ToolBatch:
    """BEFORE_TOOL_USE hooks in call order, then ids and start times for the calls to run."""
    clock = machine.clock
    ids = machine.ids
    before = machine.hooks[_BEFORE_TOOL_USE]
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
                    trigger=_BEFORE_TOOL_USE,
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
    state: AgentState,
    step: AgentStep | None,
    batch: ToolBatch,
    outcome: Any,
    number: int,
    execution_id: str,
    agent_id: str | None,
    machine: Machine,
    emit: Emit | None,
    run_hooks: RunHooks,
) -> tuple[AgentState, tuple[ToolExecution, ...]]:
    """Completion times in call order, events, then AFTER_TOOL_USE hooks in call order."""
    if type(outcome) is Failed:
        raise MachineFailure(outcome.error, finished_before(outcome))
    results: tuple[ToolExecution, ...] = outcome
    after = machine.hooks[_AFTER_TOOL_USE]
    if not after and emit is None and len(results) == len(batch.planned):
        return state, results
    executions: list[ToolExecution] = []
    index = 0
    for call, held in batch.planned:
        if held is None:
            execution = results[index]
            index += 1
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
                        trigger=_AFTER_TOOL_USE,
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
            state = add_signal(state, execution.stop_signal)
        if not execution.blocked:
            ran += 1
            terminate = terminate and execution.terminate
        if failed is None and execution.failed:
            failed = execution
    if ran and terminate:
        names = sorted({e.name for e in executions if not e.blocked})
        state = add_signal(
            state,
            StopSignal(
                reason=StopReason.COMPLETED,
                message="a tool asked to terminate the run",
                source=", ".join(names),
            ),
        )
    if stop_on_tool_error and failed is not None and failed.error is not None:
        state = add_signal(
            state,
            StopSignal(
                reason=StopReason.ERROR,
                message=failed.error.describe(),
                context={"tool": failed.name, "tool_call_id": failed.tool_call.id},
                source="stop_on_tool_error",
            ),
        )
    return state


# -- goals (SPEC §12) -----------------------------------------------------------------------


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
    state = state.with_goal(goal._evolve(status="budget_limited"))
    return add_signal(state, StopSignal(reason=reason, message=message, source="goal"))


def goal_after_step(state: AgentState, step: AgentStep) -> tuple[AgentState, Message | None]:
    """Count the step's tokens; a successful ``complete_goal`` completes the goal and the
    run; otherwise the prompt that keeps the model on the goal."""
    goal = state.goal
    assert goal is not None
    usage = step.usage
    goal = goal._evolve(tokens_used=goal.tokens_used + usage.input_tokens + usage.output_tokens)
    if any(e.name == COMPLETE_GOAL and e.ok for e in step.tool_executions):
        state = state.with_goal(goal._evolve(status="complete"))
        return add_signal(
            state,
            StopSignal(reason=StopReason.COMPLETED, message="the goal is complete", source="goal"),
        ), None
    prompt = Message.user(
        f"Continue working on the goal: {goal.objective}. Call {COMPLETE_GOAL} when it is achieved."
    ).with_metadata("agents", "goal_prompt")
    return state.with_goal(goal), prompt
