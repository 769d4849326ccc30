"""Performing effects for the runners: interceptor chains (sync and async), inference with
streamed pieces, and tool batches (threads or tasks), with completion times read in call
order."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from datetime import datetime
from typing import Any, Final, TypeVar, cast

from agents.errors import InvalidType
from agents.records.compiled import maker
from agents.records.effects import Failed, Infer, InvokeTools, ToolInvocation
from agents.records.encoding import unrecordable
from agents.records.error_info import ErrorInfo
from agents.records.events import Event
from agents.records.inference import InferenceResponse
from agents.records.messages import ToolCall
from agents.records.step import ToolExecution
from agents.shell.reporting import FORWARD, Reporter, current_reporter, reporting
from agents.tools.bridge import run_coroutine
from agents.tools.outcomes import stamp, unknown_tool_execution
from agents.tools.threads import to_thread
from agents.tools.tool import Tools

__all__ = [
    "AsyncTools",
    "BlockingPerformer",
    "EventLoopPerformer",
    "SyncTools",
    "async_chain",
    "check_response",
    "reporter_for",
    "sync_chain",
    "threaded",
    "with_deltas",
]

X = TypeVar("X")
Y = TypeVar("Y")
Layer = Callable[[Any, Callable[[Any], Any]], Any]
_MAX_THREADS: Final = 16


def reporter_for(emit: Callable[[Event], None], effect: Infer) -> Reporter:
    return _make_reporter(emit, effect.agent_id, effect.execution_id, effect.step)


_make_reporter: Final = maker(Reporter)  # (one an inference, when someone listens)


@functools.lru_cache(maxsize=256)
def _accepts_on_delta(function: Callable[..., Any]) -> bool:
    try:
        return "on_delta" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def with_deltas(infer: Callable[..., Any]) -> Callable[[Any], Any]:
    """``infer`` passing ``on_delta`` when it accepts one and someone listens
    (docs/design/drivers.md)."""
    # A bound method is a new object at every access: its function is the stable key (the
    # signature is read once per driver class, not once per run).
    function = getattr(infer, "__func__", None)
    try:
        accepts = _accepts_on_delta(function) if function is not None else _accepts_on_delta(infer)
    except TypeError:  # an unhashable callable
        accepts = _accepts_on_delta.__wrapped__(infer)
    if not accepts:
        return infer

    def call(request: Any) -> Any:
        reporter = current_reporter()
        if reporter is None:
            return infer(request)
        return infer(request, on_delta=reporter.delta)

    return call


def check_response(response: Any) -> InferenceResponse | Failed:
    """The model's answer as the run takes it: an ``InferenceResponse`` whose fields hold
    what can be recorded (a driver's ``content=None``, a dict for a tool call, a text for
    its usage fail the step here, naming the field, rather than the engine or the store
    later); anything else is ``Failed``."""
    if type(response) is not InferenceResponse:
        problem = f"the driver returned {type(response).__name__}, expected InferenceResponse"
    else:
        found = unrecordable(response)
        if found is None:
            return response
        problem = f"the driver returned a response that cannot be recorded: {found}"
    return Failed(ErrorInfo(type="InvalidResponse", message=problem))


def sync_chain(layers: list[Layer], innermost: Callable[[X], Y]) -> Callable[[X], Y]:
    """Interceptors around ``innermost``; the first layer is the outermost."""
    chain: Callable[[Any], Any] = innermost
    for layer in reversed(layers):
        chain = _bind(layer, chain)
    return chain


def _bind(layer: Layer, call_next: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: layer(value, call_next)


def async_chain(
    layers: list[tuple[Layer, bool]],
    inner_async: Callable[[Any], Awaitable[Any]],
    inner_sync: Callable[[Any], Any] | None,
) -> Callable[[Any], Awaitable[Any]]:
    """Interceptors, sync or async, around an effect for the async runners.

    An async layer gets an awaitable ``call_next``; a sync one gets a plain ``call_next``
    (the inner chain run synchronously, or on a helper thread's event loop when only an
    async path exists) and itself runs on a worker thread so the event loop stays free.
    """
    async_fn = inner_async
    sync_fn = inner_sync
    for layer, is_async in reversed(layers):
        if is_async:
            async_fn = _bind_async(layer, async_fn)
            sync_fn = None
        else:
            sync_next = sync_fn if sync_fn is not None else _blocking(async_fn)
            sync_fn = _bind(layer, sync_next)
            async_fn = threaded(sync_fn)
    return async_fn


def _bind_async(
    layer: Layer, call_next: Callable[[Any], Awaitable[Any]]
) -> Callable[[Any], Awaitable[Any]]:
    async def call(value: Any) -> Any:
        return await layer(value, call_next)

    return call


def _blocking(function: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Any]:
    return lambda value: run_coroutine(cast(Coroutine[Any, Any, Any], function(value)))


def threaded(function: Callable[[Any], Any]) -> Callable[[Any], Awaitable[Any]]:
    return lambda value: to_thread(function, value)


def _interceptor_result(result: Any) -> ToolExecution:
    if type(result) is not ToolExecution:
        raise InvalidType(
            f"a tool interceptor returned {type(result).__name__}, expected ToolExecution"
        )
    problem = unrecordable(result)
    if problem is not None:
        raise InvalidType(
            f"a tool interceptor returned an execution that cannot be recorded: {problem}"
        )
    return result


class SyncTools:
    """Performs ``InvokeTools`` for the sync runner: threads for a parallel batch.

    Completion times are read from the loop's clock in call order: right after the call
    for a batch of one, after the whole batch otherwise (never from worker threads, whose
    timing varies), so the history is the same every time.
    """

    __slots__ = ("_layers", "_now", "_pool", "_tools")

    def __init__(self, tools: Tools, layers: list[Layer], now: Callable[[], datetime]) -> None:
        self._tools = tools
        self._layers = layers
        self._now = now
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def _innermost(self, invocation: ToolInvocation) -> Callable[[ToolCall], ToolExecution]:
        tools = self._tools

        def innermost(call: ToolCall) -> ToolExecution:
            current = (
                invocation if call is invocation.tool_call else invocation._replace(tool_call=call)
            )
            tool = tools.get(call.name)
            if tool is None:
                return unknown_tool_execution(current, tools, tools.unavailable)
            return tool.invoke(current)

        return innermost

    def _one(self, invocation: ToolInvocation) -> ToolExecution:
        if not self._layers:
            tool = self._tools.get(invocation.tool_call.name)
            if tool is None:
                return unknown_tool_execution(invocation, self._tools, self._tools.unavailable)
            return tool.invoke(invocation)
        chain = sync_chain(self._layers, self._innermost(invocation))
        return _interceptor_result(chain(invocation.tool_call))

    def perform(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        invocations = effect.invocations
        now = self._now
        if len(invocations) == 1:
            invocation = invocations[0]
            try:
                if not self._layers:
                    tool = self._tools.get(invocation.tool_call.name)
                    if tool is not None:
                        return (tool.invoke(invocation, now),)
                return (stamp(self._one(invocation), now),)
            except Exception as exc:
                return Failed(ErrorInfo.from_exception(exc))
        if effect.sequential:
            done: list[ToolExecution] = []
            for invocation in invocations:
                try:
                    done.append(self._one(invocation))
                except Exception as exc:
                    return Failed(ErrorInfo.from_exception(exc), _stamped(done, now))
            return _stamped(done, now)
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=_MAX_THREADS, thread_name_prefix="agents-tools"
            )
        futures = [  # each thread sees this context (a sub-agent's listeners, for one)
            self._pool.submit(contextvars.copy_context().run, self._one, invocation)
            for invocation in invocations
        ]
        return _gather([future.exception() or future.result() for future in futures], now)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def _stamped(
    executions: Iterable[ToolExecution], now: Callable[[], datetime]
) -> tuple[ToolExecution, ...]:
    """The executions with completion times read now, in call order."""
    return tuple([stamp(execution, now) for execution in executions])


def _gather(outcomes: list[Any], now: Callable[[], datetime]) -> tuple[ToolExecution, ...] | Failed:
    error = next((o for o in outcomes if isinstance(o, BaseException)), None)
    finished = _stamped((o for o in outcomes if isinstance(o, ToolExecution)), now)
    if error is None:
        return finished
    return Failed(ErrorInfo.from_exception(error), finished)


class AsyncTools:
    """Performs ``InvokeTools`` for the async runner: tasks for a parallel batch; completion
    times are read as in ``SyncTools``."""

    __slots__ = ("_layers", "_now", "_tools")

    def __init__(
        self, tools: Tools, layers: list[tuple[Layer, bool]], now: Callable[[], datetime]
    ) -> None:
        self._tools = tools
        self._layers = layers
        self._now = now

    async def _one(self, invocation: ToolInvocation) -> ToolExecution:
        tools = self._tools

        def current(call: ToolCall) -> ToolInvocation:
            if call is invocation.tool_call:
                return invocation
            return invocation._replace(tool_call=call)

        def inner_sync(call: ToolCall) -> ToolExecution:
            tool = tools.get(call.name)
            if tool is None:
                return unknown_tool_execution(current(call), tools, tools.unavailable)
            return tool.invoke(current(call))

        async def inner_async(call: ToolCall) -> ToolExecution:
            tool = tools.get(call.name)
            if tool is None:
                return unknown_tool_execution(current(call), tools, tools.unavailable)
            return await tool.ainvoke(current(call))

        if not self._layers:
            return await inner_async(invocation.tool_call)
        chain = async_chain(self._layers, inner_async, inner_sync)
        return _interceptor_result(await chain(invocation.tool_call))

    async def perform(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        invocations = effect.invocations
        now = self._now
        if len(invocations) == 1:
            invocation = invocations[0]
            try:
                if not self._layers:  # the common case: the tool itself, stamped as it ends
                    tool = self._tools.get(invocation.tool_call.name)
                    if tool is not None:
                        return (await tool.ainvoke(invocation, now),)
                return (stamp(await self._one(invocation), now),)
            except Exception as exc:
                return Failed(ErrorInfo.from_exception(exc))
        if effect.sequential:
            done: list[ToolExecution] = []
            for invocation in invocations:
                try:
                    done.append(await self._one(invocation))
                except Exception as exc:
                    return Failed(ErrorInfo.from_exception(exc), _stamped(done, now))
            return _stamped(done, now)
        outcomes = await asyncio.gather(
            *(self._one(i) for i in invocations), return_exceptions=True
        )
        return _gather(list(outcomes), now)


# -- the performers of the runners (agents.shell.driving) ------------------------------------


class BlockingPerformer:
    """Performs effects for a blocking runner: inference through the interceptor chain
    (streamed pieces and retries reported to ``emit``), tool batches through ``tools``
    (threads for a parallel batch), a sub-agent's events forwarded to ``emit``."""

    __slots__ = ("_infer", "_reported", "_trusted", "emit", "invoke", "tools")

    def __init__(
        self,
        infer: Callable[[Any], Any],
        tools: SyncTools,
        emit: Callable[[Event], None] | None,
        trusted: bool = False,
        reported: bool = True,
    ) -> None:
        self._infer = infer
        # Where what a driver reports (streamed pieces, retries) goes: nowhere when no
        # listener acts on it (``REPORTED_EVENTS``: ``reported`` false), a reporter spared.
        self._reported = emit if reported else None
        # The driver checks its answers where it makes them (``answers_checked``): the
        # class is all there is to check here.
        self._trusted = trusted
        self.tools = tools
        self.emit = emit
        # The batch performer itself when nobody listens (a call less per step).
        self.invoke: Callable[[InvokeTools], tuple[ToolExecution, ...] | Failed] = (
            tools.perform if emit is None else self._forwarded
        )

    def infer(self, effect: Infer) -> InferenceResponse | Failed:
        """The model's answer, or the failure as data."""
        try:
            reported = self._reported
            if reported is None:
                result = self._infer(effect.request)
            else:
                with reporting(reporter_for(reported, effect)):
                    result = self._infer(effect.request)
            if self._trusted and type(result) is InferenceResponse:
                return result
            return check_response(result)
        except Exception as exc:
            return Failed(ErrorInfo.from_exception(exc))

    def _forwarded(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        """The batch's executions in call order (or ``Failed``); a sub-agent started by a
        tool reports to this run's listeners."""
        assert self.emit is not None
        token = FORWARD.set(self.emit)  # (a try, not ``forwarding``: 1.5 % of an audited step)
        try:
            return self.tools.perform(effect)
        finally:
            FORWARD.reset(token)

    def close(self) -> None:
        """Let the tool threads go."""
        self.tools.close()


class EventLoopPerformer:
    """``BlockingPerformer`` for the async runners: awaits the interceptor chain and runs
    a parallel batch as tasks."""

    __slots__ = ("_infer", "_reported", "_trusted", "emit", "invoke", "tools")

    def __init__(
        self,
        infer: Callable[[Any], Awaitable[Any]],
        tools: AsyncTools,
        emit: Callable[[Event], None] | None,
        trusted: bool = False,
        reported: bool = True,
    ) -> None:
        self._infer = infer
        self._reported = emit if reported else None  # (as ``BlockingPerformer``'s)
        # The driver checks its answers where it makes them (``answers_checked``): the
        # class is all there is to check here.
        self._trusted = trusted
        self.tools = tools
        self.emit = emit
        # The batch performer itself when nobody listens (a coroutine less per step).
        self.invoke: Callable[[InvokeTools], Awaitable[tuple[ToolExecution, ...] | Failed]] = (
            tools.perform if emit is None else self._forwarded
        )

    async def infer(self, effect: Infer) -> InferenceResponse | Failed:
        """The model's answer, or the failure as data."""
        try:
            reported = self._reported
            if reported is None:
                answer = await self._infer(effect.request)
            else:
                with reporting(reporter_for(reported, effect)):
                    answer = await self._infer(effect.request)
            if self._trusted and type(answer) is InferenceResponse:
                return answer
            return check_response(answer)
        except Exception as exc:
            return Failed(ErrorInfo.from_exception(exc))

    async def _forwarded(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        """The batch's executions in call order (or ``Failed``); a sub-agent started by a
        tool reports to this run's listeners."""
        assert self.emit is not None
        token = FORWARD.set(self.emit)  # (a try, not ``forwarding``: 1.5 % of an audited step)
        try:
            return await self.tools.perform(effect)
        finally:
            FORWARD.reset(token)

    def close(self) -> None:
        """Nothing to let go: tasks end with the batch."""
