"""Tools from MCP servers: what ``MCPServerStdio`` and ``MCPServerHTTP``
(``agents.mcp.servers``) share, given to a loop like tools (``AgentLoop(driver,
tools=[add, MCPServerStdio("mcp-server-time")])``).

Each server object keeps one session open at a time, on a thread of its own with its own
event loop: the session is opened and closed in one task there, whatever thread or event
loop the runs come from (a Starlette lifespan, ``asyncio.gather`` of many ``arun``, plain
``run``), so no cancel scope is ever left in another task. A run opens the session if it is
not open (listing the tools once: the catalogue is cached; ``refresh()`` lists again) and
closes it when the last run using it ends, unless the application holds it open with
``with server:`` / ``async with server:``.

A call is an ordinary tool call: its arguments checked against the server's schema, its
result the value the model reads, its failure — the server's ``isError``, a protocol error,
a deadline passed, the server process gone — a failed ``ToolExecution`` the model reads,
never a hang and never the end of the run. A server that cannot start offers no tools; the
others' tools work. An HTTP server that lost the session (restarted, expired) is reconnected
once and the call sent again.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from agents.errors import AgentError, ConfigurationError, InvalidType
from agents.mcp import sdk
from agents.mcp.calls import CallScope, within_call
from agents.mcp.connection import Connection, MCPTimeout, MCPToolError
from agents.mcp.sampling import Sampler
from agents.otel.spans import mcp_traceparent
from agents.records.arguments import amount, names, switch, text
from agents.records.events import ToolServerRestarted
from agents.records.frozen import deep_freeze, deep_thaw
from agents.records.schema import compile_validator
from agents.shell.reporting import current_forward
from agents.tools.outcomes import InputRequired, ToolResult
from agents.tools.tool import Tool

__all__ = ["START_TIMEOUT", "MCPServer", "MCPToolError"]

START_TIMEOUT: Final = 30.0  # seconds to start a server and list its tools
_BACKOFF: Final = 0.5  # seconds before a restart after a failed one (doubling, at most:)
_BACKOFF_MOST: Final = 30.0
_CONTEXT: Final = "_agents_tool_context"  # the ToolContext a call receives, by this name


class MCPServer:
    """What ``MCPServerStdio`` and ``MCPServerHTTP`` share: the session, the catalogue,
    the tools made from it, and when the session opens and closes."""

    def __init__(
        self,
        *,
        prefix: str | None,
        timeout: float | None,
        tool_timeouts: Mapping[str, float],
        requires_approval: bool | Sequence[str],
        sampling: bool,
        elicitation: bool,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.start_timeout = amount(start_timeout, "start_timeout")
        self.requires_approval = (  # a text's letters would name no tool: none gated
            requires_approval
            if isinstance(requires_approval, bool)
            else frozenset(names(requires_approval, "requires_approval"))
        )
        self.prefix = None if prefix is None else text(prefix, "prefix")
        self.sampling = switch(sampling, "sampling")
        self.elicitation = switch(elicitation, "elicitation")
        self.timeout = None if timeout is None else amount(timeout, "timeout")
        if not isinstance(tool_timeouts, Mapping):
            raise InvalidType(f"tool_timeouts is a map, not {type(tool_timeouts).__name__}")
        self.tool_timeouts = {
            name: amount(seconds, f"tool_timeouts[{name!r}]")
            for name, seconds in tool_timeouts.items()
        }
        self._lock = threading.Lock()
        self._connection: Connection | None = None
        self._users = 0  # runs using the session now
        self._held = False  # opened by `with server:`
        self._tools: tuple[Tool, ...] | None = None
        self._calls: dict[str, tuple[str, float | None]] = {}  # tool → server's name, deadline
        self._failure: str | None = None  # why the session did not open, last time
        self._failed_starts = 0  # restarts failed in a row (the next waits longer)
        self._listed: list[sdk.ToolInfo] | None = None  # the tools its last session listed
        self._next_start = 0.0  # no restart before (time.monotonic)
        # The server's tool list last seen, and what a run can offer of it (``_offers``):
        # worked out once per list, not at each run's catalogue.
        self._offers: tuple[Any, list[dict[str, Any]]] | None = None

    # -- what a subclass says ----------------------------------------------------------------

    @property
    def label(self) -> str:
        """How errors name the server."""
        raise NotImplementedError

    def _client(self, connection: Connection) -> Any:
        raise NotImplementedError

    reconnects: bool = False  # a lost session is opened again once, and the call resent
    restarts: bool = False  # a process that ended is started again at the next call
    transport: str = "stdio"

    def _start_problem(self) -> str | None:
        """Why the server cannot be started at all (checked before trying), or ``None``."""
        return None

    # -- the session -----------------------------------------------------------------------------

    def _connected(self) -> Connection:
        """The open session, opened (and its tools listed) if it is not."""
        connection = self._connection
        if connection is not None and connection.alive:
            return connection
        if connection is not None:
            connection.close(wait=1.0)
            self._connection = None
        problem = self._start_problem()
        if problem is not None:
            raise MCPToolError(f"the MCP server {self.label} did not start: {problem}")
        connection = self._connection = Connection(self._client, self.label)
        self._tools = None
        started = connection.ready.wait(self.start_timeout)
        if not started or connection.client is None:
            connection.close(wait=5.0)  # a start given up: its task and process stopped
            if not started:
                raise MCPToolError(
                    f"the MCP server {self.label} did not start within "
                    f"{self.start_timeout:g} s (given up: its process was stopped)"
                )
            why = connection.failure
            while isinstance(why, BaseExceptionGroup) and why.exceptions:  # the SDK's task group
                why = why.exceptions[0]
            said = " ".join(str(why).split())  # one line
            detail = f": {type(why).__name__}: {said}" if why is not None else " in time"
            if connection.refusal is not None:  # what the SDK's words leave out
                detail += f" (HTTP {connection.refusal})"
            raise MCPToolError(f"the MCP server {self.label} did not start{detail}")
        return connection

    def tools_for_run(self, loop: Any = None) -> Sequence[Tool]:
        """The server's tools for a run of ``loop`` starting now (the session opened if
        needed, kept open until ``release``; the server's sampling requests answered by
        ``loop``'s model); none when the server cannot start."""
        with self._lock:
            self._users += 1
            connection = self._connection
            ended = self.restarts and connection is not None and not connection.alive
            if ended and self._listed is not None:  # it ran, and its process ended: the
                # next call starts it again (ToolServerRestarted); offered as last listed
                if self._tools is None:
                    self._tools = self._offered(self._listed)
                return self._run_tools(loop)
            try:
                connection = self._connected()
            except MCPToolError as exc:
                self._failure = str(exc)
                return ()
            self._failure = None
            if connection.tools_changed:  # notifications/tools/list_changed
                connection.tools_changed = False
                future = connection.submit(connection.listed)
                connection.identity, connection.tools = future.result(START_TIMEOUT)
                self._tools = None
            if self._tools is None:
                self._tools = self._offered(connection.tools)
            self._listed = connection.tools
            return self._run_tools(loop)

    def _run_tools(self, loop: Any) -> tuple[Tool, ...]:
        """The tools for a run of ``loop`` (its model answering sampling requests)."""
        assert self._tools is not None
        if loop is None or not self.sampling:
            return self._tools
        return tuple(
            attrs.evolve(t, function=self._function(*self._calls[t.name], loop))
            for t in self._tools
        )

    def release(self) -> None:
        """A run using the server ended: the session closes with the last one, unless
        the application holds it open."""
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users == 0 and not self._held:
                self._close()

    def catalogue(self) -> dict[str, Any]:
        """What the server offered: its identity and its tools' names, descriptions and
        schemas (as a run records it)."""
        connection = self._connection
        if connection is None or not connection.alive:
            return {"server": self.label, "error": self._failure or "not running"}
        return {
            "server": connection.identity,
            "transport": self.transport,
            "protocol": connection.protocol,
            **({"session": connection.session_id} if connection.session_id else {}),
            "tools": [
                {
                    "name": self._named(t.name),
                    "description": t.description,
                    **({"input_schema": t.input_schema} if "input_schema" in offer else offer),
                }
                for t, offer in zip(
                    connection.tools, self._offers_of(connection.tools), strict=True
                )
            ],
        }

    def refresh(self) -> None:
        """List the server's tools again (the next run offers what it offers now)."""
        with self._lock:
            connection = self._connection
            if connection is not None and connection.alive:
                future = connection.submit(connection.listed)
                connection.identity, connection.tools = future.result(START_TIMEOUT)
            self._tools = None

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        self._tools = None
        self._listed = None
        if connection is not None:
            connection.close()

    def close(self) -> None:
        """Close the session now (the server process stops)."""
        with self._lock:
            self._held = False
            self._close()

    def __enter__(self) -> MCPServer:
        with self._lock:
            self._connected()
            self._held = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPServer:
        await asyncio.to_thread(self.__enter__)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    # -- the tools -------------------------------------------------------------------------------

    def _named(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else name

    def _offered(self, listed: Sequence[sdk.ToolInfo]) -> tuple[Tool, ...]:
        """The tools of the server's list a run can offer the model: those whose schema a
        state can hold (JSON numbers, nested at most ``MAX_DEPTH``), the first of any name
        listed twice (the catalogue says why the others are left out)."""
        return tuple(
            self._tool(info, offered["input_schema"])
            for info, offered in zip(listed, self._offers_of(listed), strict=True)
            if "input_schema" in offered
        )

    def _offers_of(self, listed: Sequence[sdk.ToolInfo]) -> list[dict[str, Any]]:
        known = self._offers
        if known is None or known[0] is not listed:
            known = self._offers = (listed, _offers(listed))
        return known[1]

    def _tool(self, info: sdk.ToolInfo, schema: Any) -> Tool:
        try:
            validator = compile_validator(schema)
        except ConfigurationError:  # beyond the subset checked here: the server checks
            validator = compile_validator({"type": "object"})
        timeout = self.tool_timeouts.get(info.name, self.timeout)
        self._calls[self._named(info.name)] = (info.name, timeout)
        approval = self.requires_approval
        return Tool(
            name=self._named(info.name),
            description=info.description,
            parameters=schema,
            function=self._function(info.name, timeout, None),
            is_async=True,
            context_parameter=_CONTEXT,
            requires_approval=approval  # by the server's name of the tool, or the run's
            if isinstance(approval, bool)
            else not approval.isdisjoint((info.name, self._named(info.name))),
            _plain_parameters=deep_thaw(schema),
            _validator=validator,
        )

    def _function(self, name: str, timeout: float | None, loop: Any) -> Callable[..., Any]:
        """What a tool runs: calls ``name`` on the server (the server's sampling requests
        answered by ``loop``'s model, when there is a loop; its elicitation requests by a
        human: ``agents.mcp.calls``)."""

        async def call(**arguments: Any) -> Any:
            context = arguments.pop(_CONTEXT)
            _, step, call_id = context.idempotency_key
            meta = None
            traceparent = mcp_traceparent(context.state, step, call_id)
            if traceparent is not None:  # the server's spans join the run's trace
                meta = {"traceparent": traceparent}
            sampler = None
            if loop is not None:
                sampler = Sampler(loop, context, current_forward(), self.label)
            scope = CallScope(context, sampler, self.label)
            try:
                value = await self._call(name, arguments, timeout, meta, scope)
            except Exception as exc:
                if scope.question is not None:  # a human is asked: the run suspends
                    raise InputRequired(scope.question) from None
                if sampler is None or sampler.child is None:
                    raise
                raise MCPToolError(str(exc), sampler.child) from None  # the run kept
            value = scope.ended(value)
            if sampler is None or sampler.child is None:
                return value
            return ToolResult(value, child=sampler.child)

        call.__name__ = self._named(name)
        return call

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        meta: Any,
        scope: CallScope,
    ) -> Any:
        connection = self._connection
        if self.restarts and connection is not None and not connection.alive:
            await asyncio.to_thread(self._restart, scope.context, connection)
        try:
            return await self._call_once(name, arguments, timeout, meta, scope)
        except _SessionLost:
            if not self.reconnects:
                raise MCPToolError(f"the MCP server {self.label} lost the session") from None
            await asyncio.to_thread(self._reconnect)
            return await self._call_once(name, arguments, timeout, meta, scope)

    def _restart(self, context: Any, ended: Connection) -> None:
        """Start the server again for a call, its process having ended (once a call; after
        a failed start, not before the backoff has passed: 0.5 s, doubling to 30 s); the
        calling run's listeners get ``ToolServerRestarted``."""
        with self._lock:
            if self._connection is not ended:  # another call started it meanwhile
                return
            wait = self._next_start - time.monotonic()
            if wait > 0:
                raise MCPToolError(
                    f"the MCP server {self.label} is not running (its process ended; the "
                    f"last start failed, the next is tried in {wait:.1f} s)"
                )
            try:
                self._connected()
            except MCPToolError:
                self._failed_starts += 1
                delay = min(_BACKOFF * 2 ** (self._failed_starts - 1), _BACKOFF_MOST)
                self._next_start = time.monotonic() + delay
                raise
            self._failed_starts, self._next_start = 0, 0.0
        forward = current_forward()
        if forward is not None:
            execution_id, step, call_id = context.idempotency_key
            forward(
                ToolServerRestarted(
                    agent_id=context.state.agent_id,
                    execution_id=execution_id,
                    step=step,
                    server=self.label,
                    call_id=call_id,
                    reason="its process had ended" if ended.exited else "its last start failed",
                )
            )

    def _reconnect(self) -> None:
        with self._lock:
            connection = self._connection
            if connection is not None:
                connection.close(wait=1.0)
                self._connection = None
            self._connected()

    async def _call_once(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        meta: Any,
        scope: CallScope,
    ) -> Any:
        connection = self._connection
        if connection is None or not connection.alive:
            raise MCPToolError(f"the MCP server {self.label} is not running")
        # Watched before the call is sent: an answer that is no message may come at once.
        ended = connection.watch()  # the session ended, or its server sent what is no message
        try:
            future = connection.submit(
                lambda client: within_call(scope, client.call_tool(name, arguments, meta=meta))
            )
        except BaseException:
            connection.unwatch(ended)
            raise
        call = asyncio.wrap_future(future)
        connection.calls.append(scope)
        try:
            done, _ = await asyncio.wait(
                {call, ended}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            connection.unwatch(ended)
            connection.calls.remove(scope)
        if call not in done:
            call.cancel()  # and the call on the session's loop with it
            if ended in done and connection.fault is not None:
                raise MCPToolError(
                    f"{name} on the MCP server {self.label}: {connection.fault}; the call "
                    "was given up (its answer may have been what could not be read)"
                )
            if ended in done:
                raise MCPToolError(f"the MCP server {self.label} exited during the call")
            raise MCPTimeout(f"{name} on the MCP server {self.label} took longer than {timeout} s")
        try:
            result = call.result()
        except sdk.MCPError as exc:
            if _lost(exc):
                raise _SessionLost from None
            raise MCPToolError(
                f"{name} on the MCP server {self.label}: {exc.error.message}"
            ) from None
        except Exception as exc:
            if _lost(exc):
                raise _SessionLost from None
            raise MCPToolError(
                f"{name} on the MCP server {self.label}: {type(exc).__name__}: {exc}"
            ) from None
        answer = sdk.answer_of(result)
        if answer.is_error:
            raise MCPToolError(answer.text or f"{name} failed on the MCP server {self.label}")
        return answer.value


class _SessionLost(AgentError):
    """The server no longer knows the session (an HTTP 404: restarted, or expired)."""


def _lost(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return "404" in text or "session not found" in text or "session terminated" in text


def _offers(listed: Sequence[sdk.ToolInfo]) -> list[dict[str, Any]]:
    """For each tool of a server's list, ``{"input_schema": <frozen schema>}`` when a run
    can offer it, or ``{"error": why}`` when it cannot: a schema holding a number JSON has
    not (``NaN``), nested past ``MAX_DEPTH``, or a name listed before."""
    seen: set[str] = set()
    offers: list[dict[str, Any]] = []
    for info in listed:
        schema = info.input_schema or {"type": "object", "properties": {}}
        try:
            offer: dict[str, Any] = {"input_schema": deep_freeze(schema)}
        except ValueError as exc:  # NestingError
            offer = {"error": f"left out: its input schema is not usable JSON ({exc})"}
        if info.name in seen:
            offer = {"error": f"left out: the server lists another tool named {info.name!r}"}
        seen.add(info.name)
        offers.append(offer)
    return offers
