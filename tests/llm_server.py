"""A local chat-completions server on 127.0.0.1 for testing the real litellm client.

It answers ``POST /v1/chat/completions`` from a queue of planned replies — JSON answers,
server-sent-event streams (tool calls split across chunks, a usage chunk), and faults: an
HTTP error with optional ``Retry-After``, an answer slower than the client's timeout, a
stream cut mid-way, a malformed body. Every request body is recorded for assertions.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.define
class Reply:
    """One planned answer (or fault) of the server."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = attrs.field(factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = attrs.field(
        factory=lambda: {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    )
    status: int = 200
    headers: dict[str, str] = attrs.field(factory=dict)
    error_body: str | None = None
    delay: float = 0.0
    cut_after_chunks: int | None = None  # streams: drop the connection after n chunks
    malformed: bool = False
    model: str = "test-model"


def answer(text: str, **kw: Any) -> Reply:
    """A plain text answer."""
    return Reply(content=text, finish_reason=kw.pop("finish_reason", "stop"), **kw)


def tool_calls(*calls: tuple[str, str, Any], **kw: Any) -> Reply:
    """An answer calling tools: ``(id, name, arguments)``; a str argument is sent raw."""
    planned = [
        {
            "id": call_id,
            "type": "function",
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        for call_id, name, arguments in calls
    ]
    return Reply(
        content=kw.pop("content", None),
        tool_calls=planned,
        finish_reason=kw.pop("finish_reason", "tool_calls"),
        **kw,
    )


def fault(status: int, *, retry_after: str | None = None, message: str = "fault") -> Reply:
    """An HTTP error answer."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": status}})
    return Reply(status=status, headers=headers, error_body=body)


class LLMServer:
    """The server; use as a context manager. ``plan(*replies)`` queues answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The ``api_base`` to give litellm."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def plan(self, *replies: Reply) -> LLMServer:
        """Queue replies, answered in order."""
        with self._lock:
            self._replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Replies not used yet."""
        return len(self._replies)

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        close_litellm_clients()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self._replies:
                return fault(500, message="the test server has no planned reply left")
            return self._replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without this, Nagle's
                # algorithm and delayed ACKs add ~40 ms to every answer.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = server._next(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    if reply.status != 200:
                        self._send(reply.status, reply.error_body or "{}", reply.headers)
                    elif reply.malformed:
                        self._send(200, '{"id": "x", "choices": [', {})
                    elif body.get("stream"):
                        self._stream(reply, body)
                    else:
                        self._send(200, json.dumps(_completion(reply)), {})
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                for index, chunk in enumerate(_chunks(reply, include_usage)):
                    if reply.cut_after_chunks is not None and index >= reply.cut_after_chunks:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _completion(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    result: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
    }
    if reply.usage is not None:
        result["usage"] = reply.usage
    return result


def _chunks(reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": reply.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    text = reply.content or ""
    for start in range(0, len(text), 4):
        yield chunk({"content": text[start : start + 4]})
    for index, call in enumerate(reply.tool_calls):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": arguments[:half],
                        },
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, reply.finish_reason)
    if include_usage and reply.usage is not None:
        final = chunk({})
        final["choices"] = []
        final["usage"] = reply.usage
        yield final


def close_litellm_clients() -> None:
    """Close the HTTP clients litellm caches between calls (they would keep sockets to a
    server that is gone, and the collector would warn about them later)."""
    import sys

    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cache is None:
        return
    for client in list(getattr(cache, "cache_dict", {}).values()):
        close = getattr(client, "close", None)
        if callable(close):
            try:
                result = close()
            except Exception:  # an async client: its loop is gone; nothing to close here
                continue
            if hasattr(result, "close"):  # a coroutine from an async client's close()
                result.close()
    cache.flush_cache()


async def aclose_litellm_clients() -> None:
    """Close litellm's cached clients from inside the event loop they belong to (what the
    library's own ``close_async_clients`` does)."""
    from agents.drivers.litellm import close_async_clients

    await close_async_clients()
