"""Time and ids inside a durable workflow (no DBOS here: ``agents.durable.dbos`` uses them).

Why a recovered run takes the same decisions: ids derive from the workflow id and a counter
(``WorkflowIds``), and the machine's clock (``RecordedClock``) tells the time read at the
end of the latest DBOS step, so only steps that ran again carry new times.
"""

from __future__ import annotations

import threading
from datetime import datetime

from agents.core.clock import Clock

__all__ = ["RecordedClock", "WorkflowIds", "at", "reading"]


class RecordedClock:
    """The machine's clock inside a workflow: the time read at the end of the latest DBOS
    step (never earlier than a time it told before)."""

    __slots__ = ("_at",)

    def __init__(self, at: datetime) -> None:
        self._at = at

    def now(self) -> datetime:
        """The latest recorded time."""
        return self._at

    def advance(self, at: datetime) -> None:
        """Move on to a time a DBOS step recorded."""
        if at > self._at:
            self._at = at

    def __repr__(self) -> str:
        return f"RecordedClock({self._at.isoformat()})"


class WorkflowIds:
    """Ids inside a workflow: the workflow id names the execution (and a new agent); every
    other id is ``<workflow id>.<kind>-<n>``, counted in the order the machine asks, which
    is the same in a recovered run."""

    __slots__ = ("_count", "_lock", "workflow_id")

    def __init__(self, workflow_id: str) -> None:
        self.workflow_id = workflow_id
        self._count = 0
        self._lock = threading.Lock()

    def new_id(self, kind: str) -> str:
        """The next id of ``kind``."""
        if kind in ("execution", "agent"):
            return self.workflow_id
        with self._lock:
            self._count += 1
            return f"{self.workflow_id}.{kind}-{self._count}"

    def __repr__(self) -> str:
        return f"WorkflowIds({self.workflow_id!r})"


def reading(clock: Clock) -> str:
    """``clock``'s time as DBOS stores it in a step's output."""
    return clock.now().isoformat(timespec="microseconds")


def at(text: str) -> datetime:
    """A time read back from a step's output."""
    return datetime.fromisoformat(text)
