"""The short way through ``regress`` for the run most recordings hold: one plain run that
goes the same way through the new agent.

``regress`` reads a recording whole — every record decoded, every state of the run rebuilt
— before it runs the new agent, then compares the two histories record by record. For an
audit log of one stretch (no approvals, questions, compaction, sub-agents, cancellations or
wall-clock limits), regressed with ``tools="record"``, without listeners and not ``exact``,
most of that work is not needed to tell that nothing changed: the model's answers and the
tool executions are decoded from the log, the new run is answered from them in turn, and
once it has ended the messages its requests sent, then what it wrote — its steps, its
conversation and the rest of its final state, as the codec writes them — are compared with
the log's JSON itself, ids and times aside (each of those checked as the decoder would
check it). Each kind of work is done for every record in one pass (read, run, compare):
measured faster than step by step, interleaved with the engine's (docs/benchmarks.md).

``same_run`` gives the new run's final state when every part of it is the one recorded,
and ``None`` whenever it cannot vouch for that — a recording of another kind, a line it
does not expect, a request or a record that differs in any way. ``regress`` then takes its
general way, which reads the whole record and says what changed and where. This way never
says "same" where the general way would find a change: it compares more than the general
way does (the whole final state, not only how the run ended), and by the JSON's exact
values and types.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from agents.audit.chain import is_record
from agents.audit.records import stub_of
from agents.errors import AgentError
from agents.records.codec import Document, decode_field, encode_value, from_dict
from agents.records.compiled import compiled
from agents.records.context import AgentContext, MessageStore
from agents.records.execution import ExecutionState
from agents.records.frozen import History
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.json_text import JsonLines, exact
from agents.records.matching import Known, json_alike, matches
from agents.records.messages import ToolCall
from agents.records.registry import Refs
from agents.records.state import AgentState
from agents.records.step import ToolExecution
from agents.replaying import VOLATILE
from agents.shell.loop import AgentLoop, request_defaults
from agents.shell.subagents import DEPTH_KEY

__all__ = ["ShortWay", "as_brought", "same_run"]

# Stop reasons the new run cannot raise by itself (``regress`` gives them back from the
# record): a recording holding one goes the general way.
_GIVEN_BACK: Final = frozenset({"time_limit", "user_requested"})
_ENDED: Final = frozenset({"completed", "stopped", "failed"})
_OWNERS: Final[dict[str, type]] = {"context": AgentContext, "execution": ExecutionState}
_STATE: Final[type] = AgentState
_HISTORY: Final = {"context": "store", "execution": "step_executions"}  # never in changes
_EXACT: Final[frozenset[str]] = frozenset()  # messages are compared exactly, ids too
_STEP_KEYS: Final = frozenset({"changes", "sections", "step_execution", "request"})
_END_KEYS: Final = frozenset({"changes", "sections", "status"})


class _NotPlain(AgentError):
    """The recording is not of the kind this way reads, or the new run left it."""


class ShortWay:
    """The short way for one agent, made once for all the recordings it regresses: the
    loop, answered by a model and a tool interceptor that each recording resets."""

    def __init__(self, loop: AgentLoop, own: AgentState | None) -> None:
        self._own = own
        self._model = model = _Given(request_defaults(loop.driver))
        self._loop = loop.with_options(
            driver=model, interceptors=(*loop.interceptors, _RecordedTools(model))
        )

    def same(self, data: bytes) -> AgentState | None:
        """The final state of the new run of the run the audit log ``data`` records,
        when it goes the same way, ids and times aside; ``None`` when this way cannot
        vouch for that (``regress`` then reads the record whole)."""
        try:
            return self._vouched(data)
        finally:
            self._model.reset(None)

    def _vouched(self, data: bytes) -> AgentState | None:
        try:
            recorded = _Recorded(data)
        except Exception:  # any doubt about the log: the general way reads it, says what
            return None
        start = recorded.start
        if as_brought(start, self._own) is not start:
            return None  # asked otherwise from the first request on
        model = self._model
        model.reset(recorded)
        state = self._loop.run(start)
        if model.off or model.position != len(recorded.answers):
            return None
        try:
            return state if _same(recorded, state, model) else None
        except Exception:  # a value the codec cannot write, say: the general way tells
            return None


def as_brought(start: AgentState, own: AgentState | None) -> AgentState:
    """The recorded ``start`` with what the agent under test sends with every conversation
    in place of the recorded: the system prompt, ``llm_config`` (the model and its
    settings) and the response format of its own state ``own`` (``None``: as recorded)."""
    if own is None:
        return start
    state = start.with_system_prompt(own.context.system_prompt)
    if state.llm_config != own.llm_config:
        state = attrs.evolve(state, llm_config=own.llm_config)
    if state.context.response_format != own.context.response_format:
        state = state.with_context(state.context.with_response_format(own.context.response_format))
    return state


def same_run(loop: AgentLoop, own: AgentState | None, data: bytes) -> AgentState | None:
    """``ShortWay(loop, own).same(data)``: the new run's final state when the run the
    audit log ``data`` records goes the same way through ``loop``, else ``None``.
    ``own``: the agent's own state, whose system prompt, model settings and response
    format replace the recorded ones (``as_brought``)."""
    return ShortWay(loop, own).same(data)


class _Recorded:
    """What an audit log of one plain run holds, read without rebuilding its states: the
    start (decoded), the model's answers and tool executions (decoded), and as JSON each
    step, the conversation and the final state without its conversation and steps."""

    def __init__(self, data: bytes) -> None:
        lines = JsonLines(data)
        if len(lines) < 2:
            raise _NotPlain("a short log")
        # every line read before any is used: measured faster than reading each in turn
        entries = [lines[index] for index in range(len(lines))]
        if not all(map(is_record, entries)):
            raise _NotPlain("a line that is no audit record")
        first = entries[0]
        execution_id = first["execution_id"]
        self.final = final = self._start(first)
        self.known = Known()
        self.document = Document()  # what repeats in the log decoded once (calls)
        self.steps: list[dict[str, Any]] = []
        self.prefixes: list[int] = []
        self.answers: list[InferenceResponse] = []
        self.by_call: dict[str, ToolExecution] = {}
        self.offered: dict[int, Any] = {}
        # each kind of work done for every record in turn: measured faster than all of
        # it record by record
        payloads = []
        for number, entry in enumerate(entries[1:-1], start=1):
            payload = entry["payload"]
            if (
                entry["record"] != "step"
                or entry["format"] != 2
                or entry["execution_id"] != execution_id
                or entry["step"] != number
                or not payload.keys() <= _STEP_KEYS
                or "changes" not in payload
            ):
                raise _NotPlain(f"record {number + 1} is not the run's step {number}")
            payloads.append(payload)
        for payload in payloads:
            self._changes(final, payload["changes"])
        added = [self._sections(payload["sections"]) for payload in payloads]
        self._steps(payloads, added)
        self._end(entries[-1], execution_id)

    def _start(self, first: dict[str, Any]) -> dict[str, Any]:
        """The run's start decoded (``start``, ``head``, ``conversation``), and the JSON
        of its state without conversation and steps, which the records change."""
        payload = first["payload"]
        if (
            first["record"] != "start"
            or first["format"] != 2
            or payload.keys() != {"resumed", "state"}
            or payload["resumed"] is not False
        ):
            raise _NotPlain("not a start record")
        data = payload["state"]
        if DEPTH_KEY in data["context"]["metadata"]:
            raise _NotPlain("a sub-agent's run")
        self.start = start = from_dict(data, AgentState)
        execution = start.execution
        store = start.context.store
        if (
            execution is None
            or execution.step_executions
            or execution.current_step is not None
            or execution.approvals
            or execution.pending_approvals
            or execution.inputs
            or execution.pending_inputs
            or store.summary
            or store.buffer
        ):
            raise _NotPlain("a start that is not a plain run's")
        self.head = start.context.head()
        self.conversation: list[Any] = list(data["context"]["store"]["messages"])
        return {  # as the codec writes a record: no schema_version
            **{key: value for key, value in data.items() if key != "schema_version"},
            "context": {**data["context"], "store": _NO_STORE_JSON},
            "execution": {**data["execution"], "step_executions": []},
        }

    def _end(self, last: dict[str, Any], execution_id: Any) -> None:
        """The run's end record: the run ended by itself and waits for nobody."""
        payload = last["payload"]
        if (
            last["record"] != "end"
            or last["format"] != 2
            or last["execution_id"] != execution_id
            or not payload.keys() <= _END_KEYS
            or "changes" not in payload
        ):
            raise _NotPlain("no end record")
        self._changes(self.final, payload["changes"])
        self._sections(payload["sections"])
        execution = self.final["execution"]
        if (
            execution["status"] not in _ENDED
            or execution.get("current_step") is not None
            or execution["approvals"]
            or execution["pending_approvals"]
            or execution.get("inputs")
            or execution.get("pending_inputs")
            or _given_back(execution["continuation"])
        ):
            raise _NotPlain("a run that did not end by itself, or waits")

    def _changes(self, final: dict[str, Any], changes: list[Any]) -> None:
        """``final`` with a record's changes, each value checked as the decoder checks it."""
        if type(changes) is not list:
            raise _NotPlain("malformed changes")
        for change in changes:
            path = change[0] if type(change) is list and change else None
            if (
                type(path) is not list
                or not 1 <= len(path) <= 2
                or type(path[0]) is not str
                or type(path[-1]) is not str
            ):
                raise _NotPlain("a malformed change, or one of a nested field")
            if len(path) == 1:
                if path[0] in _OWNERS:
                    raise _NotPlain("a whole record changed")
                owner, kind = final, _STATE
            elif len(path) == 2 and path[0] in _OWNERS and path[1] != _HISTORY[path[0]]:
                if path == ["context", "system_prompt"]:
                    raise _NotPlain("the system prompt changed")
                owner = final[path[0]] = dict(final[path[0]])
                kind = _OWNERS[path[0]]
            else:
                raise _NotPlain("a change of a nested field")
            if len(change) == 2:
                decode_field(kind, path[-1], change[1])
                owner[path[-1]] = change[1]
            elif len(change) == 1:
                owner.pop(path[-1])
            else:
                raise _NotPlain("a malformed change")

    def _sections(self, sections: dict[str, Any]) -> list[Any] | None:
        """The conversation with a record's new messages (only ever added to); those
        messages, if any."""
        if type(sections) is not dict or not set(sections) <= {"messages"}:
            raise _NotPlain("a summary or buffer changed")
        if sections:
            change = sections["messages"]
            if (
                type(change) is not dict
                or set(change) != {"keep", "add"}
                or type(change["keep"]) is not int
                or change["keep"] != len(self.conversation)
            ):
                raise _NotPlain("messages removed from the conversation")
            added = change["add"]
            if type(added) is not list:
                raise _NotPlain("malformed messages")
            self.conversation.extend(added)
            return added
        return None

    def _steps(self, payloads: list[dict[str, Any]], added: list[list[Any] | None]) -> None:
        """The step records: their JSON kept, their inputs' references, what the model
        answered and what the tools did (decoded: the new run is given them), what the
        requests offered. A step's output messages written as the messages its record
        added to the conversation are kept as those very objects: the new run's, matched
        with the conversation's JSON, are then found by identity in the step's."""
        for number, (payload, messages) in enumerate(zip(payloads, added, strict=True), start=1):
            data = payload["step_execution"]
            step = data["step"]
            if messages is not None:
                text = exact(step["output_messages"])
                if text is not None and text == exact(messages):  # None: orjson cannot say
                    step["output_messages"] = messages
            reference = step["input_messages"]
            prefix = reference.get("prefix") if type(reference) is dict else None
            if (
                type(prefix) is not int  # then the reference is a dict
                or len(reference) != 2
                or reference.get("kind") != "MessagesRef"
                or step.get("compaction") is not None
                or type(step["tool_executions"]) is not list
                or _given_back(data["continuation"])
            ):
                raise _NotPlain(f"step {number} is not a plain step")
            if "request" in payload:
                self.offered[number] = payload["request"]
            self.steps.append(data)
            self.prefixes.append(prefix)
        record, known = self.document.record, self.known
        for data in self.steps:
            written = data["step"]["response"]
            answer = record(written, InferenceResponse)
            known.add(answer, written)  # what the new run is given is written as it was read
            for call, call_written in zip(answer.tool_calls, written["tool_calls"], strict=True):
                known.add(call, call_written)
            self.answers.append(answer)
        by_call = self.by_call
        for data in self.steps:
            for item in data["step"]["tool_executions"]:
                execution = record(item, ToolExecution)
                call_id = execution.tool_call.id
                if execution.inputs or call_id in by_call:
                    raise _NotPlain("a tool call that asked a human, or a repeated call")
                by_call[call_id] = execution
                known.add(execution, item)


_NO_STORE_JSON: Final = encode_value(MessageStore())  # read, never changed


def _given_back(continuation: Any) -> bool:
    signals = continuation["stop_signals"]
    return bool(signals) and any(signal["reason"] in _GIVEN_BACK for signal in signals)


class _Given:
    """The model, answered from the record by position; the requests' messages are
    compared with the recorded ones once the run has ended (``requests_alike``: the final
    conversation, then each request a beginning of it) — measured faster than one request
    at a time, between the engine's steps. A request of another length, or offering
    other tools or parameters, leaves this way at once (``off``) and fails the run there;
    one whose messages differ is found after the run, and the run declined (the general
    way then runs it again from its start, as it does for any run this way declines)."""

    answers_checked: Final = True  # its answers are the decoder's

    def __init__(self, defaults: Any) -> None:
        self._defaults = defaults  # the agent's driver's own settings go with each request
        self._verified: tuple[Any, ...] | None = None  # parts found alike, and the text
        self.reset(None)

    def request_defaults(self) -> Any:
        return self._defaults

    def reset(self, recorded: Any) -> None:
        self.recorded: _Recorded = recorded
        self.position = 0
        self.off = False
        self.sent: list[Any] = []  # each request's messages, compared after the run
        self.head: tuple[Any, ...] | None = None  # the head the requests sent, found alike
        self._offered: Any = None  # what the record says the requests offer, and as text
        self._text: bytes | None = None

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        position = self.position
        self.position += 1
        recorded = self.recorded
        if (
            self.off
            or position >= len(recorded.answers)
            or len(request.messages) != len(recorded.head) + recorded.prefixes[position]
            or not self._offered_alike(request, position + 1)
        ):
            self.off = True
            raise _NotPlain("the request is not the recorded one")
        self.sent.append(request.messages)
        return recorded.answers[position]

    def requests_alike(self, conversation: History[Any]) -> bool:
        """Every request's messages the recorded ones, given the run's final conversation
        (as long as the recorded one): that conversation compared with the recorded one
        as JSON, then each request found to send the head (compared once for as long as
        the loop sends the same one) and a prefix of that conversation (one identity
        check per 32 messages; its length was checked when it was made). A request that
        sent anything else is compared whole."""
        if not self.each_alike(conversation, len(self.recorded.head)):
            return False
        for messages in self.sent:
            if (
                type(messages) is History
                and self._head_alike(messages.head)
                and messages.body().is_prefix_of(conversation)
            ):
                continue
            if not self.each_alike(tuple(messages), 0):
                return False
        return True

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse:
        return self.infer(request)

    def _head_alike(self, head: tuple[Any, ...]) -> bool:
        if head is self.head:
            return True
        if head != self.recorded.head:
            return False
        self.head = head
        return True

    def each_alike(self, messages: Any, start: int) -> bool:
        """Messages ``start``, ``start + 1``... of a request (or of the conversation,
        with no head) the recorded ones, exactly (tool call ids too)."""
        recorded = self.recorded
        head, conversation, known = recorded.head, recorded.conversation, recorded.known
        size = len(head)
        for index, message in enumerate(messages, start=start):
            if index < size:
                mine = head[index]
                if message is not mine and message != mine:
                    return False
                continue
            written = conversation[index - size]
            if not matches(message, written, _EXACT, None, known):
                return False
            known.add(message, written)
        return True

    def _offered_alike(self, request: InferenceRequest, step: int) -> bool:
        """What the request offers besides its messages, against the latest recorded:
        compared once for as long as the loop offers the same objects and the record the
        same text (a loop offers the same at every step of every recording)."""
        offered = self.recorded.offered.get(step)
        if offered is not None:
            self._offered, self._text = offered, exact(offered)
        if self._offered is None:
            return True  # the record does not say (as the general way)
        verified = self._verified
        if (
            verified is not None
            and verified[0] is request.tools
            and verified[1] is request.model
            and verified[2] is request.response_format
            and verified[3] is request.options
            and verified[4] == self._text
        ):
            return True
        from agents.audit.records import request_shape

        if self._text is None or not json_alike(request_shape(request), self._offered):
            return False
        parts = (request.tools, request.model, request.response_format, request.options)
        self._verified = (*parts, self._text)
        return True


class _RecordedTools:
    """Tool calls answered from the record when the call is the recorded one; any other
    leaves this way (it would have run the tool: the general way does)."""

    __slots__ = ("_model",)

    def __init__(self, model: _Given) -> None:
        self._model = model

    def intercept_tool(self, call: ToolCall, call_next: Any) -> ToolExecution:
        model = self._model
        found = model.recorded.by_call.get(call.id)
        if found is None or (found.tool_call is not call and found.tool_call != call):
            model.off = True
            raise _NotPlain("a call the record does not hold")
        return found


# -- comparing ----------------------------------------------------------------------------------


def _same(recorded: _Recorded, state: AgentState, model: _Given) -> bool:
    """Whether the new run's state is the recorded one as JSON, ids and times aside
    (the conversation exactly: the requests were compared so)."""
    steps, store = state.step_executions, state.context.store
    conversation = store.messages
    if (
        len(steps) != len(recorded.steps)
        or len(conversation) != len(recorded.conversation)
        or store.summary  # the record's are empty (no sections but the conversation)
        or store.buffer
    ):
        return False
    if not model.requests_alike(conversation):
        return False
    head = state.context.head()
    if model.head is not None and head == model.head:
        head = model.head  # the one the steps' inputs hold: found by identity
    refs, known = Refs(state.context, head), recorded.known
    # From here ``known`` also holds executions that stand for their JSON ids and times
    # aside (``_stamped``): only the steps' matching, ids and times loose, uses it.
    for step_execution in steps:
        for execution in step_execution.step.tool_executions:
            _stamped(execution, recorded)
    for step_execution, data in zip(steps, recorded.steps, strict=True):
        if not matches(step_execution, data, VOLATILE, refs, known):
            return False
    return matches(stub_of(state), recorded.final, VOLATILE)


def _only_stamped_code() -> Any:
    """``same(new, given)``: every field of a tool execution but its completion time the
    given one's object (code generated from its fields: a field added is compared too)."""
    names = [field.name for field in attrs.fields(ToolExecution) if field.name != "completed_at"]
    test = " and ".join(f"new.{name} is given.{name}" for name in names)
    source = f"def same(new, given):\n    return {test}\n"
    return compiled(source, {}, ToolExecution, "same", "only stamped")


_ONLY_STAMPED: Final = _only_stamped_code()


def _stamped(execution: ToolExecution, recorded: _Recorded) -> None:
    """A tool execution the run was given from the record (``_RecordedTools``) that the
    engine only stamped with its completion time stands, ids and times aside, for the JSON
    the given one was read from (that time, read by the decoder, is of the same kind)."""
    given = recorded.by_call.get(execution.tool_call.id)
    if (
        given is not None
        and given is not execution
        and type(execution.completed_at) is type(given.completed_at)
        and _ONLY_STAMPED(execution, given)
    ):
        recorded.known.add(execution, recorded.known[id(given)][1])
