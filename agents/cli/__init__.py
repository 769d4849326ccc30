"""The ``agents`` command line (also ``python -m agents``).

Exit codes: 0 ok; 1 verification failed or runs differ; 2 bad input. Errors are one line on
stderr, never a traceback; a command that fails leaves no output file; nothing here modifies
the files it reads.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import io
import logging
import sys
from collections.abc import Sequence
from typing import Any, TextIO, cast

from agents.cli.common import BAD_INPUT, Terminal, said

__all__ = ["main"]

# Each command's function, ``(args, out) -> exit code``, imported when it runs.
_COMMANDS = {
    "demo": ("agents.cli.demo", "command"),
    "run": ("agents.cli.running", "run"),
    "inspect": ("agents.cli.history", "inspect"),
    "replay": ("agents.cli.history", "replay"),
    "diff": ("agents.cli.history", "diff"),
    "verify": ("agents.cli.history", "verify"),
    "bundle": ("agents.cli.history", "bundle"),
    "keygen": ("agents.cli.keys", "keygen"),
    "report": ("agents.cli.history", "report"),
    "regress": ("agents.cli.regress", "regress"),
    "eval": ("agents.cli.evals", "evaluate"),
    "export-otel": ("agents.cli.tracing", "export_otel"),
    "mcp-serve": ("agents.cli.running", "mcp_serve"),
    "serve": ("agents.cli.serving", "serve"),
    "worker": ("agents.cli.durable", "worker"),
    "recover": ("agents.cli.durable", "recover"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit code 2
        self.exit(BAD_INPUT, f"{self.prog}: {message}\n")


def _port(text: str) -> int:
    """A TCP port for ``--port`` (0: any free one)."""
    if text.isascii() and text.isdigit() and int(text) <= 65_535:
        return int(text)
    raise argparse.ArgumentTypeError(f"not a port (0 to 65535): {text!r}")


@functools.cache  # building it reads argparse's translations from disk: ~4 ms a call
def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="agents", description="Run, inspect, verify and report agents built on agents."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = commands.add_parser("demo", help="run a small example agent offline")
    demo.add_argument(
        "--out",
        metavar="DIR",
        default=".",
        help="directory for the run file (default: the current directory)",
    )
    demo.add_argument(
        "--sign",
        metavar="PRIVATE.pem",
        help="sign the run file with this Ed25519 key (see agents keygen)",
    )
    keygen = commands.add_parser("keygen", help="write an Ed25519 key pair for signed audit logs")
    keygen.add_argument(
        "--out",
        metavar="PREFIX",
        default="agents-audit",
        help="writes PREFIX.pem (private, mode 600) and PREFIX.pub.pem (default: agents-audit)",
    )
    run = commands.add_parser(
        "run",
        help="run an agent: MODULE:ATTR (an AgentLoop) or a definition file (.md, .toml, .yaml)",
    )
    run.add_argument("target", metavar="MODULE:ATTR|FILE")
    run.add_argument(
        "--registry",
        metavar="MODULE:ATTR",
        help="tools (and definitions) a definition file may name: a Registry or a list",
    )
    run.add_argument("--input", default="Hello!", help="the user message")
    run.add_argument("--model", help="a litellm model name to use instead of the loop's driver")
    run.add_argument("--out", metavar="FILE", default="agents-run.jsonl", help="the run file")
    http = commands.add_parser(
        "serve", help="serve an agent's sessions over HTTP (Server-Sent Events, a chat page)"
    )
    http.add_argument("target", metavar="MODULE:ATTR|FILE", help="the agent to serve")
    http.add_argument(
        "--database",
        metavar="URL_OR_PATH",
        help="the session store: a SQLite file (default agents-sessions.sqlite; a path or "
        "sqlite:///path) or a postgresql:// URL",
    )
    http.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    http.add_argument("--port", type=_port, default=8000)
    http.add_argument(
        "--token",
        help="require 'Authorization: Bearer TOKEN' (default: $AGENTS_SERVE_TOKEN, if set)",
    )
    http.add_argument(
        "--registry",
        metavar="MODULE:ATTR",
        help="tools (and definitions) a definition file may name: a Registry or a list",
    )
    serve = commands.add_parser(
        "mcp-serve", help="serve an agent as an MCP server (stdio, or streamable HTTP)"
    )
    serve.add_argument("target", metavar="MODULE:ATTR|FILE", help="the agent to serve")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="for http (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="for http (default 8000)")
    serve.add_argument("--name", default="agent", help="the tool's name (default: agent)")
    serve.add_argument("--audit-log", metavar="FILE", help="record every run in this audit log")
    serve.add_argument(
        "--token",
        help="for http: require 'Authorization: Bearer TOKEN' (default: $AGENTS_MCP_TOKEN, if set)",
    )
    serve.add_argument(
        "--registry",
        metavar="MODULE:ATTR",
        help="tools (and definitions) a definition file may name: a Registry or a list",
    )
    _add_history_commands(commands)
    _add_durable_commands(commands)
    return parser


def _checked(convert: Any, valid: Any, what: str) -> Any:
    """An argument type: ``convert(text)`` when ``valid`` of it, else an error saying the
    text is not ``what``."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not valid(value):
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}")
        return value

    return parse


_seconds = _checked(float, lambda v: 0 < v < float("inf"), "a positive number of seconds")
_run_number = _checked(int, lambda v: v != 0, "a run number (1, 2, … or -1 for the last)")


def _run_option(command: Any) -> None:
    command.add_argument(
        "--run",
        type=_run_number,
        metavar="N",
        help="only run N of the file (1 the first, -1 the last; default: every run)",
    )


def _add_history_commands(commands: Any) -> None:
    """The commands that read run files: inspect, replay, diff, verify, report."""
    inspect = commands.add_parser("inspect", help="print a run's timeline")
    inspect.add_argument("file")
    inspect.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _run_option(inspect)
    replay = commands.add_parser("replay", help="replay a run offline from its record")
    replay.add_argument("file")
    _run_option(replay)
    replay.add_argument(
        "--verify", action="store_true", help="exit 1 unless the replay tells the same story"
    )
    diff = commands.add_parser("diff", help="the first divergence between two runs")
    diff.add_argument("a")
    diff.add_argument("b")
    verify = commands.add_parser("verify", help="check an audit log is intact and complete")
    verify.add_argument("file")
    verify.add_argument(
        "--key", metavar="PUBLIC.pem", help="also check it was signed by this Ed25519 key"
    )
    verify.add_argument(
        "--anchor",
        metavar="DATABASE",
        help="also check it is not shorter than its anchor in this session store "
        "(a SQLite file or a postgresql:// URL)",
    )
    verify.add_argument(
        "--blobs",
        metavar="FOLDER",
        help="where the log's blobs are (default: FILE.blobs beside it)",
    )
    bundle = commands.add_parser(
        "bundle", help="write an audit log and its blobs as one zip (the run commands read it)"
    )
    bundle.add_argument("file")
    bundle.add_argument("-o", "--output", required=True, metavar="OUT.zip")
    bundle.add_argument(
        "--blobs", metavar="FOLDER", help="where the log's blobs are (default: FILE.blobs)"
    )
    report = commands.add_parser("report", help="write a self-contained HTML audit page")
    report.add_argument("file")
    report.add_argument("-o", "--output", required=True, metavar="OUT.html")
    _run_option(report)
    _add_export_command(commands)
    _add_regress_command(commands)
    _add_eval_command(commands)


def _add_export_command(commands: Any) -> None:
    """``export-otel``: a run file's runs as OpenTelemetry spans."""
    otel = commands.add_parser(
        "export-otel", help="send a recorded run as OpenTelemetry spans to an OTLP collector"
    )
    otel.add_argument("file", help="a run file: an audit log or a state document")
    otel.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="the collector's OTLP/HTTP traces URL (http://127.0.0.1:4318/v1/traces)",
    )
    otel.add_argument(
        "--capture-content",
        action="store_true",
        help="also send message and tool contents (redacted)",
    )
    otel.add_argument("--agent-name", default="agent", help="the invoke_agent span's name")
    otel.add_argument(
        "--timeout",
        type=_seconds,
        default=5.0,
        metavar="SECONDS",
        help="how long to wait for the collector (default 5)",
    )
    _run_option(otel)


def _add_regress_command(commands: Any) -> None:
    """``regress``: recorded runs through new agent code."""
    regress = commands.add_parser(
        "regress", help="recorded runs through new agent code: what changed, without a model"
    )
    regress.add_argument("target", metavar="MODULE:ATTR|FILE", help="the agent to test")
    regress.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run files (audit logs, their bundles, states) or folders of logs and states",
    )
    regress.add_argument(
        "--tools",
        choices=("live", "record"),
        default="live",
        help="run the agent's tools (live, the default) or answer calls from the record",
    )
    regress.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    regress.add_argument("--report", metavar="OUT.html", help="also write an HTML report")
    regress.add_argument(
        "--continue-with",
        metavar="MODEL",
        help="a litellm model that finishes each changed run from its first changed request",
    )
    regress.add_argument(
        "--exact", action="store_true", help="same means byte-identical JSON, ids and times too"
    )
    regress.add_argument(
        "--registry",
        metavar="MODULE:ATTR",
        help="tools (and definitions) a definition file may name: a Registry or a list",
    )


def _positive(text: str) -> int:
    if text.isascii() and text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"not a whole number of at least 1: {text!r}")


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if 0 < value < 1:
        return value
    raise argparse.ArgumentTypeError(f"not a level between 0 and 1: {text!r}")


def _add_eval_command(commands: Any) -> None:
    """``eval``: an agent evaluated on a dataset; ``eval rescore DIR``: scored again."""
    evaluate = commands.add_parser(
        "eval",
        help="evaluate an agent on a dataset: pass rates with intervals, against a baseline",
        description="agents eval DATASET MODULE:ATTR|FILE [options], or agents eval rescore "
        "DIR --scorers MODULE:ATTR",
    )
    evaluate.add_argument("dataset", metavar="DATASET|rescore", help="a YAML or JSONL dataset")
    evaluate.add_argument(
        "target", metavar="AGENT|DIR", help="the agent (or, to rescore, the folder)"
    )
    evaluate.add_argument("--scorers", metavar="MODULE:ATTR", help="a list of scorers")
    evaluate.add_argument("--trials", type=_positive, default=1, metavar="K")
    evaluate.add_argument("--concurrency", type=_positive, default=8, metavar="N")
    evaluate.add_argument("--out", metavar="DIR", help="keep each trial's run here, to rescore")
    evaluate.add_argument("--baseline", metavar="DIR|JSON", help="an evaluation to compare with")
    evaluate.add_argument("--alpha", type=_alpha, default=0.05, metavar="A")
    evaluate.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    evaluate.add_argument("--report", metavar="OUT.html", help="also write an HTML report")


def _add_durable_commands(commands: Any) -> None:
    """The commands of durable runs on DBOS: worker, recover."""
    for name, text in (
        ("worker", "run durable agents from a DBOS queue until stopped (SIGTERM or Ctrl-C)"),
        ("recover", "finish the runs of a dead worker (DBOS executor), then exit"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument(
            "targets",
            metavar="MODULE:ATTR",
            nargs="+",
            help="where the DurableAgents are (importing it creates them)",
        )
        command.add_argument(
            "--database",
            metavar="URL",
            help="the DBOS system database: sqlite:///FILE or postgresql://... "
            "(default: $AGENTS_DATABASE_URL)",
        )
        if name == "worker":
            command.add_argument("--queue", required=True, action="append", metavar="NAME")
            command.add_argument(
                "--executor-id", metavar="ID", help="this worker's DBOS executor id"
            )
            command.add_argument(
                "--concurrency", type=int, metavar="N", help="runs at once in this worker"
            )
            command.add_argument(
                "--grace",
                type=float,
                default=30.0,
                metavar="SECONDS",
                help="on SIGTERM or Ctrl-C, how long to let runs in flight finish "
                "(the rest are recovered later; default 30)",
            )
        else:
            command.add_argument(
                "--executor",
                required=True,
                action="append",
                metavar="ID",
                help="the dead worker's executor id",
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    from agents.errors import AgentError

    for stream in (sys.stdout, sys.stderr):
        # Text that is not Unicode (a lone surrogate: an argument or a file name that is
        # not UTF-8, as Python decodes it) is shown as its escape, not a crash.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    # The MCP SDK logs a traceback, with a piece of the line, for each line a server sends
    # that it cannot parse: the run records the failed call; the command prints no traceback.
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    parser = _parser()
    args = parser.parse_args(argv)
    found = _COMMANDS.get(args.command or "")
    if found is None:
        parser.print_help(sys.stderr)
        return BAD_INPUT
    module, name = found
    try:
        command = getattr(importlib.import_module(module), name)
        return int(command(args, _shown(sys.stdout)))
    except (AgentError, OSError, ValueError, MemoryError) as exc:
        # Said in one line; so is an input too large for this machine.
        why = "out of memory" if isinstance(exc, MemoryError) else said(exc)
        sys.stderr.write(f"agents {args.command}: {why}\n")
        return BAD_INPUT


def _shown(stream: TextIO) -> TextIO:
    """``stream``, writing what it is given ``visible`` when it is a terminal (the text of
    a run is a model's, a tool's, or a forged file's: escape sequences in it would drive
    the terminal), and as it is to a pipe or a file."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed stream, or none a test put there
        terminal = False
    return cast(TextIO, Terminal(stream)) if terminal else stream
