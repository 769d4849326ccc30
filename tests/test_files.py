"""Paths that are not files a run can be read from: a device that never ends (``/dev/zero``
behind a run file's name), a pipe nobody writes to, a file larger than memory. Every reader
of a file a user names (run files, audit logs, recordings, definitions, keys) and every CLI
command that reads one says so with its typed error, at once; none reads forever, waits
forever or dies with a ``MemoryError``.

Each case runs in a child process whose address space is capped (2 GB) and with a time
limit, so that a reader that did read ``/dev/zero`` fails the test without taking the
machine's memory, and one that waits on the pipe fails it in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="a POSIX system"
)

LIMIT = 2 * 1024**3  # bytes of address space for a child process


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _child(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        preexec_fn=_capped,
    )


@pytest.fixture
def hostile(tmp_path):
    """Paths with the names of the files each reader expects, standing for what they are
    not: ``/dev/zero``, a pipe without a writer, a sparse file of a terabyte."""
    found = {}
    for suffix in (".jsonl", ".json", ".toml", ".pem"):
        zero = tmp_path / f"zero{suffix}"
        zero.symlink_to("/dev/zero")
        pipe = tmp_path / f"pipe{suffix}"
        os.mkfifo(pipe)
        huge = tmp_path / f"huge{suffix}"
        with huge.open("wb") as file:
            file.truncate(2**40)
        found[suffix] = {"zero": zero, "pipe": pipe, "huge": huge}
    return found


READERS = textwrap.dedent(
    """
    import json, signal, sys
    from agents import AgentError, AuditLog, ReplayDriver
    from agents.audit.keys import load_public_key
    from agents.definitions import AgentDefinition
    from agents.runfiles import load_state

    def too_slow(*_):
        raise TimeoutError("still reading after 20 s")

    signal.signal(signal.SIGALRM, too_slow)
    readers = {
        "AuditLog.verify": AuditLog.verify,
        "AuditLog.read": AuditLog.read,
        "load_state": load_state,
        "ReplayDriver.from_file": ReplayDriver.from_file,
        "AgentDefinition.load": AgentDefinition.load,
        "load_public_key": load_public_key,
    }
    name, path = sys.argv[1], sys.argv[2]
    signal.alarm(20)
    try:
        readers[name](path)
        found = "read"
    except AgentError as exc:
        found = f"typed {type(exc).__name__}: {exc}"
    except BaseException as exc:
        found = f"raw {type(exc).__name__}: {exc}"
    print(json.dumps(found))
    """
)

_READER_SUFFIX = {
    "AuditLog.verify": ".jsonl",
    "AuditLog.read": ".jsonl",
    "load_state": ".json",
    "ReplayDriver.from_file": ".json",
    "AgentDefinition.load": ".toml",
    "load_public_key": ".pem",
}
_SAYS = {
    "zero": "a character device, not a regular file",
    "pipe": "a pipe, not a regular file",
    "huge": "too large to read into memory (1,099,511,627,776 bytes)",
}


@pytest.mark.parametrize("what", sorted(_SAYS))
@pytest.mark.parametrize("reader", sorted(_READER_SUFFIX))
def test_readers_refuse_what_is_not_a_file(reader, what, hostile, tmp_path):
    """Each library reader: its typed error (``AgentError``), naming the path and what it
    is, within the time limit and the memory cap."""
    path = hostile[_READER_SUFFIX[reader]][what]
    done = _child(READERS, reader, str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found.startswith("typed "), found
    assert str(path) in found and _SAYS[what] in found, found


@pytest.mark.parametrize("what", sorted(_SAYS))
@pytest.mark.parametrize(
    "command",
    [
        ["inspect", "{jsonl}"],
        ["verify", "{jsonl}"],
        ["replay", "{jsonl}"],
        ["diff", "{jsonl}", "{json}"],
        ["report", "{jsonl}", "-o", "out.html"],
        ["regress", "regression_agents:agent", "{jsonl}"],
        ["run", "{toml}", "--input", "hi", "--out", "out.jsonl"],
    ],
    ids=lambda command: command[0] if isinstance(command, list) else command,
)
def test_cli_commands_refuse_what_is_not_a_file(command, what, hostile, tmp_path):
    """Each command reading a file: exit 2, one line naming the path and what it is, no
    traceback, no output file."""
    paths = {suffix.lstrip("."): str(found[what]) for suffix, found in hostile.items()}
    args = [part.format(**paths) for part in command]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    done = subprocess.run(
        [sys.executable, "-m", "agents", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
        preexec_fn=_capped,
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert _SAYS[what] in done.stderr, done.stderr
    assert not (tmp_path / "out.html").exists() and not (tmp_path / "out.jsonl").exists()


def test_a_command_out_of_memory_says_so_in_one_line(monkeypatch, capsys, tmp_path):
    """Whatever runs out of memory inside a command (an input this machine cannot hold):
    one line and exit 2, as any other bad input."""
    from agents.cli import history, main

    def exhausted(args, out):
        raise MemoryError

    monkeypatch.setattr(history, "inspect", exhausted)
    assert main(["inspect", str(tmp_path / "run.jsonl")]) == 2
    assert capsys.readouterr().err == "agents inspect: out of memory\n"


def test_regular_files_read_as_before(tmp_path):
    """A run file, a definition with Windows line endings and a key read from regular files
    (symlinked, too) as they always were."""
    from agents import AgentState
    from agents.definitions import AgentDefinition
    from agents.runfiles import load_state
    from agents.shell.files import read_file

    state = AgentState.initial("You help.", messages=["hi"])
    run = tmp_path / "state.json"
    run.write_text(state.to_json())
    link = tmp_path / "link.json"
    link.symlink_to(run)
    assert load_state(str(link)) == state
    definition = tmp_path / "agent.toml"
    definition.write_bytes(b'name = "helper"\r\nsystem_prompt = """You\r\nhelp."""\r\n')
    assert AgentDefinition.load(definition).system_prompt == "You\nhelp."
    assert read_file(definition) == definition.read_bytes()
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        read_file(tmp_path)


def _unopenable(tmp_path: Path) -> dict[str, str]:
    """Paths no file can have: a NUL character in them, a name past the system's limit of
    255 bytes, a regular file's path used as a folder."""
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    return {
        "nul": str(tmp_path / "a\x00b"),
        "long": str(tmp_path / ("x" * 300)),
        "under a file": str(plain / "run"),
    }


def test_readers_say_a_path_no_file_can_have_is_unreadable(tmp_path):
    """Each reader of a file a user names: its typed error naming the path, where a path
    holding a NUL was os's ``ValueError``, and a name too long or a path under a regular
    file a bare ``OSError`` from the audit log's readers and ``load_record``; a missing
    recording was a ``FileNotFoundError`` from ``ReplayDriver.from_file``."""
    from agents import AgentError, AuditLog, ReplayDriver
    from agents.audit.keys import load_public_key
    from agents.definitions import AgentDefinition
    from agents.evals import Dataset, EvalReport
    from agents.runfiles import load_record, load_state

    readers = {
        "AuditLog.verify": AuditLog.verify,
        "AuditLog.read": AuditLog.read,
        "AuditLog.read_run": AuditLog.read_run,
        "AuditLog.check": AuditLog.check,
        "load_state": load_state,
        "load_record": load_record,
        "ReplayDriver.from_file": ReplayDriver.from_file,
        "AgentDefinition.load": AgentDefinition.load,
        "load_public_key": load_public_key,
        "Dataset.load": Dataset.load,
        "EvalReport.load": EvalReport.load,
    }
    missing = {"missing": str(tmp_path / "missing.json")}
    for kind, path in {**_unopenable(tmp_path), **missing}.items():
        for name, reader in readers.items():
            with pytest.raises(AgentError) as caught:
                reader(path)
            said = str(caught.value).replace("\x00", "")
            assert path.replace("\x00", "") in said, (kind, name, said)


def test_writers_say_a_path_no_file_can_have_is_unusable(tmp_path):
    """``AuditLog.open`` a ``ResourceError`` naming the path; a ``FileBlobStore`` there
    holds nothing and cannot store (``ContentError``), and a ``SQLiteSessionStore`` is no
    usable store (``StateDecodeError``), where each raised os's or sqlite3's errors."""
    from agents import (
        ContentError,
        FileBlobStore,
        ResourceError,
        SQLiteSessionStore,
        StateDecodeError,
    )
    from agents.audit import AuditLog

    png = b"\x89PNG\r\n\x1a\n" + b"x" * 100
    for kind, path in _unopenable(tmp_path).items():
        with pytest.raises(ResourceError, match="cannot open") as caught:
            AuditLog.open(path + ".jsonl")
        assert path.replace("\x00", "") in str(caught.value).replace("\x00", ""), kind
        store = FileBlobStore(path)
        blob = __import__("agents").Blob.of(png, "image/png")
        assert not store.has(blob), kind
        with pytest.raises(ContentError, match="cannot store a blob"):
            store.put(png, "image/png")
        with pytest.raises(StateDecodeError, match="not a usable SQLite store"):
            SQLiteSessionStore(path + ".db")


NO_PATHS = (5, None, b"run.jsonl", 1.5, ["run.jsonl"])


def test_what_takes_a_path_says_so_of_what_is_no_path(tmp_path, monkeypatch):
    """Every function taking a file's or a folder's path, given a number, ``None``, bytes,
    a float or a list: ``InvalidType`` naming the function and the parameter, at once,
    where each raised Python's bare ``TypeError`` (os's words, naming neither) — and
    bytes were taken by some (``AuditLog.verify``) and not by others (``AuditLog.open``)."""
    from agents import (
        AgentLoop,
        AudioPart,
        AuditLog,
        FileBlobStore,
        ImagePart,
        InvalidType,
        RecordingInterceptor,
        ReplayDriver,
        SQLiteSessionStore,
    )
    from agents.definitions import AgentDefinition
    from agents.evals import Case, Dataset, EvalReport, compare, evaluate, rescore
    from agents.evals import scorers as s
    from agents.mcp import MCPServerStdio
    from agents.runfiles import load_record, load_records, load_state
    from agents.testing import ScriptedDriver, reply
    from agents.testing.regression import accept

    monkeypatch.chdir(tmp_path)  # where a path taken by mistake would be written
    loop = AgentLoop(ScriptedDriver([reply("4")]))
    report = evaluate(loop, [Case("sum", "2+2", "4")], [s.equals()])
    takers = {
        "AuditLog.open: path": AuditLog.open,
        "AuditLog.verify: path": AuditLog.verify,
        "AuditLog.verify: path ": AuditLog.check,  # (check is verify telling more)
        "AuditLog.read: path": AuditLog.read,
        "AuditLog.read_runs: path": AuditLog.read_runs,
        "AuditLog.read_run: path": AuditLog.read_run,
        "a run file's path": load_state,
        "a run file's path ": load_record,
        "a run file's path  ": load_records,
        "ReplayDriver.from_file: path": ReplayDriver.from_file,
        "RecordingInterceptor: path": RecordingInterceptor,
        "AgentDefinition.load: path": AgentDefinition.load,
        "Dataset.load: path": Dataset.load,
        "EvalReport.load: path": EvalReport.load,
        "write_html: path": report.write_html,
        "Comparison.write_html: path": compare(report, report).write_html,
        "compare: baseline": lambda value: compare(value, report),
        "compare: candidate": lambda value: compare(report, value),
        "rescore: out": lambda value: rescore(value, [s.equals()]),
        "evaluate: out": lambda value: evaluate(loop, [Case("x", "1")], [s.equals()], out=value),
        "accept: path": lambda value: accept(loop, value),
        "FileBlobStore: path": FileBlobStore,
        "SQLiteSessionStore: path": SQLiteSessionStore,
        "ImagePart.from_path: path": ImagePart.from_path,
        "AudioPart.from_path: path": AudioPart.from_path,
        "MCPServerStdio: cwd": lambda value: MCPServerStdio("true", cwd=value),
    }
    wrong = []
    for name, taker in takers.items():
        for value in NO_PATHS:
            if value is None and name in ("evaluate: out", "MCPServerStdio: cwd"):
                continue  # None is none: nothing kept, the server started in this folder
            try:
                taker(value)
            except InvalidType as exc:
                said = str(exc)
                if not said.startswith(name.strip()) or type(value).__name__ not in said:
                    wrong.append((name, value, said))
            except Exception as exc:
                wrong.append((name, value, f"{type(exc).__name__}: {exc}"))
            else:
                wrong.append((name, value, "taken"))
    assert wrong == []
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere
