"""The chat-completions wire format: our messages, tool schemas and response formats as
the provider's JSON, and its answers (whole or streamed) back as records. No client here:
``agents.drivers.litellm`` sends what this builds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from agents.records.codec import parse_object
from agents.records.frozen import EMPTY_MAP, deep_thaw
from agents.records.messages import Message, Role, ToolCall

__all__ = [
    "Stream",
    "normal_finish_reason",
    "plain_json",
    "raw_json",
    "tool_call",
    "wire_message",
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


def tool_call(call_id: str | None, name: str | None, arguments: str | None) -> ToolCall:
    """A ``ToolCall`` from the wire; arguments that are not a JSON object are kept raw."""
    text = arguments or ""
    parsed = parse_object(text) if text.strip() else EMPTY_MAP
    identifier = call_id or ""
    if parsed is not None:
        return ToolCall(id=identifier, name=name or "", arguments=parsed)
    return ToolCall(id=identifier, name=name or "", raw_arguments=text)


def wire_message(message: Message) -> dict[str, Any]:
    """A message as the chat-completions JSON."""
    role = message.role
    if role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if role is Role.ASSISTANT and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments
                        if call.raw_arguments is not None
                        else json.dumps(deep_thaw(call.arguments), sort_keys=True),
                    },
                }
                for call in message.tool_calls
            ],
        }
    return {"role": role.value, "content": message.content}


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
            content = getattr(delta, "content", None)
            if content:
                self.text.append(content)
                if self.on_delta is not None:
                    self.on_delta(content, self.attempt)
            for piece in getattr(delta, "tool_calls", None) or ():
                self._tool_piece(piece)

    def _tool_piece(self, piece: Any) -> None:
        index = getattr(piece, "index", None) or 0
        call = self.calls.setdefault(index, {"id": None, "name": None, "arguments": []})
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

    def result(self) -> tuple[str, list[ToolCall], str | None, Any, str | None, Any]:
        calls = [
            tool_call(call["id"], call["name"], "".join(call["arguments"]))
            for _, call in sorted(self.calls.items())
        ]
        raw = {"chunks": self.raw} if self.raw is not None else None
        return "".join(self.text), calls, self.finish_reason, self.usage, self.model, raw


def plain_json(value: Any) -> bool:
    """Whether ``value`` can be written as JSON."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
