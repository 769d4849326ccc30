"""``Goal``: an objective the agent works on until it calls ``complete_goal`` or a budget is
spent (docs/design/sessions.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import attrs

from agents.errors import InvalidArgument
from agents.records.arguments import amount
from agents.records.frozen import to_float
from agents.records.record import Record

__all__ = ["COMPLETE_GOAL", "GOAL_STATUSES", "Goal"]

COMPLETE_GOAL: Final = "complete_goal"
GOAL_STATUSES: Final = frozenset({"active", "complete", "budget_limited"})


def _check_status(_: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if value not in GOAL_STATUSES:
        raise InvalidArgument(
            f"{attribute.name} must be one of {sorted(GOAL_STATUSES)}, got {value!r}"
        )


def _check_budget(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:  # NaN and infinity too: no JSON writes them
        amount(value, attribute.name, error=InvalidArgument)


@attrs.frozen
class Goal(Record):
    """An objective with optional budgets: total tokens, and seconds of (injected-clock) time
    counted from the goal's first step, across executions."""

    objective: str
    token_budget: int | None = attrs.field(default=None, kw_only=True, validator=_check_budget)
    time_budget: float | None = attrs.field(
        default=None, kw_only=True, validator=_check_budget, converter=to_float
    )
    status: str = attrs.field(default="active", kw_only=True, validator=_check_status)
    started_at: datetime | None = attrs.field(default=None, kw_only=True)
    tokens_used: int = attrs.field(default=0, kw_only=True)

    @property
    def active(self) -> bool:
        """Still being worked on."""
        return self.status == "active"
