"""What a message holds besides text: images, audio, documents and other files, and the
model's reasoning (docs/design/content.md).

A media part holds a URL or a ``Blob`` (``agents.records.blobs``): a reference by SHA-256
to bytes kept in a ``BlobStore``, never the bytes in its JSON, so a state's JSON, a session
row and an audit record stay small however large the image, and the same bytes are stored
once. A part made from bytes keeps them in memory (``part.data()``) until a store takes
them; a part read from JSON reads them from the store it was read with, when needed.
"""

from __future__ import annotations

import base64
import binascii
import stat
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self, Union

import attrs
from pyrsistent.typing import PVector

from agents.errors import ContentError, InvalidType
from agents.records.arguments import path as checked_path
from agents.records.blobs import DEFAULT_LIMITS, Blob, ContentLimits, check_media_type
from agents.records.compiled import replace_fields
from agents.records.frozen import to_pvector
from agents.records.record import Record
from agents.records.redaction import scrub
from agents.records.registry import OPTIONAL, idempotent

__all__ = [
    "MEDIA_PARTS",
    "PARTS",
    "PART_KINDS",
    "AudioPart",
    "Content",
    "DocumentPart",
    "FilePart",
    "HasContent",
    "ImagePart",
    "MediaPart",
    "Part",
    "ReasoningPart",
    "TextPart",
    "checked_content",
    "parse_data_url",
    "part_of",
    "parts_of",
    "text_of",
    "to_content",
]

_MAX_URL: Final = 8192  # characters of a URL that is not a data URL


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


# -- parts ------------------------------------------------------------------------------------


def _text(part: Any, field: Any, value: Any) -> None:
    """A part's text field holds text (``None`` too, where it is optional): else the part
    would be kept, and run, in a state no store, log or ``to_json`` could write."""
    if not isinstance(value, str) and (value is not None or field.default is not None):
        raise InvalidType(f"{type(part).__name__}.{field.name} is text, not {type(value).__name__}")


@attrs.frozen  # TextPart("...") as well as TextPart(text="...")
class TextPart(Record):
    """Text, beside other parts of a message."""

    text: str = attrs.field(validator=_text)


@attrs.frozen  # ReasoningPart(text, signature, redacted), by position or by name
class ReasoningPart(Record):
    """The model's reasoning, as the provider gave it: ``text`` (its thinking, or a
    summary), ``signature`` (what some providers need sent back unchanged) and
    ``redacted`` (the opaque data of thinking the provider withheld)."""

    text: str = attrs.field(default="", validator=_text)
    signature: str | None = attrs.field(default=None, validator=_text, metadata={OPTIONAL: True})
    redacted: str | None = attrs.field(default=None, validator=_text, metadata={OPTIONAL: True})


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
    if not isinstance(url, str) or not url[:8].lower().startswith(("https://", "http://")):
        said = _shown(url) if isinstance(url, str) else repr(url)
        raise ContentError(f"a part's url is http(s) (data URLs become blobs): {said:.80}")
    if len(url) > _MAX_URL or any(ord(c) <= 32 or ord(c) == 127 for c in url):
        said = _shown(url)
        raise ContentError(f"a malformed url (spaces, control characters or too long): {said:.80}")
    try:
        password = urllib.parse.urlsplit(url).password
    except ValueError:  # a port that is no number, a bracket unclosed...
        raise ContentError(f"a malformed url: {_shown(url):.80}") from None
    if password is not None:  # it would be in every state, log and session that holds it
        raise ContentError(
            f"a part's url holds a password ({_shown(url):.80}): give the bytes instead"
        )


def _shown(url: str) -> str:
    """``url`` as an error may say it: quoted, a password in it (``user:secret@``, or a
    ``token=`` in its query) redacted."""
    return repr(scrub(url))


def _shown_or_none(url: str | None) -> str:
    return "None" if url is None else _shown(url)


@attrs.frozen(kw_only=True)
class MediaPart(Record):
    """Media by ``url`` or by ``blob`` (one of the two), of ``media_type``; ``name`` the
    file's name, where it has one. Made by ``from_bytes``, ``from_path`` or
    ``from_url``."""

    kind: ClassVar[str] = "file"  # which ContentLimits field says what it takes
    media_type: str
    # (shown as errors show it: a signed URL's signature redacted; the part keeps it whole)
    url: str | None = attrs.field(default=None, repr=_shown_or_none, metadata={OPTIONAL: True})
    blob: Blob | None = attrs.field(default=None, metadata={OPTIONAL: True})
    name: str | None = attrs.field(default=None, validator=_text, metadata={OPTIONAL: True})

    def __attrs_post_init__(self) -> None:  # what any limits require (read JSON included)
        check_media_type(self.media_type)
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
        cls._check_kind(check_media_type(media_type), limits)
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
        file = Path(checked_path(path, f"{cls.__name__}.from_path: path"))
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
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            raise ContentError(f"{file}: {getattr(exc, 'strerror', None) or exc}") from None
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
            raise ContentError(f"no known media type for the url {_shown(url):.80}: pass one")
        cls._check_kind(check_media_type(found), limits)
        return cls(media_type=found, url=url)

    def data(self) -> bytes:
        """The bytes (``Blob.data``); a URL part's are not fetched here."""
        if self.blob is None:
            raise ContentError(f"a part by url has no bytes here: {_shown(self.url or ''):.80}")
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
PART_KINDS: Final = {part.kind: part for part in MEDIA_PARTS}
"""The media part classes by their kind's name: ``image``, ``audio``, ``document``, ``file``."""


def part_of(fields: Any, folder: Path | None = None) -> MediaPart:
    """A media part from the fields a request or a file gives it: ``type`` (``image``,
    ``audio``, ``document`` or ``file``), ``url`` (http(s), or a ``data:`` URL holding the
    bytes) and ``media_type`` where the URL does not say it. With ``folder``, ``path`` may
    name a file in that folder or below it instead; one leading out (``..``, an absolute
    path, a link elsewhere) is refused, so that a file from elsewhere cannot send the model
    a file of this machine. ``ContentError`` saying what is wrong."""
    named = fields.get("type") if isinstance(fields, dict) else None
    kind = PART_KINDS.get(named) if isinstance(named, str) else None
    if kind is None:
        raise ContentError(f"text, or a part of type {', '.join(PART_KINDS)}")
    sources = ("path", "url") if folder is not None else ("url",)
    given = [key for key in sources if key in fields]
    media_type = fields.get("media_type")
    if (
        set(fields) - {"type", "media_type", *sources}
        or len(given) != 1
        or not isinstance(fields[given[0]], str)
        or not isinstance(media_type, str | None)
    ):
        said = "a path or a url" if folder is not None else "url"
        raise ContentError(f"a part is its type, {said} and a media_type (text)")
    if folder is None or given[0] == "url":
        return kind.from_url(fields["url"], media_type)
    try:
        home = folder.resolve()
        path = (home / fields["path"]).resolve()
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ContentError(f"{fields['path']!r:.80}: {exc}") from None
    if not path.is_relative_to(home):
        raise ContentError(f"{fields['path']}: not in the folder of the file naming it ({home})")
    return kind.from_path(path, media_type)


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
    media_type = check_media_type(params[0].lower())
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


def checked_content(value: Any) -> Content:
    """``to_content``, refusing with ``InvalidType`` what is not text, a part or a list of
    them: what the constructors users call (``Message.user`` and the rest) are given is
    checked there; a record made field by field is checked where it is written."""
    if type(value) is _PVECTOR:  # as a list: its text made parts
        value = list(value)
    content = to_content(value)
    if type(content) is str or type(content) is _PVECTOR:
        return content
    said = type(value).__name__
    if isinstance(value, list | tuple):
        wrong = next(item for item in value if not isinstance(item, (str, *PARTS)))
        said = f"a list holding {type(wrong).__name__}"
    raise InvalidType(f"content is text, a part or a list of them, not {said}")


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


class HasContent:
    """What a record whose ``content`` is text or parts offers (a message, an answer)."""

    __slots__ = ()
    if TYPE_CHECKING:
        content: Content

    @property
    def parts(self) -> tuple[Part, ...]:
        """The parts in order (text as one ``TextPart``)."""
        return parts_of(self.content)

    @property
    def text(self) -> str:
        """The text (text parts joined by newlines; reasoning left out)."""
        return text_of(self.content)

    def with_content(self, content: str | Iterable[str | Part]) -> Self:
        """A copy with other content (``InvalidType`` for what is no content)."""
        content = checked_content(content)
        return self if content == self.content else replace_fields(self, content=content)
