"""A small HTTP service keeping one agent session per conversation (stdlib only).

    .venv/bin/python examples/service.py --db sessions.db --port 8080

    curl -s -X POST localhost:8080/conversations/c1 -d '{"message": "What is 2 + 3?"}'
    curl -s localhost:8080/conversations/c1

Sessions live in SQLite (``--db``; or PostgreSQL with ``--dsn``). Kill the process at any
moment and start it again: conversations carry on from their last committed step, and
``POST /conversations/<id>/resume`` finishes a run a crash interrupted. The model is scripted
(offline) unless ``--model`` names a litellm model.
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agents import (
    AgentLoop,
    AgentState,
    FunctionDriver,
    InferenceRequest,
    InferenceResponse,
    Role,
    Session,
    SessionNotFound,
    SessionRuntime,
    SQLiteSessionStore,
    ToolCall,
    tool,
)


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def offline_model(request: InferenceRequest) -> InferenceResponse | list[ToolCall] | str:
    """A stand-in model: adds the numbers of the last user message with the tool, then
    answers with the tool's result."""
    last = request.messages[-1]
    if last.role is Role.TOOL:
        return f"The sum is {last.content}."
    numbers = [
        float(word)
        for word in last.content.replace("?", " ").split()
        if word.replace(".", "", 1).isdigit()
    ]
    if len(numbers) >= 2:
        return [
            ToolCall(
                id=f"call-{len(request.messages)}",
                name="add",
                arguments={"a": numbers[0], "b": numbers[1]},
            )
        ]
    return "Send me two numbers to add."


def build_runtime(db: str, dsn: str | None, model: str | None) -> SessionRuntime:
    if dsn:
        from agents import PostgresSessionStore

        store: Any = PostgresSessionStore(dsn)
    else:
        store = SQLiteSessionStore(db)

    def loop_factory(session: Session) -> AgentLoop:
        if model:
            from agents import LiteLLMDriver

            driver: Any = LiteLLMDriver(model)
        else:
            driver = FunctionDriver(offline_model)
        return AgentLoop(driver, tools=[add], max_steps=8)

    return SessionRuntime(store, loop_factory)


def describe(session: Session) -> dict[str, Any]:
    state = session.state
    assert state is not None
    return {
        "session": session.session_id,
        "version": session.version,
        "status": state.status.value if state.status else None,
        "answer": state.final_response,
        "messages": [{"role": m.role.value, "content": m.content} for m in state.messages],
    }


def make_handler(runtime: SessionRuntime) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _conversation(self) -> tuple[str, str] | None:
            parts = self.path.strip("/").split("/")
            if len(parts) >= 2 and parts[0] == "conversations":
                return parts[1], "/".join(parts[2:])
            return None

        def do_GET(self) -> None:
            target = self._conversation()
            if target is None:
                self._reply(404, {"error": "unknown path"})
                return
            try:
                self._reply(200, describe(runtime.get(target[0])))
            except SessionNotFound:
                self._reply(404, {"error": f"no conversation {target[0]!r}"})

        def do_POST(self) -> None:
            target = self._conversation()
            if target is None:
                self._reply(404, {"error": "unknown path"})
                return
            conversation, action = target
            if action == "resume":
                try:
                    self._reply(200, describe(runtime.resume(conversation)))
                except SessionNotFound:
                    self._reply(404, {"error": f"no conversation {conversation!r}"})
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                message = json.loads(self.rfile.read(length) or b"{}")["message"]
                if not isinstance(message, str):
                    raise TypeError("message must be a string")
            except (ValueError, KeyError, TypeError) as exc:
                self._reply(400, {"error": f'send {{"message": "..."}} ({exc})'})
                return
            try:
                runtime.get(conversation)
            except SessionNotFound:
                runtime.create(AgentState.initial("You add numbers."), session_id=conversation)
            self._reply(200, describe(runtime.send(conversation, message)))

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="sessions.db", help="SQLite file (default)")
    parser.add_argument("--dsn", help="PostgreSQL DSN instead of SQLite")
    parser.add_argument("--model", help="a litellm model name (default: offline stand-in)")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    runtime = build_runtime(args.db, args.dsn, args.model)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(runtime))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
