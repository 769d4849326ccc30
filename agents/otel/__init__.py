"""OpenTelemetry traces of agent runs (the ``otel`` extra): live, with ``OTelListener``,
or after the fact from a recorded run, with ``export`` (and ``agents export-otel``).

Spans follow the OpenTelemetry GenAI semantic conventions (``invoke_agent``, ``chat``,
``execute_tool``); see ``agents.otel.spans`` for what each holds, and
docs/how-to/tracing.md. Nothing else in ``agents`` imports OpenTelemetry.
"""

from agents.otel.emit import OTelListener, PlannedIds, emit, export, otlp_provider, send_otlp
from agents.otel.spans import SpanPlan, plan_run

__all__ = [
    "OTelListener",
    "PlannedIds",
    "SpanPlan",
    "emit",
    "export",
    "otlp_provider",
    "plan_run",
    "send_otlp",
]
