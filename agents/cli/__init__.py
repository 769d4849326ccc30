"""The ``agents`` command line (also ``python -m agents``).

Exit codes: 0 ok; 1 verification failed or runs differ; 2 bad input. Errors are one line on
stderr, never a traceback; a command that fails leaves no output file; nothing here modifies
the files it reads.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["main"]

OK, DIFFERENT, BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit code 2
        self.exit(BAD_INPUT, f"{self.prog}: {message}\n")


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
    inspect = commands.add_parser("inspect", help="print a run's timeline")
    inspect.add_argument("file")
    inspect.add_argument("--json", action="store_true", help="print JSON instead of a table")
    replay = commands.add_parser("replay", help="replay a run offline from its record")
    replay.add_argument("file")
    replay.add_argument(
        "--verify", action="store_true", help="exit 1 unless the replay tells the same story"
    )
    diff = commands.add_parser("diff", help="the first divergence between two runs")
    diff.add_argument("a")
    diff.add_argument("b")
    verify = commands.add_parser("verify", help="check an audit log is intact and complete")
    verify.add_argument("file")
    report = commands.add_parser("report", help="write a self-contained HTML audit page")
    report.add_argument("file")
    report.add_argument("-o", "--output", required=True, metavar="OUT.html")
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
            default=os.environ.get("AGENTS_DATABASE_URL"),
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    from agents.errors import AgentError

    parser = _parser()
    args = parser.parse_args(argv)
    commands: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
        "demo": _demo,
        "run": _run,
        "inspect": _inspect,
        "replay": _replay,
        "diff": _diff,
        "verify": _verify,
        "report": _report,
        "worker": _worker,
        "recover": _recover,
    }
    command = commands.get(args.command or "")
    if command is None:
        parser.print_help(sys.stderr)
        return BAD_INPUT
    try:
        return command(args, sys.stdout)
    except (AgentError, OSError, ValueError) as exc:
        message = str(exc).replace("\n", " ")
        sys.stderr.write(f"agents {args.command}: {message}\n")
        return BAD_INPUT


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` only once all of it is ready (no partial output file)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".agents-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _progress(label: str) -> Callable[[int, int], None] | None:
    """A progress line on stderr when it is a terminal (never in pipes, files or CI logs)."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{label} {done:,}/{total:,} records ({done * 100 // total}%){end}")
        sys.stderr.flush()

    return show


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    from agents.cli.demo import run_demo

    return run_demo(out_dir=args.out, stdout=out, stderr=sys.stderr)


def _print_timeline(state: Any, out: TextIO) -> None:
    from agents.cli.runfiles import table

    rows = [
        [
            "step",
            "type",
            "tools",
            "input_tokens",
            "output_tokens",
            "cost",
            "duration",
            "stop_reason",
        ]
    ]
    rows.extend(
        [
            str(row.step),
            row.step_type.value,
            ", ".join(row.tools) or "-",
            str(row.input_tokens),
            str(row.output_tokens),
            f"{row.cost:.6f}",
            f"{row.duration * 1000:.2f} ms",
            row.stop_reason.value if row.stop_reason else "",
        ]
        for row in state.timeline()
    )
    out.write(table(rows) + "\n\n")
    status = state.status.value if state.status else "not run"
    reason = state.stop_reason.value if state.stop_reason else ""
    out.write(f"status: {status}\nstop reason: {reason}\n")
    if state.execution is not None and state.execution.error is not None:
        out.write(f"error: {state.execution.error.describe()}\n")
    out.write(f"final response: {state.final_response or ''}\n")
    compactions = _compactions(state)
    if compactions:
        out.write("\ncontext compaction:\n")
    for entry in compactions:
        line = f"  step {entry['step']}: {entry['moved']} messages moved to the buffer"
        if entry["summarized"]:
            line += f"; {entry['summarized']} summarised"
            if entry["error"] is not None:
                line += f" - failed: {entry['error']}"
            else:
                line += f" ({entry['summary_tokens']} tokens): {entry['summary']!r}"
        out.write(line + "\n")
    for number, execution in _children(state):
        child = execution.child
        out.write(
            f"\nsub-agent {execution.name} (step {number}, call {execution.tool_call.id}, "
            f"agent {child.agent_id}):\n"
        )
        nested = io.StringIO()
        _print_timeline(child, nested)
        out.write(
            "".join(f"  {line}" if line else line for line in nested.getvalue().splitlines(True))
        )


def _children(state: Any) -> list[tuple[int, Any]]:
    """The tool executions of ``state`` that ran a sub-agent, with their step numbers."""
    return [
        (step_execution.number, execution)
        for step_execution in state.step_executions
        for execution in step_execution.step.tool_executions
        if execution.child is not None
    ]


def _compactions(state: Any) -> list[dict[str, Any]]:
    """What context compaction did, step by step."""
    found = []
    for step_execution in state.step_executions:
        compaction = step_execution.step.compaction
        if compaction is None:
            continue
        response = compaction.response
        found.append(
            {
                "step": step_execution.number,
                "moved": compaction.moved,
                "summarized": len(compaction.summarized),
                "summary": response.content if response is not None else None,
                "summary_tokens": compaction.usage.total_tokens,
                "error": compaction.error.describe() if compaction.error is not None else None,
            }
        )
    return found


def _inspect_document(state: Any) -> dict[str, Any]:
    from agents.codec import encode_value

    return {
        "timeline": [encode_value(row) for row in state.timeline()],
        "status": state.status.value if state.status else None,
        "stop_reason": state.stop_reason.value if state.stop_reason else None,
        "final_response": state.final_response,
        "usage": encode_value(state.usage),
        "compactions": _compactions(state),
        "subagents": [
            {
                "step": number,
                "tool": execution.name,
                "call_id": execution.tool_call.id,
                "agent_id": execution.child.agent_id,
                **_inspect_document(execution.child),
            }
            for number, execution in _children(state)
        ],
    }


def _inspect(args: argparse.Namespace, out: TextIO) -> int:
    from agents.cli.runfiles import load_state

    state = load_state(args.file)
    if args.json:
        document = _inspect_document(state)
        out.write(json.dumps(document, indent=2, sort_keys=True) + "\n")
        return OK
    _print_timeline(state, out)
    return OK


def _verify(args: argparse.Namespace, out: TextIO) -> int:
    from agents.audit import AuditLog
    from agents.errors import AuditLogTampered, StateDecodeError

    try:
        count = AuditLog.verify(args.file, progress=_progress("verifying"))
    except AuditLogTampered as exc:
        sys.stderr.write(f"agents verify: {exc}\n")
        return DIFFERENT
    except StateDecodeError as exc:  # missing file, a directory
        sys.stderr.write(f"agents verify: {exc.reason}\n")
        return DIFFERENT
    out.write(f"{args.file}: intact and complete, {count} records\n")
    return OK


def _report(args: argparse.Namespace, out: TextIO) -> int:
    from agents.cli.report import render_report
    from agents.cli.runfiles import load_state

    state = load_state(args.file)
    _write_atomically(args.output, render_report(state, args.file))
    out.write(f"report written to {args.output}\n")
    return OK


def _diff(args: argparse.Namespace, out: TextIO) -> int:
    from agents.cli.runfiles import compare, load_state

    a, b = load_state(args.a), load_state(args.b)
    difference = compare(a, b)
    if difference is None:
        out.write("the runs tell the same story (ids and timestamps aside)\n")
        return OK
    step, field = difference
    out.write(f"first divergence: step {step}, field {field}\n")
    return DIFFERENT


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    from agents.cli.runfiles import compare, load_state
    from agents.compaction import RecordedCompactions
    from agents.drivers.replay import ReplayDriver
    from agents.hooks import tool_interceptor
    from agents.loop import AgentLoop
    from agents.step import ToolExecution

    recorded = load_state(args.file)
    executions = {e.tool_call.id: e for e in recorded.tool_executions}

    @tool_interceptor
    def recorded_tools(call: Any, call_next: Any) -> ToolExecution:
        execution = executions.get(call.id)
        if execution is None:
            return call_next(call)  # type: ignore[no-any-return]
        return execution

    compactions = RecordedCompactions.from_state(recorded)
    loop = AgentLoop(
        ReplayDriver.from_state(recorded),
        interceptors=[recorded_tools],
        max_steps=max(recorded.step_count, 1),
        compaction=compactions or None,  # summaries answered from the record
    )
    replayed = loop.run(recorded.at_step(0))
    _print_timeline(replayed, out)
    if not args.verify:
        return OK
    difference = compare(recorded, replayed)
    if difference is None:
        out.write("replay matches the record\n")
        return OK
    step, field = difference
    out.write(f"replay diverges at step {step}, field {field}\n")
    return DIFFERENT


def _run(args: argparse.Namespace, out: TextIO) -> int:
    import importlib

    from agents.audit import AuditLog
    from agents.errors import ConfigurationError
    from agents.loop import AgentLoop
    from agents.state import AgentState

    sys.path.insert(0, os.getcwd())

    def load(spec: str) -> Any:
        module_name, _, attribute = spec.partition(":")
        if not module_name or not attribute:
            raise ConfigurationError(f"expected MODULE:ATTR, got {spec!r}")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(f"cannot load {spec}: {exc}") from None

    from agents.definitions import SUFFIXES

    initial = AgentState.initial()
    if os.path.splitext(args.target)[1].lower() in SUFFIXES:
        from agents.definitions import AgentDefinition

        definition = AgentDefinition.load(args.target)
        registry = load(args.registry) if args.registry else None
        driver = None
        if args.model:
            from agents.drivers.litellm import LiteLLMDriver

            driver = LiteLLMDriver(args.model)
        loop, initial = definition.build(registry, driver=driver)
    else:
        target = load(args.target)
        loop = target() if callable(target) and not isinstance(target, AgentLoop) else target
        if not isinstance(loop, AgentLoop):
            raise ConfigurationError(
                f"{args.target} is not an AgentLoop (or a function making one)"
            )
        if args.model:
            from agents.drivers.litellm import LiteLLMDriver

            loop = loop.with_driver(LiteLLMDriver(args.model))
    with AuditLog.open(args.out) as log:
        final = loop.with_listeners(log).run(initial.with_user_message(args.input))
    _print_timeline(final, out)
    out.write(f"run written to {args.out}\n")
    return OK


def _load_durable(targets: Sequence[str], database: str | None) -> Any:
    """Import the modules holding the DurableAgents (which registers them); the module."""
    import importlib

    from agents.errors import ConfigurationError

    if not database:
        raise ConfigurationError("--database URL is required (or set AGENTS_DATABASE_URL)")
    sys.path.insert(0, os.getcwd())
    try:
        from agents.durable import dbos
    except ImportError as exc:
        raise ConfigurationError(
            f"DBOS is not installed ({exc}): pip install 'agents[dbos]'"
        ) from None
    for target in targets:
        module_name, _, attribute = target.partition(":")
        if not module_name or not attribute:
            raise ConfigurationError(f"expected MODULE:ATTR, got {target!r}")
        try:
            found = getattr(importlib.import_module(module_name), attribute)
        except Exception as exc:  # the user's module may fail in any way while importing
            raise ConfigurationError(f"cannot load {target}: {type(exc).__name__}: {exc}") from None
        if not isinstance(found, dbos.DurableAgent):
            raise ConfigurationError(f"{target} is not a DurableAgent")
    return dbos


def _worker(args: argparse.Namespace, out: TextIO) -> int:
    import signal
    import threading

    dbos = _load_durable(args.targets, args.database)
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    dbos.launch(
        args.database,
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


def _recover(args: argparse.Namespace, out: TextIO) -> int:
    dbos = _load_durable(args.targets, args.database)
    dbos.launch(args.database, executor_id=f"recover-{os.getpid()}", queues=[])
    try:
        handles = dbos.recover(args.executor)
        for handle in handles:
            final = handle.result()
            out.write(f"{handle.workflow_id}: {final.status.value if final.status else '-'}\n")
        out.write(f"recovered {len(handles)} run(s) of {', '.join(args.executor)}\n")
    finally:
        dbos.shutdown()
    return OK
