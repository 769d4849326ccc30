"""The audit log (docs/design/auditing.md): exact rebuild, and every kind of tampering caught."""

from __future__ import annotations

import itertools
import json

import pytest
from helpers import add, echo, initial, make_loop

from agents import (
    AgentState,
    AuditLog,
    AuditLogTampered,
    ExecutionStatus,
    Goal,
    StateDecodeError,
    StepCompleted,
)
from agents.audit import GENESIS, canonical
from agents.shell.subagents import DEPTH_KEY
from agents.testing import call, calls, fail, reply


def write_log(path, *script, **options):
    with AuditLog.open(path) as log:
        return make_loop(*script, tools=[add, echo], listeners=[log], **options).run(initial())


SCRIPT = [calls(call("add", a=1, b=2), call("echo", text="x")), call("nope"), reply("done")]


@pytest.fixture
def logged(tmp_path):
    path = tmp_path / "run.jsonl"
    return path, write_log(path, *SCRIPT)


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_read_rebuilds_the_final_state_exactly(logged):
    """``read`` gives a state equal to the one the run returned."""
    path, final = logged
    assert AuditLog.read(path) == final
    assert AuditLog.verify(path) == len(lines_of(path))


def test_records_chain_by_hash(logged):
    """Line 1 has seq 1 and a zero prev_hash; each hash covers its record; one record per
    step between a run's start and its end (format 3)."""
    path, _ = logged
    records = [json.loads(line) for line in lines_of(path)]
    assert records[0]["seq"] == 1 and records[0]["prev_hash"] == GENESIS
    for before, after in itertools.pairwise(records):
        assert after["prev_hash"] == before["hash"]
    import hashlib

    body = {k: v for k, v in records[3].items() if k != "hash"}
    assert hashlib.sha256(canonical(body)).hexdigest() == records[3]["hash"]
    assert [r["record"] for r in records] == ["start", "step", "step", "step", "end"]
    assert [r["type"] for r in records[-2:]] == ["StepExecution", "ExecutionCompleted"]
    assert {r["format"] for r in records} == {3}
    assert all("sig" not in r for r in records)  # unsigned


def tampered(path, lines, name="tampered.jsonl"):
    target = path.parent / name
    target.write_text("".join(lines), encoding="utf-8")
    return target


def assert_caught(path, line, fragment):
    with pytest.raises(AuditLogTampered) as info:
        AuditLog.verify(path)
    assert info.value.line == line
    assert fragment in str(info.value)


def test_an_edited_byte_is_caught(logged):
    """Changing one character of a record breaks its hash."""
    path, _ = logged
    lines = lines_of(path)
    lines[1] = lines[1].replace('"step":1', '"step":2', 1)
    assert_caught(tampered(path, lines), 2, "modified")


def test_a_deleted_line_is_caught(logged):
    """Removing a line breaks the sequence."""
    path, _ = logged
    lines = lines_of(path)
    del lines[3]
    assert_caught(tampered(path, lines), 4, "seq")


def test_an_inserted_line_is_caught(logged):
    """A copied line inserted elsewhere is caught."""
    path, _ = logged
    lines = lines_of(path)
    lines.insert(2, lines[4])
    assert_caught(tampered(path, lines), 3, "seq")


def test_reordered_lines_are_caught(logged):
    """Swapping two lines is caught."""
    path, _ = logged
    lines = lines_of(path)
    lines[2], lines[3] = lines[3], lines[2]
    assert_caught(tampered(path, lines), 3, "seq")


def test_a_forged_record_with_a_fresh_hash_breaks_the_chain(logged):
    """Rewriting a record and its own hash still breaks the next line's prev_hash."""
    path, _ = logged
    lines = lines_of(path)
    record = json.loads(lines[2])
    record["payload"] = {}
    import hashlib

    record["hash"] = hashlib.sha256(
        canonical({k: v for k, v in record.items() if k != "hash"})
    ).hexdigest()
    lines[2] = json.dumps(record, separators=(",", ":")) + "\n"
    assert_caught(tampered(path, lines), 4, "chain")


def test_a_truncated_file_is_incomplete(logged):
    """A log cut at a line boundary has no terminal record: incomplete."""
    path, _ = logged
    lines = lines_of(path)
    assert_caught(tampered(path, lines[:-3]), len(lines) - 2, "incomplete")


def test_a_torn_last_line_is_reported_and_the_prefix_stays_readable(logged):
    """A write cut mid-line (a crash) is a torn last line; ``read`` gives the prefix."""
    path, final = logged
    lines = lines_of(path)
    cut = [*lines[:3], lines[3][:25]]
    torn = tampered(path, cut)
    assert_caught(torn, 4, "torn last line")
    partial = AuditLog.read(torn)
    assert partial.status is ExecutionStatus.IN_PROGRESS
    assert partial.step_count >= 1
    assert partial.steps[0].tool_executions == final.steps[0].tool_executions


def test_garbage_and_other_kinds_of_file(tmp_path):
    """Not JSON, a JSON file of another kind, a missing file: typed errors with the line."""
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\xffnot a log\n")
    assert_caught(garbage, 1, "not a JSON record")
    other = tmp_path / "other.jsonl"
    other.write_text('{"kind": "InferenceRecord"}\n', encoding="utf-8")
    assert_caught(other, 1, "not an audit record")
    with pytest.raises(StateDecodeError, match="no such file"):
        AuditLog.verify(tmp_path / "missing.jsonl")


def test_failed_runs_are_logged_and_read_back(tmp_path):
    """A FAILED run is recorded like any other."""
    path = tmp_path / "failed.jsonl"
    final = write_log(path, call("add", a=1, b=1), fail(RuntimeError("down")))
    assert final.status is ExecutionStatus.FAILED
    assert AuditLog.read(path) == final
    assert AuditLog.verify(path) > 0


def test_an_existing_log_is_continued(tmp_path):
    """Opening an existing log extends its chain; the last run is read back."""
    path = tmp_path / "two.jsonl"
    write_log(path, reply("first"))
    second = write_log(path, reply("second"))
    assert AuditLog.verify(path) == len(lines_of(path))
    assert AuditLog.read(path) == second


def test_an_unwritable_log_fails_the_run(tmp_path):
    """The log is a critical listener: when it cannot write, the run ends FAILED."""
    path = tmp_path / "closed.jsonl"
    log = AuditLog.open(path)
    log.close()
    final = make_loop(reply("x"), listeners=[log]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "ListenerFailed"


def test_an_edit_hidden_behind_a_torn_last_line_is_caught(logged):
    """A torn last line is reported only when every line before it verifies: an edited
    line 2 in front of a cut-short last line is reported at line 2."""
    path, _ = logged
    lines = lines_of(path)
    lines[1] = '{"edited": true}\n'
    lines[-1] = lines[-1][:40]
    assert_caught(tampered(path, lines), 2, "not an audit record")


def test_random_bytes_are_tampered_at_line_1(tmp_path):
    """A file of arbitrary bytes is not a log with a torn tail: line 1 is bad."""
    garbage = tmp_path / "bytes.jsonl"
    garbage.write_bytes(bytes(range(256)) * 4)
    assert_caught(garbage, 1, "not a JSON record")


def test_an_unterminated_last_line_that_is_no_record_is_tampering(logged):
    """Bytes after the last newline that do not begin as a record does are not a torn
    write: they are reported as what they are."""
    path, _ = logged
    lines = lines_of(path)
    assert_caught(tampered(path, [*lines, '{"edited": true}']), len(lines) + 1, "not an audit")


def test_an_empty_file_is_not_a_log(tmp_path):
    """An empty file is named as such."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert_caught(empty, 1, "empty file")


# -- a crashed run's log (no terminal record) ---------------------------------------------


def run_capturing(path, *script, state=None, tools=(add, echo), **options):
    """Run with an audit log, keeping the live state after every step."""
    after_steps = []

    def keep(event):
        if isinstance(event, StepCompleted) and DEPTH_KEY not in event.state.metadata:
            after_steps.append(event.state)  # the top-level run's, not a sub-agent's

    with AuditLog.open(path) as log:
        loop = make_loop(*script, tools=tools, listeners=[log, keep], **options)
        final = loop.run(state if state is not None else initial())
    return final, after_steps


def cut_after_step(path, number, *, tear=False):
    """The log as a crash right after step ``number``'s record would leave it (``tear``:
    plus half of the next line); a sub-agent's steps come before its parent's."""
    lines = lines_of(path)
    index = max(
        i
        for i, line in enumerate(lines)
        if json.loads(line)["record"] == "step" and json.loads(line)["step"] == number
    )
    kept = lines[: index + 1] + ([lines[index + 1][:30]] if tear else [])
    return tampered(path, kept, f"cut-{number}-{tear}.jsonl")


def test_a_crashed_runs_prefix_reads_back_exactly(tmp_path):
    """After a crash, ``read`` gives the state as it was after the last recorded step:
    input messages, follow-ups, output feedback and goal prompts added between steps
    included, byte for byte."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    state = (
        AgentState.initial("Count.", messages=["go"], response_format=schema)
        .with_follow_up("and again")
        .with_goal(Goal("count to three"))
    )
    path = tmp_path / "run.jsonl"
    final, after_steps = run_capturing(
        path,
        call("add", a=1, b=2),
        reply("not json"),  # output feedback
        reply('{"n": 3}'),  # valid, but the goal is open: a goal prompt and the follow-up
        call("complete_goal", summary="done"),
        reply('{"n": 4}'),
        state=state,
    )
    assert final.step_count == len(after_steps) >= 4
    tags = {m.metadata.get("agents") for m in final.messages}
    assert {"output_feedback", "goal_prompt"} <= tags
    for number, expected in enumerate(after_steps, start=1):
        for tear in (False, True):
            partial = AuditLog.read(cut_after_step(path, number, tear=tear))
            assert partial == expected
            assert partial.to_json() == expected.to_json()
            assert partial.status is ExecutionStatus.IN_PROGRESS


def test_a_crash_inside_a_sub_agent_reads_back_the_parents_run(tmp_path):
    """The last run of a log is the top-level one: a crash after a sub-agent's run ended
    gives the parent's state, not the child's."""
    from agents import subagent_tool

    child = subagent_tool("helper", "Helps.", lambda: make_loop(reply("child answer")))
    path = tmp_path / "run.jsonl"
    final, after_steps = run_capturing(
        path, call("helper", task="help"), reply("done"), tools=[child]
    )
    lines = lines_of(path)
    child_end = next(
        i
        for i, line in enumerate(lines)
        if json.loads(line)["record"] == "end" and json.loads(line)["payload"].get("depth") == 1
    )
    partial = AuditLog.read(tampered(path, lines[: child_end + 1]))
    assert partial.agent_id == final.agent_id
    assert partial.step_count == 0 and partial.status is ExecutionStatus.IN_PROGRESS
    assert AuditLog.read(cut_after_step(path, 1)) == after_steps[0]


def forge(path, lines, index, change):
    """Line ``index`` rewritten by ``change(record)`` (hashes left as they are: readers
    do not verify, so they must survive whatever a record holds)."""
    record = json.loads(lines[index])
    change(record)
    edited = list(lines)
    edited[index] = json.dumps(record, separators=(",", ":")) + "\n"
    return tampered(path, edited, f"forged-{index}.jsonl")


def _first(lines, record, kind=None):
    return next(
        i
        for i, line in enumerate(lines)
        if json.loads(line)["record"] == record
        and (kind is None or json.loads(line)["type"] == kind)
    )


@pytest.mark.parametrize(
    ("where", "change", "fragment"),
    [
        (("step",), lambda r: r.update(payload={}), "malformed record"),
        (("step",), lambda r: r["payload"].update(step_execution=None), "step_execution"),
        (
            ("step",),
            lambda r: r["payload"]["sections"].update(messages={"keep": -1, "add": []}),
            "keep",
        ),
        (("step",), lambda r: r["payload"].update(sections=[]), "sections"),
        (
            ("start",),
            lambda r: r["payload"]["state"].update(execution=None),
            "no execution",
        ),
        (("start",), lambda r: r["payload"].update(state=[]), "payload.state"),
        (("end",), lambda r: r["payload"].update(changes=[[["context"], 7]]), "payload.changes"),
        (("step",), lambda r: r["payload"].update(changes=[["x"]]), "malformed change"),
        (("end",), lambda r: r.update(payload=7), "malformed record"),
        (("step",), lambda r: r["payload"].update(depth="x"), "payload.depth"),
        (("step",), lambda r: r["payload"].update(changes={}), "payload.changes"),
        (
            ("step",),
            lambda r: r["payload"].update(changes=[[["goal", "x"], 1]]),
            "no record 'goal'",
        ),
    ],
)
def test_malformed_records_of_a_crashed_log_are_typed_errors(tmp_path, where, change, fragment):
    """Forged records in a log without a terminal record give ``StateDecodeError`` naming
    the line, and the CLI prints one line (exit 2), never a traceback."""
    path = tmp_path / "run.jsonl"
    write_log(path, *SCRIPT)
    lines = lines_of(path)
    if where[0] != "end":
        lines = lines[:-3]  # crashed before the end
    forged = forge(path, lines, _first(lines, *where), change)
    with pytest.raises(StateDecodeError, match=fragment) as info:
        AuditLog.read(forged)
    assert "line" in str(info.value)
    from helpers import agents_cli

    for command in (["inspect", str(forged)], ["report", str(forged), "-o", "r.html"]):
        result = agents_cli(*command, cwd=tmp_path)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    replayed = agents_cli("replay", str(forged), "--verify", cwd=tmp_path)
    assert replayed.returncode == 2 and "Traceback" not in replayed.stderr


def test_a_string_seq_does_not_trouble_readers(tmp_path):
    """Readers do not depend on ``seq`` (``verify`` does, and names the line)."""
    path = tmp_path / "run.jsonl"
    final = write_log(path, *SCRIPT)
    lines = lines_of(path)
    forged = forge(path, lines, 3, lambda r: r.update(seq="4"))
    assert AuditLog.read(forged) == final
    assert_caught(forged, 4, "seq")


DATA = __import__("pathlib").Path(__file__).parent / "data"


@pytest.mark.parametrize("folder", ["audit_v1", "audit_v2", "golden"])
@pytest.mark.parametrize("name", ["tool_loop", "subagent", "two_runs", "crashed"])
def test_logs_of_every_format_verify_and_read(folder, name):
    """Logs of format 1 (written by the release before format 2, tests/data/audit_v1/make.py),
    of format 2 (the same runs, by the release before format 3) and of today's format 3
    verify, and read back the state their run had, byte for byte."""
    path = DATA / folder / f"{name}.jsonl"
    expected = (DATA / folder / f"{name}.state.json").read_text(encoding="utf-8").strip()
    if name == "crashed":
        assert AuditLog.verify(path, complete=False) > 0
        with pytest.raises(AuditLogTampered, match="incomplete"):
            AuditLog.verify(path)
    else:
        assert AuditLog.verify(path) == len(lines_of(path))
    state = AuditLog.read(path)
    assert state.to_json() == expected
    assert state == AgentState.from_json(expected)


def test_step_records_keep_what_each_request_offered_when_it_changes(tmp_path):
    """A step record holds the request's tool schemas, model, response format and options
    (secrets redacted) when they differ from the run's step before, and the run's record
    says them by step."""
    from agents import HookContext, HookTrigger, hook

    @hook(HookTrigger.BEFORE_INFERENCE, name="keyed")
    def keyed(context: HookContext) -> HookContext:
        assert context.request is not None
        if len(context.state.step_executions) == 2:  # the third request: other options
            return context.with_request(context.request.with_options(api_key="sk-planted-0001"))
        return context

    path = tmp_path / "run.jsonl"
    script = [call("add", a=1, b=2), call("add", a=2, b=2), reply("done")]
    with AuditLog.open(path) as log:
        make_loop(*script, tools=[add], hooks=[keyed], listeners=[log]).run(initial())
    steps = [json.loads(line) for line in path.read_text().splitlines()]
    steps = [entry for entry in steps if entry["record"] == "step"]
    offered = [entry["payload"].get("request") for entry in steps]
    assert offered[0]["tools"][0]["name"] == "add" and offered[1] is None
    assert offered[2]["options"] == {"api_key": "[redacted]"}
    assert "sk-planted-0001" not in path.read_text()
    record = AuditLog.read_run(path)
    assert record.offered_at(2) == offered[0] and record.offered_at(3) == offered[2]


def test_the_logs_switches_are_true_or_false(tmp_path):
    """``AuditLog.open(path, events="no")`` wrote every event (a non-empty text is true),
    and ``verify(path, complete="no")`` asked for a complete log."""
    from agents import InvalidType

    with pytest.raises(InvalidType, match=r"AuditLog\.open: events is True or False, not 'no'"):
        AuditLog.open(tmp_path / "run.jsonl", events="no")
    assert not (tmp_path / "run.jsonl").exists()
    with pytest.raises(InvalidType, match=r"AuditLog\.verify: complete is True or False, not 'no'"):
        AuditLog.verify(tmp_path / "run.jsonl", complete="no")
