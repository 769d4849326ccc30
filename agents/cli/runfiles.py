"""Run files for the command line: reading them (``agents.runfiles``), and comparing two
histories."""

from __future__ import annotations

from agents.replaying import compare
from agents.runfiles import load_record, load_state

__all__ = ["compare", "load_record", "load_state", "table"]


def table(rows: list[list[str]]) -> str:
    """Left-aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
