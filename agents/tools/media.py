"""What a tool gives back as content rather than data: bytes, parts, or a list of text and
parts (docs/design/content.md)."""

from __future__ import annotations

from typing import Any

from agents.errors import ContentError
from agents.records.blobs import DEFAULT_LIMITS, ContentLimits, signed_type
from agents.records.content import (
    AudioPart,
    DocumentPart,
    FilePart,
    ImagePart,
    MediaPart,
    to_content,
)

__all__ = ["is_media", "media_content"]


def is_media(value: Any) -> bool:
    """Whether a tool's value is content rather than data: bytes, a media part, or a list
    holding one."""
    if isinstance(value, bytes | bytearray | MediaPart):
        return True
    return isinstance(value, list | tuple) and any(
        isinstance(item, bytes | bytearray | MediaPart) for item in value
    )


def media_content(value: Any, limits: ContentLimits = DEFAULT_LIMITS) -> Any:
    """A tool's value as a message's content: text and parts as they are, bytes as the
    part their signature says (an image, audio, a PDF; any other bytes a ``FilePart``)."""
    items = value if isinstance(value, list | tuple) else [value]
    parts = [_sniffed(bytes(i), limits) if isinstance(i, bytes | bytearray) else i for i in items]
    content = to_content(parts)
    if content is parts:  # left as it was: not all text and parts
        raise ContentError("a tool gives back text, parts or bytes")
    return content


def _sniffed(data: bytes, limits: ContentLimits) -> MediaPart:
    """Bytes as the part their signature says (else a ``FilePart`` of octet-stream)."""
    media_type = signed_type(data)
    if media_type is None:
        return FilePart.from_bytes(data, "application/octet-stream", limits=limits)
    top = media_type.split("/", 1)[0]
    part: type[MediaPart] = {"image": ImagePart, "audio": AudioPart}.get(top, FilePart)
    if media_type in DEFAULT_LIMITS.document:
        part = DocumentPart
    return part.from_bytes(data, media_type, limits=limits)
