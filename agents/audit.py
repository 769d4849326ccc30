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
from typing import Any, Final

import attrs

from agents.codec import encode_value, from_dict, to_dict
from agents.compaction import apply_compaction
from agents.errors import AuditLogTampered, StateDecodeError
from agents.events import (
    LIVE_FIELDS,
    Event,
    ExecutionCompleted,
    ExecutionStarted,
    StepCompleted,
)
from agents.execution import ExecutionStatus
from agents.persistent import to_history
from agents.state import AgentState
from agents.step import StepExecution

__all__ = ["GENESIS", "AuditLog", "canonical"]

GENESIS: Final = "0" * 64
_NO_MESSAGES: Final = to_history(())
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
        if isinstance(event, StepCompleted):
            self._write(
                "step",
                "StepExecution",
                event,
                {"step_execution": _step_payload(event.step_execution)},
                sync=True,
            )
        elif isinstance(event, ExecutionCompleted):
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

        A log without a terminal record (a crash) gives the state as far as it got: the
        execution's starting state with every completed step, still IN_PROGRESS.
        """
        data = _read_bytes(path)
        entries = []
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw:
                continue
            try:
                entries.append(_parse(raw, path, number))
            except AuditLogTampered:
                if number == len(data.split(b"\n")) and not data.endswith(b"\n"):
                    break  # a torn last line: the prefix stays readable
                raise
        if not entries:
            raise StateDecodeError(f"{path}: the audit log is empty", "$")
        for entry in reversed(entries):
            if entry.get("record") == "end":
                return _state(entry, path)
        return _partial(entries, path)


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
    except (UnicodeDecodeError, ValueError):
        raise AuditLogTampered(f"{path}: line {number} is not a JSON record", line=number) from None
    if not isinstance(entry, dict) or not set(entry) >= _KEYS:
        raise AuditLogTampered(
            f"{path}: line {number} is not an audit record (missing fields)", line=number
        )
    return entry


def _state(entry: dict[str, Any], path: Any) -> AgentState:
    try:
        return from_dict(entry["payload"]["state"], AgentState)
    except (KeyError, TypeError):
        raise StateDecodeError(f"{path}: line {entry.get('seq')}: no state", "payload") from None


def _partial(entries: list[dict[str, Any]], path: Any) -> AgentState:
    started = [
        e for e in entries if e.get("record") == "event" and e.get("type") == "ExecutionStarted"
    ]
    if not started:
        raise StateDecodeError(f"{path}: no run started in this log", "$")
    start = started[-1]
    state = _state(start, path)
    steps = [e for e in entries if e.get("record") == "step" and e["seq"] > start["seq"]]
    execution = state.execution
    assert execution is not None
    for entry in steps:
        data = dict(entry["payload"]["step_execution"])
        step = dict(data["step"])
        step["input_messages"] = []  # references into the conversation: not rebuilt
        data["step"] = step
        step_execution = from_dict({**data, "schema_version": 1}, StepExecution)
        execution = execution.with_step_execution(step_execution)
        state = state.with_execution(execution)
        if step_execution.step.compaction is not None:  # done before the step's request
            state = apply_compaction(state, step_execution.step.compaction)
        for message in step_execution.step.output_messages:
            state = state.with_message(message)
    return state.with_execution(execution._evolve(status=ExecutionStatus.IN_PROGRESS))


def _event_payload(event: Event) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for field in attrs.fields(type(event)):
        if field.name in LIVE_FIELDS or field.name in ("agent_id", "execution_id", "step"):
            continue
        payload[field.name] = encode_value(getattr(event, field.name))
    if isinstance(event, ExecutionStarted):
        payload["state"] = to_dict(event.state)
    return payload


def _step_payload(step_execution: StepExecution) -> dict[str, Any]:
    """The step as JSON, its input messages as a reference (their number in the
    conversation): writing them whole would make a long run's log quadratic."""
    step = step_execution.step
    data = to_dict(step_execution._evolve(step=step._evolve(input_messages=_NO_MESSAGES)))
    data.pop("schema_version", None)
    data["step"]["input_messages"] = {
        "kind": "MessagesRef",
        "prefix": len(step.input_messages.body()),
    }
    return data
