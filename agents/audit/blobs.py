"""The blobs an audit log's records refer to: kept in a store beside the log
(``<log>.blobs/`` by default), each written before the record that refers to it, and
checked by ``verify`` (docs/design/content.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from agents.audit.chain import parse_line, read_bytes
from agents.errors import AuditLogTampered, BlobCorrupted, BlobNotFound, ContentError, InvalidType
from agents.persistence.blobs import FileBlobStore
from agents.records.blobs import Blob, BlobStore, blob_references, blobs_in, store_blob

__all__ = ["MENTION", "blob_store", "check_blobs", "keep_blobs", "log_blobs", "referenced"]

MENTION: Final = b'"kind":"Blob"'  # how a blob reference starts in a canonical record


def blob_store(log: str | os.PathLike[str], blobs: Any = None, fsync: bool = True) -> BlobStore:
    """The store of a log's blobs: ``blobs`` (a ``BlobStore``, or a folder), or the folder
    beside the log, ``<log>.blobs`` (``fsync``: each blob flushed to disk before the record
    referring to it, as the log's durability asks)."""
    if blobs is None:
        return FileBlobStore(f"{os.fspath(log)}.blobs", fsync=fsync)
    if isinstance(blobs, str | os.PathLike):
        return FileBlobStore(blobs, fsync=fsync)
    if not isinstance(blobs, BlobStore):
        raise InvalidType(f"blobs= takes a BlobStore or a folder, not {type(blobs).__name__}")
    return blobs


def log_blobs(log: str | os.PathLike[str]) -> BlobStore | None:
    """The store of the blobs in the folder beside the log (``<log>.blobs``), when there
    is one: what the parts of its runs, read back, read their bytes from."""
    folder = f"{os.fspath(log)}.blobs"
    return FileBlobStore(folder) if os.path.isdir(folder) else None


def referenced(data: bytes, path: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, reference)`` for each blob reference in the log ``data`` (read from
    ``path``), in order; ``AuditLogTampered`` at a line mentioning a blob that is no
    record."""
    if MENTION not in data:
        return
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if MENTION in raw:
            for ref in blob_references(parse_line(raw, path, number)):
                yield number, ref


def keep_blobs(event: Any, payload: dict[str, Any], store: BlobStore) -> None:
    """Put into ``store`` the bytes of each blob ``payload`` refers to that it lacks, from
    the blobs ``event`` holds (or can read): before the record is written, so that a
    crash never leaves a record referring to bytes that are not there."""
    wanted = {ref.get("sha256") for ref in blob_references(payload)}
    for blob in blobs_in(event):
        if blob.sha256 in wanted:
            wanted.discard(blob.sha256)
            if not store.has(blob):
                store_blob(store, blob)
    for sha in wanted:  # referred to, and nowhere in the run: the record is not written
        raise BlobNotFound(str(sha), "the record refers to it and the run holds no such blob")


def check_blobs(path: str | os.PathLike[str], store: BlobStore, data: bytes | None = None) -> int:
    """``AuditLogTampered`` naming the line and the hash of the first blob a record refers
    to that ``store`` lacks, or whose bytes do not hash to it; else how many there are
    (``data``: the log's bytes, when the caller has read them)."""
    if data is None:
        data = read_bytes(path)
    checked: set[str] = set()
    for number, ref in referenced(data, path):
        where = f"{path}: line {number}"
        try:
            blob = Blob(
                sha256=ref.get("sha256", ""),
                media_type=ref.get("media_type", ""),
                size=ref.get("size", -1),
            )
        except ContentError as exc:
            raise AuditLogTampered(
                f"{where}: a malformed blob reference: {exc}", line=number
            ) from None
        if blob.sha256 in checked:
            continue
        try:
            store.get(blob)
        except BlobNotFound:
            raise AuditLogTampered(
                f"{where}: blob sha256:{blob.sha256} is missing from {_shown(store)}",
                line=number,
            ) from None
        except BlobCorrupted:
            raise AuditLogTampered(
                f"{where}: blob sha256:{blob.sha256} was altered (its bytes do not hash to it)",
                line=number,
            ) from None
        checked.add(blob.sha256)
    return len(checked)


def _shown(store: BlobStore) -> str:
    path = getattr(store, "path", None)
    return str(path) if isinstance(path, Path) else type(store).__name__
