"""Run files for the command line: reading them (``agents.runfiles``: an audit log, a
bundle of one or a state), and comparing two histories."""

from __future__ import annotations

from agents.replaying import RunRecord, compare
from agents.runfiles import chosen_runs, load_record, load_records, load_state

__all__ = [
    "compare",
    "load_record",
    "load_records",
    "load_state",
    "run_heading",
    "runs_of",
    "table",
]


def runs_of(path: str, run: int | None) -> tuple[list[tuple[int, RunRecord]], int]:
    """The runs of the run file at ``path`` a command shows (all, or ``--run N``), and how
    many the file holds."""
    records = load_records(path)
    return chosen_runs(records, run, path), len(records)


def run_heading(number: int, count: int, record: RunRecord) -> str:
    """A run's heading when a file holds several."""
    final = record.final
    execution = final.execution.execution_id if final.execution is not None else None
    return f"run {number} of {count}: agent {final.agent_id}, execution {execution}"


def table(rows: list[list[str]]) -> str:
    """Left-aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
