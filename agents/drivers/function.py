"""``FunctionDriver``: a model double backed by a function of the request."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from agents.errors import ConfigurationError, InvalidType
from agents.records.encoding import unrecordable
from agents.records.frozen import to_pvector
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import ToolCall
from agents.tools.bridge import run_coroutine

__all__ = ["FunctionDriver"]


def _to_response(value: Any) -> InferenceResponse:
    """The function's answer as a response, checked as it would be recorded (a
    ``TypeError`` naming the field that could not be: the step fails with it)."""
    if isinstance(value, str):
        return InferenceResponse(content=str.__str__(value), finish_reason="stop")
    checked: Sequence[Any]
    if type(value) is InferenceResponse:
        made, checked = value, (value,)
    elif isinstance(value, Sequence) and value and all(type(v) is ToolCall for v in value):
        made = InferenceResponse(tool_calls=to_pvector(value), finish_reason="tool_calls")
        checked = value  # the calls the function made (the rest is this driver's)
    else:
        raise InvalidType(
            "a FunctionDriver function must return an InferenceResponse, a str or a non-empty "
            f"list of ToolCall, got {type(value).__name__}"
        )
    for part in checked:
        problem = unrecordable(part)
        if problem is not None:
            raise InvalidType(f"the FunctionDriver function's answer cannot be recorded: {problem}")
    return made


class FunctionDriver:
    """Answers with ``fn(request)``: an ``InferenceResponse``, a ``str`` (a final answer) or
    a list of ``ToolCall``. ``fn`` may be ``async def``; both runners accept either."""

    __slots__ = ("_async", "function")
    answers_checked: ClassVar[bool] = True  # by _to_response

    def __init__(self, function: Callable[[InferenceRequest], Any]) -> None:
        if not callable(function):
            raise ConfigurationError(f"FunctionDriver needs a callable, got {function!r}")
        self.function = function
        self._async = inspect.iscoroutinefunction(function)

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        """Call the function (an async one is run to completion)."""
        if self._async:
            return _to_response(run_coroutine(self.function(request)))
        return _to_response(self.function(request))

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse:
        """Call the function from the event loop."""
        if self._async:
            return _to_response(await self.function(request))
        return _to_response(self.function(request))

    def __repr__(self) -> str:
        return f"FunctionDriver({getattr(self.function, '__name__', self.function)!r})"
