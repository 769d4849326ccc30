"""Reading a file a user names (a run file, an audit log, a definition, a key): its bytes
when it is a regular file, an error saying why not otherwise — never a read that does not
end (``/dev/zero``, a device), one that never begins (a pipe nobody writes to), or a
``MemoryError`` from a file larger than memory. And replacing a file whole
(``replacing``), with the mode the umask gives.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

from agents.errors import ResourceError

__all__ = [
    "DirectoryGiven",
    "MissingFile",
    "UnreadableFile",
    "read_file",
    "read_text",
    "replacing",
    "unusable",
]

_NONBLOCKING: Final = getattr(os, "O_NONBLOCK", 0)  # opening a pipe does not wait for a writer
_NEW: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_KINDS: Final = (
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableFile(ResourceError):
    """A file that cannot be read: a path that is not a regular file (a pipe, a device, a
    socket), a file too large to hold in memory, or a path the system cannot open (too
    long, under a file, holding a NUL character, not permitted); ``strerror`` says which."""


class DirectoryGiven(UnreadableFile, IsADirectoryError):
    """A path that names a directory where a file was expected."""


class MissingFile(UnreadableFile, FileNotFoundError):
    """A path where there is no file."""


def unusable(exc: OSError | ValueError) -> str:
    """Why the system would not use a path, as an error says it: its own words, or, for
    the ``ValueError`` os and sqlite3 raise for a NUL character, that no path holds one."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return "no path holds a NUL character"


def read_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at ``path``, or an ``UnreadableFile`` saying why not:
    a ``MissingFile`` (a ``FileNotFoundError``) when there is none, a ``DirectoryGiven``
    (an ``IsADirectoryError``) for a directory."""
    try:
        handle = os.open(path, os.O_RDONLY | _NONBLOCKING | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise MissingFile(errno.ENOENT, "no such file", os.fspath(path)) from None
    except (OSError, ValueError) as exc:
        code = exc.errno if isinstance(exc, OSError) else errno.EINVAL
        raise UnreadableFile(code, unusable(exc), os.fspath(path)) from None
    try:
        status = os.fstat(handle)
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise DirectoryGiven(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "a file of no known kind")
            raise UnreadableFile(errno.EINVAL, f"{kind}, not a regular file", os.fspath(path))
        if _NONBLOCKING:
            os.set_blocking(handle, True)
        try:
            return _read_all(handle, status.st_size)
        except MemoryError:
            raise UnreadableFile(
                errno.EFBIG,
                f"too large to read into memory ({status.st_size:,} bytes)",
                os.fspath(path),
            ) from None
    finally:
        os.close(handle)


def _read_all(handle: int, size: int) -> bytes:
    """What is left to read of a regular file said to hold ``size`` bytes, read until the
    file says there is no more: all of it asked for at once (a byte more: the file may
    have grown, or say 0 as some system files do), then whatever else comes."""
    parts = [os.read(handle, size + 1)]
    while parts[0] and (chunk := os.read(handle, max(size, 1 << 16))):
        parts.append(chunk)
    return b"".join(parts)  # one part: that part itself, not a copy


def read_text(path: str | os.PathLike[str]) -> str:
    """``read_file`` as UTF-8 text, its line ends read as text mode reads them (``\\r\\n``
    and ``\\r`` as ``\\n``); ``UnicodeDecodeError`` for bytes that are not UTF-8."""
    return read_file(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def replacing(path: Path, *, fsync: bool) -> Iterator[BinaryIO]:
    """A new file to write, put in ``path``'s place whole when the ``with`` block ends, or
    not at all when it fails: written beside it, flushed (to disk too with ``fsync``),
    then renamed. It gets the mode any new file gets under the process's umask, as
    ``open`` gives it (``mkstemp``'s is 600, and reading the umask would change it for
    every thread a moment)."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
    try:
        handle = os.open(temporary, _NEW, 0o666)
    except OSError as exc:  # named by the file asked for: the temporary one is ours
        exc.filename = os.fspath(path)
        raise
    try:
        with os.fdopen(handle, "wb") as file:
            yield file
            file.flush()
            if fsync:
                os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
