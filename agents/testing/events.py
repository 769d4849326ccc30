"""Capturing the events of a run."""

from __future__ import annotations

import threading
from typing import TypeVar

from agents.records.events import Event

__all__ = ["EventRecorder", "capture_events"]

E = TypeVar("E", bound=Event)


class EventRecorder:
    """A listener that keeps every event it receives, in order."""

    __slots__ = ("_lock", "events")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def of_type(self, kind: type[E]) -> list[E]:
        """The recorded events of one type."""
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def names(self) -> list[str]:
        """The class names of the recorded events, in order."""
        return [type(event).__name__ for event in self.events]

    def clear(self) -> None:
        """Forget what was recorded."""
        with self._lock:
            self.events.clear()

    def __repr__(self) -> str:
        return f"EventRecorder({len(self.events)} events)"


def capture_events() -> EventRecorder:
    """A fresh ``EventRecorder``; pass it in ``listeners=``."""
    return EventRecorder()
