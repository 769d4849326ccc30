"""Hostile input (issue 14 item 5): thousands of mutated state documents, audit logs,
definition files and CLI file arguments; nothing escapes but the typed errors, and what is
accepted can be written back.

The mutations are deterministic (a seeded generator): byte flips, cuts, insertions and
deletions; structural edits of the JSON (a field deleted, retyped, renamed, nested deep);
numbers JSON has not (``NaN``, ``Infinity``, ``1e999``); and, for audit logs, edits whose
hash chain is recomputed so that the reader meets forged records that ``verify`` passes.
``AGENTS_FUZZ_CASES`` raises the count per corpus (default 5,000).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
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
        junk = rng.choice([b"\x00", b"\xff\xfe", b'"', b"{", b"]", b"\n", b"\\u0000", b"NaN"])
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


def _written_back(state: AgentState) -> None:
    """An accepted state must be writable and read back equal."""
    assert AgentState.from_json(state.to_json()) == state


def test_state_documents(corpus):
    """``AgentState.from_json`` on mutants: a state that writes back, or a
    ``StateDecodeError``."""
    rng = random.Random(1)
    accepted = 0
    for _ in range(CASES):
        data = mutated(corpus["state"], rng)
        try:
            state = AgentState.from_json(data)
        except StateDecodeError:
            continue
        _written_back(state)
        accepted += 1
    assert accepted < CASES  # the mutants do reach the error paths


def test_audit_logs(corpus, tmp_path):
    """``verify`` and ``read`` on mutants (forged, re-chained ones included): typed errors
    only, and whatever ``read`` accepts writes back."""
    rng = random.Random(2)
    path = tmp_path / "mutant.jsonl"
    outcomes = {"verified": 0, "read": 0}
    for _ in range(CASES):
        path.write_bytes(mutated(corpus["log"], rng, lines=True))
        try:
            AuditLog.verify(path)
            outcomes["verified"] += 1
        except TYPED:
            pass
        try:
            _written_back(AuditLog.read(path))
            outcomes["read"] += 1
        except TYPED:
            pass
    assert 0 < outcomes["read"] < CASES


@pytest.mark.parametrize("kind", ["toml", "yaml", "markdown"])
def test_definition_files(corpus, kind):
    """``AgentDefinition.from_text`` on mutants of each format: a definition that
    round-trips through its format and the codec, or a ``DefinitionError``."""
    rng = random.Random(3)
    for _ in range(CASES):
        text = mutated(corpus[kind], rng).decode("utf-8", "replace")
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


def test_cli_file_arguments(corpus, tmp_path, monkeypatch):
    """Every reading command on mutants of run files and definitions: an exit code of 0,
    1 or 2, one line of error at most, never an exception (a traceback)."""
    monkeypatch.chdir(tmp_path)

    def no_network(*args, **kwargs):  # a mutant may name a model: never call out
        raise RuntimeError("the fuzz makes no model calls")

    monkeypatch.setattr(LiteLLMDriver, "infer", no_network)
    monkeypatch.setattr(LiteLLMDriver, "ainfer", no_network)
    rng = random.Random(4)
    sources = [("log", True, ".jsonl"), ("state", False, ".json"), ("markdown", False, ".md")]
    commands = [
        lambda f: ["inspect", f],
        lambda f: ["inspect", "--json", f],
        lambda f: ["verify", f],
        lambda f: ["report", f, "-o", "out.html"],
        lambda f: ["replay", "--verify", f],
        lambda f: ["diff", f, "run.jsonl"],
    ]
    (tmp_path / "run.jsonl").write_bytes(corpus["log"])
    for index in range(CASES):
        name, lines, suffix = sources[index % len(sources)]
        target = tmp_path / f"input{suffix}"
        target.write_bytes(mutated(corpus[name], rng, lines=lines))
        argv = (
            ["run", str(target), "--out", "out.jsonl"]
            if name == "markdown"
            else commands[index % len(commands)](str(target))
        )
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
        assert code in (0, 1, 2), argv
        assert "Traceback" not in err.getvalue()
        assert err.getvalue().count("\n") <= 1, err.getvalue()
        if code == 2:
            assert not Path("out.html").exists()
        Path("out.html").unlink(missing_ok=True)
        Path("out.jsonl").unlink(missing_ok=True)
