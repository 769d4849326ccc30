"""Retrying failed inference: which faults are worth another attempt, how long to wait, and
``RetryInterceptor``, the same policy as ``LiteLLMDriver``'s for any driver.

Retried: 429 (honouring ``Retry-After``), 5xx, timeouts, dropped connections, streams cut
mid-way. Never retried: other 4xx, and anything that is not a provider fault.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Any, Final

from agents.errors import ConfigurationError
from agents.records.arguments import amount, function
from agents.records.error_info import ErrorInfo, ProviderError
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.shell.reporting import report_retry

__all__ = ["RetryInterceptor", "classify", "retry_delay"]

_MAX_RETRY_AFTER: Final = 60.0


def classify(exc: BaseException) -> tuple[int | None, bool, float | None]:
    """``(status_code, retryable, retry_after)`` of a fault; ``status_code`` is ``None`` when
    no response arrived (timeout, dropped connection, a stream cut mid-way)."""
    if isinstance(exc, ProviderError) and exc.retryable is not None:  # the driver knows
        status = exc.error_info.details.get("status_code")
        code = status if isinstance(status, int) and not isinstance(status, bool) else None
        return code, exc.retryable, exc.retry_after if exc.retryable else None
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "MidStreamFallbackError" in names:  # a stream cut mid-way: the partial text is dropped
        return None, True, None
    if names & {"Timeout", "APITimeoutError", "TimeoutError"}:
        return None, True, None
    if names & {"APIConnectionError", "ConnectionError"}:
        return None, True, None
    status = getattr(exc, "status_code", None)
    if status is None:
        info = getattr(exc, "error_info", None)
        details = getattr(info, "details", None)
        status = details.get("status_code") if details is not None else None
    if not isinstance(status, int) or isinstance(status, bool):
        return None, False, None
    retryable = status == 429 or status >= 500
    return status, retryable, _retry_after(exc) if retryable else None


def retry_delay(attempt: int, backoff: float, retry_after: float | None) -> float:
    """Seconds to wait after failed attempt ``attempt``: ``Retry-After`` when the provider
    sent one (at most 60 s), else ``backoff`` doubled per attempt."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), _MAX_RETRY_AFTER)
    return float(backoff * 2 ** (attempt - 1))


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


class RetryInterceptor:
    """Retries inference through any driver with ``LiteLLMDriver``'s policy.

    ``num_retries`` retries after the first attempt, waiting ``retry_backoff`` seconds
    doubled each time or what ``Retry-After`` asks; ``sleep`` replaces the waiting. Each
    failed attempt that is retried is reported as an ``InferenceRetry`` event. When attempts
    run out, the last fault is raised as ``ProviderError`` with ``status_code`` and
    ``attempts`` in its details.
    """

    def __init__(
        self,
        num_retries: int = 2,
        retry_backoff: float = 0.5,
        *,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        if not isinstance(num_retries, int) or isinstance(num_retries, bool) or num_retries < 0:
            raise ConfigurationError(f"num_retries must be an int >= 0, got {num_retries!r}")
        self.num_retries = num_retries
        self.retry_backoff = amount(retry_backoff, "retry_backoff", zero=True)
        self._sleep = function(sleep, "sleep", "seconds", error=ConfigurationError) or time.sleep

    def intercept_inference(
        self, request: InferenceRequest, call_next: Callable[[InferenceRequest], Any]
    ) -> InferenceResponse:
        """Call the next layer until it answers or the attempts run out."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response: InferenceResponse = call_next(request)
                return response
            except Exception as exc:
                status, retryable, retry_after = classify(exc)
                error = ErrorInfo.from_exception(exc).with_details(
                    {"status_code": status, "attempts": attempt}
                )
                if not retryable or attempt > self.num_retries:
                    raise ProviderError(error) from exc
                delay = retry_delay(attempt, self.retry_backoff, retry_after)
            report_retry(attempt, error, delay)
            self._sleep(delay)

    def __repr__(self) -> str:
        return (
            f"RetryInterceptor(num_retries={self.num_retries}, retry_backoff={self.retry_backoff})"
        )
