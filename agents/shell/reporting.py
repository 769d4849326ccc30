"""Reporting from inside an effect: streamed pieces and retried attempts become events.

A driver or an interceptor runs inside the runner's ``Infer`` effect and cannot emit events
itself (it does not know the run's ids). The runner installs a ``Reporter`` for the duration
of the effect — only when someone listens — and ``report_delta`` / ``report_retry`` send to
it; with nobody listening they cost one context-variable read.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any

import attrs

from agents.records.error_info import ErrorInfo
from agents.records.events import Event, InferenceDelta, InferenceRetry, ReasoningDelta

__all__ = [
    "FORWARD",
    "Reporter",
    "current_forward",
    "current_reporter",
    "forwarding",
    "report_delta",
    "report_retry",
    "reporting",
]


@attrs.frozen
class Reporter:
    """Turns pieces and attempts of one inference into step-level events."""

    emit: Callable[[Event], None]
    agent_id: str | None
    execution_id: str | None
    step: int

    def delta(
        self,
        content: str = "",
        attempt: int = 1,
        *,
        tool_call_index: int | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        arguments: str = "",
        reasoning: str = "",
    ) -> None:
        """A piece of the answer arrived (text, part of a tool call, or ``reasoning``)."""
        if reasoning:
            self.emit(
                ReasoningDelta(
                    agent_id=self.agent_id,
                    execution_id=self.execution_id,
                    step=self.step,
                    content=reasoning,
                    attempt=attempt,
                )
            )
            return
        self.emit(
            InferenceDelta(
                agent_id=self.agent_id,
                execution_id=self.execution_id,
                step=self.step,
                content=content,
                attempt=attempt,
                tool_call_index=tool_call_index,
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                arguments=arguments,
            )
        )

    def retry(self, attempt: int, error: ErrorInfo, delay: float) -> None:
        """Attempt ``attempt`` failed with ``error``; the next starts after ``delay`` s."""
        self.emit(
            InferenceRetry(
                agent_id=self.agent_id,
                execution_id=self.execution_id,
                step=self.step,
                attempt=attempt,
                error=error,
                delay=delay,
            )
        )


_CURRENT: ContextVar[Reporter | None] = ContextVar("agents_reporter", default=None)


def current_reporter() -> Reporter | None:
    """The reporter of the effect running in this context, if anyone listens."""
    return _CURRENT.get()


class _Set:
    """A context variable set for the code inside a ``with`` block (a class, not a
    ``@contextmanager`` generator: the runners enter one per effect when someone listens)."""

    __slots__ = ("_token", "_value", "_variable")

    def __init__(self, variable: ContextVar[Any], value: Any) -> None:
        self._variable, self._value = variable, value

    def __enter__(self) -> None:
        self._token = self._variable.set(self._value)

    def __exit__(self, *exc_info: object) -> None:
        self._variable.reset(self._token)


def reporting(reporter: Reporter | None) -> AbstractContextManager[None]:
    """Install ``reporter`` for the code inside the block."""
    return _Set(_CURRENT, reporter)


def report_delta(content: str = "", attempt: int = 1, **tool: Any) -> None:
    """Report a streamed piece to the current reporter (if any)."""
    reporter = _CURRENT.get()
    if reporter is not None:
        reporter.delta(content, attempt, **tool)


def report_retry(attempt: int, error: ErrorInfo, delay: float) -> None:
    """Report a failed attempt that will be retried (if anyone listens)."""
    reporter = _CURRENT.get()
    if reporter is not None:
        reporter.retry(attempt, error, delay)


FORWARD: ContextVar[Callable[[Event], None] | None] = ContextVar("agents_forward", default=None)
"""Where nested runs' events go from the tool calls running (``forwarding``; the runners
set it themselves around each batch of tools when someone listens, a ``try`` cheaper than a
``with``)."""


def current_forward() -> Callable[[Event], None] | None:
    """Inside a tool call: where the events of a run the tool starts (a sub-agent) go — the
    calling run's listeners and log; ``None`` when nobody listens."""
    return FORWARD.get()


def forwarding(emit: Callable[[Event], None] | None) -> AbstractContextManager[None]:
    """Tool calls made in this block forward nested runs' events to ``emit``."""
    return _Set(FORWARD, emit)
