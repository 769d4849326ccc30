"""Hooks (synchronous functions of a ``HookContext``) and interceptors (middleware).

A hook sees one moment of a run and returns a possibly changed context: another state,
request, response, tool call or tool execution, or a blocked call. Interceptors wrap the
effects themselves (inference and tool calls), which is where I/O-shaped concerns such as
retries, caching and rate limits belong.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

import attrs

from agents.errors import ConfigurationError
from agents.records.compiled import replace_fields
from agents.records.error_info import ErrorInfo
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import ToolCall
from agents.records.record import Record
from agents.records.state import AgentState
from agents.records.step import AgentStep, ToolExecution

__all__ = [
    "Hook",
    "HookContext",
    "HookTrigger",
    "InferenceInterceptor",
    "ToolInterceptor",
    "hook",
    "inference_interceptor",
    "is_async_interceptor",
    "sort_hooks",
    "tool_interceptor",
]


class HookTrigger(enum.Enum):
    """The moments of a run at which hooks are called, in the order they happen."""

    BEFORE_EXECUTION = "before_execution"
    BEFORE_STEP = "before_step"
    BEFORE_INFERENCE = "before_inference"
    AFTER_INFERENCE = "after_inference"
    BEFORE_TOOL_USE = "before_tool_use"
    AFTER_TOOL_USE = "after_tool_use"
    AFTER_STEP = "after_step"
    ON_STOP = "on_stop"
    AFTER_EXECUTION = "after_execution"
    ON_ERROR = "on_error"


@attrs.frozen(kw_only=True)
class HookContext(Record):
    """What a hook sees and may change; ``step`` is the step in progress, when there is one."""

    trigger: HookTrigger
    state: AgentState
    step: AgentStep | None = None
    request: InferenceRequest | None = None
    response: InferenceResponse | None = None
    tool_call: ToolCall | None = None
    tool_execution: ToolExecution | None = None
    error: ErrorInfo | None = None
    blocked_reason: str | None = None

    def with_state(self, state: AgentState) -> HookContext:
        """A copy carrying another state (kept by the loop for every trigger)."""
        return self if state is self.state else replace_fields(self, state=state)

    def with_request(self, request: InferenceRequest) -> HookContext:
        """A copy sending another request (BEFORE_INFERENCE)."""
        return self if request is self.request else replace_fields(self, request=request)

    def with_response(self, response: InferenceResponse) -> HookContext:
        """A copy with another model answer (AFTER_INFERENCE)."""
        return self if response is self.response else replace_fields(self, response=response)

    def with_tool_call(self, tool_call: ToolCall) -> HookContext:
        """A copy making another call instead (BEFORE_TOOL_USE)."""
        return self if tool_call is self.tool_call else replace_fields(self, tool_call=tool_call)

    def with_tool_execution(self, tool_execution: ToolExecution) -> HookContext:
        """A copy recording another outcome for the call (AFTER_TOOL_USE)."""
        if tool_execution is self.tool_execution:
            return self
        return replace_fields(self, tool_execution=tool_execution)

    def with_tool_blocked(self, reason: str) -> HookContext:
        """A copy blocking the call (BEFORE_TOOL_USE); the model sees ``reason``."""
        return replace_fields(self, blocked_reason=reason)


HookFunction = Callable[[HookContext], HookContext]


@attrs.frozen(kw_only=True, eq=False)
class Hook:
    """A hook function with its triggers, priority (higher runs first) and name."""

    function: HookFunction
    triggers: frozenset[HookTrigger]
    priority: int = 0
    name: str

    def __call__(self, context: HookContext) -> HookContext:
        return self.function(context)


def hook(
    trigger: HookTrigger | Iterable[HookTrigger],
    priority: int = 0,
    name: str | None = None,
) -> Callable[[HookFunction], Hook]:
    """Register a function as a hook for one trigger or several."""
    if not isinstance(trigger, HookTrigger | Iterable):
        raise ConfigurationError(f"hook() needs HookTrigger values, got {trigger!r}")
    triggers = frozenset((trigger,) if isinstance(trigger, HookTrigger) else trigger)
    if not triggers or not all(isinstance(item, HookTrigger) for item in triggers):
        raise ConfigurationError(f"hook() needs HookTrigger values, got {trigger!r}")
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ConfigurationError(f"hook priority must be an int, got {priority!r}")

    def decorate(function: HookFunction) -> Hook:
        if not callable(function):
            raise ConfigurationError(f"hook() decorates a function, got {function!r}")
        if inspect.iscoroutinefunction(function):
            raise ConfigurationError(
                f"hook {function.__name__!r} is async: hooks are synchronous; "
                "put I/O in an interceptor or a tool"
            )
        return Hook(
            function=function,
            triggers=triggers,
            priority=priority,
            name=name or str(getattr(function, "__name__", repr(function))),
        )

    return decorate


def sort_hooks(hooks: Iterable[Hook]) -> dict[HookTrigger, tuple[Hook, ...]]:
    """Hooks per trigger, higher priority first, then in registration order."""
    ordered = sorted(enumerate(hooks), key=lambda pair: (-pair[1].priority, pair[0]))
    return {
        trigger: tuple(h for _, h in ordered if trigger in h.triggers) for trigger in HookTrigger
    }


# -- interceptors ---------------------------------------------------------------------------


@runtime_checkable
class InferenceInterceptor(Protocol):
    """Wraps inference: call ``call_next(request)`` to go on, or answer by yourself."""

    def intercept_inference(
        self, request: InferenceRequest, call_next: Callable[[InferenceRequest], Any]
    ) -> Any: ...


@runtime_checkable
class ToolInterceptor(Protocol):
    """Wraps one tool call: call ``call_next(call)`` to go on, or return an execution."""

    def intercept_tool(self, call: ToolCall, call_next: Callable[[ToolCall], Any]) -> Any: ...


@attrs.frozen(eq=False)
class _FunctionInferenceInterceptor:
    function: Callable[..., Any]

    def intercept_inference(self, request: InferenceRequest, call_next: Any) -> Any:
        return self.function(request, call_next)


@attrs.frozen(eq=False)
class _FunctionToolInterceptor:
    function: Callable[..., Any]

    def intercept_tool(self, call: ToolCall, call_next: Any) -> Any:
        return self.function(call, call_next)


def inference_interceptor(function: Callable[..., Any]) -> InferenceInterceptor:
    """Turn ``fn(request, call_next)`` (sync or async) into an inference interceptor."""
    return _FunctionInferenceInterceptor(function)


def tool_interceptor(function: Callable[..., Any]) -> ToolInterceptor:
    """Turn ``fn(call, call_next)`` (sync or async) into a tool interceptor."""
    return _FunctionToolInterceptor(function)


def is_async_interceptor(interceptor: object, method: str) -> bool:
    """Whether the interceptor's ``method`` is ``async def``."""
    target = getattr(interceptor, method, None)
    if isinstance(interceptor, _FunctionInferenceInterceptor | _FunctionToolInterceptor):
        target = interceptor.function
    return target is not None and inspect.iscoroutinefunction(target)
