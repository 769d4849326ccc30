"""Tools: ``@tool`` from typed functions, argument validation, and running one call.

Every way a call can go wrong (unknown tool, invalid JSON, missing or mistyped arguments,
an exception, a timeout, a result that is not JSON) becomes a failed ``ToolExecution`` whose
``ErrorInfo`` says what was wrong; the model reads it as the tool's result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import enum
import inspect
import math
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, Final, overload

import attrs
from pyrsistent import PMap, PVector, pmap

from agents.errors import AgentError, ConfigurationError
from agents.records.effects import ToolInvocation
from agents.records.error_info import ErrorInfo
from agents.records.frozen import MAX_DEPTH, deep_freeze, shallow_dict
from agents.records.goal import COMPLETE_GOAL
from agents.records.messages import ToolCall
from agents.records.record import maker
from agents.records.schema import Validator, compile_validator, describe_docstring, schema_for_type
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import ToolExecution
from agents.tools.bridge import run_coroutine

__all__ = [
    "StopAgent",
    "SubagentFailed",
    "Tool",
    "ToolContext",
    "ToolResult",
    "Tools",
    "stamp",
    "tool",
    "unknown_tool_execution",
]


class SubagentFailed(AgentError):
    """A sub-agent could not answer; ``child`` holds its run when it started one (kept on
    the failed tool execution for audit). Raised by ``agents.shell.subagents``; defined here so
    the tool layer can keep the run without knowing sub-agents."""

    def __init__(self, message: str, child: AgentState | None = None) -> None:
        super().__init__(message)
        self.child = child


class StopAgent(Exception):
    """Raised by a tool to stop the run after this step (``STOP_REQUESTED``)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


@attrs.frozen
class ToolResult:
    """A tool's value with instructions: ``terminate=True`` ends the run after this step."""

    value: Any = None
    terminate: bool = attrs.field(default=False, kw_only=True)
    # A sub-agent's final state, kept on the execution (see ``agents.shell.subagents``).
    child: AgentState | None = attrs.field(default=None, kw_only=True)


@attrs.frozen(kw_only=True)
class ToolContext:
    """What a tool may know about its call; a parameter annotated with it receives it."""

    state: AgentState
    tool_call: ToolCall
    idempotency_key: tuple[str, int, str]

    @property
    def call_id(self) -> str:
        """The id of the tool call."""
        return self.tool_call.id


@attrs.frozen(kw_only=True, eq=False)
class Tool:
    """A callable the model may use: a name, a description, a JSON schema and a function."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    sequential: bool = False
    requires_approval: bool = False
    timeout: float | None = None
    context_parameter: str | None = None
    is_async: bool = False
    _plain_parameters: Mapping[str, Any] = attrs.field(alias="_plain_parameters")
    _validator: Validator = attrs.field(alias="_validator")
    _converters: Mapping[str, Callable[[Any], Any]] = attrs.field(alias="_converters", factory=dict)

    @property
    def schema(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` as sent to the model."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self._plain_parameters),
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests)."""
        return self.function(*args, **kwargs)

    # -- running one call -------------------------------------------------------------------

    def _prepare(self, invocation: ToolInvocation) -> dict[str, Any] | ToolExecution:
        call = invocation.tool_call
        if call.raw_arguments is not None:
            return _failed(
                invocation,
                "InvalidArguments",
                f"arguments of {self.name!r} are not a valid JSON object: "
                f"{call.raw_arguments[:200]!r}",
            )
        arguments = call.arguments
        buckets = getattr(arguments, "_buckets", None)  # a PMap's own storage: see shallow_dict
        plain = (
            {key: item for bucket in buckets if bucket for key, item in bucket}
            if buckets is not None and type(arguments) is _PMAP_TYPE
            else shallow_dict(arguments)
        )
        converted, error = self._validator(plain, "")
        if error is not None:
            return _failed(invocation, "InvalidArguments", f"{self.name}: {error}")
        kwargs: dict[str, Any] = converted
        if self._converters:
            for key, convert in self._converters.items():
                if key in kwargs and kwargs[key] is not None:
                    kwargs[key] = convert(kwargs[key])
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = ToolContext(
                state=invocation.state,
                tool_call=call,
                idempotency_key=invocation.idempotency_key,
            )
        return kwargs

    def invoke(
        self, invocation: ToolInvocation, completed: Callable[[], datetime] | None = None
    ) -> ToolExecution:
        """Validate and run one call synchronously; never raises for a tool failure.

        ``completed`` (a clock's ``now``) is read when the call has finished, for
        ``completed_at``; without it ``completed_at`` is left at ``started_at`` for the caller
        to set.
        """
        prepared = self._prepare(invocation)
        if isinstance(prepared, ToolExecution):
            return stamp(prepared, completed)
        try:
            if self.timeout is not None:
                value = _call_with_timeout(self, prepared)
            elif self.is_async:
                value = run_coroutine(self.function(**prepared))
            else:
                value = self.function(**prepared)
        except Exception as exc:
            return stamp(_from_exception(invocation, self, exc), completed)
        return _from_value(invocation, value, completed)

    async def ainvoke(
        self, invocation: ToolInvocation, completed: Callable[[], datetime] | None = None
    ) -> ToolExecution:
        """Validate and run one call in the event loop; never raises for a tool failure."""
        prepared = self._prepare(invocation)
        if isinstance(prepared, ToolExecution):
            return stamp(prepared, completed)
        try:
            if self.is_async:
                awaitable: Awaitable[Any] = self.function(**prepared)
            else:
                awaitable = asyncio.to_thread(self.function, **prepared)
            if self.timeout is not None:
                value = await asyncio.wait_for(awaitable, self.timeout)
            else:
                value = await awaitable
        except TimeoutError:
            return stamp(_timed_out(invocation, self), completed)
        except Exception as exc:
            return stamp(_from_exception(invocation, self, exc), completed)
        return _from_value(invocation, value, completed)


def _call_with_timeout(tool: Tool, kwargs: dict[str, Any]) -> Any:
    if tool.is_async:

        async def bounded() -> Any:
            return await asyncio.wait_for(tool.function(**kwargs), tool.timeout)

        try:
            return run_coroutine(bounded())
        except TimeoutError:
            raise _ToolTimeoutError() from None
    # A thread cannot be killed: on timeout the call is abandoned and recorded as failed.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agents-tool")
    try:
        future = pool.submit(tool.function, **kwargs)
        try:
            return future.result(timeout=tool.timeout)
        except concurrent.futures.TimeoutError:
            raise _ToolTimeoutError() from None
    finally:
        pool.shutdown(wait=False)


class _ToolTimeoutError(Exception):
    pass


def _failed(invocation: ToolInvocation, error_type: str, message: str) -> ToolExecution:
    return ToolExecution(
        id=invocation.id,
        tool_call=invocation.tool_call,
        error=ErrorInfo(type=error_type, message=message),
        started_at=invocation.started_at,
        completed_at=invocation.started_at,
    )


def unknown_tool_execution(invocation: ToolInvocation, known: Iterable[str]) -> ToolExecution:
    """The failed execution of a call to a tool that does not exist."""
    names = ", ".join(sorted(n for n in known if n != COMPLETE_GOAL)) or "none"
    return _failed(
        invocation,
        "UnknownTool",
        f"unknown tool {invocation.tool_call.name!r}; available tools: {names}",
    )


def _timed_out(invocation: ToolInvocation, tool: Tool) -> ToolExecution:
    return _failed(
        invocation, "ToolTimeout", f"tool {tool.name!r} did not finish within {tool.timeout:g} s"
    )


def _from_exception(invocation: ToolInvocation, tool: Tool, exc: Exception) -> ToolExecution:
    if isinstance(exc, StopAgent):
        return ToolExecution(
            id=invocation.id,
            tool_call=invocation.tool_call,
            stop_signal=StopSignal(
                reason=StopReason.STOP_REQUESTED, message=exc.message, source=tool.name
            ),
            started_at=invocation.started_at,
            completed_at=invocation.started_at,
        )
    if isinstance(exc, _ToolTimeoutError):
        return _timed_out(invocation, tool)
    return ToolExecution(
        id=invocation.id,
        tool_call=invocation.tool_call,
        error=ErrorInfo.from_exception(exc),
        started_at=invocation.started_at,
        completed_at=invocation.started_at,
        child=exc.child if isinstance(exc, SubagentFailed) else None,
    )


def stamp(execution: ToolExecution, completed: Callable[[], datetime] | None) -> ToolExecution:
    """``execution`` with ``completed_at`` read from ``completed`` now (if given)."""
    return execution if completed is None else execution._evolve(completed_at=completed())


def _from_value(
    invocation: ToolInvocation, value: Any, completed: Callable[[], datetime] | None = None
) -> ToolExecution:
    terminate = False
    child = None
    kind = type(value)
    if kind is ToolResult:
        terminate = value.terminate
        child = value.child
        value = value.value
        kind = type(value)
    if kind not in _PLAIN or (kind is float and not math.isfinite(value)):
        problem = _json_problem(value, "result", 0)
        if problem is not None:
            return _failed(
                invocation, "InvalidToolResult", f"{invocation.tool_call.name} returned {problem}"
            )
        value = deep_freeze(value)
    # The value is already frozen: build the record without running the converters.
    started_at = invocation.started_at
    return _make_execution(
        invocation.id,
        invocation.tool_call,
        value,
        None,  # error
        False,  # blocked
        terminate,
        None,  # stop_signal
        started_at,
        started_at if completed is None else completed(),
        child,
    )


_PLAIN: Final = frozenset({str, int, float, bool, type(None)})
_PMAP_TYPE: Final[type] = type(pmap())
_make_execution: Final = maker(ToolExecution)


def _json_problem(value: Any, path: str, depth: int) -> str | None:
    """Why ``value`` is not JSON-able (or nests deeper than records hold), or ``None``."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"a non-finite number at {path}"
    if depth >= MAX_DEPTH and isinstance(value, Mapping | PMap | list | tuple | PVector):
        return f"a value nested deeper than {MAX_DEPTH} levels at {path}"
    if isinstance(value, Mapping | PMap):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a non-string key {key!r} at {path}"
            problem = _json_problem(item, f"{path}.{key}", depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, list | tuple | PVector):
        for index, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{index}]", depth + 1)
            if problem:
                return problem
        return None
    return f"a {type(value).__name__} at {path}, which is not JSON"


# -- building tools -------------------------------------------------------------------------


def _build(
    function: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    sequential: bool,
    requires_approval: bool,
    timeout: float | None,
) -> Tool:
    if not callable(function):
        raise ConfigurationError(f"tool() needs a function, got {function!r}")
    tool_name = name or getattr(function, "__name__", None)
    if not tool_name or not isinstance(tool_name, str):
        raise ConfigurationError(f"cannot name tool {function!r}: pass name=")
    if timeout is not None and not timeout > 0:
        raise ConfigurationError(f"tool {tool_name!r}: timeout must be > 0, got {timeout!r}")
    summary, param_docs = describe_docstring(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"tool {tool_name!r}: cannot resolve annotations: {exc}") from exc
    signature = inspect.signature(function)
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    context_parameter: str | None = None
    for parameter in signature.parameters.values():
        where = f"tool {tool_name!r}, parameter {parameter.name!r}"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ConfigurationError(f"{where}: *args and **kwargs cannot be described to a model")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise ConfigurationError(
                f"{where}: positional-only parameters cannot be passed by name"
            )
        if parameter.name not in hints:
            raise ConfigurationError(f"{where}: needs a type annotation")
        annotation = hints[parameter.name]
        if annotation is ToolContext:
            context_parameter = parameter.name
            continue
        schema = schema_for_type(annotation, where)
        convert = _converter_for(annotation)
        if convert is not None:
            converters[parameter.name] = convert
        if parameter.name in param_docs and "description" not in schema:
            schema["description"] = param_docs[parameter.name]
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        else:
            default = parameter.default
            if isinstance(default, enum.Enum):
                default = default.value
            if _json_problem(default, "default", 0) is None:
                schema["default"] = default
        properties[parameter.name] = schema
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        parameters["required"] = required
    return Tool(
        name=tool_name,
        description=description if description is not None else summary,
        parameters=deep_freeze(parameters),
        function=function,
        sequential=sequential,
        requires_approval=requires_approval,
        timeout=timeout,
        context_parameter=context_parameter,
        is_async=inspect.iscoroutinefunction(function),
        _plain_parameters=parameters,
        _validator=compile_validator(parameters),
        _converters=converters,
    )


def _converter_for(annotation: Any) -> Callable[[Any], Any] | None:
    """What turns a validated JSON value into the parameter's type (enums and tuples)."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    if annotation is tuple or typing.get_origin(annotation) is tuple:
        return tuple
    return None


@overload
def tool(
    function: Callable[..., Any],
    /,
    *,
    name: str | None = ...,
    description: str | None = ...,
    sequential: bool = ...,
    requires_approval: bool = ...,
    timeout: float | None = ...,
) -> Tool: ...
@overload
def tool(
    function: None = None,
    /,
    *,
    name: str | None = ...,
    description: str | None = ...,
    sequential: bool = ...,
    requires_approval: bool = ...,
    timeout: float | None = ...,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a ``Tool`` (usable as ``@tool`` or ``@tool(...)``).

    The schema comes from the signature, the description from the docstring's summary and
    its ``Args:`` (or ``:param:``) entries. A parameter annotated ``ToolContext`` receives
    the call's context and is not shown to the model.
    """
    options = {
        "name": name,
        "description": description,
        "sequential": sequential,
        "requires_approval": requires_approval,
        "timeout": timeout,
    }
    if function is None:
        return lambda fn: _build(fn, **options)  # type: ignore[arg-type]
    return _build(function, **options)  # type: ignore[arg-type]


class Tools(Mapping[str, Tool]):
    """An immutable name → tool collection, in the order the tools were given."""

    __slots__ = ("_by_name", "_schemas")

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        by_name: dict[str, Tool] = {}
        for item in tools:
            built = item if isinstance(item, Tool) else tool(item)
            if built.name in by_name:
                raise ConfigurationError(f"two tools are named {built.name!r}")
            by_name[built.name] = built
        self._by_name: Final = by_name
        self._schemas: Final = tuple(deep_freeze(t.schema) for t in by_name.values())

    @classmethod
    def of(cls, tools: Tools | Iterable[Tool | Callable[..., Any]]) -> Tools:
        """``tools`` as a ``Tools`` (unchanged when it already is one)."""
        return tools if isinstance(tools, Tools) else cls(tools)

    def __getitem__(self, name: str) -> Tool:
        return self._by_name[name]

    def get(self, name: str, default: Tool | None = None) -> Tool | None:  # type: ignore[override]
        """The tool called ``name``, or ``default``."""
        return self._by_name.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"Tools({list(self._by_name)!r})"

    @property
    def schemas(self) -> tuple[Any, ...]:
        """The frozen schemas of every tool, in order."""
        return self._schemas

    def with_tool(self, new: Tool | Callable[..., Any]) -> Tools:
        """A copy with ``new`` added (or replacing the tool of the same name)."""
        built = new if isinstance(new, Tool) else tool(new)
        return Tools([*(t for t in self._by_name.values() if t.name != built.name), built])

    def without(self, name: str) -> Tools:
        """A copy without the tool ``name``."""
        return Tools([t for t in self._by_name.values() if t.name != name])


def _complete_goal(summary: str = "") -> ToolResult:
    """Call this once the goal is achieved; the run ends after this step.

    Args:
        summary: what was achieved
    """
    # The machine completes the goal and ends the run after the step (SPEC §12); called
    # without an active goal (it is not offered then), it is a harmless no-op.
    return ToolResult(summary or "goal complete")


COMPLETE_GOAL_TOOL: Final = tool(_complete_goal, name="complete_goal")
"""Offered to the model while the state's goal is active (SPEC §12)."""
