"""Tools from Model Context Protocol servers (the ``mcp`` extra), and agents served as MCP
servers (``agents mcp-serve``).

``MCPServerStdio`` and ``MCPServerHTTP`` go into a loop's ``tools=`` beside plain tools;
their calls are ordinary tool calls — checked, blocked or rewritten by hooks, wrapped by
interceptors, gated by approvals, recorded, replayed without the server. See
``agents.mcp.client`` and docs/how-to/mcp.md.
"""

from agents.errors import require_extra

require_extra("mcp", "agents.mcp", "mcp", "httpx2")

from agents.mcp.client import MCPServer, MCPToolError  # noqa: E402 (the extra checked first)
from agents.mcp.servers import MCPServerHTTP, MCPServerStdio  # noqa: E402

__all__ = ["MCPServer", "MCPServerHTTP", "MCPServerStdio", "MCPToolError"]
