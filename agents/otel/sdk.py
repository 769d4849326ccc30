"""Spans through OpenTelemetry (the only module importing it): live from a loop's events
(``OTelListener``), or after the fact from a recorded run (``export``).

Both emit what ``agents.otel.spans`` plans from the run's records, with the recorded times
and ids derived from the run: a step's spans when it completes, the run's ``invoke_agent``
span when it ends (a suspended run's when it ends after its resumptions). A tracer of the
OpenTelemetry SDK takes the planned ids (its id generator is wrapped to hand them out); any
other tracer gives its own.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agents.errors import ResourceError
from agents.otel.spans import (
    SOURCES_KEY,
    SpanPlan,
    plan_run,
    plan_run_span,
    plan_step,
    run_of,
)
from agents.records.events import Event, ExecutionCompleted, StepCompleted
from agents.records.execution import ExecutionStatus
from agents.records.json_text import replace_lone_surrogates
from agents.records.redaction import shown_url
from agents.records.state import AgentState
from agents.shell.subagents import DEPTH_KEY

__all__ = ["OTelListener", "PlannedIds", "emit", "export", "otlp_provider", "send_otlp"]

SCOPE: Final = "agents"
_KINDS: Final = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
_PLANNED: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "agents_otel_planned", default=None
)


class PlannedIds:
    """An SDK id generator that hands out the ids a span plan chose, while ``emit`` starts
    that span, and asks ``fallback`` (the provider's own) for every other span."""

    def __init__(self, fallback: Any) -> None:
        self.fallback = fallback

    def generate_trace_id(self) -> int:
        planned = _PLANNED.get()
        return planned[0] if planned is not None else int(self.fallback.generate_trace_id())

    def generate_span_id(self) -> int:
        planned = _PLANNED.get()
        return planned[1] if planned is not None else int(self.fallback.generate_span_id())

    def is_trace_id_random(self) -> bool:
        """Planned trace ids are derived from the run's, not drawn at random."""
        if _PLANNED.get() is not None:
            return False
        check = getattr(self.fallback, "is_trace_id_random", None)
        return bool(check()) if check is not None else False

    def __getattr__(self, name: str) -> Any:  # whatever else a newer SDK asks of it
        return getattr(self.fallback, name)


_WRAPPED = threading.Lock()


def _tracer(provider: Any) -> Any:
    """This library's tracer from ``provider`` (the global one for ``None``), its SDK id
    generator wrapped once so that planned ids are used."""
    tracer: Any = (provider or trace.get_tracer_provider()).get_tracer(SCOPE)
    with _WRAPPED:
        generator = getattr(tracer, "id_generator", None)
        if generator is not None and not isinstance(generator, PlannedIds):
            tracer.id_generator = PlannedIds(generator)
    return tracer


_SAMPLED: Final = TraceFlags(TraceFlags.SAMPLED)


def emit(
    tracer: Any, plans: Iterable[SpanPlan], parents: dict[tuple[int, int], Any] | None = None
) -> None:
    """Start and end each planned span with its ids, parent, times and attributes.
    ``parents``: the parent contexts made so far (a listener keeps them for a run: its
    steps' spans share one parent, the run's span)."""
    if parents is None:
        parents = {}
    start_span, planned = tracer.start_span, _PLANNED
    for plan in plans:
        parent = None
        trace_id = plan.trace_id
        if plan.parent_id is not None:
            key = (trace_id, plan.parent_id)
            parent = parents.get(key)
            if parent is None:
                context = SpanContext(*key, is_remote=False, trace_flags=_SAMPLED)
                parent = parents[key] = trace.set_span_in_context(trace.NonRecordingSpan(context))
        token = planned.set((trace_id, plan.span_id))
        try:
            span = start_span(
                _unicode(plan.name),
                context=parent,
                kind=_KINDS[plan.kind],
                attributes=_attributes(plan.attributes),
                start_time=plan.start,
            )
        finally:
            planned.reset(token)
        if plan.error is not None:
            span.set_status(Status(StatusCode.ERROR, _unicode(plan.error)))
        span.end(end_time=plan.end)


# OTLP's protobuf holds UTF-8 only: a text with a lone surrogate (a file name read with
# ``surrogateescape``, a model's odd tool call id) made the exporter refuse the whole batch
# of spans it was in. Such characters go as U+FFFD, the replacement character
# (``replace_lone_surrogates`` gives back the very text when it holds none).
_unicode: Final = replace_lone_surrogates


def _attributes(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attributes`` with the lone surrogates of their texts replaced: the same mapping
    when there is none (the common case, all ASCII, costs one look at each text)."""
    for value in attributes.values():
        kind = type(value)
        if (kind is str and not value.isascii()) or (
            kind is tuple and not all(type(v) is not str or v.isascii() for v in value)
        ):
            break
    else:
        return attributes
    fixed: dict[str, Any] | None = None
    for name, value in attributes.items():
        if type(value) is str:
            clean: Any = _unicode(value)
        elif type(value) is tuple:
            clean = tuple(_unicode(v) if type(v) is str else v for v in value)
            if all(a is b for a, b in zip(clean, value, strict=True)):
                clean = value
        else:
            continue
        if clean is not value:
            fixed = dict(attributes) if fixed is None else fixed
            fixed[name] = clean
    return attributes if fixed is None else fixed


class OTelListener:
    """A listener (``AgentLoop(listeners=[OTelListener()])``) tracing runs as they go: a
    step's spans when it completes, the run's when it ends. ``tracer_provider``: ``None``
    for the global one. ``capture_content``: message and tool contents as attributes
    (redacted, like everything else). ``agent_name`` names the ``invoke_agent`` span;
    ``conversation_id`` (a session's id) groups runs, else each run's agent id does."""

    event_types: Final = frozenset({StepCompleted, ExecutionCompleted})

    def __init__(
        self,
        tracer_provider: Any = None,
        capture_content: bool = False,
        *,
        agent_name: str = "agent",
        conversation_id: str | None = None,
    ) -> None:
        self._tracer = _tracer(tracer_provider)
        self._options: Mapping[str, Any] = {
            "agent_name": agent_name,
            "conversation_id": conversation_id,
            "capture_content": capture_content,
        }
        # the last run's shared span data and parent contexts, by its agent and execution
        # ids and its record of MCP servers
        self._run: tuple[Any, Any, Any, dict[tuple[int, int], Any]] | None = None

    def __call__(self, event: Event) -> None:
        """Emit what the event completes (sub-agents' runs come with their parent's step)."""
        if isinstance(event, StepCompleted):
            state = event.state
            if DEPTH_KEY not in state.metadata:
                request = event.request
                run, parents = self._of(state)
                plans = plan_step(
                    state,
                    event.step_execution,
                    **self._options,
                    run=run,
                    request_model=request.model if request is not None else None,
                )
                emit(self._tracer, plans, parents)
        elif isinstance(event, ExecutionCompleted):
            state = event.state
            if DEPTH_KEY not in state.metadata and event.status is not ExecutionStatus.SUSPENDED:
                emit(self._tracer, [plan_run_span(state, **self._options)])

    def _of(self, state: AgentState) -> tuple[Any, dict[tuple[int, int], Any]]:
        """The run's shared span data, and the parent contexts its spans were given, made
        again when the run or its MCP servers change (listeners of concurrent runs may
        interleave: then they are simply made again)."""
        execution = state.execution
        key = (state.agent_id, execution.execution_id if execution is not None else None)
        sources = state.metadata.get(SOURCES_KEY)
        known = self._run
        if known is not None and known[0] == key and known[1] is sources:
            return known[2], known[3]
        run = run_of(state, self._options["agent_name"], self._options["conversation_id"])
        parents: dict[tuple[int, int], Any] = {}
        self._run = (key, sources, run, parents)
        return run, parents

    def __repr__(self) -> str:
        return f"OTelListener(capture_content={self._options['capture_content']})"


def export(
    run: Any,
    tracer_provider: Any = None,
    *,
    capture_content: bool = False,
    agent_name: str = "agent",
    conversation_id: str | None = None,
    run_number: int | None = None,
) -> int:
    """Send recorded runs — an ``AgentState``, or a run file's path (an audit log or a
    state document) — as spans with their recorded times, one trace a run: every run of a
    log holding several, or run ``run_number`` (1-based, -1 the last); the number of
    spans sent."""
    if isinstance(run, AgentState):
        runs: list[tuple[AgentState, Any]] = [(run, None)]
    else:
        from agents.runfiles import chosen_runs, load_records

        records = load_records(str(run))
        runs = [
            (r.final, _recorded_models(r)) for _, r in chosen_runs(records, run_number, str(run))
        ]
    tracer = _tracer(tracer_provider)
    sent = 0
    for state, models in runs:
        plans = plan_run(
            state,
            agent_name=agent_name,
            conversation_id=conversation_id,
            capture_content=capture_content,
            request_model=models,
        )
        emit(tracer, plans)
        sent += len(plans)
    return sent


def _recorded_models(record: Any) -> Any:
    """The model each step's request asked for, as the record says (an audit log keeps
    what each request offered)."""

    def model(step: int) -> str | None:
        offered = record.offered_at(step)
        name = offered.get("model") if isinstance(offered, dict) else None
        return name if isinstance(name, str) and name else None

    return model


def send_otlp(
    run: Any,
    endpoint: str,
    *,
    service_name: str = "agents",
    timeout: float = 5.0,
    **options: Any,
) -> int:
    """``export`` recorded runs over OTLP/HTTP to ``endpoint`` (a collector's
    ``/v1/traces`` URL) in one request, one attempt; the number of spans sent. A
    ``ResourceError`` saying why when the collector did not take them: the connection
    refused, its HTTP status, or no answer within ``timeout`` seconds."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    collected = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(SimpleSpanProcessor(collected))
    try:
        count = export(run, provider, **options)
        body = encode_spans(collected.get_finished_spans()).SerializeToString()
    finally:
        provider.shutdown()
    _post(endpoint, body, timeout)
    return count


def _post(endpoint: str, body: bytes, timeout: float) -> None:
    """POST an OTLP protobuf body once; ``ResourceError`` saying why it was not taken
    (the SDK's exporter retries for seconds and says only that it failed)."""
    import base64
    import urllib.error
    import urllib.parse
    import urllib.request

    where = f"the collector at {shown_url(endpoint)}"
    headers = {"Content-Type": "application/x-protobuf"}
    try:
        parts = urllib.parse.urlsplit(endpoint)
        port = parts.port
    except ValueError as exc:
        raise ResourceError(f"{where}: {exc}") from None
    if parts.username is not None or parts.password is not None:  # as Basic authentication
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{port}" if port is not None else ""
        endpoint = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    request = urllib.request.Request(endpoint, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        exc.close()
        raise ResourceError(f"{where} answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        cause = exc.reason
        if isinstance(cause, ConnectionRefusedError):
            why = "connection refused (nothing listens there?)"
        elif isinstance(cause, TimeoutError):
            why = f"no answer within {timeout:g} s"
        else:
            why = str(getattr(cause, "strerror", None) or cause)
        raise ResourceError(f"{where} did not take the spans: {why}") from None
    except TimeoutError:
        raise ResourceError(
            f"{where} did not take the spans: no answer within {timeout:g} s"
        ) from None
    except ValueError as exc:  # not an http(s) URL
        raise ResourceError(f"{where}: {exc}") from None


def otlp_provider(endpoint: str, service_name: str = "agents") -> Any:
    """An SDK tracer provider sending spans over OTLP/HTTP to ``endpoint`` (a collector's
    ``/v1/traces`` URL) in batches, for ``OTelListener``; ``shutdown()`` it to flush."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider
