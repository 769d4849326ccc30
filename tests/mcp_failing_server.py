"""A small MCP server (the official SDK) for the failure cases: a stateful counter, a slow
tool, a tool that fails, and one that kills the server process.

Run: ``python tests/mcp_failing_server.py`` (stdio) or ``... http PORT``."""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer(name="failing", version="1.0")
calls = {"count": 0}


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
def pid() -> int:
    """This server process's id."""
    return os.getpid()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
