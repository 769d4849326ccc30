"""Run files: an audit log (JSONL) or a state document, read into the record of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.audit.reading import read_run
from agents.drivers.replay import RECORD_KIND
from agents.errors import StateDecodeError
from agents.records.codec import from_json, loads
from agents.records.state import AgentState
from agents.replaying import RunRecord
from agents.shell.files import UnreadableFile, read_file

__all__ = ["load_record", "load_state"]


def load_state(path: str) -> AgentState:
    """The final state in a run file: an audit log (JSONL) or a state JSON document (compact
    or indented). Anything else is a ``StateDecodeError`` saying what the file is."""
    return load_record(path).final


def load_record(path: str, data: bytes | None = None) -> RunRecord:
    """The record of the run in a run file: every stretch of it for an audit log, the end
    alone (its start rewound) for a state document; ``data``: the file's bytes, when the
    caller has read them."""
    file = Path(path)
    if data is None:
        try:
            data = read_file(file)
        except FileNotFoundError:
            raise StateDecodeError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise StateDecodeError(f"{path}: is a directory, not a run file") from None
        except UnreadableFile as exc:
            raise StateDecodeError(f"{path}: {exc.strerror}") from None
    if not data.strip():
        raise StateDecodeError(f"{path}: empty file (a run file is an audit log or a state)")
    first = _json_or_none(data.split(b"\n", 1)[0])
    if isinstance(first, dict) and "seq" in first and "prev_hash" in first:
        return read_run(file, data)
    document = first if first is not None and b"\n" not in data.strip() else _json_or_none(data)
    kind = document.get("kind") if isinstance(document, dict) else None
    if kind == "AgentState":
        try:
            return RunRecord.from_state(from_json(data, AgentState))
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
        return loads(data.decode("utf-8"))
    except (UnicodeDecodeError, StateDecodeError):
        return None
