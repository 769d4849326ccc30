"""Tools: ``@tool`` from typed functions, argument validation, and running one call.

Every way a call can go wrong (unknown tool, invalid JSON, missing or mistyped arguments,
an exception, a timeout, a result that is not JSON) becomes a failed ``ToolExecution`` whose
``ErrorInfo`` says what was wrong (``agents.tools.outcomes``); the model reads it as the
tool's result.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, Protocol, overload, runtime_checkable

import attrs
from pyrsistent import pmap

from agents.errors import ConfigurationError
from agents.records.arguments import amount
from agents.records.effects import ToolInvocation
from agents.records.frozen import deep_freeze, shallow_dict
from agents.records.inputs import InputAnswer, InputRequest
from agents.records.messages import ToolCall
from agents.records.redaction import holds_secret_key, is_secret_key, scrub
from agents.records.schema import Validator, compile_validator, describe_docstring, schema_for_type
from agents.records.state import AgentState
from agents.records.step import ToolExecution
from agents.tools.bridge import run_coroutine
from agents.tools.outcomes import (
    InputRequired,
    StopAgent,
    SubagentFailed,
    ToolResult,
    call_with_timeout,
    failed,
    from_exception,
    from_value,
    json_problem,
    stamp,
    timed_out,
    unknown_tool_execution,
)
from agents.tools.threads import to_thread

__all__ = [
    "StopAgent",
    "SubagentFailed",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSource",
    "Tools",
    "stamp",
    "tool",
    "unknown_tool_execution",
]


@attrs.frozen(kw_only=True)
class ToolContext:
    """What a tool may know about its call; a parameter annotated with it receives it."""

    state: AgentState
    tool_call: ToolCall
    idempotency_key: tuple[str, int, str]
    _asked: list[int] = attrs.field(factory=lambda: [0], alias="_asked", eq=False, repr=False)

    @property
    def call_id(self) -> str:
        """The id of the tool call."""
        return self.tool_call.id

    @property
    def answers(self) -> tuple[InputAnswer, ...]:
        """The answers a human gave to this call's questions so far, in the order asked."""
        execution = self.state.execution
        if execution is None or not execution.inputs:
            return ()
        call_id = self.tool_call.id
        return tuple(a for a in execution.inputs if a.call_id == call_id)

    def ask(
        self,
        message: str,
        schema: Mapping[str, Any] | None = None,
        *,
        source: str = "",
        url: str = "",
    ) -> InputAnswer:
        """Ask a human: the answer to this call's next question when it was given, else
        the run suspends (``InputRequired``: ``state.pending_inputs``) and, once the
        question is answered (``state.with_input``), the call is made again from its start
        and this returns the answer. ``schema``: the JSON schema of the answer's content
        (an object); ``source``: who asks (default: the tool); ``url``: a page the human
        should visit instead of answering here (MCP's URL elicitation)."""
        number = self._asked[0]
        self._asked[0] = number + 1
        answers = self.answers
        if number < len(answers):
            return answers[number]
        raise InputRequired(
            InputRequest(
                call_id=self.tool_call.id,
                message=message,
                schema=schema or {},
                source=source or self.tool_call.name,
                url=url,
            )
        )


def _flag(tool: Any, field: Any, value: Any) -> None:
    """A tool's switch is ``True`` or ``False``: ``requires_approval="false"`` asked for
    approval (a non-empty text is true), ``requires_approval=None`` asked for none."""
    if type(value) is not bool:
        raise ConfigurationError(
            f"tool {tool.name!r}: {field.name} is True or False, not {value!r}"
        )


@attrs.frozen(kw_only=True, eq=False)
class Tool:
    """A callable the model may use: a name, a description, a JSON schema and a function."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    sequential: bool = attrs.field(default=False, validator=_flag)
    requires_approval: bool = attrs.field(default=False, validator=_flag)
    timeout: float | None = None
    thread: bool = attrs.field(default=True, validator=_flag)
    context_parameter: str | None = None
    is_async: bool = False
    _plain_parameters: Mapping[str, Any] = attrs.field(alias="_plain_parameters")
    _validator: Validator = attrs.field(alias="_validator")
    _converters: Mapping[str, Callable[[Any], Any]] = attrs.field(alias="_converters", factory=dict)
    # ``schema`` frozen, made with the tool (a tool does not change; every loop built with
    # it offers it).
    _frozen: Any = attrs.field(
        init=False, repr=False, default=attrs.Factory(lambda self: deep_freeze(self.schema), True)
    )

    @property
    def schema(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` as sent to the model."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self._plain_parameters),
        }

    @property
    def frozen_schema(self) -> Any:
        """``schema`` frozen, made with the tool."""
        return self._frozen

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests)."""
        return self.function(*args, **kwargs)

    # -- running one call -------------------------------------------------------------------

    def _prepare(self, invocation: ToolInvocation) -> dict[str, Any] | ToolExecution:
        call = invocation.tool_call
        if call.raw_arguments is not None:
            return failed(
                invocation,
                "InvalidArguments",
                f"arguments of {self.name!r} are not a valid JSON object: "
                f"{call.raw_arguments[:200]!r}",
            )
        arguments = call.arguments
        buckets = getattr(arguments, "_buckets", None)  # a PMap's own storage: see map_items
        plain = (
            {key: item for bucket in buckets if bucket for key, item in bucket}
            if buckets is not None and type(arguments) is _PMAP_TYPE
            else shallow_dict(arguments)
        )
        converted, error = self._validator(plain, "")
        if error is not None:
            return failed(invocation, "InvalidArguments", f"{self.name}: {error}")
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
                value = call_with_timeout(self, prepared)
            elif self.is_async:
                value = run_coroutine(self.function(**prepared))
            else:
                value = self.function(**prepared)
        except Exception as exc:
            return stamp(from_exception(invocation, self, exc), completed)
        return from_value(invocation, value, completed)

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
            elif not self.thread:  # quick and never blocking: on the event loop itself
                return from_value(invocation, self.function(**prepared), completed)
            else:
                awaitable = to_thread(self.function, **prepared)
            if self.timeout is not None:
                value = await asyncio.wait_for(awaitable, self.timeout)
            else:
                value = await awaitable
        except TimeoutError:
            return stamp(timed_out(invocation, self), completed)
        except Exception as exc:
            return stamp(from_exception(invocation, self, exc), completed)
        return from_value(invocation, value, completed)


_PMAP_TYPE: Final[type] = type(pmap())


# -- building tools -------------------------------------------------------------------------


def _build(
    function: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    sequential: bool,
    requires_approval: bool,
    timeout: float | None,
    thread: bool,
) -> Tool:
    tool_name = _checked_name(function, name, description, timeout, thread)
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
            if json_problem(default, "default", 0) is None and not _secret(parameter.name, default):
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
        thread=thread,
        context_parameter=context_parameter,
        is_async=inspect.iscoroutinefunction(function),
        _plain_parameters=parameters,
        _validator=compile_validator(parameters),
        _converters=converters,
    )


def _secret(name: str, default: Any) -> bool:
    """Whether a parameter's default is a credential the model must not be sent (the tool
    schema goes to the provider with every request): a parameter named like a secret key
    (``api_key``, ``token``…), a default map holding one, or a key-shaped text (``sk-…``,
    ``Bearer …``). Its schema then has no ``default``; the function's own still applies."""
    if is_secret_key(name) or holds_secret_key(default):
        return True
    return isinstance(default, str) and scrub(default) != default


def _checked_name(
    function: Callable[..., Any],
    name: str | None,
    description: str | None,
    timeout: float | None,
    thread: bool,
) -> str:
    """The tool's name, once the options are known to fit the function."""
    if not callable(function):
        raise ConfigurationError(f"tool() needs a function, got {function!r}")
    tool_name = name or getattr(function, "__name__", None)
    if not tool_name or not isinstance(tool_name, str):
        raise ConfigurationError(f"cannot name tool {function!r}: pass name=")
    if description is not None and not isinstance(description, str):
        raise ConfigurationError(
            f"tool {tool_name!r}: description is text, not {type(description).__name__}"
        )
    if timeout is not None:
        amount(timeout, f"tool {tool_name!r}: timeout")
    if timeout is not None and not thread and not inspect.iscoroutinefunction(function):
        raise ConfigurationError(
            f"tool {tool_name!r}: a synchronous function that runs without a thread "
            "(thread=False) cannot be timed out"
        )
    return tool_name


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
    thread: bool = ...,
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
    thread: bool = ...,
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
    thread: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a ``Tool`` (usable as ``@tool`` or ``@tool(...)``).

    The schema comes from the signature, the description from the docstring's summary and
    its ``Args:`` (or ``:param:``) entries. A parameter annotated ``ToolContext`` receives
    the call's context and is not shown to the model.

    Under an event loop (``arun``), a synchronous function runs on a worker thread, so that
    a slow call cannot stall the other runs on the loop; ``thread=False`` runs it on the
    loop itself, for quick functions that never block (pure computation): a thread
    hand-off costs more than such a call.
    """
    options: dict[str, Any] = {
        "name": name,
        "description": description,
        "sequential": sequential,
        "requires_approval": requires_approval,
        "timeout": timeout,
        "thread": thread,
    }
    if function is None:
        return lambda fn: _build(fn, **options)
    return _build(function, **options)


@runtime_checkable
class ToolSource(Protocol):
    """Where tools come from at the start of each run (an MCP server, ``agents.mcp``):
    ``tools_for_run(loop)`` gives them for a run of ``loop`` (connecting if needed),
    ``release()`` says the run ended, ``catalogue()`` says what was offered, as JSON data
    a run records."""

    def tools_for_run(self, loop: Any = None) -> Sequence[Tool]: ...

    def release(self) -> None: ...

    def catalogue(self) -> Mapping[str, Any]: ...


class Tools(Mapping[str, Tool]):
    """An immutable name → tool collection, in the order the tools were given, and the
    tool sources whose tools each run adds (``sources``); one run's (``resolved``) says
    why each source that failed offered nothing (``unavailable``)."""

    __slots__ = ("_by_name", "_schemas", "sources", "unavailable")

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any] | ToolSource] = (),
        *,
        unavailable: Iterable[str] = (),
    ) -> None:
        by_name: dict[str, Tool] = {}
        sources: list[ToolSource] = []
        for item in tools:
            if isinstance(item, ToolSource) and not isinstance(item, Tool):
                sources.append(item)
                continue
            built = item if isinstance(item, Tool) else tool(item)
            if built.name in by_name:
                raise ConfigurationError(f"two tools are named {built.name!r}")
            by_name[built.name] = built
        self._by_name: Final = by_name
        self._schemas: Final = tuple(t.frozen_schema for t in by_name.values())
        self.sources: Final = tuple(sources)
        self.unavailable: Final = tuple(unavailable)

    @classmethod
    def of(cls, tools: Tools | Iterable[Tool | Callable[..., Any]]) -> Tools:
        """``tools`` as a ``Tools`` (unchanged when it already is one)."""
        return tools if isinstance(tools, Tools) else cls(tools)

    def __getitem__(self, name: str) -> Tool:
        return self._by_name[name]

    # narrower than Mapping.get's overloads: the default is a Tool or None
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
        kept = [t for t in self._by_name.values() if t.name != built.name]
        return Tools([*kept, built, *self.sources], unavailable=self.unavailable)

    def without(self, name: str) -> Tools:
        """A copy without the tool ``name``."""
        kept = (t for t in self._by_name.values() if t.name != name)
        return Tools([*kept, *self.sources], unavailable=self.unavailable)

    def resolved(self, added: Iterable[Tool], unavailable: Iterable[str] = ()) -> Tools:
        """The tools of one run: these, the ``added`` ones its sources gave (a name
        clash is a ``ConfigurationError``: give a server a ``prefix``), and no sources;
        ``unavailable``: why the sources that failed offered nothing (a call of a tool
        no source offered says so)."""
        return Tools([*self._by_name.values(), *added], unavailable=unavailable)


def _complete_goal(summary: str = "") -> ToolResult:
    """Call this once the goal is achieved; the run ends after this step.

    Args:
        summary: what was achieved
    """
    # The machine completes the goal and ends the run after the step (docs/design/sessions.md);
    # called without an active goal (it is not offered then), it is a harmless no-op.
    return ToolResult(summary or "goal complete")


COMPLETE_GOAL_TOOL: Final = tool(_complete_goal, name="complete_goal")
"""Offered to the model while the state's goal is active (docs/design/sessions.md)."""
