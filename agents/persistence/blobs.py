"""``FileBlobStore``: blobs in a folder, one file each, named by their SHA-256
(docs/design/content.md)."""

from __future__ import annotations

import os
from pathlib import Path

from agents.errors import BlobCorrupted, BlobNotFound, ContentError
from agents.records.arguments import path as checked_path
from agents.records.blobs import DEFAULT_LIMITS, Blob, ContentLimits, a_blob, checked_bytes
from agents.shell.files import UnreadableFile, read_file, replacing, unusable

__all__ = ["FileBlobStore"]


class FileBlobStore:
    """A ``BlobStore`` in the folder ``path`` (made when first written): the bytes of each
    blob once, in ``<path>/<first two hex digits>/<sha256>`` (of the umask's mode, as the
    log beside it). ``put`` writes a temporary file, flushes it to disk and renames it
    into place, so a blob is whole or absent; ``get`` checks the bytes against the hash.
    ``fsync=False`` leaves the flush to disk to the system (an audit log with
    ``durability="none"`` keeps its blobs so)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        limits: ContentLimits = DEFAULT_LIMITS,
        *,
        fsync: bool = True,
    ):
        self.path = Path(checked_path(path, "FileBlobStore: path"))
        self._limits = limits
        self._fsync = fsync

    def _file(self, sha256: str) -> Path:
        return self.path / sha256[:2] / sha256

    def put(self, data: bytes, media_type: str) -> Blob:
        """Store ``data`` (once: bytes already here are not written again); its blob."""
        blob = Blob.of(data, media_type, self._limits)
        self.put_blob(blob)
        return blob

    def put_blob(self, blob: Blob) -> None:
        """Store the bytes ``blob`` holds or reads, unless they are here (a blob made by
        ``Blob.of`` is not hashed again)."""
        if self.has(a_blob(blob, self)):
            return
        data = blob.data()
        target = self._file(blob.sha256)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with replacing(target, fsync=self._fsync) as file:
                file.write(data)
        except (OSError, ValueError) as exc:
            raise ContentError(f"{self.path}: cannot store a blob: {unusable(exc)}") from None

    def get(self, blob: Blob) -> bytes:
        """The bytes of ``blob``: ``BlobNotFound`` when they are not here, ``BlobCorrupted``
        when they do not hash to its name."""
        try:
            data = read_file(self._file(a_blob(blob, self).sha256))
        except FileNotFoundError:
            raise BlobNotFound(blob.sha256, f"not in {self.path}") from None
        except UnreadableFile as exc:
            raise BlobCorrupted(blob.sha256, f"unreadable: {exc.strerror or exc}") from None
        return checked_bytes(blob, data)

    def has(self, blob: Blob) -> bool:
        """Whether the bytes of ``blob`` are here (present, not checked): not where no
        file can be (a path too long, under a file, holding a NUL character)."""
        sha256 = a_blob(blob, self).sha256
        try:
            return self._file(sha256).is_file()
        except OSError:  # (``is_file`` says False for some such paths, raises for others)
            return False

    def __repr__(self) -> str:
        return f"FileBlobStore({str(self.path)!r})"
