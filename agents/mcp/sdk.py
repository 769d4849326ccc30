"""The official MCP SDK (the ``mcp`` package, the only module importing it, and its HTTP
client): clients for servers over stdio and streamable HTTP, what their answers hold as
plain data, and an MCP server for an agent."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, cast

import httpx2
from anyio import EndOfStream
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as mcp_stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer as SDKServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    AudioContent,
    BlobResourceContents,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ErrorData,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
)

from agents.errors import AgentError
from agents.mcp.parts import parts_of
from agents.records.content import AudioPart, ImagePart

SESSION_HEADER: Final = "mcp-session-id"

__all__ = [
    "Elicit",
    "ElicitationRequest",
    "MCPError",
    "Sample",
    "SamplingRequest",
    "ToolAnswer",
    "ToolInfo",
    "agent_server",
    "answer_of",
    "content_blocks",
    "http_client",
    "list_tools",
    "protocol_of",
    "stdio_client",
    "watch_tools",
]


def stdio_client(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    timeout: float | None,
    changed: Callable[[], None],
    faulted: Callable[[str], None],
    sample: Sample | None,
    elicit: Elicit | None = None,
    exited: Callable[[], None] | None = None,
) -> Client:
    """A client starting ``command`` and talking to it over its stdin and stdout (the
    server's stderr is this process's: its complaints stay visible); ``changed`` is called
    when the server says its tools changed (``notifications/tools/list_changed``),
    ``faulted`` when it sends what is no message, ``exited`` when its output ends (the
    process exited), ``sample`` answers its sampling requests and ``elicit`` its
    elicitation requests (none are accepted without them)."""
    parameters = StdioServerParameters(
        command=command,
        args=list(args),
        env=dict(env) if env else None,
        cwd=os.fspath(cwd) if cwd is not None else None,
        # A line that is not UTF-8 is read with U+FFFD in place of its bad bytes, so it is
        # a line that is no message (``faulted``: the calls in flight fail at once) rather
        # than the end of the reader, which left every call waiting for its deadline.
        encoding_error_handler="replace",
    )
    transport = mcp_stdio_client(parameters, errlog=_stderr())
    if exited is not None:
        transport = _telling_the_end(transport, exited)
    return _client(transport, timeout, changed, faulted, sample, elicit)


def _client(
    transport: Any,
    timeout: float | None,
    changed: Callable[[], None],
    faulted: Callable[[str], None],
    sample: Sample | None,
    elicit: Elicit | None,
) -> Client:
    """The SDK's client over ``transport``, with this library's handlers: tool-list
    changes, and the server's sampling and elicitation requests (when given)."""
    return Client(
        transport,
        read_timeout_seconds=timeout,
        mode="auto",
        message_handler=_notices(changed, faulted),
        sampling_callback=_sampling(sample) if sample is not None else None,
        elicitation_callback=_elicitation(elicit) if elicit is not None else None,
    )


@asynccontextmanager
async def _telling_the_end(transport: Any, ended: Callable[[], None]) -> AsyncIterator[Any]:
    """``transport`` with its read stream telling ``ended`` when it ends: the server's
    output closed (its process exited), which the SDK's client only shows as each later
    call failing with "Connection closed"."""
    async with transport as (read, write):
        yield _EndTold(read, ended), write


class _EndTold:
    """A transport's read stream (the SDK's ``ReadStream``) that calls ``ended`` at its
    end — not when it is closed from this side (a shutdown)."""

    def __init__(self, stream: Any, ended: Callable[[], None]) -> None:
        self._stream = stream
        self._ended = ended

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except EndOfStream:
            self._ended()
            raise

    def __aiter__(self) -> _EndTold:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndTold:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


def _notices(changed: Callable[[], None], faulted: Callable[[str], None]) -> Any:
    """A message handler calling ``changed`` when the server says its tools changed, and
    ``faulted`` when the transport met what it could not read (a line that is not a
    JSON-RPC message: the SDK drops it, tied to no request), saying what in a few words
    (never the line: it may echo what the client sent)."""

    async def handle(message: Any) -> None:
        if isinstance(message, Exception):
            if "\ufffd" in str(message):  # read with U+FFFD for its bad bytes (stdio_client)
                faulted("the server sent a line that is not UTF-8")
            else:
                faulted(
                    f"the server sent what is not a JSON-RPC message ({type(message).__name__})"
                )
        elif type(message).__name__ == "ToolListChangedNotification":
            changed()

    return handle


class SamplingRequest:
    """What a server asks the client's model (``sampling/createMessage``), as plain data:
    the messages as ``(role, text)`` pairs, a system prompt, and the model settings."""

    __slots__ = ("max_tokens", "messages", "stop", "system_prompt", "temperature")

    def __init__(
        self,
        messages: list[tuple[str, str]],
        system_prompt: str,
        max_tokens: int,
        temperature: float | None,
        stop: list[str] | None,
    ) -> None:
        self.messages = messages
        self.system_prompt = system_prompt
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.stop = stop


Sample = Callable[[SamplingRequest], Awaitable[tuple[str, str]]]
"""Answers a sampling request with the model's text and the model's name; an
``Exception`` it raises is the server's error answer (its text: the exception's)."""


def _sampling(sample: Sample) -> Any:
    """The SDK's sampling callback, answering through ``sample``: text only, no tools
    (a request with tools is refused: the client does not declare ``sampling.tools``)."""

    async def callback(context: Any, params: Any) -> Any:
        if params.tools or params.tool_choice:
            return ErrorData(code=INVALID_PARAMS, message="this client samples without tools")
        request = SamplingRequest(
            [(str(m.role), _text_of(m.content_as_list)) for m in params.messages],
            params.system_prompt or "",
            params.max_tokens,
            params.temperature,
            list(params.stop_sequences) if params.stop_sequences else None,
        )
        try:
            text, model = await sample(request)
        except Exception as exc:
            return ErrorData(code=INTERNAL_ERROR, message=str(exc))
        content = TextContent(type="text", text=text)
        return CreateMessageResult(
            role="assistant", content=content, model=model, stop_reason="endTurn"
        )

    return callback


class ElicitationRequest:
    """What a server asks a human (``elicitation/create``), as plain data: a message, the
    JSON schema of the answer (form mode), or a URL to visit (URL mode)."""

    __slots__ = ("message", "schema", "url")

    def __init__(self, message: str, schema: dict[str, Any], url: str) -> None:
        self.message = message
        self.schema = schema
        self.url = url


Elicit = Callable[[ElicitationRequest], tuple[str, dict[str, Any] | None]]
"""Answers an elicitation request with an action (``accept``, ``decline``, ``cancel``) and
the content; an ``Exception`` it raises is the server's error answer (its text)."""


def _elicitation(elicit: Elicit) -> Any:
    """The SDK's elicitation callback, answering through ``elicit``."""

    async def callback(context: Any, params: Any) -> Any:
        url = getattr(params, "url", None) or ""
        schema = getattr(params, "requested_schema", None) or {}
        try:
            action, content = elicit(ElicitationRequest(params.message, dict(schema), url))
        except Exception as exc:
            return ErrorData(code=INTERNAL_ERROR, message=str(exc))
        if action != "accept" or url:
            content = None
        return ElicitResult(action=cast(Any, action), content=content)  # one of the three

    return callback


def _text_of(blocks: Sequence[Any]) -> str:
    """Content blocks as text: text as it is, other kinds named (``[image: image/png]``)."""
    parts = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        else:
            mime = getattr(block, "mime_type", None) or ""
            parts.append(f"[{kind}{': ' + mime if mime else ''}]")
    return "\n".join(parts)


def _stderr() -> Any:
    """Where a server's stderr goes: this process's real stderr (a captured or redirected
    ``sys.stderr`` may have no file descriptor to give a process), else nowhere."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    if not _DEVNULL:
        _DEVNULL.append(open(os.devnull, "w"))  # noqa: SIM115  # one, for the process's life
    return _DEVNULL[0]


_DEVNULL: list[Any] = []


@asynccontextmanager
async def http_client(
    url: str,
    headers: Mapping[str, str] | None,
    timeout: float | None,
    changed: Callable[[], None],
    faulted: Callable[[str], None],
    session: Callable[[str], None],
    sample: Sample | None,
    elicit: Elicit | None = None,
    refused: Callable[[str], None] | None = None,
) -> AsyncIterator[Client]:
    """A client of a streamable HTTP server at ``url``, sending ``headers`` with each
    request (its HTTP connections closed with it; reads may wait five minutes, as the
    SDK's own client lets a server hold a response stream open); ``session`` is told the
    session id the server gives (its ``Mcp-Session-Id`` header), ``refused`` the status
    of an answer of 400 or more (``"401 Unauthorized"``), which the SDK reports only as
    "Server returned an error response"."""
    limits = httpx2.Timeout(30.0, read=300.0)

    async def note(response: httpx2.Response) -> None:
        given = response.headers.get(SESSION_HEADER)
        if given:
            session(given)
        if response.status_code >= 400 and refused is not None:
            refused(f"{response.status_code} {response.reason_phrase}".strip())

    async with httpx2.AsyncClient(
        headers=dict(headers or {}), timeout=limits, event_hooks={"response": [note]}
    ) as http:
        transport = streamable_http_client(url, http_client=http)
        async with _client(transport, timeout, changed, faulted, sample, elicit) as client:
            yield client


async def watch_tools(client: Client, changed: Callable[[], None]) -> None:
    """Call ``changed`` whenever the server says its tools changed, on a connection of the
    2026-07-28 protocol (a ``subscriptions/listen`` stream); older connections send
    ``notifications/tools/list_changed`` to the client's message handler instead."""
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            async for _ in subscription:
                changed()
    except Exception:  # no listen stream (an older protocol, or the server has none)
        return


def protocol_of(client: Client) -> str:
    """The protocol version the session negotiated ("" when it cannot say)."""
    try:
        return str(client.protocol_version or "")
    except Exception:  # not connected
        return ""


class ToolInfo:
    """A tool a server offers: its name, description and input schema (plain data)."""

    __slots__ = ("description", "input_schema", "name")

    def __init__(self, name: str, description: str, input_schema: Mapping[str, Any]) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema


async def list_tools(client: Client) -> tuple[dict[str, str], list[ToolInfo]]:
    """The server's identity (``name``, ``version``) and every tool it offers (page by
    page)."""
    info = client.server_info
    identity = {"name": info.name if info else "", "version": info.version if info else ""}
    found: list[ToolInfo] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        found.extend(
            ToolInfo(t.name, t.description or "", dict(t.input_schema or {})) for t in page.tools
        )
        cursor = page.next_cursor
        if cursor is None:
            return identity, found


class ToolAnswer:
    """What a tool call came to: the value the model reads (the structured content, the
    text, or both), and whether the server says the tool failed (``is_error``)."""

    __slots__ = ("is_error", "text", "value")

    def __init__(self, value: Any, text: str, is_error: bool) -> None:
        self.value = value
        self.text = text
        self.is_error = is_error


def answer_of(result: Any) -> ToolAnswer:
    """A ``CallToolResult`` as plain data: text parts joined, other parts described; the
    structured content alone when the text only repeats it as JSON. Images, audio and
    embedded binary resources make it a list of text and parts (docs/design/content.md)."""
    text = _text_of(result.content)
    parts = parts_of(result.content, _text_of)
    if parts is not None:
        return ToolAnswer(parts, text, bool(result.is_error))
    structured = result.structured_content
    failed = bool(result.is_error)
    if structured is None:
        return ToolAnswer(text, text, failed)
    if not text or _same_json(text, structured):
        return ToolAnswer(structured, text, failed)
    # A value that is no object, as servers of the official SDK send it: {"result": value}.
    wrapped = isinstance(structured, dict) and set(structured) == {"result"}
    if wrapped and (_same_json(text, structured["result"]) or text == str(structured["result"])):
        return ToolAnswer(structured["result"], text, failed)
    return ToolAnswer({"structured": structured, "text": text}, text, failed)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def http_app(server: SDKServer, host: str) -> Any:
    """The ASGI application serving ``server`` over streamable HTTP at ``/mcp``, bound to
    ``host`` (on a loopback address the SDK answers to local names and origins only)."""
    return server.streamable_http_app(host=host)


Ask = Callable[..., Awaitable[Any]]
"""The served tool's answer: ``ask(message, session, approvals, answers, elicited)``, text
or a ``serving.Waiting`` (duck-typed: ``session``, ``questions``, ``text``)."""

_ROUNDS: Final = "2026-07-28"  # from this protocol version on, input-required rounds


def agent_server(name: str, description: str, ask: Ask) -> SDKServer:
    """An MCP server offering one tool, ``name(message, session, approvals, answers) ->
    answer``, answered by ``ask``. A run that waits for a human asks the client's human
    by elicitation when the client takes it: within the call where the server may send
    requests, else by an ``InputRequiredResult`` the client answers and retries with."""
    server = SDKServer(name=name, instructions=description)

    async def run_agent(
        ctx: Context,
        message: str = "",
        session: str = "",
        approvals: dict[str, bool] | None = None,
        answers: dict[str, dict[str, Any] | None] | None = None,
    ) -> str | list[Any] | InputRequiredResult:
        elicited = _responses(ctx.input_responses)
        if ctx.request_state:  # a retry with the answers: the run it asked for goes on
            message, session, approvals, answers = "", ctx.request_state, None, None
        try:
            result = await ask(message, session, approvals or {}, answers or {}, elicited)
            while not isinstance(result, str | list) and result.questions and _elicits(ctx):
                if (ctx.protocol_version or "") >= _ROUNDS:
                    requests: dict[str, Any] = {
                        key: ElicitRequest(
                            params=ElicitRequestFormParams(message=text, requested_schema=schema)
                        )
                        for key, text, schema in result.questions
                    }
                    return InputRequiredResult(
                        input_requests=requests, request_state=result.session
                    )
                elicited = {}
                for key, text, schema in result.questions:
                    answer = await ctx.request_context.session.elicit_form(
                        text, schema, related_request_id=ctx.request_id
                    )
                    elicited[key] = (str(answer.action), answer.content)
                result = await ask("", result.session, {}, {}, elicited)
        except AgentError as exc:  # the client reads why (an error of ours, not a crash)
            raise ToolError(str(exc)) from None
        if isinstance(result, list):
            return content_blocks(result)
        return result if isinstance(result, str) else str(result.text)

    server.add_tool(
        run_agent,
        name=name,
        description=description + _CONTINUING,
        structured_output=False,
    )
    return server


_CONTINUING: Final = (
    " A run that waits for a human (an approval, a question) answers with its session: "
    "call again with session and approvals {call id: true/false} or answers {call id: {...}}."
)


def content_blocks(answer: list[Any]) -> list[Any]:
    """A served agent's answer — text and parts — as MCP content blocks: text, images and
    audio as themselves, other bytes as embedded resources (``urn:sha256:<hash>``), a part
    known by its URL only as a link to it."""
    blocks: list[Any] = []
    for item in answer:
        if isinstance(item, str):
            blocks.append(TextContent(type="text", text=item))
            continue
        if item.blob is None:
            name = item.name or item.url
            blocks.append(
                ResourceLink(
                    type="resource_link", uri=item.url, name=name, mime_type=item.media_type
                )
            )
            continue
        data = base64.b64encode(item.data()).decode("ascii")
        if isinstance(item, ImagePart):
            blocks.append(ImageContent(type="image", data=data, mime_type=item.media_type))
        elif isinstance(item, AudioPart):
            blocks.append(AudioContent(type="audio", data=data, mime_type=item.media_type))
        else:
            uri = f"urn:sha256:{item.blob.sha256}"
            resource = BlobResourceContents(uri=uri, mime_type=item.media_type, blob=data)
            blocks.append(EmbeddedResource(type="resource", resource=resource))
    return blocks


def _elicits(ctx: Any) -> bool:
    """Whether the client of the call ``ctx`` serves takes form elicitation requests."""
    capabilities = ctx.client_capabilities
    taken = capabilities.elicitation if capabilities is not None else None
    return taken is not None and (taken.form is not None or taken.url is None)


def _responses(responses: Any) -> dict[str, tuple[str, Any]] | None:
    """The client's answers to an ``InputRequiredResult``'s elicitations, by key."""
    if not responses:
        return None
    return {
        key: (str(answer.action), answer.content)
        for key, answer in responses.items()
        if isinstance(answer, ElicitResult)
    }
