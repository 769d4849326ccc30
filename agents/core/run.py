"""What the step machine works with: the loop's fixed configuration (``Machine``), one
execution in progress (``Run``: its emitter, cancellation and counters), one step in
progress (``Draft``), hook chains, and ``MachineFailure`` (an exception inside the run,
already turned into data)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

import attrs

from agents.core.cancellation import CancellationToken
from agents.core.clock import Clock, IdFactory
from agents.core.compilers import MessageCompiler
from agents.core.hooks import Hook, HookContext, HookTrigger
from agents.core.outputs import Outputs
from agents.core.requests import RequestCompiler
from agents.core.stopping import Limits
from agents.core.transitions import record_error
from agents.errors import AgentError
from agents.records.encoding import unrecordable
from agents.records.error_info import ErrorInfo
from agents.records.events import Event, StopSignalReceived
from agents.records.frozen import History, to_pvector
from agents.records.goal import COMPLETE_GOAL
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message, ToolCall
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, Compaction, ToolExecution
from agents.tools.tool import Tools

__all__ = ["Draft", "Emit", "Machine", "MachineFailure", "Run", "new_draft", "run_hook_chain"]

Emit = Callable[[Event], None]


class MachineFailure(AgentError):
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
    message_compiler: MessageCompiler | None = None  # None sends everything (the default)
    compactor: Any = None  # a Compactor (agents.core.compaction); None never compacts
    # The driver's own model and settings (its ``request_defaults()``), under llm_config's
    llm_defaults: Any = None
    # Derived from the tools once for every run (a run used to build them at its start):
    # offered to the model (no goal), offered while a goal is active, needing approval.
    schemas: Any = attrs.field(
        init=False, repr=False, default=attrs.Factory(lambda self: _offered(self.tools), True)
    )
    goal_schemas: Any = attrs.field(
        init=False,
        repr=False,
        default=attrs.Factory(lambda self: to_pvector(self.tools.schemas), True),
    )
    approval_tools: frozenset[str] = attrs.field(
        init=False,
        repr=False,
        default=attrs.Factory(lambda self: _needing_approval(self.tools), True),
    )


def _offered(tools: Tools) -> Any:
    """The schemas offered to the model while no goal is active."""
    return to_pvector([s for s in tools.schemas if s["name"] != COMPLETE_GOAL])


def _needing_approval(tools: Tools) -> frozenset[str]:
    return frozenset(t.name for t in tools.values() if t.requires_approval)


def run_hook_chain(hooks: tuple[Hook, ...], context: HookContext) -> HookContext:
    """``context`` through ``hooks`` in order; a hook that raises or returns something
    else than a ``HookContext`` with a running state is a ``MachineFailure``."""
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
        problem = None if result is context else _unrecordable(result, context)
        if problem is not None:
            raise MachineFailure(
                ErrorInfo(
                    type="HookReturnError",
                    message=f"hook {hook.name!r} returned {problem}",
                    details={"hook": hook.name, "trigger": context.trigger.value},
                )
            )
        context = result
    return context


_PARTS: Final = (  # what a hook may hand back in its context, and of which class
    ("state", AgentState),
    ("step", AgentStep),
    ("request", InferenceRequest),
    ("response", InferenceResponse),
    ("tool_call", ToolCall),
    ("tool_execution", ToolExecution),
    ("error", ErrorInfo),
)


def _unrecordable(result: HookContext, given: HookContext) -> str | None:
    """What of a hook's context could not be recorded (a record of another class, a field
    holding what it cannot — a state made with ``attrs.evolve(state, goal="...")``),
    checked where it differs from the context the hook was given; ``None`` when all can."""
    for name, cls in _PARTS:
        new, old = getattr(result, name), getattr(given, name)
        if new is old or new is None:
            continue
        if type(new) is not cls:
            return f"a {name} that is a {type(new).__name__}, not a {cls.__name__}"
        problem = unrecordable(new, old)
        if problem is not None:
            return f"a {name} that cannot be recorded: {problem}"
    reason = result.blocked_reason
    if reason is not None and type(reason) is not str:
        return f"a blocked_reason that is a {type(reason).__name__}, not text"
    return None


class Run:
    """One execution in progress: the machine's configuration unpacked for the hot path,
    where events go, the cancellation token, and what the execution has used so far.

    The phases (``agents.core.phases``) read and update it; nothing outside one execution
    sees it. ``step_emit`` is ``None`` when nobody wants step-level events; ``plain_tools``
    says a batch needs no hooks and no events (the short path of ``use_tools``).
    """

    __slots__ = (
        "after_inference_hooks",
        "after_step_hooks",
        "agent_id",
        "answer_checks",
        "approval_tools",
        "before_inference_hooks",
        "before_step_hooks",
        "cancellation",
        "compactor",
        "compiler",
        "cost",
        "detail_emit",
        "emit",
        "execution_id",
        "finish_reasons",
        "hooks",
        "input_rewritten",
        "limits",
        "machine",
        "max_steps",
        "new_id",
        "now",
        "on_error_ran",
        "other_limits",
        "outputs",
        "plain_tools",
        "resumed_step_id",
        "signal_count",
        "started_at",
        "step_emit",
        "stop_on_tool_error",
        "stopping",
        "tokens",
        "tool_hooks",
        "waiting_request",
    )

    def __init__(
        self,
        machine: Machine,
        emit: Emit | None,
        cancellation: CancellationToken | None,
        step_events: bool,
        detail_events: bool = True,
    ) -> None:
        hooks = machine.hooks
        self.machine = machine
        self.hooks = hooks
        self.before_step_hooks = hooks[HookTrigger.BEFORE_STEP]
        self.before_inference_hooks = hooks[HookTrigger.BEFORE_INFERENCE]
        self.after_inference_hooks = hooks[HookTrigger.AFTER_INFERENCE]
        self.after_step_hooks = hooks[HookTrigger.AFTER_STEP]
        self.tool_hooks = bool(
            hooks[HookTrigger.BEFORE_TOOL_USE] or hooks[HookTrigger.AFTER_TOOL_USE]
        )
        self.emit = emit
        self.step_emit = emit if step_events else None
        # The events of a step's inside (InferenceCompleted, ToolCallStarted, -Completed,
        # -Blocked), built only when a listener wants them: the audit log does not.
        self.detail_emit = emit if step_events and detail_events else None
        self.plain_tools = not self.tool_hooks and self.detail_emit is None
        self.cancellation = cancellation
        self.now = machine.clock.now
        self.new_id = machine.ids.new_id
        limits = machine.limits
        self.limits = limits
        self.max_steps = limits.max_steps
        self.other_limits = not (
            limits.max_tokens is None and limits.max_cost is None and limits.time_limit is None
        )
        self.compactor = machine.compactor
        # Whether a step's input may be other than the conversation behind the head (then
        # the step keeps the conversation's length for ``at_step``).
        self.input_rewritten = bool(
            self.compactor is not None
            or machine.message_compiler is not None
            or self.before_inference_hooks
        )
        self.finish_reasons = machine.stop_on_finish_reasons
        # Whether a model's answer needs more than being kept: an event, hooks, a finish
        # reason that stops the run.
        self.answer_checks = bool(
            self.detail_emit is not None or self.after_inference_hooks or self.finish_reasons
        )
        self.stop_on_tool_error = machine.stop_on_tool_error
        self.compiler = RequestCompiler(
            machine.schemas, machine.goal_schemas, machine.message_compiler, machine.llm_defaults
        )
        self.outputs = Outputs(machine.output_retries)
        self.approval_tools = machine.approval_tools
        self.on_error_ran = False
        self.stopping = False  # set by each phase: the run goes to AfterExecution
        self.resumed_step_id: str | None = None  # approvals decide calls of this step only
        # The request of a step suspended after its model answered (for ExecutionCompleted)
        self.waiting_request: InferenceRequest | None = None
        # Set by begin() once the execution exists:
        self.agent_id: str | None = None
        self.execution_id = ""
        self.started_at: datetime | None = None
        self.tokens = 0
        self.cost = 0.0
        self.signal_count = 0

    def begin(self, state: AgentState) -> None:
        """Take the ids, start time and what earlier steps used from a started execution."""
        execution = state.execution
        assert execution is not None  # begin_execution made it
        self.agent_id = state.agent_id
        self.execution_id = execution.execution_id or ""
        self.started_at = execution.started_at
        for step_execution in execution.step_executions:
            usage = step_execution.step.usage
            self.tokens += usage.input_tokens + usage.output_tokens
            self.cost += usage.cost
        self.signal_count = len(execution.continuation.stop_signals)

    def signals_added(self, state: AgentState, step: int | None) -> None:
        """Emit ``StopSignalReceived`` for the signals added since the last look."""
        assert state.execution is not None
        signals = state.execution.continuation.stop_signals
        emit = self.emit
        if emit is not None:
            for signal in signals[self.signal_count :]:
                emit(
                    StopSignalReceived(
                        agent_id=self.agent_id,
                        execution_id=self.execution_id,
                        step=step,
                        signal=signal,
                    )
                )
        self.signal_count = len(signals)

    def with_signal(self, state: AgentState, signal: StopSignal, step: int | None) -> AgentState:
        """``state`` with ``signal`` added (and announced)."""
        state = state.with_stop_signal(signal)
        self.signals_added(state, step)
        return state

    def fail(self, state: AgentState, error: ErrorInfo, step: int | None) -> AgentState:
        """Record ``error`` (the first one is kept) and run the ON_ERROR hooks once."""
        state = record_error(state, error)
        self.signals_added(state, step)
        if self.on_error_ran:
            return state
        self.on_error_ran = True
        on_error = self.hooks[HookTrigger.ON_ERROR]
        if on_error:
            try:
                context = run_hook_chain(
                    on_error, HookContext(trigger=HookTrigger.ON_ERROR, state=state, error=error)
                )
                state = context.state
            except MachineFailure as failure:
                state = record_error(state, failure.error)
            self.signals_added(state, step)
        return state

    def cancel_if_asked(self, state: AgentState, step: int | None) -> AgentState:
        """A cancelled token adds ``USER_REQUESTED`` (once)."""
        cancellation = self.cancellation
        if cancellation is None or not cancellation.cancelled:
            return state
        assert state.execution is not None
        if state.execution.continuation.has_reason(StopReason.USER_REQUESTED):
            return state
        signal = StopSignal(
            reason=StopReason.USER_REQUESTED, message=cancellation.message, source="cancellation"
        )
        return self.with_signal(state, signal, step)

    def run_hooks(
        self, state: AgentState, found: tuple[Hook, ...], context: HookContext, step: int | None
    ) -> HookContext:
        """``context`` through the hooks ``found``; signals they added are announced."""
        context = run_hook_chain(found, context)
        if context.state is not state:
            self.signals_added(context.state, step)
        return context


class Draft:
    """One step in progress: what the step's phases have made so far
    (``agents.core.step_phases``). One per step, made without ``__init__`` (``new_draft``,
    then filled by ``step_phases._open``); a step that fails is archived from it."""

    __slots__ = (
        "compaction",
        "conversation_length",
        "executions",
        "id",
        "input_messages",
        "made",
        "number",
        "output",
        "request",
        "response",
        "started",
    )

    number: int
    started: datetime
    id: str
    input_messages: History[Message]
    request: InferenceRequest | None  # None when resuming: the model answered already
    response: InferenceResponse | None
    compaction: Compaction | None
    conversation_length: int | None  # set when at_step needs it
    executions: tuple[ToolExecution, ...]
    output: list[Message] | None
    made: AgentStep | None


new_draft: Final = object.__new__  # new_draft(Draft): an empty draft, no __init__
