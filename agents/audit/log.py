"""``AuditLog``: the listener that writes the audit log, and its readers
(docs/design/auditing.md)."""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from agents.audit.blobs import MENTION, blob_store, check_blobs, keep_blobs, log_blobs
from agents.audit.chain import (
    FORMAT,
    GENESIS,
    Checked,
    canonical,
    line_of,
    read_bytes,
    verify_log,
)
from agents.audit.durability import BATCH, Durability, GroupCommit, HeldSteps
from agents.audit.keys import PrivateKey, fingerprint, load_private_key, load_public_key, sign
from agents.audit.reading import read_run, read_runs
from agents.audit.records import (
    Heads,
    event_payload,
    request_shape,
    run_key,
    state_change,
    step_payload,
)
from agents.errors import AuditLogTampered, ConfigurationError, InvalidArgument, ResourceError
from agents.records.arguments import path as checked_path
from agents.records.arguments import switch
from agents.records.blobs import bind_blobs
from agents.records.codec import Encoding
from agents.records.events import Event, ExecutionCompleted, ExecutionStarted, StepCompleted
from agents.records.inference import InferenceRequest
from agents.records.state import AgentState
from agents.replaying import RunRecord
from agents.shell.files import unusable

__all__ = ["AuditLog"]

_HELD_BYTES: Final = 1 << 16  # durability "none": lines held back before they are written
_RECORDED: Final[frozenset[type[Event]]] = frozenset(
    {ExecutionStarted, StepCompleted, ExecutionCompleted}
)


def _run_of(event: Any) -> tuple[str | None, str | None, int]:
    return run_key(event, event.state)


class AuditLog:
    """A listener writing the audit log of every run it is given to (pass it in
    ``listeners=``; ``close()`` when done, or use it as a context manager).

    One record per step (``step``), one when a run starts (``start``) and one when it ends
    (``end``), chained by hashes and, with a signing key, signed. Many runs, in threads,
    may share one log: their records interleave and their fsyncs are shared.
    """

    critical: Final = True  # an audited run must not go on unaudited

    @property
    def event_types(self) -> frozenset[type[Event]] | None:
        """The events the log acts on (``None``: all, with ``events=True``): the loop builds
        the events of a step's inside only for listeners that want them."""
        return None if self._events else _RECORDED

    def __init__(
        self,
        path: Path,
        handle: Any,
        seq: int,
        last_hash: str,
        commit: GroupCommit,
        key: PrivateKey | None,
        events: bool,
        anchor: Any,
        log_id: str | None,
        blobs: Any = None,
    ) -> None:
        self.path = path
        self.blobs = blobs if blobs is not None else blob_store(path)  # the parts' bytes
        self._handle = handle
        self._size = handle.tell()
        self._seq = seq
        self._last = last_hash
        self._commit = commit
        self._key = key
        self._fingerprint = fingerprint(key.public_key()) if key is not None else None
        self._events = events
        self._anchor = anchor
        self._log_id = log_id  # the first record's hash, once there is one
        # Boundary records not known to be on disk yet (the commit's number, the log's
        # record count, the hash), and the last one that is: the head an anchor may name.
        self._pending: collections.deque[tuple[int, int, str]] = collections.deque()
        self._durable: tuple[int, str] | None = None
        # What ``anchor_head`` takes, never the log's own lock: a session store asks for
        # the head inside its save's transaction, and a writer holding the log's lock may
        # be waiting for that store (its blobs, its anchor): the two would wait for ever.
        self._heads_lock = threading.Lock()
        attach = getattr(anchor, "attach_audit_log", None)
        self._attached = attach is not None
        if attach is not None:  # the store anchors the log in each checkpoint's transaction
            attach(self)
        # The state each open run's last record describes, by agent, execution and depth:
        # a step record holds what changed since.
        self._described: dict[tuple[str | None, str | None, int], AgentState] = {}
        # What each open run's requests offered last (the parts, and their shape as written).
        self._offers: dict[Any, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._heads = Heads()  # the system message of the runs' steps, built once
        # With durability "none", the lines not written yet: written together at each run's
        # end, past _HELD_BYTES and on closing; once such a write fails, the log takes no
        # more records (the lines lost would leave a gap in the chain).
        self._held: bytearray | None = bytearray() if commit.mode == "none" else None
        self._lost: str | None = None
        # With durability "none" (and no ``events``), the steps not recorded yet.
        held = commit.mode == "none" and not events
        self._held_steps = HeldSteps(self._record, _run_of) if held else None

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        signing_key: object = None,
        durability: Durability = "step",
        flush_interval: float = 0.01,
        events: bool = False,
        anchor: object = None,
        blobs: object = None,
    ) -> AuditLog:
        """Open ``path`` for appending; an existing log is continued (its chain extended).

        ``signing_key``: an Ed25519 private key (a ``cryptography`` key object, PEM bytes
        or a PEM file's path; the ``signing`` extra) that signs every run's start, each
        step and the end. ``durability``: ``"step"`` (each step's record is fsynced before
        the run goes on), ``"batch"`` (one fsync for what was written within
        ``flush_interval`` seconds, and at the end of each run), ``"none"`` (flushed only).
        ``events``: also one record per event. ``anchor``: a session store that keeps the
        log's anchor (its record count and last hash, ``agents.persistence.anchors``), moved
        forward once a step's record is durable, so that ``verify(..., anchor=store)``
        catches a log cut short. ``blobs``: where the bytes of the images, audio and
        documents the runs hold go (a ``BlobStore``, or a folder; ``<path>.blobs`` by
        default, made when the first is written), each before the record referring to it.
        """
        checked_path(path, "AuditLog.open: path")
        switch(events, "AuditLog.open: events")
        commit = GroupCommit(None, durability, flush_interval)  # the settings checked first
        store = blob_store(path, blobs, fsync=durability != "none")
        key = load_private_key(signing_key) if signing_key is not None else None
        target = Path(path)
        if anchor is not None and not callable(getattr(anchor, "anchor_audit_log", None)):
            raise ConfigurationError(
                f"anchor must be a session store that keeps anchors, not {type(anchor).__name__}"
            )
        seq, last, log_id = 0, GENESIS, None
        if _size(target) > 0:
            try:
                checked = verify_log(
                    target,
                    complete=False,
                    public_key=key.public_key() if key is not None else None,
                    progress=None,
                )
            except AuditLogTampered as exc:
                if key is None:
                    raise
                raise ConfigurationError(
                    f"{target}: cannot be continued with this signing key: {exc}"
                ) from None
            seq, last, log_id = checked.records, checked.head, checked.log_id
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = target.open("ab", buffering=0)
        except OSError as exc:
            raise ResourceError(f"cannot open {target}: {unusable(exc)}") from None
        commit.handle = handle
        return cls(target, handle, seq, last, commit, key, events, anchor, log_id, store)

    @property
    def fsyncs(self) -> int:
        """How many fsyncs the log has made (shared by the runs writing to it)."""
        return self._commit.fsyncs

    # -- writing ----------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        """Record one event: a run's start, a step, a run's end (and, with ``events``,
        every event)."""
        held = self._held_steps
        if held is None:
            self._record(event)
            return
        kind = event.__class__  # (durability "none": steps recorded a batch at a time)
        if kind is StepCompleted:
            with self._commit.mutex:
                if held.refused:
                    held.raise_refused(event)
                if self._handle is None:  # closed: refused as ever
                    self._record(event)
                held.steps.append(event)
                if len(held.steps) >= BATCH:
                    held.catch_up()
                    held.raise_refused(event)
        elif kind in _RECORDED:  # (a run's other events reach every listener)
            with self._commit.mutex:
                held.catch_up()
                held.raise_refused(event)
            # Outside the lock, as without held steps: a run's end may anchor the log in a
            # session store, whose own lock the log must not hold its lock across.
            self._record(event)

    def _record(self, event: Event) -> None:
        """Write ``event``'s record now (``__call__`` says when)."""
        kind = type(event)
        if isinstance(event, StepCompleted):
            key = run_key(event, event.state)
            before = self._described.get(key)
            self._described[key] = event.state
            if self._events:
                self._event("StepCompleted", event)
            # Notes a float orjson writes otherwise, and leaves it the times it writes as the
            # codec does (``canonical``).
            encoding = Encoding(None, times=True)
            step = event.step_execution
            head = self._heads.of(event.state.context, step.step.input_messages.head)
            payload = step_payload(step, event.state, before, encoding, head)
            if key[2]:
                payload["depth"] = key[2]  # a sub-agent's (its changes may not say)
            shape = self._offered(key, event.request, encoding)
            if shape is not None:
                payload["request"] = shape
            self._write("step", "StepExecution", event, payload, boundary=True, exotic=encoding.odd)
        elif isinstance(event, ExecutionStarted):
            self._described[run_key(event, event.state)] = event.state
            encoding = Encoding(None)
            payload = event_payload(event, encoding)
            if self._fingerprint is not None:
                payload["signed_by"] = self._fingerprint
            self._write(
                "start", "ExecutionStarted", event, payload, boundary=True, exotic=encoding.odd
            )
        elif isinstance(event, ExecutionCompleted):
            key = run_key(event, event.state)
            before = self._described.pop(key, None)
            encoding = Encoding(None)
            shape = self._offered(key, event.request, encoding)  # a suspended step's request
            self._offers.pop(key, None)
            change = state_change(event.state, before, None, encoding)
            payload = {**event_payload(event, encoding), **change}
            if key[2]:
                payload["depth"] = key[2]
            if shape is not None:
                payload["request"] = shape
            odd = encoding.odd
            self._write(
                "end", "ExecutionCompleted", event, payload, boundary=True, last=True, exotic=odd
            )
        elif self._events:
            self._event(kind.__name__, event)

    def _event(self, kind: str, event: Event) -> None:
        """An ``event`` record (with ``events=True``)."""
        encoding = Encoding(None)
        payload = event_payload(event, encoding)
        self._write("event", kind, event, payload, exotic=encoding.odd)

    def _offered(
        self, key: Any, request: InferenceRequest | None, encoding: Encoding
    ) -> dict[str, Any] | None:
        """The request's shape (``request_shape``, noting an odd float in ``encoding``)
        when it is not the one the run's last step record holds (the same objects, for
        most steps: nothing is encoded)."""
        if request is None:
            return None
        parts = (request.tools, request.model, request.response_format, request.options)
        last = self._offers.get(key)
        if last is not None and parts == last[0]:  # (the same objects: a tuple checks that first)
            return None
        shape = request_shape(request, encoding)
        self._offers[key] = (parts, shape)
        return None if last is not None and last[1] == shape else shape

    def _write(
        self,
        record: str,
        kind: str,
        event: Event,
        payload: dict[str, Any],
        *,
        boundary: bool = False,
        last: bool = False,
        exotic: bool,
    ) -> None:
        """Append a record (``exotic``: it may hold a float that orjson writes otherwise
        than ``json``, so ``canonical`` writes it with ``json``)."""
        commit = self._commit
        with commit.mutex:
            if self._handle is None:
                raise InvalidArgument(f"the audit log {self.path} is closed")
            if self._lost is not None:
                raise ResourceError(self._lost)
            entry: dict[str, Any] = {
                "agent_id": event.agent_id,
                "execution_id": event.execution_id,
                "format": FORMAT,
                "payload": payload,
                "prev_hash": self._last,
                "record": record,
                "seq": self._seq + 1,
                "step": event.step,
                "type": kind,
            }
            body = canonical(entry, exotic=exotic)
            if MENTION in body:  # the bytes first: no record refers to what is not there
                keep_blobs(event, payload, self.blobs)
            digest = hashlib.sha256(body).hexdigest()
            signature = sign(self._key, digest) if boundary and self._key is not None else None
            line = line_of(body, digest, signature)
            held = self._held
            if held is None:
                self._append(line)
            else:
                held += line
                if last or len(held) >= _HELD_BYTES:
                    self._release()
            self._seq += 1
            self._last = digest
            count = self._seq
            written = commit.appended()
            if self._log_id is None:
                self._log_id = digest
            mode = commit.mode
            anchored = boundary and self._anchor is not None
            if anchored:
                self._pending.append((written, count, digest))
            # Durable now: each boundary in "step" mode, a run's end in "batch" mode, and
            # what the log anchors itself — each run's end, and each step when no session
            # store's checkpoint anchors it (a store that attaches the log does).
            anchors = anchored and (last or (mode == "step" and not self._attached))
            synced = boundary and (mode == "step" or (last and mode == "batch"))
            if synced or anchors:
                commit.durable(written)
        if anchors:  # only once the record it names is on disk: the anchor never runs ahead
            self._anchor.anchor_audit_log(self._log_id, count, digest)

    def anchor_head(self) -> tuple[str, int, str] | None:
        """``(log id, records, last hash)`` of the latest start, step or end record known to
        be on disk (``None`` before there is one): what an anchor may name. A session store
        the log is attached to writes it in each checkpoint's transaction."""
        commit = self._commit
        with self._heads_lock:  # (not the log's lock: a store asks from inside its own)
            while self._pending and self._pending[0][0] <= commit.synced:
                _, count, digest = self._pending.popleft()
                self._durable = (count, digest)
            if self._durable is None or self._log_id is None:
                return None
            return self._log_id, *self._durable

    def _append(self, line: bytes) -> None:
        """Write one whole line, or nothing: a failed write is cut off again, so the log
        stays a valid prefix (the run then fails: the log is a critical listener)."""
        handle = self._handle
        try:
            done = handle.write(line)  # (a raw file: the whole line, but for a short write)
            if done < len(line):
                view = memoryview(line)[done:]
                while view:
                    view = view[handle.write(view) :]
        except BaseException:
            with contextlib.suppress(OSError):  # else the torn line stays: verify says so
                handle.truncate(self._size)
            raise
        self._size += len(line)

    def _release(self) -> None:
        """Write the lines held back (durability ``"none"``) at once; a write that fails
        loses them, so every record after is refused (``_lost``)."""
        held = self._held
        if not held or self._lost is not None:
            return
        lines = bytes(held)
        held.clear()
        try:
            self._append(lines)
        except BaseException as exc:
            why = f": {unusable(exc)}" if isinstance(exc, OSError) else ""
            self._lost = f"the audit log {self.path} lost records it could not write{why}"
            if isinstance(exc, OSError):
                raise ResourceError(self._lost) from None
            raise

    def close(self) -> None:
        """Record and write what is held back, fsync and close the file. A step held back
        that cannot be recorded (of a run that did not end) is raised once the file is
        closed."""
        commit = self._commit
        refused = None
        with commit.lock:
            if self._handle is not None:
                try:
                    if self._held_steps is not None:
                        self._held_steps.catch_up()
                        refused = self._held_steps.first_refused()
                    self._release()
                finally:
                    commit.close()
                    commit.durable(commit.written)
                    self._handle.close()
                    self._handle = None
        if self._attached:
            self._anchor.detach_audit_log(self)
            self._attached = False
        if refused is not None:
            raise refused

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        signed = f", signed by {self._fingerprint}" if self._fingerprint is not None else ""
        return (
            f"AuditLog({str(self.path)!r}, records={self._seq}, "
            f"durability={self._commit.mode!r}{signed})"
        )

    # -- reading ----------------------------------------------------------------------------

    @staticmethod
    def verify(
        path: str | os.PathLike[str],
        *,
        complete: bool = True,
        public_key: object = None,
        anchor: object = None,
        progress: Callable[[int, int], None] | None = None,
        blobs: object = None,
    ) -> int:
        """Check every line and the chain; the number of records checked.

        Raises ``AuditLogTampered`` with the first bad ``line`` (1-based): an edited,
        inserted, deleted or reordered line; a torn last line (a write cut by a crash),
        reported as torn only when every line before it verifies; and, with
        ``complete=True``, an empty file or a log whose last run has no terminal record
        ("incomplete"). With ``public_key`` (the signing key's public half: a key object,
        PEM bytes or a PEM file's path), every start, step and end record must be signed by
        it: that proves who wrote the log, which the hashes alone do not (anyone can
        recompute them). With ``anchor`` (the session store that anchored the log), a log
        shorter than its anchor is "truncated". Every blob a record refers to must be in
        ``blobs`` (the log's store: ``<path>.blobs`` by default) and hash right, or the
        error names the record's line and the hash.
        """
        checked = AuditLog.check(
            path,
            complete=complete,
            public_key=public_key,
            anchor=anchor,
            progress=progress,
            blobs=blobs,
        )
        return checked.records

    @staticmethod
    def check(
        path: str | os.PathLike[str],
        *,
        complete: bool = True,
        public_key: object = None,
        anchor: object = None,
        progress: Callable[[int, int], None] | None = None,
        blobs: object = None,
    ) -> Checked:
        """``verify``, and with ``anchor`` (the session store that anchored the log) a log
        shorter than its anchor is ``AuditLogTampered`` ("truncated"); telling also how
        many signatures were verified and how many records carry one (``Checked``)."""
        checked_path(path, "AuditLog.verify: path")
        switch(complete, "AuditLog.verify: complete")
        key = load_public_key(public_key) if public_key is not None else None
        data = read_bytes(path)  # read once, for the chain and the blobs
        checked = verify_log(
            path, complete=complete, public_key=key, progress=progress, anchor=anchor, data=data
        )
        return checked._replace(blobs=check_blobs(path, blob_store(path, blobs), data))

    @staticmethod
    def read(path: str | os.PathLike[str]) -> AgentState:
        """The final state of the last run in the log (equal to the one the run returned).

        Sub-agents' runs, recorded inside their parent's steps, are not "the last run". A
        log without the run's terminal record (a crash) gives the state as it was after the
        last step recorded whole, still IN_PROGRESS: its conversation, steps and queues
        exactly as the run had them. Records this cannot make sense of raise
        ``StateDecodeError`` naming the line. Its parts read their bytes from the log's
        blobs (``<path>.blobs``), when they are needed.
        """
        checked_path(path, "AuditLog.read: path")
        return _with_blobs(path, read_run(path)).final

    @staticmethod
    def read_runs(path: str | os.PathLike[str]) -> list[RunRecord]:
        """Every top-level run of the log as a ``RunRecord``, in the order they started
        (a log may hold many: an agent served to many callers, runs in threads). A run
        resumed after other runs' records joins its own stretches."""
        checked_path(path, "AuditLog.read_runs: path")
        return [_with_blobs(path, record) for record in read_runs(path)]

    @staticmethod
    def read_run(path: str | os.PathLike[str]) -> RunRecord:
        """The last run of the log as a ``RunRecord`` (what ``agents replay`` replays):
        each stretch of its execution — its start, and every resumption after a suspension
        — with the state it started from and the state it ended in (as far as the log goes,
        for a crashed run's last one)."""
        checked_path(path, "AuditLog.read_run: path")
        return _with_blobs(path, read_run(path))


def _size(target: Path) -> int:
    """The size of the log at ``target`` (0 where there is none yet), or a
    ``ResourceError`` where no log can be: a path too long, under a file, holding a NUL."""
    try:
        return target.stat().st_size
    except FileNotFoundError:
        return 0
    except (OSError, ValueError) as exc:
        raise ResourceError(f"cannot open {target}: {unusable(exc)}") from None


def _with_blobs(path: str | os.PathLike[str], record: RunRecord) -> RunRecord:
    """``record``, its parts reading their bytes from the blobs beside the log."""
    store = log_blobs(path)
    if store is not None:
        bind_blobs(record, store)
    return record
