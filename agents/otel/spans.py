"""A run as OpenTelemetry spans, planned from its records (no OpenTelemetry import here).

Spans follow the OpenTelemetry GenAI semantic conventions: one ``invoke_agent {name}`` span
per run, a ``chat {model}`` span per inference (a compaction's summary is one too), an
``execute_tool {tool}`` span per tool call, a sub-agent's run a child of the tool call that
ran it. Times are the recorded ones; trace and span ids are derived from the run's ids and
step numbers, so a run traced live and exported later from its record gives the same
spans, and a backend that receives both keeps one.

Message and tool contents are attributes only with ``capture_content``; every text
attribute goes through one redaction policy (secret keys in maps, key-shaped words,
``Bearer`` credentials, the environment's secrets), nested agents' spans and error texts
included.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from agents.records.codec import encode_value
from agents.records.redaction import environment_secrets, scrub
from agents.records.state import AgentState
from agents.records.step import StepExecution, ToolExecution

__all__ = [
    "SpanPlan",
    "mcp_traceparent",
    "plan_run",
    "plan_run_span",
    "plan_step",
    "run_prefix",
    "trace_id_of",
]

# Attribute names, from the GenAI semantic conventions (checked in the tests against the
# opentelemetry-semantic-conventions package's constants).
OPERATION: Final = "gen_ai.operation.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
CONVERSATION: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
PROVIDER: Final = "gen_ai.provider.name"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
ERROR_TYPE: Final = "error.type"
MCP_METHOD: Final = "mcp.method.name"
MCP_PROTOCOL: Final = "mcp.protocol.version"
MCP_SESSION: Final = "mcp.session.id"
NETWORK_TRANSPORT: Final = "network.transport"
SOURCES_KEY: Final = "agents.tool_sources"  # where a state records its MCP servers
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@attrs.frozen(kw_only=True)
class SpanPlan:
    """One span to emit: its name, kind (``"internal"`` or ``"client"``), ids (128-bit
    trace, 64-bit span and parent), times (ns since the epoch), attributes, and the
    error's description when it failed."""

    name: str
    kind: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start: int
    end: int
    attributes: Mapping[str, Any]
    error: str | None = None


def _id(text: str, bits: int) -> int:
    """A non-zero id of ``bits`` bits derived from ``text`` (the same text, the same id)."""
    raw = text.encode("utf-8", "surrogatepass")  # an odd tool call id's lone surrogate too
    digest = int.from_bytes(hashlib.sha256(raw).digest()[: bits // 8], "big")
    return digest or 1


def run_prefix(state: AgentState) -> str:
    """What a top-level run's span ids are derived from: its execution's id."""
    execution = state.execution
    return f"agents/{state.agent_id}/{execution.execution_id if execution else ''}"


def trace_id_of(prefix: str) -> int:
    """The trace id of the run whose ids derive from ``prefix``."""
    return _id(f"{prefix}/trace", 128)


def _ns(moment: datetime | None) -> int:
    """Nanoseconds since the epoch, exactly (a float's timestamp() would round)."""
    if moment is None:
        return 0
    since = moment - _EPOCH
    return (since.days * 86_400 + since.seconds) * 1_000_000_000 + since.microseconds * 1_000


class _Texts:
    """The one redaction policy for every text attribute of a run's spans."""

    def __init__(self, capture: bool) -> None:
        self.capture = capture
        self._secrets: tuple[str, ...] | None = None  # read when a text is first written

    def text(self, value: str) -> str:
        if self._secrets is None:
            self._secrets = environment_secrets(os.environ)
        return scrub(value, self._secrets)

    def json(self, value: Any) -> str:
        """A value as JSON text (secret keys redacted by the codec), scrubbed."""
        data = encode_value(value)
        return self.text(json.dumps(data, ensure_ascii=False, sort_keys=True, default=str))


@attrs.frozen(kw_only=True)
class _Run:
    """What the spans of one run share: the trace, the id prefix, the parent span (the
    tool call that ran a sub-agent), the agent's name and the conversation."""

    trace_id: int
    prefix: str
    parent_id: int | None
    agent_name: str
    conversation: str
    mcp: Mapping[str, Mapping[str, Any]]  # tool name -> the MCP server that offered it
    span_id: int = 0  # the run's own span (invoke_agent): the parent of its steps' spans
    # The model each step's request asked for (its number -> the name), where the response
    # names none: the request's, recorded, or the state's llm_config.
    request_model: Callable[[int], str | None] = attrs.field(default=lambda _: None, eq=False)


def plan_run(
    state: AgentState,
    *,
    agent_name: str = "agent",
    conversation_id: str | None = None,
    capture_content: bool = False,
    prefix: str | None = None,
    trace_id: int | None = None,
    parent_id: int | None = None,
    request_model: Callable[[int], str | None] | None = None,
) -> list[SpanPlan]:
    """Every span of ``state``'s execution (its steps', its sub-agents', and the run's own
    ``invoke_agent`` span last), as ``plan_step`` and ``run_span`` plan them.
    ``request_model(step)``: the model that step's request asked for (an audit log records
    it), when the state's ``llm_config`` does not say."""
    texts = _Texts(capture_content)
    run = _run_of(state, agent_name, conversation_id, prefix, trace_id, parent_id, request_model)
    spans: list[SpanPlan] = []
    for step_execution in state.step_executions:
        spans.extend(_step_spans(run, step_execution, texts))
    spans.append(_run_span(run, state, texts))
    return spans


def plan_step(
    state: AgentState,
    step_execution: StepExecution,
    *,
    agent_name: str = "agent",
    conversation_id: str | None = None,
    capture_content: bool = False,
    run: _Run | None = None,
    request_model: str | None = None,
) -> list[SpanPlan]:
    """The spans of one step of a top-level run (what a live listener emits as the step
    completes): the same as ``plan_run`` plans for that step. ``run``: what
    ``run_of(state, ...)`` gave for an earlier step of the same run (a listener keeps it).
    ``request_model``: the model the step's request asked for."""
    if run is None:
        run = run_of(state, agent_name, conversation_id)
    return list(_step_spans(run, step_execution, _Texts(capture_content), request_model))


def run_of(state: AgentState, agent_name: str, conversation_id: str | None) -> _Run:
    """What the spans of a top-level run share, for ``plan_step(run=)``: it stays the same
    while the run's ids and its record of MCP servers (``SOURCES_KEY``) do."""
    return _run_of(state, agent_name, conversation_id, None, None, None)


def plan_run_span(
    state: AgentState,
    *,
    agent_name: str = "agent",
    conversation_id: str | None = None,
    capture_content: bool = False,
) -> SpanPlan:
    """The ``invoke_agent`` span of a finished top-level run."""
    run = _run_of(state, agent_name, conversation_id, None, None, None)
    return _run_span(run, state, _Texts(capture_content))


def _run_of(
    state: AgentState,
    agent_name: str,
    conversation_id: str | None,
    prefix: str | None,
    trace_id: int | None,
    parent_id: int | None,
    request_model: Callable[[int], str | None] | None = None,
) -> _Run:
    prefix = prefix or run_prefix(state)
    configured = state.llm_config.get("model")
    default = configured if isinstance(configured, str) and configured else None

    def models(step: int) -> str | None:
        return (request_model(step) if request_model is not None else None) or default

    return _Run(
        request_model=models,
        trace_id=trace_id if trace_id is not None else trace_id_of(prefix),
        prefix=prefix,
        parent_id=parent_id,
        agent_name=agent_name,
        conversation=conversation_id or state.agent_id or "",
        mcp=_mcp_tools(state),
        span_id=_id(f"{prefix}/run", 64),
    )


def _mcp_tools(state: AgentState) -> dict[str, Mapping[str, Any]]:
    """The MCP server (as the state records it) of each tool an MCP server offered."""
    found: dict[str, Mapping[str, Any]] = {}
    for server in state.metadata.get(SOURCES_KEY) or ():
        if isinstance(server, Mapping):
            for offered in server.get("tools") or ():
                if isinstance(offered, Mapping) and isinstance(offered.get("name"), str):
                    found[offered["name"]] = server
    return found


def mcp_traceparent(state: AgentState, step: int, call_id: str) -> str | None:
    """The W3C ``traceparent`` of an MCP call's ``tools/call`` span, as ``plan_run``
    plans it, for the call's ``_meta`` (the server's spans join the run's trace); ``None``
    in a sub-agent's run, whose ids its parent's run derives."""
    from agents.shell.subagents import DEPTH_KEY

    if DEPTH_KEY in state.metadata:
        return None
    prefix = run_prefix(state)
    span = _id(f"{prefix}/step/{step}/tool/{call_id}/mcp", 64)
    return f"00-{trace_id_of(prefix):032x}-{span:016x}-01"


def _run_span(run: _Run, state: AgentState, texts: _Texts) -> SpanPlan:
    execution = state.execution
    usage = state.usage
    attributes: dict[str, Any] = {
        OPERATION: "invoke_agent",
        AGENT_NAME: run.agent_name,
        AGENT_ID: state.agent_id,
        CONVERSATION: run.conversation,
        INPUT_TOKENS: usage.input_tokens,
        OUTPUT_TOKENS: usage.output_tokens,
        "agents.steps": state.step_count,
    }
    if state.status is not None:
        attributes["agents.status"] = state.status.value
    if state.stop_reason is not None:
        attributes["agents.stop_reason"] = state.stop_reason.value
    error = execution.error if execution is not None else None
    if error is not None:
        attributes[ERROR_TYPE] = error.type
    if texts.capture and state.final_response:
        attributes[OUTPUT_MESSAGES] = texts.text(state.final_response)
    return SpanPlan(
        name=f"invoke_agent {run.agent_name}",
        kind="internal",
        trace_id=run.trace_id,
        span_id=run.span_id,
        parent_id=run.parent_id,
        start=_ns(execution.started_at if execution else state.created_at),
        end=_ns(execution.completed_at if execution else state.updated_at),
        attributes=attributes,
        error=texts.text(error.describe()) if error is not None else None,
    )


def _step_spans(
    run: _Run, step_execution: StepExecution, texts: _Texts, asked: str | None = None
) -> Iterator[SpanPlan]:
    """A step's spans: its model call's (``asked``: the model its request asked for, when
    known here), a summary's, its tool calls'."""
    number, step = step_execution.number, step_execution.step
    run_span = run.span_id
    start = _ns(step_execution.started_at)
    executions = step.tool_executions
    starts = [_ns(e.started_at) for e in executions]
    end = min(starts) if starts else _ns(step_execution.completed_at)
    compaction = step.compaction
    if compaction is not None and compaction.summarizing:
        yield _chat(run, f"{number}/compaction", compaction, start, start, texts, number)
    yield _chat(run, f"{number}/chat", step, start, end, texts, number, asked)
    for execution, began in zip(executions, starts, strict=True):
        yield from _tool_spans(run, number, execution, texts, run_span, began)


def _chat(
    run: _Run,
    key: str,
    made: Any,
    start: int,
    end: int,
    texts: _Texts,
    number: int,
    asked: str | None = None,
) -> SpanPlan:
    """A model call's span: a step's (``made`` an ``AgentStep``) or a summary's (a
    ``Compaction``)."""
    response = made.response
    request = getattr(made, "request", None)  # a summary's request
    answered = response.model if response is not None else None
    if request is not None:
        asked = request.model
    elif asked is None:
        asked = run.request_model(number)
    model = asked or answered
    attributes: dict[str, Any] = {OPERATION: "chat", AGENT_NAME: run.agent_name}
    attributes["agents.step"] = number
    if model:
        attributes[REQUEST_MODEL] = model
        provider = model.split("/", 1)[0] if "/" in model else None
        if provider:
            attributes[PROVIDER] = provider
    if answered:
        attributes[RESPONSE_MODEL] = answered
    if response is not None:
        attributes[FINISH_REASONS] = (response.finish_reason,)
        attributes[INPUT_TOKENS] = response.usage.input_tokens
        attributes[OUTPUT_TOKENS] = response.usage.output_tokens
    errors = list(getattr(made, "errors", ())) or (
        [made.error] if getattr(made, "error", None) else []
    )
    failed = errors[0] if response is None and errors else None
    if failed is not None:
        attributes[ERROR_TYPE] = failed.type
    if texts.capture:
        messages = made.input_messages if hasattr(made, "input_messages") else made.summarized
        attributes[INPUT_MESSAGES] = texts.json(list(messages))
        if response is not None:
            attributes[OUTPUT_MESSAGES] = texts.json(response.to_message())
    return SpanPlan(
        name=f"chat {model}" if model else "chat",
        kind="client",
        trace_id=run.trace_id,
        span_id=_id(f"{run.prefix}/step/{key}", 64),
        parent_id=run.span_id,
        start=start,
        end=end,
        attributes=attributes,
        error=texts.text(failed.describe()) if failed is not None else None,
    )


def _mcp_span(
    run: _Run,
    key: str,
    parent: int,
    name: str,
    server: Mapping[str, Any],
    execution: ToolExecution,
    texts: _Texts,
) -> SpanPlan:
    attributes: dict[str, Any] = {
        MCP_METHOD: "tools/call",
        OPERATION: "execute_tool",
        TOOL_NAME: name,
        TOOL_CALL_ID: execution.tool_call.id,
    }
    protocol = server.get("protocol")
    if isinstance(protocol, str) and protocol:
        attributes[MCP_PROTOCOL] = protocol
    session = server.get("session")
    if isinstance(session, str) and session:
        attributes[MCP_SESSION] = session
    transport = server.get("transport")
    if transport in ("stdio", "http"):
        attributes[NETWORK_TRANSPORT] = "pipe" if transport == "stdio" else "tcp"
    error = execution.error
    if error is not None:
        attributes[ERROR_TYPE] = error.type
    return SpanPlan(
        name=f"tools/call {name}",
        kind="client",
        trace_id=run.trace_id,
        span_id=_id(f"{key}/mcp", 64),
        parent_id=parent,
        start=_ns(execution.started_at),
        end=_ns(execution.completed_at),
        attributes=attributes,
        error=texts.text(error.describe()) if error is not None else None,
    )


def _tool_spans(
    run: _Run,
    number: int,
    execution: ToolExecution,
    texts: _Texts,
    parent: int,
    began: int | None = None,
) -> Iterator[SpanPlan]:
    call = execution.tool_call
    key = f"{run.prefix}/step/{number}/tool/{call.id}"
    span_id = _id(key, 64)
    attributes: dict[str, Any] = {
        OPERATION: "execute_tool",
        AGENT_NAME: run.agent_name,
        TOOL_NAME: call.name,
        TOOL_CALL_ID: call.id,
        "agents.step": number,
    }
    if execution.blocked:
        attributes["agents.tool.blocked"] = True
    error = execution.error
    if error is not None:
        attributes[ERROR_TYPE] = error.type
    if texts.capture:
        attributes[TOOL_ARGUMENTS] = texts.json(call.arguments)
        if error is None:
            result = execution.content or execution.value  # parts: references, never bytes
            attributes[TOOL_RESULT] = texts.json(result)
    yield SpanPlan(
        name=f"execute_tool {call.name}",
        kind="internal",
        trace_id=run.trace_id,
        span_id=span_id,
        parent_id=parent,
        start=_ns(execution.started_at) if began is None else began,
        end=_ns(execution.completed_at),
        attributes=attributes,
        error=texts.text(error.describe()) if error is not None and not execution.blocked else None,
    )
    server = run.mcp.get(call.name)
    if server is not None:  # the MCP request the call made: a client span inside it
        yield _mcp_span(run, key, span_id, call.name, server, execution, texts)
    child = execution.child
    if isinstance(child, AgentState):  # a sub-agent's run: a child of this call's span
        yield from plan_run(
            child,
            agent_name=call.name,
            conversation_id=run.conversation,
            capture_content=texts.capture,
            prefix=key,
            trace_id=run.trace_id,
            parent_id=span_id,
        )
