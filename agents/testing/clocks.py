"""Deterministic clocks and id factories."""

from __future__ import annotations

import itertools
import operator
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Final

from agents.errors import InvalidArgument

__all__ = ["EPOCH", "FixedClock", "SequentialIds", "TickingClock"]

EPOCH: Final = datetime(2025, 1, 1, tzinfo=UTC)
"""The default start of the deterministic clocks."""


def _aware(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise InvalidArgument(f"clocks need an aware datetime, got naive {at!r}")
    return at.astimezone(UTC)


class FixedClock:
    """Always the same instant (``set``/``advance`` move it by hand)."""

    __slots__ = ("_at",)

    def __init__(self, at: datetime = EPOCH) -> None:
        self._at = _aware(at)

    def now(self) -> datetime:
        """The fixed instant."""
        return self._at

    def set(self, at: datetime) -> None:
        """Move the clock to ``at``."""
        self._at = _aware(at)

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self._at += timedelta(seconds=seconds)

    def __repr__(self) -> str:
        return f"FixedClock({self._at.isoformat()})"


class TickingClock:
    """Starts at ``start`` and moves ``step`` forward after every reading."""

    __slots__ = ("_readings", "start", "step")

    def __init__(
        self, start: datetime = EPOCH, step: timedelta = timedelta(milliseconds=1)
    ) -> None:
        self.start = _aware(start)
        self.step = step
        # start, start + step, start + 2 step, ...; next() on it is atomic under the GIL,
        # so readings from several threads never repeat or skip.
        self._readings: Iterator[datetime] = itertools.accumulate(
            itertools.repeat(step), operator.add, initial=self.start
        )

    def now(self) -> datetime:
        """The current reading; the next one is ``step`` later."""
        return next(self._readings)

    def __repr__(self) -> str:
        return f"TickingClock(start={self.start.isoformat()}, step={self.step})"


class SequentialIds:
    """Ids ``<prefix><kind>-<n>``, counting each kind from 1."""

    __slots__ = ("_counters", "_lock", "prefix")

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._counters: dict[str, tuple[str, Iterator[int]]] = {}
        self._lock = threading.Lock()

    def new_id(self, kind: str) -> str:
        """The next id of ``kind``."""
        entry = self._counters.get(kind)
        if entry is None:
            with self._lock:
                entry = self._counters.setdefault(
                    kind, (f"{self.prefix}{kind}-", itertools.count(1))
                )
        return entry[0] + str(next(entry[1]))  # next() on a count is atomic

    def __repr__(self) -> str:
        return f"SequentialIds(prefix={self.prefix!r})"
