"""``CancellationToken``: ask a running loop, from any thread, to stop at its next checkpoint."""

from __future__ import annotations

import threading

from agents.records.arguments import text

__all__ = ["CancellationToken"]


class CancellationToken:
    """Thread-safe; ``cancel()`` adds ``USER_REQUESTED`` at the loop's next checkpoint."""

    __slots__ = ("_event", "_lock", "_message")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._message = ""

    def cancel(self, message: str = "") -> None:
        """Request the stop (the first message is kept; a text, which the run's stop
        signal records)."""
        text(message, "CancellationToken.cancel: message")
        with self._lock:
            if not self._event.is_set():
                self._message = message
                self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel`` was called."""
        return self._event.is_set()

    @property
    def message(self) -> str:
        """The message given to ``cancel``."""
        return self._message

    def __repr__(self) -> str:
        return f"CancellationToken(cancelled={self.cancelled})"
