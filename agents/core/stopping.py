"""When to stop: the built-in limits and the should-stop decision after a step."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Final

import attrs

from agents.errors import ConfigurationError
from agents.records.arguments import amount
from agents.records.frozen import to_pmap
from agents.records.signals import ExecutionContinuation, StopReason, StopSignal

__all__ = ["Limits", "decide_stop", "limit_signals"]

_SOURCE: Final = "limits"


@attrs.frozen(kw_only=True)
class Limits:
    """The loop's limits, validated once; each counts the current execution only."""

    max_steps: int | None = 20
    max_tokens: int | None = None
    max_cost: float | None = None
    time_limit: float | None = None

    def __attrs_post_init__(self) -> None:
        for name in ("max_steps", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ConfigurationError(
                    f"{name} must be a non-negative int or None, got {value!r}"
                )
        for name in ("max_cost", "time_limit"):
            value = getattr(self, name)
            if value is not None:
                amount(value, name, zero=True)

    def due(
        self, steps: int, tokens: int, cost: float, started_at: datetime | None, now: datetime
    ) -> bool:
        """Whether any limit is reached (cheap; ``limit_signals`` builds the signals)."""
        return (
            (self.max_steps is not None and steps >= self.max_steps)
            or (self.max_tokens is not None and tokens >= self.max_tokens)
            or (self.max_cost is not None and cost >= self.max_cost)
            or (
                self.time_limit is not None
                and started_at is not None
                and (now - started_at).total_seconds() >= self.time_limit
            )
        )


def limit_signals(
    limits: Limits,
    continuation: ExecutionContinuation,
    *,
    steps: int,
    tokens: int,
    cost: float,
    started_at: datetime | None,
    now: datetime,
) -> Iterator[StopSignal]:
    """The limit signals due at BeforeStep, each at most once per execution."""
    elapsed = None if started_at is None else (now - started_at).total_seconds()
    checks = (
        (StopReason.STEPS_LIMIT, "max_steps", limits.max_steps, "steps", steps),
        (StopReason.TOKEN_LIMIT, "max_tokens", limits.max_tokens, "tokens", tokens),
        (StopReason.COST_LIMIT, "max_cost", limits.max_cost, "cost", cost),
        (StopReason.TIME_LIMIT, "time_limit", limits.time_limit, "elapsed", elapsed),
    )
    for reason, name, limit, measure, value in checks:
        if limit is None or value is None or value < limit or continuation.has_reason(reason):
            continue
        yield StopSignal(
            reason=reason,
            message=f"{measure} {value:g} reached {name}={limit:g}",
            context=to_pmap({name: limit, measure: value}),
            source=_SOURCE,
        )


COMPLETED_SIGNAL: Final = StopSignal(reason=StopReason.COMPLETED)


def decide_stop(
    continuation: ExecutionContinuation, requested_tool_calls: bool
) -> tuple[bool, StopSignal | None]:
    """ShouldStop after a step: ``(stop, signal to add)``.

    Stop if a signal exists and no continuation was requested; else go on if continuation
    was requested or the step requested tool calls; else stop with ``COMPLETED``.
    """
    if continuation.stop_signals and not continuation.continuation_requested:
        return True, None
    if continuation.continuation_requested or requested_tool_calls:
        return False, None
    return True, COMPLETED_SIGNAL
