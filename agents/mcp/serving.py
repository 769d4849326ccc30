"""An agent served as an MCP server (``agents mcp-serve``): one tool, named after the
agent, taking a message and answering with the run's final response, so that any MCP
client (an IDE, another agent) can call the agent as a tool. Every run starts from the
agent's starting state with the message as the user's; an audit log, when asked for,
records them all.

A run that waits for a human — a call that needs approval, a tool's question — never
answers an empty success. Where the client takes elicitation requests, the human is asked
through it and the run goes on (``agents.mcp.sdk``: within the call on the older protocol
versions, by input-required rounds on 2026-07-28). Otherwise the answer says what the run
waits for and how to continue: the tool called again with ``session`` (the run's id) and
``approvals`` (``{call id: true or false}``) or ``answers`` (``{call id: {...}}``, ``null``
to decline) continues the run, which the server keeps until then (``KEPT`` runs at most,
the oldest forgotten first). A final response holding images, audio or documents
answers with them as MCP content (text, image, audio, embedded resources), its text
beside them.
"""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from agents.audit import AuditLog
from agents.errors import AgentError, InvalidArgument
from agents.mcp import sdk
from agents.records.content import MediaPart, ReasoningPart, TextPart
from agents.records.execution import ExecutionStatus
from agents.records.frozen import deep_thaw
from agents.records.json_text import replace_lone_surrogates
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop

__all__ = ["KEPT", "ServedAgent", "Waiting", "serve"]

KEPT: Final = 1_000
"""How many waiting runs a server keeps for later calls to continue."""

_APPROVAL_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve", "description": "Let the call run"},
        "reason": {"type": "string", "title": "Reason", "description": "Why (optional)"},
    },
    "required": ["approved"],
}


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
    listening: Callable[[str], None] | None = None,
) -> None:
    """Serve ``loop`` over ``transport`` (``"stdio"``, or ``"http"``: streamable HTTP at
    ``http://host:port/mcp``) until the process is stopped. ``token`` (HTTP only): every
    request needs ``Authorization: Bearer <token>``. ``listening`` is told the HTTP
    endpoint's URL once the server takes connections."""
    if transport not in ("stdio", "http"):
        raise AgentError(f"transport must be 'stdio' or 'http', not {transport!r}")
    if token is not None and transport != "http":
        raise AgentError("a token guards the HTTP transport: stdio has no requests to refuse")
    log = AuditLog.open(audit_log) if audit_log is not None else None
    runner = loop.with_listeners(log) if log is not None else loop
    agent = ServedAgent(runner, start, name)
    server: Any = sdk.agent_server(name, description, agent.ask)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            from agents.serve.asgi import guarded, run_server

            def endpoint(address: str) -> None:
                if listening is not None:
                    listening(f"{address}/mcp")

            run_server(
                guarded(sdk.http_app(server, host), token=token), host, port, listening=endpoint
            )
    finally:
        if log is not None:
            log.close()


@attrs.frozen
class Waiting:
    """A run waiting for a human: its ``session`` (the run's execution id), what to ask
    the client's human (``questions``: a key, a message and the answer's JSON schema,
    MCP's form elicitation; none once the human dismissed a question) and, for a client
    that takes no elicitation, the answer that says what waits and how to go on."""

    session: str
    questions: tuple[tuple[str, str, dict[str, Any]], ...]
    text: str


class ServedAgent:
    """The served tool's answers: each call a run, or the continuation of a waiting one."""

    def __init__(self, runner: AgentLoop, start: AgentState | None, name: str) -> None:
        self._runner = runner
        self._first = start if start is not None else AgentState.initial()
        self._name = name
        self._waiting: collections.OrderedDict[str, AgentState] = collections.OrderedDict()

    async def ask(
        self,
        message: str,
        session: str,
        approvals: Mapping[str, Any],
        answers: Mapping[str, Any],
        elicited: Mapping[str, tuple[str, Any]] | None = None,
    ) -> str | list[Any] | Waiting:
        """The run's answer as text (text and parts, when it holds an image, audio or a
        document: ``sdk.content_blocks`` sends them as MCP content), or ``Waiting``.
        ``session`` continues a waiting run with the decisions in ``approvals`` and
        ``answers``, or ``elicited``: the client's
        answers to the last ``Waiting``'s questions, by key. (MCP's own types refuse a
        lone surrogate, text that is not Unicode: the answer shows U+FFFD for one, the
        audit log keeps the text.)"""
        dismissed = False
        if session:
            state = self._taken(session)
            try:
                state = _decided(state, approvals, answers)
                if elicited is not None:
                    state, dismissed = _elicited(state, elicited)
            except (ValueError, AgentError) as exc:
                self._keep(state)  # the run still waits: a better call continues it
                raise AgentError(str(exc)) from None
            if message:
                state = state.with_steering_message(message)
        elif not message:
            raise AgentError("message is required (or session, to continue a waiting run)")
        elif approvals or answers:
            raise AgentError("approvals and answers continue a waiting run: give its session")
        else:
            state = self._first.with_user_message(message)
        final = await self._runner.arun(state)
        if final.status is ExecutionStatus.FAILED:
            error = final.execution.error if final.execution is not None else None
            described = error.describe() if error is not None else "the run failed"
            raise AgentError(replace_lone_surrogates(described))
        if final.status is not ExecutionStatus.SUSPENDED:
            return _final_parts(final) or replace_lone_surrogates(_final_answer(final))
        session = self._keep(final)
        text = replace_lone_surrogates(_waiting_text(final, session, self._name))
        return Waiting(session=session, questions=() if dismissed else _questions(final), text=text)

    def _taken(self, session: str) -> AgentState:
        state = self._waiting.pop(session, None)  # a second call with it finds nothing
        if state is None:
            raise AgentError(
                f"no run waits as session {session!r} (it went on already, or this server "
                "was restarted since)"
            )
        return state

    def _keep(self, state: AgentState) -> str:
        """Keep a waiting run for a later call (the oldest forgotten past ``KEPT``)."""
        assert state.execution is not None
        assert state.execution.execution_id is not None
        session = state.execution.execution_id
        self._waiting[session] = state
        self._waiting.move_to_end(session)
        while len(self._waiting) > KEPT:
            self._waiting.popitem(last=False)
        return session


def _decided(
    state: AgentState, approvals: Mapping[str, Any], answers: Mapping[str, Any]
) -> AgentState:
    """``state`` with the decisions a call gave by call id (``ValueError`` for one that
    fits no waiting call)."""
    for call_id, approved in approvals.items():
        if type(approved) is not bool:
            raise InvalidArgument(f"approvals[{call_id!r}] must be true or false")
        state = state.with_approval(call_id, approved, "" if approved else "denied")
    for call_id, content in answers.items():
        if content is None:
            state = state.with_input(call_id, None, action="decline")
        else:
            state = state.with_input(call_id, content)
    return state


def _questions(state: AgentState) -> tuple[tuple[str, str, dict[str, Any]], ...]:
    """What to ask the client's human for the run to go on: each approval, each question."""
    asked = []
    for call in state.pending_approvals:
        message = f"The agent wants to call {_call_text(call)}. Approve?"
        asked.append((f"approve:{call.id}", message, _APPROVAL_SCHEMA))
    for question in state.pending_inputs:
        schema = deep_thaw(question.schema) or {"type": "object", "properties": {}}
        asked.append((f"answer:{question.call_id}", question.message, schema))
    return tuple(asked)


def _elicited(
    state: AgentState, elicited: Mapping[str, tuple[str, Any]]
) -> tuple[AgentState, bool]:
    """``state`` with the client's human's answers to ``_questions`` (by key: the action
    and content), and whether they dismissed any (then they are not asked again: the run
    waits for a later call). An approval declined is a denial; an answer that does not
    fit is a ``ValueError``."""
    dismissed = False
    for key, (action, content) in elicited.items():
        kind, _, call_id = key.partition(":")
        if kind == "approve":
            approved = content.get("approved") if action == "accept" and content else None
            if action == "decline":
                state = state.with_approval(call_id, False, "declined by the client's user")
            elif type(approved) is bool:
                reason = content.get("reason", "") if content else ""
                state = state.with_approval(
                    call_id, approved, reason if isinstance(reason, str) else ""
                )
            else:
                dismissed = True
        elif kind == "answer" and action in ("accept", "decline"):
            given = (content or {}) if action == "accept" else None
            state = state.with_input(call_id, given, action=action)
        else:
            dismissed = True
    return state, dismissed


def _waiting_text(state: AgentState, session: str, name: str) -> str:
    """What a waiting run waits for, and how to continue it (for a client that takes no
    elicitation)."""
    lines = [f"The run waits for a human (session {session!r})."]
    lines += [f"- call {c.id!r}: {_call_text(c)} needs approval." for c in state.pending_approvals]
    for question in state.pending_inputs:
        schema = json.dumps(deep_thaw(question.schema), sort_keys=True, ensure_ascii=False)
        lines.append(
            f"- call {question.call_id!r} asks: {question.message} "
            f"(answer: a JSON object fitting {schema})"
        )
    how = []
    if state.pending_approvals:
        how.append('approvals={"<call id>": true or false}')
    if state.pending_inputs:
        how.append('answers={"<call id>": {...}, or null to decline}')
    lines.append(
        f"To continue, call {name} again with session={json.dumps(session)} and "
        + " and ".join(how)
        + "."
    )
    return "\n".join(lines)


def _call_text(call: Any) -> str:
    """A call as a human reads it: ``name({"argument": value, ...})``."""
    arguments = json.dumps(deep_thaw(call.arguments), sort_keys=True, ensure_ascii=False)
    return f"{call.name}({arguments})"


def _final_parts(final: AgentState) -> list[Any] | None:
    """The final response's text and media, when it holds any (its reasoning is the
    agent's own: not sent)."""
    step = final.last_step
    response = step.response if step is not None and final.final_response is not None else None
    if response is None or isinstance(response.content, str):
        return None
    parts = [part for part in response.parts if not isinstance(part, ReasoningPart)]
    if not any(isinstance(part, MediaPart) for part in parts):
        return None
    return [replace_lone_surrogates(p.text) if isinstance(p, TextPart) else p for p in parts]


def _final_answer(final: AgentState) -> str:
    """The final response; a run that ended without one says how it ended."""
    if final.final_response is not None:
        return final.final_response
    status = final.status.value if final.status is not None else "unknown"
    reason = final.stop_reason.value if final.stop_reason is not None else "none"
    return f"The run ended {status} ({reason}) without a final answer."
