"""The audit log's second edition: signatures, anchors, durability modes, crashes."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from helpers import add, agents_cli, echo, ended_in_threads, initial, make_loop

from agents import (
    AgentState,
    AuditLog,
    AuditLogTampered,
    ConfigurationError,
    ImagePart,
    StepCompleted,
    tool,
)
from agents.audit import canonical
from agents.audit.keys import generate_key_pair
from agents.persistence.memory import InMemorySessionStore
from agents.persistence.sqlite import SQLiteSessionStore
from agents.testing import call, calls, reply

TESTS = Path(__file__).parent
SCRIPT = [calls(call("add", a=1, b=2), call("echo", text="x")), call("nope"), reply("done")]


def write_log(path, *script, state=None, **log_options):
    with AuditLog.open(path, **log_options) as log:
        loop = make_loop(*(script or SCRIPT), tools=[add, echo], listeners=[log])
        return loop.run(state if state is not None else initial())


@pytest.fixture(scope="module")
def key():
    return Ed25519PrivateKey.generate()


@pytest.fixture
def signed(tmp_path, key):
    path = tmp_path / "signed.jsonl"
    return path, write_log(path, signing_key=key)


def records_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def written(path, records, name="forged.jsonl"):
    """``records`` as the log writes lines (canonical JSON, hash then signature last)."""
    lines = []
    for record in records:
        body = canonical({k: v for k, v in record.items() if k not in ("hash", "sig")})
        tail = f',"hash":"{record["hash"]}"'
        if "sig" in record:
            tail += f',"sig":"{record["sig"]}"'
        lines.append(body[:-1] + tail.encode() + b"}\n")
    target = path.parent / name
    target.write_bytes(b"".join(lines))
    return target


def rechained(records, *, drop_signatures=False):
    """What a forger without the key can do: renumber, re-link and re-hash every record
    (keeping each old signature, or dropping them all)."""
    previous = "0" * 64
    out = []
    for seq, record in enumerate(records, start=1):
        record = {k: v for k, v in record.items() if k != "hash"}
        if drop_signatures:
            record.pop("sig", None)
        record["seq"], record["prev_hash"] = seq, previous
        body = {k: v for k, v in record.items() if k != "sig"}
        record["hash"] = previous = hashlib.sha256(canonical(body)).hexdigest()
        out.append(record)
    return out


def caught(path, public_key, line, fragment, **options):
    with pytest.raises(AuditLogTampered) as info:
        AuditLog.check(path, public_key=public_key, **options)
    assert info.value.line == line, str(info.value)
    assert fragment in str(info.value)


# -- signatures ---------------------------------------------------------------------------------


def test_a_signed_log_verifies_with_its_key_and_reads_back(signed, key):
    """Every record of a plain log is a boundary (start, steps, end) and is signed; the key
    verifies them all; the start record names the key; ``read`` is exact."""
    path, final = signed
    records = records_of(path)
    assert [r["record"] for r in records] == ["start", "step", "step", "step", "end"]
    assert all(len(r["sig"]) == 128 for r in records)
    checked = AuditLog.check(path, public_key=key.public_key())
    assert (checked.records, checked.verified, checked.signed) == (5, 5, 5)
    assert len(records[0]["payload"]["signed_by"]) == 16
    assert AuditLog.read(path).to_json() == final.to_json()
    assert AuditLog.verify(path) == 5  # without the key: the chain only


FORGERIES = {
    # each: records -> forged records, and the first line verify must name
    "edit and re-chain": (
        lambda rs: rechained([rs[0], {**rs[1], "step": 9}, *rs[2:]]),
        2,
        "not signed by this key",
    ),
    "delete and re-chain": (lambda rs: rechained([rs[0], *rs[2:]]), 2, "not signed by this key"),
    "insert a copy": (lambda rs: rechained([rs[0], rs[1], rs[1], *rs[2:]]), 3, "not signed"),
    "signatures stripped": (lambda rs: rechained(rs, drop_signatures=True), 1, "is not signed"),
    "forged tail": (
        lambda rs: rs[:-1] + rechained([*rs[:-1], {**rs[-1], "payload": {}}])[-1:],
        5,
        "not signed by this key",
    ),
    "a forged end after a cut": (
        lambda rs: rechained([*rs[:2], {**rs[-1], "sig": "0" * 128}]),
        3,
        "not signed by this key",
    ),
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_forgeries_without_the_key_are_caught(signed, key, forgery):
    """Rewriting, deleting, inserting, stripping signatures or forging a tail, with every
    hash recomputed: the chain alone cannot tell (``verify`` without a key passes), the
    signatures can, naming the first bad line."""
    path, _ = signed
    change, line, fragment = FORGERIES[forgery]
    forged = written(path, change(records_of(path)))
    if forgery != "a forged end after a cut":
        assert AuditLog.verify(forged) > 0  # a consistent chain: only the key catches it
    caught(forged, key.public_key(), line, fragment)


def test_with_the_key_a_forgery_is_not_caught(signed, key):
    """Whoever holds the private key can rewrite the log and sign it again: that is what a
    key means (authorship, not truth). Keep it away from what it audits."""
    from agents.audit.keys import sign

    path, _ = signed
    forged = rechained([records_of(path)[0], *records_of(path)[2:]])
    for record in forged:
        record["sig"] = sign(key, record["hash"])
    assert AuditLog.verify(written(path, forged), public_key=key.public_key()) == 4


def test_a_wrong_key_or_an_unsigned_log(tmp_path, signed):
    """Another key's log, or an unsigned one, fails at line 1 when a key is asked for."""
    path, _ = signed
    other = Ed25519PrivateKey.generate().public_key()
    caught(path, other, 1, f"{path}: line 1 is not signed by this key (")
    unsigned = tmp_path / "unsigned.jsonl"
    write_log(unsigned)
    caught(unsigned, other, 1, "is not signed")


def test_keys_from_files_and_bad_keys(tmp_path):
    """Keys load from PEM files (the private one's file gives the public key too); a
    missing, garbled, or non-Ed25519 key is a ConfigurationError naming the file."""
    private, public = tmp_path / "k.pem", tmp_path / "k.pub.pem"
    generate_key_pair(private, public)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    path = tmp_path / "run.jsonl"
    write_log(path, signing_key=private)
    assert AuditLog.verify(path, public_key=public) == 5
    assert AuditLog.verify(path, public_key=private) == 5
    assert AuditLog.verify(path, public_key=public.read_bytes()) == 5
    garbled = tmp_path / "garbled.pem"
    garbled.write_bytes(b"-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n")
    for bad, fragment in [
        (tmp_path / "missing.pem", "no such key file"),
        (garbled, "cannot read the public key"),
        (42, "not int"),
    ]:
        with pytest.raises(ConfigurationError, match=fragment):
            AuditLog.verify(path, public_key=bad)
    with pytest.raises(ConfigurationError, match="exists already"):
        generate_key_pair(private, tmp_path / "other.pub.pem")


def _unknown_algorithm(kind: str) -> bytes:
    """A PEM key of an algorithm no library knows (OID 1.2.3.4): ``PUBLIC`` as
    SubjectPublicKeyInfo, ``PRIVATE`` as PKCS #8."""
    import base64

    algorithm = bytes.fromhex("3005" + "06032a0304")
    body = algorithm + bytes.fromhex("0303000102")
    if kind == "PRIVATE":
        body = bytes.fromhex("020100") + algorithm + bytes.fromhex("04020400")
    der = bytes([0x30, len(body)]) + body
    armour = base64.encodebytes(der).decode()
    return f"-----BEGIN {kind} KEY-----\n{armour}-----END {kind} KEY-----\n".encode()


def test_a_key_of_an_unknown_algorithm_is_a_configuration_error(tmp_path, capsys):
    """A key file of an algorithm cryptography does not know was its bare
    ``UnsupportedAlgorithm``: a traceback from ``verify --key`` and ``demo --sign``."""
    from agents.cli import main

    path = tmp_path / "run.jsonl"
    write_log(path)
    public, private = tmp_path / "odd.pub.pem", tmp_path / "odd.pem"
    public.write_bytes(_unknown_algorithm("PUBLIC"))
    private.write_bytes(_unknown_algorithm("PRIVATE"))
    for key, what in ((public, "public"), (private, "private")):
        with pytest.raises(ConfigurationError, match=f"{key}: not an Ed25519 {what} key"):
            AuditLog.verify(path, public_key=key)
    with pytest.raises(ConfigurationError, match="not an Ed25519 private key"):
        AuditLog.open(tmp_path / "signed.jsonl", signing_key=private)
    for argv in (
        ["verify", str(path), "--key", str(public)],
        ["demo", "--sign", str(private), "--out", str(tmp_path / "runs")],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "not an Ed25519" in err, err


def test_the_private_key_appears_nowhere(tmp_path):
    """A private key given as PEM bytes is in no repr, record or error, and a garbled one's
    error does not quote it."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    secret = pem.split(b"\n")[1].decode()  # the base64 body
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path, signing_key=pem) as log:
        make_loop(reply("done"), listeners=[log]).run(initial())
        shown = repr(log)
    assert "signed by" in shown and secret not in shown
    assert secret not in path.read_text(encoding="utf-8")
    broken = pem.replace(secret.encode(), secret[::-1].encode())
    with pytest.raises(ConfigurationError) as info:
        AuditLog.open(tmp_path / "other.jsonl", signing_key=broken)
    assert secret[::-1] not in str(info.value) and info.value.__cause__ is None
    assert info.value.__context__ is None or secret not in str(info.value.__context__)


def test_a_signed_log_is_continued_only_by_its_key(tmp_path, key):
    """``open`` continues a signed log with the same key (the chain and signatures go on);
    another key, or none then a key, is refused."""
    path = tmp_path / "run.jsonl"
    write_log(path, signing_key=key)
    write_log(path, signing_key=key)
    assert AuditLog.verify(path, public_key=key.public_key()) == 10
    with pytest.raises(ConfigurationError, match="cannot be continued"):
        AuditLog.open(path, signing_key=Ed25519PrivateKey.generate())
    unsigned = tmp_path / "unsigned.jsonl"
    write_log(unsigned)
    with pytest.raises(ConfigurationError, match="cannot be continued"):
        AuditLog.open(unsigned, signing_key=key)


def test_events_on_request_are_covered_by_the_next_signature(tmp_path, key):
    """With ``events=True`` every event has its record too (unsigned: the next boundary's
    signature covers it through the chain); the state reads back exactly, and a forged
    event record is caught."""
    path = tmp_path / "events.jsonl"
    final = write_log(path, signing_key=key, events=True)
    records = records_of(path)
    kinds = {r["record"] for r in records}
    assert kinds == {"start", "event", "step", "end"}
    assert all(("sig" in r) == (r["record"] != "event") for r in records)
    assert AuditLog.read(path).to_json() == final.to_json()
    assert AuditLog.verify(path, public_key=key.public_key()) == len(records)
    index = next(i for i, r in enumerate(records) if r["record"] == "event" and i > 1)
    forged = rechained([*records[:index], {**records[index], "payload": {}}, *records[index + 1 :]])
    first = max(i for i, r in enumerate(records[:index]) if "sig" in r) + 2  # after a good one
    caught(written(path, forged), key.public_key(), first, "not signed by this key")


# -- anchors ------------------------------------------------------------------------------------


@pytest.fixture
def anchor_stores(tmp_path):
    """Every store that keeps anchors (PostgreSQL where the suite has one: CI does)."""
    stores = {"memory": InMemorySessionStore(), "sqlite": SQLiteSessionStore(tmp_path / "s.db")}
    dsn = os.environ.get("AGENTS_TEST_POSTGRES_DSN")
    if dsn:
        from agents.persistence.postgres import PostgresSessionStore

        stores["postgres"] = PostgresSessionStore(dsn)
    yield stores
    for store in stores.values():
        getattr(store, "close", lambda: None)()


def test_a_whole_run_cut_off_is_caught_only_with_an_anchor(tmp_path, key, anchor_stores):
    """Two runs in one log, the second cut off after the first run's end: without an anchor
    the rest is a valid (even signed) log — the documented limit; with the store that
    anchored it, ``verify`` says truncated."""
    for name, store in anchor_stores.items():
        path = tmp_path / f"{name}.jsonl"
        for _ in range(2):
            write_log(path, signing_key=key, anchor=store)
        lines = path.read_bytes().splitlines(keepends=True)
        assert AuditLog.check(path, public_key=key.public_key(), anchor=store).anchored == 10
        cut = tmp_path / f"{name}-cut.jsonl"
        cut.write_bytes(b"".join(lines[:5]))
        assert AuditLog.verify(cut, public_key=key.public_key()) == 5  # undetectable alone
        caught(cut, key.public_key(), 6, "truncated", anchor=store)
        other = tmp_path / f"{name}-other.jsonl"
        write_log(other)
        caught(other, None, 1, "no anchor for this log", anchor=store)


def test_an_anchor_catches_a_rewritten_unsigned_log(tmp_path):
    """Unsigned, a re-chained log of the same length passes the chain; its anchor's hash
    does not match."""
    store = SQLiteSessionStore(tmp_path / "s.db")
    path = tmp_path / "run.jsonl"
    write_log(path, anchor=store)
    records = records_of(path)
    forged = written(path, rechained([*records[:-1], {**records[-1], "payload": {}}]))
    assert AuditLog.verify(forged) == 5
    with pytest.raises(AuditLogTampered, match="not the record its anchor names"):
        AuditLog.check(forged, anchor=store)
    store.close()


def test_verify_anchor_on_the_command_line(tmp_path):
    """``agents verify FILE --anchor DATABASE``: 0 as long as its anchor, 1 truncated, 2 for
    a store that is not there."""
    database = tmp_path / "sessions.db"
    path = tmp_path / "run.jsonl"
    store = SQLiteSessionStore(database)
    for _ in range(2):
        write_log(path, anchor=store)
    store.close()
    ok = agents_cli("verify", str(path), "--anchor", str(database), cwd=tmp_path)
    assert ok.returncode == 0 and "as long as its anchor (10 records)" in ok.stdout
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:5]))
    result = agents_cli("verify", str(cut), "--anchor", str(database), cwd=tmp_path)
    assert result.returncode == 1 and "truncated" in result.stderr
    missing = agents_cli("verify", str(path), "--anchor", str(tmp_path / "no.db"), cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


# -- durability ---------------------------------------------------------------------------------


def test_durability_modes_and_their_fsyncs(tmp_path):
    """``step``: an fsync per boundary record; ``none``: one, at close; ``batch``: many
    concurrent runs share their fsyncs. Bad settings are ConfigurationErrors."""
    counts = {}
    for mode in ("step", "none"):
        path = tmp_path / f"{mode}.jsonl"
        with AuditLog.open(path, durability=mode) as log:
            make_loop(*SCRIPT, tools=[add, echo], listeners=[log]).run(initial())
        counts[mode] = log.fsyncs
    assert counts == {"step": 5, "none": 1}
    path = tmp_path / "batch.jsonl"
    runs, steps = 20, 30
    finals = []
    with AuditLog.open(path, durability="batch", flush_interval=0.01) as log:

        def one(i):
            script = [call("add", a=i, b=n) for n in range(steps - 1)] + [reply("done")]
            loop = make_loop(*script, listeners=[log], max_steps=steps)
            finals.append(loop.run(AgentState.initial("Add.", messages=[f"run {i}"])))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(runs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(finals) == runs and all(f.step_count == steps for f in finals)
    assert AuditLog.verify(path) == runs * (steps + 2)
    assert log.fsyncs < runs * steps / 4, log.fsyncs  # shared: far fewer than the steps
    for bad in ({"durability": "always"}, {"flush_interval": 0}, {"flush_interval": float("nan")}):
        with pytest.raises(ConfigurationError):
            AuditLog.open(tmp_path / "bad.jsonl", **bad)
    assert not (tmp_path / "bad.jsonl").exists()


@pytest.mark.parametrize("mode", ["step", "batch", "none"])
def test_runs_in_threads_whose_log_keeps_blobs_in_its_anchoring_store(tmp_path, mode):
    """A log anchored in a session store that also keeps its blobs: a writer stores a
    step's screenshot in the store while holding the log, and the store's saves ask the log
    for its head from inside their transaction. The head is read under a lock of its own
    (else six threads of sessions hung within a second, in every mode)."""
    from agents.persistence.runtime import SessionRuntime
    from agents.testing import SequentialIds

    store = SQLiteSessionStore(tmp_path / "sessions.db")
    path = tmp_path / "run.jsonl"
    log = AuditLog.open(path, durability=mode, anchor=store, blobs=store.blobs)

    def screenshot(picture):
        @tool
        def shot() -> ImagePart:
            """A screenshot."""
            return ImagePart.from_bytes(picture, "image/png")

        return shot

    def sessions(i):
        for n in range(20):
            shot = screenshot(b"\x89PNG\r\n\x1a\n" + b"%d-%d" % (i, n) * 50)
            runtime = SessionRuntime(
                store,
                lambda session, shot=shot, i=i, n=n: make_loop(
                    call("shot"),
                    reply("seen"),
                    tools=[shot],
                    listeners=[log],
                    ids=SequentialIds(f"t{i}-{n}-"),
                ),
            )
            runtime.send(runtime.create().session_id, "look")

    assert ended_in_threads(sessions, 6, seconds=60), "deadlocked"
    log.close()
    assert AuditLog.verify(path, anchor=store, blobs=store.blobs) == 6 * 20 * 4
    store.close()


class _Handle:
    """A log's file whose ``write`` is ``write(real, data)``; the rest is the real file's."""

    def __init__(self, real, write):
        self.real, self._write = real, write

    def write(self, data):
        return self._write(self.real, data)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _full_disk(real, data):
    real.write(bytes(data[: len(data) // 2]))
    raise OSError(28, "No space left on device")


def test_a_failed_write_leaves_a_valid_log(tmp_path):
    """A write that fails half-way (a full disk) is cut off again: the run fails, and the
    log is the valid prefix it was."""
    path = tmp_path / "run.jsonl"
    log = AuditLog.open(path)
    real = log._handle
    calls = []

    def third_fails(real, data):
        calls.append(data)
        if len(calls) == 3:  # the second step's record
            _full_disk(real, data)
        return real.write(data)

    log._handle = _Handle(real, third_fails)
    final = make_loop(*SCRIPT, tools=[add, echo], listeners=[log]).run(initial())
    log._handle = real
    log.close()
    assert final.status.value == "failed"
    assert AuditLog.verify(path, complete=False) == 2
    assert AuditLog.read(path).step_count == 1


def test_a_short_write_is_finished(tmp_path):
    """A write that takes part of a line (a signal, a pipe) is followed by the rest: the
    line is whole."""
    path = tmp_path / "run.jsonl"
    log = AuditLog.open(path)
    real = log._handle
    log._handle = _Handle(
        real, lambda real, data: real.write(bytes(data[: max(1, len(data) // 3)]))
    )
    final = make_loop(*SCRIPT, tools=[add, echo], listeners=[log]).run(initial())
    log._handle = real
    log.close()
    assert final.status.value == "completed"
    assert AuditLog.verify(path) == 5
    assert AuditLog.read(path).to_json() == final.to_json()


def test_durability_none_writes_a_runs_records_by_its_end(tmp_path):
    """With ``durability="none"`` the lines are written together: none while a short run
    goes, all of them once it returns, and a long run's past 64 KiB."""
    path = tmp_path / "run.jsonl"
    sizes = []

    def size(event):
        if isinstance(event, StepCompleted):
            sizes.append(path.stat().st_size)

    with AuditLog.open(path, durability="none") as log:
        final = make_loop(*SCRIPT, tools=[add, echo], listeners=[log, size]).run(initial())
        assert sizes == [0, 0, 0]
        assert AuditLog.verify(path) == 5
        assert AuditLog.read(path).to_json() == final.to_json()
        sizes.clear()
        script = [call("add", a=i, b=1) for i in range(199)] + [reply("done")]
        long = make_loop(*script, listeners=[log, size], max_steps=200).run(initial())
    assert 0 < len(set(sizes)) < 10 and sizes[0] < sizes[-1]  # a write every ~70 steps
    assert AuditLog.verify(path) == 5 + 202
    assert AuditLog.read(path).to_json() == long.to_json()


def test_with_durability_none_a_failed_write_refuses_every_record_after(tmp_path):
    """The lines held back are lost with a write that fails: the run writing fails, the
    log stays the valid prefix it was, and every record after is refused (each run fails),
    for a later one would chain over the lines lost."""
    path = tmp_path / "run.jsonl"
    log = AuditLog.open(path, durability="none")

    def run():
        return make_loop(*SCRIPT, tools=[add, echo], listeners=[log]).run(initial())

    first = run()
    real = log._handle
    log._handle = _Handle(real, _full_disk)
    failed = run()
    log._handle = real
    again = run()
    log.close()
    assert first.status.value == "completed"
    assert failed.status.value == "failed" and again.status.value == "failed"
    assert "No space left on device" in failed.execution.error.message
    assert "lost records it could not write" in again.execution.error.message
    assert AuditLog.verify(path) == 5
    assert AuditLog.read(path).to_json() == first.to_json()


CHILD = """
import sys
sys.path.insert(0, {tests!r})
from helpers import make_loop, initial
from agents import AuditLog
from agents.testing import call, reply
with AuditLog.open({path!r}, durability={mode!r}, signing_key={key!r}) as log:
    print("started", flush=True)
    script = [call("add", a=i, b=1) for i in range({steps} - 1)] + [reply("done")]
    make_loop(*script, listeners=[log], max_steps={steps}).run(initial())
"""


@pytest.mark.parametrize("mode", ["step", "batch", "none"])
def test_kill_9_leaves_a_torn_or_incomplete_log_never_a_tampered_one(tmp_path, mode):
    """A process killed at random moments while it writes: the log verifies (or is torn or
    incomplete, never tampered) and reads back exactly the state after its last recorded
    step."""
    steps = 1_500 if mode == "step" else 3_000
    private = tmp_path / "k.pem"
    generate_key_pair(private, tmp_path / "k.pub.pem")
    after = []

    def keep(event):
        if isinstance(event, StepCompleted):
            after.append(event.state)

    script = [call("add", a=i, b=1) for i in range(steps - 1)] + [reply("done")]
    final = make_loop(*script, listeners=[keep], max_steps=steps).run(initial())
    chance = random.Random(f"kill-{mode}")
    crashed = 0
    for attempt in range(3):
        path = tmp_path / f"{mode}-{attempt}.jsonl"
        code = CHILD.format(
            tests=str(TESTS), path=str(path), mode=mode, key=str(private), steps=steps
        )
        with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) as child:
            assert child.stdout.readline() == b"started\n"
            time.sleep(chance.uniform(0.0, 0.1))
            child.send_signal(signal.SIGKILL)
            child.wait()
        problem = ""
        try:
            AuditLog.verify(path, public_key=tmp_path / "k.pub.pem")
        except AuditLogTampered as exc:
            problem = str(exc)
        crash = ("torn last line", "incomplete", "empty file")  # never "modified", "chain"...
        assert problem == "" or any(what in problem for what in crash), problem
        valid = [
            json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]
        ]  # the whole lines
        recorded = sum(1 for r in valid if r["record"] == "step")
        if not valid:  # killed before its first record
            crashed += 1
            continue
        state = AuditLog.read(path)
        if valid[-1]["record"] == "end":  # the run finished before the kill
            assert state.to_json() == final.to_json()
            continue
        crashed += 1
        expected = after[recorded - 1] if recorded else None
        if expected is not None:
            assert state.to_json() == expected.to_json()
        else:
            assert state.step_count == 0
    assert crashed >= 1  # the kills came while the run was writing


# -- the command line ---------------------------------------------------------------------------


def test_keygen_demo_sign_and_verify_key_on_the_command_line(tmp_path):
    """``agents keygen`` writes a pair (private mode 600, never overwritten);
    ``agents demo --sign`` writes a signed log that ``verify --key`` accepts (0), an edited
    copy it rejects naming the line (1); a wrong key is 1, a missing or bad key file 2."""
    made = agents_cli("keygen", "--out", "audit", cwd=tmp_path)
    assert made.returncode == 0 and "fingerprint" in made.stdout
    private, public = tmp_path / "audit.pem", tmp_path / "audit.pub.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    again = agents_cli("keygen", "--out", "audit", cwd=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr
    demo = agents_cli("demo", "--sign", str(private), "--out", "runs", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert f"--key {public}" in demo.stdout  # the key pair's public half, named for you
    (log,) = (tmp_path / "runs").glob("agents-demo-*.jsonl")
    ok = agents_cli("verify", str(log), "--key", str(public), cwd=tmp_path)
    assert ok.returncode == 0 and "signed by the key" in ok.stdout
    plain = agents_cli("verify", str(log), cwd=tmp_path)
    assert plain.returncode == 0 and "not checked" in plain.stdout
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    edited = tmp_path / "edited.jsonl"
    edited.write_text(lines[0] + lines[1].replace('"step":1', '"step":7', 1) + "".join(lines[2:]))
    rejected = agents_cli("verify", str(edited), "--key", str(public), cwd=tmp_path)
    assert rejected.returncode == 1 and "line 2" in rejected.stderr
    agents_cli("keygen", "--out", "other", cwd=tmp_path)
    wrong = agents_cli("verify", str(log), "--key", "other.pub.pem", cwd=tmp_path)
    assert wrong.returncode == 1 and "not signed by this key" in wrong.stderr
    (tmp_path / "bad.pem").write_text("not a key")
    for key in ("missing.pem", "bad.pem"):
        result = agents_cli("verify", str(log), "--key", key, cwd=tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    unsigned_demo = agents_cli("demo", "--out", "plain", cwd=tmp_path)
    (unsigned,) = (tmp_path / "plain").glob("agents-demo-*.jsonl")
    assert unsigned_demo.returncode == 0
    result = agents_cli("verify", str(unsigned), cwd=tmp_path)
    assert "unsigned: proves integrity, not authorship" in result.stdout
    bad_sign = agents_cli("demo", "--sign", "missing.pem", "--out", "x", cwd=tmp_path)
    assert bad_sign.returncode == 2 and "Traceback" not in bad_sign.stderr


def test_a_session_runtime_anchors_the_log_with_each_step_row(tmp_path, anchor_stores):
    """With a ``SessionRuntime`` on the anchoring store, each checkpoint's transaction
    carries the log's anchor (the head of its last record on disk): the log itself writes
    one only at the run's end; a cut is caught."""
    from agents.persistence.runtime import SessionRuntime

    for name, store in anchor_stores.items():
        path = tmp_path / f"{name}.jsonl"
        own, seen = [], []
        anchor = store.anchor_audit_log

        def counted(*args, anchor=anchor, own=own):
            own.append(args)
            anchor(*args)

        store.anchor_audit_log = counted
        with AuditLog.open(path, anchor=store) as log:

            def watch(event, log=log, seen=seen, store=store):
                if isinstance(event, StepCompleted) and log.anchor_head() is not None:
                    seen.append(store.audit_anchor(log.anchor_head()[0]))

            runtime = SessionRuntime(
                store,
                lambda session, log=log, watch=watch: make_loop(
                    call("add", a=1, b=2),
                    call("add", a=3, b=4),
                    reply("7"),
                    listeners=[log, watch],
                ),
            )
            session = runtime.create()
            runtime.send(session.session_id, "add")
        del store.anchor_audit_log
        assert len(own) == 1  # the end; the steps were anchored by the checkpoints
        assert seen[0] is None and seen[1:] and all(s is not None for s in seen[1:])
        records = AuditLog.check(path, anchor=store)
        assert records.anchored == records.records == 5
        cut = tmp_path / f"{name}-cut.jsonl"
        cut.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))
        caught(cut, None, 4, "truncated", anchor=store, complete=False)


def test_listeners_that_name_their_events_spare_the_run_the_others(tmp_path):
    """When every listener says which events it acts on (``event_types``) and none names
    ``StepStarted``, ``InferenceCompleted`` or a ``ToolCall*`` event, the loop builds none
    of those (the audit log names its three); the run's JSON and the log are the same as
    with a listener that takes everything."""
    from agents import (
        ExecutionCompleted,
        ExecutionStarted,
        InferenceCompleted,
        StepStarted,
        ToolCallStarted,
    )

    class Steps:
        event_types = frozenset({StepCompleted})

        def __init__(self):
            self.seen = []

        def __call__(self, event):
            self.seen.append(type(event))

    picky, everything = Steps(), []
    quiet, loud = tmp_path / "quiet.jsonl", tmp_path / "loud.jsonl"
    with AuditLog.open(quiet) as log:
        first = make_loop(*SCRIPT, tools=[add, echo], listeners=[log, picky]).run(initial())
    assert not {StepStarted, InferenceCompleted, ToolCallStarted} & set(picky.seen)
    assert log.event_types == frozenset({ExecutionStarted, StepCompleted, ExecutionCompleted})
    with AuditLog.open(loud) as log:
        second = make_loop(*SCRIPT, tools=[add, echo], listeners=[log, everything.append]).run(
            initial()
        )
    assert {StepStarted, InferenceCompleted, ToolCallStarted} <= {type(e) for e in everything}
    assert first.to_json() == second.to_json()
    assert quiet.read_bytes() == loud.read_bytes()


# -- bytes the hash does not cover ----------------------------------------------------------------


def _rehash_last(lines):
    """What anyone can do to an unsigned log's last line: hash its bytes anew."""
    raw = lines[-1]
    cut = raw.rfind(b',"hash":"')
    digest = hashlib.sha256(raw[:cut] + b"}").hexdigest().encode()
    return [*lines[:-1], raw[:cut] + b',"hash":"' + digest + b'"}']


def _reorder_payload(raw):
    """The line with its first two keys swapped (``agent_id`` and ``execution_id``)."""
    record = json.loads(raw)
    body = {k: v for k, v in record.items() if k not in ("hash", "sig")}
    first, second, *rest = sorted(body)
    moved = {second: body[second], first: body[first], **{k: body[k] for k in rest}}
    text = json.dumps(moved, sort_keys=False, separators=(",", ":"), ensure_ascii=False)
    return text.encode()[:-1] + raw[raw.rfind(b',"hash":"') :]


TAMPERINGS = {
    # each: the log's first three lines -> changed lines (the change is on line 3)
    "a terminal record appended after the hash": lambda ls: [
        *ls[:2],
        ls[2][:-1] + b',"record":"end"}',
    ],
    "a key appended after the hash": lambda ls: [*ls[:2], ls[2][:-1] + b',"agent_id":"mallory"}'],
    "a key duplicated before the hash": lambda ls: [
        *ls[:2],
        ls[2].replace(b'{"agent_id":', b'{"agent_id":"mallory","agent_id":', 1),
    ],
    "a key duplicated, the hash recomputed": lambda ls: _rehash_last(
        [*ls[:2], ls[2].replace(b'{"agent_id":', b'{"agent_id":"mallory","agent_id":', 1)]
    ),
    "keys reordered, the hash recomputed": lambda ls: _rehash_last(
        [*ls[:2], _reorder_payload(ls[2])]
    ),
    "hash and signature swapped": lambda ls: [
        *ls[:2],
        ls[2][: ls[2].rfind(b',"hash":"')]
        + b',"sig":"'
        + json.loads(ls[2]).get("sig", "0" * 128).encode()
        + b'","hash":"'
        + json.loads(ls[2])["hash"].encode()
        + b'"}',
    ],
    "a space after the record": lambda ls: [*ls[:2], ls[2] + b" "],
    "a space before the record": lambda ls: [*ls[:2], b" " + ls[2]],
}


@pytest.mark.parametrize("signing", ["signed", "unsigned"])
@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_bytes_the_hash_does_not_cover_are_caught(tmp_path, key, signing, tampering):
    """A line verifies only when its bytes are exactly the record it parses to as the log
    writes it: a key added after the hash (JSON's last key wins over the covered one), a key
    duplicated or moved (even with the hash recomputed), the hash and the signature swapped,
    or a space around the record is a modified line 3, signed or not."""
    path = tmp_path / "log.jsonl"
    write_log(path, signing_key=key if signing == "signed" else None)
    lines = path.read_bytes().split(b"\n")[:3]
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines) + b"\n")
    assert AuditLog.verify(cut, complete=False) == 3  # the untouched prefix verifies
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(b"\n".join(TAMPERINGS[tampering](lines)) + b"\n")
    public = key.public_key() if signing == "signed" else None
    for complete in (True, False):
        caught(changed, public, 3, "line 3", complete=complete)


def test_verify_on_the_command_line_refuses_an_appended_terminal_record(tmp_path):
    """The cut-off signed demo log with ``,"record":"end"`` appended to its last line is
    tampered (exit 1, line 3), not "intact and complete … signed by the key"."""
    agents_cli("keygen", "--out", "k", cwd=tmp_path)
    demo = agents_cli("demo", "--sign", "k.pem", "--out", "d", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    (log,) = (tmp_path / "d").glob("agents-demo-*.jsonl")
    lines = log.read_bytes().split(b"\n")[:3]
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(b"\n".join([*lines[:2], lines[2][:-1] + b',"record":"end"}']) + b"\n")
    result = agents_cli("verify", str(forged), "--key", "k.pub.pem", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "line 3" in result.stderr and "Traceback" not in result.stderr


def test_no_key_appended_to_any_line_of_a_signed_log_verifies(signed, key):
    """Each of a record's keys appended once more after the signature, on each line of a
    signed log, with its own value or another: verify names that line."""
    path, _ = signed
    lines = path.read_bytes().split(b"\n")[:-1]
    for number, raw in enumerate(lines, start=1):
        for name, value in json.loads(raw).items():
            for extra in (value, "end", 0, None):
                text = json.dumps({name: extra}, separators=(",", ":"))[1:-1].encode()
                changed = [*lines[: number - 1], raw[:-1] + b"," + text + b"}", *lines[number:]]
                forged = path.parent / "appended.jsonl"
                forged.write_bytes(b"\n".join(changed) + b"\n")
                caught(forged, key.public_key(), number, f"line {number} ")
