"""The exception hierarchy under ``AgentError`` (SPEC §16), at the bottom of the layers.

Errors inside a run are data (``ErrorInfo``, in ``agents.records.error_info``); exceptions
are for the API edge. ``ProviderError`` and ``ReplayDivergence`` carry an ``ErrorInfo`` and
live beside it; every exception is importable from ``agents``.
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "AuditLogTampered",
    "ConfigurationError",
    "DefinitionError",
    "InvariantViolation",
    "MissingExtra",
    "ScriptExhausted",
    "SessionConflict",
    "SessionNotFound",
    "StateDecodeError",
    "StoreUnavailable",
]


class AgentError(Exception):
    """Base of every exception the library raises (recorded in a run as
    ``ErrorInfo(type=<class name>, message=str(exc))``)."""


class ConfigurationError(AgentError):
    """Misuse found before a run starts: a bad option, tool, hook or argument."""


class MissingExtra(AgentError, ImportError):
    """A part of the library was imported without the optional packages it needs: the
    message names the extra to install (``pip install 'agents[mcp]'``)."""


def require_extra(extra: str, part: str, *modules: str) -> None:
    """Raise ``MissingExtra`` naming ``extra`` when one of ``modules`` cannot be imported
    (looked up, not imported): what ``part`` of the library needs."""
    import importlib.util

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a missing parent package, or a broken one
            found = False
        if not found:
            raise MissingExtra(
                f"{part} needs {module.split('.')[0]}, which is not installed: "
                f"pip install 'agents[{extra}]'",
                name=module,
            )


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


class StateDecodeError(AgentError):
    """Malformed or unsupported serialized data; ``path`` names the bad field."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message if path == "$" else f"{message} (at {path})")
        self.path = path
        self.reason = message


class ScriptExhausted(AgentError):
    """A scripted driver was asked for more answers than its script holds."""


class SessionNotFound(AgentError):
    """No session is stored under that id."""


class SessionConflict(AgentError):
    """A write was based on a session version that is no longer the stored one."""


class StoreUnavailable(AgentError):
    """The session store could not do what was asked: its database locked past the busy
    timeout, its connection lost, its disk full. The call's transaction did not commit
    (unless the connection was lost during the commit itself: a ``load`` tells); the
    next call tries again (a PostgreSQL store connects again)."""


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
