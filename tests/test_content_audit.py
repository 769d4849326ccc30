"""Blobs beside an audit log (docs/design/content.md): written once, before the records
that refer to them, and checked by verify."""

from __future__ import annotations

from pathlib import Path

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
from agents.records.blobs import BlobStore
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


def bundled(tmp_path, name: str = "run.zip") -> tuple[Path, Path]:
    """A run audited into ``run.jsonl`` and bundled into ``name``: (log, bundle)."""
    path = tmp_path / "run.jsonl"
    audited(path)
    bundle = tmp_path / name
    assert main(["bundle", str(path), "-o", str(bundle)]) == 0
    return path, bundle


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
    assert "1 blob present and whole" in capsys.readouterr().out


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


class _Full:
    """A blob store whose disk is full."""

    def put(self, data: bytes, media_type: str):
        raise OSError(28, "No space left on device")

    def get(self, blob):
        raise AssertionError("never read")

    def has(self, blob) -> bool:
        return False


def test_a_blob_that_cannot_be_stored_leaves_no_record_referring_to_it(tmp_path):
    path = tmp_path / "run.jsonl"
    store: BlobStore = _Full()
    final = audited(path, blobs=store)
    assert final.status.value == "failed" and "No space left" in final.execution.error.message
    assert b'"kind":"Blob"' not in path.read_bytes()


def test_a_bundle_holds_the_log_and_its_blobs_and_the_commands_read_it(tmp_path, capsys):
    import zipfile

    path, bundle = bundled(tmp_path)
    first = bundle.read_bytes()
    assert main(["bundle", str(path), "-o", str(tmp_path / "again.zip")]) == 0
    assert (tmp_path / "again.zip").read_bytes() == first  # the same bytes every time
    names = zipfile.ZipFile(bundle).namelist()
    assert names[0] == "run.jsonl" and len(names) == 2 and names[1].startswith("run.jsonl.blobs/")
    for command in (["verify"], ["inspect"], ["replay", "--verify"]):
        assert main([command[0], str(bundle), *command[1:]]) == 0, command
    assert main(["report", str(bundle), "-o", str(tmp_path / "report.html")]) == 0
    assert "1 blob present and whole" in capsys.readouterr().out


def test_every_reader_of_run_files_reads_a_bundle(tmp_path, capsys):
    """``diff``, ``export-otel``, ``regress`` and ``load_record`` take a bundle as they take
    its log (they said "not JSON" of one), naming a broken line by the bundle."""
    import zipfile

    from agents.runfiles import load_record, load_records
    from agents.testing.regression import regress

    path = tmp_path / "run.jsonl"
    final = audited(path)
    bundle = tmp_path / "run.zip"
    assert main(["bundle", str(path), "-o", str(bundle)]) == 0
    assert load_record(str(bundle)).final == load_record(str(path)).final == final
    assert len(load_records(str(bundle))) == 1
    capsys.readouterr()
    assert main(["diff", str(bundle), str(path)]) == 0
    assert "the same story" in capsys.readouterr().out
    loop = AgentLoop(
        ScriptedDriver([call("add", a=i, b=1) for i in range(4)] + [reply("done")]),
        tools=[add],
        max_steps=5,
    )
    report = regress(loop, [bundle], tools="record")
    assert report.ok and report.runs[0].source == str(bundle)
    # export-otel reads the bundle before it sends: here to a port nothing listens on.
    assert main(["export-otel", str(bundle), "--endpoint", "http://127.0.0.1:9/", "--timeout", "1"])
    assert "did not take the spans" in capsys.readouterr().err
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b"{broken\n"
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as out:
        out.writestr("run.jsonl", b"".join(lines))
    assert main(["diff", str(tmp_path / "bad.zip"), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agents diff: {tmp_path / 'bad.zip'}/run.jsonl: line 3"), err


def test_verify_of_a_bundle_refuses_a_blobs_folder(tmp_path, capsys):
    """``--blobs`` names a log's folder: with a bundle it was read in place of the
    bundle's own blobs, and an intact bundle failed with "blob ... is missing"."""
    _, bundle = bundled(tmp_path)
    (tmp_path / "empty").mkdir()
    capsys.readouterr()
    assert main(["verify", str(bundle), "--blobs", str(tmp_path / "empty")]) == 2
    assert "a bundle holds its blobs" in capsys.readouterr().err
    assert main(["verify", str(bundle)]) == 0


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_blobs_get_the_mode_of_the_log_beside_them(tmp_path, umask):
    """The umask's mode, as the log has it: blobs were written with mkstemp's 600, so one
    who may read the log could not read its images, and ``verify`` failed for them."""
    import subprocess
    import sys

    script = (
        f"import os; os.umask({umask}); from agents import FileBlobStore; "
        "FileBlobStore('blobs').put(b'\\x89PNG\\r\\n\\x1a\\n', 'image/png'); "
        "open('log.jsonl', 'w').close()"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    (blob,) = (p for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    mode = (tmp_path / "log.jsonl").stat().st_mode & 0o777
    assert blob.stat().st_mode & 0o777 == mode == 0o666 & ~umask
    assert not list((tmp_path / "blobs").rglob(".*"))  # no temporary file left


def test_runs_read_from_a_log_or_its_bundle_read_their_parts_bytes(tmp_path):
    """``load_record`` and ``regress`` read a log's blobs beside it, and a bundle's inside
    it, as ``AuditLog.read_run`` does: a hook reading an image's bytes made a run read back
    fail (BlobNotFound), and ``regress`` called the unchanged agent changed."""
    import zipfile

    from agents import BlobCorrupted, BlobNotFound, HookTrigger, hook
    from agents.runfiles import load_record
    from agents.testing.regression import regress

    @hook(HookTrigger.BEFORE_INFERENCE)
    def sizes(context):
        for message in context.request.messages:
            for part in message.parts:
                if isinstance(part, ImagePart):
                    assert len(part.data()) == len(PNG)
        return context

    def loop():
        script = [call("add", a=i, b=1) for i in range(2)] + [reply("done")]
        ids, clock = SequentialIds(), TickingClock()
        return AgentLoop(ScriptedDriver(script), tools=[add], hooks=[sizes], ids=ids, clock=clock)

    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        image = ImagePart.from_bytes(PNG, "image/png")
        loop().with_listeners(log).run(AgentState.initial("s", messages=[["what?", image]]))
    bundle = tmp_path / "run.zip"
    assert main(["bundle", str(path), "-o", str(bundle)]) == 0
    for source in (path, bundle):
        assert load_record(str(source)).final.messages[0].parts[1].data() == PNG
        report = regress(loop(), [source], tools="record")
        assert report.ok, report.summary()
    # What a bundle's blob store says of a blob it lacks, and of one swapped in it.
    blob = load_record(str(bundle)).final.messages[0].parts[1].blob
    with zipfile.ZipFile(bundle) as pristine:
        entries = {info.filename: pristine.read(info) for info in pristine.infolist()}
    name = next(entry for entry in entries if entry.endswith(blob.sha256))
    for altered, error in ((b"", BlobNotFound), (PNG[:-1] + b"!", BlobCorrupted)):
        with zipfile.ZipFile(tmp_path / "bad.zip", "w") as out:
            for entry, data in entries.items():
                if entry != name or altered:
                    out.writestr(entry, altered if entry == name else data)
        part = load_record(str(tmp_path / "bad.zip")).final.messages[0].parts[1]
        with pytest.raises(error, match=blob.sha256):
            part.data()


def test_a_bundle_is_known_by_its_bytes_and_is_no_tampered_log(tmp_path, capsys):
    """A bundle not named ``*.zip`` is read as a bundle by the commands; given where a log
    is read (``AuditLog.read``, ``check``), a zip is said to be one (bad input), where it
    was "line 1 is not a JSON record", tampering."""
    from agents import StateDecodeError

    _, bundle = bundled(tmp_path, "run.bundle")
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 0
    assert capsys.readouterr().out.startswith(f"{bundle}/run.jsonl: intact and complete")
    for read in (AuditLog.read, AuditLog.read_run, AuditLog.check):
        with pytest.raises(StateDecodeError, match="a zip, not an audit log"):
            read(bundle)


def test_a_bundle_with_a_swapped_blob_fails_verify(tmp_path, capsys):
    import zipfile

    path = tmp_path / "run.jsonl"
    final = audited(path)
    sha = final.messages[0].parts[1].blob.sha256
    bundle = tmp_path / "run.zip"
    with zipfile.ZipFile(bundle, "w") as out:
        out.write(path, "run.jsonl")
        out.writestr(f"run.jsonl.blobs/{sha[:2]}/{sha}", PNG[:-1] + b"\x00")
    assert main(["verify", str(bundle)]) == 1
    assert f"blob sha256:{sha} was altered" in capsys.readouterr().err


@pytest.mark.parametrize(
    "entry",
    [
        "../escape.jsonl",
        "run.jsonl.blobs/../../x",
        "/etc/passwd",
        "run.jsonl.blobs/ab/cd",
        "b.jsonl",
    ],
)
def test_a_hostile_bundle_is_refused_in_one_line(tmp_path, capsys, entry):
    import zipfile

    path = tmp_path / "run.jsonl"
    audited(path)
    bundle = tmp_path / "bad.zip"
    with zipfile.ZipFile(bundle, "w") as out:
        out.write(path, "run.jsonl")
        out.writestr(entry, b"x")
    assert main(["verify", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "escape.jsonl").exists()


def test_bundle_refuses_what_is_no_log_and_writes_nothing(tmp_path, capsys):
    """A zip, an empty file, a log with a line changed: refused in one line, with no
    bundle written (a zip was bundled as a log, into a bundle no reader took)."""
    path = tmp_path / "run.jsonl"
    audited(path)
    assert main(["bundle", str(path), "-o", str(tmp_path / "run.zip")]) == 0
    (tmp_path / "empty.jsonl").write_bytes(b"")
    lines = path.read_bytes().splitlines(keepends=True)
    (tmp_path / "changed.jsonl").write_bytes(
        b"".join([*lines[:2], lines[2].replace(b'"number":2', b'"number":3', 1), *lines[3:]])
    )
    for name, code, words in [
        ("run.zip", 2, "a zip, not an audit log"),  # not "tampered" (exit 1): no log at all
        ("empty.jsonl", 2, "an empty file, not an audit log"),
        ("changed.jsonl", 1, "line 3 was modified"),
    ]:
        capsys.readouterr()
        out = tmp_path / f"{name}.bundle.zip"
        assert main(["bundle", str(tmp_path / name), "-o", str(out)]) == code, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_log_of_any_name_is_bundled_as_its_readers_take_it(tmp_path, capsys):
    """``run.log`` goes into the zip as ``run.jsonl`` (a bundle holds one ``*.jsonl``):
    the bundle written is one that ``verify`` reads."""
    path = tmp_path / "run.log"
    audited(path, blobs=tmp_path / "run.log.blobs")
    assert main(["bundle", str(path), "-o", str(tmp_path / "run.zip")]) == 0
    assert main(["verify", str(tmp_path / "run.zip")]) == 0
    assert "1 blob present and whole" in capsys.readouterr().out


def test_bundle_says_which_output_it_cannot_write(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    audited(path)
    for out, words in [
        (tmp_path / "no" / "run.zip", "No such file or directory"),
        (tmp_path, "it is a directory"),
    ]:
        assert main(["bundle", str(path), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == f"agents bundle: cannot write {out}: {words}\n", err


def test_a_file_that_is_no_zip_is_refused(tmp_path, capsys):
    (tmp_path / "not.zip").write_bytes(b"PK\x03\x04 truncated")
    assert main(["inspect", str(tmp_path / "not.zip")]) == 2
    assert "not a bundle" in capsys.readouterr().err


def _bundle_of(tmp_path, entries) -> str:
    """A zip holding the audited ``run.jsonl`` and ``entries``: (name, bytes, compression)."""
    import zipfile

    bundle = tmp_path / "bad.zip"
    with zipfile.ZipFile(bundle, "w") as out:
        out.write(tmp_path / "run.jsonl", "run.jsonl")
        for name, data, compression in entries:
            out.writestr(name, data, compress_type=compression)
    return str(bundle)


def test_a_bundle_whose_blobs_unpack_past_its_own_size_is_refused(tmp_path, capsys):
    """A blob deflated to a thousandth of its size (a zip bomb: 20 MB a blob from 20 KB)
    is refused before anything is unpacked: a bundle stores its blobs as they are."""
    import zipfile

    sha = audited(tmp_path / "run.jsonl").messages[0].parts[1].blob.sha256
    name = f"run.jsonl.blobs/{sha[:2]}/{sha}"
    bundle = _bundle_of(tmp_path, [(name, PNG, zipfile.ZIP_DEFLATED)])
    assert main(["verify", bundle]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "more bytes than the bundle holds" in err
        and "stores them uncompressed" in err
    )
    # The same blob stored as `agents bundle` stores it is taken.
    assert main(["verify", _bundle_of(tmp_path, [(name, PNG, zipfile.ZIP_STORED)])]) == 0


def test_a_bundle_holding_a_blob_its_log_does_not_refer_to_is_refused(tmp_path, capsys):
    import hashlib
    import zipfile

    audited(tmp_path / "run.jsonl")
    data = b"\0" * 1_000
    sha = hashlib.sha256(data).hexdigest()
    bundle = _bundle_of(tmp_path, [(f"run.jsonl.blobs/{sha[:2]}/{sha}", data, zipfile.ZIP_STORED)])
    assert main(["verify", bundle]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the log does not refer to" in err and sha in err


def test_a_bundle_whose_log_has_a_broken_line_referring_to_a_blob_fails_verify(tmp_path, capsys):
    """The bundle is read (its blobs found up to the broken line) and ``verify`` names the
    line, as for the log itself: exit 1, not a bad-input error naming no file."""
    import zipfile

    path = tmp_path / "run.jsonl"
    audited(path)
    lines = path.read_bytes().splitlines(keepends=True)
    assert b'"kind":"Blob"' in lines[0]
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as out:
        out.writestr("run.jsonl", b"".join([lines[0][:-40] + b"\n", *lines[1:]]))
    assert main(["verify", str(tmp_path / "bad.zip")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"agents verify: {tmp_path / 'bad.zip'}/run.jsonl: line 1"), err


def test_what_the_commands_say_of_a_bundle_names_the_bundle(tmp_path, capsys, monkeypatch):
    """A bundle is read where it is, nothing unpacked (no temporary folder to name): what
    ``verify`` says, and the errors, name the log inside it, ``run.zip/run.jsonl``; the
    report's source is the bundle, and the report is the same bytes every time."""
    import tempfile
    import zipfile

    path, bundle = bundled(tmp_path)
    made: list[str] = []
    mkdtemp = tempfile.mkdtemp

    def unpacked(*args, **options):
        made.append(mkdtemp(*args, **options))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", unpacked)
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 0
    assert capsys.readouterr().out.startswith(f"{bundle}/run.jsonl: intact and complete")
    reports = []
    for index in range(2):
        report = tmp_path / f"report-{index}.html"
        assert main(["report", str(bundle), "-o", str(report)]) == 0
        reports.append(report.read_bytes())
    assert reports[0] == reports[1] and f"<code>{bundle}</code>".encode() in reports[0]
    for command in (["inspect"], ["replay", "--verify"]):
        assert main([*command, str(bundle)]) == 0
    assert made == []
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"number":2', b'"number":3', 1)
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as out:
        out.writestr("run.jsonl", b"".join(lines))
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "bad.zip")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"agents verify: {tmp_path / 'bad.zip'}/run.jsonl: line 3")
    assert "agents-bundle-" not in err


def test_a_record_refering_to_a_blob_the_run_does_not_hold_is_not_written():
    """``keep_blobs`` before each record: a reference whose bytes are neither in the store
    nor in the run stops the record (BlobNotFound), rather than leave it dangling."""
    from agents import BlobNotFound
    from agents.audit.blobs import keep_blobs

    image = ImagePart.from_bytes(PNG, "image/png")
    payload = {"state": {"messages": [{"kind": "Blob", **image.blob.to_dict()}]}}
    with pytest.raises(BlobNotFound, match=image.blob.sha256):
        keep_blobs(AgentState.initial("s"), payload, MemoryBlobStore())
    store = MemoryBlobStore()
    keep_blobs(AgentState.initial(messages=[image]), payload, store)  # held: stored first
    assert store.has(image.blob)


def test_a_bundle_whose_log_inflates_far_past_its_packed_size_is_refused_unread(tmp_path, capsys):
    """A log entry deflated to a thousandth of its size (a zip bomb: 70 MB from 70 KB) is
    refused before it is inflated, where it was read whole into memory up to 1 GB; a log
    packed as `agents bundle` packs it is taken."""
    import tracemalloc
    import zipfile

    audited(tmp_path / "run.jsonl")
    data = (tmp_path / "run.jsonl").read_bytes()
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w") as out:
        out.writestr("run.jsonl", data + b" " * 70_000_000, compress_type=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 100_000
    tracemalloc.start()
    code = main(["verify", str(bomb)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "unpack" in err and "run.jsonl" in err
    assert peak < 10_000_000  # nothing inflated
    packed = tmp_path / "packed.zip"
    assert main(["bundle", str(tmp_path / "run.jsonl"), "-o", str(packed)]) == 0
    assert main(["verify", str(packed)]) == 0


def _garbled(bundle: Path, entry: str) -> None:
    """``entry``'s packed bytes in the zip ``bundle`` overwritten in their middle: its
    headers and sizes stand, its compressed stream is broken."""
    import struct
    import zipfile

    with zipfile.ZipFile(bundle) as zipped:
        info = zipped.getinfo(entry)
    data = bytearray(bundle.read_bytes())
    name_size, extra_size = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_size + extra_size
    middle = start + info.compress_size // 3
    data[middle : middle + 16] = bytes(range(0xF0, 0x100))
    bundle.write_bytes(bytes(data))


@pytest.mark.parametrize("compression", ["deflate", "bzip2", "lzma"])
def test_a_bundle_whose_packed_stream_is_broken_is_refused_in_one_line(
    tmp_path, capsys, compression
):
    """A bundle's log or blob packed with any method zip has, its stream broken: the
    commands say so in one line and reading the part's bytes fails typed (a broken
    deflate or LZMA stream was a traceback: zlib's and lzma's own errors)."""
    import hashlib
    import zipfile

    from agents import BlobCorrupted
    from agents.runfiles import load_record

    method = {
        "deflate": zipfile.ZIP_DEFLATED,
        "bzip2": zipfile.ZIP_BZIP2,
        "lzma": zipfile.ZIP_LZMA,
    }[compression]
    # Bytes that do not compress (a blob packed smaller than itself is a zip bomb's mark).
    noise = PNG[:8] + b"".join(hashlib.sha256(i.to_bytes(2, "big")).digest() for i in range(2_000))
    path = tmp_path / "run.jsonl"
    loop = AgentLoop(ScriptedDriver([reply("done")]), clock=TickingClock(), ids=SequentialIds())
    with AuditLog.open(path) as log:
        image = ImagePart.from_bytes(noise, "image/png")
        loop.with_listeners(log).run(AgentState.initial("s", messages=[["what?", image]]))
    blob = f"run.jsonl.blobs/{image.blob.sha256[:2]}/{image.blob.sha256}"
    for broken in ("run.jsonl", blob):
        bundle = tmp_path / f"{compression}.zip"
        with zipfile.ZipFile(bundle, "w") as out:
            out.write(path, "run.jsonl", compress_type=method)
            out.writestr(blob, noise, compress_type=method)
        _garbled(bundle, broken)
        for command in ("verify", "inspect", "replay"):
            code = main([command, str(bundle)])
            err = capsys.readouterr().err
            if command == "verify" or broken == "run.jsonl":  # (the others need no blob)
                assert code in (1, 2) and str(bundle) in err, (broken, command, code)
            assert code in (0, 1, 2) and err.count("\n") == (code != 0), (broken, command, err)
        if broken == blob:
            part = load_record(str(bundle)).final.messages[0].parts[1]
            with pytest.raises(BlobCorrupted, match=image.blob.sha256):
                part.data()
