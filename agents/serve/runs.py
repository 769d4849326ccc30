"""The runs an ``agents serve`` process drives: at most one at a time per session, each on a
thread of its own (the session runtime and stores are blocking), going on whether or not a
client listens. Everything a run does goes into the session's event log in the store —
numbered, so a client resumes a dropped stream from the last number it saw, on any process
sharing the store — and streams wake when an event arrives.

Steering and follow-ups for a run in progress are handed to it between steps (a hook of the
run's loop takes them), so that they join its state, and its checkpoints, in order.

Where the store offers run leases (``run_leases()``: the SQLite and PostgreSQL stores), a
process holds a session's lease while it runs it, so that the processes sharing the store
never run one session twice: another process refuses a new run of it as busy, and a stream
there follows the run from the store until its last event.

How the events are written, and kept in memory for the streams that follow a run in
progress, is ``agents.serve.event_log``'s; a stream reads anything else (a run that has
ended, another process's) from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

from agents.core.hooks import HookContext, HookTrigger, hook
from agents.errors import AgentError, InvalidArgument, SessionConflict
from agents.persistence.leases import RunLeases
from agents.persistence.runtime import SessionRuntime
from agents.persistence.session import Session, storable_id
from agents.records.codec import encode_value
from agents.records.execution import ExecutionStatus
from agents.records.state import AgentState
from agents.serve.event_log import (
    ENDED,
    EventLog,
    RunStore,
    RunWriter,
    ended,
    event_data,
    event_type,
)
from agents.shell.loop import AgentLoop
from agents.tools.threads import to_thread

__all__ = [
    "ENDED",
    "UNFINISHED",
    "Busy",
    "DecisionError",
    "Runs",
    "ended",
    "event_data",
    "event_type",
    "number_of",
]


_ENDING: Final = 5.0  # seconds a new run waits for one whose last event is being written
_POLL: Final = 0.1  # seconds between reads of a log another process's run writes
UNFINISHED: Final = frozenset({ExecutionStatus.IN_PROGRESS, ExecutionStatus.PENDING})


class Busy(AgentError):
    """The session has a run in progress (in this process or another one)."""


def number_of(raw: str) -> int | None:
    """A decimal number of ASCII digits (``str.isdigit`` also takes "²"), or ``None``;
    past 18 digits it is too large for anything counted here (an event, a length), and
    for ``int``, which refuses more than 4,300."""
    if raw.isascii() and raw.isdigit() and len(raw) <= 18:
        return int(raw)
    return None


MAX_SESSION_ID: Final = 200
"""The longest session id the server makes (a URL holds it: servers refuse long ones)."""


def session_id_problem(session_id: Any) -> str | None:
    """What keeps ``session_id`` from being a session id that every route can reach (text
    of 1 to ``MAX_SESSION_ID`` characters, with no NUL, lone surrogate or ``/``, and not
    ``.`` or ``..``, which a URL's path does not keep); ``None`` when it can be one. The
    one rule of ``POST /sessions`` and an AG-UI ``threadId``, checked where a session is
    made."""
    if type(session_id) is not str or not session_id:
        return "must be non-empty text"
    if len(session_id) > MAX_SESSION_ID:
        return f"is longer than {MAX_SESSION_ID} characters"
    if not storable_id(session_id) or "/" in session_id or session_id in (".", ".."):
        return "holds NUL, a lone surrogate or '/', or is '.' or '..' (no URL could name it)"
    return None


class DecisionError(InvalidArgument):
    """A decision on a call waiting for approval that is not one (a 422 on every route)."""


def approval_decision(fields: Any, where: str) -> tuple[bool, str]:
    """``(approved, reason)`` from a decision's fields — ``approved`` (``true`` or
    ``false``, required) and ``reason`` (text, optional), nothing else — as every route
    taking decisions reads them (``POST /sessions/{id}/approvals``, an AG-UI ``resume``):
    anything else is a ``DecisionError`` saying what, and decides nothing. ``"false"``,
    ``0`` or a missing ``approved`` never approve."""
    if not isinstance(fields, dict):
        raise DecisionError(f"{where} must be an object with approved (true or false)")
    unknown = sorted(set(fields) - {"approved", "reason"})
    if unknown:
        raise DecisionError(f"{where} has unknown fields: {', '.join(map(str, unknown))}")
    if "approved" not in fields:
        raise DecisionError(f"{where} needs approved (true or false)")
    approved, reason = fields["approved"], fields.get("reason", "")
    if type(approved) is not bool:
        raise DecisionError(f"{where}: approved must be true or false, not {approved!r}"[:200])
    if type(reason) is not str:
        raise DecisionError(f"{where}: reason must be text")
    return approved, reason


class Runs:
    """The runs of one server process, over ``runtime``'s store (which must keep event
    logs: the SQLite, PostgreSQL and in-memory stores do)."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self.runtime = runtime
        self.store: Any = runtime.store
        self._lock = threading.Lock()
        self._active: dict[str, _Inbox] = {}
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self.log = EventLog(self.store, self.notify)
        leases = getattr(self.store, "run_leases", None)
        self.leases: RunLeases | None = leases() if leases is not None else None
        self._closing = False  # close() was called: the leases go with the last run

    def close(self) -> None:
        """Give back the run leases once the runs in progress have ended (at once if none
        is): until then another process must not take their sessions up."""
        with self._lock:
            self._closing = True
            idle = not self._active
        if idle:
            self._close_leases()

    def _close_leases(self) -> None:
        leases, self.leases = self.leases, None
        if leases is not None:
            leases.close()

    # -- starting runs -----------------------------------------------------------------------

    def running(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._active

    def start(
        self,
        session_id: str,
        action: Callable[[SessionRuntime], Session | None],
        *,
        opening: dict[str, Any] | None = None,
        closing: Callable[[Session], dict[str, Any]] | None = None,
    ) -> int:
        """Run ``action`` (``runtime.send(...)``, ``runtime.approve(...)``…) on a thread,
        with a runtime whose loops report to the event log; the number of the last event
        before the run (a stream starts after it). ``Busy`` if a run is in progress. An
        action returning ``None`` ran nothing: no event is written. ``opening``: an event
        written first (numbered right after the one returned); ``closing(session)``: an
        event made from the session the action left, written before the run's end."""
        inbox = _Inbox()
        self._reserve(session_id, inbox)
        try:
            self.log.forget(session_id)
            before = self.last(session_id)
        except BaseException:
            self._finish(session_id)
            raise
        writer = RunWriter(self.log, self.store, session_id)
        factory = self.runtime.loop_factory

        def loop_for(session: Session) -> AgentLoop:
            served = factory(session)  # one copy, with the inbox and the writer
            return served.with_options(
                hooks=(*served.hooks, *inbox.hooks), listeners=(*served.listeners, writer)
            )

        store = RunStore(self.store, writer) if writer.merging else self.store
        runtime = SessionRuntime(store, loop_for, ids=self.runtime.ids)
        thread = threading.Thread(
            target=self._run,
            args=(session_id, action, runtime, writer, inbox, opening, closing),
            daemon=True,
        )
        thread.start()
        return before

    def resume(self, session_id: str) -> None:
        """Go on, on a thread, with a run that a stopped process left unfinished: nothing
        when a run of the session is in progress (here or in another process) or the
        session's run is over by the time its lease is taken."""

        def resume(runtime: SessionRuntime) -> Session | None:
            state = runtime.get(session_id).state
            if state is None or state.status not in UNFINISHED:
                return None
            return runtime.resume(session_id)

        with contextlib.suppress(Busy):
            self.start(session_id, resume)

    def _reserve(self, session_id: str, inbox: _Inbox) -> None:
        """Make ``inbox``'s run the session's, here and (by its lease) in every process
        sharing the store; ``Busy`` if it has one."""
        deadline = time.monotonic() + _ENDING
        while True:
            with self._lock:
                if self._closing:  # the leases are going: no run may start unprotected
                    raise Busy("the server is shutting down")
                earlier = self._active.get(session_id)
                if earlier is None:
                    self._active[session_id] = inbox
                    break
            # A run whose last event is out (a client may have seen it and answered), or a
            # moment's write, leaves at once: wait for it (and for any others waiting first)
            left = earlier.ending and earlier.ended.wait(max(0.0, deadline - time.monotonic()))
            if not left:
                raise Busy(f"session {session_id!r} has a run in progress: steer it instead")
        try:
            leased = self.leases is None or self.leases.acquire(session_id)
        except BaseException:
            self._unreserve(session_id)
            raise
        if not leased:
            self._unreserve(session_id)
            raise Busy(f"session {session_id!r} has a run in progress in another server process")

    def _unreserve(self, session_id: str, *, leased: bool = False) -> None:
        """The session's run (or held write) has left; ``leased``: it had taken the lease,
        given back first (another process may go on)."""
        if leased and self.leases is not None:
            with contextlib.suppress(Exception):  # a lost connection took the lease with it
                self.leases.release(session_id)
        with self._lock:
            inbox = self._active.pop(session_id, None)
            last = self._closing and not self._active
        if inbox is not None:
            inbox.ended.set()
        self.notify(session_id)
        if last:
            self._close_leases()

    @contextlib.contextmanager
    def holding(self, session_id: str) -> Iterator[None]:
        """No run of the session starts, here or in another process, until the block is
        left (a write outside runs: a steering message saved, a deletion); ``Busy`` if one
        is in progress."""
        held = _Inbox(closed=True)
        held.ending = True  # a moment's write: a run or write starting meanwhile waits for it
        self._reserve(session_id, held)
        try:
            yield
        finally:
            self._unreserve(session_id, leased=True)

    def queue_for_next_run(self, session_id: str, kind: str, text: str) -> None:
        """Queue a steering message or a follow-up (``kind``) in the stored session for its
        next run, read and written while no run (nor another such write) goes on."""
        with self.holding(session_id):
            _save_queued(self.store, session_id, [(kind, text)])

    def _run(
        self,
        session_id: str,
        action: Callable[[SessionRuntime], Session | None],
        runtime: SessionRuntime,
        writer: RunWriter,
        inbox: _Inbox,
        opening: dict[str, Any] | None = None,
        closing: Callable[[Session], dict[str, Any]] | None = None,
    ) -> None:
        status = None
        ran = True
        try:
            if opening is not None:  # committed with the run's first events
                writer.hold(opening)
            session = action(runtime)
            if session is None:
                ran = opening is not None
                return
            state = session.state
            status = state.status.value if state is not None and state.status else None
            if state is not None and state.status is ExecutionStatus.SUSPENDED:
                if state.pending_approvals or not state.pending_inputs:
                    calls = [encode_value(call) for call in state.pending_approvals]
                    writer.write({"type": "ApprovalRequested", "step": None, "calls": calls})
                if state.pending_inputs:
                    asked = [encode_value(question) for question in state.pending_inputs]
                    writer.write({"type": "InputRequested", "step": None, "questions": asked})
            if closing is not None:  # committed with the run's end
                writer.hold(closing(session))
        except Exception as exc:  # the run could not go on (a conflict, a store down)
            writer.write(_failure(exc))
        finally:
            left = inbox.close()  # later ones go to the next run (the handler's other way)
            inbox.ending = True
            try:
                if left:  # handed over after the run's last step: kept for the next run
                    try:  # (saved through the run's store: its held events go with it)
                        _save_queued(runtime.store, session_id, left)
                    except Exception as exc:
                        writer.write(_failure(exc))
                if ran or left:
                    writer.write({"type": ENDED, "step": None, "status": status})
            finally:
                self._finish(session_id)

    def _finish(self, session_id: str) -> None:
        self.log.forget(session_id)  # before another run of the session can start
        self._unreserve(session_id, leased=True)  # its last event is committed

    # -- steering a run in progress ------------------------------------------------------------

    def hand(self, session_id: str, kind: str, text: str) -> bool:
        """Give a run in progress a steering message or a follow-up (``kind``); ``False``
        when none is in progress."""
        with self._lock:
            inbox = self._active.get(session_id)
        return inbox is not None and inbox.put(kind, text)

    # -- the event log ----------------------------------------------------------------------

    def last(self, session_id: str) -> int:
        """The number of the session's last event (0 for none)."""
        if hasattr(self.store, "last_event"):
            return int(self.store.last_event(session_id))
        last = 0
        while True:
            found = self.store.events(session_id, after=last, limit=1000)
            if not found:
                return last
            last = found[-1][0]

    def events(self, session_id: str, after: int) -> list[tuple[int, str]]:
        return list(self.store.events(session_id, after=after, limit=1000))

    def waiter(self, session_id: str) -> asyncio.Event:
        """An event of the caller's loop, set when the session's log grows or its run ends."""
        woken = asyncio.Event()
        with self._lock:
            self._waiting.setdefault(session_id, []).append((asyncio.get_running_loop(), woken))
        return woken

    def forget(self, session_id: str, woken: asyncio.Event) -> None:
        with self._lock:
            waiting = [(lp, w) for lp, w in self._waiting.get(session_id, []) if w is not woken]
            if waiting:
                self._waiting[session_id] = waiting
            else:  # a long-lived server keeps no entry for every session it ever streamed
                self._waiting.pop(session_id, None)

    def notify(self, session_id: str) -> None:
        with self._lock:
            waiting = list(self._waiting.get(session_id, []))
        for loop, woken in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(woken.set)

    async def stream(self, session_id: str, after: int) -> AsyncIterator[tuple[int, str]]:
        """``(number, JSON)`` of the session's events after ``after``, as they come: until a
        run's last event, or — when no run is in progress, here or in another process —
        the end of the log."""
        async for batch in self.batches(session_id, after):
            for event in batch:
                yield event

    async def batches(
        self, session_id: str, after: int, *, one_run: bool = True
    ) -> AsyncIterator[Sequence[tuple[int, str]]]:
        """``stream``'s events as they are read: several at a time (a run writes its events
        in groups), so that a response sends them in one piece. ``one_run=False``: every
        event after ``after``, past the end of a run to the end of the log, following a run
        in progress to its end (``GET /sessions/{id}/events``)."""
        last = after
        woken = self.waiter(session_id)
        at_end = False  # the last read found nothing new, and no run was in progress here
        try:
            while True:
                woken.clear()  # before reading: what is written after wakes it again
                running = self.running(session_id)  # before reading: a run ending after
                # ... is seen; so is another process's, by its lease, once at the log's end
                elsewhere = at_end and not running and await to_thread(self._held, session_id)
                found = self.log.kept(session_id, last)
                if found is None:
                    found = await to_thread(self.events, session_id, last)
                for index, (_, text) in enumerate(found if one_run else ()):
                    if ended(text):
                        yield found[: index + 1]
                        return
                if found:
                    last = found[-1][0]
                    at_end = False
                    yield found
                    continue
                if running:
                    await woken.wait()
                elif elsewhere:  # its events come through the store only: read it again
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(woken.wait(), _POLL)
                elif at_end:
                    return
                at_end = not running
        finally:
            self.forget(session_id, woken)

    def _held(self, session_id: str) -> bool:
        """Whether another process runs the session now (by its lease)."""
        if self.leases is None:
            return False
        try:
            return self.leases.held(session_id)
        except Exception:  # the leases cannot be read: as if none were held
            return False


class _Inbox:
    """Steering and follow-ups for a run in progress, taken by its loop before each step and
    after it (so that a follow-up handed over during the last inference starts another
    step, as a follow-up queued in the state does); what is left when the run ends is
    queued in the session for its next run (``close``), never dropped."""

    def __init__(self, *, closed: bool = False) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, str]] = []
        self.closed = closed  # takes nothing more: a run ending, or no run at all
        self.ending = False  # the run is writing its last event
        self.ended = threading.Event()  # ... and has left

        def take(context: HookContext) -> HookContext:
            with self._lock:
                items, self._items = self._items, []
            if not items:
                return context
            return context.with_state(_queued(context.state, items))

        self.hooks = (
            hook(HookTrigger.BEFORE_STEP, name="agents_serve_inbox")(take),
            hook(HookTrigger.AFTER_STEP, name="agents_serve_inbox_after_step")(take),
        )

    def put(self, kind: str, text: str) -> bool:
        """Hand the run a message; ``False`` once it takes no more."""
        with self._lock:
            if self.closed:
                return False
            self._items.append((kind, text))
            return True

    def close(self) -> list[tuple[str, str]]:
        """Take no more; what was handed over and not taken."""
        with self._lock:
            self.closed = True
            items, self._items = self._items, []
        return items


def _failure(exc: Exception) -> dict[str, Any]:
    """The server's event saying why a run could not go on."""
    kind = "Conflict" if isinstance(exc, SessionConflict) else type(exc).__name__
    return {"type": "RunFailed", "step": None, "error": kind, "message": str(exc)}


def _save_queued(store: Any, session_id: str, items: list[tuple[str, str]]) -> None:
    """The stored session with ``items`` (steering, follow-ups) queued for its next run."""
    stored = store.load(session_id)
    assert stored.state is not None
    store.save(stored.with_state(_queued(stored.state, items)))


def _queued(state: AgentState, items: list[tuple[str, str]]) -> AgentState:
    for kind, text in items:
        state = state.with_steering_message(text) if kind == "steer" else state.with_follow_up(text)
    return state
