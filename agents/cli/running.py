"""``agents run``: an agent from a module or a definition file, audited to a run file.

Exit 0 when the run ends (completed, stopped by a limit, suspended for approval), 1 when it
ends FAILED (the reason in one line on stderr; the run file holds the whole story)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from agents.cli.common import DIFFERENT, OK, load_attribute, said
from agents.cli.history import print_timeline

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``agents run MODULE:ATTR|FILE [--input TEXT] [--model NAME] [--out FILE]``."""
    from agents.audit import AuditLog
    from agents.definitions import SUFFIXES
    from agents.errors import ConfigurationError
    from agents.records.execution import ExecutionStatus
    from agents.records.state import AgentState
    from agents.shell.loop import AgentLoop

    initial = AgentState.initial()
    if os.path.splitext(args.target)[1].lower() in SUFFIXES:
        from agents.definitions import AgentDefinition

        definition = AgentDefinition.load(args.target)
        registry = load_attribute(args.registry) if args.registry else None
        driver = None
        if args.model:
            from agents.drivers.litellm import LiteLLMDriver

            driver = LiteLLMDriver(args.model)
        loop, initial = definition.build(registry, driver=driver)
    else:
        target = load_attribute(args.target)
        loop = target() if callable(target) and not isinstance(target, AgentLoop) else target
        if not isinstance(loop, AgentLoop):
            raise ConfigurationError(
                f"{args.target} is not an AgentLoop (or a function making one)"
            )
        if args.model:
            from agents.drivers.litellm import LiteLLMDriver

            loop = loop.with_driver(LiteLLMDriver(args.model))
    with AuditLog.open(args.out) as log:
        final = loop.with_listeners(log).run(initial.with_user_message(args.input))
    print_timeline(final, out)
    out.write(f"run written to {args.out}\n")
    error = final.execution.error if final.execution is not None else None
    if final.status is ExecutionStatus.FAILED:
        why = error.describe() if error is not None else "an ERROR stop signal"
        sys.stderr.write(f"agents run: the run failed: {said(why)}\n")
        return DIFFERENT
    return OK


def mcp_serve(args: argparse.Namespace, out: TextIO) -> int:
    """``agents mcp-serve MODULE:ATTR|FILE [--transport stdio|http] [--host] [--port]
    [--audit-log FILE] [--name NAME] [--token T]``: the agent as an MCP server, until
    stopped."""
    from agents.cli.regress import agent_of
    from agents.definitions import AgentDefinition
    from agents.errors import ConfigurationError

    try:
        from agents.mcp.serving import serve
    except ImportError:
        raise ConfigurationError("mcp-serve needs the MCP SDK: pip install 'agents[mcp]'") from None
    agent = agent_of(args.target)
    start = None
    if isinstance(agent, tuple):  # a (loop, state) pair: conversations start from its state
        agent, start = agent
    elif isinstance(agent, AgentDefinition):
        registry = load_attribute(args.registry) if args.registry else None
        agent, start = agent.build(registry)

    def listening(url: str) -> None:  # HTTP only: stdio's stdout is the protocol's
        out.write(f"serving {args.target} as MCP tool {args.name!r} on {url}\n")
        out.flush()

    serve(
        agent,
        start,
        name=args.name,
        transport=args.transport,
        host=args.host,
        port=args.port,
        audit_log=args.audit_log,
        token=_token(args),
        listening=listening,
    )
    return OK


MCP_TOKEN_VARIABLE = "AGENTS_MCP_TOKEN"


def _token(args: argparse.Namespace) -> str | None:
    """``--token``, else ``$AGENTS_MCP_TOKEN`` for the HTTP transport (a token given on
    the command line with stdio is refused: nothing it could guard)."""
    if args.token:
        return str(args.token)
    found = os.environ.get(MCP_TOKEN_VARIABLE) if args.transport == "http" else None
    return found or None
