"""A tool call in flight on an MCP server, and what the server's requests within it are
answered with: its sampling requests by the run's model (``agents.mcp.sampling``), its
elicitation requests by a human (the run suspends until one answers: docs/design/sessions.md).

An elicitation is the call's question for a human (``ToolContext.ask``): when the run
holds the answer to the call's next question (the call is being made again after the
run was resumed with it), the server receives that answer; else the question is noted,
the server is told the client cannot answer now, and the call ends as ``InputRequired``
— the run suspends with the question in ``state.pending_inputs``. Questions are matched
to answers by their order within the call.
"""

from __future__ import annotations

import contextvars
from typing import Any

from agents.errors import AgentError
from agents.mcp import sdk
from agents.mcp.sampling import Sampler
from agents.records.frozen import deep_thaw
from agents.records.inputs import InputRequest
from agents.tools.outcomes import InputRequired
from agents.tools.tool import ToolContext

__all__ = ["CallScope", "current_call", "within_call"]

_CURRENT: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "agents_mcp_call", default=None
)


class CallScope:
    """One call in flight: its ``ToolContext``, its sampler (``None``: sampling off), and
    the question it asked that the run has no answer for yet (``question``)."""

    __slots__ = ("context", "label", "question", "sampler")

    def __init__(self, context: ToolContext, sampler: Sampler | None, label: str) -> None:
        self.context = context
        self.sampler = sampler
        self.label = label
        self.question: InputRequest | None = None

    def elicit(self, request: sdk.ElicitationRequest) -> tuple[str, dict[str, Any] | None]:
        """The answer the run holds for the call's next question (an action and its
        content), or the question noted and an ``AgentError`` (the server's error)."""
        if self.question is not None:
            raise AgentError("a question of this call already waits for a human")
        try:
            answer = self.context.ask(
                request.message, request.schema, source=self.label, url=request.url
            )
        except InputRequired as waiting:
            self.question = waiting.request
            raise AgentError(
                "the question was passed on to a human; the call will be made again with the answer"
            ) from None
        content = deep_thaw(answer.content) if answer.content is not None else None
        return answer.action, content

    def ended(self, value: Any) -> Any:
        """The call's value, or ``InputRequired`` when it asked a question no one has
        answered yet (whatever the server made of being told so)."""
        if self.question is not None:
            raise InputRequired(self.question)
        return value


def current_call() -> CallScope | None:
    """The call being made in this task (``within_call``), if any."""
    return _CURRENT.get()


async def within_call(scope: CallScope | None, work: Any) -> Any:
    """Await ``work`` (a call to the server) with ``scope`` answering the server's
    requests made within it."""
    token = _CURRENT.set(scope)
    try:
        return await work
    finally:
        _CURRENT.reset(token)
