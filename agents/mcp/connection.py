"""One session with an MCP server, kept open on a thread of its own with its own event
loop (``Connection``): opened and closed in one task there, whatever thread or event loop
the runs calling its tools come from; and the error a failed call is (``MCPToolError``).
``agents.mcp.client`` builds servers' tools on it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from agents.errors import AgentError
from agents.mcp import sdk
from agents.mcp.calls import CallScope, current_call
from agents.records.error_info import ErrorInfo

__all__ = ["Connection", "MCPTimeout", "MCPToolError"]


class MCPToolError(AgentError):
    """A tool call an MCP server answered with an error (``isError``), or could not
    answer (a protocol error, the server gone, the deadline passed); ``child`` is the
    sampling run the call asked for before it failed, if any."""

    def __init__(self, message: str, child: Any = None) -> None:
        super().__init__(message)
        self.child = child


class MCPTimeout(MCPToolError, TimeoutError):
    """A call to an MCP server that passed its deadline: recorded as ``ToolTimeout``, as a
    timed-out tool of our own is."""

    @property
    def error_info(self) -> ErrorInfo:
        return ErrorInfo(type="ToolTimeout", message=str(self))


class Connection:
    """One open session on a thread of its own; ``died`` completes when it closes."""

    def __init__(self, make_client: Callable[[Connection], Any], label: str) -> None:
        self._make_client = make_client
        self.tools_changed = False  # the server said so: list them again before a run
        self.label = label
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.died: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.failure: BaseException | None = None
        self.fault: str | None = None  # the last thing the server sent that was no message
        self.exited = False  # the server's output ended: its process is gone
        self._listings: set[asyncio.Event] = set()  # tool lists awaited (``listed``)
        self.client: Any = None
        self.identity: dict[str, str] = {}
        self.protocol = ""
        self.session_id = ""  # the server's id for the session (streamable HTTP only)
        self.refusal: str | None = None  # the last HTTP error status ("401 Unauthorized")
        self.calls: list[CallScope] = []  # in flight
        self.tools: list[sdk.ToolInfo] = []
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None  # the session's own task
        self._closed = False  # close() was called (perhaps before the task began)
        self._starting: asyncio.Task[None] | None = None  # the handshake, until it is done
        self._watch_lock = threading.Lock()
        self._watchers: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()
        self._thread = threading.Thread(target=self._main, name=f"agents-mcp {label}", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            self.loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._task = self._starting = asyncio.current_task()
        if self._closed:  # closed before it began
            self._starting = None
            self.ready.set()
            self.died.set_result(None)
            return
        try:
            async with self._make_client(self) as client:
                self._starting = None
                self.client = client
                self.identity, self.tools = await self.listed(client)
                self.protocol = sdk.protocol_of(client)
                watcher = asyncio.create_task(sdk.watch_tools(client, self.notice_change))
                self.ready.set()
                try:
                    await self._stop.wait()
                finally:
                    watcher.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await watcher
        except BaseException as exc:  # the session ended: say why to whoever waits
            self.failure = exc
            if self.fault is not None and isinstance(exc, asyncio.CancelledError):
                self.failure = MCPToolError(f"{self.fault}, during the handshake")
        finally:
            self._starting = None
            self.client = None
            self.ready.set()
            if not self.died.done():
                self.died.set_result(None)
            self._ended()

    def notice_change(self) -> None:
        self.tools_changed = True

    def notice_exit(self) -> None:
        """The server's output ended (its process exited): the session is over — the calls
        in flight fail at once (``watch``), and the next call starts the server again."""
        self.exited = True
        self._ended()

    def notice_fault(self, what: str) -> None:
        """The server sent what the SDK could not read (and dropped, tied to no request):
        the calls in flight are told (``watch``), the listings of its tools (``listed``)
        and the handshake, and give up rather than wait for an answer that may have been
        it."""
        self.fault = what
        starting, self._starting = self._starting, None
        if starting is not None:  # the handshake: given up (the SDK closes the transport)
            starting.cancel()
        for listing in self._listings:
            listing.set()
        self._ended()

    async def listed(self, client: Any) -> tuple[dict[str, str], list[sdk.ToolInfo]]:
        """``sdk.list_tools`` on the session's loop, given up as soon as the server sends
        what is no message (``MCPToolError``)."""
        fault = asyncio.Event()
        self._listings.add(fault)
        listing = asyncio.ensure_future(sdk.list_tools(client))
        waiting = asyncio.ensure_future(fault.wait())
        try:
            done, _ = await asyncio.wait({listing, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._listings.discard(fault)
            waiting.cancel()
            if not listing.done():  # given up (the start was): its failure is nobody's
                listing.cancel()
                listing.add_done_callback(_retrieved)
        if listing in done:
            return listing.result()
        listing.cancel()
        raise MCPToolError(f"{self.fault}, in answer to the list of its tools")

    def notice_session(self, given: str) -> None:
        self.session_id = given

    def notice_refusal(self, status: str) -> None:
        self.refusal = status

    def _asking(self) -> CallScope:
        """The call a server's request is for: the call being made in this task (2026
        protocol: the request comes with the call's answer), else the only call in flight
        (2025 protocols: the request comes on its own, saying nothing of the call)."""
        scope = current_call()
        if scope is None:
            waiting = set(self.calls)
            if len(waiting) != 1:
                raise AgentError("cannot tell which call the server's request is for")
            (scope,) = waiting
        return scope

    async def sample(self, request: sdk.SamplingRequest) -> tuple[str, str]:
        """A sampling request, answered by the model of the run whose call asked."""
        sampler = self._asking().sampler
        if sampler is None:
            raise AgentError("this call has no model to sample with (no run's loop)")
        return await asyncio.to_thread(sampler.sample, request)

    def elicit(self, request: sdk.ElicitationRequest) -> tuple[str, dict[str, Any] | None]:
        """An elicitation request: the human's answer the run holds for the call that
        asked, else the question noted for the run to suspend with (``agents.mcp.calls``)."""
        return self._asking().elicit(request)

    @property
    def alive(self) -> bool:
        return not self.died.done() and self.client is not None and not self.exited

    def submit(self, work: Callable[[Any], Any]) -> concurrent.futures.Future[Any]:
        """Run ``work(client)`` (a coroutine) on the session's event loop."""
        client = self.client
        if client is None or self.died.done():
            raise MCPToolError(f"the MCP server {self.label} is not running")
        return asyncio.run_coroutine_threadsafe(work(client), self.loop)

    def close(self, wait: float = 10.0) -> None:
        """End the session (the server process stops) and the thread — a start that has
        not finished (a server that never answers, a tool list paged without end) too:
        its task is cancelled, which stops the process."""
        if not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self._shut)
        self._thread.join(wait)

    def _shut(self) -> None:
        """On the session's loop: end the session, or give up its start."""
        self._closed = True
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None and not self.ready.is_set():
            task.cancel()

    def watch(self) -> asyncio.Future[None]:
        """A future of the caller's event loop, done when the session ends or the server
        sends what is no message (``fault``)."""
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        with self._watch_lock:
            if self.died.done():
                ended.set_result(None)
            else:
                self._watchers.add((loop, ended))
        return ended

    def unwatch(self, ended: asyncio.Future[None]) -> None:
        with self._watch_lock:
            self._watchers.discard((ended.get_loop(), ended))

    def _ended(self) -> None:
        with self._watch_lock:
            watchers, self._watchers = self._watchers, set()
        for loop, ended in watchers:
            with contextlib.suppress(RuntimeError):  # that loop closed
                loop.call_soon_threadsafe(_finish, ended)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # seen: not "never retrieved"


def _finish(ended: asyncio.Future[None]) -> None:
    if not ended.done():
        ended.set_result(None)
