"""Where the MCP servers the tests use are."""

from __future__ import annotations

import sys
from pathlib import Path

BIN = Path(sys.executable).parent
TIME = str(BIN / "mcp-server-time")
GIT = str(BIN / "mcp-server-git")
FAILING = str(Path(__file__).parent / "mcp_failing_server.py")
HOSTILE = str(Path(__file__).parent / "mcp_hostile_server.py")
