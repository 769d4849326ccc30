"""When to stop: the built-in limits and the should-stop decision after a step."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Final

import attrs

from agents.errors import ConfigurationError
from agents.persistent import to_pmap
from agents.signals import ExecutionContinuation, StopReason, StopSignal

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
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool) or value < 0
            ):
                raise ConfigurationError(
                    f"{name} must be a non-negative number or None, got {value!r}"
                )

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

    @property
    def any(self) -> bool:
        """Whether any limit is set."""
        return not (
            self.max_steps is None
            and self.max_tokens is None
            and self.max_cost is None
            and self.time_limit is None
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
    if (
        limits.max_steps is not None
        and steps >= limits.max_steps
        and not continuation.has_reason(StopReason.STEPS_LIMIT)
    ):
        yield StopSignal(
            reason=StopReason.STEPS_LIMIT,
            message=f"reached max_steps={limits.max_steps}",
            context=to_pmap({"max_steps": limits.max_steps, "steps": steps}),
            source=_SOURCE,
        )
    if (
        limits.max_tokens is not None
        and tokens >= limits.max_tokens
        and not continuation.has_reason(StopReason.TOKEN_LIMIT)
    ):
        yield StopSignal(
            reason=StopReason.TOKEN_LIMIT,
            message=f"used {tokens} tokens, max_tokens={limits.max_tokens}",
            context=to_pmap({"max_tokens": limits.max_tokens, "tokens": tokens}),
            source=_SOURCE,
        )
    if (
        limits.max_cost is not None
        and cost >= limits.max_cost
        and not continuation.has_reason(StopReason.COST_LIMIT)
    ):
        yield StopSignal(
            reason=StopReason.COST_LIMIT,
            message=f"cost {cost:g}, max_cost={limits.max_cost:g}",
            context=to_pmap({"max_cost": limits.max_cost, "cost": cost}),
            source=_SOURCE,
        )
    if limits.time_limit is not None and started_at is not None:
        elapsed = (now - started_at).total_seconds()
        if elapsed >= limits.time_limit and not continuation.has_reason(StopReason.TIME_LIMIT):
            yield StopSignal(
                reason=StopReason.TIME_LIMIT,
                message=f"ran {elapsed:g} s, time_limit={limits.time_limit:g} s",
                context=to_pmap({"time_limit": limits.time_limit, "elapsed": elapsed}),
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
