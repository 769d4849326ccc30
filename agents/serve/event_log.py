"""A session's event log as an ``agents serve`` process writes it: the events' JSON, the
thread committing every run's events (group commit), and each run's writer.

A step's events are committed with its checkpoint, in the same transaction (the store's
``save_with_events``; a run's last events with its last save), so a step's end is in the
log exactly when its checkpoint is in the store. What must be streamed before the step
ends (streamed text, a tool's start) and a run's own last events are written by one thread
(``EventLog``), which commits what every run handed over meanwhile in one transaction; a
tool's start is deferred a little, so that a quick tool's start goes into its step's
checkpoint instead. With a store that cannot commit events with a state, a run hands every
step's events over and waits until they are committed, before its checkpoint. The events
this process writes for a session's run in progress are also kept in memory, so that a
stream following the run reads them from there, not from the store; they go when the run
ends (a session deleted and created again with the same id, here or by another process,
numbers its events from 1 again: memory would give its readers another conversation's).
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs

from agents.persistence.session import Session, SessionStore
from agents.records.codec import encode_value
from agents.records.events import LIVE_FIELDS, Event, ExecutionCompleted, StepCompleted
from agents.records.json_text import dumps, utf8_safe
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.shell.subagents import DEPTH_KEY

__all__ = [
    "ENDED",
    "EventLog",
    "Pending",
    "RunStore",
    "RunWriter",
    "ended",
    "event_data",
    "event_type",
]

ENDED: Final = "RunEnded"  # the last event of every run this server drives


def event_data(event: Event) -> dict[str, Any]:
    """An engine event as the stream sends it: its type, step and fields as JSON (secret
    keys redacted), without the live records; a finished run adds its status, answer, the
    calls waiting for approval and the questions waiting for a human; a step adds its
    timeline row."""
    kind = type(event)
    data: dict[str, Any] = {"type": kind.__name__, "step": event.step}
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(
            field.name
            for field in attrs.fields(kind)
            if field.name not in LIVE_FIELDS
            and field.name not in ("agent_id", "execution_id", "step")
        )
    for name in names:
        value = getattr(event, name)
        data[name] = value if type(value) in _SCALARS else encode_value(value)
    state = getattr(event, "state", None)
    if state is not None and DEPTH_KEY in state.metadata:
        data["depth"] = state.metadata[DEPTH_KEY]  # a sub-agent's event
    if isinstance(event, StepCompleted):
        rows = state.timeline(start=len(state.step_executions)) if state is not None else []
        row = rows[-1] if rows else None
        continuation = event.step_execution.continuation
        signal = continuation.highest_signal
        if row is not None and continuation.should_stop and signal is not None:
            # The step decided the run's end (its answer, a tool's stop): its row says why,
            # as the finished execution's timeline will.
            row = attrs.evolve(row, stop_reason=signal.reason)
        data["timeline"] = encode_value(row) if row is not None else None
    if isinstance(event, ExecutionCompleted) and state is not None:
        # The last step's row as GET /timeline gives it from now on: with the stop reason,
        # also when the run stopped after it (a limit reached at the next step's start).
        rows = state.timeline(start=len(state.step_executions))
        data["timeline"] = encode_value(rows[-1]) if rows else None
        data["final_response"] = state.final_response
        data["stop_reason"] = state.stop_reason.value if state.stop_reason else None
        data["pending_approvals"] = [encode_value(call) for call in state.pending_approvals]
        data["pending_inputs"] = [encode_value(question) for question in state.pending_inputs]
    return data


_FIELDS: dict[type[Event], tuple[str, ...]] = {}  # the fields an event's data has, by type
_SCALARS: Final = frozenset({str, int, bool, type(None)})  # as they are in JSON


def ended(text: str) -> bool:
    """Whether an event (as the log keeps it) is a run's last."""
    if text.startswith(_TYPED):
        return text.startswith(_ENDED_TEXT)
    return bool(json.loads(text).get("type") == ENDED)


def event_type(text: str) -> str:
    """An event's type (as the log keeps it: ``{"type":"...",...}``)."""
    if text.startswith(_TYPED):
        end = text.find('"', len(_TYPED))
        if end > 0 and "\\" not in text[len(_TYPED) : end]:
            return text[len(_TYPED) : end]
    kind = json.loads(text).get("type", "message")
    return str(kind)


# Events written at once (with those held before them): what a client waits for — a piece
# of streamed text, a tool starting (it may be slow), a step done, a run ending. The others
# wait for the next of these, so that a step costs one or two transactions, not one an event.
_AT_ONCE: Final = frozenset(
    {"InferenceDelta", "ReasoningDelta", "ToolCallStarted", "StepCompleted", "ExecutionCompleted"}
)
# ... of which the run goes on without waiting for the commit (the next write that waits,
# at the step's end at the latest, waits for them too: the log commits in order). Only
# committed events are streamed, so a crash before their commit loses none a client saw,
# and the step they belong to runs again from the last checkpoint.
_UNAWAITED: Final = frozenset({"InferenceDelta", "ReasoningDelta", "ToolCallStarted"})
# Where the store can commit events with a session's state (``save_with_events``), the end
# of a step or run is committed with the checkpoint or save that follows it (one
# transaction a step, and the step's events and state committed together), and a tool's
# start is written after ``_DEFERRED`` seconds unless the step's checkpoint took it first
# (so only a tool that takes a while costs a transaction of its own). A sub-agent's events
# are written as above: its parent's checkpoint may be far off.
_WITH_SAVE: Final = frozenset({"StepCompleted", "ExecutionCompleted"})
_DEFERRED: Final = 0.05
_TICK: Final = 0.05  # how often the log's thread looks for deferred writes due
_IDLE: Final = 5.0  # seconds without a write after which the log's thread leaves


class RunWriter:
    """A run's listener writing its events to the session's log, in order."""

    def __init__(self, log: EventLog, store: Any, session_id: str) -> None:
        self._log = log
        self._store = store
        self.session_id = session_id
        self._held: list[str] = []
        self._unawaited: list[Pending] = []  # handed over, their commit not waited for
        self.merging = hasattr(store, "save_with_events")

    def __call__(self, event: Event) -> None:
        data = event_data(event)
        self._held.append(_text(data))
        kind = data["type"]
        if kind not in _AT_ONCE:
            return
        if self.merging and "depth" not in data:
            if kind in _WITH_SAVE:
                return  # committed with the checkpoint or save that follows
            if kind == "ToolCallStarted":
                self.flush(wait=False, defer=_DEFERRED)
                return
        self.flush(wait=kind not in _UNAWAITED)

    def write(self, data: dict[str, Any]) -> None:
        """Write a server's own event (and any held before it) now."""
        self._held.append(_text(data))
        self.flush()

    def hold(self, data: dict[str, Any]) -> None:
        """A server's own event, written with the next events written (one transaction)."""
        self._held.append(_text(data))

    def flush(self, *, wait: bool = True, defer: float = 0.0) -> None:
        """Hand the held events to the log (to be written ``defer`` seconds from now at the
        latest); with ``wait``, return once they and the ones handed over before them are
        committed (the first failure among them raised)."""
        if self._held:
            held, self._held = self._held, []
            pending = self._log.write(self.session_id, held, wait=wait, defer=defer)
            if not wait:
                self._unawaited.append(pending)
                return
        if wait and self._unawaited:
            earlier, self._unawaited = self._unawaited, []
            _waited(earlier)

    def save(self, session: Session, step_execution: StepExecution | None) -> Session:
        """Save (or checkpoint) the run's session with, in the same transaction, its events
        not yet committed: those the log has not begun to write (taken back from it) and
        the held ones. When the save fails, they stay held (the run's last events write
        them)."""
        taken = self._log.take_back(self.session_id)
        others = [p for p in self._unawaited if p not in taken]
        self._unawaited = []
        _waited(others)  # being committed: the log keeps the order
        texts = [text for pending in taken for text in pending.texts] + self._held
        self._held = []
        try:
            saved: Session
            saved, numbers = self._store.save_with_events(session, texts, step_execution)
        except BaseException:
            self._held = texts
            raise
        self._log.committed(self.session_id, texts, numbers)
        return saved


def _waited(pendings: list[Pending]) -> None:
    """Wait until ``pendings`` are committed; the first failure among them raised."""
    for pending in pendings:  # committed in order: done by now, or soon
        pending.done.wait()
    failed = next((p.error for p in pendings if p.error is not None), None)
    if failed is not None:
        raise failed


class RunStore:
    """The store as a run of this server writes to it: a save or checkpoint of the run's
    session commits the run's events with it (``RunWriter.save``)."""

    def __init__(self, store: SessionStore, writer: RunWriter) -> None:
        self._store = store
        self._writer = writer
        self._session_id = writer.session_id

    def create(
        self, state: AgentState, session_id: str | None = None, parent_session_id: str | None = None
    ) -> Session:
        return self._store.create(state, session_id, parent_session_id)

    def load(self, session_id: str) -> Session:
        return self._store.load(session_id)

    def save(self, session: Session) -> Session:
        if session.session_id != self._session_id:
            return self._store.save(session)
        return self._writer.save(session, None)

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session:
        if session.session_id != self._session_id:
            return self._store.checkpoint(session, step_execution)
        return self._writer.save(session, step_execution)

    def list(self) -> list[Session]:
        return self._store.list()

    def delete(self, session_id: str) -> None:
        self._store.delete(session_id)


def _text(data: dict[str, Any]) -> str:
    try:
        return dumps(data)  # orjson, as json.dumps would write it
    except (TypeError, ValueError):  # something that is not plain JSON: as text
        return utf8_safe(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str))


_TYPED: Final = '{"type":"'  # how every event the log keeps begins
_ENDED_TEXT: Final = _text({"type": ENDED})[:-1] + ","  # how every run's last event begins
_KEPT_SESSIONS: Final = 512  # runs whose events memory holds (past it, streams read the store)


class Pending:
    __slots__ = ("done", "due", "error", "session_id", "texts")

    def __init__(self, session_id: str, texts: list[str], due: float = 0.0) -> None:
        self.session_id = session_id
        self.texts = texts
        self.due = due  # when to write it at the latest (``time.monotonic``); 0: now
        self.done = threading.Event()
        self.error: BaseException | None = None


class EventLog:
    """The session event logs as this process writes them: one thread committing every
    run's events (group commit), and the events of each session's run in progress kept."""

    def __init__(self, store: Any, notify: Callable[[str], None]) -> None:
        self._store = store
        self._notify = notify  # the session's log grew
        self._grouped = hasattr(self._store, "append_event_batches")
        self._cond = threading.Condition()
        self._queue: list[Pending] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, list[tuple[int, str]]] = OrderedDict()

    def write(
        self, session_id: str, texts: list[str], *, wait: bool = True, defer: float = 0.0
    ) -> Pending:
        """Append ``texts`` to the session's log (``defer`` seconds from now, unless a write
        of the session's run takes them back first, ``take_back``); with ``wait``, returns
        once they are committed (a failure of the store is raised here, as a direct write
        would raise it); else at once, with what tells when they are."""
        pending = Pending(session_id, texts, time.monotonic() + defer if defer else 0.0)
        with self._cond:
            self._queue.append(pending)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, name="agents-serve events", daemon=True
                )
                self._thread.start()
            if not pending.due:  # a deferred write is seen at the thread's next tick
                self._cond.notify()
        if wait:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
        return pending

    def _serve(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self._cond:
                while True:
                    group, later = self._due()
                    if group:
                        self._queue = later
                        break
                    now = time.monotonic()
                    if not later and now - idle_since > _IDLE:
                        self._thread = None  # idle: a later write starts another
                        return
                    # until a write that is not deferred, the first deferred one's time or
                    # the next tick (deferred writes are not signalled: most are taken back)
                    first = min((p.due for p in later), default=now + _TICK)
                    self._cond.wait(timeout=min(_TICK, first - now))
            self._commit(group)
            idle_since = time.monotonic()

    def _due(self) -> tuple[list[Pending], list[Pending]]:
        """The queue split into what is to be written now and what waits: a deferred write
        until its time, and the session's later writes behind it."""
        now = time.monotonic()
        group: list[Pending] = []
        later: list[Pending] = []
        waiting: set[str] = set()
        for pending in self._queue:
            if pending.due > now or pending.session_id in waiting:
                waiting.add(pending.session_id)
                later.append(pending)
            else:
                group.append(pending)
        return group, later

    def take_back(self, session_id: str) -> list[Pending]:
        """The session's writes not yet begun, in order, taken out of the queue (the caller
        writes them instead)."""
        with self._cond:
            taken = [p for p in self._queue if p.session_id == session_id]
            if taken:
                self._queue = [p for p in self._queue if p.session_id != session_id]
        return taken

    def committed(self, session_id: str, texts: list[str], numbers: Sequence[int]) -> None:
        """``texts`` were committed as events ``numbers`` of the session by another write."""
        if not texts:
            return
        self._keep(session_id, list(zip(numbers, texts, strict=True)))
        self._notify(session_id)

    def _commit(self, group: list[Pending]) -> None:
        """Write the group in one transaction; when that fails (one batch spoiled it), each
        batch alone, so that only a batch that cannot be written fails its run."""
        if self._grouped and len(group) > 1:
            try:
                numbers = self._store.append_event_batches([(p.session_id, p.texts) for p in group])
            except Exception:
                pass  # each on its own, below
            else:
                for pending, given in zip(group, numbers, strict=True):
                    self._written(pending, given)
                return
        for pending in group:
            try:
                given = self._store.append_events(pending.session_id, pending.texts)
            except BaseException as exc:  # the run raises it (its events were not written)
                pending.error = exc
                pending.done.set()
                continue
            self._written(pending, given)

    def _written(self, pending: Pending, numbers: Sequence[int]) -> None:
        pending.done.set()
        self.committed(pending.session_id, pending.texts, numbers)

    def _keep(self, session_id: str, written: list[tuple[int, str]]) -> None:
        with self._lock:
            kept = self._kept.get(session_id)
            if not kept or not written or kept[-1][0] + 1 != written[0][0]:
                kept = []  # a new run, or another process wrote in between
            kept.extend(written)
            self._kept[session_id] = kept
            self._kept.move_to_end(session_id)
            while len(self._kept) > _KEPT_SESSIONS:
                self._kept.popitem(last=False)

    def forget(self, session_id: str) -> None:
        """What memory holds of the session's events goes (a run of it starts or ends
        here)."""
        with self._lock:
            self._kept.pop(session_id, None)

    def kept(self, session_id: str, after: int) -> Sequence[tuple[int, str]] | None:
        """The session's events after ``after`` from memory, or ``None`` when memory does
        not hold all of them (read the store)."""
        with self._lock:
            kept = self._kept.get(session_id)
            if not kept or kept[0][0] > after + 1:
                return None
            index = bisect.bisect_right(kept, after, key=lambda event: event[0])
            return kept[index : index + 1000]
