"""Run files for the command line: reading them (``agents.runfiles``; a bundle's log, read
in a temporary folder), and comparing two histories."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Iterator
from typing import TextIO, cast

from agents.replaying import RunRecord, compare
from agents.runfiles import chosen_runs, load_record, load_records, load_state

__all__ = [
    "compare",
    "load_record",
    "load_records",
    "load_state",
    "read_bundle",
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


@contextlib.contextmanager
def read_bundle(args: argparse.Namespace) -> Iterator[TextIO]:
    """For a reading command given a bundle (``args.file``): its log and blobs extracted
    into a temporary folder (``args.file`` then names the log there), and for the ``with``
    block what the command says — its output (the stream given), its errors, a report's
    source (``args.source``) — calls that folder by the bundle's name,
    ``run.zip/run.jsonl``."""
    from agents.audit.bundle import opened
    from agents.errors import InvalidArgument

    bundle = str(args.file)
    if getattr(args, "blobs", None) is not None:  # it would be read in place of the bundle's
        raise InvalidArgument(f"{bundle}: a bundle holds its blobs: --blobs is for a log's")
    with opened(bundle) as log:
        folder = str(log.parent)
        args.file, args.source = str(log), f"{bundle}/{log.name}"
        with contextlib.redirect_stderr(_Renamed(sys.stderr, folder, bundle)):
            yield cast(TextIO, _Renamed(sys.stdout, folder, bundle))


class _Renamed(io.TextIOBase):
    """A text stream writing to ``stream`` with the path ``old`` written as ``new``."""

    def __init__(self, stream: TextIO, old: str, new: str) -> None:
        super().__init__()
        self._stream, self._old, self._new = stream, old, new

    def write(self, text: str) -> int:
        self._stream.write(text.replace(self._old, self._new))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()
