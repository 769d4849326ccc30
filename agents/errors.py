"""Errors: ``ErrorInfo`` as data inside records, one exception hierarchy at the API edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from pyrsistent.typing import PMap

from agents.persistent import EMPTY_MAP, to_pmap
from agents.record import Record

__all__ = [
    "AgentError",
    "AuditLogTampered",
    "ConfigurationError",
    "DefinitionError",
    "ErrorInfo",
    "InvariantViolation",
    "ProviderError",
    "ReplayDivergence",
    "ScriptExhausted",
    "SessionConflict",
    "SessionNotFound",
    "StateDecodeError",
]


@attrs.frozen(kw_only=True)
class ErrorInfo(Record):
    """A failure stored as data: its type name, a message, and JSON-able details."""

    type: str
    message: str
    details: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorInfo:
        """The ``error_info`` an exception carries, else its class name and message."""
        carried = getattr(exc, "error_info", None)
        if isinstance(carried, ErrorInfo):
            return carried
        return cls(type=type(exc).__name__, message=str(exc))

    def describe(self) -> str:
        """``<type>: <message>``, the form the model and stop signals see."""
        return f"{self.type}: {self.message}" if self.message else self.type

    def with_details(self, details: Mapping[str, Any]) -> ErrorInfo:
        """A copy with ``details`` merged in."""
        if not details:
            return self
        return self._evolve(details=to_pmap({**self.details, **details}))


class AgentError(Exception):
    """Base of every exception the library raises."""

    @property
    def error_info(self) -> ErrorInfo:
        """This exception as data."""
        return ErrorInfo(type=type(self).__name__, message=str(self))


class ConfigurationError(AgentError):
    """Misuse found before a run starts: a bad option, tool, hook or argument."""


class DefinitionError(ConfigurationError):
    """An agent definition file that cannot be used (``agents.definitions``): ``file``,
    ``line`` (1-based, when known) and ``field`` say where."""

    def __init__(
        self, message: str, *, file: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = file + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")
        self.file = file
        self.line = line
        self.field = field


class ProviderError(AgentError):
    """A model provider failed for good (after any retries); ``error_info`` has the
        provider's status and the number of attempts in its details; ``retryable`` and
        ``retry_after`` say what a retry policy around the driver may do (``None``: judge by the
    status). It never chains the
        provider's own exception (whose text may hold a credential)."""

    def __init__(
        self,
        error: ErrorInfo,
        *,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(error.describe())
        self._error = error
        self.retryable = retryable
        self.retry_after = retry_after

    @property
    def error_info(self) -> ErrorInfo:
        """The failure as it is recorded in the run."""
        return self._error


class StateDecodeError(AgentError):
    """Malformed or unsupported serialized data; ``path`` names the bad field."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message if path == "$" else f"{message} (at {path})")
        self.path = path
        self.reason = message


class ScriptExhausted(AgentError):
    """A scripted driver was asked for more answers than its script holds."""


class ReplayDivergence(AgentError):
    """A replayed run asked the model something the recording did not; ``step`` (1-based)
    and ``field`` (``messages[4].content``, ``messages``, ``steps``) say where."""

    def __init__(self, message: str, step: int = 0, field: str = "") -> None:
        super().__init__(message)
        self.step = step
        self.field = field

    @property
    def error_info(self) -> ErrorInfo:
        """The divergence as recorded in the run."""
        return ErrorInfo(
            type="ReplayDivergence",
            message=str(self),
            details={"step": self.step, "field": self.field},
        )


class SessionNotFound(AgentError):
    """No session is stored under that id."""


class SessionConflict(AgentError):
    """A write was based on a session version that is no longer the stored one."""


class AuditLogTampered(AgentError):
    """An audit log failed verification; ``line`` is the first bad line (1-based)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


class InvariantViolation(AgentError):
    """A history broke one or more invariants; ``violations`` lists them all."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = list(violations)
