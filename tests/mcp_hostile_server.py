"""An MCP server (stdio) written by hand, line by line of JSON-RPC, that lists what the
official SDK's servers never would: a tool whose input schema holds ``NaN``, two tools of
one name, a schema that is no schema. Its good tool ``echo`` answers ``{"said": text}``,
but for the text ``garble``: then its answer is cut short (no JSON-RPC message).

Run: ``python tests/mcp_hostile_server.py``."""

from __future__ import annotations

import json
import sys

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "echo", "description": "Say it back.", "inputSchema": OBJECT},
    {
        "name": "odd",
        "description": "A maximum that is no number.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "maximum": 0}}},
    },
    {"name": "echo", "description": "The same name again.", "inputSchema": OBJECT},
    {
        "name": "loose",
        "description": "Properties that are no object.",
        "inputSchema": {"type": "object", "properties": None},
    },
]


def send(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        number, method = message.get("id"), message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            text = json.dumps({"jsonrpc": "2.0", "id": number, "result": {"tools": TOOLS}})
            send(text.replace('"maximum": 0', '"maximum": NaN'))  # what json.dumps won't
            continue
        elif method == "tools/call":
            said = message["params"].get("arguments", {}).get("text")
            if said == "garble":  # an answer cut short: no JSON-RPC message
                send('{"jsonrpc": "2.0", "id": ' + json.dumps(number) + ', "result": {"cont')
                continue
            result = {
                "content": [{"type": "text", "text": json.dumps({"said": said})}],
                "structuredContent": {"said": said},
            }
        elif number is None:
            continue  # a notification
        else:
            result = {}
        send(json.dumps({"jsonrpc": "2.0", "id": number, "result": result}))


if __name__ == "__main__":
    main()
