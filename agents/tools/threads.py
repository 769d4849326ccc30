"""Running synchronous calls from an event loop on worker threads: ``to_thread``.

``asyncio.to_thread`` costs a concurrent future, an executor work item and a wake-up of the
event loop (a write to its self-pipe) for every call. Under a thousand concurrent runs each
calling a synchronous tool, that hand-off cost more than the whole rest of the runs (a bare
asyncio program doing nothing else: twice the ideal time; docs/benchmarks.md). Here the calls
go to one queue served by a few worker threads shared by the process, and the results come
back to each event loop in batches: one wake-up for all the calls that finished while the
loop was busy.

What a caller sees is what ``asyncio.to_thread`` gives: the function runs on another thread
in a copy of the caller's context, its result or exception comes back to the awaiting task,
and cancelling the wait does not stop the call (a thread cannot be stopped). As many calls
run at once as the default executor would run (``min(32, cpus + 4)``); idle threads leave
after a while, and a forked child starts with none.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, Final, TypeVar

from agents.errors import AgentError
from agents.records.error_info import ErrorInfo

__all__ = ["to_thread"]

R = TypeVar("R")

_LIMIT: Final = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor's size
_IDLE_SECONDS: Final = 30.0


class _Returns:
    """The results waiting to be handed to one event loop, delivered in batches (it holds
    no reference to its loop: the table of them is keyed weakly by loop)."""

    __slots__ = ("_lock", "_ready")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: list[tuple[asyncio.Future[Any], bool, Any]] = []

    def deliver(self, future: asyncio.Future[Any], ok: bool, value: Any) -> None:
        """From a worker: hand ``value`` to ``future``; the loop is woken once a batch."""
        with self._lock:
            first = not self._ready
            self._ready.append((future, ok, value))
        if first:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                future.get_loop().call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, []
        for future, ok, value in ready:
            if future.done():  # its waiter was cancelled
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


class _Workers:
    """Worker threads taking calls from one queue; started as calls wait, up to ``limit``."""

    def __init__(self, limit: int, *, idle_seconds: float = _IDLE_SECONDS) -> None:
        self._limit = limit
        self._idle_seconds = idle_seconds
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def submit(self, item: tuple[Any, ...]) -> None:
        with self._lock:
            self._queue.put(item)
            start = self._queue.qsize() > self._idle and self._threads < self._limit
            if start:
                self._threads += 1
        if start:
            threading.Thread(target=self._work, name="agents-to-thread", daemon=True).start()

    def _work(self) -> None:
        work, lock = self._queue, self._lock
        while True:
            with lock:
                self._idle += 1
            try:
                item = work.get(timeout=self._idle_seconds)
            except queue.Empty:
                with lock:
                    self._idle -= 1
                    if work.empty():  # puts happen under the lock: nothing can be missed
                        self._threads -= 1
                        return
                continue
            with lock:
                self._idle -= 1
            returns, future, context, function, args, kwargs = item
            del item
            try:
                value, ok = context.run(function, *args, **kwargs), True
            except StopIteration as exc:  # a future refuses it (a waiter would hang)
                value, ok = _Stopped(function, exc), False
            except BaseException as exc:  # handed to the awaiting task, as to_thread does
                value, ok = exc, False
            returns.deliver(future, ok, value)
            del returns, future, context, function, args, kwargs, value


class _Stopped(AgentError, RuntimeError):
    """A ``StopIteration`` a function raised on a worker thread, which a future refuses:
    recorded as the ``StopIteration`` it was (``error_info``), as on the calling thread."""

    def __init__(self, function: Callable[..., Any], exc: StopIteration) -> None:
        name = getattr(function, "__qualname__", type(function).__name__)
        super().__init__(f"{name} raised StopIteration")
        self.__cause__ = exc
        self.error_info = ErrorInfo.from_exception(exc)


_workers = _Workers(_LIMIT)
_returns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Returns] = (
    weakref.WeakKeyDictionary()
)
_returns_lock = threading.Lock()


def _forked() -> None:
    global _workers, _returns_lock  # the child has none of the parent's threads
    _workers = _Workers(_LIMIT)
    _returns_lock = threading.Lock()
    _returns.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _returns_for(loop: asyncio.AbstractEventLoop) -> _Returns:
    """The loop's batch of results (a loop that takes no weak reference gets one a call:
    its results are handed back one by one)."""
    try:
        returns = _returns.get(loop)
        if returns is None:
            with _returns_lock:
                returns = _returns.get(loop)
                if returns is None:
                    returns = _returns[loop] = _Returns()
    except TypeError:  # cannot create weak reference to this loop's type
        return _Returns()
    return returns


def to_thread(function: Callable[..., R], /, *args: Any, **kwargs: Any) -> asyncio.Future[R]:
    """``asyncio.to_thread(function, *args, **kwargs)``, cheaper: a future of the call's
    result, run on a worker thread in a copy of the current context. Call it from a
    coroutine (it needs the running loop)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[R] = loop.create_future()
    _workers.submit(
        (_returns_for(loop), future, contextvars.copy_context(), function, args, kwargs)
    )
    return future
