"""The runs an ``agents serve`` process drives: at most one at a time per session, each on a
thread of its own (the session runtime and stores are blocking), going on whether or not a
client listens. Everything a run does goes into the session's event log in the store —
numbered, so a client resumes a dropped stream from the last number it saw, on any process
sharing the store — and streams wake when an event arrives.

Steering and follow-ups for a run in progress are handed to it between steps (a hook of the
run's loop takes them), so that they join its state, and its checkpoints, in order.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import attrs

from agents.core.hooks import HookContext, HookTrigger, hook
from agents.errors import SessionConflict
from agents.persistence.runtime import SessionRuntime
from agents.persistence.session import Session
from agents.records.codec import encode_value
from agents.records.events import LIVE_FIELDS, Event, ExecutionCompleted, StepCompleted
from agents.records.execution import ExecutionStatus
from agents.shell.loop import AgentLoop
from agents.shell.subagents import DEPTH_KEY

__all__ = ["Busy", "Runs", "event_data"]

ENDED: Final = "RunEnded"  # the last event of every run this server drives


class Busy(Exception):
    """The session has a run in progress in this process."""


def event_data(event: Event) -> dict[str, Any]:
    """An engine event as the stream sends it: its type, step and fields as JSON (secret
    keys redacted), without the live records; a finished run adds its status, answer, the
    calls waiting for approval and the questions waiting for a human; a step adds its
    timeline row."""
    data: dict[str, Any] = {"type": type(event).__name__, "step": event.step}
    for field in attrs.fields(type(event)):
        if field.name in LIVE_FIELDS or field.name in ("agent_id", "execution_id", "step"):
            continue
        data[field.name] = encode_value(getattr(event, field.name))
    state = getattr(event, "state", None)
    if state is not None and DEPTH_KEY in state.metadata:
        data["depth"] = state.metadata[DEPTH_KEY]  # a sub-agent's event
    if isinstance(event, StepCompleted):
        row = state.timeline()[-1] if state is not None and state.step_executions else None
        data["timeline"] = encode_value(row) if row is not None else None
    if isinstance(event, ExecutionCompleted) and state is not None:
        data["final_response"] = state.final_response
        data["stop_reason"] = state.stop_reason.value if state.stop_reason else None
        data["pending_approvals"] = [encode_value(call) for call in state.pending_approvals]
        data["pending_inputs"] = [encode_value(question) for question in state.pending_inputs]
    return data


class Runs:
    """The runs of one server process, over ``runtime``'s store (which must keep event
    logs: the SQLite, PostgreSQL and in-memory stores do)."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self.runtime = runtime
        self.store: Any = runtime.store
        self._lock = threading.Lock()
        self._active: dict[str, _Inbox] = {}
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    # -- starting runs -----------------------------------------------------------------------

    def running(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._active

    def start(self, session_id: str, action: Callable[[SessionRuntime], Session]) -> int:
        """Run ``action`` (``runtime.send(...)``, ``runtime.approve(...)``…) on a thread,
        with a runtime whose loops report to the event log; the number of the last event
        before the run (a stream starts after it). ``Busy`` if a run is in progress."""
        inbox = _Inbox()
        with self._lock:
            if session_id in self._active:
                raise Busy(f"session {session_id!r} has a run in progress: steer it instead")
            self._active[session_id] = inbox
        try:
            before = self.last(session_id)
        except BaseException:
            self._finish(session_id)
            raise
        writer = _Writer(self, session_id)
        factory = self.runtime.loop_factory

        def loop_for(session: Session) -> AgentLoop:
            return factory(session).with_hooks(inbox.hook).with_listeners(writer)

        runtime = SessionRuntime(self.store, loop_for)
        thread = threading.Thread(
            target=self._run, args=(session_id, action, runtime, writer), daemon=True
        )
        thread.start()
        return before

    def _run(
        self,
        session_id: str,
        action: Callable[[SessionRuntime], Session],
        runtime: SessionRuntime,
        writer: _Writer,
    ) -> None:
        status = None
        try:
            session = action(runtime)
            state = session.state
            status = state.status.value if state is not None and state.status else None
            if state is not None and state.status is ExecutionStatus.SUSPENDED:
                if state.pending_approvals or not state.pending_inputs:
                    calls = [encode_value(call) for call in state.pending_approvals]
                    writer.write({"type": "ApprovalRequested", "step": None, "calls": calls})
                if state.pending_inputs:
                    asked = [encode_value(question) for question in state.pending_inputs]
                    writer.write({"type": "InputRequested", "step": None, "questions": asked})
        except Exception as exc:  # the run could not go on (a conflict, a store down)
            kind = "Conflict" if isinstance(exc, SessionConflict) else type(exc).__name__
            writer.write({"type": "RunFailed", "step": None, "error": kind, "message": str(exc)})
        finally:
            try:
                writer.write({"type": ENDED, "step": None, "status": status})
            finally:
                self._finish(session_id)

    def _finish(self, session_id: str) -> None:
        with self._lock:
            self._active.pop(session_id, None)
        self.notify(session_id)

    # -- steering a run in progress ------------------------------------------------------------

    def hand(self, session_id: str, kind: str, text: str) -> bool:
        """Give a run in progress a steering message or a follow-up (``kind``); ``False``
        when none is in progress."""
        with self._lock:
            inbox = self._active.get(session_id)
        if inbox is None:
            return False
        inbox.put(kind, text)
        return True

    # -- the event log ----------------------------------------------------------------------

    def last(self, session_id: str) -> int:
        """The number of the session's last event (0 for none)."""
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
            waiting = self._waiting.get(session_id, [])
            self._waiting[session_id] = [(lp, w) for lp, w in waiting if w is not woken]

    def notify(self, session_id: str) -> None:
        with self._lock:
            waiting = list(self._waiting.get(session_id, []))
        for loop, woken in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(woken.set)

    async def stream(self, session_id: str, after: int) -> AsyncIterator[tuple[int, str]]:
        """``(number, JSON)`` of the session's events after ``after``, as they come: until a
        run's last event, or — when no run is in progress here — the end of the log."""
        last = after
        while True:
            woken = self.waiter(session_id)
            try:
                running = self.running(session_id)  # before reading: a run ending after
                found = await asyncio.to_thread(self.events, session_id, last)  # ... is seen
                for number, text in found:
                    last = number
                    yield number, text
                    if json.loads(text).get("type") == ENDED:
                        return
                if found:
                    continue
                if not running:
                    return
                await woken.wait()
            finally:
                self.forget(session_id, woken)


# Events written at once (with those held before them): what a client waits for — a piece
# of streamed text, a tool starting (it may be slow), a step done, a run ending. The others
# wait for the next of these, so that a step costs one or two transactions, not one an event.
_AT_ONCE: Final = frozenset(
    {"InferenceDelta", "ToolCallStarted", "StepCompleted", "ExecutionCompleted"}
)


class _Writer:
    """A run's listener writing its events to the session's log, in order."""

    def __init__(self, runs: Runs, session_id: str) -> None:
        self._runs = runs
        self._session_id = session_id
        self._held: list[str] = []

    def __call__(self, event: Event) -> None:
        data = event_data(event)
        self._held.append(_text(data))
        if data["type"] in _AT_ONCE:
            self.flush()

    def write(self, data: dict[str, Any]) -> None:
        """Write a server's own event (and any held before it) now."""
        self._held.append(_text(data))
        self.flush()

    def flush(self) -> None:
        if self._held:
            held, self._held = self._held, []
            self._runs.store.append_events(self._session_id, held)
            self._runs.notify(self._session_id)


def _text(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


class _Inbox:
    """Steering and follow-ups for a run in progress, taken by its loop before each step."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, str]] = []

        @hook(HookTrigger.BEFORE_STEP, name="agents_serve_inbox")
        def take(context: HookContext) -> HookContext:
            with self._lock:
                items, self._items = self._items, []
            state = context.state
            for kind, text in items:
                if kind == "steer":
                    state = state.with_steering_message(text)
                else:
                    state = state.with_follow_up(text)
            return context.with_state(state)

        self.hook = take

    def put(self, kind: str, text: str) -> None:
        with self._lock:
            self._items.append((kind, text))
