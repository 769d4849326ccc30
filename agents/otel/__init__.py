"""OpenTelemetry traces of agent runs (the ``otel`` extra): live, with ``OTelListener``,
or after the fact from a recorded run, with ``export`` (and ``agents export-otel``).

Spans follow the OpenTelemetry GenAI semantic conventions (``invoke_agent``, ``chat``,
``execute_tool``, and ``tools/call`` for MCP calls); see ``agents.otel.spans`` for what
each holds, and docs/how-to/tracing.md. Nothing else in ``agents`` imports OpenTelemetry,
and this package imports it only when its emitting side is used (``agents.otel.spans``,
which plans spans and trace contexts, needs nothing).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded on first use (below); named here for type checkers and the docs
    from agents.otel.sdk import OTelListener, PlannedIds, emit, export, otlp_provider, send_otlp
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


def __getattr__(name: str) -> Any:
    if name in ("SpanPlan", "plan_run"):
        import importlib

        return getattr(importlib.import_module("agents.otel.spans"), name)
    if name in __all__:
        import importlib

        from agents.errors import require_extra

        require_extra("otel", "agents.otel", "opentelemetry.trace", "opentelemetry.sdk")
        return getattr(importlib.import_module("agents.otel.sdk"), name)
    raise AttributeError(f"module 'agents.otel' has no attribute {name!r}")
