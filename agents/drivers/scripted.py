"""``ScriptedDriver``: a model double that answers from a script, one step per request.

A script is a list of steps: ``reply(text)``, ``call(name, ...)`` (one tool call),
``calls(call(...), call(...))`` (several in one answer), ``fail(exception)`` (the driver
raises), or a ready ``InferenceResponse``. Call ids left unset are ``call_1``, ``call_2``, …
counting calls through the script, so the same script always gives the same history.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, cast

import attrs

from agents.errors import ConfigurationError, ScriptExhausted
from agents.records.codec import parse_object
from agents.records.encoding import unrecordable
from agents.records.frozen import to_pvector
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import ToolCall
from agents.records.usage import ZERO_USAGE, Usage

__all__ = ["ScriptStep", "ScriptedDriver", "call", "calls", "fail", "reply"]


def _usage_text(usage: Usage) -> str:
    return "" if usage == ZERO_USAGE else f", usage={usage!r}"


@attrs.frozen(kw_only=True, repr=False)
class _Reply:
    content: str
    usage: Usage
    finish_reason: str

    def __repr__(self) -> str:
        finish = "" if self.finish_reason == "stop" else f", finish_reason={self.finish_reason!r}"
        return f"reply({self.content!r}{_usage_text(self.usage)}{finish})"


@attrs.frozen(kw_only=True, repr=False)
class _Call:
    name: str
    arguments: Mapping[str, Any] | str
    id: str | None

    def __repr__(self) -> str:
        if isinstance(self.arguments, str):
            shown = f", {self.arguments!r}"
        elif all(str(key).isidentifier() and key != "id" for key in self.arguments):
            shown = "".join(f", {key}={value!r}" for key, value in self.arguments.items())
        else:
            shown = f", {dict(self.arguments)!r}"
        identifier = "" if self.id is None else f", id={self.id!r}"
        return f"call({self.name!r}{shown}{identifier})"


@attrs.frozen(kw_only=True, repr=False)
class _Calls:
    calls: tuple[_Call, ...]
    content: str
    usage: Usage
    finish_reason: str

    def __repr__(self) -> str:
        content = f", content={self.content!r}" if self.content else ""
        finish = (
            "" if self.finish_reason == "tool_calls" else f", finish_reason={self.finish_reason!r}"
        )
        inner = ", ".join(repr(spec) for spec in self.calls)
        return f"calls({inner}{content}{_usage_text(self.usage)}{finish})"


@attrs.frozen(kw_only=True, repr=False)
class _Fail:
    exception: BaseException | type[BaseException]

    def __repr__(self) -> str:
        shown = (
            self.exception.__name__ if isinstance(self.exception, type) else repr(self.exception)
        )
        return f"fail({shown})"


ScriptStep = _Reply | _Call | _Calls | _Fail | InferenceResponse
"""One answer of a script."""


def reply(text: str, usage: Usage | None = None, finish_reason: str = "stop") -> ScriptStep:
    """The model answers with ``text``."""
    return _Reply(content=text, usage=usage or ZERO_USAGE, finish_reason=finish_reason)


def call(
    name: str,
    /,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    id: str | None = None,
    **kw: Any,
) -> ScriptStep:
    """The model calls tool ``name``; ``arguments`` and ``kw`` are merged.

    A string ``arguments`` is the model's raw text: kept as ``raw_arguments`` (and failing
    the call) unless it parses as a JSON object.
    """
    if isinstance(arguments, str):
        if kw:
            raise ConfigurationError("call(): raw string arguments cannot be merged with keywords")
        return _Call(name=name, arguments=arguments, id=id)
    merged = {**(arguments or {}), **kw}
    return _Call(name=name, arguments=merged, id=id)


def calls(
    *steps: ScriptStep,
    content: str = "",
    usage: Usage | None = None,
    finish_reason: str = "tool_calls",
) -> ScriptStep:
    """The model makes several tool calls in one answer."""
    specs = tuple(step for step in steps if isinstance(step, _Call))
    if not steps or len(specs) != len(steps):
        raise ConfigurationError("calls() takes one or more call(...) steps")
    return _Calls(
        calls=specs,
        content=content,
        usage=usage or ZERO_USAGE,
        finish_reason=finish_reason,
    )


def fail(exception: BaseException | type[BaseException]) -> ScriptStep:
    """The driver raises ``exception`` instead of answering."""
    if not (
        isinstance(exception, BaseException)
        or (isinstance(exception, type) and issubclass(exception, BaseException))
    ):
        raise ConfigurationError(f"fail() takes an exception, got {exception!r}")
    return _Fail(exception=exception)


class ScriptedDriver:
    """Answers each request with the next step of its script; past the end it raises
    ``ScriptExhausted``. Thread-safe; ``reset()`` starts the script again.

    ``last_request`` is the latest request; with ``keep_requests=True`` every request is kept
    in ``requests`` (off by default: a long run would keep every request alive).
    """

    __slots__ = ("_answers", "_keep", "_positions", "_used", "last_request", "requests")
    answers_checked: ClassVar[bool] = True  # each answer checked once, when the script is made

    def __init__(self, steps: Iterable[ScriptStep], *, keep_requests: bool = False) -> None:
        self._answers: tuple[InferenceResponse | _Fail, ...] = _compile(list(steps))
        self._positions = itertools.count()
        self._used = 0
        self._keep = keep_requests
        self.requests: list[InferenceRequest] = []
        self.last_request: InferenceRequest | None = None

    @property
    def remaining(self) -> int:
        """How many answers are left."""
        return max(len(self._answers) - self._used, 0)

    def reset(self) -> None:
        """Start the script from its first step again."""
        self._positions = itertools.count()
        self._used = 0
        self.last_request = None
        self.requests.clear()

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        """The next answer of the script."""
        position = next(self._positions)  # atomic: safe across threads without a lock
        if position >= len(self._answers):
            raise ScriptExhausted(
                f"the script has {len(self._answers)} steps and all were used "
                f"(request {position + 1})"
            )
        self._used = position + 1
        self.last_request = request
        if self._keep:
            self.requests.append(request)
        answer = self._answers[position]
        if type(answer) is _Fail:
            exception = answer.exception
            raise exception() if isinstance(exception, type) else exception
        return cast(InferenceResponse, answer)

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse:
        """The next answer of the script."""
        return self.infer(request)

    def __repr__(self) -> str:
        return f"ScriptedDriver({len(self._answers)} steps, {self.remaining} left)"


def _compile(steps: list[ScriptStep]) -> tuple[InferenceResponse | _Fail, ...]:
    counter = 0

    def tool_call(spec: _Call) -> ToolCall:
        nonlocal counter
        counter += 1
        call_id = spec.id or f"call_{counter}"
        if isinstance(spec.arguments, str):
            parsed = parse_object(spec.arguments)
            if parsed is not None:
                return ToolCall(id=call_id, name=spec.name, arguments=parsed)
            return ToolCall(id=call_id, name=spec.name, raw_arguments=spec.arguments)
        return ToolCall(id=call_id, name=spec.name, arguments=spec.arguments)

    answers: list[InferenceResponse | _Fail] = []
    for index, step in enumerate(steps):
        if isinstance(step, InferenceResponse | _Fail):
            answers.append(step)
        elif isinstance(step, _Reply):
            answers.append(
                InferenceResponse(
                    content=step.content, usage=step.usage, finish_reason=step.finish_reason
                )
            )
        elif isinstance(step, _Call):
            answers.append(
                InferenceResponse(
                    tool_calls=to_pvector([tool_call(step)]), finish_reason="tool_calls"
                )
            )
        elif isinstance(step, _Calls):
            answers.append(
                InferenceResponse(
                    content=step.content,
                    tool_calls=to_pvector([tool_call(spec) for spec in step.calls]),
                    usage=step.usage,
                    finish_reason=step.finish_reason,
                )
            )
        else:
            raise ConfigurationError(
                f"script step {index} is {step!r}; use reply(), call(), calls(), fail() "
                "or an InferenceResponse"
            )
        problem = unrecordable(answers[-1]) if type(answers[-1]) is InferenceResponse else None
        if problem is not None:
            raise ConfigurationError(f"script step {index} cannot be recorded: {problem}")
    return tuple(answers)
