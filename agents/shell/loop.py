"""``AgentLoop``: the imperative shell that drives the step machine (docs/design/loop.md).

The loop is an immutable configuration. ``run``/``iterate`` (sync) and ``arun``/``aiterate``
(async) are thin runners over ``agents.core.machine.execute``: they perform the ``Infer`` and
``InvokeTools`` effects through the interceptors, send events to listeners and the log, and
never raise for a failure inside the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any, Final

import attrs

from agents.core.cancellation import CancellationToken
from agents.core.clock import Clock, IdFactory, RandomIds, SystemClock
from agents.core.compaction import Compactor
from agents.core.compilers import MessageCompiler
from agents.core.driver import Driver
from agents.core.hooks import Hook, is_async_interceptor, sort_hooks
from agents.core.machine import Effect, Machine, MachineFailure, execute
from agents.core.stopping import Limits
from agents.errors import ConfigurationError
from agents.records.arguments import listed, names
from agents.records.error_info import ErrorInfo
from agents.records.events import DETAIL_EVENTS, REPORTED_EVENTS, Event
from agents.records.frozen import EMPTY_MAP, to_pmap
from agents.records.goal import COMPLETE_GOAL
from agents.records.inference import FINISH_REASONS, InferenceRequest
from agents.records.state import AgentState
from agents.shell.describe import describe, describe_markdown
from agents.shell.driving import adrive, drive
from agents.shell.log import (
    Logger,
    event_logger,
    listened,
    listener_failure,
    log_listener_failure,
    resolve_logger,
)
from agents.shell.perform import (
    AsyncTools,
    BlockingPerformer,
    EventLoopPerformer,
    SyncTools,
    async_chain,
    sync_chain,
    threaded,
    with_deltas,
)
from agents.tools.bridge import run_coroutine
from agents.tools.tool import COMPLETE_GOAL_TOOL, Tool, Tools

__all__ = ["AgentLoop", "loop_and_state"]


_TOOL_MODES: Final = ("parallel", "sequential")


SOURCES_KEY: Final = "agents.tool_sources"
"""Where a run's state records what its tool sources (MCP servers) offered."""


def _last(states: Iterator[AgentState], state: AgentState) -> AgentState:
    final = state
    for final in states:  # noqa: B007
        pass
    return final


def request_defaults(driver: Any) -> Any:
    """What ``driver`` sends with every request of its own accord — its model and settings,
    as ``llm_config`` keys — from its optional ``request_defaults()``: requests carry them
    (under the state's ``llm_config``), so that what a provider receives is what is
    recorded and compared. A driver without the method adds nothing."""
    own = getattr(driver, "request_defaults", None)
    if not callable(own):
        return EMPTY_MAP
    defaults = own()
    if not isinstance(defaults, Mapping) or not all(type(k) is str for k in defaults):
        raise ConfigurationError(
            f"driver {driver!r}: request_defaults() must give a mapping of llm_config keys"
        )
    return to_pmap(defaults)


def _to_tools(value: Any) -> Tools:
    return value if isinstance(value, Tools) else Tools.of(listed(value, "AgentLoop: tools"))


def _hooks(value: Iterable[Any]) -> tuple[Any, ...]:
    return listed(value, "AgentLoop: hooks")


def _interceptors(value: Iterable[Any]) -> tuple[Any, ...]:
    return listed(value, "AgentLoop: interceptors")


def _listeners(value: Iterable[Any]) -> tuple[Any, ...]:
    return listed(value, "AgentLoop: listeners")


def _finish_reasons(value: Iterable[str]) -> tuple[str, ...]:
    return names(value, "stop_on_finish_reasons")


class _Derived:
    """What a loop works out from its fields, kept beside them (the loop is frozen; this is
    its one mutable part, and not part of its value: not compared, not shown, not copied by
    ``with_*``, which make a new loop): ``machine``, the fixed configuration of its runs,
    made with the loop; ``async_parts``, what the async runners perform effects with (the
    inference chain, the tool performer, whether answers come checked), made at the first
    async run; ``layers``, the interceptors' methods by kind, found at the first run."""

    __slots__ = ("async_parts", "layers", "machine")
    machine: Machine  # set by the loop as it is made

    def __init__(self) -> None:
        self.async_parts: tuple[Callable[[Any], Awaitable[Any]], AsyncTools, bool] | None = None
        self.layers: dict[str, list[tuple[Any, bool]]] = {}


@attrs.frozen(eq=False)
class AgentLoop:
    """An immutable agent loop: a driver, tools, hooks, interceptors, limits, clock and ids."""

    driver: Driver = attrs.field()
    tools: Tools = attrs.field(factory=Tools, converter=_to_tools)
    hooks: tuple[Hook, ...] = attrs.field(default=(), converter=_hooks)
    interceptors: tuple[Any, ...] = attrs.field(default=(), converter=_interceptors)
    max_steps: int | None = 20
    max_tokens: int | None = None
    max_cost: float | None = None
    time_limit: float | None = None
    stop_on_finish_reasons: tuple[str, ...] = attrs.field(default=(), converter=_finish_reasons)
    tool_execution: str = "parallel"
    stop_on_tool_error: bool = False
    clock: Clock | None = None
    ids: IdFactory | None = None
    listeners: tuple[Callable[[Event], None], ...] = attrs.field(default=(), converter=_listeners)
    logger: Logger | None = None
    output_retries: int = 2
    message_compiler: MessageCompiler | None = None
    compaction: Compactor | None = None
    # What the loop works out from its fields (its cache: see ``_Derived``).
    _derived: _Derived = attrs.field(init=False, repr=False, factory=_Derived)

    def __attrs_post_init__(self) -> None:
        driver = self.driver
        if not (
            callable(getattr(driver, "infer", None)) or callable(getattr(driver, "ainfer", None))
        ):
            raise ConfigurationError(
                f"driver {driver!r} has neither infer(request) nor ainfer(request)"
            )
        for item in self.hooks:
            if not isinstance(item, Hook):
                raise ConfigurationError(
                    f"hooks= takes functions decorated with @hook(...), got {item!r}"
                )
        for item in self.interceptors:
            if not (hasattr(item, "intercept_inference") or hasattr(item, "intercept_tool")):
                raise ConfigurationError(
                    f"interceptor {item!r} has neither intercept_inference nor intercept_tool"
                )
        if self.tool_execution not in _TOOL_MODES:
            raise ConfigurationError(
                f"tool_execution must be 'parallel' or 'sequential', got {self.tool_execution!r}"
            )
        retries = self.output_retries
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ConfigurationError(f"output_retries must be an int >= 0, got {retries!r}")
        unknown = set(self.stop_on_finish_reasons) - FINISH_REASONS
        if unknown:
            raise ConfigurationError(
                f"stop_on_finish_reasons has unknown values {sorted(unknown)}; "
                f"known: {sorted(FINISH_REASONS)}"
            )
        clock = self.clock if self.clock is not None else SystemClock()
        ids = self.ids if self.ids is not None else RandomIds()
        if not callable(getattr(clock, "now", None)):
            raise ConfigurationError(f"clock {clock!r} has no now() method")
        if not callable(getattr(ids, "new_id", None)):
            raise ConfigurationError(f"ids {ids!r} has no new_id(kind) method")
        for listener in self.listeners:
            if not callable(listener):
                raise ConfigurationError(f"listener {listener!r} is not callable")
        compiler = self.message_compiler
        if compiler is not None and not callable(getattr(compiler, "compile", None)):
            raise ConfigurationError(
                f"message_compiler {compiler!r} has no compile(context) method"
            )
        compactor = self.compaction
        if compactor is not None and not callable(getattr(compactor, "plan", None)):
            raise ConfigurationError(
                f"compaction {compactor!r} has no plan(context, step) method "
                "(use agents.Summarization)"
            )
        limits = Limits(
            max_steps=self.max_steps,
            max_tokens=self.max_tokens,
            max_cost=self.max_cost,
            time_limit=self.time_limit,
        )
        if COMPLETE_GOAL in self.tools:
            raise ConfigurationError(
                f"the tool name {COMPLETE_GOAL!r} is reserved for goals (docs/design/sessions.md)"
            )
        self._derived.machine = Machine(
            tools=self.tools.with_tool(COMPLETE_GOAL_TOOL),
            hooks=sort_hooks(self.hooks),
            limits=limits,
            stop_on_finish_reasons=frozenset(self.stop_on_finish_reasons),
            stop_on_tool_error=self.stop_on_tool_error,
            output_retries=self.output_retries,
            parallel=self.tool_execution == "parallel",
            clock=clock,
            ids=ids,
            message_compiler=compiler,
            compactor=compactor,
            llm_defaults=request_defaults(self.driver),
        )

    # -- variants -------------------------------------------------------------------------

    def with_options(self, **changes: Any) -> AgentLoop:
        """A copy with any constructor arguments replaced (validated again)."""
        return attrs.evolve(self, **changes)

    def with_driver(self, driver: Any) -> AgentLoop:
        """A copy with another driver."""
        return attrs.evolve(self, driver=driver)

    def with_tools(self, *tools: Tool | Callable[..., Any]) -> AgentLoop:
        """A copy with tools added (a tool of the same name is replaced)."""
        collection = self.tools
        for item in tools:
            collection = collection.with_tool(item)
        return attrs.evolve(self, tools=collection)

    def with_hooks(self, *hooks: Hook) -> AgentLoop:
        """A copy with hooks added after the existing ones."""
        return attrs.evolve(self, hooks=(*self.hooks, *hooks))

    def with_interceptors(self, *interceptors: Any) -> AgentLoop:
        """A copy with interceptors added inside the existing ones."""
        return attrs.evolve(self, interceptors=(*self.interceptors, *interceptors))

    def with_listeners(self, *listeners: Callable[[Event], None]) -> AgentLoop:
        """A copy with listeners added."""
        return attrs.evolve(self, listeners=(*self.listeners, *listeners))

    def with_limits(self, **limits: Any) -> AgentLoop:
        """A copy with ``max_steps``, ``max_tokens``, ``max_cost`` or ``time_limit`` changed."""
        allowed = {"max_steps", "max_tokens", "max_cost", "time_limit"}
        unknown = set(limits) - allowed
        if unknown:
            raise ConfigurationError(f"with_limits() got unknown limits {sorted(unknown)}")
        return attrs.evolve(self, **limits)

    # -- self-description -----------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Tools (with schemas), hooks (triggers, priorities), interceptors, limits, driver
        and model, as JSON data — without secrets (see ``agents.shell.describe``)."""
        return describe(self)

    def describe_markdown(self) -> str:
        """``describe()`` as a Markdown page."""
        return describe_markdown(self)

    # -- runners --------------------------------------------------------------------------

    def run(
        self, state: AgentState, *, cancellation: CancellationToken | None = None
    ) -> AgentState:
        """Run one execution to its end and return the final state; never raises for a
        failure inside the run (it is recorded in the state)."""
        if self.tools.sources:
            return _last(self.iterate(state, cancellation=cancellation), state)
        machine, emit = self.machine_for(state, cancellation=cancellation, progress=False)
        final = state
        for final in drive(machine, self.blocking_performer(emit), progress=False):  # noqa: B007
            pass  # the loop keeps the last state
        return final

    def iterate(
        self, state: AgentState, *, cancellation: CancellationToken | None = None
    ) -> Iterator[AgentState]:
        """Yield the state after every continuing step, then the final state."""
        if self.tools.sources:
            return self._with_sources(state, cancellation)
        machine, emit = self.machine_for(state, cancellation=cancellation)
        return drive(machine, self.blocking_performer(emit), progress=True)

    async def arun(
        self, state: AgentState, *, cancellation: CancellationToken | None = None
    ) -> AgentState:
        """``run`` in an event loop; gives the same history as ``run`` for the same inputs."""
        if self.tools.sources:
            final = state
            async for final in self.aiterate(state, cancellation=cancellation):  # noqa: B007
                pass
            return final
        machine, emit = self.machine_for(
            state, cancellation=cancellation, blocking=False, progress=False
        )
        final = state
        async for final in adrive(machine, self.event_loop_performer(emit), progress=False):  # noqa: B007
            pass  # the loop keeps the last state
        return final

    def aiterate(
        self, state: AgentState, *, cancellation: CancellationToken | None = None
    ) -> AsyncIterator[AgentState]:
        """``iterate`` in an event loop."""
        if self.tools.sources:
            return self._with_sources_async(state, cancellation)
        machine, emit = self.machine_for(state, cancellation=cancellation, blocking=False)
        return adrive(machine, self.event_loop_performer(emit), progress=True)

    # -- tool sources (MCP servers): their tools for one run -------------------------------

    def opened(self, state: AgentState) -> tuple[AgentLoop, AgentState, Callable[[], None]]:
        """This loop with its tool sources' tools for one run, the state recording what
        they offered (``metadata["agents.tool_sources"]``), and what to call when the run
        ends (each source is told, so that a session opened for the run closes)."""
        sources = self.tools.sources
        opened: list[Any] = []
        added: list[Tool] = []
        try:
            for source in sources:
                added.extend(source.tools_for_run(self))
                opened.append(source)
            catalogue = [dict(source.catalogue()) for source in sources]
            unavailable = [e["error"] for e in catalogue if isinstance(e.get("error"), str)]
            loop = attrs.evolve(self, tools=self.tools.resolved(added, unavailable))
        except BaseException:
            for source in opened:
                source.release()
            raise
        if state.metadata.get(SOURCES_KEY) != catalogue:
            state = state.with_metadata(SOURCES_KEY, catalogue)

        def release() -> None:
            for source in opened:
                source.release()

        return loop, state, release

    def _with_sources(
        self, state: AgentState, cancellation: CancellationToken | None
    ) -> Iterator[AgentState]:
        loop, state, release = self.opened(state)
        try:
            yield from loop.iterate(state, cancellation=cancellation)
        finally:
            release()

    async def _with_sources_async(
        self, state: AgentState, cancellation: CancellationToken | None
    ) -> AsyncIterator[AgentState]:
        loop, state, release = await asyncio.to_thread(self.opened, state)  # may start servers
        try:
            async for step in loop.aiterate(state, cancellation=cancellation):
                yield step
        finally:
            await asyncio.to_thread(release)

    # -- the parts of a runner (for runners of one's own: agents.durable.dbos) -------------

    def machine_for(
        self,
        state: AgentState,
        *,
        cancellation: CancellationToken | None = None,
        blocking: bool = True,
        progress: bool = True,
    ) -> tuple[Generator[Effect, Any, AgentState], Callable[[Event], None] | None]:
        """The step machine of one execution of ``state`` (not started), and where its
        effects' events go (``None``: nobody wants step-level events). Misuse raises here,
        before anything runs; ``blocking`` runners take sync interceptors only. Drive it
        with ``agents.shell.driving.drive`` and ``blocking_performer(emit)``."""
        if not isinstance(state, AgentState):
            raise ConfigurationError(
                f"run() needs an AgentState, got {type(state).__name__}; "
                "build one with AgentState.initial(...)"
            )
        if cancellation is not None and not isinstance(cancellation, CancellationToken):
            raise ConfigurationError(
                f"cancellation must be a CancellationToken, got {type(cancellation).__name__}"
            )
        if blocking and any(
            is_async
            for _, is_async in (
                *self._layers("intercept_inference"),
                *self._layers("intercept_tool"),
            )
        ):
            raise ConfigurationError(
                "an async interceptor needs arun()/aiterate(); run() and iterate() take sync "
                "interceptors only"
            )
        emit, step_events, detail_events = self._emitter()
        machine = execute(
            state,
            self._derived.machine,
            emit,
            cancellation,
            progress=progress,
            step_events=step_events,
            detail_events=detail_events,
        )
        return machine, emit if step_events else None

    def _emitter(self) -> tuple[Callable[[Event], None] | None, bool, bool]:
        """The run's event sink, whether step-level (debug) events are wanted, and whether
        the events of a step's inside (``DETAIL_EVENTS``) are: by the log at debug level,
        or by a listener that does not say which events it acts on (``event_types``), or
        says these."""
        logger = resolve_logger(self.logger)
        listeners = self.listeners
        if logger is None and not listeners:
            return None, False, False
        log = event_logger(logger)

        broken: list[object] = []  # critical listeners that failed: the run is ending

        def emit(event: Event) -> None:
            if log is not None:
                log(event)
            for listener in listeners:
                if broken and listener in broken:
                    continue
                try:
                    listener(event)
                except Exception as exc:
                    if getattr(listener, "critical", False):
                        broken.append(listener)
                        shown, error = listener_failure(listener, exc)
                        raise MachineFailure(
                            ErrorInfo(
                                type="ListenerFailed",
                                message=f"critical listener {shown} failed: {error}",
                            )
                        ) from exc
                    log_listener_failure(logger, listener, exc)

        debug = log is not None and log.debug_enabled
        return emit, bool(listeners) or debug, debug or listened(listeners, DETAIL_EVENTS)

    def _reported(self) -> bool:
        """Whether what drivers report from inside an inference (``REPORTED_EVENTS``:
        streamed pieces, retries) may be acted on — by a listener or the log at debug
        level — so that the performers install a reporter (else one a step is spared)."""
        log = event_logger(resolve_logger(self.logger))
        return (log is not None and log.debug_enabled) or listened(self.listeners, REPORTED_EVENTS)

    def _layers(self, method: str) -> list[tuple[Any, bool]]:
        """The interceptors' ``method`` (``intercept_inference``, ``intercept_tool``),
        outermost first, each with whether it is async (not to be changed: shared)."""
        found = self._derived.layers.get(method)
        if found is None:
            found = self._derived.layers[method] = [
                (getattr(item, method), is_async_interceptor(item, method))
                for item in self.interceptors
                if hasattr(item, method)
            ]
        return found

    def blocking_performer(
        self, emit: Callable[[Event], None] | None, *, now: Callable[[], Any] | None = None
    ) -> BlockingPerformer:
        """How a blocking runner performs this loop's effects: inference through the
        interceptors, tools on threads (completion times from ``now``, by default the
        loop's clock), events to ``emit``."""
        layers = self._layers("intercept_inference")
        infer = sync_chain([layer for layer, _ in layers], self._sync_infer())
        tools = SyncTools(
            self._derived.machine.tools,
            [layer for layer, _ in self._layers("intercept_tool")],
            now or self._derived.machine.clock.now,
        )
        trusted = self._answers_checked(layers)
        return BlockingPerformer(infer, tools, emit, trusted, emit is not None and self._reported())

    def event_loop_performer(self, emit: Callable[[Event], None] | None) -> EventLoopPerformer:
        """How the async runners perform this loop's effects (sync or async interceptors,
        tools as tasks)."""
        parts = self._derived.async_parts
        if parts is None:
            parts = self._derived.async_parts = self._make_async_parts()
        infer, tools, trusted = parts
        reported = emit is not None and self._reported()
        return EventLoopPerformer(infer, tools, emit, trusted, reported)

    def _answers_checked(self, layers: list[Any]) -> bool:
        """Whether the model's answers come checked: the driver checks them where it makes
        them (``answers_checked = True``: the scripted, function and replay drivers) and no
        interceptor stands in between; otherwise each is checked field by field."""
        return getattr(self.driver, "answers_checked", False) is True and not layers

    def _make_async_parts(
        self,
    ) -> tuple[Callable[[Any], Awaitable[Any]], AsyncTools, bool]:
        driver = self.driver
        ainfer = getattr(driver, "ainfer", None)
        blocking = getattr(driver, "infer", None)
        sync_infer = with_deltas(blocking) if callable(blocking) else None
        if callable(ainfer):
            inner_async: Callable[[Any], Awaitable[Any]] = with_deltas(ainfer)
        else:
            assert sync_infer is not None  # a driver has one or the other: checked when made
            inner_async = threaded(sync_infer)
        layers = self._layers("intercept_inference")
        infer = async_chain(layers, inner_async, sync_infer)
        tools = AsyncTools(
            self._derived.machine.tools,
            self._layers("intercept_tool"),
            self._derived.machine.clock.now,
        )
        return infer, tools, self._answers_checked(layers)

    def _sync_infer(self) -> Callable[[InferenceRequest], Any]:
        driver = self.driver
        infer = getattr(driver, "infer", None)
        if callable(infer):
            return with_deltas(infer)
        ainfer = with_deltas(getattr(driver, "ainfer"))  # noqa: B009 (one of the two: checked)
        return lambda request: run_coroutine(ainfer(request))


def loop_and_state(value: object) -> tuple[AgentLoop, AgentState] | None:
    """``value`` as the ``(loop, state)`` pair an agent's factory may return (as
    ``AgentDefinition.build`` does), or ``None`` when it is not one."""
    if isinstance(value, tuple) and len(value) == 2:
        loop, state = value
        if isinstance(loop, AgentLoop) and isinstance(state, AgentState):
            return loop, state
    return None
