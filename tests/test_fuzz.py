"""Hostile input: thousands of mutated state documents, audit logs, definition files, CLI
file arguments, blob folders and bundles; nothing escapes but the typed errors, and what is
accepted can be written back.

The mutations are deterministic (a seeded generator): byte flips, cuts, insertions and
deletions; structural edits of the JSON (a field deleted, retyped, renamed, nested deep);
numbers JSON has not (``NaN``, ``Infinity``, ``1e999``); and, for audit logs, edits whose
hash chain is recomputed so that the reader meets forged records that ``verify`` passes.
``AGENTS_FUZZ_CASES`` raises the count per corpus (default 5,000).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import add, echo, initial, make_loop

from agents import (
    AgentState,
    AuditLog,
    AuditLogTampered,
    DefinitionError,
    Goal,
    HookTrigger,
    LiteLLMDriver,
    StateDecodeError,
    Summarization,
    hook,
    subagent_tool,
)
from agents.audit import canonical
from agents.cli import main
from agents.definitions import AgentDefinition
from agents.drivers import litellm as litellm_driver
from agents.testing import call, calls, reply

CASES = int(os.environ.get("AGENTS_FUZZ_CASES", "5000"))
TYPED = (StateDecodeError, AuditLogTampered)


@hook(HookTrigger.BEFORE_TOOL_USE, name="no_echo_of_secrets")
def no_secrets(context):
    if context.tool_call is not None and context.tool_call.arguments.get("text") == "secret":
        return context.with_tool_blocked("not that")
    return context


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A rich run (tools, a blocked call, a sub-agent, a summary, a goal, a follow-up) as
    a state document and as an audit log, and a definition in every format."""
    directory = tmp_path_factory.mktemp("corpus")
    child = subagent_tool("helper", "Helps.", lambda: make_loop(reply("child answer")))
    log = directory / "run.jsonl"
    state = initial("x" * 200).with_follow_up("and then?").with_goal(Goal("finish"))
    summary = Summarization(60, 40)
    with AuditLog.open(log) as audit:
        final = make_loop(
            calls(call("add", a=1, b=2), call("echo", text="secret")),
            call("helper", task="help"),
            reply("a summary"),
            reply("not done"),
            call("complete_goal", summary="done"),
            reply("after the follow-up"),
            tools=[add, echo, child],
            hooks=[no_secrets],
            compaction=summary,
            listeners=[audit],
        ).run(state)
    definition = AgentDefinition(
        name="fuzzed",
        system_prompt="You help.",
        model="openai/test",
        llm_options={"temperature": 0.5, "nested": {"a": [1, 2, {"b": "c"}]}},
        tools=["add"],
        max_steps=5,
        max_message_tokens=100,
        max_buffer_tokens=50,
    )
    return {
        "state": final.to_json().encode(),
        "log": log.read_bytes(),
        "toml": definition.to_text("toml").encode(),
        "yaml": definition.to_text("yaml").encode(),
        "markdown": definition.to_text("markdown").encode(),
    }


# -- mutations --------------------------------------------------------------------------------

_ODD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-0.0", "1e-400", "12345678901234567890"]
_ODD_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], {}, "\ud800", "[redacted]"]


def _deep(rng: random.Random) -> str:
    depth = rng.choice([90, 101, 400, 1100, 5000, 100_000])
    return "[" * depth + "]" * depth if rng.random() < 0.8 else "[" * depth


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20)))
    where = rng.randrange(len(data))
    choice = rng.randrange(7)
    if choice == 0:  # flip bytes
        out = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if choice == 1:  # cut short
        return data[:where]
    if choice == 2:  # insert junk
        junk = rng.choice(
            [
                b"\x00",
                b"\xff\xfe",
                b'"',
                b"{",
                b"]",
                b"\n",
                b"\\u0000",
                b"NaN",
                b"\\udcff",
                b"\\ud800",
            ]
        )
        return data[:where] + junk * rng.randrange(1, 5) + data[where:]
    if choice == 3:  # delete a slice
        return data[:where] + data[where + rng.randrange(1, 64) :]
    if choice == 4:  # duplicate a slice
        cut = data[where : where + rng.randrange(1, 200)]
        return data[:where] + cut + data[where:]
    if choice == 5:  # an odd number in place of a digit run
        text = data.decode("utf-8", "replace")
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if digits:
            at = rng.choice(digits)
            text = text[:at] + rng.choice(_ODD_NUMBERS) + text[at + 1 :]
        return text.encode("utf-8", "surrogatepass")
    return data[:where] + _deep(rng).encode() + data[where:]  # nesting past the limits


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*path, index)))
    return found


def _mutate_json(value: Any, rng: random.Random) -> Any:
    """One structural edit of parsed JSON: a node deleted, retyped, renamed, nested deep,
    duplicated, or given an unknown sibling."""
    paths = _paths(value)
    path = rng.choice(paths[1:] or paths)
    if not path:
        return rng.choice(_ODD_VALUES)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    choice = rng.randrange(6)
    if choice == 0 and isinstance(parent, dict):
        del parent[last]
    elif choice == 1:
        parent[last] = rng.choice(_ODD_VALUES)
    elif choice == 2 and isinstance(parent, dict):
        parent["surprise"] = parent[last]
    elif choice == 3:
        nested: Any = parent[last]
        for _ in range(rng.choice([50, 101, 200])):
            nested = [nested]
        parent[last] = nested
    elif choice == 4 and isinstance(parent, list):
        parent.insert(last, parent[last])
    else:
        parent[last] = rng.choice([float("nan"), float("inf"), 10**400, -0.0, "kind"])
    return value


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    except (ValueError, OverflowError):
        return json.dumps(value, default=str).encode()


def _rechained(lines: list[bytes]) -> bytes:
    """Lines as JSON records with seq and hashes recomputed: a forgery ``verify`` passes
    wherever the records keep their fields, so that readers meet it."""
    previous = "0" * 64
    out = []
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        if not isinstance(record, dict):
            out.append(raw)
            continue
        record.pop("hash", None)
        record["seq"], record["prev_hash"] = number, previous
        try:
            body = canonical(record)
        except (TypeError, ValueError):
            out.append(raw)
            continue
        previous = hashlib.sha256(body).hexdigest()
        out.append(body[:-1] + b',"hash":"' + previous.encode() + b'"}')
    return b"\n".join(out) + b"\n"


def mutated(data: bytes, rng: random.Random, *, lines: bool = False) -> bytes:
    """One mutant of ``data`` (a JSONL audit log when ``lines``)."""
    if rng.random() < 0.5:
        return _mutate_bytes(data, rng)
    if lines:
        rows = data.rstrip(b"\n").split(b"\n")
        index = rng.randrange(len(rows))
        if rng.random() < 0.2 and len(rows) > 1:  # reorder, drop or repeat a line
            other = rng.randrange(len(rows))
            rows[index], rows[other] = rows[other], rows[index]
        else:
            try:
                rows[index] = _dumps(_mutate_json(json.loads(rows[index]), rng))
            except ValueError:
                rows[index] = _mutate_bytes(rows[index], rng)
        return _rechained(rows) if rng.random() < 0.7 else b"\n".join(rows) + b"\n"
    try:
        return _dumps(_mutate_json(json.loads(data), rng))
    except ValueError:
        return _mutate_bytes(data, rng)


# -- the properties ---------------------------------------------------------------------------
#
# Each property checks CASES mutants. The cases are independent (case i draws from a generator
# seeded with the property's seed and i), so they are split between two processes when the
# machine has two cores: a property's cases then finish sooner when it is among the last
# tests running. Under pytest-xdist the suite's own workers share those cores, and the
# suite took as long with these processes as without them.


@pytest.fixture(scope="module")
def workers():
    """Two worker processes where there are two cores (kept for the module: each imports
    the library once), else ``None``."""
    if (os.cpu_count() or 1) < 2:
        yield None
        return
    context = multiprocessing.get_context("spawn")  # no fork of a process with threads
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        yield pool


def _spread(pool: Any, worker: Any, *args: Any) -> list[Any]:
    """``worker(*args, start, stop)`` over the cases, split between the ``pool``'s
    processes; the results in order (an assertion in a worker fails the test)."""
    if pool is None:
        return [worker(*args, 0, CASES)]
    half = CASES // 2
    halves = ((0, half), (half, CASES))
    futures = [pool.submit(worker, *args, start, stop) for start, stop in halves]
    return [future.result() for future in futures]


def _rng(seed: int, case: int) -> random.Random:
    return random.Random(f"{seed}:{case}")


def _written_back(state: AgentState) -> None:
    """An accepted state must be writable (as UTF-8: a lone surrogate as its escape) and
    read back equal."""
    text = state.to_json()
    assert AgentState.from_json(text.encode("utf-8")) == state


def _state_cases(data: bytes, start: int, stop: int) -> int:
    accepted = 0
    for case in range(start, stop):
        try:
            state = AgentState.from_json(mutated(data, _rng(1, case)))
        except StateDecodeError:
            continue
        _written_back(state)
        accepted += 1
    return accepted


def test_state_documents(corpus, workers):
    """``AgentState.from_json`` on mutants: a state that writes back, or a
    ``StateDecodeError``."""
    accepted = sum(_spread(workers, _state_cases, corpus["state"]))
    assert accepted < CASES  # the mutants do reach the error paths


def _log_cases(data: bytes, folder: str, start: int, stop: int) -> tuple[int, int]:
    path = Path(folder) / f"mutant-{start}.jsonl"
    verified = read = 0
    for case in range(start, stop):
        path.write_bytes(mutated(data, _rng(2, case), lines=True))
        try:
            AuditLog.verify(path)
            verified += 1
        except TYPED:
            pass
        try:
            _written_back(AuditLog.read(path))
            read += 1
        except TYPED:
            pass
    return verified, read


def test_audit_logs(corpus, workers, tmp_path):
    """``verify`` and ``read`` on mutants (forged, re-chained ones included): typed errors
    only, and whatever ``read`` accepts writes back."""
    read = sum(r for _, r in _spread(workers, _log_cases, corpus["log"], str(tmp_path)))
    assert 0 < read < CASES


def _definition_cases(data: bytes, kind: str, start: int, stop: int) -> None:
    for case in range(start, stop):
        text = mutated(data, _rng(3, case)).decode("utf-8", "replace")
        try:
            definition = AgentDefinition.from_text(text, kind)
        except DefinitionError:
            continue
        assert AgentDefinition.from_json(definition.to_json()) == definition
        try:
            text = definition.to_text(kind)
        except ValueError:  # TOML has no null: such a definition is written as YAML
            assert kind == "toml"
            continue
        assert AgentDefinition.from_text(text, kind) == definition


@pytest.mark.parametrize("kind", ["toml", "yaml", "markdown"])
def test_definition_files(corpus, workers, kind):
    """``AgentDefinition.from_text`` on mutants of each format: a definition that
    round-trips through its format and the codec, or a ``DefinitionError``."""
    _spread(workers, _definition_cases, corpus[kind], kind)


_SOURCES = [("log", True, ".jsonl"), ("state", False, ".json"), ("markdown", False, ".md")]
_COMMANDS = [
    lambda f, out: ["inspect", f],
    lambda f, out: ["inspect", "--json", f],
    lambda f, out: ["verify", f],
    lambda f, out: ["report", f, "-o", out],
    lambda f, out: ["replay", "--verify", f],
    lambda f, out: ["diff", f, str(Path(out).parent / "run.jsonl")],
]


def _no_network(*args: Any, **kwargs: Any) -> Any:  # a mutant may name a model: never call out
    raise RuntimeError("the fuzz makes no model calls")


def _cli_cases(corpus: dict[str, bytes], folder: str, start: int, stop: int) -> None:
    home = Path(folder) / f"worker-{start}"
    home.mkdir()
    (home / "run.jsonl").write_bytes(corpus["log"])
    report, run_file = home / "out.html", home / "out.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LiteLLMDriver, "infer", _no_network)
        patch.setattr(LiteLLMDriver, "ainfer", _no_network)
        # nor import litellm (4 s of CPU in each of the two processes) to warm it up
        patch.setattr(litellm_driver, "_warm_up", lambda: None)
        for case in range(start, stop):
            name, lines, suffix = _SOURCES[case % len(_SOURCES)]
            target = home / f"input{suffix}"
            target.write_bytes(mutated(corpus[name], _rng(4, case), lines=lines))
            argv = (
                ["run", str(target), "--out", str(run_file)]
                if name == "markdown"
                else _COMMANDS[case % len(_COMMANDS)](str(target), str(report))
            )
            err, out = io.StringIO(), io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main(argv)
            assert code in (0, 1, 2), argv
            assert "Traceback" not in err.getvalue()
            assert err.getvalue().count("\n") <= 1, err.getvalue()
            if code == 2:
                assert not report.exists()
            report.unlink(missing_ok=True)
            run_file.unlink(missing_ok=True)


def test_cli_file_arguments(corpus, workers, tmp_path):
    """Every reading command on mutants of run files and definitions: an exit code of 0,
    1 or 2, one line of error at most, never an exception (a traceback)."""
    _spread(workers, _cli_cases, corpus, str(tmp_path))


_REQUESTS = [  # (method, path, a valid body): what the HTTP API takes
    ("POST", "/sessions", {"system_prompt": "You help.", "session_id": "fz"}),
    ("POST", "/sessions/fz/messages", {"message": "add 2 3"}),
    (
        "POST",
        "/sessions/fz/messages",
        {
            "message": [
                "what is this?",
                {"type": "image", "url": "data:image/png;base64,iVBORw0KGgoAAQID"},
                {"type": "file", "url": "https://a.test/x", "media_type": "video/mp4"},
            ]
        },
    ),
    ("POST", "/sessions/fz/steer", {"message": "hurry"}),
    ("POST", "/sessions/fz/follow-ups", {"message": "then this"}),
    ("POST", "/sessions/fz/approvals", {"call_id": "r1", "approved": True, "reason": "ok"}),
    ("POST", "/sessions/fz/inputs", {"call_id": "b1", "action": "accept", "content": {"d": 1}}),
    (
        "POST",
        "/ag-ui",
        {
            "threadId": "fz",
            "runId": "run-1",
            "state": {},
            "messages": [{"id": "m1", "role": "user", "content": "add 1 2"}],
            "tools": [],
            "context": [],
            "forwardedProps": {},
        },
    ),
    (
        "POST",
        "/ag-ui",
        {
            "threadId": "fz-media",
            "runId": "run-1",
            "messages": [
                {
                    "id": "m1",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "what is this?"},
                        {
                            "type": "image",
                            "source": {
                                "type": "data",
                                "value": "iVBORw0KGgoAAQID",  # a PNG's signature and 3 bytes
                                "mimeType": "image/png",
                            },
                        },
                        {
                            "type": "document",
                            "source": {"type": "url", "value": "https://a.test/x.pdf"},
                        },
                    ],
                }
            ],
            "tools": [],
            "context": [],
        },
    ),
]
_ANSWERS = {200, 201, 202, 204, 400, 404, 409, 413, 422}


def test_http_requests(tmp_path):
    """``agents serve``'s API on mutated request bodies, paths and headers (through the
    ASGI application, a real SQLite store, the agent its tests serve): every answer is a
    status the API names — never a 500 — and every error one line of JSON."""
    import asyncio

    import httpx
    from serve_agent import loop

    from agents import SQLiteSessionStore
    from agents.serve import app

    store = SQLiteSessionStore(tmp_path / "fuzz.sqlite")
    application = app(lambda session: loop(), store=store)
    cases = max(CASES // 5, 200)

    async def hammer() -> list[tuple[int, str]]:
        transport = httpx.ASGITransport(app=application)
        seen: list[tuple[int, str]] = []
        async with httpx.AsyncClient(transport=transport, base_url="http://local") as client:
            await client.post("/sessions", json={"session_id": "fz"})
            for case in range(cases):
                rng = _rng(7, case)
                method, path, body = _REQUESTS[rng.randrange(len(_REQUESTS))]
                raw = mutated(_dumps(body), rng)
                headers = {b"content-type": b"application/json"}
                if rng.random() < 0.1:
                    chosen = rng.choice(["-1", "1e3", "\xb2", "9" * 40, "3", "\xff\xfe"])
                    headers[b"last-event-id"] = chosen.encode("latin-1")
                    method, path, raw = "GET", "/sessions/fz/events", b""
                if rng.random() < 0.05:
                    path = path.replace("fz", rng.choice(["%00", "%ED%A0%80", "..", "x" * 300]))
                answer = await client.request(method, path, content=raw, headers=headers)
                text = (await answer.aread()).decode("utf-8", "replace")
                seen.append((answer.status_code, text))
                if answer.status_code >= 400:
                    assert text.startswith("{"), (answer.status_code, method, path, text[:200])
                    error = json.loads(text)
                    assert set(error) == {"error"} and "\n" not in error["error"], text
        return seen

    seen = asyncio.run(hammer())
    statuses = {status for status, _ in seen}
    assert statuses <= _ANSWERS, sorted(statuses - _ANSWERS)
    assert {200, 422} <= statuses  # the mutants reach both the runs and the errors
    store.close()


# -- parts and blob folders -------------------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
_BLOB_CASES = max(CASES // 10, 50)


def _parts_log(folder: Path) -> Path:
    """A run holding an image in its first message, a tool's screenshot and a document: a
    log with its folder of three blobs."""
    from agents import DocumentPart, ImagePart

    def screenshot() -> bytes:
        """A screenshot (a PNG)."""
        return _PNG + b"screen"

    log = folder / "parts.jsonl"
    start = initial().with_user_message(["look", ImagePart.from_bytes(_PNG, "image/png")])
    with AuditLog.open(log) as audit:
        make_loop(
            call("screenshot"),
            reply("seen"),
            tools=[screenshot],
            listeners=[audit],
        ).run(start.with_user_message([DocumentPart.from_bytes(b"%PDF-1.4 x", "application/pdf")]))
    return log


def _mutate_folder(folder: Path, rng: random.Random) -> None:
    """One hostile change to a blob folder: a file's bytes flipped, cut or emptied, a file
    gone, a folder or a link where a file was, a stray file, a file under a wrong name."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    target = rng.choice(files)
    choice = rng.randrange(7)
    if choice == 0:
        target.write_bytes(_mutate_bytes(target.read_bytes(), rng))
    elif choice == 1:
        target.write_bytes(b"")
    elif choice == 2:
        target.unlink()
    elif choice == 3:
        target.unlink()
        target.mkdir()
    elif choice == 4:
        target.unlink()
        target.symlink_to(rng.choice(["/etc/hostname", "/nonexistent", str(files[0])]))
    elif choice == 5:
        (target.parent / ("0" * 64)).write_bytes(target.read_bytes())
        target.rename(target.parent / rng.choice(["x", "." + target.name, target.name.upper()]))
    else:
        (folder / rng.choice(["zz", "ab", ".."]).replace("..", "up")).mkdir(exist_ok=True)
        target.write_bytes(target.read_bytes() + b"\x00")


def test_blob_folders_and_logs_holding_parts(tmp_path):
    """A log holding parts, its lines mutated or its blob folder hostile: ``verify``,
    ``read`` and a part's bytes give typed errors only, and the commands that read it
    (``verify --blobs``, ``bundle``, ``report``, ``inspect``) answer in one line at most."""
    import shutil

    from agents import ContentError

    log = _parts_log(tmp_path)
    pristine = tmp_path / "pristine.blobs"
    shutil.copytree(f"{log}.blobs", pristine)
    data = log.read_bytes()
    commands = [
        lambda f: ["verify", f],
        lambda f: ["verify", f, "--blobs", f"{f}.blobs"],
        lambda f: ["bundle", f, "-o", str(tmp_path / "out.zip")],
        lambda f: ["report", f, "-o", str(tmp_path / "out.html")],
        lambda f: ["inspect", f],
    ]
    outcomes = set()
    for case in range(_BLOB_CASES):
        rng = _rng(5, case)
        shutil.rmtree(f"{log}.blobs", ignore_errors=True)
        shutil.copytree(pristine, f"{log}.blobs", symlinks=True)
        if case % 2:
            _mutate_folder(Path(f"{log}.blobs"), rng)
            log.write_bytes(data)
        else:
            log.write_bytes(mutated(data, rng, lines=True))
        try:
            AuditLog.verify(log)
            outcomes.add("verified")
        except TYPED:
            outcomes.add("refused")
        try:
            state = AuditLog.read(log)
            for message in state.messages:
                for part in message.parts:
                    if getattr(part, "blob", None) is not None:
                        part.data()
            outcomes.add("read")
        except (*TYPED, ContentError):
            outcomes.add("unreadable")
        err, out = io.StringIO(), io.StringIO()
        argv = commands[case % len(commands)](str(log))
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
        assert code in (0, 1, 2), argv
        assert "Traceback" not in err.getvalue()
        assert err.getvalue().count("\n") <= 1, (argv, err.getvalue())
    assert outcomes == {"verified", "refused", "read", "unreadable"}


def _mutate_bundle(entries: list[tuple[str, bytes]], rng: random.Random) -> bytes:
    """A bundle's zip remade with one hostile change: an entry's bytes mutated, an entry
    gone, renamed (out of the folder, up, to another hash) or added, a blob deflated, an
    entry twice; or the zip's own bytes mutated, its entries stored or deflated."""
    import zipfile

    entries = list(entries)
    compress = {name: zipfile.ZIP_STORED for name, _ in entries}
    index = rng.randrange(len(entries))
    name, data = entries[index]
    choice = rng.randrange(7)
    if choice == 0:
        entries[index] = (name, _mutate_bytes(data, rng))
    elif choice == 1:
        del entries[index]
    elif choice == 2:
        other = rng.choice(["../x.jsonl", "/abs.jsonl", "a/../../b", f"{name}/x", "b.jsonl"])
        entries[index] = (rng.choice([other, name[:-1] + "0"]), data)
    elif choice == 3:
        extra = hashlib.sha256(data).hexdigest()
        entries.append((rng.choice([f"{entries[0][0]}.blobs/{extra[:2]}/{extra}", "x"]), data))
    elif choice == 4:
        compress[name] = zipfile.ZIP_DEFLATED
        entries[index] = (name, data + bytes(rng.randrange(1, 1 << 16)))
    elif choice == 5:
        entries.append((name, data))
    elif rng.random() < 0.5:  # its bytes mutated below, its entries packed (deflate streams)
        compress = dict.fromkeys(compress, zipfile.ZIP_DEFLATED)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for entry, content in entries:
            with contextlib.suppress(UserWarning):  # a name twice: zipfile warns, writes it
                out.writestr(entry, content, compress_type=compress.get(entry))
    written = buffer.getvalue()
    return _mutate_bytes(written, rng) if choice == 6 else written


def test_bundles(tmp_path, monkeypatch):
    """Hostile bundles (``agents bundle``'s zip of a log with its blobs, remade with an
    entry changed, gone, renamed, added, deflated or doubled, or its bytes mutated): the
    commands that read one answer 0, 1 or 2 in one line at most, name the bundle, and
    write nothing (a bundle is read where it is: no temporary folder, no file left)."""
    import tempfile
    import warnings
    import zipfile

    log = _parts_log(tmp_path)
    bundle = tmp_path / "run.zip"
    assert main(["bundle", str(log), "-o", str(bundle)]) == 0
    with zipfile.ZipFile(bundle) as pristine:
        entries = [(info.filename, pristine.read(info)) for info in pristine.infolist()]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = sorted(p.name for p in tmp_path.iterdir())
    commands = [
        ["verify"],
        ["inspect"],
        ["replay", "--verify"],
        ["report", "-o", "out.html"],
        ["diff", str(log)],
    ]
    codes = set()
    for case in range(_BLOB_CASES):
        rng = _rng(6, case)
        target = tmp_path / "hostile.zip"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target.write_bytes(_mutate_bundle(entries, rng))
        command = commands[case % len(commands)]
        argv = [command[0], str(target), *command[1:]]
        if command[0] == "report":
            argv[-1] = str(tmp_path / "out.html")
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
        assert code in (0, 1, 2), argv
        assert "Traceback" not in err.getvalue()
        assert err.getvalue().count("\n") <= 1, (argv, err.getvalue())
        assert str(scratch) not in err.getvalue() + out.getvalue()  # the bundle is named
        assert list(scratch.iterdir()) == []  # nothing unpacked
        codes.add(code)
    after = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("hostile.zip", "out.html"))
    assert after == before
    assert codes == {0, 1, 2}


def test_evaluation_datasets(tmp_path):
    """``Dataset.load`` on mutants of a YAML and a JSON Lines dataset (one case's input
    holding an image by path and a document by URL): cases, or a ``DatasetError`` naming
    the file, never another exception."""
    from agents.evals import Case, Dataset, DatasetError

    yaml_text = (
        "- name: two\n  input: '2+2'\n  expected: '4'\n  metadata: {level: 1}\n"
        "- name: three\n  input: ['3+3', 'please']\n"
        "- name: state\n  input: {state: " + initial().to_json() + "}\n"
        "- name: image\n  input: [look, {type: image, path: cat.png}, {type: document, "
        "url: 'https://a.test/t.pdf'}]\n"
    ).encode()
    (tmp_path / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(16))
    lines = b"".join(
        json.dumps(case.to_data()).encode() + b"\n"
        for case in (Case("a", "1+1", "2", {"k": [1, 2]}), Case("b", ["x", "y"]))
    )
    loaded = 0
    for case in range(_BLOB_CASES * 2):
        rng = _rng(6, case)
        suffix, data = (".yaml", yaml_text) if case % 2 else (".jsonl", lines)
        path = tmp_path / f"cases{suffix}"
        path.write_bytes(mutated(data, rng, lines=suffix == ".jsonl"))
        said = ""
        try:
            dataset = Dataset.load(path)
        except DatasetError as exc:
            said = str(exc)
        else:
            loaded += 1
            assert all(isinstance(c, Case) for c in dataset.cases)
        assert not said or said.startswith(str(path)), said
    assert 0 < loaded < _BLOB_CASES * 2


def test_evaluation_folders(tmp_path):
    """``rescore`` of an evaluation's folder whose ``cases.jsonl`` is mutated, and
    ``EvalReport.load`` of its mutated ``report.json``: a report whose fields have their
    types (a ``"ran": "false"`` counted as run), or a typed error naming the file."""
    from agents import AgentLoop
    from agents.errors import AgentError
    from agents.evals import Case, Dataset, EvalReport, evaluate, rescore
    from agents.evals import scorers as s
    from agents.testing import FunctionDriver

    folder = tmp_path / "eval"
    cases = [Case("two", "2+2", "4"), Case("three", ["3+3", "please"], "6", {"k": [1]})]
    agent = AgentLoop(FunctionDriver(lambda request: "4"))
    evaluate(agent, Dataset(cases, name="sums"), [s.equals()], trials=2, out=folder)
    listed, report = (folder / "cases.jsonl").read_bytes(), (folder / "report.json").read_bytes()
    read = {"cases": 0, "report": 0}
    for case in range(_BLOB_CASES * 2):
        rng = _rng(7, case)
        which = "cases" if case % 2 else "report"
        path = folder / ("cases.jsonl" if which == "cases" else "report.json")
        path.write_bytes(mutated(listed if which == "cases" else report, rng, lines=case % 2))
        said = ""
        try:
            found = rescore(folder, [s.equals()]) if which == "cases" else EvalReport.load(path)
        except AgentError as exc:
            said = str(exc)
        else:
            read[which] += 1
            for trial in (t for result in found.cases for t in result.trials):
                assert type(trial.ran) is bool and type(trial.number) is int
                assert all(type(score.passed) is bool for _, score in trial.scores)
        assert not said or str(path) in said, said
        path.write_bytes(listed if which == "cases" else report)
    assert all(read.values()), read


def test_model_call_recordings(tmp_path):
    """``ReplayDriver.from_file`` on mutants of a ``RecordingInterceptor`` file (two calls,
    the first sent an image): a driver, or a ``StateDecodeError`` naming the file, never
    another exception (deep nesting, bytes that are not UTF-8, a ``step`` of another
    type)."""
    from agents import AgentLoop, ImagePart, RecordingInterceptor, ReplayDriver, tool
    from agents.errors import StateDecodeError
    from agents.testing import ScriptedDriver, call, reply

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    path = tmp_path / "calls.jsonl"
    answers = [call("add", a=1, b=1), reply("2")]
    image = ImagePart.from_bytes(b"\x89PNG\r\n\x1a\n\0\1\2", "image/png")
    with RecordingInterceptor(path) as recorder:
        AgentLoop(ScriptedDriver(answers), tools=[add], interceptors=[recorder]).run(
            AgentState.initial("s", messages=["add", image])
        )
    pristine = path.read_bytes()
    read = 0
    for case in range(_BLOB_CASES * 2):
        rng = _rng(7, case)
        target = tmp_path / "mutant.jsonl"
        target.write_bytes(mutated(pristine, rng, lines=True))
        said = ""
        try:
            ReplayDriver.from_file(target)
        except StateDecodeError as exc:
            said = str(exc)
        else:
            read += 1
        assert not said or said.startswith(str(target)), said
    assert 0 < read < _BLOB_CASES * 2
    for bad in (b"[" * 100_000 + b"\n", b"\xff\xfe garbage\n", b'{"kind": NaN}\n'):
        target.write_bytes(bad)
        with pytest.raises(StateDecodeError, match=re.escape(str(target))):
            ReplayDriver.from_file(target)
