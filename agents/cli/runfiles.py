"""Run files for the command line: reading them, and comparing two histories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from agents.audit import AuditLog
from agents.codec import from_json, to_dict
from agents.drivers.replay import RECORD_KIND
from agents.errors import StateDecodeError
from agents.state import AgentState

__all__ = ["compare", "load_state", "table"]

# Left out when comparing histories: what differs between two runs of the same behaviour.
_VOLATILE: Final = frozenset(
    {
        "agent_id",
        "parent_agent_id",
        "execution_id",
        "id",
        "started_at",
        "completed_at",
        "created_at",
        "updated_at",
        "duration",
        # Bookkeeping for rewinding (at_step), not behaviour: a replay without the loop's
        # message compiler records it where the original did not, and back.
        "conversation_length",
    }
)


def load_state(path: str) -> AgentState:
    """The final state in a run file: an audit log (JSONL) or a state JSON document (compact
    or indented). Anything else is a ``StateDecodeError`` saying what the file is."""
    file = Path(path)
    if not file.exists():
        raise StateDecodeError(f"{path}: no such file")
    if file.is_dir():
        raise StateDecodeError(f"{path}: is a directory, not a run file")
    data = file.read_bytes()
    if not data.strip():
        raise StateDecodeError(f"{path}: empty file (a run file is an audit log or a state)")
    first = _json_or_none(data.split(b"\n", 1)[0])
    if isinstance(first, dict) and "seq" in first and "prev_hash" in first:
        return AuditLog.read(file)
    document = first if first is not None and b"\n" not in data.strip() else _json_or_none(data)
    kind = document.get("kind") if isinstance(document, dict) else None
    if kind == "AgentState":
        try:
            return from_json(data, AgentState)
        except StateDecodeError as exc:
            raise StateDecodeError(f"{path}: {exc.reason}", exc.path) from None
    if isinstance(first, dict) and first.get("kind") == RECORD_KIND:
        raise StateDecodeError(
            f"{path}: a recording of model calls (RecordingInterceptor), read by "
            "ReplayDriver.from_file, not a run file"
        )
    if isinstance(kind, str):
        raise StateDecodeError(f"{path}: a {kind} document, not a run file (an AgentState)")
    if document is not None or first is not None:
        raise StateDecodeError(f"{path}: JSON, but neither an audit log nor an AgentState document")
    raise StateDecodeError(f"{path}: not JSON (neither an audit log nor an AgentState document)")


def _json_or_none(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}.length"
    return None if a == b else path


def compare(a: AgentState, b: AgentState) -> tuple[int, str] | None:
    """The first step (1-based) and field where two histories differ, ignoring ids and
    timestamps; ``None`` when they tell the same story."""
    steps_a = [_strip(to_dict(se)) for se in a.step_executions]
    steps_b = [_strip(to_dict(se)) for se in b.step_executions]
    for number, (x, y) in enumerate(zip(steps_a, steps_b, strict=False), start=1):
        field = _first_difference(x, y, "")
        if field:
            return number, field.lstrip(".")
    if len(steps_a) != len(steps_b):
        return min(len(steps_a), len(steps_b)) + 1, "steps"
    outcome_a = (a.status, a.stop_reason, a.final_output)
    outcome_b = (b.status, b.stop_reason, b.final_output)
    if outcome_a != outcome_b:
        return len(steps_a), "status"
    return None


def table(rows: list[list[str]]) -> str:
    """Left-aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
