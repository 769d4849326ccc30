"""Sub-agents: an agent offered to another as a tool (``subagent_tool``).

The parent's model calls the tool with a ``task``; the tool runs a child agent on it and
its final response is the tool's result. The child's whole run is kept on the parent's
``ToolExecution`` (``execution.child``, a final ``AgentState`` whose ``parent_agent_id`` is
the parent's agent id), so audits see everything; the child's usage and cost count in the
parent's step; the child's events reach the parent's listeners, tagged with the child's
own ids. A child deeper than ``max_depth``, a loop factory that fails, or a child run that
fails or stops without an answer is a failed tool execution the parent's model sees. A
child's questions for a human (``ToolContext.ask``, an MCP server's elicitation) and its
calls that need approval (asked as "approve ...?") are the parent call's questions: the
parent's run suspends with them, and the child is run again with the answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Final

from agents.errors import ConfigurationError
from agents.records.arguments import names
from agents.records.compiled import replace_fields
from agents.records.frozen import deep_thaw
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop, loop_and_state
from agents.shell.reporting import current_forward
from agents.tools.outcomes import SubagentFailed, ToolResult
from agents.tools.tool import Tool, ToolContext, Tools, tool

__all__ = ["DEPTH_KEY", "SubagentFailed", "subagent_tool"]

DEPTH_KEY: Final = "agents.subagent_depth"  # in a child's metadata: how deep it runs


LoopFactory = Callable[[], "AgentLoop | tuple[AgentLoop, AgentState]"]


def subagent_tool(
    name: str,
    description: str,
    loop_factory: LoopFactory,
    max_depth: int = 3,
    allow_tools: Iterable[str] | None = None,
    deny_tools: Iterable[str] = (),
    *,
    system_prompt: str = "",
) -> Tool:
    """A tool ``name(task: str)`` running a child agent on ``task``.

    ``loop_factory()`` gives the child's ``AgentLoop`` — or ``(loop, initial_state)`` to start
    the child from a state of its own (its system prompt, metadata…); otherwise the child
    starts from ``AgentState.initial(system_prompt)``. The task arrives as the child's user
    message. ``allow_tools`` (when given) and ``deny_tools`` narrow the child's tools.
    ``max_depth`` bounds nesting: the parent of all runs at depth 0, its sub-agents at 1.
    """
    for given, what in ((name, "name"), (description, "description"), (system_prompt, "prompt")):
        if not isinstance(given, str):
            raise ConfigurationError(f"subagent_tool: {what} is text, not {type(given).__name__}")
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1:
        raise ConfigurationError(f"max_depth must be an int >= 1, got {max_depth!r}")
    if not callable(loop_factory):
        raise ConfigurationError(f"loop_factory must be callable, got {loop_factory!r}")
    allowed = None if allow_tools is None else frozenset(names(allow_tools, "allow_tools"))
    denied = frozenset(names(deny_tools, "deny_tools"))

    def run_subagent(task: str, context: ToolContext) -> ToolResult:
        parent = context.state
        depth = _depth(parent) + 1
        if depth > max_depth:
            raise SubagentFailed(
                f"sub-agent {name!r} would run at depth {depth}; the limit is {max_depth}"
            )
        loop, initial = _build(name, loop_factory, system_prompt)
        loop = _narrowed(name, loop, allowed, denied)
        forward = current_forward()
        if forward is not None:
            loop = loop.with_listeners(forward)
        start = replace_fields(initial, parent_agent_id=parent.agent_id).with_metadata(
            DEPTH_KEY, depth
        )
        final = _asked_up(name, loop, loop.run(start.with_user_message(task)), context)
        answer = final.final_response
        if final.execution is not None and final.execution.error is not None:
            error = final.execution.error
            raise SubagentFailed(f"sub-agent {name!r} failed: {error.type}: {error.message}", final)
        if answer is None:
            reason = final.stop_reason.value if final.stop_reason is not None else "unknown"
            raise SubagentFailed(f"sub-agent {name!r} stopped ({reason}) without an answer", final)
        return ToolResult(answer, child=final)

    run_subagent.__name__ = name
    run_subagent.__doc__ = f"{description}\n\nArgs:\n    task: what the sub-agent should do\n"
    return tool(run_subagent, name=name, description=description)


def _asked_up(name: str, loop: AgentLoop, state: AgentState, context: ToolContext) -> AgentState:
    """A child waiting for a human — its tool calls' questions, or its calls that need
    approval (asked as "approve ...?": accepted approves, else denies) — asks through the
    parent call, in order: answered with the parent call's answers as far as they go (the
    child's run resumed with each), else passed up (``InputRequired``: the parent's run
    suspends, and the call that ran the child is made again, the child with it, once the
    question is answered)."""
    while state.pending_inputs or state.pending_approvals:
        if state.pending_approvals:
            call = state.pending_approvals[0]
            arguments = json.dumps(deep_thaw(call.arguments), sort_keys=True)
            answer = context.ask(f"approve {call.name}({arguments})?", source=f"{name}: approval")
            reason = "" if answer.accepted else f"{answer.action} in the parent run"
            state = state.with_approval(call.id, answer.accepted, reason)
            if any(c.id not in _decided(state) for c in state.pending_approvals):
                continue  # more calls of the child's batch wait for a decision
        else:
            question = state.pending_inputs[0]
            answer = context.ask(
                question.message,
                question.schema,
                source=f"{name}: {question.source}" if question.source else name,
                url=question.url,
            )
            state = state.with_input(question.call_id, answer.content, action=answer.action)
            if state.pending_inputs:
                continue  # more questions of the child's step wait
        state = loop.run(state)
    return state


def _decided(state: AgentState) -> set[str]:
    execution = state.execution
    return {d.call_id for d in execution.approvals} if execution is not None else set()


def _depth(state: AgentState) -> int:
    value = state.metadata.get(DEPTH_KEY, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _build(
    name: str, loop_factory: LoopFactory, system_prompt: str
) -> tuple[AgentLoop, AgentState]:
    try:
        made: Any = loop_factory()
    except Exception as exc:
        raise SubagentFailed(
            f"sub-agent {name!r} could not be built: {type(exc).__name__}: {exc}"
        ) from exc
    if isinstance(made, AgentLoop):
        return made, AgentState.initial(system_prompt)
    pair = loop_and_state(made)
    if pair is not None:
        return pair
    raise SubagentFailed(
        f"sub-agent {name!r}: loop_factory returned {type(made).__name__}, expected an "
        "AgentLoop or (AgentLoop, AgentState)"
    )


def _narrowed(
    name: str, loop: AgentLoop, allowed: frozenset[str] | None, denied: frozenset[str]
) -> AgentLoop:
    if allowed is None and not denied:
        return loop
    names = list(loop.tools)
    unknown = sorted((allowed or frozenset()) - set(names))
    if unknown:
        raise SubagentFailed(f"sub-agent {name!r}: allow_tools names unknown tools {unknown}")
    kept = [
        loop.tools[tool_name]
        for tool_name in names
        if (allowed is None or tool_name in allowed) and tool_name not in denied
    ]
    return loop.with_options(tools=Tools(kept))
