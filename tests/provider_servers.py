"""Local servers on 127.0.0.1 speaking two providers' own APIs, reached through litellm's
``anthropic/`` and ``gemini/`` providers with ``api_base``: Anthropic's messages API and
Gemini's ``generateContent``. Each plays a planned tool-using conversation with thinking on,
and holds the conversation to the provider's rule for sending reasoning back:

- Anthropic: with thinking on, an assistant turn holding ``tool_use`` must start with its
  ``thinking`` (or ``redacted_thinking``) block, signature unchanged, or 400.
- Gemini: a ``functionCall`` part sent back must carry the ``thoughtSignature`` it came
  with, or 400.

Signatures are ones the server issued: a made-up or placeholder one is refused too.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
from llm_server import close_litellm_clients

ANTHROPIC_THINKING_ERROR = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block"
)
GEMINI_SIGNATURE_ERROR = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly"
)


@attrs.define
class Turn:
    """One planned answer: the model thinks ``thinking``, then calls ``call`` (a name and
    arguments) or answers ``text``."""

    thinking: str
    call: tuple[str, dict[str, Any]] | None = None
    text: str = ""


class ProviderServer:
    """A server for one provider (``"anthropic"`` or ``"gemini"``); a context manager.
    ``plan(*turns)`` queues answers; ``requests`` and ``refusals`` record what came."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._turns: list[Turn] = []
        self._issued: set[str] = set()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def plan(self, *turns: Turn) -> ProviderServer:
        self._turns.extend(turns)
        return self

    def __enter__(self) -> ProviderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        close_litellm_clients()

    # -- the rules ---------------------------------------------------------------------------

    def _problem(self, body: dict[str, Any]) -> str | None:
        if self.provider == "anthropic":
            if not body.get("thinking"):
                return None
            for index, message in enumerate(body.get("messages", [])):
                content = message.get("content")
                if message.get("role") != "assistant" or not isinstance(content, list):
                    continue
                if not any(block.get("type") == "tool_use" for block in content):
                    continue
                first = content[0]
                if first.get("type") == "redacted_thinking":
                    continue
                if first.get("type") != "thinking" or first.get("signature") not in self._issued:
                    found = first.get("type", "")
                    return ANTHROPIC_THINKING_ERROR.format(index=index, found=found)
            return None
        for message in body.get("contents", []):
            if message.get("role") != "model":
                continue
            for part in message.get("parts", []):  # the API takes either spelling
                call = part.get("functionCall", part.get("function_call"))
                signature = part.get("thoughtSignature", part.get("thought_signature"))
                if call is not None and signature not in self._issued:
                    return GEMINI_SIGNATURE_ERROR
        return None

    def _next(self, body: dict[str, Any]) -> tuple[Turn | None, str | None]:
        with self._lock:
            self.requests.append(body)
            problem = self._problem(body)
            if problem is not None:
                self.refusals.append(problem)
                return None, problem
            if not self._turns:
                return None, "the test server has no planned turn left"
            turn = self._turns.pop(0)
            self._issued.add(_signature(turn))
            return turn, None

    # -- the answers ---------------------------------------------------------------------------

    def _anthropic(self, turn: Turn, number: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": turn.thinking, "signature": _signature(turn)}
        ]
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        if turn.call is not None:
            name, arguments = turn.call
            content.append(
                {"type": "tool_use", "id": f"toolu_{number:02}", "name": name, "input": arguments}
            )
        return {
            "id": f"msg_{number:02}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": "tool_use" if turn.call is not None else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 20,
                "output_tokens": 12,
                "cache_creation_input_tokens": 3,
                "cache_read_input_tokens": 5,
            },
        }

    def _anthropic_events(self, turn: Turn, number: int) -> list[dict[str, Any]]:
        whole = self._anthropic(turn, number)
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {**whole, "content": [], "stop_reason": None, "usage": whole["usage"]},
            }
        ]
        for index, block in enumerate(whole["content"]):
            if block["type"] == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                half = len(turn.thinking) // 2
                deltas = [
                    {"type": "thinking_delta", "thinking": turn.thinking[:half]},
                    {"type": "thinking_delta", "thinking": turn.thinking[half:]},
                    {"type": "signature_delta", "signature": block["signature"]},
                ]
            elif block["type"] == "text":
                start = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": block["text"]}]
            else:
                start = {**block, "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events += [
                {"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas
            ]
            events.append({"type": "content_block_stop", "index": index})
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 12},
            }
        )
        events.append({"type": "message_stop"})
        return events

    def _gemini(self, turn: Turn) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": turn.thinking, "thought": True}]
        if turn.text:
            parts.append({"text": turn.text})
        if turn.call is not None:
            name, arguments = turn.call
            parts.append(
                {
                    "functionCall": {"name": name, "args": arguments},
                    "thoughtSignature": _signature(turn),
                }
            )
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {  # a prompt holding audio, priced apart by some models
                "promptTokenCount": 20,
                "candidatesTokenCount": 12,
                "thoughtsTokenCount": 9,
                "totalTokenCount": 41,
                "promptTokensDetails": [
                    {"modality": "TEXT", "tokenCount": 6},
                    {"modality": "AUDIO", "tokenCount": 14},
                ],
            },
            "modelVersion": "gemini-3-pro-preview",
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                turn, problem = server._next(body)
                if turn is None:
                    self._send(400, _error(server.provider, problem or ""))
                    return
                number = len(server.requests)
                streamed = body.get("stream") or "streamGenerateContent" in self.path
                if server.provider == "anthropic":
                    if streamed:
                        events = server._anthropic_events(turn, number)
                        self._stream([(event["type"], event) for event in events])
                    else:
                        self._send(200, server._anthropic(turn, number))
                elif streamed:
                    whole = server._gemini(turn)
                    parts = whole["candidates"][0]["content"]["parts"]
                    chunks = []
                    for index, part in enumerate(parts):
                        candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
                        chunk: dict[str, Any] = {"candidates": [candidate]}
                        if index == len(parts) - 1:
                            candidate["finishReason"] = "STOP"
                            chunk["usageMetadata"] = whole["usageMetadata"]
                        chunks.append((None, chunk))
                    self._stream(chunks)
                else:
                    self._send(200, server._gemini(turn))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, event in events:
                    head = f"event: {name}\n" if name else ""
                    self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _signature(turn: Turn) -> str:
    return "sig-" + hashlib.sha256(turn.thinking.encode()).hexdigest()[:16]


def _error(provider: str, message: str) -> dict[str, Any]:
    if provider == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
