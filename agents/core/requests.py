"""Each step's request: the messages the model is sent and the ``InferenceRequest``."""

from __future__ import annotations

from typing import Any, Final

from agents.records.frozen import EMPTY_MAP, History
from agents.records.inference import InferenceRequest
from agents.records.messages import Message
from agents.records.record import maker
from agents.records.state import AgentState

__all__ = ["RequestCompiler"]

_make_request: Final = maker(InferenceRequest)


class RequestCompiler:
    """Compiles each step's messages and request, caching what rarely changes: the head
    (system prompt, summary, buffer) and the model options."""

    __slots__ = (
        "buffer",
        "defaults",
        "goal_schemas",
        "head",
        "llm_config",
        "message_compiler",
        "model",
        "options",
        "prompt",
        "schemas",
        "summary",
    )

    def __init__(
        self, schemas: Any, goal_schemas: Any = None, messages: Any = None, defaults: Any = None
    ) -> None:
        # What the driver sends with every request (its model and settings): the state's
        # llm_config goes over it, and the request carries both, so that what a provider
        # receives is what is recorded, traced and compared.
        self.defaults = defaults if defaults else EMPTY_MAP
        self.message_compiler = messages
        self.schemas = schemas
        self.goal_schemas = schemas if goal_schemas is None else goal_schemas
        self.prompt: str | None = None
        self.summary: object = None
        self.buffer: object = None
        self.head: tuple[Message, ...] = ()
        self.llm_config: object = None
        self.model: str | None = None
        self.options: Any = EMPTY_MAP

    def compile(self, state: AgentState) -> tuple[History[Message], InferenceRequest]:
        context = state.context
        store = context.store
        if (
            context.system_prompt != self.prompt
            or store.summary is not self.summary
            or store.buffer is not self.buffer
        ):
            self.prompt, self.summary, self.buffer = (
                context.system_prompt,
                store.summary,
                store.buffer,
            )
            self.head = context.head()
        llm_config = state.llm_config
        if llm_config is not self.llm_config:
            self.llm_config = llm_config
            if self.defaults:
                llm_config = self.defaults.update(llm_config)
            self.model = llm_config.get("model") if llm_config else None
            self.options = llm_config.discard("model") if llm_config else EMPTY_MAP
        if self.message_compiler is None:
            messages = store.messages.with_head(self.head)
        else:
            messages = self.message_compiler.compile(context)
        request = _make_request(
            messages,
            self.goal_schemas if state.goal is not None and state.goal.active else self.schemas,
            self.model,
            context.response_format,
            self.options,
        )
        return messages, request
