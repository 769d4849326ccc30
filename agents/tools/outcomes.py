"""What a tool call comes to: a ``ToolExecution`` made from the function's value, from the
exception it raised, from a timeout, or from a call that could not be made (an unknown
tool, arguments that do not fit). Also the values and exceptions a tool may use to say
more: ``ToolResult``, ``StopAgent``, ``SubagentFailed``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Final

import attrs
from pyrsistent import PMap, PVector

from agents.errors import AgentError, ContentError
from agents.records.compiled import replace_fields
from agents.records.effects import ToolInvocation
from agents.records.error_info import ErrorInfo
from agents.records.frozen import MAX_DEPTH, deep_freeze
from agents.records.goal import COMPLETE_GOAL
from agents.records.inputs import InputRequest
from agents.records.messages import ToolCall
from agents.records.record import maker
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import ToolExecution
from agents.tools.bridge import run_coroutine
from agents.tools.media import is_media, media_content

__all__ = [
    "INPUT_REQUIRED",
    "InputRequired",
    "StopAgent",
    "SubagentFailed",
    "ToolResult",
    "ToolTimeoutError",
    "asked",
    "call_with_timeout",
    "failed",
    "from_exception",
    "from_value",
    "json_problem",
    "stamp",
    "timed_out",
    "unknown_tool_execution",
    "waiting",
]


class SubagentFailed(AgentError):
    """A sub-agent could not answer; ``child`` holds its run when it started one (kept on
    the failed tool execution for audit). Raised by ``agents.shell.subagents``; defined here so
    the tool layer can keep the run without knowing sub-agents."""

    def __init__(self, message: str, child: AgentState | None = None) -> None:
        super().__init__(message)
        self.child = child


class StopAgent(AgentError):
    """Raised by a tool to stop the run after this step (``STOP_REQUESTED``)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


INPUT_REQUIRED: Final = "InputRequired"
"""The error type of a call that stopped to ask a human (``InputRequired``): the step
suspends and the call is made again with the answer; it is never archived."""


class InputRequired(AgentError):
    """Raised by a tool (``ToolContext.ask`` raises it) to ask a human ``request``: the run
    suspends (``state.pending_inputs``) and, once answered (``state.with_input``), makes the
    call again from its start, the answers in its ``ToolContext``."""

    def __init__(self, request: InputRequest) -> None:
        super().__init__(request.message)
        self.request = request


def waiting(id: str, call: ToolCall, request: InputRequest, at: datetime) -> ToolExecution:
    """The execution of a call that stopped to ask ``request`` (never archived: the step
    suspends, and the call is made again once the question is answered)."""
    asking = {"message": request.message, "schema": request.schema, "source": request.source}
    if request.url:
        asking["url"] = request.url
    return ToolExecution(
        id=id,
        tool_call=call,
        error=ErrorInfo(
            type=INPUT_REQUIRED, message=request.message, details={"input_request": asking}
        ),
        started_at=at,
        completed_at=at,
    )


def asked(execution: ToolExecution) -> InputRequest | None:
    """The question a call stopped to ask (an execution made from ``InputRequired``)."""
    error = execution.error
    if error is None or error.type != INPUT_REQUIRED:
        return None
    asking = error.details.get("input_request")
    if not isinstance(asking, PMap):
        return None
    return InputRequest(
        call_id=execution.tool_call.id,
        message=asking.get("message", ""),
        schema=asking.get("schema", {}),
        source=asking.get("source", ""),
        url=asking.get("url", ""),
    )


@attrs.frozen
class ToolResult:
    """A tool's value with instructions: ``terminate=True`` ends the run after this step."""

    value: Any = None
    terminate: bool = attrs.field(default=False, kw_only=True)
    # A sub-agent's final state, kept on the execution (see ``agents.shell.subagents``).
    child: AgentState | None = attrs.field(default=None, kw_only=True)


def call_with_timeout(tool: Any, kwargs: dict[str, Any]) -> Any:
    if tool.is_async:

        async def bounded() -> Any:
            return await asyncio.wait_for(tool.function(**kwargs), tool.timeout)

        try:
            return run_coroutine(bounded())
        except TimeoutError:
            raise ToolTimeoutError() from None
    # A thread cannot be killed: on timeout the call is abandoned and recorded as failed.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agents-tool")
    try:
        future = pool.submit(tool.function, **kwargs)
        try:
            return future.result(timeout=tool.timeout)
        except concurrent.futures.TimeoutError:
            raise ToolTimeoutError() from None
    finally:
        pool.shutdown(wait=False)


class ToolTimeoutError(AgentError, TimeoutError):
    """A tool call ran past its timeout (recorded as a failed execution)."""


def failed(invocation: ToolInvocation, error_type: str, message: str) -> ToolExecution:
    return ToolExecution(
        id=invocation.id,
        tool_call=invocation.tool_call,
        error=ErrorInfo(type=error_type, message=message),
        started_at=invocation.started_at,
        completed_at=invocation.started_at,
    )


def unknown_tool_execution(
    invocation: ToolInvocation, known: Iterable[str], unavailable: Iterable[str] = ()
) -> ToolExecution:
    """The failed execution of a call to a tool that does not exist (``known``: the
    run's tools' names; ``unavailable``: why each tool source that failed offered nothing,
    ``Tools.unavailable``)."""
    names = ", ".join(sorted(n for n in known if n != COMPLETE_GOAL)) or "none"
    message = f"unknown tool {invocation.tool_call.name!r}; available tools: {names}"
    for why in unavailable:  # "the MCP server ... did not start: ..."
        message += f"; {why}"
    return failed(invocation, "UnknownTool", message)


def timed_out(invocation: ToolInvocation, tool: Any) -> ToolExecution:
    return failed(
        invocation, "ToolTimeout", f"tool {tool.name!r} did not finish within {tool.timeout:g} s"
    )


def from_exception(invocation: ToolInvocation, tool: Any, exc: Exception) -> ToolExecution:
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
    if isinstance(exc, ToolTimeoutError):
        return timed_out(invocation, tool)
    if isinstance(exc, InputRequired):  # waits for a human: the step suspends
        return waiting(invocation.id, invocation.tool_call, exc.request, invocation.started_at)
    return ToolExecution(
        id=invocation.id,
        tool_call=invocation.tool_call,
        error=ErrorInfo.from_exception(exc),
        started_at=invocation.started_at,
        completed_at=invocation.started_at,
        child=_child_of(exc),
    )


def _child_of(exc: Exception) -> AgentState | None:
    """The run a failed tool started, kept for audit: a sub-agent's (``SubagentFailed``),
    a sampling run's (``agents.mcp``), or any exception's ``child`` that is a state."""
    child = getattr(exc, "child", None)
    return child if isinstance(child, AgentState) else None


def stamp(execution: ToolExecution, completed: Callable[[], datetime] | None) -> ToolExecution:
    """``execution`` with ``completed_at`` read from ``completed`` now (if given)."""
    return execution if completed is None else replace_fields(execution, completed_at=completed())


def from_value(
    invocation: ToolInvocation, value: Any, completed: Callable[[], datetime] | None = None
) -> ToolExecution:
    terminate = False
    child = None
    content: Any = ""
    kind = type(value)
    if kind is ToolResult:
        terminate = value.terminate
        child = value.child
        value = value.value
        kind = type(value)
    if kind not in _PLAIN and is_media(value):  # an image, a document...: parts
        try:
            content, value = media_content(value), None
        except ContentError as exc:
            return failed(invocation, "InvalidToolResult", f"{invocation.tool_call.name}: {exc}")
    elif kind not in _PLAIN or (kind is float and not math.isfinite(value)):
        problem = json_problem(value, "result", 0)
        if problem is not None:
            return failed(
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
        None,  # inputs
        content,
    )


_PLAIN: Final = frozenset({str, int, float, bool, type(None)})
_make_execution: Final = maker(ToolExecution)


def json_problem(value: Any, path: str, depth: int) -> str | None:
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
            problem = json_problem(item, f"{path}.{key}", depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, list | tuple | PVector):
        for index, item in enumerate(value):
            problem = json_problem(item, f"{path}[{index}]", depth + 1)
            if problem:
                return problem
        return None
    return f"a {type(value).__name__} at {path}, which is not JSON"
