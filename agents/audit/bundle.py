"""An audit log and its blobs as one file (``agents bundle``), and read back
(docs/design/content.md).

A bundle is a zip holding ``<name>.jsonl`` and ``<name>.jsonl.blobs/<aa>/<sha256>``, its
entries in name order with a fixed time, so the same log and blobs give the same bytes.
A bundle is read where it is, nothing unpacked: its log checked as a bundle's (one log at
its top, only the blobs it refers to), each blob read from it when its bytes are needed,
no more than the blob size limit and than its entry says.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import os
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any, Final

from agents.audit.blobs import blob_store, check_blobs, referenced
from agents.audit.chain import Checked, read_bytes, verify_log
from agents.audit.keys import load_public_key
from agents.errors import (
    AuditLogTampered,
    BlobCorrupted,
    BlobNotFound,
    ContentError,
    ResourceError,
    StateDecodeError,
)
from agents.records.blobs import DEFAULT_LIMITS, Blob, checked_bytes
from agents.shell.files import replacing

__all__ = ["BundleBlobs", "bundled_log", "check_bundle", "write_bundle"]

_EPOCH: Final = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry holds
_BLOB_NAME: Final = re.compile(r"[0-9a-f]{2}/[0-9a-f]{64}")
MAX_LOG_BYTES: Final = 1 << 30  # what a bundle's log may hold uncompressed
# A log inflating to more than this many times its packed size, and past _LOG_FLOOR, is a
# zip bomb (a log packs 3-10x: each line holds two hashes), refused unread.
_LOG_RATIO: Final = 100
_LOG_FLOOR: Final = 64 << 20


def write_bundle(
    log: str | os.PathLike[str], out: str | os.PathLike[str], blobs: Any = None
) -> int:
    """Write ``log`` and every blob it refers to (from ``blobs``, the folder beside it by
    default) into the zip ``out``, replacing it whole or not at all; how many blobs. The
    log is checked as ``verify`` checks it (its end aside: a run may be in progress) and
    each blob too: a line or a blob that is not what it should be is an
    ``AuditLogTampered`` naming it, and nothing is written. In the zip the log's name ends
    in ``.jsonl``, as its readers take it. The zip gets the mode any new file gets under
    the umask."""
    store = blob_store(log, blobs)
    data = read_bytes(log)
    if not data:
        raise StateDecodeError(f"{log}: an empty file, not an audit log", "$")
    verify_log(log, complete=False, public_key=None, progress=None, data=data)
    check_blobs(log, store, data)
    name = Path(log).name
    name = name if name.endswith(".jsonl") else f"{Path(name).stem}.jsonl"
    found = {  # checked above: each a whole reference
        ref["sha256"]: Blob(sha256=ref["sha256"], media_type=ref["media_type"], size=ref["size"])
        for _, ref in referenced(data, log)
    }
    target = Path(out)
    if target.is_dir():
        raise ResourceError(f"cannot write {out}: it is a directory")
    try:
        with replacing(target, fsync=False) as file, zipfile.ZipFile(file, "w") as bundle:
            _add(bundle, name, data, zipfile.ZIP_DEFLATED)
            for sha, blob in sorted(found.items()):
                entry = f"{name}.blobs/{sha[:2]}/{sha}"
                _add(bundle, entry, store.get(blob), zipfile.ZIP_STORED)
    except OSError as exc:
        raise ResourceError(f"cannot write {out}: {exc.strerror or exc}") from None
    return len(found)


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, compression: int) -> None:
    entry = zipfile.ZipInfo(name, date_time=_EPOCH)
    entry.compress_type = compression
    entry.external_attr = 0o644 << 16
    bundle.writestr(entry, data)


def check_bundle(
    path: str | os.PathLike[str],
    *,
    public_key: object = None,
    anchor: object = None,
    progress: Any = None,
) -> tuple[str, Checked]:
    """``AuditLog.check`` of the log inside the bundle at ``path``, its blobs read from
    the bundle: the name errors give the log (``run.zip/run.jsonl``), and what was
    checked. ``StateDecodeError`` for a file that is no bundle, or an entry it should not
    hold: a blob the log does not refer to, or blobs that would unpack to more bytes than
    the bundle holds (a bundle stores them as they are: a zip bomb is refused unread), or
    a log that would unpack to more than 100 times its packed size and 64 MB."""
    key = load_public_key(public_key) if public_key is not None else None
    with _bundle(path) as bundle:
        name, data, _ = _contents(bundle, path, os.path.getsize(path))
        shown = f"{os.fspath(path)}/{name}"
        checked = verify_log(
            shown, complete=True, public_key=key, progress=progress, anchor=anchor, data=data
        )
        blobs = check_blobs(shown, BundleBlobs(path, name, bundle), data)
    return shown, checked._replace(blobs=blobs)


def bundled_log(path: str | os.PathLike[str], data: bytes) -> tuple[str, bytes]:
    """The name and bytes of the audit log inside the bundle ``data`` (the bytes of the
    file at ``path``), checked as ``check_bundle`` checks a bundle, its blobs left in it
    (the runs read from it read them with ``BundleBlobs``)."""
    with _bundle(path, io.BytesIO(data)) as bundle:
        name, log, _ = _contents(bundle, path, len(data))
        return name, log


class BundleBlobs:
    """The blobs inside the bundle at ``path`` (whose log is ``log``), read from it when
    their bytes are needed and checked against their hash: what the runs of a bundle read
    without unpacking it (``bundled_log``) read their parts' bytes from. Nothing is put.
    ``bundle``: the bundle opened, for as long as the caller keeps it open (else each read
    opens it: a state's parts may outlive any open file)."""

    def __init__(
        self, path: str | os.PathLike[str], log: str, bundle: zipfile.ZipFile | None = None
    ) -> None:
        self.path, self._log, self._open = Path(path), log, bundle

    def _name(self, blob: Blob) -> str:
        return f"{self._log}.blobs/{blob.sha256[:2]}/{blob.sha256}"

    def _opened(self) -> Any:
        return _bundle(self.path) if self._open is None else contextlib.nullcontext(self._open)

    def get(self, blob: Blob) -> bytes:
        try:
            with self._opened() as bundle:
                entry = bundle.getinfo(self._name(blob))
                data = _read(bundle, entry, DEFAULT_LIMITS.max_blob_bytes, self.path)
        except KeyError:
            raise BlobNotFound(blob.sha256, f"not in {self.path}") from None
        except StateDecodeError as exc:  # the bundle gone, or its entry unreadable
            raise BlobCorrupted(blob.sha256, exc.reason) from None
        return checked_bytes(blob, data)

    def has(self, blob: Blob) -> bool:
        try:
            with self._opened() as bundle:
                bundle.getinfo(self._name(blob))
        except (KeyError, StateDecodeError):
            return False
        return True

    def put(self, data: bytes, media_type: str) -> Blob:
        raise ContentError(f"{self.path}: a bundle's blobs are read, not written")


def _bundle(path: Any, file: Any = None) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path if file is None else file)
    except (zipfile.BadZipFile, OSError) as exc:
        raise StateDecodeError(f"{path}: not a bundle ({exc})") from None


def _contents(
    bundle: zipfile.ZipFile, path: Any, size: int
) -> tuple[str, bytes, list[zipfile.ZipInfo]]:
    """The bundle's log (its name and bytes) and its blobs' entries, each checked
    (``size``: the bundle's, in bytes)."""
    logs = [entry for entry in bundle.infolist() if "/" not in entry.filename]
    if len(logs) != 1 or not logs[0].filename.endswith(".jsonl"):
        raise StateDecodeError(f"{path}: a bundle holds one audit log (*.jsonl) at its top")
    log = logs[0]
    if log.file_size > max(_LOG_FLOOR, _LOG_RATIO * log.compress_size):
        raise StateDecodeError(
            f"{path}: its log {log.filename!r:.120} would unpack to {log.file_size:,} bytes "
            f"from {log.compress_size:,} (a zip bomb): refused unread"
        )
    data = _read(bundle, log, MAX_LOG_BYTES, path)
    blobs = _blob_entries(bundle, log.filename, _referred(data), path)
    if sum(entry.file_size for entry in blobs) > size:
        raise StateDecodeError(
            f"{path}: its blobs unpack to more bytes than the bundle holds (a bundle "
            "stores them uncompressed, as `agents bundle` writes them)"
        )
    return log.filename, data, blobs


def _referred(data: bytes) -> set[str]:
    """The hashes of the blobs the log's records refer to, up to a line mentioning one that
    is no record (which ``verify`` names, and which stops any reader of the log)."""
    found: set[str] = set()
    with contextlib.suppress(AuditLogTampered):
        for _, ref in referenced(data, ""):
            found.add(str(ref.get("sha256")))
    return found


def _blob_entries(
    bundle: zipfile.ZipFile, log: str, referred: set[str], path: Any
) -> list[zipfile.ZipInfo]:
    """The bundle's blobs (``<log>.blobs/<aa>/<sha256>``); any other entry but the log and
    folders is refused, as is a blob the log does not refer to."""
    blobs = []
    for entry in bundle.infolist():
        name = entry.filename
        if name == log or (name.endswith("/") and entry.file_size == 0):
            continue  # the log, or a folder's entry
        if not (name.startswith(f"{log}.blobs/") and _BLOB_NAME.fullmatch(name[len(log) + 7 :])):
            raise StateDecodeError(f"{path}: an entry a bundle does not hold: {name!r:.120}")
        if name[-64:] not in referred:
            raise StateDecodeError(f"{path}: holds a blob the log does not refer to: {name[-64:]}")
        blobs.append(entry)
    return blobs


def _read(bundle: zipfile.ZipFile, entry: zipfile.ZipInfo, limit: int, path: Any) -> bytes:
    """An entry's bytes, no more than ``limit`` of them (nor than its header says). A
    broken stream is said whatever its packing: zlib and lzma raise errors of their own
    (bzip2 an ``OSError``, a method zip lacks a ``NotImplementedError``)."""
    name = entry.filename
    try:
        with bundle.open(entry) as source:
            data = source.read(limit + 1)
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        RuntimeError,
        zlib.error,
        lzma.LZMAError,
    ) as exc:
        raise StateDecodeError(f"{path}: {name!r:.120} cannot be read ({exc})") from None
    if len(data) > limit:
        raise StateDecodeError(f"{path}: {name!r:.120} is larger than {limit:,} bytes")
    return data
