"""Blobs beside an audit log (docs/design/content.md): written once, before the records
that refer to them, and checked by verify."""

from __future__ import annotations

import pytest

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    AuditLogTampered,
    ImagePart,
    MemoryBlobStore,
    tool,
)
from agents.cli import main
from agents.records.content import BlobStore
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 800  # ~200 KB


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def audited(path, steps: int = 5, **options) -> AgentState:
    script = [call("add", a=i, b=1) for i in range(steps - 1)] + [reply("done")]
    image = ImagePart.from_bytes(PNG, "image/png")
    loop = AgentLoop(
        ScriptedDriver(script),
        tools=[add],
        max_steps=steps,
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    with AuditLog.open(path, **options) as log:
        return loop.with_listeners(log).run(
            AgentState.initial("s", messages=[["what is this?", image]])
        )


def test_an_image_is_stored_once_beside_the_log_and_verified(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    final = audited(path, steps=20)
    files = [p for p in (tmp_path / "run.jsonl.blobs").rglob("*") if p.is_file()]
    image = final.messages[0].parts[1]
    assert [p.name for p in files] == [image.blob.sha256] and files[0].read_bytes() == PNG
    lines = path.read_bytes().splitlines()
    assert sum(image.blob.sha256.encode() in line for line in lines) == 1  # the start record
    assert max(len(line) for line in lines) < 5_000  # references, never bytes
    assert AuditLog.check(path).blobs == 1
    assert AuditLog.read(path).messages[0].parts[1].data() == PNG
    assert main(["verify", str(path)]) == 0
    assert "1 blobs present and whole" in capsys.readouterr().out


def test_verify_names_a_swapped_or_missing_blob(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    final = audited(path)
    sha = final.messages[0].parts[1].blob.sha256
    stored = tmp_path / "run.jsonl.blobs" / sha[:2] / sha
    stored.write_bytes(PNG[:-1] + b"\x00")  # swapped for other bytes of the same size
    with pytest.raises(AuditLogTampered, match=rf"line 1: blob sha256:{sha} was altered"):
        AuditLog.verify(path)
    assert main(["verify", str(path)]) == 1
    assert f"blob sha256:{sha} was altered" in capsys.readouterr().err
    stored.unlink()
    with pytest.raises(AuditLogTampered, match=rf"line 1: blob sha256:{sha} is missing"):
        AuditLog.verify(path)


def test_blobs_go_where_the_log_is_told(tmp_path):
    store = MemoryBlobStore()
    path = tmp_path / "run.jsonl"
    audited(path, blobs=store)
    assert len(store) == 1 and not (tmp_path / "run.jsonl.blobs").exists()
    assert AuditLog.check(path, blobs=store).blobs == 1
    with pytest.raises(AuditLogTampered, match="is missing"):
        AuditLog.verify(path)  # the default folder holds nothing


class _Full(MemoryBlobStore):
    def put(self, data: bytes, media_type: str):
        raise OSError(28, "No space left on device")


def test_a_blob_that_cannot_be_stored_leaves_no_record_referring_to_it(tmp_path):
    path = tmp_path / "run.jsonl"
    store: BlobStore = _Full()
    final = audited(path, blobs=store)
    assert final.status.value == "failed" and "No space left" in final.execution.error.message
    assert b'"kind":"Blob"' not in path.read_bytes()
