"""An agent served as an MCP server (``agents mcp-serve``): one tool, named after the
agent, taking a message and answering with the run's final response, so that any MCP
client (an IDE, another agent) can call the agent as a tool. Every run starts from the
agent's starting state with the message as the user's; an audit log, when asked for,
records them all."""

from __future__ import annotations

import os
from typing import Any

from agents.audit import AuditLog
from agents.errors import AgentError
from agents.mcp import sdk
from agents.records.execution import ExecutionStatus
from agents.records.json_text import replace_lone_surrogates
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop

__all__ = ["serve"]


def serve(
    loop: AgentLoop,
    start: AgentState | None = None,
    *,
    name: str = "agent",
    description: str = "Ask the agent; it answers in words.",
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    audit_log: str | os.PathLike[str] | None = None,
    token: str | None = None,
) -> None:
    """Serve ``loop`` over ``transport`` (``"stdio"``, or ``"http"``: streamable HTTP at
    ``http://host:port/mcp``) until the process is stopped. ``token`` (HTTP only): every
    request needs ``Authorization: Bearer <token>``."""
    if transport not in ("stdio", "http"):
        raise AgentError(f"transport must be 'stdio' or 'http', not {transport!r}")
    if token is not None and transport != "http":
        raise AgentError("a token guards the HTTP transport: stdio has no requests to refuse")
    first = start if start is not None else AgentState.initial()
    log = AuditLog.open(audit_log) if audit_log is not None else None
    runner = loop.with_listeners(log) if log is not None else loop

    async def ask(message: str) -> str:
        # MCP's own types refuse a lone surrogate (text that is not Unicode): the answer
        # shows U+FFFD for one; the audit log keeps the text.
        final = await runner.arun(first.with_user_message(message))
        if final.status is ExecutionStatus.FAILED:
            error = final.execution.error if final.execution is not None else None
            described = error.describe() if error is not None else "the run failed"
            raise AgentError(replace_lone_surrogates(described))
        return replace_lone_surrogates(final.final_response or "")

    server: Any = sdk.agent_server(name, description, ask)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            from agents.serve.asgi import guarded, run_server

            run_server(guarded(sdk.http_app(server, host), token=token), host, port)
    finally:
        if log is not None:
            log.close()
