"""``ErrorInfo``: a failure stored as data inside records, and the two exceptions that
carry one (a provider's failure, a replay's divergence)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from pyrsistent.typing import PMap

from agents.errors import AgentError
from agents.records.compiled import replace_fields
from agents.records.frozen import EMPTY_MAP, same_value, to_pmap
from agents.records.record import Record
from agents.records.redaction import scrub, without_addresses

__all__ = ["ErrorInfo", "ProviderError", "ReplayDivergence"]


@attrs.frozen(kw_only=True)
class ErrorInfo(Record):
    """A failure stored as data: its type name, a message, and JSON-able details."""

    type: str
    message: str
    details: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorInfo:
        """The ``error_info`` an exception carries, else its class name (or the built-in
        name it is ``recorded_as``) and message (an
        exception whose text cannot be had — its ``__str__`` raises — is said so: the
        failure is recorded all the same). Key-shaped words (``sk-…``) and ``Bearer``/
        ``Basic`` credentials in the message are written ``"[redacted]"`` (docs/design/events.md),
        and the memory addresses of default ``repr``s are left out (the same run, the same
        record)."""
        try:
            carried = getattr(exc, "error_info", None)
        except Exception:  # a property that raises
            carried = None
        if isinstance(carried, ErrorInfo):
            return carried
        try:
            message = scrub(without_addresses(str(exc)))  # keys and credentials: "[redacted]"
        except Exception:
            message = "(its message could not be read: str() raised)"
        kind = type(exc)
        # InvalidArgument and its kin are recorded under the built-in's name they extend.
        return cls(type=kind.__dict__.get("recorded_as", kind.__name__), message=message)

    def describe(self) -> str:
        """``<type>: <message>``, the form the model and stop signals see."""
        return f"{self.type}: {self.message}" if self.message else self.type

    def with_details(self, details: Mapping[str, Any]) -> ErrorInfo:
        """A copy with ``details`` merged in."""
        if not details:
            return self
        merged = to_pmap({**self.details, **details})
        return self if same_value(merged, self.details) else replace_fields(self, details=merged)


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
