"""The structlog bridge: the only module that imports structlog.

The library never configures structlog. With ``logger=None`` a run logs through
``structlog.get_logger("agents")`` only when the application has configured structlog, and
is silent otherwise. Events are logged with ``agent_id``, ``execution_id`` and ``step``;
run-level ones at info, step-level ones at debug, failures at warning.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final, Protocol

import structlog

from agents.records.events import (
    ContextCompacted,
    Event,
    ExecutionCompleted,
    ExecutionFailed,
    ExecutionStarted,
    ExecutionStopped,
    InferenceCompleted,
    InferenceRetry,
    StepCompleted,
    StopSignalReceived,
    ToolCallBlocked,
    ToolCallCompleted,
    ToolCallStarted,
)
from agents.records.redaction import scrub, without_addresses

__all__ = [
    "EventLogger",
    "Logger",
    "event_logger",
    "event_name",
    "listened",
    "listener_failure",
    "log_listener_failure",
    "note",
    "resolve_logger",
]

_NAMES: dict[type, str] = {}
_CAMEL: Final = re.compile(r"(?<!^)(?=[A-Z])")


def resolve_logger(logger: Any) -> Any:
    """The logger a run uses: the given one, the library's when structlog is set up, or None."""
    if logger is not None:
        return logger
    if structlog.is_configured():
        return structlog.get_logger("agents")
    return None


def event_name(event: Event) -> str:
    """``ToolCallCompleted`` → ``"tool_call_completed"``."""
    cls = type(event)
    name = _NAMES.get(cls)
    if name is None:
        name = _NAMES[cls] = _CAMEL.sub("_", cls.__name__).lower()
    return name


def _summary(event: Event) -> dict[str, Any]:
    """A few fields worth a log line; never arguments, values or other plain maps."""
    if isinstance(event, ToolCallStarted):
        return {"tool": event.tool_call.name, "tool_call_id": event.tool_call.id}
    if isinstance(event, ToolCallCompleted | ToolCallBlocked):
        execution = event.tool_execution
        fields: dict[str, Any] = {
            "tool": execution.name,
            "tool_call_id": execution.tool_call.id,
            "ok": execution.ok,
        }
        if execution.error is not None:
            fields["error"] = execution.error.describe()
        return fields
    if isinstance(event, InferenceRetry):
        return {"attempt": event.attempt, "error": event.error.describe(), "delay": event.delay}
    if isinstance(event, ContextCompacted):
        compaction = event.compaction
        return {"moved": compaction.moved, "summarized": len(compaction.summarized)}
    if isinstance(event, InferenceCompleted):
        response = event.response
        return {
            "finish_reason": response.finish_reason,
            "tool_calls": len(response.tool_calls),
            "tokens": response.usage.total_tokens,
        }
    if isinstance(event, StepCompleted):
        step_execution = event.step_execution
        return {"step_type": step_execution.step_type.value, "duration": step_execution.duration}
    if isinstance(event, StopSignalReceived | ExecutionStopped):
        signal = event.signal
        return {} if signal is None else {"reason": signal.reason.value, "message": signal.message}
    if isinstance(event, ExecutionFailed):
        return {} if event.error is None else {"error": event.error.describe()}
    if isinstance(event, ExecutionCompleted):
        return {"status": event.status.value}
    if isinstance(event, ExecutionStarted):
        return {"resumed": event.resumed}
    return {}


_LEVELS: Final = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


class Logger(Protocol):
    """What a loop logs through (``AgentLoop(logger=...)``): a structlog-like logger, whose
    methods take the event's name and its fields as keywords; ``structlog.get_logger()``
    is one. An ``is_enabled_for(level)`` method, when it has one, is asked once per run
    which levels it lets through."""

    def debug(self, event: str, /, **fields: Any) -> Any: ...

    def info(self, event: str, /, **fields: Any) -> Any: ...

    def warning(self, event: str, /, **fields: Any) -> Any: ...


class EventLogger:
    """Logs events through a structlog-like logger, asking once per run which levels the
    logger lets through: a filtered-out event then costs one dict lookup."""

    __slots__ = ("_enabled", "_logger")

    def __init__(self, logger: Any) -> None:
        self._logger = logger
        check = getattr(logger, "is_enabled_for", None)
        self._enabled = {name: _enabled(check, level) for name, level in _LEVELS.items()}

    @property
    def debug_enabled(self) -> bool:
        """Whether step-level (debug) events would be logged."""
        return self._enabled["debug"]

    def __call__(self, event: Event) -> None:
        level = event.level
        if self._enabled[level]:
            getattr(self._logger, level)(
                event_name(event),
                agent_id=event.agent_id,
                execution_id=event.execution_id,
                step=event.step,
                **_summary(event),
            )


def _enabled(check: Any, level: int) -> bool:
    if check is None:
        return True  # a logger that cannot tell filters by itself
    try:
        answer = check(level)
    except Exception:  # a proxy that cannot answer yet: let the logger decide
        return True
    return answer if isinstance(answer, bool) else True


def event_logger(logger: Any) -> EventLogger | None:
    """An ``EventLogger`` for ``logger``, or ``None`` when there is no logger."""
    return None if logger is None else EventLogger(logger)


def listened(listeners: Any, events: frozenset[type[Any]]) -> bool:
    """Whether one of ``listeners`` may act on some of ``events``: one that does not say
    which events it acts on (``event_types``), or says one of these."""
    for listener in listeners:
        wanted = getattr(listener, "event_types", None)
        if wanted is None or not events.isdisjoint(wanted):
            return True
    return False


def listener_failure(listener: Any, exc: BaseException) -> tuple[str, str]:
    """The listener (its ``repr``, without the memory address a default one shows: the
    record of a run is the same in every run) and ``Type: message`` of what it raised,
    key-shaped words and credentials redacted (docs/design/events.md): a webhook's or an exporter's
    error may quote the request it made."""
    shown = scrub(without_addresses(repr(listener)))
    return shown, scrub(without_addresses(f"{type(exc).__name__}: {exc}"))


def log_listener_failure(logger: Any, listener: Any, exc: BaseException) -> None:
    """A non-critical listener raised: warn and go on."""
    if logger is not None:
        shown, error = listener_failure(listener, exc)
        logger.warning("listener_failed", listener=shown, error=error)


def note(event: str, **fields: Any) -> None:
    """A one-off remark from the library (at info), when the application set structlog up."""
    if structlog.is_configured():
        structlog.get_logger("agents").info(event, **fields)
