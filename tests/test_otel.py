"""OpenTelemetry traces: spans by the GenAI semantic conventions, live
(``OTelListener``) and after the fact (``export``, ``agents export-otel``), checked with
the real OpenTelemetry SDK and its OTLP/HTTP exporter against a receiver on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from helpers import add, echo, explode, initial, make_loop
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes import error_attributes

from agents import (
    AgentLoop,
    AuditLog,
    HookContext,
    HookTrigger,
    Summarization,
    hook,
    subagent_tool,
)
from agents.otel import OTelListener, export
from agents.otel import spans as planned
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, calls, reply

SECRET = "sk-planted-0123456789abcdef"


@pytest.fixture
def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def child_loop() -> AgentLoop:
    return AgentLoop(
        ScriptedDriver([call("add", a=2, b=2), reply("the child's answer")]),
        tools=[add],
        clock=TickingClock(),
        ids=SequentialIds("child-"),
    )


@hook(HookTrigger.BEFORE_TOOL_USE, name="no_echo")
def no_echo(context: HookContext) -> HookContext:
    if context.tool_call is not None and context.tool_call.name == "echo":
        return context.with_tool_blocked("echo is not allowed")
    return context


SCRIPT = (
    calls(call("add", a=1, b=2), call("echo", text="x"), call("explode")),
    call("helper", task="help"),
    reply("done"),
)


def the_loop(**options: Any) -> AgentLoop:
    helper = subagent_tool("helper", "Asks a helper agent.", child_loop)
    return make_loop(*SCRIPT, tools=[add, echo, explode, helper], hooks=[no_echo], **options)


def shown(spans: Iterator[Any] | Any) -> list[tuple[Any, ...]]:
    """What a backend sees of each span, ordered: names, ids, parent, kind, times,
    status and attributes."""
    return sorted(
        (
            span.name,
            span.context.trace_id,
            span.context.span_id,
            span.parent.span_id if span.parent is not None else None,
            span.kind.name,
            span.start_time,
            span.end_time,
            span.status.status_code.name,
            tuple(sorted((k, str(v)) for k, v in span.attributes.items())),
        )
        for span in spans
    )


def by_name(spans: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def test_attribute_names_are_the_semantic_conventions():
    """Every GenAI attribute the spans carry is the conventions' own name."""
    assert planned.OPERATION == gen_ai.GEN_AI_OPERATION_NAME
    assert planned.AGENT_NAME == gen_ai.GEN_AI_AGENT_NAME
    assert planned.AGENT_ID == gen_ai.GEN_AI_AGENT_ID
    assert planned.CONVERSATION == gen_ai.GEN_AI_CONVERSATION_ID
    assert planned.REQUEST_MODEL == gen_ai.GEN_AI_REQUEST_MODEL
    assert planned.RESPONSE_MODEL == gen_ai.GEN_AI_RESPONSE_MODEL
    assert planned.PROVIDER == gen_ai.GEN_AI_PROVIDER_NAME
    assert planned.FINISH_REASONS == gen_ai.GEN_AI_RESPONSE_FINISH_REASONS
    assert planned.INPUT_TOKENS == gen_ai.GEN_AI_USAGE_INPUT_TOKENS
    assert planned.OUTPUT_TOKENS == gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS
    assert planned.TOOL_NAME == gen_ai.GEN_AI_TOOL_NAME
    assert planned.TOOL_CALL_ID == gen_ai.GEN_AI_TOOL_CALL_ID
    assert planned.TOOL_ARGUMENTS == gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS
    assert planned.TOOL_RESULT == gen_ai.GEN_AI_TOOL_CALL_RESULT
    assert planned.INPUT_MESSAGES == gen_ai.GEN_AI_INPUT_MESSAGES
    assert planned.OUTPUT_MESSAGES == gen_ai.GEN_AI_OUTPUT_MESSAGES
    assert planned.ERROR_TYPE == error_attributes.ERROR_TYPE
    operations = gen_ai.GenAiOperationNameValues
    assert {"chat", "execute_tool", "invoke_agent"} <= {member.value for member in operations}


def test_a_run_is_one_agent_span_with_chat_and_tool_spans_inside(traced):
    """``invoke_agent`` the root, a ``chat`` per step and an ``execute_tool`` per call its
    children, the sub-agent's run a child of the call that ran it, failures marked."""
    provider, exporter = traced
    final = the_loop(listeners=[OTelListener(provider, agent_name="planner")]).run(initial())
    spans = by_name(exporter.get_finished_spans())
    (root,) = spans["invoke_agent planner"]
    assert root.parent is None and root.kind.name == "INTERNAL"
    assert root.attributes[gen_ai.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert root.attributes[gen_ai.GEN_AI_AGENT_ID] == final.agent_id
    assert root.attributes[gen_ai.GEN_AI_CONVERSATION_ID] == final.agent_id
    assert root.attributes["agents.stop_reason"] == "completed"
    assert root.attributes["agents.steps"] == 3
    chats = spans["chat"]
    assert len(chats) == 3 + 2  # the parent's three steps, the child's two
    assert {span.kind.name for span in chats} == {"CLIENT"}
    top_chats = [span for span in chats if span.parent.span_id == root.context.span_id]
    assert sorted(span.attributes["agents.step"] for span in top_chats) == [1, 2, 3]
    assert top_chats[0].attributes[gen_ai.GEN_AI_RESPONSE_FINISH_REASONS] in (
        ("tool_calls",),
        ("stop",),
    )
    (blocked,) = spans["execute_tool echo"]
    assert blocked.attributes["agents.tool.blocked"] is True
    (failed,) = spans["execute_tool explode"]
    assert failed.attributes[error_attributes.ERROR_TYPE] == "RuntimeError"
    assert failed.status.status_code.name == "ERROR"
    (helper,) = spans["execute_tool helper"]
    (child,) = spans["invoke_agent helper"]
    assert child.parent.span_id == helper.context.span_id
    child_tool = next(
        s for s in spans["execute_tool add"] if s.parent.span_id == child.context.span_id
    )
    assert child_tool.attributes[gen_ai.GEN_AI_TOOL_NAME] == "add"
    assert {span.context.trace_id for span in exporter.get_finished_spans()} == {
        root.context.trace_id
    }


def test_live_and_after_the_fact_give_the_same_spans_and_ids(traced, tmp_path):
    """The listener's spans, ``export`` of the final state and of its audit log: the same
    names, trace and span ids, parents, times and attributes (a backend keeps one)."""
    provider, exporter = traced
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        final = the_loop(listeners=[OTelListener(provider), log]).run(initial())
    live = shown(exporter.get_finished_spans())
    exporter.clear()
    assert export(final, provider) == len(live)
    assert shown(exporter.get_finished_spans()) == live
    exporter.clear()
    export(tmp_path / "run.jsonl", provider)
    assert shown(exporter.get_finished_spans()) == live


def test_spans_carry_the_recorded_times(traced):
    """A run from last year shows as it happened: the recorded start and end of the run,
    of each step's call and of each tool execution, in nanoseconds."""
    provider, exporter = traced
    final = make_loop(call("add", a=1, b=2), reply("3"), tools=[add]).run(initial())
    export(final, provider)
    spans = by_name(exporter.get_finished_spans())

    def ns(moment: datetime) -> int:
        return round(moment.timestamp() * 1_000_000) * 1_000

    (root,) = spans["invoke_agent agent"]
    assert (root.start_time, root.end_time) == (
        ns(final.execution.started_at),
        ns(final.execution.completed_at),
    )
    (tool_span,) = spans["execute_tool add"]
    execution = final.tool_executions[0]
    assert (tool_span.start_time, tool_span.end_time) == (
        ns(execution.started_at),
        ns(execution.completed_at),
    )
    assert final.created_at is not None and final.created_at.year == 2025


def test_contents_only_when_asked_and_never_secrets(traced, monkeypatch):
    """Without ``capture_content`` no message or tool content; with it, contents — the
    secret under a secret key, the environment's secret and a key-shaped word redacted,
    in nested agents' spans and error texts too."""
    provider, exporter = traced
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-env-secret-987654")

    def child() -> AgentLoop:
        return make_loop(reply(f"child saw {SECRET} and tok-env-secret-987654"), tools=[])

    helper = subagent_tool("helper", "Asks a helper agent.", child)
    script = [
        calls(call("echo", text="tok-env-secret-987654"), call("helper", task="x")),
        call("explode", reason=f"leaked {SECRET}"),
        reply("done"),
    ]
    final = make_loop(*script, tools=[echo, explode, helper]).run(initial())
    export(final, provider)
    plain = exporter.get_finished_spans()
    assert not any(
        key in span.attributes
        for span in plain
        for key in (gen_ai.GEN_AI_INPUT_MESSAGES, gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS)
    )
    exporter.clear()
    export(final, provider, capture_content=True)
    spans = exporter.get_finished_spans()
    everything = repr([(s.name, dict(s.attributes), s.status.description) for s in spans])
    assert gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS in everything
    assert "child saw" in everything  # the nested agent's content is there...
    assert SECRET not in everything  # ...but no secret, anywhere
    assert "tok-env-secret-987654" not in everything
    assert "[redacted]" in everything


def test_a_compaction_summary_is_a_chat_span(traced):
    """A summary written by the model before a step is a ``chat`` span of that step."""
    provider, exporter = traced
    from agents.core.compaction import DEFAULT_SUMMARY_PROMPT
    from agents.testing import FunctionDriver

    scripted = ScriptedDriver([call("echo", text="word " * 40) for _ in range(4)] + [reply("ok")])

    def model(request: Any) -> Any:
        if request.messages[0].content == DEFAULT_SUMMARY_PROMPT:
            return "a summary"
        return scripted.infer(request)

    loop = AgentLoop(
        FunctionDriver(model),
        tools=[echo],
        compaction=Summarization(120, 60),
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    final = loop.run(initial())
    export(final, provider)
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    summaries = sum(
        1 for se in final.step_executions if se.step.compaction and se.step.compaction.summarizing
    )
    assert len(chats) == final.step_count + summaries > final.step_count


# -- OTLP over HTTP ------------------------------------------------------------------------------


class Receiver:
    """A collector's OTLP/HTTP endpoint on 127.0.0.1 that decodes what it receives."""

    def __init__(self) -> None:
        received: list[ExportTraceServiceRequest] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                message = ExportTraceServiceRequest()
                message.ParseFromString(body)
                received.append(message)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.received
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


ENDPOINT_PASSWORD = "planted-endpoint-password-4545"
ENDPOINT_KEY = "planted-endpoint-key-6767"


def with_credentials(url: str) -> str:
    """``url`` with a user's password and a key in its query (a collector behind both)."""
    return f"{url.replace('://', f'://user:{ENDPOINT_PASSWORD}@')}?sig={ENDPOINT_KEY}"


def test_export_otel_sends_a_recorded_run_over_otlp_http(traced, receiver, tmp_path):
    """``agents export-otel FILE --endpoint URL``: the real OTLP/HTTP exporter sends the
    spans, the receiver decodes the protobuf; the same spans as ``export`` gives. The
    command says where it sent them without the endpoint's credentials (it printed them)."""
    provider, exporter = traced
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        final = the_loop(listeners=[log]).run(initial())
    export(final, provider)
    expected = {(s.name, s.context.span_id, s.start_time) for s in exporter.get_finished_spans()}
    endpoint = with_credentials(receiver.url)
    done = subprocess.run(
        [sys.executable, "-m", "agents", "export-otel", "run.jsonl", "--endpoint", endpoint],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr
    shown = receiver.url.replace("://", "://user:[redacted]@")
    assert done.stdout.endswith(f"sent {len(expected)} spans to {shown}\n")
    assert ENDPOINT_PASSWORD not in done.stdout + done.stderr
    assert ENDPOINT_KEY not in done.stdout + done.stderr
    sent = {
        (span.name, int.from_bytes(span.span_id, "big"), span.start_time_unix_nano)
        for span in receiver.spans()
    }
    assert sent == expected
    services = {
        attribute.value.string_value
        for request in receiver.received
        for resource in request.resource_spans
        for attribute in resource.resource.attributes
        if attribute.key == "service.name"
    }
    assert services == {"agents"}


def test_a_live_listener_sends_through_the_batch_processor(receiver):
    """``OTelListener`` with ``otlp_provider``: the SDK's batch processor sends the spans
    when the provider is shut down."""
    from agents.otel import otlp_provider

    provider = otlp_provider(receiver.url)
    the_loop(listeners=[OTelListener(provider)]).run(initial())
    provider.shutdown()
    names = sorted(span.name for span in receiver.spans())
    assert names.count("invoke_agent agent") == 1
    assert "execute_tool helper" in names


def test_export_otel_bad_input_and_no_collector_are_one_line(tmp_path, receiver):
    """A file that is no run, and a collector that is not there: exit 2, one line."""
    (tmp_path / "junk.jsonl").write_text("not a run\n")
    junk = subprocess.run(
        [sys.executable, "-m", "agents", "export-otel", "junk.jsonl", "--endpoint", receiver.url],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert junk.returncode == 2 and junk.stderr.count("\n") == 1
    final = make_loop(reply("hi"), tools=[]).run(initial())
    (tmp_path / "run.json").write_text(final.to_json())
    nobody = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents",
            "export-otel",
            "run.json",
            "--endpoint",
            with_credentials("http://127.0.0.1:9/v1/traces"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert nobody.returncode == 2, nobody.stderr
    assert nobody.stderr.strip().count("\n") == 0 and "Traceback" not in nobody.stderr
    assert "the collector at http://user:[redacted]@127.0.0.1:9/v1/traces did" in nobody.stderr
    assert ENDPOINT_PASSWORD not in nobody.stderr and ENDPOINT_KEY not in nobody.stderr


def test_import_agents_does_not_import_opentelemetry():
    """Nothing but ``agents.otel`` imports OpenTelemetry."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, agents; print('opentelemetry' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_an_mcp_call_is_a_client_span_whose_context_reaches_the_server(traced):
    """An MCP call: a ``tools/call {tool}`` client span inside its ``execute_tool`` span,
    and the server received that span's trace context in the request's ``_meta``."""
    from mcp_servers import FAILING
    from opentelemetry.semconv._incubating.attributes import mcp_attributes

    from agents.mcp import MCPServerStdio

    provider, exporter = traced
    server = MCPServerStdio(sys.executable, [FAILING])
    loop = make_loop(call("traceparent"), reply("ok"), tools=[server])
    final = loop.with_listeners(OTelListener(provider)).run(initial())
    spans = by_name(exporter.get_finished_spans())
    (tool_span,) = spans["execute_tool traceparent"]
    (client,) = spans["tools/call traceparent"]
    assert client.kind.name == "CLIENT" and client.parent.span_id == tool_span.context.span_id
    assert client.attributes[mcp_attributes.MCP_METHOD_NAME] == "tools/call"
    assert client.attributes[mcp_attributes.MCP_PROTOCOL_VERSION]
    assert planned.MCP_METHOD == mcp_attributes.MCP_METHOD_NAME
    received = final.tool_executions[0].value
    assert received == (f"00-{client.context.trace_id:032x}-{client.context.span_id:016x}-01")


def test_lone_surrogates_reach_the_collector_as_replacement_characters(receiver):
    """A lone surrogate (a file name read with ``surrogateescape``, a model's odd tool call
    id) in a call's id, its arguments, a tool's name or the answer: OTLP's protobuf holds
    only UTF-8, and the exporter refused the whole batch — every span of it lost, other
    runs' too. Each such character is sent as U+FFFD; the ids derive as before."""
    from agents.otel import otlp_provider

    provider = otlp_provider(receiver.url)
    odd = "file-\udcff.txt"
    loop = make_loop(
        call("echo", id="call-\ud800", text=odd),
        call("missing\udc80", text="x"),
        reply(f"read {odd}"),
        tools=[echo],
        listeners=[OTelListener(provider, capture_content=True)],
    )
    final = loop.run(initial())
    assert final.final_response == f"read {odd}"
    provider.shutdown()
    spans = receiver.spans()
    names = sorted(span.name for span in spans)
    assert names.count("invoke_agent agent") == 1
    assert "execute_tool echo" in names and "execute_tool missing\ufffd" in names
    echo_span = next(span for span in spans if span.name == "execute_tool echo")
    values = {
        attribute.key: attribute.value.string_value
        for attribute in echo_span.attributes
        if attribute.value.HasField("string_value")
    }
    assert "file-\ufffd.txt" in values[gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS]
    assert values[gen_ai.GEN_AI_TOOL_CALL_ID] == "call-\ufffd"


def test_export_otel_says_why_the_collector_did_not_take_the_spans(tmp_path):
    """``agents export-otel`` fails at once, in one line, naming the cause: nothing
    listening (connection refused), an HTTP status, or no answer within ``--timeout``."""
    import socket
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    with AuditLog.open(tmp_path / "run.jsonl") as log:
        the_loop(listeners=[log]).run(initial())

    def command(endpoint: str, *more: str) -> tuple[subprocess.CompletedProcess[str], float]:
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agents",
                "export-otel",
                "run.jsonl",
                "--endpoint",
                endpoint,
                *more,
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        return done, time.monotonic() - started

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    refused, _ = command(f"http://127.0.0.1:{port}/v1/traces")
    assert refused.returncode == 2 and "connection refused" in refused.stderr
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr

    class Unavailable(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(503)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        refused, _ = command(f"http://127.0.0.1:{server.server_address[1]}/v1/traces")
    finally:
        server.shutdown()
        server.server_close()
    assert refused.returncode == 2 and "answered HTTP 503" in refused.stderr

    with socket.socket() as silent:  # takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/v1/traces"
        waited, took = command(endpoint, "--timeout", "1")
    assert waited.returncode == 2 and "no answer within 1 s" in waited.stderr
    assert took < 8  # the command's own start included
    bad, _ = command(endpoint, "--timeout", "nan")
    assert bad.returncode == 2 and "not a positive number of seconds" in bad.stderr


def test_chat_spans_take_the_request_model_when_the_driver_reports_none(traced, tmp_path):
    """A ``FunctionDriver`` whose answers name no model, run with ``llm_config={"model":
    "openai/gpt-x"}``: the chat span is ``chat openai/gpt-x``, with the request model and
    the provider (no response model: none was reported), live, exported from the state and
    from the audit log alike; each ``execute_tool`` span names the agent."""
    from agents import ToolCall
    from agents.testing import FunctionDriver

    provider, exporter = traced
    answers = iter([[ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})], "3"])
    driver = FunctionDriver(lambda request: next(answers))
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        loop = make_loop(tools=[add], listeners=[OTelListener(provider, agent_name="adder"), log])
        final = loop.with_driver(driver).run(initial().with_llm_config(model="openai/gpt-x"))
    live = exporter.get_finished_spans()
    exporter.clear()
    export(final, provider, agent_name="adder")
    from_state = exporter.get_finished_spans()
    exporter.clear()
    export(tmp_path / "run.jsonl", provider, agent_name="adder")
    from_log = exporter.get_finished_spans()
    assert shown(live) == shown(from_state) == shown(from_log)
    chats = by_name(live)["chat openai/gpt-x"]
    assert len(chats) == 2
    for chat in chats:
        assert chat.attributes[gen_ai.GEN_AI_REQUEST_MODEL] == "openai/gpt-x"
        assert chat.attributes[gen_ai.GEN_AI_PROVIDER_NAME] == "openai"
        assert gen_ai.GEN_AI_RESPONSE_MODEL not in chat.attributes
    (tool_span,) = by_name(live)["execute_tool add"]
    assert tool_span.attributes[gen_ai.GEN_AI_AGENT_NAME] == "adder"


def test_captured_content_holds_parts_as_references_never_bytes(traced):
    """An image in the conversation and one a tool gave back: with ``capture_content``,
    spans hold their media type, hash and size, never their bytes."""
    import base64

    from agents import AgentState, ImagePart, tool

    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    image = ImagePart.from_bytes(png, "image/png")

    @tool
    def screenshot() -> bytes:
        """Take a screenshot."""
        return png

    provider, exporter = traced
    loop = make_loop(call("screenshot"), reply("seen"), tools=[screenshot])
    final = loop.run(AgentState.initial("s", messages=[["look", image]]))
    export(final, provider, capture_content=True)
    everything = repr([dict(s.attributes) for s in exporter.get_finished_spans()])
    assert everything.count(image.blob.sha256) >= 2  # the question, and the tool's result
    assert base64.b64encode(png).decode()[:24] not in everything


def test_a_signed_urls_signature_is_not_captured(traced):
    """A part by a signed URL (S3's): ``capture_content`` exported its signature and
    credential, with which anyone holding the span could fetch the image."""
    from agents import AgentState, ImagePart

    signed = (
        "https://b.s3.amazonaws.com/x.png?X-Amz-Credential=AKIAPLANTEDCREDENTIAL"
        "&X-Amz-Signature=planted0signature0fe5f80f77d5fa3&X-Amz-Expires=60"
    )
    image = ImagePart.from_url(signed)
    provider, exporter = traced
    final = make_loop(reply("seen")).run(AgentState.initial("s", messages=[["look", image]]))
    assert final.messages[0].parts[1].url == signed  # the state keeps what the model is sent
    export(final, provider, capture_content=True)
    everything = repr([dict(s.attributes) for s in exporter.get_finished_spans()])
    assert "b.s3.amazonaws.com/x.png" in everything and "X-Amz-Expires=60" in everything
    assert "planted0signature" not in everything and "PLANTEDCREDENTIAL" not in everything
