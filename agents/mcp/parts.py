"""An MCP tool result's images, audio and embedded binary resources as parts
(docs/design/content.md): their bytes decoded and checked as any part's."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

from agents.errors import ContentError
from agents.records.blobs import DEFAULT_LIMITS
from agents.records.content import PART_KINDS, DocumentPart, FilePart
from agents.records.redaction import shown_url

__all__ = ["parts_of"]


def parts_of(blocks: Sequence[Any], text_of: Callable[[Sequence[Any]], str]) -> list[Any] | None:
    """Content blocks as text and parts, when one is an image, audio or an embedded binary
    resource (else ``None``; ``text_of`` writes any other block as text). ``ContentError``
    for bad base64, or bytes that belie their media type."""
    kinds = {getattr(block, "type", "") for block in blocks}
    binary = any(
        getattr(block, "type", "") == "resource" and hasattr(block.resource, "blob")
        for block in blocks
    )
    if not (kinds & {"image", "audio"} or binary):
        return None
    found: list[Any] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            found.append(block.text)
        elif kind in ("image", "audio"):
            found.append(_media_part(block.data, block.mime_type, kind))
        elif kind == "resource" and hasattr(block.resource, "blob"):
            resource = block.resource
            media_type = resource.mime_type or "application/octet-stream"
            name = shown_url(str(resource.uri))  # a name: no password, no query (a key?)
            found.append(_media_part(resource.blob, media_type, "resource", name))
        elif kind == "resource":
            found.append(block.resource.text)
        else:
            found.append(text_of([block]))
    return found


def _media_part(data: str, media_type: str, kind: str, name: str | None = None) -> Any:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ContentError(f"an MCP {kind} whose data is not base64") from None
    part: Any = PART_KINDS.get(kind)  # an image, audio; a resource by its media type
    if part is None:
        part = DocumentPart if media_type in DEFAULT_LIMITS.document else FilePart
    return part.from_bytes(raw, media_type, name=name)
