"""A server's sampling requests (``sampling/createMessage``), answered by the model of the
run whose tool call the server is serving.

Each request is a run of its own — one step, no tools, the run's driver, clock and
listeners — kept on the tool call's execution (``execution.child``, like a sub-agent's
run), so the audit log has what the server asked and what the model answered, a replay
takes the call's result from the record without the server or the model, and the
model's usage counts in the step. Its ids derive from the call (``<execution id>.<step>.
<call id>.sampling``). A call answers one sampling request: a second one in the same call
is refused (the server receives an error), so that nothing asked goes unrecorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from agents.durable.workflow import WorkflowIds
from agents.errors import AgentError
from agents.mcp import sdk
from agents.records.messages import Message, Role
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop
from agents.tools.tool import ToolContext

__all__ = ["SAMPLING_KEY", "Sampler"]

SAMPLING_KEY: Final = "agents.mcp_sampling"
"""In a sampling run's metadata: the server that asked (``{"server": label}``)."""

_ROLES: Final = {"user": Role.USER, "assistant": Role.ASSISTANT}


class Sampler:
    """Answers the sampling requests of one tool call with ``loop``'s driver."""

    __slots__ = ("_context", "_forward", "_label", "_lock", "_loop", "child")

    def __init__(
        self,
        loop: AgentLoop,
        context: ToolContext,
        forward: Callable[[Any], None] | None,
        label: str,
    ) -> None:
        self._loop = loop
        self._context = context
        self._forward = forward
        self._label = label
        self._lock = threading.Lock()
        self.child: AgentState | None = None  # the sampling run, once there was one

    def sample(self, request: sdk.SamplingRequest) -> tuple[str, str]:
        """The model's answer to ``request`` and the model's name (blocking: the run)."""
        with self._lock:
            if self.child is not None:
                raise AgentError(
                    "one sampling request per tool call: the server asked a second time"
                )
            self.child = self._start(request)  # taken: a request racing this one is refused
        execution_id, step, call_id = self._context.idempotency_key
        runner = AgentLoop(
            self._loop.driver,
            max_steps=1,
            clock=self._loop.clock,
            ids=WorkflowIds(f"{execution_id}.{step}.{call_id}.sampling"),
            listeners=(self._forward,) if self._forward is not None else (),
        )
        final = runner.run(self.child)
        self.child = final
        if final.final_response is None:
            error = final.execution.error if final.execution is not None else None
            why = f": {error.type}" if error is not None else ""
            raise AgentError(f"the model did not answer {self._label}'s sampling request{why}")
        return final.final_response, _model_of(self._loop.driver)

    def _start(self, request: sdk.SamplingRequest) -> AgentState:
        settings: dict[str, Any] = {"max_tokens": request.max_tokens}
        if request.temperature is not None:
            settings["temperature"] = request.temperature
        if request.stop:
            settings["stop"] = request.stop
        messages = [
            Message(role=_ROLES.get(role, Role.USER), content=text)
            for role, text in request.messages
        ]
        return AgentState.initial(
            request.system_prompt,
            messages=messages,
            llm_config=settings,
            parent_agent_id=self._context.state.agent_id,
            metadata={SAMPLING_KEY: {"server": self._label}},
        )


def _model_of(driver: Any) -> str:
    model = getattr(driver, "model", None)
    return model if isinstance(model, str) and model else type(driver).__name__
