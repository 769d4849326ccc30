"""An MCP server (stdio) written by hand, line by line of JSON-RPC, that lists what the
official SDK's servers never would: a tool whose input schema holds ``NaN``, two tools of
one name, a schema that is no schema. Its good tool ``echo`` answers ``{"said": text}``,
but for the text ``garble``: then its answer is cut short (no JSON-RPC message), and for
the text ``bytes``: then it writes a line that is not UTF-8 and no answer.

Started with ``silent`` it never answers ``initialize``; with ``endless`` its list of
tools pages without end (each page says there is a next one); with ``unless PATH`` it
exits at once while the file ``PATH`` exists (a server that cannot start, for now).

Run: ``python tests/mcp_hostile_server.py [silent|endless|unless PATH]``."""

from __future__ import annotations

import json
import os
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
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "unless" and os.path.exists(sys.argv[2]):
        sys.exit(1)
    for line in sys.stdin:
        message = json.loads(line)
        number, method = message.get("id"), message.get("method")
        if method == "initialize" and mode == "silent":
            continue  # never answered: the client waits for its start
        if method == "tools/list" and mode == "endless":
            page = int((message.get("params") or {}).get("cursor") or 0) + 1
            listed = {"tools": [dict(TOOLS[0], name=f"t{page}")], "nextCursor": str(page)}
            send(json.dumps({"jsonrpc": "2.0", "id": number, "result": listed}))
            continue
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
            if said == "bytes":  # a line that is not UTF-8, and no answer
                sys.stdout.buffer.write(b"\xff\xfe not utf-8 \xc3\x28\n")
                sys.stdout.flush()
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
