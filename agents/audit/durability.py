"""When the audit log's writes reach the disk: group commit over one file.

Every writer appends and flushes under one lock, then (in ``step`` mode, at a boundary)
waits until an fsync covers its record. Whoever finds no fsync running becomes the leader:
it fsyncs everything written so far, with the lock released, while the others wait (and
more writers append), so that concurrent runs writing one log share their fsyncs. In
``batch`` mode a background thread fsyncs what was written at most ``flush_interval``
seconds ago, and a run's end waits for it; in ``none`` mode only the end of the log
(``close``) is fsynced.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Final, Literal

from agents.errors import ConfigurationError
from agents.records.arguments import amount

__all__ = ["DURABILITY", "Durability", "GroupCommit"]

Durability = Literal["step", "batch", "none"]
DURABILITY: Final = ("step", "batch", "none")


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
