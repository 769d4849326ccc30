"""A small MCP server (the official SDK) for the failure cases: a stateful counter, a slow
tool, a tool that fails, and one that kills the server process.

Run: ``python tests/mcp_failing_server.py`` (stdio), ``... http PORT`` or ``... http-2025 PORT``.
Its ``summarize`` tools ask the client's model (sampling), ``greet`` asks a human
(elicitation)."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from typing import Annotated, Any

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import (
    BlobResourceContents,
    CreateMessageResult,
    EmbeddedResource,
    ImageContent,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

server = MCPServer(name="failing", version="1.0")
calls = {"count": 0, "greet": 0}


@server.tool()
def count() -> int:
    """How many times count was called in this session's server process."""
    calls["count"] += 1
    return calls["count"]


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails (the result says isError)."""
    raise ToolError(reason)


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@server.tool()
def screenshot() -> list[Any]:
    """A caption, a PNG image and an embedded PDF resource (content blocks)."""
    pdf = base64.b64encode(b"%PDF-1.7\n%%EOF").decode()
    return [
        TextContent(type="text", text="the login page"),
        Image(data=PNG, format="png").to_image_content(),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///report.pdf", mime_type="application/pdf", blob=pdf
            ),
        ),
    ]


@server.tool()
def lying_image() -> list[Any]:
    """An image whose bytes are not the PNG it claims to be."""
    return [
        ImageContent(
            type="image", data=base64.b64encode(b"GIF89a...").decode(), mime_type="image/png"
        )
    ]


@server.tool()
def crash() -> str:
    """Kill this server process."""
    os._exit(3)


@server.tool()
async def grow(ctx: Context) -> str:
    """Offer one more tool from now on, and say so (notifications/tools/list_changed)."""

    def late() -> str:
        """A tool that was not there at first."""
        return "here now"

    server.add_tool(late, name="late")
    await ctx.notify_tools_changed()
    return "grown"


@server.tool()
async def traceparent(ctx: Context) -> str:
    """The traceparent the call's _meta carried ("" for none)."""
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


@server.tool()
async def session(ctx: Context) -> str:
    """The ``Mcp-Session-Id`` the call came with ("" for none: stdio, 2026 protocol)."""
    return str((ctx.headers or {}).get("mcp-session-id", ""))


def _ask_model(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return Sample([message], max_tokens=40, system_prompt="You summarize.", temperature=0.0)


def _ask_again(text: str) -> Sample:
    return _ask_model(f"again: {text}")


@server.tool()
def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(_ask_model)]) -> str:
    """Summarize ``text`` with the client's model (a sampling request)."""
    assert isinstance(summary.content, TextContent)
    return f"summary: {summary.content.text} (by {summary.model})"


@server.tool()
def summarize_twice(
    text: str,
    first: Annotated[CreateMessageResult, Resolve(_ask_model)],
    second: Annotated[CreateMessageResult, Resolve(_ask_again)],
) -> str:
    """Two sampling requests in one call."""
    return "two summaries"


class Name(BaseModel):
    name: str


def _ask_name() -> Elicit[Name]:
    return Elicit("Whom shall I greet?", Name)


@server.tool()
def greet(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
    """Greet the person a human names (an elicitation request); says how many greetings
    this server process made."""
    calls["greet"] += 1
    if isinstance(answer, AcceptedElicitation):
        return f"hello {answer.data.name} (greeting {calls['greet']})"
    return f"nobody to greet ({answer.action})"


@server.tool()
def pid() -> int:
    """This server process's id."""
    return os.getpid()


def legacy(app: Any) -> Any:
    """``app`` as a server of the 2025 protocols sees it: ``server/discover`` is a method
    it does not know (so clients fall back to the ``initialize`` handshake, and the server
    gives each session an ``Mcp-Session-Id``), as most servers in the wild still are."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = json.loads(body or b"{}")
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error})
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            return await send({"type": "http.response.body", "body": answer.encode()})
        replayed = [{"type": "http.request", "body": body, "more_body": False}]

        async def again() -> Any:
            return replayed.pop() if replayed else await receive()

        return await app(scope, again, send)

    return asgi


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "http-2025":
        import uvicorn

        app = legacy(server.streamable_http_app())
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
