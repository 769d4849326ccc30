"""The HTTP API of ``agents serve`` (Starlette; served by uvicorn — the only module importing
either): sessions, messages answered with Server-Sent Events, event streams resumed with
``Last-Event-ID``, approvals, a human's answers to tool calls' questions, steering and
follow-ups.

Errors are one line of JSON, ``{"error": "..."}``: 400 for a body that is not JSON, 422 for
one with unknown or mistyped fields, 404 for an unknown session, 409 for a conflict (another
write won, or a run is in progress), 401 without the token, 413 for a body too large, 503
when the session store cannot be used (locked, its connection lost).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from agents.errors import (
    AgentError,
    ContentError,
    InvalidArgument,
    ResourceError,
    SessionConflict,
    SessionNotFound,
    StateDecodeError,
    StoreUnavailable,
)
from agents.persistence.runtime import SessionRuntime
from agents.records.arguments import names
from agents.records.blobs import shown_image
from agents.records.codec import encode_value
from agents.records.content import part_of
from agents.records.json_text import dumps
from agents.records.state import AgentState
from agents.serve.guard import LOOPBACK_HOSTS, Guard, is_loopback
from agents.serve.page import STATIC, page_html
from agents.serve.runs import (
    UNFINISHED,
    Busy,
    DecisionError,
    Runs,
    approval_decision,
    event_type,
    number_of,
    session_id_problem,
)
from agents.tools.threads import to_thread

__all__ = ["LOOPBACK_HOSTS", "MAX_BODY", "app", "guarded", "is_loopback", "run_server"]

MAX_BODY: Final = 1_000_000  # bytes a request body may have
MAX_MEDIA_BODY: Final = 30_000_000  # a message's, media inline in base64 (20 MB a blob)


class _BadRequest(AgentError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _json(data: Any, status: int = 200) -> Response:
    """A JSON response, written as the codec writes JSON (a lone surrogate in the text as
    its escape, where Starlette's ``JSONResponse`` would fail)."""
    return Response(dumps(data), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": " ".join(message.split())}, status)


async def _body(
    request: Request,
    fields: Mapping[str, type | tuple[type, ...]] | None,
    required: set[str],
    most: int = MAX_BODY,
) -> dict[str, Any]:
    """The request's JSON object, checked: only ``fields`` (``None``: any), of their types;
    ``required`` present; ``most`` bytes at most."""
    declared = request.headers.get("content-length")
    size = None if declared is None else number_of(declared)
    if size is not None and size > most:
        raise _BadRequest(413, f"the body is larger than {most:,} bytes")
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > most:
            raise _BadRequest(413, f"the body is larger than {most:,} bytes")
    if not raw.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise _BadRequest(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise _BadRequest(422, "the body must be a JSON object")
    if fields is None:
        return data
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise _BadRequest(422, f"unknown fields: {', '.join(unknown)}")
    missing = sorted(required - set(data))
    if missing:
        raise _BadRequest(422, f"missing fields: {', '.join(missing)}")
    for name, value in data.items():
        kind = fields[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise _BadRequest(422, f"field {name!r} has the wrong type")
    return data


def _sse(batches: AsyncIterator[Sequence[tuple[int, str]]]) -> StreamingResponse:
    async def lines() -> AsyncIterator[bytes]:
        async for batch in batches:  # the events read together, sent in one piece
            yield "".join(
                f"id: {number}\nevent: {event_type(text)}\ndata: {text}\n\n"
                for number, text in batch
            ).encode()

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(lines(), media_type="text/event-stream", headers=headers)


def app(
    runtime_or_loop_factory: Any,
    *,
    store: Any = None,
    token: str | None = None,
    page: bool | str = False,
    allowed_hosts: Iterable[str] | None = None,
    same_origin: bool = False,
) -> ASGIApp:
    """The ASGI application: ``runtime_or_loop_factory`` is a ``SessionRuntime``, or a
    function ``(session) -> AgentLoop`` over ``store`` (a session store keeping event logs).
    With ``page=True``, the chat page is served at ``/`` and its files under ``/static/``
    (a string is served as the page's HTML instead). With ``token``, every request but the
    page's needs ``Authorization: Bearer <token>``.
    With ``allowed_hosts``, a request whose ``Host`` header names another host (any port)
    is refused (403): the guard against DNS rebinding, by which a web page the user visits
    reaches a server on this machine under the page's own name (``agents serve`` on a
    loopback address allows ``LOOPBACK_HOSTS`` only). With ``same_origin``, a request a
    browser sends from a page of another origin (its ``Origin`` header names another host
    than ``Host``) is refused (403): the guard against cross-site requests, which any page
    may send (a ``text/plain`` POST needs no permission) to make the agent run a message of
    its choosing (``agents serve`` sets it; clients that are not browsers send no
    ``Origin``)."""
    if isinstance(runtime_or_loop_factory, SessionRuntime):
        runtime = runtime_or_loop_factory
    else:
        if store is None:
            raise InvalidArgument("app(loop_factory) needs store=")
        runtime = SessionRuntime(store, runtime_or_loop_factory)
    runs = Runs(runtime)
    routes: list[BaseRoute] = [
        Route("/sessions", _create(runtime), methods=["POST"]),
        Route("/sessions/{session_id}", _get(runtime), methods=["GET"]),
        Route("/sessions/{session_id}", _delete(runtime, runs), methods=["DELETE"]),
        Route("/sessions/{session_id}/timeline", _timeline(runtime), methods=["GET"]),
        Route("/sessions/{session_id}/images/{sha256}", _image(runtime), methods=["GET"]),
        Route("/sessions/{session_id}/messages", _messages(runtime, runs), methods=["POST"]),
        Route("/sessions/{session_id}/events", _events(runtime, runs), methods=["GET"]),
        Route("/sessions/{session_id}/approvals", _approvals(runtime, runs), methods=["POST"]),
        Route("/sessions/{session_id}/inputs", _inputs(runtime, runs), methods=["POST"]),
        Route("/sessions/{session_id}/steer", _handed(runs, "steer"), methods=["POST"]),
        Route(
            "/sessions/{session_id}/follow-ups",
            _handed(runs, "follow_up"),
            methods=["POST"],
        ),
    ]
    routes.append(Route("/ag-ui", _agui(runtime, runs), methods=["POST"]))
    if page:
        html = page_html() if page is True else page
        routes.append(Route("/", lambda request: Response(html, media_type="text/html")))
        routes.append(Mount("/static", StaticFiles(packages=[STATIC]), name="static"))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            runs.close()  # the process's run leases go (as they would with it)

    application = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
    )
    hosts = None
    if allowed_hosts is not None:
        hosts = frozenset(h.lower() for h in names(allowed_hosts, "allowed_hosts"))
    return Guard(application, token, hosts, same_origin)


def guarded(application: Any, *, token: str | None) -> Any:
    """Any ASGI ``application`` (the MCP SDK's, for ``agents mcp-serve --transport http``)
    behind ``app``'s bearer token: with ``token``, every HTTP request but one for ``/``
    needs ``Authorization: Bearer <token>`` (a one-line JSON ``401`` otherwise)."""
    return Guard(application, token, None, False)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route: 404, a method it does not take: 405) as one
    line of JSON, like every other error."""
    assert isinstance(exc, HTTPException)
    response = _error(exc.status_code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


async def _server_error(request: Request, exc: Exception) -> Response:
    """A failure nothing else answers: 500 with one line of JSON naming its type (never
    its text, which could hold anything); the server's log has the rest."""
    return _error(500, f"internal error ({type(exc).__name__})")


Handler = Callable[[Request], Awaitable[Response]]


def _handler(work: Callable[[Request], Awaitable[Response]]) -> Handler:
    async def handle(request: Request) -> Response:
        try:
            return await work(request)
        except _BadRequest as bad:
            return _error(bad.status, bad.message)
        except SessionNotFound as exc:
            return _error(404, str(exc))
        except (SessionConflict, Busy) as exc:
            return _error(409, str(exc))
        except StateDecodeError as exc:
            return _error(422, str(exc))
        except StoreUnavailable as exc:
            return _error(503, str(exc))

    return handle


def _create(runtime: SessionRuntime) -> Handler:
    async def create(request: Request) -> Response:
        body = await _body(request, {"system_prompt": str, "session_id": str}, set())
        session_id = body.get("session_id")
        problem = None if session_id is None else session_id_problem(session_id)
        if problem is not None:
            raise _BadRequest(422, f"field 'session_id' {problem}")
        state = AgentState.initial(body.get("system_prompt", ""))
        session = await _blocking(runtime.create, state, body.get("session_id"))
        return _json({"session_id": session.session_id, "version": session.version}, 201)

    return _handler(create)


def _get(runtime: SessionRuntime) -> Handler:
    async def get(request: Request) -> Response:
        session = await _blocking(runtime.get, request.path_params["session_id"])
        assert session.state is not None
        headers = {"X-Session-Version": str(session.version)}
        return Response(session.state.to_json(), media_type="application/json", headers=headers)

    return _handler(get)


def _timeline(runtime: SessionRuntime) -> Handler:
    async def timeline(request: Request) -> Response:
        session = await _blocking(runtime.get, request.path_params["session_id"])
        assert session.state is not None
        rows = [encode_value(row) for row in session.state.timeline()]
        return _json({"rows": rows, "status": _status(session.state)})

    return _handler(timeline)


def _image(runtime: SessionRuntime) -> Handler:
    """An image of the session by its hash (the page's thumbnails): images only, unsniffed."""

    async def image(request: Request) -> Response:
        session = await _blocking(runtime.get, request.path_params["session_id"])
        blob = shown_image(session.state, request.path_params["sha256"])
        try:
            data = await _blocking(blob.data) if blob is not None else None
        except ContentError as exc:  # its bytes are not here, or not whole
            return _error(404, str(exc))
        if blob is None or data is None:
            return _error(404, "this session holds no such image")
        return Response(data, media_type=blob.media_type, headers=_IMAGE_HEADERS)

    return _handler(image)


_IMAGE_HEADERS: Final = {  # never sniffed, never run, kept a day
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'",
    "Cache-Control": "private, max-age=86400",
}


def _status(state: AgentState) -> str | None:
    return state.status.value if state.status is not None else None


def _delete(runtime: SessionRuntime, runs: Runs) -> Handler:
    async def delete(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        await _blocking(_holding, runs, session_id, runtime.delete, session_id)
        return Response(status_code=204)

    return _handler(delete)


def _messages(runtime: SessionRuntime, runs: Runs) -> Handler:
    async def messages(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        body = await _body(request, {"message": (str, list)}, {"message"}, MAX_MEDIA_BODY)
        message = _content(body["message"])
        await _blocking(_exists, runtime, session_id)  # 404 before anything starts
        before = await _blocking(runs.start, session_id, lambda rt: rt.send(session_id, message))
        return _sse(runs.batches(session_id, before))

    return _handler(messages)


def _content(message: str | list[Any]) -> Any:
    """A message's content: its text, or a list of text and parts (``content.part_of``:
    ``{"type": "image", "url": ...}``; a ``data:`` URL holds the bytes, stored once as a
    blob). 422 naming the item for anything else."""
    if isinstance(message, str):
        return message
    if not message:
        raise _BadRequest(422, "field 'message' is text or a non-empty list of text and parts")
    content: list[Any] = []
    for index, item in enumerate(message):
        try:
            content.append(item if isinstance(item, str) else part_of(item))
        except ContentError as exc:
            raise _BadRequest(422, f"message[{index}]: {exc}") from None
    return content


def _events(runtime: SessionRuntime, runs: Runs) -> Handler:
    async def events(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        session = await _blocking(runtime.get, session_id)
        raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        after = number_of(raw)
        if after is None:
            raise _BadRequest(400, "Last-Event-ID must be an event number")
        state = session.state
        unfinished = state is not None and state.status in UNFINISHED
        if unfinished and not runs.running(session_id):
            # A run that a stopped process left unfinished goes on from its last committed
            # step, and the stream with it (one another process runs is followed there).
            await _blocking(runs.resume, session_id)
        return _sse(runs.batches(session_id, after, one_run=False))

    return _handler(events)


def _approvals(runtime: SessionRuntime, runs: Runs) -> Handler:
    async def approvals(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        body = await _body(request, None, set())
        call_id = body.pop("call_id", None)
        if type(call_id) is not str:
            raise _BadRequest(
                422,
                "missing fields: call_id"
                if call_id is None
                else "field 'call_id' has the wrong type",
            )
        try:
            approved, reason = approval_decision(body, "the decision")
        except DecisionError as exc:
            raise _BadRequest(422, str(exc)) from None
        session = await _blocking(runtime.get, session_id)
        assert session.state is not None
        waiting = {call.id for call in session.state.pending_approvals}
        if call_id not in waiting:
            raise _BadRequest(422, f"no call {call_id!r} waits for approval")
        before = await _blocking(
            runs.start, session_id, lambda rt: rt.approve(session_id, call_id, approved, reason)
        )
        return _json({"accepted": True, "events_after": before}, 202)

    return _handler(approvals)


def _inputs(runtime: SessionRuntime, runs: Runs) -> Handler:
    async def inputs(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        body = await _body(request, {"call_id": str, "action": str, "content": dict}, {"call_id"})
        session = await _blocking(runtime.get, session_id)
        assert session.state is not None
        call_id, action, content = (
            body["call_id"],
            body.get("action", "accept"),
            body.get("content"),
        )
        try:  # the answer checked before anything runs (a question, an action, a fit)
            session.state.with_input(call_id, content, action=action)
        except ValueError as exc:
            raise _BadRequest(422, str(exc)) from None
        before = await _blocking(
            runs.start,
            session_id,
            lambda rt: rt.answer(session_id, call_id, content, action=action),
        )
        return _json({"accepted": True, "events_after": before}, 202)

    return _handler(inputs)


def _handed(runs: Runs, kind: str) -> Handler:
    async def handed(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        body = await _body(request, {"message": str}, {"message"})
        message = body["message"]
        if runs.hand(session_id, kind, message):
            return _json({"accepted": True, "to": "the run in progress"}, 202)
        await _blocking(runs.queue_for_next_run, session_id, kind, message)
        return _json({"accepted": True, "to": "the session's next run"}, 202)

    return _handler(handed)


def _agui(runtime: SessionRuntime, runs: Runs) -> Handler:
    index: Any = None  # the AG-UI runs by runId (made on first use: ag-ui loads then)

    async def agui(request: Request) -> Response:
        from agents.serve.agui import AgUiInputError, AgUiRuns, agui_run

        nonlocal index
        if index is None:
            index = AgUiRuns(runs)
        data = await _body(request, None, set(), MAX_MEDIA_BODY)
        cursor = request.headers.get("last-event-id")
        lines = agui_run(runtime, runs, index, data, _blocking, cursor)
        try:
            first = await anext(lines)  # the input checked, the run started
        except AgUiInputError as exc:
            raise _BadRequest(422, str(exc)) from None

        async def everything() -> AsyncIterator[bytes]:
            yield first.encode()
            async for line in lines:
                yield line.encode()

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(everything(), media_type="text/event-stream", headers=headers)

    return _handler(agui)


def _exists(runtime: SessionRuntime, session_id: str) -> None:
    """``SessionNotFound`` unless the session is stored (without loading a long
    conversation twice: the run loads it)."""
    exists = getattr(runtime.store, "exists", None)
    if exists is None:
        runtime.get(session_id)
    elif not exists(session_id):
        raise SessionNotFound(f"no session {session_id!r}")


def _holding(runs: Runs, session_id: str, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` while no run of the session can start (``Busy`` if one is in
    progress, here or in another process)."""
    with runs.holding(session_id):
        return function(*args)


async def _blocking(function: Callable[..., Any], *args: Any) -> Any:
    return await to_thread(function, *args)  # the engine's worker threads: cheaper hand-offs


def run_server(
    application: Any, host: str, port: int, *, listening: Callable[[str], None] | None = None
) -> None:
    """Serve ``application`` with uvicorn until stopped, on a socket bound first: an
    address that cannot be had is an ``OSError`` saying which (uvicorn logged it and exited
    with 3), and ``listening`` is told the address served (``http://host:port``, with the
    port the system chose for 0) once it takes connections."""
    import socket

    import uvicorn

    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        listener.bind((host, port))
        listener.listen(2048)  # connections wait from now on, as uvicorn's backlog lets them
    except OSError as exc:
        listener.close()
        raise ResourceError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    with listener:
        if listening is not None:
            shown = f"[{host}]" if ":" in host else host
            listening(f"http://{shown}:{listener.getsockname()[1]}")
        config = uvicorn.Config(application, log_level="warning")  # the socket's address
        uvicorn.Server(config).run(sockets=[listener])
