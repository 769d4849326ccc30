"""The chat-completions wire format: our messages, tool schemas and response formats as
the provider's JSON, and its answers (whole or streamed) back as records. No client here:
``agents.drivers.litellm`` sends what this builds.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from agents.errors import ContentError
from agents.records.blobs import Blob
from agents.records.codec import parse_object
from agents.records.content import AudioPart, ImagePart, MediaPart, ReasoningPart, TextPart
from agents.records.frozen import EMPTY_MAP, deep_thaw
from agents.records.messages import Message, Role, ToolCall

__all__ = [
    "Stream",
    "moved_media",
    "normal_finish_reason",
    "plain_json",
    "provider_fields",
    "raw_json",
    "reasoning_parts",
    "tool_call",
    "wire_content",
    "wire_message",
    "wire_messages",
    "wire_response_format",
    "wire_tool",
]

_FINISH: Final = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "eos": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
    "safety": "content_filter",
    "error": "error",
}


def normal_finish_reason(value: str | None, has_calls: bool) -> str:
    """The provider's finish reason in our words (``stop``, ``tool_calls``, ``length``...)."""
    reason = _FINISH.get(value or "", "stop")
    if has_calls and reason == "stop":
        return "tool_calls"  # some providers say "stop" after tool calls; litellm varies
    return reason


def tool_call(
    call_id: str | None, name: str | None, arguments: str | None, provider_fields: Any = None
) -> ToolCall:
    """A ``ToolCall`` from the wire; arguments that are not a JSON object are kept raw,
    and what the provider sent with the call for its own use (``provider_fields``, a
    JSON object) is kept to be sent back."""
    text = arguments or ""
    parsed = parse_object(text) if text.strip() else EMPTY_MAP
    fields = (
        provider_fields if isinstance(provider_fields, dict) and plain_json(provider_fields) else {}
    )
    identifier = call_id or ""
    if parsed is not None:
        return ToolCall(id=identifier, name=name or "", arguments=parsed, provider_fields=fields)
    return ToolCall(id=identifier, name=name or "", raw_arguments=text, provider_fields=fields)


def provider_fields(call: Any) -> Any:
    """What litellm gives of a tool call's provider fields (on the call, or its function)."""
    found = getattr(call, "provider_specific_fields", None)
    if not found:
        found = getattr(getattr(call, "function", None), "provider_specific_fields", None)
    return found or None


def reasoning_parts(blocks: Any, text: Any) -> list[ReasoningPart]:
    """An answer's reasoning as parts: litellm's ``thinking_blocks`` (signed, or redacted),
    else its ``reasoning_content`` text."""
    parts = []
    for block in blocks or ():
        kind, thinking, signature, data = _block(block)
        if kind == "redacted_thinking" and data is not None:
            parts.append(ReasoningPart(redacted=data))
        elif kind == "thinking":
            parts.append(ReasoningPart(text=thinking, signature=signature))
    if not parts and isinstance(text, str) and text:
        parts.append(ReasoningPart(text=text))
    return parts


def _block(block: Any) -> tuple[Any, str, str | None, str | None]:
    """A thinking block's type, thinking text, signature and (redacted) data."""
    if isinstance(block, dict):
        get = block.get
    else:
        get = functools.partial(getattr, block)  # (name, default)
    thinking, signature, data = get("thinking", None), get("signature", None), get("data", None)
    return (
        get("type", None),
        thinking if isinstance(thinking, str) else "",
        signature if isinstance(signature, str) else None,
        data if isinstance(data, str) else None,
    )


def wire_message(message: Message) -> dict[str, Any]:
    """A message as the chat-completions JSON (an assistant's reasoning as litellm's
    ``thinking_blocks``, which it turns into the provider's)."""
    role = message.role
    content = wire_content(message.content)
    if role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    wired: dict[str, Any] = {"role": role.value, "content": content}
    if role is Role.ASSISTANT:
        blocks = [_thinking(part) for part in message.parts if type(part) is ReasoningPart]
        if blocks:
            wired["thinking_blocks"] = blocks
        if message.tool_calls:
            wired["content"] = content or None
            wired["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments
                        if call.raw_arguments is not None
                        else json.dumps(deep_thaw(call.arguments), sort_keys=True),
                    },
                    **(
                        {"provider_specific_fields": deep_thaw(call.provider_fields)}
                        if call.provider_fields
                        else {}
                    ),
                }
                for call in message.tool_calls
            ]
    return wired


def wire_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Messages as chat completions take them. Chat completions take no media in a tool's
    result: a tool message's images, audio and documents go in a user message right after
    the tool messages of that turn, each named by its call, and the tool message says so."""
    wired: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for message in messages:
        if message.role is not Role.TOOL and moved:
            wired.append({"role": "user", "content": moved})
            moved = []
        media = [p for p in message.parts if isinstance(p, MediaPart)]
        if message.role is not Role.TOOL or not media:
            wired.append(wire_message(message))
            continue
        text = message.text
        note = f"[{len(media)} attachment(s) follow in the next user message]"
        wired.append(
            {
                "role": "tool",
                "tool_call_id": message.tool_call_id,
                "content": f"{text}\n{note}" if text else note,
            }
        )
        moved.append({"type": "text", "text": f"Attached by tool call {message.tool_call_id}:"})
        moved += [_wire_part(part) for part in media]
    if moved:
        wired.append({"role": "user", "content": moved})
    return wired


def moved_media(messages: Iterable[Message]) -> list[str]:
    """The ids of the calls whose tool results hold media, which ``wire_messages`` sends in
    a user message after them."""
    return [
        str(message.tool_call_id)
        for message in messages
        if message.role is Role.TOOL and any(isinstance(p, MediaPart) for p in message.parts)
    ]


def wire_content(content: Any) -> Any:
    """A message's content as chat completions take it: text, or a list of parts
    (``text``, ``image_url`` with a URL or a data URL, ``input_audio``, ``file``);
    reasoning is not content (``thinking_blocks``)."""
    if type(content) is str:
        return content
    wired = [_wire_part(part) for part in content if type(part) is not ReasoningPart]
    if all(part["type"] == "text" for part in wired):
        return "\n".join(part["text"] for part in wired)
    return wired


def _wire_part(part: Any) -> dict[str, Any]:
    if type(part) is TextPart:
        return {"type": "text", "text": part.text}
    if not isinstance(part, MediaPart):
        raise ContentError(f"no chat-completions form for {type(part).__name__}")
    if type(part) is ImagePart:
        url = part.url if part.blob is None else _data_url(part.blob)
        return {"type": "image_url", "image_url": {"url": url}}
    if part.blob is None:
        raise ContentError(
            f"a {type(part).__name__} by URL cannot be sent as chat completions take "
            "media: make it from its bytes"
        )
    if type(part) is AudioPart:
        audio = {"data": _base64(part.blob), "format": _AUDIO_FORMATS.get(part.media_type, "wav")}
        return {"type": "input_audio", "input_audio": audio}
    file = {"file_data": _data_url(part.blob)}
    if part.name:
        file["filename"] = part.name
    return {"type": "file", "file": file}


_AUDIO_FORMATS: Final = {"audio/wav": "wav", "audio/mpeg": "mp3", "audio/flac": "flac"}


@functools.lru_cache(maxsize=32)
def _base64(blob: Blob) -> str:
    """A blob's bytes in base64, made once per blob while it is among the last used (a
    run sends its conversation, images included, at every step)."""
    return base64.b64encode(blob.data()).decode("ascii")


def _data_url(blob: Blob) -> str:
    return f"data:{blob.media_type};base64,{_base64(blob)}"


def _thinking(part: ReasoningPart) -> dict[str, Any]:
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    block: dict[str, Any] = {"type": "thinking", "thinking": part.text}
    if part.signature is not None:
        block["signature"] = part.signature
    return block


def wire_tool(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool schema as the chat-completions ``function`` tool."""
    plain = deep_thaw(schema)
    return {
        "type": "function",
        "function": {
            "name": plain["name"],
            "description": plain.get("description", ""),
            "parameters": plain.get("parameters", {"type": "object", "properties": {}}),
        },
    }


def wire_response_format(schema: Any) -> Any:
    """A structured-output schema as the provider's ``response_format``."""
    if isinstance(schema, dict) and schema.get("type") in ("json_schema", "json_object", "text"):
        return schema  # already in the provider's format
    name = schema.get("title", "output") if isinstance(schema, dict) else "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": re.sub(r"[^A-Za-z0-9_-]", "_", str(name)), "schema": schema},
    }


def raw_json(response: Any) -> Any:
    """The provider's answer as plain JSON (kept when ``keep_raw``)."""
    dump = getattr(response, "model_dump", None)
    data = dump() if callable(dump) else response
    return json.loads(json.dumps(data, default=str))


class Stream:
    """Accumulates a streamed answer; reports each piece as it arrives."""

    def __init__(self, attempt: int, on_delta: Callable[..., None] | None, keep_raw: bool):
        self.attempt = attempt
        self.on_delta = on_delta
        self.text: list[str] = []
        self.thinking: list[str] = []  # the reasoning's text, as it streams
        self.signature: list[str] = []
        self.redacted: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.model: str | None = None
        self.raw: list[Any] | None = [] if keep_raw else None

    def add(self, chunk: Any) -> None:
        if self.raw is not None:
            self.raw.append(raw_json(chunk))
        self.model = getattr(chunk, "model", None) or self.model
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        for choice in getattr(chunk, "choices", None) or ():
            delta = choice.delta
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            self._reasoning_piece(delta)
            content = getattr(delta, "content", None)
            if content:
                self.text.append(content)
                if self.on_delta is not None:
                    self.on_delta(content, self.attempt)
            for piece in getattr(delta, "tool_calls", None) or ():
                self._tool_piece(piece)

    def _reasoning_piece(self, delta: Any) -> None:
        text = getattr(delta, "reasoning_content", None)
        pieces = []
        for block in getattr(delta, "thinking_blocks", None) or ():
            kind, thinking, signature, data = _block(block)
            if kind == "redacted_thinking" and data is not None:
                self.redacted.append(data)
            elif kind == "thinking":
                pieces.append(thinking)
                if signature is not None:
                    self.signature.append(signature)
        piece = text if isinstance(text, str) and text else "".join(pieces)
        if piece:
            self.thinking.append(piece)
            if self.on_delta is not None:
                self.on_delta("", self.attempt, reasoning=piece)

    def _tool_piece(self, piece: Any) -> None:
        index = getattr(piece, "index", None) or 0
        call = self.calls.setdefault(
            index, {"id": None, "name": None, "arguments": [], "fields": None}
        )
        call["fields"] = provider_fields(piece) or call["fields"]
        function = getattr(piece, "function", None)
        name = getattr(function, "name", None) if function is not None else None
        arguments = getattr(function, "arguments", None) if function is not None else None
        if piece.id:
            call["id"] = piece.id
        if name:
            call["name"] = name
        if arguments:
            call["arguments"].append(arguments)
        if self.on_delta is not None:
            self.on_delta(
                "",
                self.attempt,
                tool_call_index=index,
                tool_call_id=piece.id or None,
                tool_name=name or None,
                arguments=arguments or "",
            )

    def result(self) -> tuple[Any, list[ToolCall], str | None, Any, str | None, Any]:
        calls = [
            tool_call(call["id"], call["name"], "".join(call["arguments"]), call["fields"])
            for _, call in sorted(self.calls.items())
        ]
        raw = {"chunks": self.raw} if self.raw is not None else None
        text = "".join(self.text)
        reasoning = [ReasoningPart(redacted=data) for data in self.redacted]
        if self.thinking or self.signature:
            signature = "".join(self.signature) if self.signature else None
            thought = ReasoningPart(text="".join(self.thinking), signature=signature)
            reasoning.insert(0, thought)
        content: Any = [*reasoning, text] if reasoning else text
        return content, calls, self.finish_reason, self.usage, self.model, raw


def plain_json(value: Any) -> bool:
    """Whether ``value`` can be written as JSON."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
