"""Run files: an audit log (JSONL) or a state document, read into the record of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.audit.blobs import log_blobs
from agents.audit.chain import ZIP
from agents.audit.reading import read_run, read_runs
from agents.drivers.replay import RECORD_KIND
from agents.errors import StateDecodeError
from agents.records.arguments import path as checked_path
from agents.records.blobs import BlobStore, bind_blobs
from agents.records.codec import from_json, loads
from agents.records.state import AgentState
from agents.replaying import RunRecord
from agents.shell.files import UnreadableFile, read_file

__all__ = ["chosen_runs", "load_record", "load_records", "load_state"]


def load_state(path: str) -> AgentState:
    """The final state in a run file: an audit log (JSONL), a bundle of one
    (``agents bundle``) or a state JSON document (compact or indented); a log's parts read
    their bytes from its blobs (beside it, or in the bundle). Anything else is a
    ``StateDecodeError`` saying what the file is."""
    return load_record(path).final


def load_record(path: str, data: bytes | None = None) -> RunRecord:
    """The record of the run in a run file — of an audit log's last run, every stretch of
    it; of a state document, the end alone (its start rewound); ``data``: the file's bytes,
    when the caller has read them."""
    return _load(path, data, every=False)[-1]


def load_records(path: str, data: bytes | None = None) -> list[RunRecord]:
    """The record of every run in a run file: each top-level run of an audit log, in the
    order they started (a log may hold many); the one run of a state document."""
    return _load(path, data, every=True)


def chosen_runs(
    records: list[RunRecord], run: int | None, path: str
) -> list[tuple[int, RunRecord]]:
    """``(number, record)`` of run ``run`` (1-based; negative counts from the end), or of
    every run when ``None``; a ``StateDecodeError`` naming how many there are when the
    file holds no such run."""
    if run is None:
        return list(enumerate(records, start=1))
    count = len(records)
    number = run if run > 0 else count + 1 + run
    if not 1 <= number <= count:
        held = "1 run" if count == 1 else f"{count} runs"
        raise StateDecodeError(f"{path}: no run {run}: the file holds {held}")
    return [(number, records[number - 1])]


def _load(path: str, data: bytes | None, *, every: bool) -> list[RunRecord]:
    file = Path(checked_path(path, "a run file's path"))
    if data is None:
        try:
            data = read_file(file)
        except IsADirectoryError:
            raise StateDecodeError(f"{path}: is a directory, not a run file") from None
        except UnreadableFile as exc:
            raise StateDecodeError(f"{path}: {exc.strerror}") from None
    if not data.strip():
        raise StateDecodeError(f"{path}: empty file (a run file is an audit log or a state)")
    store: BlobStore | None = None  # where the parts of an audit log's runs read their bytes
    if data.startswith(ZIP):  # a bundle (``agents bundle``): its log, named inside it
        from agents.audit.bundle import BundleBlobs, bundled_log

        name, data = bundled_log(path, data)
        store = BundleBlobs(path, name)
        path, file = f"{path}/{name}", Path(path, name)
    first = _json_or_none(data.split(b"\n", 1)[0])
    if isinstance(first, dict) and "seq" in first and "prev_hash" in first:
        records = read_runs(file, data) if every else [read_run(file, data)]
        store = store or log_blobs(file)
        if store is not None:
            for record in records:
                bind_blobs(record, store)
        return records
    document = first if first is not None and b"\n" not in data.strip() else _json_or_none(data)
    kind = document.get("kind") if isinstance(document, dict) else None
    if kind == "AgentState":
        try:
            return [RunRecord.from_state(from_json(data, AgentState))]
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
