"""What a message holds besides text: images, audio, documents and other files, and the
model's reasoning (docs/design/content.md).

A media part holds a URL or a ``Blob`` — a reference by SHA-256 to bytes kept in a
``BlobStore`` — and never the bytes in its JSON, so a state's JSON, a session row and an
audit record stay small however large the image, and the same bytes are stored once.
A part made from bytes keeps them in memory (``part.data()``) until a store takes them; a
part read from JSON reads them from the store it was read with, when they are needed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final, Protocol, Self, Union, runtime_checkable

import attrs
from pyrsistent.typing import PVector

from agents.errors import BlobCorrupted, BlobNotFound, ContentError
from agents.records.compiled import idempotent, slot_setter
from agents.records.frozen import to_pvector
from agents.records.record import Record
from agents.records.registry import OPTIONAL

__all__ = [
    "DEFAULT_LIMITS",
    "MEDIA_PARTS",
    "PARTS",
    "SHOWN_IMAGES",
    "AudioPart",
    "Blob",
    "BlobStore",
    "Content",
    "ContentLimits",
    "DocumentPart",
    "FilePart",
    "ImagePart",
    "MediaPart",
    "MemoryBlobStore",
    "Part",
    "ReasoningPart",
    "TextPart",
    "bind_blobs",
    "blobs_in",
    "checked_bytes",
    "parse_data_url",
    "parts_of",
    "shown_image",
    "signed_type",
    "text_of",
    "to_content",
]

_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_TOKEN: Final = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE: Final = re.compile(f"{_TOKEN}/{_TOKEN}")
_MAX_URL: Final = 8192  # characters of a URL that is not a data URL


@attrs.frozen(kw_only=True)
class ContentLimits:
    """What content is taken: ``max_blob_bytes`` a blob (20 MB by default), and the media
    types each kind of part takes (a ``FilePart`` takes any). Past them: ``ContentError``."""

    max_blob_bytes: int = 20_000_000
    image: frozenset[str] = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
    audio: frozenset[str] = frozenset(
        {"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/webm", "audio/mp4"}
    )
    document: frozenset[str] = frozenset(
        {
            "application/pdf",
            "text/plain",
            "text/markdown",
            "text/csv",
            "text/html",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        }
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
_SUFFIXES: Final = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".weba": "audio/webm",
    ".m4a": "audio/mp4",
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".html": "text/html",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def _check_media_type(media_type: Any) -> str:
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
        _check_media_type(value)

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
        _check_bytes(data, _check_media_type(media_type))
        blob = cls(sha256=hashlib.sha256(data).hexdigest(), media_type=media_type, size=len(data))
        _set_source(blob, data)
        return blob

    @property
    def held(self) -> bool:
        """Whether the bytes are in memory (made from bytes, or read once)."""
        return isinstance(self._source, bytes)

    def data(self) -> bytes:
        """The bytes: those held, or read from the store the blob was read with.
        ``BlobNotFound`` (naming the hash) when there are none here."""
        source = self._source
        if isinstance(source, bytes):
            return source
        if source is None:
            raise BlobNotFound(self.sha256, "read the state with blobs=<its BlobStore>")
        data: bytes = source.get(self)
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


def checked_bytes(blob: Blob, data: bytes) -> bytes:
    """``data`` when it is ``blob``'s bytes; ``BlobCorrupted`` naming the hash otherwise."""
    if len(data) != blob.size or hashlib.sha256(data).hexdigest() != blob.sha256:
        raise BlobCorrupted(blob.sha256, "its bytes do not match the hash")
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
        if blob.sha256 not in self._bytes:
            self._bytes[blob.sha256] = blob.data()

    def get(self, blob: Blob) -> bytes:
        """The bytes of ``blob``."""
        data = self._bytes.get(blob.sha256)
        if data is None:
            raise BlobNotFound(blob.sha256, "not in this store")
        return checked_bytes(blob, data)

    def has(self, blob: Blob) -> bool:
        """Whether the bytes of ``blob`` are here."""
        return blob.sha256 in self._bytes

    def __len__(self) -> int:
        return len(self._bytes)


# -- parts ------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class TextPart(Record):
    """Text, beside other parts of a message."""

    text: str


@attrs.frozen(kw_only=True)
class ReasoningPart(Record):
    """The model's reasoning, as the provider gave it: ``text`` (its thinking, or a
    summary), ``signature`` (what some providers need sent back unchanged) and
    ``redacted`` (the opaque data of thinking the provider withheld)."""

    text: str = ""
    signature: str | None = attrs.field(default=None, metadata={OPTIONAL: True})
    redacted: str | None = attrs.field(default=None, metadata={OPTIONAL: True})


def _check_source(part: MediaPart) -> None:
    if (part.url is None) == (part.blob is None):
        raise ContentError(f"a {type(part).__name__} holds a url or a blob, one of the two")
    if part.blob is not None and part.blob.media_type != part.media_type:
        raise ContentError(
            f"a {type(part).__name__} of {part.media_type} with a blob of {part.blob.media_type}"
        )
    if part.url is not None:
        _check_url(part.url)


def _check_url(url: Any) -> None:
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ContentError(f"a part's url is http(s) (data URLs become blobs): {url!r:.80}")
    if len(url) > _MAX_URL or any(ord(c) <= 32 or ord(c) == 127 for c in url):
        raise ContentError(f"a malformed url (spaces, control characters or too long): {url!r:.80}")


@attrs.frozen(kw_only=True)
class MediaPart(Record):
    """Media by ``url`` or by ``blob`` (one of the two), of ``media_type``; ``name`` the
    file's name, where it has one. Made by ``from_bytes``, ``from_path`` or
    ``from_url``."""

    kind: ClassVar[str] = "file"  # which ContentLimits field says what it takes
    media_type: str
    url: str | None = attrs.field(default=None, metadata={OPTIONAL: True})
    blob: Blob | None = attrs.field(default=None, metadata={OPTIONAL: True})
    name: str | None = attrs.field(default=None, metadata={OPTIONAL: True})

    def __attrs_post_init__(self) -> None:  # what any limits require (read JSON included)
        _check_media_type(self.media_type)
        top = {"image": "image/", "audio": "audio/"}.get(self.kind)
        if top is not None and not self.media_type.startswith(top):
            raise ContentError(f"{type(self).__name__} of {self.media_type}")
        _check_source(self)

    @classmethod
    def _check_kind(cls, media_type: str, limits: ContentLimits) -> None:
        allowed = getattr(limits, cls.kind, None)
        if allowed is not None and media_type not in allowed:
            raise ContentError(
                f"{cls.__name__} takes {', '.join(sorted(allowed))}, not {media_type}"
            )

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        media_type: str,
        *,
        name: str | None = None,
        limits: ContentLimits = DEFAULT_LIMITS,
    ) -> Self:
        """A part of ``data`` (held as a ``Blob`` until a store takes the bytes)."""
        cls._check_kind(_check_media_type(media_type), limits)
        return cls(media_type=media_type, blob=Blob.of(data, media_type, limits), name=name)

    @classmethod
    def from_path(
        cls,
        path: str | Path,
        media_type: str | None = None,
        *,
        limits: ContentLimits = DEFAULT_LIMITS,
    ) -> Self:
        """A part of the file at ``path`` (its media type from its suffix unless given),
        read once, here: the one record constructor that reads a file."""
        file = Path(path)
        try:
            status = file.stat()
            if not stat.S_ISREG(status.st_mode):
                raise ContentError(f"{file}: not a regular file")
            if status.st_size > limits.max_blob_bytes:
                raise ContentError(
                    f"{file}: {status.st_size:,} bytes, past the limit of "
                    f"{limits.max_blob_bytes:,} (ContentLimits.max_blob_bytes)"
                )
            data = file.read_bytes()
        except OSError as exc:
            raise ContentError(f"{file}: {exc.strerror or exc}") from None
        found = media_type or _SUFFIXES.get(file.suffix.lower())
        if found is None:
            raise ContentError(f"{file}: no known media type for {file.suffix!r}: pass one")
        return cls.from_bytes(data, found, name=file.name, limits=limits)

    @classmethod
    def from_url(
        cls,
        url: str,
        media_type: str | None = None,
        *,
        limits: ContentLimits = DEFAULT_LIMITS,
    ) -> Self:
        """A part of an http(s) URL (its media type from the path's suffix unless given),
        or of a ``data:`` URL's bytes (held as a ``Blob``)."""
        if isinstance(url, str) and url[:5].lower() == "data:":
            declared, data = parse_data_url(url)
            if media_type is not None and media_type != declared:
                raise ContentError(f"a data URL of {declared}, where {media_type} was asked")
            return cls.from_bytes(data, declared, limits=limits)
        _check_url(url)
        path = url.split("?", 1)[0].split("#", 1)[0]
        found = media_type or _SUFFIXES.get(path[path.rfind(".") :].lower() if "." in path else "")
        if found is None:
            raise ContentError(f"no known media type for the url {url!r:.80}: pass one")
        cls._check_kind(_check_media_type(found), limits)
        return cls(media_type=found, url=url)

    def data(self) -> bytes:
        """The bytes (``Blob.data``); a URL part's are not fetched here."""
        if self.blob is None:
            raise ContentError(f"a part by url has no bytes here: {self.url!r:.80}")
        return self.blob.data()


@attrs.frozen(kw_only=True)
class ImagePart(MediaPart):
    """An image (PNG, JPEG, GIF or WebP by default: ``ContentLimits.image``)."""

    kind: ClassVar[str] = "image"


@attrs.frozen(kw_only=True)
class AudioPart(MediaPart):
    """Audio (WAV, MP3, Ogg, FLAC, WebM or MP4 by default: ``ContentLimits.audio``)."""

    kind: ClassVar[str] = "audio"


@attrs.frozen(kw_only=True)
class DocumentPart(MediaPart):
    """A document: PDF, text, Markdown, CSV, HTML or DOCX by default
    (``ContentLimits.document``)."""

    kind: ClassVar[str] = "document"


@attrs.frozen(kw_only=True)
class FilePart(MediaPart):
    """A file of any other media type."""

    kind: ClassVar[str] = "file"


MEDIA_PARTS: Final = (ImagePart, AudioPart, DocumentPart, FilePart)

Part = Union[TextPart, ImagePart, AudioPart, DocumentPart, FilePart, ReasoningPart]  # noqa: UP007
"""A part of a message."""
Content = Union[str, PVector[Part]]  # noqa: UP007
"""What a message holds: its text, or its parts in order."""
_PVECTOR: Final = type(to_pvector([None]))
PARTS: Final = (TextPart, ImagePart, AudioPart, DocumentPart, FilePart, ReasoningPart)


def parse_data_url(url: str) -> tuple[str, bytes]:
    """The media type and bytes of a ``data:<type>;base64,<data>`` URL."""
    head, comma, payload = url[5:].partition(",")
    params = head.split(";")
    if not comma or params[-1].lower() != "base64":
        raise ContentError("a malformed data URL: expected data:<media type>;base64,<data>")
    media_type = _check_media_type(params[0].lower())
    try:
        return media_type, base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ContentError("a malformed data URL: its data is not base64") from None


def to_content(value: Any) -> Any:
    """A message's content from text, a part, or a list of text and parts: text stays
    text, a list of one text is that text, and any other list a ``PVector`` of parts.
    Anything else is left as it is, for the codec to refuse where it is written."""
    if type(value) is str or type(value) is _PVECTOR:
        return value
    if isinstance(value, PARTS):
        value = (value,)
    elif not isinstance(value, list | tuple):
        return value
    if not all(isinstance(item, (str, *PARTS)) for item in value):
        return value
    parts = [  # an empty text is no part
        TextPart(text=item) if isinstance(item, str) else item
        for item in value
        if not (item == "" or (type(item) is TextPart and not item.text))
    ]
    if not parts:
        return ""
    if len(parts) == 1 and type(parts[0]) is TextPart:
        return parts[0].text
    return to_pvector(parts)


idempotent(to_content)  # what the decoders give it, it gives back


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


def parts_of(content: Any) -> tuple[Part, ...]:
    """The parts of a message's content (text as one ``TextPart``; none for no text)."""
    if type(content) is str:
        return (TextPart(text=content),) if content else ()
    return tuple(content)


def text_of(content: Any) -> str:
    """A message's text: the text itself, or its text parts joined by newlines."""
    if type(content) is str:
        return content
    return "\n".join(part.text for part in content if type(part) is TextPart)


def bind_blobs(value: Any, store: BlobStore) -> None:
    """Let every blob inside ``value`` (a record, at any depth) that holds no bytes read
    them from ``store`` (a state read with ``blobs=``)."""
    for blob in blobs_in(value):
        blob.bound(store)


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
