"""``agents worker`` and ``agents recover``: durable runs on DBOS (docs/design/sessions.md)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from agents.cli.common import OK, load_attribute, one_line

__all__ = ["recover", "worker"]


def _database(args: argparse.Namespace) -> str | None:
    """``--database``, or ``$AGENTS_DATABASE_URL`` (read when the command runs)."""
    return args.database or os.environ.get("AGENTS_DATABASE_URL")


def _load_durable(targets: Sequence[str], database: str | None) -> tuple[Any, str]:
    """Import the modules holding the DurableAgents (which registers them); the module
    ``agents.durable.dbos`` and the database's URL."""
    from agents.errors import ConfigurationError

    if not database:
        raise ConfigurationError("--database URL is required (or set AGENTS_DATABASE_URL)")
    try:
        from agents.durable import dbos
    except ImportError as exc:
        raise ConfigurationError(
            f"DBOS is not installed ({exc}): pip install 'agents[dbos]'"
        ) from None
    for target in targets:
        if not isinstance(load_attribute(target), dbos.DurableAgent):
            raise ConfigurationError(f"{target} is not a DurableAgent")
    return dbos, database


def _launch(dbos: Any, database: str, **options: Any) -> None:
    """``dbos.launch``, a failure said in one line: DBOS's own log lines with their
    tracebacks made one line each too (the command prints no traceback), and the
    database's password never shown."""
    from agents.errors import ConfigurationError
    from agents.records.redaction import dsn_secrets, shown_url

    secrets = dsn_secrets(database)
    logging.getLogger("dbos").addFilter(_OneLine(secrets))
    try:
        dbos.launch(database, **options)
    except Exception as exc:
        said = one_line(f"{type(exc).__name__}: {exc}", secrets)
        raise ConfigurationError(f"DBOS could not start on {shown_url(database)}: {said}") from None


class _OneLine(logging.Filter):
    """A log record's traceback made the end of its one line, scrubbed."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        said = record.getMessage()
        if error is not None:
            said = f"{said.rstrip(': ')}: {type(error).__name__}: {error}"
        record.msg, record.args = one_line(said, self.secrets), None
        record.exc_info = record.exc_text = record.stack_info = None
        return True


def worker(args: argparse.Namespace, out: TextIO) -> int:
    """``agents worker MODULE:ATTR --queue NAME --database URL``: until SIGTERM or Ctrl-C."""
    import signal
    import threading

    dbos, database = _load_durable(args.targets, _database(args))
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    _launch(
        dbos,
        database,
        executor_id=args.executor_id,
        queues=args.queue,
        concurrency=args.concurrency,
    )
    executor = args.executor_id or "local"
    sys.stderr.write(f"agents worker {executor}: taking runs from {', '.join(args.queue)}\n")
    sys.stderr.flush()
    try:
        stop.wait()
        sys.stderr.write(f"agents worker {executor}: stopping (up to {args.grace:g} s)\n")
        sys.stderr.flush()
    finally:
        dbos.shutdown(grace=args.grace)
    sys.stderr.write(f"agents worker {executor}: stopped\n")
    return OK


def recover(args: argparse.Namespace, out: TextIO) -> int:
    """``agents recover MODULE:ATTR --executor ID``: finish a dead worker's runs."""
    dbos, database = _load_durable(args.targets, _database(args))
    _launch(dbos, database, executor_id=f"recover-{os.getpid()}", queues=[])
    try:
        handles = dbos.recover(args.executor)
        for handle in handles:
            final = handle.result()
            out.write(f"{handle.workflow_id}: {final.status.value if final.status else '-'}\n")
        out.write(f"recovered {len(handles)} run(s) of {', '.join(args.executor)}\n")
    finally:
        dbos.shutdown()
    return OK
