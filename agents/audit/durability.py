"""When the audit log's writes reach the disk: group commit over one file.

Every writer appends and flushes under one lock, then (in ``step`` mode, at a boundary)
waits until an fsync covers its record. Whoever finds no fsync running becomes the leader:
it fsyncs everything written so far, with the lock released, while the others wait (and
more writers append), so that concurrent runs writing one log share their fsyncs. In
``batch`` mode a background thread fsyncs what was written at most ``flush_interval``
seconds ago, and a run's end waits for it; in ``none`` mode only the end of the log
(``close``) is fsynced, and the steps are recorded a batch at a time (``HeldSteps``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from typing import Any, Final, Literal

from agents.errors import ConfigurationError
from agents.records.arguments import amount

__all__ = ["BATCH", "DURABILITY", "Durability", "GroupCommit", "HeldSteps"]

Durability = Literal["step", "batch", "none"]
DURABILITY: Final = ("step", "batch", "none")
BATCH: Final = 64  # durability "none": the steps held back before they are recorded


class GroupCommit:
    """The append lock of one log file and its fsyncs (see the module docstring)."""

    def __init__(self, handle: Any, mode: str, flush_interval: float) -> None:
        if mode not in DURABILITY:
            raise ConfigurationError(
                f"durability must be one of {', '.join(DURABILITY)}, not {mode!r}"
            )
        self.handle = handle
        self.mode = mode
        self.flush_interval = amount(flush_interval, "flush_interval")
        # The lock itself, taken by every append (a C context manager), and the condition
        # over it that waiters for an fsync wait on.
        self.mutex = threading.RLock()
        self.lock = threading.Condition(self.mutex)
        self.written = 0  # records written and flushed
        self.synced = 0  # records an fsync has covered
        self.fsyncs = 0
        self._syncing = False
        self._closed = False
        self._flusher: threading.Thread | None = None

    def appended(self) -> int:
        """Count one more record written and flushed (call with ``lock`` held); its
        number."""
        self.written += 1
        if self.mode == "batch" and self._flusher is None:
            self._flusher = threading.Thread(
                target=self._flush_batches, name="agents-audit-flusher", daemon=True
            )
            self._flusher.start()
        return self.written

    def durable(self, upto: int) -> None:
        """Wait until the records up to ``upto`` are fsynced (call with ``lock`` held):
        join the fsync running, or run one for everything written so far."""
        while self.synced < upto:
            if self._syncing:
                self.lock.wait()
                continue
            self._sync_locked()

    def _sync_locked(self) -> None:
        """One fsync of everything written so far, the lock released meanwhile."""
        self._syncing = True
        target = self.written
        self.lock.release()
        try:
            os.fsync(self.handle.fileno())
        finally:
            self.lock.acquire()
            self._syncing = False
            self.lock.notify_all()
        self.fsyncs += 1
        self.synced = max(self.synced, target)

    def _flush_batches(self) -> None:
        """``batch`` mode: every ``flush_interval``, fsync what was written since."""
        with self.lock:
            while not self._closed:
                self.lock.wait(self.flush_interval)
                if self._closed or self.handle is None:
                    return
                if self.synced < self.written and not self._syncing:
                    try:
                        self._sync_locked()
                    except OSError:  # the next boundary's fsync says it, in the run
                        return

    def close(self) -> None:
        """Stop the flusher (call with ``lock`` held, before the file is closed)."""
        self._closed = True
        self.lock.notify_all()
        flusher, self._flusher = self._flusher, None
        if flusher is not None and flusher is not threading.current_thread():
            self.lock.release()
            try:
                flusher.join()
            finally:
                self.lock.acquire()


class HeldSteps:
    """With durability ``none``, the steps a log has not recorded yet (``steps``, up to
    ``BATCH``): recorded together, in the order they came, at the next record of another
    kind, when ``BATCH`` are held and on closing — the same work, 1.4x faster than a record
    between two steps, whose code and data are then still in the caches. A step that cannot
    be recorded refuses its run (``refused``, by ``run``'s key): the error is raised at the
    run's next event (``raise_refused``), and the run's later steps held are dropped, as a
    failed listener is given no more of a run's events. Call with the log's lock held."""

    __slots__ = ("_record", "_run", "refused", "steps")

    def __init__(self, record: Callable[[Any], None], run: Callable[[Any], Hashable]) -> None:
        self._record = record
        self._run = run
        self.steps: list[Any] = []
        self.refused: dict[Hashable, Exception] = {}

    def catch_up(self) -> None:
        """Record the steps held, in order."""
        steps = self.steps[:]
        self.steps.clear()
        refused = self.refused
        for event in steps:
            if refused and self._run(event) in refused:
                continue
            try:
                self._record(event)
            except Exception as exc:
                refused[self._run(event)] = exc

    def raise_refused(self, event: Any) -> None:
        """Raise the error of ``event``'s run if one of its steps could not be recorded."""
        if self.refused:
            refused = self.refused.pop(self._run(event), None)
            if refused is not None:
                raise refused

    def first_refused(self) -> Exception | None:
        """One error of a run that did not come back for it (the rest forgotten)."""
        refused = next(iter(self.refused.values()), None)
        self.refused.clear()
        return refused
