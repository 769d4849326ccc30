"""Which AG-UI runs each thread has had, read from its session's event log: a repeated
``runId`` replays that run's events instead of running again (``agents.serve.agui``)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Final

from agents.errors import SessionNotFound
from agents.serve.runs import Runs

__all__ = ["MARK", "AgUiRuns"]

MARK: Final = "AgUiRun"  # the event opening each AG-UI run in the session's log
_MARK_TEXT: Final = '{"type":"' + MARK + '",'
_KEPT_THREADS: Final = 1024


class AgUiRuns:
    """The AG-UI runs of each thread, by ``runId``: where each begins in the session's
    event log (its ``AgUiRun`` event), so that a repeated ``runId`` replays that run's
    events instead of running again. Read from the log (so another process's runs count
    too), past what was read before; the threads seen last are kept in memory."""

    def __init__(self, runs: Runs) -> None:
        self._runs = runs
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[int, dict[str, int]]] = OrderedDict()

    def find(self, thread: str, run_id: str) -> int | None:
        """The number of run ``run_id``'s opening event in ``thread``'s log, or ``None``."""
        with self._lock:
            read, found = self._known.get(thread, (0, {}))
        if run_id in found:
            return found[run_id]
        found = dict(found)
        while True:
            try:
                events = self._runs.store.events(thread, after=read, limit=1000)
            except SessionNotFound:
                events = []
            for number, text in events:
                if text.startswith(_MARK_TEXT):
                    data = json.loads(text)
                    if isinstance(data.get("run_id"), str):
                        found.setdefault(data["run_id"], number)
            if len(events) < 1000:
                break
            read = events[-1][0]
        read = events[-1][0] if events else read
        self._remember(thread, read, found)
        return found.get(run_id)

    def started(self, thread: str, run_id: str, number: int) -> None:
        """Run ``run_id`` of ``thread`` opens with event ``number``."""
        with self._lock:
            read, found = self._known.get(thread, (0, {}))
        self._remember(thread, read, {**found, run_id: number})

    def _remember(self, thread: str, read: int, found: dict[str, int]) -> None:
        with self._lock:
            self._known[thread] = (read, found)
            self._known.move_to_end(thread)
            while len(self._known) > _KEPT_THREADS:
                self._known.popitem(last=False)
