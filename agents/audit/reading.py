"""Reading an audit log back: its runs (or the last one), stretch by stretch, and their
states rebuilt exactly from the records (formats 1, 2 and 3)."""

from __future__ import annotations

import functools
import os
from typing import Any, TypeVar

import attrs

from agents.audit.chain import RECORD_START, parse_line, read_bytes
from agents.audit.compact import resolve_step, thick_field
from agents.audit.records import Heads, stub_of
from agents.core.compaction import apply_compaction
from agents.errors import InvalidArgument, StateDecodeError
from agents.records.codec import (
    Document,
    decode_field,
    decode_step_execution,
    encode_value,
    from_dict,
)
from agents.records.compiled import replace_fields
from agents.records.context import SECTIONS
from agents.records.messages import Message
from agents.records.registry import field_plan, settable_fields
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.replaying import RunRecord, Segment
from agents.shell.subagents import DEPTH_KEY

__all__ = ["read_run", "read_runs"]


def read_run(path: str | os.PathLike[str], data: bytes | None = None) -> RunRecord:
    """The last run of the log at ``path`` (see ``AuditLog.read_run``): the one the log's
    last start record belongs to; ``data``: its bytes, when the caller has read them."""
    runs, last = _read(path, data)
    return runs[last]


def read_runs(path: str | os.PathLike[str], data: bytes | None = None) -> list[RunRecord]:
    """Every top-level run of the log at ``path``, in the order they started (see
    ``AuditLog.read_runs``)."""
    return _read(path, data)[0]


def _read(path: Any, data: bytes | None) -> tuple[list[RunRecord], int]:
    """The log's runs, and the index of the one its last start record belongs to."""
    if data is None:
        data = read_bytes(path)
    lines = data.split(b"\n")
    torn = lines.pop()
    entries = [
        (number, parse_line(raw, path, number)) for number, raw in enumerate(lines, start=1) if raw
    ]
    if torn and not RECORD_START.startswith(torn[: len(RECORD_START)]):
        parse_line(torn, path, len(lines) + 1)  # not a write cut short: say what it is
    if not entries:
        raise StateDecodeError(f"{path}: the audit log is empty")
    return _runs(entries, path)


class _Where:
    """A record being read, for errors naming the file, the line and the field."""

    __slots__ = ("entry", "line", "path")

    def __init__(self, path: Any, line: int, entry: dict[str, Any]) -> None:
        self.path, self.line, self.entry = path, line, entry

    def error(self, what: str, field: str = "$") -> StateDecodeError:
        return StateDecodeError(f"{self.path}: line {self.line}: {what}", field)

    def get(self, *keys: str, data: Any = None, base: str = "") -> Any:
        """``entry[k1][k2]...`` (or ``data[...]`` under the path ``base``), or an error
        naming the first missing or mistyped field."""
        value = self.entry if data is None else data
        field = base
        for key in keys:
            field = f"{field}.{key}" if field else key
            if not isinstance(value, dict) or key not in value:
                raise self.error("malformed record", field)
            value = value[key]
        return value

    def decode(self, data: Any, cls: type[T], field: str) -> T:
        """``data`` (a record without its ``schema_version``) decoded as ``cls``."""
        if not isinstance(data, dict):
            raise self.error(f"expected a {cls.__name__} object", field)
        try:
            return from_dict({**data, "schema_version": 1}, cls)
        except StateDecodeError as exc:
            where = field if exc.path == "$" else f"{field}.{exc.path}"
            raise self.error(exc.reason, where) from None


T = TypeVar("T")


def _depth(data: Any) -> int:
    """How deep a recorded state runs: 0 for a top-level run, 1 for its sub-agents..."""
    context = data.get("context") if isinstance(data, dict) else None
    metadata = context.get("metadata") if isinstance(context, dict) else None
    depth = metadata.get(DEPTH_KEY) if isinstance(metadata, dict) else None
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else 0


def _runs(entries: list[tuple[int, dict[str, Any]]], path: Any) -> tuple[list[RunRecord], int]:
    """The top-level runs, in the order they started, and the index of the one the last
    start belongs to. A run is the stretches of its execution, each from its recorded start
    to its end record (the last one possibly to its last recorded step): a start that
    resumes an execution (after a suspension) joins that execution's run, even when other
    runs' records came between (several runs served at once share a log).

    Sub-agents' runs are recorded inside their parent's steps; their records carry their
    depth in the recorded state's metadata, so they are told apart even when they reuse
    the parent's ids."""
    chains: list[list[tuple[int, int, dict[str, Any]]]] = []  # (index, line, start record)
    waiting: dict[Any, int] = {}  # the chain each execution id suspended last, to resume
    open_: dict[Any, int] = {}  # the chain each execution id runs now
    last = -1
    for index, (number, entry) in enumerate(entries):
        execution_id = entry.get("execution_id")
        if isinstance(execution_id, list | dict):  # forged: a key all the same
            execution_id = repr(execution_id)
        if entry.get("record") == "end":  # a top-level run's end: suspended, or over
            where = _Where(path, number, entry)
            running = open_.get(execution_id)
            payload = where.get("payload")
            if running is not None and _record_depth(payload, where) == 0:
                del open_[execution_id]
                if _ended_as(payload) == "suspended":
                    waiting[execution_id] = running
            continue
        if not _is_start(entry):
            continue
        recorded = _Where(path, number, entry).get("payload", "state")
        if _depth(recorded) != 0:
            continue
        payload = entry.get("payload")
        resumed = isinstance(payload, dict) and payload.get("resumed") is True
        if resumed and execution_id in waiting:
            last = waiting.pop(execution_id)
            chains[last].append((index, number, entry))
        else:  # a new run (a run resumed from a store, its start not here, begins here)
            last = len(chains)
            chains.append([(index, number, entry)])
        open_[execution_id] = last
    if not chains:
        raise StateDecodeError(f"{path}: no run started in this log")
    runs = []
    for chain in chains:
        segments = []
        complete = False
        offered: dict[int, Any] = {}
        for index, number, entry in chain:
            start, end, complete = _segment(entries, index, number, entry, path, offered)
            segments.append(Segment(start=start, end=end))
        runs.append(RunRecord(segments=tuple(segments), complete=complete, offered=offered))
    return runs, last


def _ended_as(payload: Any) -> Any:
    """The status an end record gives (format 2 says it; format 1 holds the state)."""
    if not isinstance(payload, dict):
        return None
    if "status" in payload:
        return payload["status"]
    state = payload.get("state")
    execution = state.get("execution") if isinstance(state, dict) else None
    return execution.get("status") if isinstance(execution, dict) else None


def _is_start(entry: dict[str, Any]) -> bool:
    """A run's start: format 2's ``start`` record, format 1's ``ExecutionStarted`` event."""
    record = entry.get("record")
    return record == "start" or (record == "event" and entry.get("type") == "ExecutionStarted")


def _segment(
    entries: list[tuple[int, dict[str, Any]]],
    first_index: int,
    first_line: int,
    first: dict[str, Any],
    path: Any,
    offered: dict[int, Any],
) -> tuple[AgentState, AgentState, bool]:
    """A stretch of a run from its start record: its start, its end (from the end record,
    or the state after its last recorded step) and whether it ended; ``offered`` gets what
    the step records say their requests offered besides the messages, by step."""
    where = _Where(path, first_line, first)
    execution_id = first.get("execution_id")
    start = where.decode(where.get("payload", "state"), AgentState, "payload.state")
    if start.execution is None:
        raise where.error("the run's starting state has no execution", "payload.state.execution")
    state = start
    heads = Heads()
    for number, entry in entries[first_index + 1 :]:
        record = entry.get("record")
        if record not in ("step", "end"):
            continue
        where = _Where(path, number, entry)
        payload = where.get("payload")
        if entry.get("execution_id") != execution_id or _record_depth(payload, where) != 0:
            continue  # another run's, or a sub-agent's
        if record == "end":
            if entry.get("format") in (2, 3):  # what changed since the last step
                end = _changed(state, where, False, heads)
            else:
                end = where.decode(where.get("payload", "state"), AgentState, "payload.state")
            shape = payload.get("request") if isinstance(payload, dict) else None
            if isinstance(shape, dict):  # what the step it was suspended in offered
                offered[(end.step_count or 0) + 1] = shape
            return start, end, True
        state = _after_step(state, where, heads)
        step = entry.get("step")
        shape = payload.get("request") if isinstance(payload, dict) else None
        if isinstance(shape, dict) and isinstance(step, int) and not isinstance(step, bool):
            offered[step] = shape
    return start, state, False


def _record_depth(payload: Any, where: _Where) -> int:
    """How deep the run a step or end record belongs to runs (0: the top-level run)."""
    if not isinstance(payload, dict):
        return 0
    if "changes" in payload:
        depth = payload.get("depth", 0)
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise where.error(f"a depth of {depth!r}", "payload.depth")
        return depth
    return _depth(payload.get("state"))


def _after_step(before: AgentState, where: _Where, heads: Heads) -> AgentState:
    """The state after the step an audit record describes, from the state before it."""
    payload = where.get("payload")
    if not isinstance(payload, dict) or ("state" not in payload and "changes" not in payload):
        return _after_step_legacy(before, where)  # before states were described
    return _changed(before, where, True, heads)


def _patched(described: dict[str, Any], where: _Where) -> dict[str, Any]:
    """``described`` (a state's JSON without its messages) with a record's ``changes``:
    each ``[path, value]`` sets a field (``[path]`` removes one), copying what it touches."""
    changes = where.get("payload", "changes")
    if not isinstance(changes, list):
        raise where.error("expected an array", "payload.changes")
    document = dict(described)
    for index, change in enumerate(changes):
        field = f"payload.changes[{index}]"
        path = change[0] if isinstance(change, list) and change else None
        if (
            not isinstance(path, list)
            or not 1 <= len(path) <= 2
            or not all(isinstance(name, str) for name in path)
            or len(change) > 2
        ):
            raise where.error("malformed change", field)
        target = document
        if len(path) == 2:
            inner = document.get(path[0])
            if not isinstance(inner, dict):
                raise where.error(f"no record {path[0]!r} to change", field)
            target = document[path[0]] = dict(inner)
        if len(change) == 2:
            target[path[-1]] = change[1]
        else:
            target.pop(path[-1], None)
    return document


def _thick_changes(before: AgentState, where: _Where) -> Any:
    """A format-3 record's ``changes`` as format 2 writes them (``compact.thick_field``);
    what is malformed is left for ``_applied`` to refuse."""
    changes = where.get("payload", "changes")
    if not isinstance(changes, list):
        return changes
    thick: list[Any] = []
    for change in changes:
        path = change[0] if isinstance(change, list) and len(change) == 2 else None
        if isinstance(path, list) and 1 <= len(path) <= 2 and all(type(p) is str for p in path):
            owner: Any = before if len(path) == 1 else getattr(before, path[0], None)
            if attrs.has(owner.__class__) and path[-1] in _fields(owner.__class__):
                change = [path, thick_field(owner.__class__, path[-1], change[1])]
        thick.append(change)
    return thick


def _applied(before: AgentState, where: _Where) -> AgentState:
    """``before`` with a record's ``changes``, each field decoded alone and set through its
    record's ``__init__`` (converters, validators); any problem sends the record the
    general way (the whole state decoded from ``before``'s JSON patched), which names it."""
    changes = where.get("payload", "changes")
    if not isinstance(changes, list):
        raise where.error("expected an array", "payload.changes")
    state = before
    try:
        for change in changes:
            path = change[0]
            if not isinstance(path, list) or not 1 <= len(path) <= 2 or len(change) > 2:
                raise InvalidArgument("malformed change")
            owner = getattr(state, path[0]) if len(path) == 2 else state
            name = path[-1]
            kind: type = type(owner)
            if not isinstance(name, str) or name not in _fields(kind):
                raise InvalidArgument("no such field")
            value = decode_field(kind, name, change[1]) if len(change) == 2 else None
            settable = settable_fields(kind)
            if name in settable:  # what __init__ would do to it: its validator, if any
                changed = replace_fields(owner, **{name: value})
                field = settable[name]
                if field is not None:
                    field.validator(changed, field, value)
            else:
                changed = attrs.evolve(owner, **{name: value})
            state = replace_fields(state, **{path[0]: changed}) if len(path) == 2 else changed
        return state
    except (StateDecodeError, ValueError, TypeError, AttributeError, IndexError, KeyError):
        described = _patched(encode_value(stub_of(before)), where)
        return where.decode(described, AgentState, "payload.changes")


def _message(
    data: Any, field: str, where: _Where, document: Document, compact: bool = False
) -> Message:
    if not isinstance(data, dict):
        raise where.error("expected a Message object", field)
    try:
        return document.record(data, Message, compact=compact)
    except StateDecodeError as exc:
        raise where.error(exc.reason, field if exc.path == "$" else f"{field}.{exc.path}") from None


@functools.cache
def _fields(cls: type) -> frozenset[str]:
    return frozenset(field.name for field in field_plan(cls))


def _changed(before: AgentState, where: _Where, step: bool, heads: Heads) -> AgentState:
    """The state a record describes as a change from ``before``: its fields, its message
    sections' changes, and (``step``) one more step."""
    payload = where.get("payload")
    if not isinstance(payload, dict):
        raise where.error("malformed record", "payload")
    compact = where.entry.get("format") == 3  # its records compact (``audit.compact``)
    if "changes" in payload:
        if compact:  # as format 2 has them
            payload["changes"] = _thick_changes(before, where)
        stub = _applied(before, where)
    else:
        stub = where.decode(where.get("payload", "state"), AgentState, "payload.state")
    execution = before.execution
    if stub.execution is None or execution is None:
        raise where.error("a step record whose state has no execution", "payload.state")
    store = before.context.store
    document = Document()  # the record's new messages and its step share what repeats
    changes = where.get("payload", "sections")
    if not isinstance(changes, dict) or not set(changes) <= set(SECTIONS):
        raise where.error("malformed message sections", "payload.sections")
    outputs_added = False  # format 3: the step's output messages, added after it is read
    for name, change in changes.items():
        field = f"payload.sections.{name}"
        keep = where.get("keep", data=change, base=field)
        section = store.section(name)
        if not isinstance(keep, int) or isinstance(keep, bool) or not 0 <= keep <= len(section):
            raise where.error(f"cannot keep {keep!r} of {len(section)} messages", f"{field}.keep")
        if compact and name == "messages" and isinstance(change, dict) and "add" not in change:
            if not step:
                raise where.error("malformed record", f"{field}.add")
            outputs_added = True
            store = store.with_section(name, section.prefix(keep))
            continue
        added = where.get("add", data=change, base=field)
        if not isinstance(added, list):
            raise where.error("expected an array", f"{field}.add")
        messages = [
            _message(item, f"{field}.add[{index}]", where, document, compact)
            for index, item in enumerate(added)
        ]
        store = store.with_section(name, section.prefix(keep).extend(messages))
    context = stub.context.with_store(store)
    if not step:
        return replace_fields(
            stub,
            context=context,
            execution=replace_fields(stub.execution, step_executions=execution.step_executions),
        )
    field = "payload.step_execution"
    written = where.get("payload", "step_execution")
    try:
        step_execution = decode_step_execution(
            resolve_step(written) if compact else written,
            context,
            document=document,
            head=heads.of(context),
            compact=compact,
        )
    except StateDecodeError as exc:
        raise where.error(exc.reason, field if exc.path == "$" else f"{field}.{exc.path}") from None
    if outputs_added:
        outputs = store.messages.extend(step_execution.step.output_messages)
        context = context.with_store(store.with_section("messages", outputs))
    steps = execution.step_executions.append(step_execution)
    return replace_fields(
        stub, context=context, execution=replace_fields(stub.execution, step_executions=steps)
    )


def _after_step_legacy(state: AgentState, where: _Where) -> AgentState:
    """Logs written before step records described the state: the step, and its messages
    appended (what joined the conversation between steps is not in such a log)."""
    data = where.get("payload", "step_execution")
    step = where.get("payload", "step_execution", "step")
    if not isinstance(step, dict):
        raise where.error("malformed record", "payload.step_execution.step")
    document = {**data, "step": {**step, "input_messages": []}}
    step_execution = where.decode(document, StepExecution, "payload.step_execution")
    execution = state.execution
    assert execution is not None  # checked when the run's start was read
    state = state.with_execution(execution.with_step_execution(step_execution))
    if step_execution.step.compaction is not None:  # done before the step's request
        state = apply_compaction(state, step_execution.step.compaction)
    for message in step_execution.step.output_messages:
        state = state.with_message(message)
    return state
