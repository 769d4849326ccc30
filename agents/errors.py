"""The exception hierarchy under ``AgentError``, at the bottom of the layers.

Every exception the library raises on purpose is an ``AgentError``; errors from the user's
own code (a tool, a hook, a driver) pass through as they are, or are recorded in the run.
Errors inside a run are data (``ErrorInfo``, in ``agents.records.error_info``); exceptions
are for the API edge. ``ProviderError`` and ``ReplayDivergence`` carry an ``ErrorInfo`` and
live beside it. The hierarchy, and which classes also subclass a built-in exception that
callers expect, is in ``docs/design/errors.md``.
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "AuditLogTampered",
    "BlobCorrupted",
    "BlobNotFound",
    "ConfigurationError",
    "ContentError",
    "DatasetError",
    "DefinitionError",
    "EvalGateFailed",
    "InvalidArgument",
    "InvalidType",
    "InvariantViolation",
    "MissingExtra",
    "ResourceError",
    "ScriptExhausted",
    "SessionConflict",
    "SessionNotFound",
    "StateDecodeError",
    "StoreUnavailable",
    "UsageError",
]


class AgentError(Exception):
    """Base of every exception the library raises (recorded in a run as
    ``ErrorInfo(type=<class name>, message=str(exc))``)."""


class ConfigurationError(AgentError):
    """Misuse found before a run starts: a bad option, tool, hook or argument."""


class InvalidArgument(AgentError, ValueError):
    """A call was given a value it cannot take (an unknown call id, a naive datetime, an
    option outside its set); the message says which value and why."""

    recorded_as = "ValueError"  # the type name a run records it under, as before


class InvalidType(AgentError, TypeError):
    """A call was given a value of a type it does not take; the message names both."""

    recorded_as = "TypeError"


class UsageError(AgentError, RuntimeError):
    """An object was asked for something it cannot do in its present state: a closed audit
    log or lease table, or a model call in a run that the record answers."""

    recorded_as = "RuntimeError"


class ResourceError(AgentError, OSError):
    """A file, socket or remote endpoint the library could not use: a path that is not a
    regular file, an output that cannot be written, a port taken, an exporter that refused
    the spans. ``strerror`` (and ``errno``, when the system gave one) say why."""

    recorded_as = "OSError"


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


class _InFile(ConfigurationError):
    """A file that cannot be used: ``file``, ``line`` (1-based, when known) and ``field``
    say where, and the message starts with them (``file:line: field: ...``)."""

    def __init__(
        self, message: str, *, file: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = file + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")
        self.file = file
        self.line = line
        self.field = field


class DefinitionError(_InFile):
    """An agent definition file that cannot be used (``agents.definitions``): ``file``,
    ``line`` (1-based, when known) and ``field`` say where."""


class DatasetError(_InFile):
    """An evaluation dataset that cannot be used (``agents.evals``): ``file``, ``line``
    (1-based, when known) and ``field`` say where."""


class StateDecodeError(AgentError):
    """Malformed or unsupported serialized data; ``path`` names the bad field."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message if path == "$" else f"{message} (at {path})")
        self.path = path
        self.reason = message


class ContentError(AgentError, ValueError):
    """Content the library does not take: a malformed data URL, a media type a part does
    not take or its bytes belie, a blob past its size limit (docs/design/content.md)."""


class BlobNotFound(ContentError):
    """A blob's bytes are not where they were looked for; ``sha256`` names them."""

    def __init__(self, sha256: str, why: str) -> None:
        super().__init__(f"blob sha256:{sha256} not found: {why}")
        self.sha256 = sha256


class BlobCorrupted(ContentError):
    """A blob's stored bytes do not hash to its name (altered, or cut short); ``sha256``
    names the blob."""

    def __init__(self, sha256: str, why: str) -> None:
        super().__init__(f"blob sha256:{sha256} is corrupted: {why}")
        self.sha256 = sha256


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


class EvalGateFailed(AgentError, AssertionError):
    """An evaluation did not pass a test's gate (``agents.evals.assert_pass_rate``,
    ``assert_not_worse``): an ``AssertionError``, as a test runner reports one."""


class InvariantViolation(AgentError):
    """A history broke one or more invariants; ``violations`` lists them all."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = list(violations)
