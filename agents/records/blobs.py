"""Bytes by reference (docs/design/content.md): ``Blob`` — the SHA-256 of bytes, their
media type and size — the ``BlobStore`` protocol and ``MemoryBlobStore``, the limits on
what is taken (``ContentLimits``), the media types' signatures, and the walks over records
that find their blobs."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import attrs

from agents.errors import BlobCorrupted, BlobNotFound, ContentError, InvalidType
from agents.records.arguments import names
from agents.records.compiled import slot_setter
from agents.records.record import Record

T = TypeVar("T")

__all__ = [
    "DEFAULT_LIMITS",
    "SHOWN_IMAGES",
    "Blob",
    "BlobStore",
    "ContentLimits",
    "MemoryBlobStore",
    "a_blob",
    "bind_blobs",
    "blob_references",
    "blobs_in",
    "check_media_type",
    "checked_bytes",
    "keep_in",
    "shown_image",
    "signed_type",
    "store_blob",
]

_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_TOKEN: Final = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE: Final = re.compile(f"{_TOKEN}/{_TOKEN}")


def _size(_: Any, field: Any, value: Any) -> None:
    if type(value) is not int or value < 1:
        raise InvalidType(f"ContentLimits: {field.name} is an int of at least 1, not {value!r:.40}")


def _types(value: Any) -> frozenset[str]:
    """A kind's media types as a set (a lone text refused: its letters would be the
    types)."""
    return frozenset(names(value, "ContentLimits: a kind's media types"))


@attrs.frozen(kw_only=True)
class ContentLimits:
    """What content is taken: ``max_blob_bytes`` a blob (20 MB by default), and the media
    types each kind of part takes (a ``FilePart`` takes any). Past them: ``ContentError``."""

    max_blob_bytes: int = attrs.field(default=20_000_000, validator=_size)
    image: frozenset[str] = attrs.field(
        default=frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"}),
        converter=_types,
    )
    audio: frozenset[str] = attrs.field(
        default=frozenset(
            {"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/webm", "audio/mp4"}
        ),
        converter=_types,
    )
    document: frozenset[str] = attrs.field(
        default=frozenset(
            {
                "application/pdf",
                "text/plain",
                "text/markdown",
                "text/csv",
                "text/html",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            }
        ),
        converter=_types,
    )


DEFAULT_LIMITS: Final = ContentLimits()

# The first bytes of each media type that has a signature: bytes said to be of such a
# type must start so (a lying media type is a ContentError, not a provider's 400 later).
_SIGNATURES: Final[dict[str, tuple[bytes, ...]]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "application/pdf": (b"%PDF-",),
    "audio/mpeg": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"),
    "audio/ogg": (b"OggS",),
    "audio/flac": (b"fLaC",),
    "audio/webm": (b"\x1a\x45\xdf\xa3",),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (b"PK\x03\x04",),
}
_RIFF: Final = {"image/webp": b"WEBP", "audio/wav": b"WAVE"}  # RIFF....<form>


def check_media_type(media_type: Any) -> str:
    if not isinstance(media_type, str) or not _MEDIA_TYPE.fullmatch(media_type):
        shown = repr(media_type)[:80] if isinstance(media_type, str) else type(media_type).__name__
        raise ContentError(f"not a media type (type/subtype, lower case): {shown}")
    return media_type


def _check_bytes(data: bytes, media_type: str) -> None:
    """``ContentError`` when ``data`` cannot be of ``media_type``: it lacks the type's
    signature, or text that is not UTF-8."""
    signatures = _SIGNATURES.get(media_type)
    if signatures is not None and not data.startswith(signatures):
        raise ContentError(f"the bytes are not {media_type} (they lack its signature)")
    form = _RIFF.get(media_type)
    if form is not None and not (data[:4] == b"RIFF" and data[8:12] == form):
        raise ContentError(f"the bytes are not {media_type} (they lack its signature)")
    if media_type.startswith("text/"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContentError(f"{media_type} that is not UTF-8 (byte {exc.start})") from None


@attrs.frozen(kw_only=True)
class Blob(Record):
    """Bytes by reference: their SHA-256 (hex), media type and size. A blob made from
    bytes (``Blob.of``) keeps them in memory; one read from JSON with a store reads them
    from it (``data()``); either way they are checked against the hash."""

    sha256: str = attrs.field()
    media_type: str = attrs.field()
    size: int = attrs.field()
    # Where the bytes are: themselves, a BlobStore, or None (not part of the value).
    _source: Any = attrs.field(default=None, init=False, eq=False, repr=False)

    @sha256.validator
    def _check_sha256(self, _: Any, value: Any) -> None:
        if not isinstance(value, str) or not _SHA256.fullmatch(value):
            raise ContentError(f"a blob's sha256 is 64 lower-case hex digits, not {value!r:.80}")

    @media_type.validator
    def _check_type(self, _: Any, value: Any) -> None:
        check_media_type(value)

    @size.validator
    def _check_size(self, _: Any, value: Any) -> None:
        if type(value) is not int or value < 0:
            raise ContentError(f"a blob's size is a whole number of bytes, not {value!r:.80}")

    @classmethod
    def of(cls, data: bytes, media_type: str, limits: ContentLimits = DEFAULT_LIMITS) -> Blob:
        """The blob of ``data`` (kept in memory until a store takes it)."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ContentError(f"blob data is bytes, not {type(data).__name__}")
        data = bytes(data)
        if len(data) > limits.max_blob_bytes:
            raise ContentError(
                f"a blob of {len(data):,} bytes is past the limit of "
                f"{limits.max_blob_bytes:,} (ContentLimits.max_blob_bytes)"
            )
        _check_bytes(data, check_media_type(media_type))
        blob = cls(sha256=hashlib.sha256(data).hexdigest(), media_type=media_type, size=len(data))
        _set_source(blob, data)
        return blob

    @property
    def held(self) -> bool:
        """Whether the bytes are in memory (made from bytes, or read once)."""
        return isinstance(self._source, bytes)

    def data(self) -> bytes:
        """The bytes: those held, or read from the store the blob was read with.
        ``BlobNotFound`` (naming the hash) when there are none here; ``ContentError`` when
        the bytes read are not of the media type the reference says (a lying reference:
        their hash does not say what they are)."""
        source = self._source
        if isinstance(source, bytes):
            return source
        if source is None:
            raise BlobNotFound(self.sha256, "read the state with blobs=<its BlobStore>")
        data: bytes = source.get(self)
        try:
            _check_bytes(data, self.media_type)
        except ContentError as exc:
            raise ContentError(f"blob sha256:{self.sha256}: {exc}") from None
        return data

    def reads_from(self, store: Any) -> bool:
        """Whether the bytes are read from ``store`` (the blob was read from it)."""
        return self._source is store

    def bound(self, store: BlobStore) -> Blob:
        """This blob, reading its bytes from ``store`` when they are not held (the blobs
        of a state read with ``blobs=``)."""
        if self._source is None:
            _set_source(self, store)
        return self


_set_source: Final = slot_setter(Blob, "_source")


def a_blob(value: Any, store: Any) -> Blob:
    """``value``, a ``Blob`` asked of a blob store; ``InvalidType`` naming the store's class
    for anything else (a hash given as text, say)."""
    if not isinstance(value, Blob):
        raise InvalidType(f"{type(store).__name__} is asked for a Blob, not {type(value).__name__}")
    return value


def checked_bytes(blob: Blob, data: bytes) -> bytes:
    """``data`` when it is ``blob``'s bytes; ``BlobCorrupted`` naming the hash otherwise."""
    if hashlib.sha256(data).hexdigest() != blob.sha256:
        raise BlobCorrupted(blob.sha256, "its bytes do not match the hash")
    if len(data) != blob.size:
        raise BlobCorrupted(
            blob.sha256,
            f"the reference says {blob.size:,} bytes; those with its hash are {len(data):,}",
        )
    return data


@runtime_checkable
class BlobStore(Protocol):
    """Bytes kept by their SHA-256, each once: ``put`` stores bytes (atomically) and gives
    their ``Blob``, ``get`` gives a blob's bytes (``BlobNotFound``, ``BlobCorrupted``),
    ``has`` says whether they are there."""

    def put(self, data: bytes, media_type: str) -> Blob: ...

    def get(self, blob: Blob) -> bytes: ...

    def has(self, blob: Blob) -> bool: ...


class MemoryBlobStore:
    """A ``BlobStore`` in memory (tests, short-lived runs)."""

    def __init__(self, limits: ContentLimits = DEFAULT_LIMITS) -> None:
        self._limits = limits
        self._bytes: dict[str, bytes] = {}

    def put(self, data: bytes, media_type: str) -> Blob:
        """Keep ``data`` (once) and give its blob."""
        blob = Blob.of(data, media_type, self._limits)
        self.put_blob(blob)
        return blob

    def put_blob(self, blob: Blob) -> None:
        """Keep the bytes ``blob`` holds or reads (not hashed again when it holds them)."""
        if a_blob(blob, self).sha256 not in self._bytes:
            self._bytes[blob.sha256] = blob.data()

    def get(self, blob: Blob) -> bytes:
        """The bytes of ``blob``."""
        data = self._bytes.get(a_blob(blob, self).sha256)
        if data is None:
            raise BlobNotFound(blob.sha256, "not in this store")
        return checked_bytes(blob, data)

    def has(self, blob: Blob) -> bool:
        """Whether the bytes of ``blob`` are here."""
        return a_blob(blob, self).sha256 in self._bytes

    def __len__(self) -> int:
        return len(self._bytes)


def signed_type(data: bytes) -> str | None:
    """The media type whose signature ``data`` starts with, if any."""
    for media_type, signatures in _SIGNATURES.items():
        if data.startswith(signatures):
            return media_type
    for media_type, form in _RIFF.items():
        if data[:4] == b"RIFF" and data[8:12] == form:
            return media_type
    return None


# The images a page may show as they are (no SVG: it may carry a script).
SHOWN_IMAGES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def shown_image(value: Any, sha256: str) -> Blob | None:
    """The blob of an image ``value`` holds by that hash (of ``SHOWN_IMAGES``), if any."""
    found = (b for b in blobs_in(value) if b.sha256 == sha256 and b.media_type in SHOWN_IMAGES)
    return next(found, None)


def bind_blobs(value: Any, store: BlobStore) -> None:
    """Let every blob inside ``value`` (a record, at any depth) that holds no bytes read
    them from ``store`` (a state read with ``blobs=``): ``InvalidType`` for what is no
    ``BlobStore``, where it is given rather than when a part's bytes are read."""
    if not isinstance(store, BlobStore):
        raise InvalidType(
            "blobs= takes a BlobStore (FileBlobStore(folder) for a folder), "
            f"not {type(store).__name__}"
        )
    for blob in blobs_in(value):
        blob.bound(store)


def keep_in(value: T, store: BlobStore) -> T:
    """``value`` (a record, at any depth), the bytes of each blob it holds put into
    ``store`` when it lacks them, and each blob without bytes here reading them from it:
    what a record referring to the blobs may be written after, and read back with."""
    for blob in blobs_in(value):
        source = blob._source  # (this module's)
        if source is None:
            _set_source(blob, store)
        elif source is not store and not store.has(blob):
            store_blob(store, blob)
    return value


def store_blob(store: BlobStore, blob: Blob) -> None:
    """Put the bytes ``blob`` holds or reads into ``store`` (by ``put_blob`` where the store
    has it: the hash known, not computed again)."""
    put_blob = getattr(store, "put_blob", None)
    if callable(put_blob):
        put_blob(blob)
    else:
        store.put(blob.data(), blob.media_type)


def blob_references(data: Any) -> Iterator[dict[str, Any]]:
    """The blob references (``{"kind": "Blob", ...}``) inside JSON data (a record as the
    codec writes it), at any depth."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("kind") == "Blob":
                yield item
            else:
                stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def blobs_in(value: Any) -> Iterator[Blob]:
    """Each ``Blob`` object inside ``value`` (a record, at any depth), once."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        kind = type(item)
        if kind is Blob:
            yield item
        elif attrs.has(kind):  # every field: an event's state is not part of its value
            stack.extend(getattr(item, field.name) for field in attrs.fields(kind))
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, Iterable) and not isinstance(item, str | bytes):
            stack.extend(item)
