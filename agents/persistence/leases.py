"""Run leases: which process runs a stored session now, across the processes sharing a
store. A process holds a session's lease while it runs the session; the lease goes when
the run ends or when the process dies (however it dies), so that another process may
resume an unfinished run exactly when no live process is running it.

``FileRunLeases`` holds them as byte-range locks in a file beside a SQLite database (the
operating system releases a dead process's locks); ``PostgresRunLeases``
(``agents.persistence.postgres``) as advisory locks on a connection of its own (the server
releases them when the connection goes). A store offers its kind by ``run_leases()``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Final, Protocol

from agents.errors import UsageError

__all__ = ["FileRunLeases", "RunLeases", "lease_key"]


class RunLeases(Protocol):
    """The run leases of one holder (a server process's runs)."""

    def acquire(self, session_id: str) -> bool:
        """Take the session's lease; ``False`` when another holder has it."""

    def release(self, session_id: str) -> None:
        """Give back a lease this holder took."""

    def held(self, session_id: str) -> bool:
        """Whether another holder has the session's lease now."""

    def close(self) -> None:
        """Give back every lease and let go of what holds them."""


def lease_key(session_id: str) -> int:
    """A session's lease as a number of 63 bits (two ids share one once in 2**31 pairs
    of sessions running at once: a run refused as busy, never two runs of one session)."""
    digest = hashlib.sha256(b"agents run lease\0" + session_id.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:8], "big") >> 1


# POSIX record locks belong to a process, not to a file descriptor: a second descriptor on
# the file would not conflict with the first, and closing any would release them all. So a
# process opens each lease file once, and its holders take turns on that one descriptor.
_FILES: dict[str, _LockFile] = {}
_FILES_LOCK: Final = threading.Lock()
_OFFSET_BITS: Final = 56  # a lock's offset in the file (off_t is 64 bits)


class _LockFile:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self.lock = threading.Lock()
        self.held: dict[int, object] = {}  # offset -> the holder in this process
        self.holders = 0


class FileRunLeases:
    """Leases as byte-range locks (``fcntl.lockf``) in the file ``path``: one byte a
    session, at an offset its id gives."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import fcntl  # POSIX; a store on Windows offers no leases (``run_leases`` is None)

        self._fcntl = fcntl
        self.path = os.path.realpath(path)
        with _FILES_LOCK:
            file = _FILES.get(self.path)
            if file is None:
                file = _FILES[self.path] = _LockFile(self.path)
            file.holders += 1
        self._file: _LockFile | None = file
        self._mine: set[int] = set()

    def _open(self) -> _LockFile:
        if self._file is None:
            raise UsageError(f"the run leases in {self.path!r} are closed")
        return self._file

    @staticmethod
    def _offset(session_id: str) -> int:
        return lease_key(session_id) >> (63 - _OFFSET_BITS)

    def acquire(self, session_id: str) -> bool:
        file, offset = self._open(), self._offset(session_id)
        with file.lock:
            if offset in file.held:
                return False
            try:
                self._fcntl.lockf(file.fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB, 1, offset)
            except OSError:  # EAGAIN or EACCES: another process holds it
                return False
            file.held[offset] = self
            self._mine.add(offset)
            return True

    def release(self, session_id: str) -> None:
        file, offset = self._open(), self._offset(session_id)
        with file.lock:
            if file.held.get(offset) is not self:
                return
            self._fcntl.lockf(file.fd, self._fcntl.LOCK_UN, 1, offset)
            del file.held[offset]
            self._mine.discard(offset)

    def held(self, session_id: str) -> bool:
        file, offset = self._open(), self._offset(session_id)
        with file.lock:
            holder = file.held.get(offset)
            if holder is not None:
                return holder is not self
            try:
                self._fcntl.lockf(file.fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB, 1, offset)
            except OSError:
                return True
            self._fcntl.lockf(file.fd, self._fcntl.LOCK_UN, 1, offset)
            return False

    def close(self) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        with file.lock:
            for offset in self._mine:
                self._fcntl.lockf(file.fd, self._fcntl.LOCK_UN, 1, offset)
                del file.held[offset]
            self._mine.clear()
        with _FILES_LOCK:
            file.holders -= 1
            if file.holders == 0:  # no lock of this process is left in it
                del _FILES[self.path]
                os.close(file.fd)

    def __repr__(self) -> str:
        return f"FileRunLeases({self.path!r})"
