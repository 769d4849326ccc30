"""The commands reading runs: ``inspect``, ``verify``, ``report``, ``diff``, ``replay``."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from typing import Any, TextIO

from agents.cli.common import (
    BAD_INPUT,
    DIFFERENT,
    OK,
    counted,
    is_bundle,
    progress,
    refuse_overwriting,
    said,
    write_atomically,
)
from agents.cli.labels import call_labels, call_outcome, describe_status

__all__ = [
    "diff",
    "inspect",
    "print_timeline",
    "replay",
    "report",
    "verify",
]

_SHOWN = 100  # characters of a summary in the text view


def print_timeline(state: Any, out: TextIO, *, replayed: bool = False) -> None:
    """The timeline table, outcome, compactions and sub-agents' runs (nested); of a replay,
    the durations column says they are the replay's (the recorded ones: ``inspect``)."""
    from agents.cli.runfiles import table

    rows = [
        [
            "step",
            "type",
            "tools",
            "input_tokens",
            "output_tokens",
            "cost",
            "replay_duration" if replayed else "duration",
            "stop_reason",
        ]
    ]
    rows.extend(
        [
            str(row.step),
            row.step_type.value,
            ", ".join(call_labels(step_execution)) or "-",
            str(row.input_tokens),
            str(row.output_tokens),
            f"{row.cost:.6f}",
            f"{row.duration * 1000:.2f} ms",
            row.stop_reason.value if row.stop_reason else "",
        ]
        for row, step_execution in zip(state.timeline(), state.step_executions, strict=True)
    )
    if len(rows) == 1:  # no step was recorded: say so, not an empty table
        rows.append(["-", "(no steps)", "", "", "", "", "", ""])
    out.write(table(rows) + "\n\n")
    reason = state.stop_reason.value if state.stop_reason else ""
    out.write(f"status: {describe_status(state)}\nstop reason: {reason}\n")
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
                summary = " ".join(entry["summary"].split())  # one line; --json has it all
                if len(summary) > _SHOWN:
                    summary = summary[: _SHOWN - 1] + "…"
                line += f" ({entry['summary_tokens']} tokens): {summary!r}"
        out.write(line + "\n")
    for number, execution in _children(state):
        child = execution.child
        out.write(
            f"\nsub-agent {execution.name} (step {number}, call {execution.tool_call.id}, "
            f"agent {child.agent_id}):\n"
        )
        nested = io.StringIO()
        print_timeline(child, nested, replayed=replayed)
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
                "summary": response.text if response is not None else None,
                "summary_tokens": compaction.usage.total_tokens,
                "error": compaction.error.describe() if compaction.error is not None else None,
            }
        )
    return found


def _inspect_document(state: Any) -> dict[str, Any]:
    from agents.records.codec import encode_value

    return {
        "timeline": [encode_value(row) for row in state.timeline()],
        "tool_calls": [
            {
                "step": step_execution.number,
                "tool": execution.name,
                "call_id": execution.tool_call.id,
                "outcome": call_outcome(execution),
                "error": execution.error.describe() if execution.error is not None else None,
            }
            for step_execution in state.step_executions
            for execution in step_execution.step.tool_executions
        ],
        "status": state.status.value if state.status else None,
        "finished": state.status is not None and state.status.terminal,
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


def inspect(args: argparse.Namespace, out: TextIO) -> int:
    """``agents inspect FILE [--run N] [--json]``: the timeline, compactions and
    sub-agents of each run in the file (or of run N)."""
    from agents.cli.runfiles import run_heading, runs_of

    runs, count = runs_of(args.file, args.run)
    if args.json:
        documents = [_inspect_document(record.final) for _, record in runs]
        document: Any = (
            documents[0]
            if len(documents) == 1
            else {
                "count": count,
                "runs": documents,
            }
        )
        out.write(json.dumps(document, indent=2, sort_keys=True) + "\n")
        return OK
    if len(runs) > 1:
        out.write(f"{count} runs in this log (--run N shows one)\n")
    for number, record in runs:
        if count > 1:
            out.write(f"\n{run_heading(number, count, record)}\n")
        print_timeline(record.final, out)
    return OK


def verify(args: argparse.Namespace, out: TextIO) -> int:
    """``agents verify FILE [--key PUBLIC.pem] [--anchor DATABASE] [--blobs FOLDER]``: exit
    1 unless the audit log is intact and complete, every blob it refers to present and
    whole (and signed by the key, and as long as its anchor)."""
    from agents.audit import AuditLog
    from agents.audit.bundle import check_bundle
    from agents.errors import (
        AuditLogTampered,
        ConfigurationError,
        InvalidArgument,
        StateDecodeError,
    )

    bundled = is_bundle(args.file)
    if bundled and args.blobs is not None:  # it would be read in place of the bundle's
        raise InvalidArgument(f"{args.file}: a bundle holds its blobs: --blobs is for a log's")
    try:
        anchor = _anchor_of(args.anchor) if args.anchor else None
        options = {"public_key": args.key, "anchor": anchor, "progress": progress("verifying")}
        if bundled:
            shown, checked = check_bundle(args.file, **options)
        else:
            shown, checked = args.file, AuditLog.check(args.file, blobs=args.blobs, **options)
    except AuditLogTampered as exc:
        sys.stderr.write(f"agents verify: {said(exc)}\n")
        return DIFFERENT
    except StateDecodeError as exc:  # missing file, a directory: bad input
        sys.stderr.write(f"agents verify: {said(exc.reason)}\n")
        return BAD_INPUT
    except ConfigurationError as exc:  # a key file that is missing or no key
        sys.stderr.write(f"agents verify: {said(exc)}\n")
        return BAD_INPUT
    if args.key:
        signed = f"signed by the key (all {checked.verified} signed records)"
    elif checked.signed:
        signed = f"{checked.signed} records signed, not checked (pass --key PUBLIC.pem)"
    else:
        signed = "unsigned: proves integrity, not authorship"
    anchored = f"; as long as its anchor ({checked.anchored} records)" if anchor else ""
    blobs = f"; {counted(checked.blobs, 'blob')} present and whole" if checked.blobs else ""
    records = counted(checked.records, "record")
    out.write(f"{shown}: intact and complete, {records}; {signed}{anchored}{blobs}\n")
    return OK


def bundle(args: argparse.Namespace, out: TextIO) -> int:
    """``agents bundle FILE -o OUT.zip [--blobs FOLDER]``: the audit log and every blob it
    refers to as one zip (every command that reads runs reads it)."""
    from agents.audit.bundle import write_bundle
    from agents.errors import AuditLogTampered

    refuse_overwriting(args.output, [args.file], ())
    try:
        count = write_bundle(args.file, args.output, args.blobs)
    except AuditLogTampered as exc:
        sys.stderr.write(f"agents bundle: {said(exc)}\n")
        return DIFFERENT
    out.write(f"{args.output}: {args.file} and {counted(count, 'blob')}\n")
    return OK


def _anchor_of(database: str) -> Any:
    """The session store at ``database`` (a SQLite file that exists, or a PostgreSQL URL),
    for the anchors it keeps."""
    from agents.errors import ConfigurationError

    if database.startswith(("postgresql://", "postgres://")):
        from agents.persistence.postgres import PostgresSessionStore

        return PostgresSessionStore(database)
    if not os.path.isfile(database):
        raise ConfigurationError(f"{database}: no such session store")
    from agents.persistence.sqlite import SQLiteSessionStore

    return SQLiteSessionStore(database)


def report(args: argparse.Namespace, out: TextIO) -> int:
    """``agents report FILE -o OUT.html [--run N]``: every run of the file, or run N."""
    from agents.cli.report import render_report
    from agents.cli.runfiles import runs_of

    refuse_overwriting(args.output, [args.file], ())
    runs, count = runs_of(args.file, args.run)
    write_atomically(args.output, render_report([r.final for _, r in runs], args.file))
    held = f" ({count} runs in this log)" if len(runs) > 1 else ""
    out.write(f"report written to {args.output}{held}\n")
    return OK


def diff(args: argparse.Namespace, out: TextIO) -> int:
    """``agents diff A B``: the first step and field where two runs differ."""
    from agents.cli.runfiles import compare, load_state

    a, b = load_state(args.a), load_state(args.b)
    return _verdict(
        compare(a, b),
        "the runs tell the same story (ids and timestamps aside)",
        "first divergence:",
        out,
    )


def replay(args: argparse.Namespace, out: TextIO) -> int:
    """``agents replay FILE [--run N] [--verify]``: each run of the file (or run N) again,
    answered from its record; durations in the table are the replay's own."""
    from agents.cli.runfiles import run_heading, runs_of
    from agents.replaying import replay as replay_record

    runs, count = runs_of(args.file, args.run)
    if len(runs) > 1:
        out.write(f"{count} runs in this log (--run N replays one)\n")
    verdict = OK
    for number, record in runs:
        if count > 1:
            out.write(f"\n{run_heading(number, count, record)}\n")
        replayed = replay_record(record)
        print_timeline(replayed.state, out, replayed=True)
        if not args.verify:
            continue
        if not record.complete:
            out.write(
                f"the record ends after step {record.final.step_count} (the run did not "
                "finish): the steps it holds are compared\n"
            )
        same = _verdict(replayed.difference, "replay matches the record", "replay diverges at", out)
        verdict = max(verdict, same)
    return verdict


def _verdict(difference: tuple[int, str] | None, same: str, differs: str, out: TextIO) -> int:
    """Say whether two histories differ (and where); the exit code."""
    if difference is None:
        out.write(same + "\n")
        return OK
    step, field = difference
    out.write(f"{differs} step {step}, field {field}\n")
    return DIFFERENT
