"""The AG-UI endpoint of ``agents serve`` (``POST /ag-ui``, the ``ag-ui-protocol`` package's
types, the only module importing them): ``RunAgentInput`` in, AG-UI events out, so that
AG-UI front-ends (CopilotKit and others) talk to an ``agents`` agent.

The conversation is the server's session, keyed by ``threadId`` — never the client's copy of
the history: of the input's messages only the newest user message is taken (a client that
dropped a streamed tool call cannot corrupt the next turn), and only once (its id kept in
its metadata, ``MESSAGE_ID``: a run asking for it again is refused). Calls waiting for
approval end a run with an ``interrupt`` outcome, one ``Interrupt`` per call (its id the
call's id); a ``resume`` answers any of them — ``resolved`` with ``{"approved": true or
false, "reason": text}`` (read as ``POST /approvals`` reads a decision: anything else is a
422 and decides nothing), ``cancelled`` denies (its payload, if any, an object) — several in
one request; a call no entry answers stays waiting. A tool call's question for a human
(``state.pending_inputs``) is an ``Interrupt`` too (reason ``input``, its ``responseSchema``
the question's schema), answered by ``resolved`` with the answer as payload, or
``cancelled`` (``{"action": "decline"}`` declines, else the question is dismissed).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final

from ag_ui.core import (
    Interrupt,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic import ValidationError

from agents.errors import ContentError, InvalidArgument, SessionNotFound
from agents.persistence.runtime import SessionRuntime
from agents.records.content import PART_KINDS, FilePart
from agents.records.frozen import deep_thaw
from agents.records.json_text import replace_lone_surrogates
from agents.records.messages import Message, Role
from agents.records.state import AgentState
from agents.serve.agui_runs import MARK, AgUiRuns
from agents.serve.runs import (
    ENDED,
    DecisionError,
    Runs,
    approval_decision,
    number_of,
    session_id_problem,
)

__all__ = ["AgUiInputError", "AgUiRuns", "agui_run"]


class AgUiInputError(InvalidArgument):
    """A ``RunAgentInput`` that is not one, or asks for nothing this server can do."""


def parse_input(data: Any) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise AgUiInputError(f"not a RunAgentInput: {where}: {first.get('msg')}") from None


def _latest_user_message(run_input: RunAgentInput) -> Message | None:
    """The newest user message, its AG-UI id in its metadata (``MESSAGE_ID``): its text,
    or its text and media as parts (an image, audio or a document by its inline bytes or
    its URL; a video as a ``FilePart``). A provider's file handle, which only that
    provider can read, is refused."""
    for position in range(len(run_input.messages) - 1, -1, -1):
        message = run_input.messages[position]
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            content: Any = message.content
        else:
            content = [
                _part(part, f"messages[{position}].content[{index}]")
                for index, part in enumerate(message.content)
            ]
            if not any(content):
                return None
        return Message.user(content).with_metadata(MESSAGE_ID, message.id)
    return None


def _taken(state: AgentState, message: Message) -> bool:
    """Whether the thread's conversation, or the messages queued for its next inference
    (sent while calls waited), hold ``message``'s AG-UI id already: a run took it (a client
    asking to answer it again, or sending its history back without a new message, would
    have it twice)."""
    wanted = message.metadata[MESSAGE_ID]
    return any(
        taken.metadata.get(MESSAGE_ID) == wanted
        for taken in (*state.messages, *state.context.steering)
        if taken.role is Role.USER
    )


def _part(part: Any, where: str) -> Any:
    """An AG-UI input part as a part of a message (text as text)."""
    if part.type == "text":
        return part.text
    source = part.source
    if source.type == "file":
        raise AgUiInputError(
            f"{where}: a provider's file handle cannot be sent on: give the bytes or a URL"
        )
    kind = PART_KINDS.get(part.type, FilePart)
    try:
        if source.type == "data":
            return kind.from_url(f"data:{source.mime_type};base64,{source.value}")
        return kind.from_url(source.value, source.mime_type)
    except ContentError as exc:
        raise AgUiInputError(f"{where}: {exc}") from None


def _decisions(run_input: RunAgentInput, questions: set[str]) -> list[tuple[str, bool, str]]:
    """The resume entries deciding calls waiting for approval: ``resolved`` with a payload
    read as ``POST /approvals`` reads a decision (``approval_decision``), ``cancelled``
    denies. Any entry that is not a decision is an ``AgUiInputError``: nothing runs."""
    found = []
    for index, entry in enumerate(run_input.resume or ()):
        if entry.interrupt_id in questions:
            continue  # an answer (``_answers``)
        if entry.status == "cancelled":
            payload = {} if entry.payload is None else entry.payload
            if not isinstance(payload, dict):
                raise AgUiInputError(f"resume[{index}].payload must be an object (with its reason)")
            reason = payload.get("reason", "cancelled")
            found.append((entry.interrupt_id, False, reason if isinstance(reason, str) else ""))
            continue
        try:
            approved, reason = approval_decision(entry.payload, f"resume[{index}].payload")
        except DecisionError as exc:
            raise AgUiInputError(str(exc)) from None
        found.append((entry.interrupt_id, approved, reason))
    return found


def _answers(
    run_input: RunAgentInput, questions: set[str]
) -> list[tuple[str, str, dict[str, Any] | None]]:
    """The resume entries answering questions: ``resolved`` accepts, its payload (an
    object, or none) the answer's content; ``cancelled`` declines when its payload says
    ``{"action": "decline"}``, and dismisses without one (or with ``"cancel"``). Any other
    payload is an ``AgUiInputError``: an answer is never read as what it does not say."""
    found: list[tuple[str, str, dict[str, Any] | None]] = []
    for index, entry in enumerate(run_input.resume or ()):
        if entry.interrupt_id not in questions:
            continue
        payload, where = entry.payload, f"resume[{index}].payload"
        if payload is not None and not isinstance(payload, dict):
            raise AgUiInputError(f"{where} must be an object (the answer's content)")
        if entry.status == "cancelled":
            action = (payload or {}).get("action", "cancel")
            if action not in ("decline", "cancel"):
                raise AgUiInputError(f"{where}: action must be 'decline' or 'cancel'")
            found.append((entry.interrupt_id, action, None))
        else:
            found.append((entry.interrupt_id, "accept", payload or {}))
    return found


OUTCOME: Final = "AgUiOutcome"  # the event before its end: what RUN_FINISHED says
MESSAGE_ID: Final = "ag_ui_message_id"  # a user message's AG-UI id, in its metadata


def _cursor(last_event_id: str | None) -> tuple[int, int] | None:
    """An AG-UI event id (``"<event number>.<index>"``) as a cursor to resume after."""
    if last_event_id is None:
        return None
    text, dot, rest = last_event_id.strip().partition(".")
    number, index = number_of(text), number_of(rest)
    if not dot or number is None or index is None:
        raise AgUiInputError(f"Last-Event-ID {last_event_id[:40]!r} is no AG-UI event id")
    return number, index


async def agui_run(
    runtime: SessionRuntime,
    runs: Runs,
    index: AgUiRuns,
    data: Any,
    blocking: Any,
    last_event_id: str | None = None,
) -> AsyncIterator[str]:
    """The AG-UI events (SSE lines, each with its ``id``) of the run ``data`` asks for.
    A ``runId`` the thread has run already is not run again: its stored events are sent
    (after ``last_event_id``, an id this stream gave, when a client reconnects)."""
    run_input = parse_input(data)
    thread, run_id = run_input.thread_id, run_input.run_id
    problem = session_id_problem(thread)
    if problem is not None:
        raise AgUiInputError(f"threadId {problem}")
    cursor = _cursor(last_event_id)
    try:
        session = await blocking(runtime.get, thread)
    except SessionNotFound:
        session = None
    opened = None if session is None else await blocking(index.find, thread, run_id)
    if opened is None:
        if cursor is not None:
            raise AgUiInputError(f"no run {run_id!r} of thread {thread!r} to resume")
        state = session.state if session is not None else None
        opened = await _start(runtime, state, runs, run_input, blocking) + 1
        index.started(thread, run_id, opened)
    async for line in _replayed(runs, thread, run_id, opened, cursor):
        yield line


async def _start(
    runtime: SessionRuntime,
    state: AgentState | None,
    runs: Runs,
    run_input: RunAgentInput,
    blocking: Any,
) -> int:
    """Check the input against the session's ``state`` (``None``: a new thread, whose
    session is made once the input is found good) and start its run; the number of the
    event before the run."""
    thread, run_id = run_input.thread_id, run_input.run_id
    questions = {q.call_id for q in state.pending_inputs} if state is not None else set()
    named: set[str] = set()  # one answer an interrupt: two would contradict, or repeat
    for index, entry in enumerate(run_input.resume or ()):
        if entry.interrupt_id in named:
            raise AgUiInputError(f"resume[{index}] answers {entry.interrupt_id!r:.80} again")
        named.add(entry.interrupt_id)
    decisions = _decisions(run_input, questions)
    answers = _answers(run_input, questions)
    message = None if decisions or answers else _latest_user_message(run_input)
    if not decisions and not answers and message is None:
        raise AgUiInputError("the input has neither a user message nor a resume")
    if message is not None and state is not None and _taken(state, message):
        raise AgUiInputError(
            f"user message {message.metadata[MESSAGE_ID]!r:.80} was taken by an earlier run "
            "of this thread: send a new message (an answer is not generated again)"
        )
    waiting = {call.id for call in _undecided(state)} if state is not None else set()
    unknown = [call_id for call_id, _, _ in decisions if call_id not in waiting]
    if unknown:
        raise AgUiInputError(f"no interrupt {unknown[0]!r} is open on this thread")
    if state is not None:
        try:  # the answers checked before anything runs
            _answered(state, answers)
        except ValueError as exc:
            raise AgUiInputError(str(exc)) from None

    def act(rt: SessionRuntime) -> Any:
        if message is not None:
            return rt.send(thread, message)
        state = rt.get(thread).state
        assert state is not None
        for call_id, approved, reason in decisions:
            state = state.with_approval(call_id, approved, reason)
        state = _answered(state, answers)
        stored = rt.store.save(rt.get(thread).with_state(state))
        if _undecided(state) or state.pending_inputs:
            return stored  # some calls still wait: answered only when the user says so
        return rt.resume(thread)

    def closing(session: Any) -> dict[str, Any]:
        state = session.state
        return {
            "type": OUTCOME,
            "step": None,
            "result": state.final_response if state is not None else None,
            "outcome": _outcome(state).model_dump(mode="json", by_alias=True, exclude_none=True),
        }

    opening = {"type": MARK, "step": None, "run_id": run_id}

    def start() -> int:
        if state is None:
            runtime.create(AgentState.initial(), thread)
        return runs.start(thread, act, opening=opening, closing=closing)

    return int(await blocking(start))


async def _replayed(
    runs: Runs, thread: str, run_id: str, opened: int, cursor: tuple[int, int] | None
) -> AsyncIterator[str]:
    """The AG-UI events of the run opening with event ``opened``, translated from the
    session's log as it is written (the same events, with the same ids, every time),
    those after ``cursor`` only."""
    translator = _Translator()
    outcome: dict[str, Any] | None = None
    async for number, text in runs.stream(thread, opened - 1):
        event = json.loads(text)
        kind = event.get("type")
        if number == opened:
            made: list[Any] = [_make(RunStartedEvent, threadId=thread, runId=run_id)]
        elif kind == OUTCOME:
            outcome, made = event, []
        elif kind == ENDED:
            made = [_finished(thread, run_id, translator.failure, outcome)]
        else:
            made = list(translator.events(event))
        for position, out in enumerate(made):
            if cursor is None or (number, position) > cursor:
                yield _line(out, f"{number}.{position}")
        if kind == ENDED:
            return


def _finished(thread: str, run_id: str, failure: str | None, outcome: Any) -> Any:
    if failure is not None or outcome is None:
        message = failure or "the run ended before it could say how"
        return _make(RunErrorEvent, message=message, code="RUN_FAILED")
    return _make(
        RunFinishedEvent,
        threadId=thread,
        runId=run_id,
        result=outcome.get("result"),
        outcome=outcome.get("outcome"),
    )


def _outcome(state: AgentState | None) -> Any:
    """The run's outcome: an interrupt per call waiting for approval and per question
    waiting for an answer, else success."""
    pending = _undecided(state) if state is not None else []
    asked = list(state.pending_inputs) if state is not None else []
    if not pending and not asked:
        return _make(RunFinishedSuccessOutcome)
    interrupts = [
        _make(
            Interrupt,
            id=call.id,
            reason="approval",
            toolCallId=call.id,
            message=f"approve {call.name}?",
        )
        for call in pending
    ] + [
        _make(
            Interrupt,
            id=question.call_id,
            reason="input",
            toolCallId=question.call_id,
            message=question.message,
            responseSchema=deep_thaw(question.schema) or None,
        )
        for question in asked
    ]
    return _make(RunFinishedInterruptOutcome, interrupts=interrupts)


def _answered(
    state: AgentState, answers: list[tuple[str, str, dict[str, Any] | None]]
) -> AgentState:
    for call_id, action, content in answers:
        state = state.with_input(call_id, content, action=action)
    return state


def _undecided(state: AgentState) -> list[Any]:
    """The calls waiting for approval that no decision answers yet."""
    execution = state.execution
    decided = {d.call_id for d in execution.approvals} if execution is not None else set()
    return [call for call in state.pending_approvals if call.id not in decided]


def _described(parts: list[Any]) -> str:
    """A tool's parts as text for a client: text as it is, media by type and name."""
    shown = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("kind") == "TextPart":
            shown.append(str(part.get("text", "")))
        else:
            shown.append(
                f"[{part.get('media_type', 'media')} {part.get('name') or ''}]".replace(" ]", "]")
            )
    return "\n".join(shown)


def _make(model: Any, **fields: Any) -> Any:
    """An AG-UI model from its fields by their wire names (validated, as a client would)."""
    return model.model_validate(fields)


def _line(event: Any, event_id: str) -> str:
    try:
        text = event.model_dump_json(by_alias=True, exclude_none=True)
    except ValueError:  # a lone surrogate (text that is not Unicode): shown as U+FFFD, since
        # AG-UI is for display and its own types refuse the escape (the session keeps it)
        data = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        text = replace_lone_surrogates(raw)
    return f"id: {event_id}\ndata: {text}\n\n"


class _Translator:
    """Engine events (as the event log keeps them) to AG-UI events."""

    def __init__(self) -> None:
        self.failure: str | None = None
        self._open: str | None = None  # the text message being streamed
        self._thinking: str | None = None  # the reasoning message being streamed
        self._count = 0

    def events(self, event: dict[str, Any]) -> Iterator[Any]:
        kind = event.get("type")
        if event.get("depth"):
            return  # a sub-agent's: its parent's tool call stands for it
        if kind == "ReasoningDelta" and event.get("content"):
            if self._thinking is None:
                self._count += 1
                self._thinking = f"reasoning-{event.get('step')}-{self._count}"
                yield from self._reasoning_start(self._thinking)
            yield _make(
                ReasoningMessageContentEvent, messageId=self._thinking, delta=event["content"]
            )
        elif kind == "InferenceDelta" and event.get("content"):
            yield from self._reasoning_end()
            if self._open is None:
                self._count += 1
                self._open = f"msg-{event.get('step')}-{self._count}"
                yield _make(TextMessageStartEvent, messageId=self._open, role="assistant")
            yield _make(TextMessageContentEvent, messageId=self._open, delta=event["content"])
        elif kind == "InferenceCompleted":
            yield from self._answer(event)
        elif kind == "ToolCallCompleted":
            execution = event.get("tool_execution") or {}
            call = execution.get("tool_call") or {}
            error = execution.get("error")
            content = error.get("message") if isinstance(error, dict) else execution.get("value")
            parts = execution.get("content")
            if error is None and isinstance(parts, list):  # parts: their text, the rest named
                content = _described(parts)
            yield _make(
                ToolCallResultEvent,
                messageId=f"tool-{call.get('id')}",
                toolCallId=str(call.get("id")),
                content=content if isinstance(content, str) else json.dumps(content),
                role="tool",
            )
        elif kind == "RunFailed":
            self.failure = str(event.get("message") or event.get("error"))
        elif kind == "ExecutionCompleted" and event.get("status") == "failed":
            self.failure = self.failure or "the run failed"

    def _reasoning_start(self, message_id: str) -> Iterator[Any]:
        yield _make(ReasoningStartEvent, messageId=message_id)
        yield _make(ReasoningMessageStartEvent, messageId=message_id, role="reasoning")

    def _reasoning_end(self) -> Iterator[Any]:
        if self._thinking is not None:
            yield _make(ReasoningMessageEndEvent, messageId=self._thinking)
            yield _make(ReasoningEndEvent, messageId=self._thinking)
            self._thinking = None

    def _reasoning(self, parts: list[Any], step: Any) -> Iterator[Any]:
        """The reasoning of an answer that was not streamed: a reasoning message per
        part, and what the provider withheld as its encrypted value."""
        for part in parts:
            self._count += 1
            message_id = f"reasoning-{step}-{self._count}"
            yield from self._reasoning_start(message_id)
            if part.get("text"):
                yield _make(ReasoningMessageContentEvent, messageId=message_id, delta=part["text"])
            if part.get("redacted"):
                yield _make(
                    ReasoningEncryptedValueEvent,
                    subtype="message",
                    entityId=message_id,
                    encryptedValue=part["redacted"],
                )
            yield _make(ReasoningMessageEndEvent, messageId=message_id)
            yield _make(ReasoningEndEvent, messageId=message_id)

    def _answer(self, event: dict[str, Any]) -> Iterator[Any]:
        response = event.get("response") or {}
        content = response.get("content") or ""
        if isinstance(content, list):  # parts: reasoning, then the text
            reasoning = [
                p for p in content if isinstance(p, dict) and p.get("kind") == "ReasoningPart"
            ]
            if self._thinking is None and self._open is None:  # not streamed
                yield from self._reasoning(reasoning, event.get("step"))
            texts = [
                p.get("text")
                for p in content
                if isinstance(p, dict) and p.get("kind") == "TextPart"
            ]
            content = "\n".join(t for t in texts if isinstance(t, str))
        yield from self._reasoning_end()
        if self._open is not None:  # streamed: close it
            yield _make(TextMessageEndEvent, messageId=self._open)
            self._open = None
        elif content:
            self._count += 1
            message_id = f"msg-{event.get('step')}-{self._count}"
            yield _make(TextMessageStartEvent, messageId=message_id, role="assistant")
            yield _make(TextMessageContentEvent, messageId=message_id, delta=content)
            yield _make(TextMessageEndEvent, messageId=message_id)
        for call in response.get("tool_calls") or ():
            call_id = str(call.get("id"))
            yield _make(ToolCallStartEvent, toolCallId=call_id, toolCallName=str(call.get("name")))
            yield _make(
                ToolCallArgsEvent, toolCallId=call_id, delta=json.dumps(call.get("arguments") or {})
            )
            yield _make(ToolCallEndEvent, toolCallId=call_id)
