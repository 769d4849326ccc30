"""Blobs in a session store's own table (docs/design/content.md): a save writes the bytes
of the parts its rows refer to in the same transaction, and ``store.blobs`` is the store
as a ``BlobStore``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from agents.errors import BlobCorrupted, BlobNotFound
from agents.persistence.plans import Many, Plan, Query, T
from agents.records.blobs import (
    DEFAULT_LIMITS,
    Blob,
    ContentLimits,
    a_blob,
    blob_references,
    blobs_in,
    checked_bytes,
)
from agents.records.codec import loads

__all__ = ["BLOBS_TABLE", "MENTION", "SQLBlobStore", "with_blobs"]

BLOBS_TABLE: Final = """
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL, size INTEGER NOT NULL,
    data BYTEA NOT NULL
)"""
MENTION: Final = '"kind":"Blob"'  # how a blob reference starts in a row's JSON
_INSERT: Final = "INSERT INTO blobs VALUES (?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING"


def with_blobs(plan: Plan[T], state: Any, own: Any = None) -> Plan[T]:
    """``plan`` (a write of ``state``), then the bytes of each blob its rows refer to,
    from the blobs ``state`` holds or can read, in the same transaction: no row refers to
    bytes the store does not have, and a blob with no bytes here (``BlobNotFound``) fails
    the write before it commits. A blob read from ``own`` (the store's ``blobs``, which the
    write's transaction holds) is in the table already: it is not read again."""
    mentioned: set[str] = set()
    result: Any = None
    while True:
        try:
            statement = plan.send(result)
        except StopIteration as stop:
            returned: T = stop.value
            break
        rows = statement.rows if isinstance(statement, Many) else [statement.parameters]
        for row in rows:
            for value in row:
                if type(value) is str and MENTION in value:
                    refs = blob_references(loads(value))
                    mentioned.update(r["sha256"] for r in refs if isinstance(r.get("sha256"), str))
        result = yield statement
    if mentioned:
        found = {blob.sha256: blob for blob in blobs_in(state) if blob.sha256 in mentioned}
        for sha in sorted(mentioned):
            blob = found.get(sha)
            if blob is None:
                raise BlobNotFound(sha, "the state refers to it and holds no such blob")
            if own is None or not blob.reads_from(own):
                yield Query(_INSERT, (sha, blob.media_type, blob.size, blob.data()))
    return returned


class SQLBlobStore:
    """A session store's ``blobs`` table as a ``BlobStore`` (``store.blobs``)."""

    def __init__(
        self,
        written: Callable[[Plan[Any]], Any],
        read: Callable[[Plan[Any]], Any],
        limits: ContentLimits = DEFAULT_LIMITS,
    ) -> None:
        self._written, self._read, self._limits = written, read, limits

    def put(self, data: bytes, media_type: str) -> Blob:
        """Store ``data`` (once, in one transaction) and give its blob."""
        blob = Blob.of(data, media_type, self._limits)
        self._written(_put(blob))
        return blob

    def get(self, blob: Blob) -> bytes:
        """The bytes of ``blob``: ``BlobNotFound``, or ``BlobCorrupted`` when the stored
        bytes do not hash to it."""
        row = self._read(_get(a_blob(blob, self).sha256))
        if row is None:
            raise BlobNotFound(blob.sha256, "not in this session store")
        data = row[0]
        if not isinstance(data, bytes | bytearray | memoryview):
            raise BlobCorrupted(blob.sha256, f"a {type(data).__name__} where bytes belong")
        return checked_bytes(blob, bytes(data))

    def has(self, blob: Blob) -> bool:
        """Whether the bytes of ``blob`` are here."""
        return self._read(_has(a_blob(blob, self).sha256)) is not None


def _put(blob: Blob) -> Plan[None]:
    yield Query(_INSERT, (blob.sha256, blob.media_type, blob.size, blob.data()))


def _get(sha256: str) -> Plan[Any]:
    row = yield Query("SELECT data FROM blobs WHERE sha256 = ?", (sha256,), fetch="one")
    return row


def _has(sha256: str) -> Plan[Any]:
    row = yield Query("SELECT 1 FROM blobs WHERE sha256 = ?", (sha256,), fetch="one")
    return row
