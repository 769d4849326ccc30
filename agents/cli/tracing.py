"""``agents export-otel``: a recorded run sent as OpenTelemetry spans, with its recorded
times, to an OTLP/HTTP collector (the ``otel`` extra)."""

from __future__ import annotations

import argparse
import logging
from typing import TextIO

from agents.cli.common import OK

__all__ = ["export_otel"]


def export_otel(args: argparse.Namespace, out: TextIO) -> int:
    """``agents export-otel FILE --endpoint URL [--run N] [--timeout SECONDS]
    [--capture-content] [--agent-name NAME]``: every run of the file, or run N."""
    from agents.errors import ConfigurationError
    from agents.records.redaction import shown_url

    # The exporter logs each failed attempt; the command says once what went wrong.
    logging.getLogger("opentelemetry").addHandler(logging.NullHandler())
    try:
        from agents.otel import send_otlp
    except ImportError:
        raise ConfigurationError(
            "export-otel needs OpenTelemetry: pip install 'agents[otel]'"
        ) from None
    count = send_otlp(
        args.file,
        args.endpoint,
        capture_content=args.capture_content,
        agent_name=args.agent_name,
        run_number=args.run,
        timeout=args.timeout,
    )
    out.write(f"sent {count} spans to {shown_url(args.endpoint)}\n")
    return OK
