"""``AgentState``: the whole of an agent at one moment, as a frozen value."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import attrs
from pyrsistent.typing import PMap, PVector

from agents.errors import ConfigurationError, InvalidArgument, InvalidType
from agents.records import codec
from agents.records.arguments import listed
from agents.records.blobs import BlobStore, bind_blobs
from agents.records.codec import REFERENCES
from agents.records.compiled import replace_fields
from agents.records.content import PARTS, Part
from agents.records.context import AgentContext, MessageStore
from agents.records.error_info import ErrorInfo
from agents.records.execution import ApprovalDecision, ExecutionState, ExecutionStatus
from agents.records.frozen import (
    EMPTY_MAP,
    EMPTY_VECTOR,
    History,
    same_value,
    to_history,
    to_pmap,
    to_pvector,
)
from agents.records.goal import Goal
from agents.records.inputs import INPUT_ACTIONS, InputAnswer, InputRequest
from agents.records.messages import Message, Role, ToolCall
from agents.records.output import build_output, output_schema
from agents.records.record import Record
from agents.records.schema import compile_validator
from agents.records.signals import EMPTY_CONTINUATION, StopReason, StopSignal
from agents.records.step import AgentStep, Compaction, StepExecution, StepType, ToolExecution
from agents.records.timeline import TimelineRow, timeline_rows
from agents.records.usage import ZERO_USAGE, Usage

__all__ = ["AgentState"]

_NO_STEPS: History[StepExecution] = to_history(())
T = TypeVar("T")


@attrs.frozen(kw_only=True)
class AgentState(Record):
    """An agent: its conversation, configuration and current (or last) execution.

    Built with ``AgentState.initial(...)``; changed only through ``with_*`` methods; run by
    ``AgentLoop``. ``agent_id`` and ``created_at`` may be unset until the first run, which
    fills them from the loop's injected id factory and clock.
    """

    agent_id: str | None = None
    parent_agent_id: str | None = None
    context: AgentContext = attrs.field(factory=AgentContext, metadata={REFERENCES: True})
    llm_config: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=to_pmap)
    execution_count: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    execution: ExecutionState | None = None
    goal: Goal | None = None

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def initial(
        cls,
        system_prompt: str = "",
        agent_id: str | None = None,
        *,
        messages: Iterable[Message | str | Part | list[str | Part]] = (),
        metadata: Mapping[str, Any] | None = None,
        llm_config: Mapping[str, Any] | None = None,
        response_format: Any = None,
        parent_agent_id: str | None = None,
        created_at: datetime | None = None,
    ) -> AgentState:
        """A fresh agent; pure (no clock, no ids: the loop fills what is unset)."""
        given = listed(messages, "AgentState.initial: messages")
        context = AgentContext(
            system_prompt=system_prompt,
            metadata=to_pmap(metadata),
            response_format=output_schema(response_format),
        ).with_messages(to_history(_as_message(item) for item in given))
        return cls(
            agent_id=agent_id,
            parent_agent_id=parent_agent_id,
            context=context,
            llm_config=to_pmap(llm_config),
            created_at=created_at,
            updated_at=created_at,
        )

    @classmethod
    def from_json(cls, text: str | bytes, blobs: BlobStore | None = None) -> AgentState:
        """A state from its JSON; ``blobs``: the store its parts' bytes are read from,
        when they are needed (``BlobNotFound`` naming the hash when they are not there)."""
        state = codec.from_json(text, cls)
        if blobs is not None:
            bind_blobs(state, blobs)
        return state

    # -- changes ----------------------------------------------------------------------------

    def with_user_message(self, message: str | Part | Iterable[str | Part] | Message) -> AgentState:
        """A copy with a user message appended to the conversation: text, a part (an
        image...), a list of text and parts, or a user ``Message``."""
        if (given := _as_message(message)).role is not Role.USER:  # with_message: any role
            raise InvalidArgument(f"with_user_message takes no {given.role.value} message")
        return replace_fields(self, context=self.context.with_message(given))

    def with_message(self, message: Message) -> AgentState:
        """A copy with any message appended to the conversation."""
        return replace_fields(self, context=self.context.with_message(message))

    def with_messages(self, messages: Iterable[Message]) -> AgentState:
        """A copy with the conversation replaced."""
        context = self.context.with_messages(messages)
        return self if context is self.context else replace_fields(self, context=context)

    def with_goal(self, goal: Goal | None) -> AgentState:
        """A copy working on ``goal``: the loop offers a ``complete_goal`` tool and prompts the
        model to go on until it calls it or a budget is spent."""
        if goal is not None and not isinstance(goal, Goal):
            raise InvalidType(f"with_goal takes a Goal or None, not {type(goal).__name__}")
        return self if goal is self.goal else replace_fields(self, goal=goal)

    def with_steering_message(
        self, message: str | Part | Iterable[str | Part] | Message
    ) -> AgentState:
        """A copy with a message queued to join the conversation right before the next
        inference (delivered even mid-run)."""
        return replace_fields(self, context=self.context.with_steering(_as_message(message)))

    def with_follow_up(self, message: str | Message) -> AgentState:
        """A copy with a message queued to start a new step when the run would otherwise
        complete; queued follow-ups are delivered together."""
        return replace_fields(self, context=self.context.with_follow_up(_as_message(message)))

    def with_system_prompt(self, prompt: str) -> AgentState:
        """A copy with another system prompt."""
        context = self.context.with_system_prompt(prompt)
        return self if context is self.context else replace_fields(self, context=context)

    def with_metadata(self, key: str, value: Any) -> AgentState:
        """A copy with one metadata entry set."""
        context = self.context.with_metadata(key, value)
        return self if context is self.context else replace_fields(self, context=context)

    def with_context(self, context: AgentContext) -> AgentState:
        """A copy with another context."""
        if not isinstance(context, AgentContext):
            raise InvalidType(f"with_context takes an AgentContext, not {type(context).__name__}")
        return self if context is self.context else replace_fields(self, context=context)

    def with_llm_config(self, **config: Any) -> AgentState:
        """A copy with model options merged in (credentials belong to the driver, not here)."""
        merged = to_pmap({**self.llm_config, **config})
        return (
            self if same_value(merged, self.llm_config) else replace_fields(self, llm_config=merged)
        )

    def with_execution(self, execution: ExecutionState | None) -> AgentState:
        """A copy with another execution."""
        if execution is not None and not isinstance(execution, ExecutionState):
            raise InvalidType(
                f"with_execution takes an ExecutionState or None, not {type(execution).__name__}"
            )
        return self if execution is self.execution else replace_fields(self, execution=execution)

    def with_stop_signal(self, signal: StopSignal) -> AgentState:
        """A copy with a stop signal; creates a PENDING execution when there is none."""
        if not isinstance(signal, StopSignal):
            raise InvalidType(f"with_stop_signal takes a StopSignal, not {type(signal).__name__}")
        execution = self.execution or ExecutionState.pending()
        return replace_fields(self, execution=execution.with_stop_signal(signal))

    def with_execution_continued(self, continued: bool = True) -> AgentState:
        """A copy asking the loop to go on after the current step despite any signal."""
        execution = self.execution or ExecutionState.pending()
        continuation = execution.continuation.with_continuation_requested(continued)
        return self.with_execution(execution.with_continuation(continuation))

    def for_next_execution(self) -> AgentState:
        """A copy with the execution cleared, keeping the conversation."""
        return self if self.execution is None else replace_fields(self, execution=None)

    # -- reading ----------------------------------------------------------------------------

    @property
    def messages(self) -> History[Message]:
        """The conversation."""
        return self.context.store.messages

    @property
    def metadata(self) -> PMap[str, Any]:
        """The context's metadata."""
        return self.context.metadata

    @property
    def status(self) -> ExecutionStatus | None:
        """The status of the current execution, ``None`` before any."""
        return None if self.execution is None else self.execution.status

    @property
    def step_executions(self) -> History[StepExecution]:
        """The archived steps of the current execution."""
        return _NO_STEPS if self.execution is None else self.execution.step_executions

    @property
    def step_count(self) -> int:
        """How many steps the current execution archived."""
        return len(self.step_executions)

    @property
    def steps(self) -> list[AgentStep]:
        """The archived steps themselves."""
        return [step_execution.step for step_execution in self.step_executions]

    @property
    def last_step(self) -> AgentStep | None:
        """The last archived step, if any."""
        last = self.step_executions.last()
        return None if last is None else last.step

    @property
    def tool_executions(self) -> list[ToolExecution]:
        """Every tool execution of the current execution, in order."""
        return [e for se in self.step_executions for e in se.step.tool_executions]

    @property
    def last_tool_execution(self) -> ToolExecution | None:
        """The most recent tool execution, if any."""
        for step_execution in reversed(self.step_executions):
            executions = step_execution.step.tool_executions
            if executions:
                return executions[-1]
        return None

    @property
    def usage(self) -> Usage:
        """The usage of the current execution (sum of its steps)."""
        total = ZERO_USAGE
        for step_execution in self.step_executions:
            total = total + step_execution.step.usage
        return total

    @property
    def errors(self) -> list[ErrorInfo]:
        """Every error of the current execution: failed tools and step errors, in order."""
        found: list[ErrorInfo] = []
        for step_execution in self.step_executions:
            step = step_execution.step
            found.extend(e.error for e in step.tool_executions if e.failed and e.error)
            found.extend(step.errors)
        if self.execution is not None and self.execution.error is not None:
            error = self.execution.error
            if not any(item is error or item == error for item in found):
                found.append(error)
        return found

    @property
    def stop_signal(self) -> StopSignal | None:
        """The highest-priority stop signal of the current execution."""
        return None if self.execution is None else self.execution.continuation.highest_signal

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the execution stopped (always set once it is terminal)."""
        signal = self.stop_signal
        return None if signal is None else signal.reason

    @property
    def final_response(self) -> str | None:
        """The text of the last step if it is a final response with non-blank content."""
        step = self.last_step
        if step is None or step.response is None or step.step_type is not StepType.FINAL_RESPONSE:
            return None
        content = step.response.text
        return content if content.strip() else None

    @property
    def pending_approvals(self) -> PVector[ToolCall]:
        """Tool calls waiting for a human's approval (the execution is SUSPENDED)."""
        return EMPTY_VECTOR if self.execution is None else self.execution.pending_approvals

    def with_approval(self, call_id: str, approved: bool, reason: str = "") -> AgentState:
        """A copy with a decision about a pending call; running it then goes on without
        asking the model again: approved calls run, denied ones are recorded as blocked."""
        execution = self.execution
        if execution is None or not any(c.id == call_id for c in execution.pending_approvals):
            pending = [c.id for c in self.pending_approvals]
            raise InvalidArgument(f"no pending approval for call {call_id!r} (pending: {pending})")
        decisions = [d for d in execution.approvals if d.call_id != call_id]
        decision = ApprovalDecision(call_id=call_id, approved=approved, reason=reason)
        return replace_fields(
            self, execution=replace_fields(execution, approvals=to_pvector([*decisions, decision]))
        )

    @property
    def pending_inputs(self) -> PVector[InputRequest]:
        """Questions tool calls asked a human and nobody answered yet (the execution is
        SUSPENDED): an MCP server's elicitation, a tool's ``ToolContext.ask``."""
        execution = self.execution
        if execution is None or execution.pending_inputs is None:
            return EMPTY_VECTOR
        return execution.pending_inputs

    def with_input(
        self, call_id: str, content: Mapping[str, Any] | None = None, *, action: str = "accept"
    ) -> AgentState:
        """A copy with the answer to call ``call_id``'s pending question: ``accept`` with
        ``content`` (a JSON object fitting the question's schema), or ``decline`` or
        ``cancel`` (no content). Once every question is answered, running the state makes
        the calls that asked again, from their start, with the answers; the step's other
        calls keep their results and the model is not asked again."""
        execution = self.execution
        pending = self.pending_inputs
        request = next((r for r in pending if r.call_id == call_id), None)
        if execution is None or request is None:
            waiting = [r.call_id for r in pending]
            raise InvalidArgument(f"no pending question for call {call_id!r} (pending: {waiting})")
        if action not in INPUT_ACTIONS:
            raise InvalidArgument(f"action must be one of {sorted(INPUT_ACTIONS)}, got {action!r}")
        if action != "accept":
            if content is not None:
                raise InvalidArgument(f"an answer that is {action!r} has no content")
        elif content is None:
            content = {}
        elif not isinstance(content, Mapping):
            raise InvalidArgument(f"the content of an answer is a JSON object, got {content!r}")
        answer = InputAnswer(request=request, action=action, content=content)
        if answer.content is not None and request.schema:
            problem = _misfit(answer.content, request.schema)
            if problem is not None:
                raise InvalidArgument(f"the answer does not fit the question's schema: {problem}")
        left = [r for r in pending if r is not request]
        return replace_fields(
            self,
            execution=replace_fields(
                execution,
                pending_inputs=to_pvector(left) if left else None,
                inputs=to_pvector([*(execution.inputs or ()), answer]),
            ),
        )

    @property
    def final_output(self) -> Any:
        """The validated structured answer (JSON data) when a response format was asked for."""
        return None if self.execution is None else self.execution.final_output

    def output_as(self, cls: type[T]) -> T | None:
        """``final_output`` as an instance of ``cls`` (an attrs class or dataclass)."""
        value = self.final_output
        return None if value is None else build_output(cls, value)

    def with_response_format(self, spec: Any) -> AgentState:
        """A copy asking for structured output (a JSON schema, or a class to derive one)."""
        context = self.context.with_response_format(output_schema(spec))
        return self if context is self.context else replace_fields(self, context=context)

    # -- history queries (docs/design/auditing.md)
    # ----------------------------------------------------------

    def timeline(self, start: int = 1) -> list[TimelineRow]:
        """One row per step of the current execution (from step ``start``); the last row of
        a finished one carries the stop reason."""
        if type(start) is not int:
            raise InvalidType(f"timeline takes an int start, not {type(start).__name__}")
        if self.execution is None:
            return []
        return timeline_rows(self.execution, self.stop_reason, start)

    def find_tool_executions(
        self,
        name: str | None = None,
        failed: bool | None = None,
        blocked: bool | None = None,
        step: int | None = None,
    ) -> list[ToolExecution]:
        """Tool executions of the current execution matching every given criterion;
        ``failed=True`` means an error that is not a block."""
        found = []
        for step_execution in self.step_executions:
            if step is not None and step_execution.number != step:
                continue
            for execution in step_execution.step.tool_executions:
                if name is not None and execution.name != name:
                    continue
                if failed is not None and execution.failed != failed:
                    continue
                if blocked is not None and execution.blocked != blocked:
                    continue
                found.append(execution)
        return found

    def at_step(self, k: int) -> AgentState:
        """The state as it was after step ``k`` of the current execution.

        For ``k`` below the step count the result is IN_PROGRESS and running it continues
        at step ``k + 1``; ``at_step(n)`` of a finished execution is the state itself. Only
        messages, steps and signals are rewound; the steps share structure with this state.
        """
        if type(k) is not int:
            raise InvalidType(f"at_step takes an int, not {type(k).__name__}")
        execution = self.execution
        count = self.step_count
        if execution is None or not 0 <= k <= count:
            raise InvalidArgument(f"at_step({k}): the execution has {count} steps")
        if k == count:
            return self
        following = execution.step_executions[k].step  # step k + 1 (0-based index k)
        store = self.context.store
        if store.buffer or store.summary:  # compaction may have moved messages since
            steps = execution.step_executions
            for index in range(count - 1, k, -1):
                store = _rewound(store, steps[index].step.compaction)
        length = following.conversation_length
        if length is None:  # the request sent the whole conversation
            length = _sent_conversation(following.input_messages, store.messages)
        store = replace_fields(store, messages=store.messages.prefix(length))
        store = _rewound(store, following.compaction)
        continuation = (
            execution.step_executions[k - 1].continuation if k > 0 else EMPTY_CONTINUATION
        )
        rewound = replace_fields(
            execution,
            status=ExecutionStatus.IN_PROGRESS,
            completed_at=None,
            step_executions=execution.step_executions.prefix(k),
            continuation=replace_fields(continuation, continuation_requested=False)
            if continuation.continuation_requested
            else continuation,
            error=None,
            final_output=None,
        )
        return replace_fields(self, context=self.context.with_store(store), execution=rewound)

    def fork(self, at_step: int | None = None) -> AgentState:
        """A new agent continuing this one's history (from ``at_step`` when given): the
        loop gives it new ids at its next run; ``parent_agent_id`` names this agent."""
        source = self if at_step is None else self.at_step(at_step)
        execution = source.execution
        if execution is not None:
            execution = replace_fields(execution, execution_id=None, status=ExecutionStatus.PENDING)
        return replace_fields(
            source,
            agent_id=None,
            parent_agent_id=self.agent_id,
            created_at=None,
            updated_at=None,
            execution=execution,
            execution_count=0,
        )

    @property
    def should_stop(self) -> bool:
        """The should-stop chain of docs/design/loop.md step 4, applied to the state as it is."""
        execution = self.execution
        if execution is None:
            return True
        if execution.status.terminal:
            return True
        continuation = execution.continuation
        if continuation.stop_signals and not continuation.continuation_requested:
            return True
        if continuation.continuation_requested:
            return False
        last = self.last_step
        if last is None:
            return False
        return not last.requested_tool_calls

    @property
    def execution_duration(self) -> float | None:
        """Seconds from the execution's start to its end (or to its last step)."""
        execution = self.execution
        if execution is None or execution.started_at is None:
            return None
        end = execution.completed_at
        if end is None:
            last = execution.step_executions.last()
            end = None if last is None else last.completed_at
        return None if end is None else (end - execution.started_at).total_seconds()


def _as_message(item: str | Part | Iterable[str | Part] | Message) -> Message:
    """A message as given, or a user message of text, a part, or a list of them."""
    if isinstance(item, Message):
        return item
    if isinstance(item, str | list | tuple) or type(item) in PARTS:
        return Message.user(item)
    raise InvalidType(
        f"expected a Message, text, a part or a list of text and parts, got {type(item).__name__}"
    )


def _sent_conversation(sent: History[Message], conversation: History[Message]) -> int:
    """How many conversation messages a request that sent the whole conversation held:
    its messages after the head (system prompt, summary, buffer). Judged by value, so
    equal states rewind alike however their requests' histories are split into head and
    body (a store builds them whole)."""
    body = sent.body()
    if body.is_prefix_of(conversation):  # split as the loop splits it: shares the chunks
        return len(body)
    items = tuple(sent)
    first = conversation[0] if conversation else None
    for start in range(len(items) + 1):
        rest = len(items) - start
        if rest == 0 or (
            items[start] == first
            and rest <= len(conversation)
            and items[start:] == tuple(conversation.prefix(rest))
        ):
            return rest
    return 0  # unreachable: an empty rest always matches


def _rewound(store: MessageStore, compaction: Compaction | None) -> MessageStore:
    """The message sections as they were before ``compaction``."""
    if compaction is None:
        return store
    if compaction.summarizing:
        store = replace_fields(
            store, buffer=compaction.summarized, summary=compaction.previous_summary
        )
    moved = compaction.moved
    if moved:
        buffer = list(store.buffer)
        keep = len(buffer) - moved
        store = replace_fields(
            store,
            buffer=to_history(buffer[:keep]),
            messages=to_history(buffer[keep:]).extend(store.messages),
        )
    return store


def _misfit(content: Any, schema: Mapping[str, Any]) -> str | None:
    """Why ``content`` does not fit ``schema`` (``None``: it fits, or the schema uses
    more than the subset checked here: the asker checks it then)."""
    try:
        validate = compile_validator(schema, "content")
    except ConfigurationError:  # not a schema this library checks: the asker checks it
        return None
    return validate(content, "content")[1]
