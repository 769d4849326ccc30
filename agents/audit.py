"""The audit log: a tamper-evident JSONL record of runs (SPEC §14).

``AuditLog.open(path)`` is a (critical) listener: it writes one line per event and one per
completed step, each with ``seq``, ``prev_hash`` and ``hash`` — the SHA-256 of the record
without its ``hash``, as canonical JSON (sorted keys, no spaces, UTF-8) — so an edited byte,
an inserted, deleted or reordered line, or a cut-off file is detected by ``verify``. Every
line is flushed as it is written, and the file is fsynced at every step boundary and at the
end of a run (group commit: a crash loses at most the events of the step in flight). A
terminal record follows ``ExecutionCompleted`` and holds the final state, from which
``read`` rebuilds it exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

from agents.core.compaction import apply_compaction
from agents.errors import AuditLogTampered, StateDecodeError
from agents.records.codec import (
    decode_step_execution,
    encode_step_execution,
    encode_value,
    from_dict,
    to_dict,
)
from agents.records.context import SECTIONS, MessageStore
from agents.records.events import (
    LIVE_FIELDS,
    Event,
    ExecutionCompleted,
    ExecutionStarted,
    StepCompleted,
)
from agents.records.frozen import History, to_history
from agents.records.messages import Message
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.replaying import RunRecord, Segment
from agents.shell.subagents import DEPTH_KEY

__all__ = ["GENESIS", "AuditLog", "canonical"]

GENESIS: Final = "0" * 64
_NO_STEPS: Final[History[StepExecution]] = to_history(())
_NO_SECTIONS: Final = MessageStore()
_HASH_KEY: Final = b',"hash":"'
# The end of a line as the log writes it (canonical JSON sorts the keys; the hash comes last).
_TAIL: Final = re.compile(
    rb',"prev_hash":"([0-9a-f]{64})","record":"(\w+)","seq":(\d+),"step":(?:null|\d+),'
    rb'"type":"\w+","hash":"([0-9a-f]{64})"\}$'
)
# Every record the log writes begins so (canonical JSON: "agent_id" is the first key).
_RECORD_START: Final = b'{"agent_id":'
_KEYS: Final = frozenset(
    {"seq", "record", "type", "agent_id", "execution_id", "step", "payload", "prev_hash", "hash"}
)


def canonical(record: dict[str, Any]) -> bytes:
    """Canonical JSON of a record: sorted keys, no spaces, UTF-8."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def _line_digest(raw: bytes) -> str | None:
    """The hash of the record on a line as written (``None`` if the line is not laid out
    as the log writes it: any such change is a modification)."""
    cut = raw.rfind(_HASH_KEY)
    if cut < 0 or not raw.endswith(b'"}'):
        return None
    return hashlib.sha256(raw[:cut] + b"}").hexdigest()


def _check_line(raw: bytes, number: int, previous: str, path: Any) -> tuple[str, str]:
    """Check line ``number`` against the hash before it: its own hash and record kind, or
    ``AuditLogTampered`` saying what is wrong with it."""
    fast = _TAIL.search(raw, max(0, len(raw) - 400))
    if fast is not None:  # the layout the log writes: check without parsing
        prev_hash, record, seq, digest = fast.groups()
        if (
            int(seq) == number
            and prev_hash.decode() == previous
            and hashlib.sha256(raw[: fast.start(4) - len(_HASH_KEY)] + b"}").hexdigest()
            == digest.decode()
        ):
            return digest.decode(), record.decode()
    entry = _parse(raw, path, number)  # something is wrong: say precisely what
    if entry.get("seq") != number:
        raise AuditLogTampered(
            f"{path}: line {number} has seq {entry.get('seq')!r}, expected {number} "
            "(a line was inserted, deleted or moved)",
            line=number,
        )
    if entry.get("prev_hash") != previous:
        raise AuditLogTampered(
            f"{path}: line {number} does not follow line {number - 1} "
            "(the chain of hashes is broken)",
            line=number,
        )
    if entry.get("hash") != _line_digest(raw):
        raise AuditLogTampered(
            f"{path}: line {number} was modified (its hash does not match)", line=number
        )
    return entry["hash"], str(entry.get("record"))


class AuditLog:
    """A listener writing the audit log of every run it is given to (pass it in
    ``listeners=``; ``close()`` when done, or use it as a context manager)."""

    critical: Final = True  # an audited run must not go on unaudited

    def __init__(self, path: Path, handle: Any, seq: int, last_hash: str) -> None:
        self.path = path
        self._handle = handle
        self._seq = seq
        self._last = last_hash
        self._lock = threading.Lock()
        # The state each open run's last record describes, by agent, execution and depth
        # (a sub-agent's records interleave with its parent's, and with deterministic ids
        # a child may carry its parent's ids): a step record holds what changed since.
        self._described: dict[tuple[str | None, str | None, int], AgentState] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> AuditLog:
        """Open ``path`` for appending; an existing log is continued (its chain extended)."""
        target = Path(path)
        seq, last = 0, GENESIS
        if target.exists() and target.stat().st_size > 0:
            count = cls.verify(target, complete=False)
            last_line = target.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            seq, last = count, json.loads(last_line)["hash"]
        target.parent.mkdir(parents=True, exist_ok=True)
        return cls(target, target.open("ab"), seq, last)

    # -- writing ----------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        """Record one event (and, for a completed step, the step; at the end, the state)."""
        self._write("event", type(event).__name__, event, _event_payload(event))
        if isinstance(event, ExecutionStarted):
            self._described[_run_key(event, event.state)] = event.state
        elif isinstance(event, StepCompleted):
            key = _run_key(event, event.state)
            before = self._described.get(key)
            self._described[key] = event.state
            self._write(
                "step",
                "StepExecution",
                event,
                _step_payload(event.step_execution, event.state, before),
                sync=True,
            )
        elif isinstance(event, ExecutionCompleted):
            self._described.pop(_run_key(event, event.state), None)
            self._write("end", "AgentState", event, {"state": to_dict(event.state)}, sync=True)

    def _write(
        self, record: str, kind: str, event: Event, payload: dict[str, Any], *, sync: bool = False
    ) -> None:
        with self._lock:
            if self._handle is None:
                raise ValueError(f"the audit log {self.path} is closed")
            entry: dict[str, Any] = {
                "seq": self._seq + 1,
                "record": record,
                "type": kind,
                "agent_id": event.agent_id,
                "execution_id": event.execution_id,
                "step": event.step,
                "payload": payload,
                "prev_hash": self._last,
            }
            body = canonical(entry)
            digest = hashlib.sha256(body).hexdigest()
            # The hash goes last on the line, so verifying needs no re-serialisation: the
            # bytes before it, closed with "}", are exactly the canonical record it covers.
            self._handle.write(body[:-1] + _HASH_KEY + digest.encode() + b'"}\n')
            self._handle.flush()
            if sync:
                os.fsync(self._handle.fileno())
            self._seq += 1
            self._last = digest

    def close(self) -> None:
        """Flush, fsync and close the file."""
        with self._lock:
            if self._handle is not None:
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()
                self._handle = None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path)!r}, records={self._seq})"

    # -- reading ----------------------------------------------------------------------------

    @staticmethod
    def verify(
        path: str | os.PathLike[str],
        *,
        complete: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Check every line and the chain; the number of records checked.

        Raises ``AuditLogTampered`` with the first bad ``line`` (1-based): an edited,
        inserted, deleted or reordered line; a torn last line (a write cut by a crash),
        reported as torn only when every line before it verifies; and, with
        ``complete=True``, an empty file or a log whose last run has no terminal record
        ("incomplete").
        """
        data = _read_bytes(path)
        lines = data.split(b"\n")
        torn = lines.pop()  # what follows the last newline: b"" unless a write was cut
        previous, last_record = GENESIS, None
        total = len(lines)
        for number, raw in enumerate(lines, start=1):
            if progress is not None and number % 20_000 == 0:
                progress(number, total)
            previous, last_record = _check_line(raw, number, previous, path)
        if torn:
            # Only now that every line before it verified can the last one be a torn write,
            # and only if it begins as every record the log writes begins.
            number = len(lines) + 1
            if not _RECORD_START.startswith(torn[: len(_RECORD_START)]):
                _check_line(torn, number, previous, path)
            raise AuditLogTampered(
                f"{path}: torn last line {number} (a write cut short, as by a crash); "
                f"the {len(lines)} lines before it are intact",
                line=number,
            )
        if not lines and complete:
            raise AuditLogTampered(f"{path}: empty file (no audit records)", line=1)
        if complete and last_record != "end":
            raise AuditLogTampered(
                f"{path}: incomplete: the log has {len(lines)} records and no terminal record "
                "(the run did not finish, or the end of the file was cut off)",
                line=len(lines) + 1,
            )
        return len(lines)

    @staticmethod
    def read(path: str | os.PathLike[str]) -> AgentState:
        """The final state of the last run in the log (equal to the one the run returned).

        Sub-agents' runs, recorded inside their parent's steps, are not "the last run". A
        log without the run's terminal record (a crash) gives the state as it was after the
        last step recorded whole, still IN_PROGRESS: its conversation, steps and queues
        exactly as the run had them. Records this cannot make sense of raise
        ``StateDecodeError`` naming the line.
        """
        return AuditLog.read_run(path).final

    @staticmethod
    def read_run(path: str | os.PathLike[str]) -> RunRecord:
        """The last run of the log as a ``RunRecord`` (what ``agents replay`` replays):
        each stretch of its execution — its start, and every resumption after a suspension
        — with the state it started from and the state it ended in (as far as the log goes,
        for a crashed run's last one)."""
        data = _read_bytes(path)
        lines = data.split(b"\n")
        torn = lines.pop()
        entries = [(number, _parse(raw, path, number)) for number, raw in _numbered(lines)]
        if torn and not _RECORD_START.startswith(torn[: len(_RECORD_START)]):
            _parse(torn, path, len(lines) + 1)  # not a write cut short: say what it is
        if not entries:
            raise StateDecodeError(f"{path}: the audit log is empty")
        return _last_run(entries, path)


def _numbered(lines: list[bytes]) -> list[tuple[int, bytes]]:
    return [(number, raw) for number, raw in enumerate(lines, start=1) if raw]


def _read_bytes(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise StateDecodeError(f"{path}: no such file", "$") from None
    except IsADirectoryError:
        raise StateDecodeError(f"{path}: is a directory, not an audit log", "$") from None


def _parse(raw: bytes, path: Any, number: int) -> dict[str, Any]:
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise AuditLogTampered(f"{path}: line {number} is not a JSON record", line=number) from None
    if not isinstance(entry, dict) or not set(entry) >= _KEYS:
        raise AuditLogTampered(
            f"{path}: line {number} is not an audit record (missing fields)", line=number
        )
    return entry


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


def _run_key(event: Event, state: AgentState) -> tuple[str | None, str | None, int]:
    depth = state.metadata.get(DEPTH_KEY, 0)
    return event.agent_id, event.execution_id, depth if isinstance(depth, int) else 0


def _depth(data: Any) -> int:
    """How deep a recorded state runs: 0 for a top-level run, 1 for its sub-agents..."""
    context = data.get("context") if isinstance(data, dict) else None
    metadata = context.get("metadata") if isinstance(context, dict) else None
    depth = metadata.get(DEPTH_KEY) if isinstance(metadata, dict) else None
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else 0


def _last_run(entries: list[tuple[int, dict[str, Any]]], path: Any) -> RunRecord:
    """The last top-level run: the stretches of its execution, each from its recorded start
    to its end record (the last one possibly to its last recorded step).

    Sub-agents' runs are recorded inside their parent's steps; their records carry their
    depth in the recorded state's metadata, so they are told apart even when they reuse
    the parent's ids."""
    starts: list[tuple[int, dict[str, Any]]] = []
    for number, entry in entries:
        if entry.get("record") == "event" and entry.get("type") == "ExecutionStarted":
            recorded = _Where(path, number, entry).get("payload", "state")
            if _depth(recorded) == 0:
                starts.append((number, entry))
    if not starts:
        raise StateDecodeError(f"{path}: no run started in this log")
    chain = [starts[-1]]
    execution_id = starts[-1][1].get("execution_id")
    for number, entry in reversed(starts[:-1]):  # the resumptions of the same execution
        payload = chain[0][1].get("payload")
        resumed = isinstance(payload, dict) and payload.get("resumed") is True
        if not resumed or entry.get("execution_id") != execution_id:
            break
        chain.insert(0, (number, entry))
    segments = []
    complete = False
    for number, entry in chain:
        start, end, complete = _segment(entries, number, entry, path)
        segments.append(Segment(start=start, end=end))
    return RunRecord(segments=tuple(segments), complete=complete)


def _segment(
    entries: list[tuple[int, dict[str, Any]]], first_line: int, first: dict[str, Any], path: Any
) -> tuple[AgentState, AgentState, bool]:
    """A stretch of a run from its ExecutionStarted record: its start, its end (the end
    record's state, or the state after its last recorded step) and whether it ended."""
    where = _Where(path, first_line, first)
    execution_id = first.get("execution_id")
    start = where.decode(where.get("payload", "state"), AgentState, "payload.state")
    if start.execution is None:
        raise where.error("the run's starting state has no execution", "payload.state.execution")
    state = start
    for number, entry in entries:
        record = entry.get("record")
        if number <= first_line or record not in ("step", "end"):
            continue
        where = _Where(path, number, entry)
        payload = where.get("payload")
        if entry.get("execution_id") != execution_id or (
            isinstance(payload, dict) and _depth(payload.get("state")) != 0
        ):
            continue  # another run's, or a sub-agent's
        if record == "end":
            end = where.decode(where.get("payload", "state"), AgentState, "payload.state")
            return start, end, True
        state = _after_step(state, where)
    return start, state, False


def _after_step(before: AgentState, where: _Where) -> AgentState:
    """The state after the step an audit record describes, from the state before it."""
    payload = where.get("payload")
    if not isinstance(payload, dict) or "state" not in payload:
        return _after_step_legacy(before, where)  # written before records described states
    stub = where.decode(payload["state"], AgentState, "payload.state")
    execution = before.execution
    if stub.execution is None or execution is None:
        raise where.error("a step record whose state has no execution", "payload.state")
    store = before.context.store
    changes = where.get("payload", "sections")
    if not isinstance(changes, dict) or not set(changes) <= set(SECTIONS):
        raise where.error("malformed message sections", "payload.sections")
    for name, change in changes.items():
        field = f"payload.sections.{name}"
        keep = where.get("keep", data=change, base=field)
        added = where.get("add", data=change, base=field)
        section = store.section(name)
        if not isinstance(keep, int) or isinstance(keep, bool) or not 0 <= keep <= len(section):
            raise where.error(f"cannot keep {keep!r} of {len(section)} messages", f"{field}.keep")
        if not isinstance(added, list):
            raise where.error("expected an array", f"{field}.add")
        messages = [
            where.decode(item, Message, f"{field}.add[{index}]") for index, item in enumerate(added)
        ]
        store = store.with_section(name, section.prefix(keep).extend(messages))
    context = stub.context.with_store(store)
    field = "payload.step_execution"
    try:
        step_execution = decode_step_execution(where.get("payload", "step_execution"), context)
    except StateDecodeError as exc:
        raise where.error(exc.reason, field if exc.path == "$" else f"{field}.{exc.path}") from None
    steps = execution.step_executions.append(step_execution)
    return stub._evolve(context=context, execution=stub.execution._evolve(step_executions=steps))


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


def _event_payload(event: Event) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for field in attrs.fields(type(event)):
        if field.name in LIVE_FIELDS or field.name in ("agent_id", "execution_id", "step"):
            continue
        payload[field.name] = encode_value(getattr(event, field.name))
    if isinstance(event, ExecutionStarted):
        payload["state"] = to_dict(event.state)
    return payload


def _step_payload(
    step_execution: StepExecution, state: AgentState, before: AgentState | None
) -> dict[str, Any]:
    """A step record: the step (its input messages as a reference into the conversation
    where they are one, as in an encoded state), and the state after it as a change from
    the state the previous record described: every field but the message sections and the
    steps, and for each section that changed, how many messages it kept and which it added.
    A reader rebuilds the state after every recorded step exactly (a crash loses nothing
    that was recorded) while a long run's log stays O(steps)."""
    execution = state.execution
    assert execution is not None  # a step belongs to an execution
    stub = state._evolve(
        context=state.context.with_store(_NO_SECTIONS),
        execution=execution._evolve(step_executions=_NO_STEPS),
    )
    old = before.context.store if before is not None else _NO_SECTIONS
    new = state.context.store
    sections = {}
    for name in SECTIONS:
        was, now = old.section(name), new.section(name)
        keep = len(was) if now is was else was.common_prefix(now)
        if keep == len(was) == len(now):
            continue
        sections[name] = {
            "keep": keep,
            "add": [encode_value(message) for message in now.items_from(keep)],
        }
    return {
        "sections": sections,
        "state": encode_value(stub),
        "step_execution": encode_step_execution(step_execution, state.context),
    }
