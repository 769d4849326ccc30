"""Context compaction: moving old messages to the buffer and summarising it.

A ``Compactor`` looks at the context before each step's request and plans a compaction:
how many of the oldest conversation messages move to the end of the ``buffer`` section,
and whether the buffer (with the previous summary) goes to the model to be summarised. The
machine carries the plan out: it moves the messages, asks for the summary as an ``Infer``
effect (so it passes the loop's interceptors and driver, is recorded, retried and made
durable like any model call), replaces the ``summary`` section with the answer and empties
the buffer, and records what it did as the step's ``Compaction``. Replays answer the
summary from that record (``ReplayDriver``), and ``RecordedCompactions`` repeats a recorded
run's compactions where its policy is not at hand (``agents replay``).

``Summarization`` is the policy that ships: keep the conversation within
``max_message_tokens`` and the buffer within ``max_buffer_tokens``. Plans are pure
functions of the context: tokens are counted by a function of the message (by default the
character estimate of ``agents.core.compilers``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol, runtime_checkable

from agents.core.compilers import CachedCount, estimate_tokens
from agents.core.run import MachineFailure
from agents.errors import ConfigurationError
from agents.records.compiled import replace_fields
from agents.records.context import AgentContext, MessageStore
from agents.records.effects import Failed, Infer
from agents.records.error_info import ErrorInfo
from agents.records.frozen import History, deep_thaw, to_history
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message, Role
from agents.records.redaction import without_addresses
from agents.records.state import AgentState
from agents.records.step import Compaction

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_HEADING",
    "CompactionPlan",
    "Compactor",
    "RecordedCompactions",
    "Summarization",
    "apply_compaction",
    "compact",
    "plan_compaction",
    "summary_message",
    "summary_request",
    "transcript",
]

DEFAULT_SUMMARY_PROMPT: Final = (
    "You compress a conversation between a user, an assistant and its tools so that the "
    "assistant can carry on without it. Write a concise summary in plain prose: the user's "
    "goals and instructions, facts learned (tool results that matter, with their values), "
    "decisions made, and what is still open. Do not add anything that is not in the text."
)
SUMMARY_HEADING: Final = "Summary of the earlier conversation:"

Summarizer = Callable[[Sequence[Message], Sequence[Message]], InferenceRequest]
"""``(previous_summary, buffer) -> InferenceRequest``: the summariser's request."""


class CompactionPlan(NamedTuple):
    """Move ``move`` messages from the conversation's front to the buffer; then, when
    ``request`` is set, summarise the buffer with it."""

    move: int = 0
    request: InferenceRequest | None = None


@runtime_checkable
class Compactor(Protocol):
    """Plans the compaction before step ``step``'s request (``None``: nothing to do)."""

    def plan(self, context: AgentContext, step: int) -> CompactionPlan | None: ...


def transcript(previous_summary: Sequence[Message], buffer: Sequence[Message]) -> str:
    """The text a summariser reads: the previous summary, then one line per message (tool
    calls with their arguments as sorted JSON)."""
    lines = [m.text.removeprefix(SUMMARY_HEADING).strip() for m in previous_summary]
    if lines:
        lines = ["Summary so far:", *lines, "", "Conversation since:"]
    for message in buffer:
        if message.role is Role.TOOL:
            lines.append(f"tool {message.name or message.tool_call_id}: {message.text}")
            continue
        if message.text:
            lines.append(f"{message.role.value}: {message.text}")
        for call in message.tool_calls:
            arguments = json.dumps(deep_thaw(call.arguments), sort_keys=True, ensure_ascii=False)
            lines.append(f"{message.role.value} called {call.name}({arguments})")
    return "\n".join(lines)


def summary_request(
    previous_summary: Sequence[Message],
    buffer: Sequence[Message],
    *,
    prompt: str = DEFAULT_SUMMARY_PROMPT,
    model: str | None = None,
) -> InferenceRequest:
    """The default summariser's request: ``prompt`` as the system message and the
    ``transcript`` as the user's; no tools."""
    return InferenceRequest(
        messages=(Message.system(prompt), Message.user(transcript(previous_summary, buffer))),
        tools=(),
        model=model,
    )


def summary_message(response: InferenceResponse) -> Message:
    """The summary section's message made from the summariser's answer: a system message
    under ``SUMMARY_HEADING``, tagged ``{"agents": "summary"}`` in its metadata."""
    text = response.text.strip()
    return Message.system(f"{SUMMARY_HEADING}\n{text}").with_metadata("agents", "summary")


class Summarization:
    """Keeps the conversation within ``max_message_tokens``: the oldest messages move to
    the buffer (never leaving a tool result without its call, always keeping the newest
    message), and once the buffer holds more than ``max_buffer_tokens`` it is summarised,
    with the previous summary, into a new one.

    ``summarizer`` makes the summariser's request from ``(previous_summary, buffer)``: the
    default is ``summary_request`` with ``prompt`` and ``model`` (``None``: the driver's
    model). ``count`` counts a message's tokens (``estimate_tokens``, or
    ``LiteLLMDriver.token_counter()``).
    """

    __slots__ = (
        "_counted",
        "_left",
        "count",
        "max_buffer_tokens",
        "max_message_tokens",
        "model",
        "prompt",
        "summarizer",
    )

    def __init__(
        self,
        max_message_tokens: int,
        max_buffer_tokens: int,
        summarizer: Summarizer | None = None,
        *,
        prompt: str = DEFAULT_SUMMARY_PROMPT,
        model: str | None = None,
        count: Callable[[Message], int] = estimate_tokens,
    ) -> None:
        _check_int("max_message_tokens", max_message_tokens, 1)
        _check_int("max_buffer_tokens", max_buffer_tokens, 0)
        if summarizer is not None and not callable(summarizer):
            raise ConfigurationError(
                f"summarizer must be a function (previous_summary, buffer) -> "
                f"InferenceRequest, got {summarizer!r}"
            )
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigurationError("prompt must be a non-empty string")
        if model is not None and (not isinstance(model, str) or not model):
            raise ConfigurationError(f"model must be a model name or None, got {model!r}")
        if not callable(count):
            raise ConfigurationError(f"count must be callable, got {count!r}")
        self.max_message_tokens = max_message_tokens
        self.max_buffer_tokens = max_buffer_tokens
        self.summarizer = summarizer
        self.prompt = prompt
        self.model = model
        self.count = count
        self._counted = CachedCount(count)
        # what the last plan left in the conversation, with its tokens: the next request's
        # conversation usually starts with exactly those messages (then grew)
        self._left: tuple[tuple[Message, ...], int] | None = None

    def plan(self, context: AgentContext, step: int) -> CompactionPlan | None:
        """Move what overflows; summarise the buffer if it then overflows too."""
        store = context.store
        messages = store.messages
        count = self._counted
        items, total = self._tokens(messages)
        move = _cut(messages, count, total, self.max_message_tokens)
        self._left = (items[move:], total - sum(map(count, items[:move])))
        moved = messages.prefix(move)
        tokens = count.total(store.buffer) + count.total(moved)
        if not (store.buffer or moved) or tokens <= self.max_buffer_tokens:
            return CompactionPlan(move) if move else None
        buffer = [*store.buffer, *moved]
        summary = tuple(store.summary)
        if self.summarizer is not None:
            request = self.summarizer(summary, tuple(buffer))
            if not isinstance(request, InferenceRequest):
                raise ConfigurationError(
                    f"summarizer {self.summarizer!r} returned {type(request).__name__}, "
                    "expected an InferenceRequest"
                )
        else:
            request = summary_request(summary, buffer, prompt=self.prompt, model=self.model)
        return CompactionPlan(move, request)

    def _tokens(self, messages: History[Message]) -> tuple[tuple[Message, ...], int]:
        """The conversation's messages and tokens. Counted from what the last plan left
        when the conversation starts with those very messages (compared at C speed, by
        identity first; a move rebuilds the conversation's chunks, so counting by chunks
        would look up every message again), else by chunks."""
        items = tuple(messages)
        left = self._left
        if left is not None:
            known, tokens = left
            size = len(known)
            if len(items) >= size and items[:size] == known:
                return items, tokens + sum(map(self._counted, items[size:]))
        return items, self._counted.total(messages)

    def __repr__(self) -> str:
        return f"Summarization({self.max_message_tokens}, {self.max_buffer_tokens})"


def _check_int(name: str, value: object, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ConfigurationError(f"{name} must be an int >= {least}, got {value!r}")


def _cut(
    messages: History[Message], count: Callable[[Message], int], total: int, budget: int
) -> int:
    """How many of the oldest messages to move so that the rest (``total`` tokens) fits
    ``budget``: the rest keeps the newest message and never starts with a tool result
    (its call would be in the buffer). When no such cut fits, the nearest smaller one."""
    if total <= budget:
        return 0
    last = len(messages) - 1
    wanted = 0
    for message in messages:  # oldest first, as far as needed
        if wanted >= last or total <= budget:
            break
        total -= count(message)
        wanted += 1
    for cut, message in enumerate(messages.items_from(wanted), start=wanted):
        if message.role is not Role.TOOL:
            return cut
    for cut in range(wanted - 1, 0, -1):
        if messages[cut].role is not Role.TOOL:
            return cut
    return 0


class RecordedCompactions:
    """The compactions of a recorded run, step by step: with a ``ReplayDriver`` it repeats
    a run whose compaction policy is not at hand (``agents replay`` uses it)."""

    __slots__ = ("_plans",)

    def __init__(self, plans: Mapping[int, CompactionPlan]) -> None:
        self._plans = dict(plans)

    @classmethod
    def from_state(cls, state: AgentState) -> RecordedCompactions:
        """The compactions recorded on ``state``'s steps (a step suspended for approvals
        included)."""
        steps = [(se.number, se.step) for se in state.step_executions]
        execution = state.execution
        if execution is not None and execution.current_step is not None:
            steps.append((len(steps) + 1, execution.current_step))  # suspended for approvals
        plans = {}
        for number, step in steps:
            compaction = step.compaction
            if compaction is not None:
                plans[number] = CompactionPlan(compaction.moved, compaction.request)
        return cls(plans)

    def __bool__(self) -> bool:
        return bool(self._plans)

    def plan(self, context: AgentContext, step: int) -> CompactionPlan | None:
        """What step ``step`` of the record did."""
        return self._plans.get(step)

    def __repr__(self) -> str:
        return f"RecordedCompactions(steps={sorted(self._plans)})"


# -- the machine's side --------------------------------------------------------------------

_EMPTY: Final[History[Message]] = to_history(())


def plan_compaction(compactor: Any, context: AgentContext, step: int) -> CompactionPlan | None:
    """The compactor's plan for step ``step``, checked; its failures become data."""
    try:
        plan = compactor.plan(context, step)
    except Exception as exc:
        raise MachineFailure(
            ErrorInfo.from_exception(exc).with_details({"compactor": repr(compactor)})
        ) from exc
    if plan is None:
        return None
    moved = plan.move if type(plan) is CompactionPlan else None
    if (
        type(moved) is not int
        or not 0 <= moved < max(len(context.store.messages), 1)
        or not (plan.request is None or type(plan.request) is InferenceRequest)
    ):
        raise MachineFailure(
            ErrorInfo(
                type="CompactionError",
                message=without_addresses(
                    f"compactor {compactor!r} returned {plan!r}: expected a "
                    "CompactionPlan moving fewer messages than the conversation holds"
                ),
                details={"step": step},
            )
        )
    return plan if moved or plan.request is not None else None


def compact(
    state: AgentState,
    plan: CompactionPlan,
    agent_id: str | None,
    execution_id: str,
    step: int,
) -> Generator[Infer, Any, tuple[AgentState, Compaction]]:
    """Carry ``plan`` out: move the messages, then ask for the summary (an ``Infer``
    effect) and put it in place of the buffer. A failed summary is recorded in the
    returned ``Compaction``, the buffer left as it was; so is an answer without text (a
    tool call, or nothing), kept with its error."""
    store = _moved(state.context.store, plan.move)
    compaction = Compaction(moved=plan.move)
    if plan.request is not None:
        result = yield Infer(plan.request, agent_id, execution_id, step)
        failed = type(result) is Failed
        compaction = replace_fields(
            compaction,
            summarized=store.buffer,
            previous_summary=store.summary,
            request=plan.request,
            response=None if failed else result,
            error=result.error if failed else _no_summary(result, step),
        )
    return apply_compaction(state, compaction), compaction


def _no_summary(response: InferenceResponse, step: int) -> ErrorInfo | None:
    """Why the summariser's answer is no summary: it holds no text (a tool call, or
    nothing), and an empty summary would stand for the messages it was to sum up."""
    if response.text.strip():
        return None
    calls = ", ".join(call.name for call in response.tool_calls)
    said = f"called {calls}" if calls else "answered no text"
    return ErrorInfo(
        type="CompactionError",
        message=f"the summariser {said}: no summary to stand for the earlier messages",
        details={"step": step},
    )


def apply_compaction(state: AgentState, compaction: Compaction) -> AgentState:
    """``state`` with a recorded compaction done again: the messages moved, and the
    summary (when one was made: an answer with an error is none) in place of the buffer."""
    store = _moved(state.context.store, compaction.moved)
    if compaction.response is not None and compaction.error is None:
        store = replace_fields(
            store, buffer=_EMPTY, summary=to_history((summary_message(compaction.response),))
        )
    return state.with_context(state.context.with_store(store))


def _moved(store: MessageStore, count: int) -> MessageStore:
    """``count`` messages moved from the conversation's front to the buffer's end."""
    if not count:
        return store
    messages = store.messages
    return replace_fields(
        store,
        messages=History(messages.items_from(count)),
        buffer=store.buffer.extend(messages.prefix(count)),
    )
