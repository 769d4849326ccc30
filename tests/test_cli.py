"""The ``agents`` command line: ``demo`` runs offline and writes a run file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TIMELINE_HEADER, agents_cli

from agents import AgentLoop, AgentState, AuditLog, ExecutionStatus, StepType
from agents.cli import main
from agents.cli.demo import build_demo
from agents.records.compiled import replace_fields

ROOT = Path(__file__).resolve().parent.parent


def test_demo_prints_the_timeline_and_answer_and_writes_the_run(tmp_path):
    """``python -m agents demo`` runs offline, prints a timeline, and writes the run's JSON."""
    result = agents_cli("demo", "--out", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[0].split() == ["step", "type", "tools", "tokens", "duration", "stop"]
    assert re.search(r"^1\s+tool_execution\s+convert, convert, convert \(blocked\)", out, re.M)
    assert re.search(r"^3\s+final_response\s+-\s+\d+\s+[\d.]+ ms\s+completed$", out, re.M)
    assert "answer: Your trip costs $231.20" in out
    path = Path(re.search(r"run written to (.+)$", out, re.M).group(1))
    assert path.parent == tmp_path and path.suffix == ".jsonl"
    state = AuditLog.read(path)
    assert AuditLog.verify(path) > 0
    assert state.status is ExecutionStatus.COMPLETED
    assert [s.step_type for s in state.steps] == [StepType.TOOL_EXECUTION] * 2 + [
        StepType.FINAL_RESPONSE
    ]
    assert result.stderr == ""


def test_demo_writes_to_the_current_directory_by_default(tmp_path):
    """Without ``--out`` the run file lands in the working directory."""
    result = agents_cli("demo", cwd=tmp_path)
    assert result.returncode == 0
    assert len(list(tmp_path.glob("agents-demo-*.jsonl"))) == 1
    assert not list(tmp_path.glob(".agents-demo-*"))  # no temporary file left behind


def test_console_script_is_installed(tmp_path):
    """The ``agents`` console script (installed beside the interpreter) runs the CLI."""
    script = Path(sys.executable).parent / "agents"
    assert script.exists(), "pip install -e . installs the agents console script"
    result = subprocess.run(
        [str(script), "demo", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_unwritable_output_is_a_one_line_error(tmp_path, capsys):
    """A run file that cannot be written: exit code 2, one line on stderr, no traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["demo", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err
    assert "Traceback" not in err


def test_bad_usage_exits_with_code_two(tmp_path):
    """Unknown commands and options are bad input: exit code 2."""
    assert agents_cli("explode", cwd=tmp_path).returncode == 2
    assert agents_cli(cwd=tmp_path).returncode == 2
    assert agents_cli("demo", "--nope", cwd=tmp_path).returncode == 2


def test_demo_agent_uses_two_tools_a_hook_and_a_step_limit():
    """The demo shows the moving parts it promises."""
    loop, state = build_demo()
    assert list(loop.tools) == ["convert", "total"]
    assert [h.name for h in loop.hooks] == ["known_currencies_only"]
    assert loop.max_steps == 5
    final = loop.run(state)
    blocked = [e for e in final.tool_executions if e.blocked]
    assert len(blocked) == 1 and "JPY" in blocked[0].error.message


def demo_file(directory: Path) -> Path:
    assert agents_cli("demo", "--out", str(directory), cwd=directory).returncode == 0
    return next(directory.glob("agents-demo-*.jsonl"))


def test_inspect_prints_the_timeline_status_and_answer(tmp_path):
    """``inspect`` shows the TimelineRow columns, the status, stop reason and answer."""
    path = demo_file(tmp_path)
    result = agents_cli("inspect", str(path), cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == TIMELINE_HEADER
    assert "status: completed" in lines and "stop reason: completed" in lines
    assert any(line.startswith("final response: Your trip costs") for line in lines)
    as_json = json.loads(agents_cli("inspect", str(path), "--json", cwd=tmp_path).stdout)
    assert [row["step"] for row in as_json["timeline"]] == [1, 2, 3]
    assert as_json["status"] == "completed"


def test_verify_accepts_an_intact_log_and_rejects_a_tampered_one(tmp_path):
    """``verify`` exits 0 for an intact log, 1 naming the line for an edited one."""
    path = demo_file(tmp_path)
    ok = agents_cli("verify", str(path), cwd=tmp_path)
    assert ok.returncode == 0 and "intact and complete" in ok.stdout
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace('"step":1', '"step":7', 1)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(lines), encoding="utf-8")
    before = tampered.read_bytes()
    result = agents_cli("verify", str(tampered), cwd=tmp_path)
    assert result.returncode == 1
    assert "line 2" in result.stderr and "Traceback" not in result.stderr
    assert tampered.read_bytes() == before  # nothing the CLI does modifies what it reads


def test_report_writes_a_self_contained_page(tmp_path):
    """``report`` writes one HTML file with no external URLs."""
    path = demo_file(tmp_path)
    out = tmp_path / "report.html"
    result = agents_cli("report", str(path), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('class="step') == 3
    assert "http://" not in page and "https://" not in page and "src=" not in page
    assert "no rate for &#x27;JPY&#x27;" in page or "JPY" in page


def test_no_command_writes_its_output_over_what_it_reads(tmp_path):
    """``report -o`` naming the run file it reports on, and ``regress --report`` naming a
    recording (given, or in a folder given): exit 2 with one line, before anything is
    written — ``report run.jsonl -o run.jsonl`` replaced the audit log with its page."""
    path = demo_file(tmp_path)
    before = path.read_bytes()
    (tmp_path / "runs").mkdir()
    kept = tmp_path / "runs" / "a.jsonl"
    kept.write_bytes(before)
    target = "examples.support_agent:build"
    for args in (
        ("report", str(path), "-o", str(path)),
        ("report", path.name, "-o", f"../{tmp_path.name}/{path.name}"),
        ("regress", target, str(path), "--report", str(path)),
        ("regress", target, "runs", "--report", str(kept)),
    ):
        result = agents_cli(*args, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert result.returncode == 2, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1 and "write elsewhere" in result.stderr
    assert path.read_bytes() == before and kept.read_bytes() == before
    assert AuditLog.verify(path) > 0
    written = agents_cli("report", str(path), "-o", str(tmp_path / "runs" / "r.html"), cwd=tmp_path)
    assert written.returncode == 0, written.stderr


def test_replay_and_diff(tmp_path):
    """``replay --verify`` matches the record; ``diff`` finds the first divergence."""
    path = demo_file(tmp_path)
    replay = agents_cli("replay", str(path), "--verify", cwd=tmp_path)
    assert replay.returncode == 0 and "replay matches the record" in replay.stdout
    # the durations are the replay's, and say so (inspect shows the recorded ones)
    assert replay.stdout.splitlines()[0].split()[6] == "replay_duration"
    inspected = agents_cli("inspect", str(path), cwd=tmp_path)
    assert inspected.stdout.splitlines()[0].split()[6] == "duration"
    (tmp_path / "again").mkdir()
    other = demo_file(tmp_path / "again")
    same = agents_cli("diff", str(path), str(other), cwd=tmp_path)
    assert same.returncode == 0, same.stdout
    from agents import AgentState

    state = AuditLog.read(path)
    changed = state.with_execution(
        replace_fields(
            state.execution, step_executions=[state.step_executions[0], state.step_executions[1]]
        )
    )
    changed_file = tmp_path / "changed.json"
    changed_file.write_text(changed.to_json(), encoding="utf-8")
    different = agents_cli("diff", str(path), str(changed_file), cwd=tmp_path)
    assert different.returncode == 1
    assert "first divergence: step 3" in different.stdout
    assert AgentState.from_json(changed_file.read_text(encoding="utf-8")) == changed


def test_run_loads_a_loop_and_writes_its_run_file(tmp_path):
    """``run MODULE:ATTR --input`` runs a user's loop and writes an audit log."""
    (tmp_path / "my_agent.py").write_text(
        "from agents import AgentLoop\n"
        "from agents.testing import ScriptedDriver, reply\n"
        "def make():\n"
        "    return AgentLoop(ScriptedDriver([reply('hi there')]))\n",
        encoding="utf-8",
    )
    result = agents_cli(
        "run", "my_agent:make", "--input", "hello", "--out", "run.jsonl", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "final response: hi there" in result.stdout
    assert AuditLog.read(tmp_path / "run.jsonl").final_response == "hi there"


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("broken:make", "cannot load broken:make: RuntimeError: no config"),
        ("fine:missing", "cannot load fine:missing: AttributeError"),
        ("fine", "expected MODULE:ATTR"),
        ("fine:value", "is not an AgentLoop"),
    ],
)
def test_run_reports_a_module_it_cannot_use_in_one_line(tmp_path, target, fragment):
    (tmp_path / "broken.py").write_text("raise RuntimeError('no config')\n", encoding="utf-8")
    (tmp_path / "fine.py").write_text("value = 42\n", encoding="utf-8")
    result = agents_cli("run", target, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and fragment in result.stderr, result.stderr
    assert not (tmp_path / "agents-run.jsonl").exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "no such file"),
        ("", "empty file"),
        ("not json at all", "not JSON"),
        ("{}", "JSON, but neither an audit log nor an AgentState"),
        (b"\xff\xfe garbage", "not JSON"),
        ('{"kind": "AgentState", "schema_version": 99}', "schema_version"),
        ('{"kind": "StepExecution", "schema_version": 1}', "a StepExecution document"),
        ('{"kind": "InferenceRecord", "step": 1}\n', "a recording of model calls"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_two(tmp_path, content, fragment):
    """Missing files, empty files, garbage, other kinds, future versions: one line on
    stderr saying what the file is (no stray ``$:``), exit 2."""
    path = tmp_path / "input.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    for command in (["inspect", str(path)], ["report", str(path), "-o", "out.html"]):
        result = agents_cli(*command, cwd=tmp_path)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr.count("\n") == 1 and fragment in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and "$:" not in result.stderr
    assert not (tmp_path / "out.html").exists()  # a failed command leaves no output file
    # verify: a missing file is bad input (2); any other file that is not an intact,
    # complete log fails verification (1).
    verified = agents_cli("verify", str(path), cwd=tmp_path)
    assert verified.returncode == (2 if content is None else 1), verified.stderr
    assert verified.stderr.count("\n") == 1 and "Traceback" not in verified.stderr


def test_an_error_naming_a_path_with_a_line_break_is_one_line(tmp_path, capsys, monkeypatch):
    """``verify``, ``bundle`` and ``keygen`` wrote their errors as they were, where every
    other command makes them one line: a path holding a line break split the error in two,
    and a secret of the environment named in one was not scrubbed."""
    from agents.cli import main

    monkeypatch.chdir(tmp_path)
    odd = "two\nlines"
    (tmp_path / f"{odd}.pem").write_text("taken")
    for argv in (
        ["verify", f"{odd}.jsonl"],
        ["bundle", f"{odd}.jsonl", "-o", "out.zip"],
        ["keygen", "--out", odd],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "two lines" in err, (argv, err)
    # An error naming a secret the environment holds says it scrubbed.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-secret-in-a-path-0001")
    assert main(["verify", "sk-planted-secret-in-a-path-0001.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "sk-planted" not in err and err.count("\n") == 1, err


def test_progress_goes_to_a_terminal_only(tmp_path):
    """Verifying a long log shows progress on a terminal's stderr, and nowhere else."""

    from helpers import initial, make_loop

    from agents.testing import call, reply

    log = tmp_path / "long.jsonl"
    with AuditLog.open(log, events=True, durability="none") as audit:  # 21,000 records
        make_loop(
            *[call("add", a=i, b=1) for i in range(3_500)],
            reply("done"),
            max_steps=4_000,
            listeners=[audit],
        ).run(initial())
    piped = agents_cli("verify", str(log), cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""
    returncode, shown = on_terminal(["verify", str(log)], "stderr")
    assert returncode == 0
    assert b"verifying 20,000/" in shown


def on_terminal(args: list[str], stream: str) -> tuple[int, bytes]:
    """``python -m agents ARGS`` with its ``stream`` (``"stdout"`` or ``"stderr"``) a
    terminal (a pseudo-terminal's): its exit code and what the terminal was sent."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agents", *args],
            stdout=follower if stream == "stdout" else subprocess.PIPE,
            stderr=follower if stream == "stderr" else subprocess.PIPE,
            timeout=120,
        )
        os.close(follower)
        shown = b""
        try:
            while chunk := os.read(leader, 4096):
                shown += chunk
        except OSError:
            pass
    finally:
        os.close(leader)
    return result.returncode, shown


HOSTILE = "ok\x1b[2J\x1b]0;pwned\x07\rhidden\x9b"  # clears, titles, hides, 8-bit CSI


def test_a_runs_text_cannot_drive_the_terminal_it_is_shown_on(tmp_path):
    """A model's answer (or a tool's output, a forged file) holding escape sequences was
    printed raw by ``inspect``, ``run`` and the error lines: it could clear the screen,
    set the title, hide text behind a carriage return. On a terminal they are shown as
    escapes; to a pipe the text goes unchanged (data for a program, as ``ls`` does)."""

    from agents.testing import FunctionDriver

    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        loop = AgentLoop(FunctionDriver(lambda request: HOSTILE)).with_listeners(audit)
        loop.run(AgentState.initial(messages=["hi"]))
    returncode, shown = on_terminal(["inspect", str(log)], "stdout")
    assert returncode == 0
    assert b"ok\\x1b[2J\\x1b]0;pwned\\x07\\x0dhidden\\x9b" in shown
    assert b"\x1b" not in shown and b"\x07" not in shown
    piped = agents_cli("inspect", str(log), cwd=tmp_path)
    assert "final response: ok\x1b[2J\x1b]0;pwned\x07" in piped.stdout  # (\r read as \n)
    (tmp_path / "failing.py").write_text(
        "from agents import AgentLoop\n"
        "from agents.testing import ScriptedDriver, fail\n"
        "def make():\n"
        f"    return AgentLoop(ScriptedDriver([fail(RuntimeError({HOSTILE!r}))]))\n",
        encoding="utf-8",
    )
    failed = agents_cli("run", "failing:make", "--out", "failed.jsonl", cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stderr == (
        "agents run: the run failed: RuntimeError: ok\\x1b[2J\\x1b]0;pwned\\x07 hidden\\x9b\n"
    )


def test_a_failed_run_exits_one_and_says_why(tmp_path):
    """``agents run`` exits 1 when the run ends FAILED, with the reason in one line on
    stderr; the run file is still written (it holds the whole story)."""
    (tmp_path / "failing.py").write_text(
        "from agents import AgentLoop\n"
        "from agents.testing import ScriptedDriver, fail\n"
        "def make():\n"
        "    return AgentLoop(ScriptedDriver([fail(RuntimeError('model down'))]))\n",
        encoding="utf-8",
    )
    result = agents_cli("run", "failing:make", "--out", "run.jsonl", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == "agents run: the run failed: RuntimeError: model down\n"
    assert AuditLog.read(tmp_path / "run.jsonl").status is ExecutionStatus.FAILED


def test_an_unwritable_report_names_the_users_path(tmp_path):
    """``report -o`` into a missing directory names that path, not a temporary file."""
    path = demo_file(tmp_path)
    target = tmp_path / "missing" / "r.html"
    result = agents_cli("report", str(path), "-o", str(target), cwd=tmp_path)
    assert result.returncode == 2
    assert f"cannot write {target}" in result.stderr and ".tmp" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_written_files_respect_the_umask(tmp_path):
    """The demo's run file, a report and a bundle get the mode any new file gets (not
    mkstemp's 600)."""
    script = "import os, sys; os.umask(0o022); from agents.cli import main; sys.exit(main())"

    def written(*argv: str) -> None:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    written("demo", "--out", str(tmp_path))
    path = next(tmp_path.glob("agents-demo-*.jsonl"))
    written("report", str(path), "-o", "r.html")
    written("bundle", str(path), "-o", "run.zip")
    for output in (path, tmp_path / "r.html", tmp_path / "run.zip"):
        assert output.stat().st_mode & 0o777 == 0o644, output


def test_inspect_shows_blocked_and_failed_calls(tmp_path):
    """The table marks a blocked or failed call; ``--json`` lists every call's outcome."""
    path = demo_file(tmp_path)
    table = agents_cli("inspect", str(path), cwd=tmp_path).stdout
    assert re.search(r"^1\s+tool_execution\s+convert, convert, convert \(blocked\)", table, re.M)
    calls = json.loads(agents_cli("inspect", str(path), "--json", cwd=tmp_path).stdout)
    outcomes = [(c["step"], c["tool"], c["outcome"]) for c in calls["tool_calls"]]
    assert outcomes == [
        (1, "convert", "ok"),
        (1, "convert", "ok"),
        (1, "convert", "blocked"),
        (2, "total", "ok"),
    ]
    assert "no exchange rate" in calls["tool_calls"][2]["error"]
    assert calls["finished"] is True


def test_the_demo_hints_at_commands_that_work_outside_a_venv(tmp_path):
    """The demo's "next:" line names the command as it was invoked (here
    ``<python> -m agents``), not a bare ``agents`` that needs an activated venv."""
    out = agents_cli("demo", cwd=tmp_path).stdout
    hint = next(line for line in out.splitlines() if line.startswith("next:"))
    assert hint.split()[1:4] == [sys.executable, "-m", "agents"]
    # the commands the README says it prints, each on its line
    commands = [line.split(" agents ", 1)[1].split()[0] for line in out.splitlines()[-4:]]
    assert commands == ["inspect", "verify", "replay", "report"]
    assert "--verify" in out.splitlines()[-2]
    script = Path(sys.executable).parent / "agents"
    via_script = subprocess.run(
        [str(script), "demo"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    ).stdout
    hint = next(line for line in via_script.splitlines() if line.startswith("next:"))
    assert hint.split()[1] == str(script)


def test_the_parser_is_built_once():
    """Building the command line's parser reads argparse's translations from disk (~4 ms):
    ``main`` builds it once a process, not once a call (a decorator meant for it had slid
    onto the port check written above it)."""
    from agents.cli import _parser

    assert _parser() is _parser()


# -- a log holding several runs ---------------------------------------------------------------


def _two_runs(path: Path) -> tuple[object, object]:
    """A log holding two runs, as ``mcp-serve --audit-log`` writes one: the first waits for
    approval at its first step (no step recorded yet) and is resumed after the second ran
    whole, its records interleaved with the second's. (The two loops' ids come from the
    same sequence: both runs have the same agent and execution ids.)"""
    from helpers import initial, make_loop

    from agents import tool
    from agents.testing import call, reply

    @tool(requires_approval=True)
    def refund(amount: int) -> str:
        """Refund an amount."""
        return f"refunded {amount}"

    with AuditLog.open(path) as log:
        waiting = make_loop(
            call("refund", amount=5), reply("refunded"), tools=[refund], listeners=[log]
        ).run(initial("refund 5"))
        assert waiting.status is ExecutionStatus.SUSPENDED and waiting.step_count == 0
        other = make_loop(reply("hello"), listeners=[log]).run(initial("hi"))
        resumed = make_loop(reply("refunded"), tools=[refund], listeners=[log])
        first = resumed.run(waiting.with_approval(waiting.pending_approvals[0].id, True))
    return first, other


def test_every_run_of_a_log_is_read_in_the_order_they_started(tmp_path):
    """``AuditLog.read_runs``: both runs, the resumed one whole (its stretches joined past
    the other run's records); ``read`` is still the run of the last start."""
    first, other = _two_runs(tmp_path / "two.jsonl")
    runs = AuditLog.read_runs(tmp_path / "two.jsonl")
    assert [r.final.to_json() for r in runs] == [first.to_json(), other.to_json()]
    assert len(runs[0].segments) == 2 and runs[0].complete
    assert AuditLog.read(tmp_path / "two.jsonl").to_json() == first.to_json()


def test_inspect_report_replay_and_export_show_every_run(tmp_path):
    """On a log of two runs, ``inspect``, ``report`` and ``replay`` say "2 runs in this
    log" and show each, ``--run N`` one of them; a run with no step says so rather than
    showing an empty table; ``export`` sends one trace a run."""
    from agents.otel import export

    first, other = _two_runs(tmp_path / "two.jsonl")
    shown = agents_cli("inspect", "two.jsonl", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("2 runs in this log")
    assert shown.stdout.count("run 1 of 2: agent") == shown.stdout.count("run 2 of 2") == 1
    assert shown.stdout.count("final response: refunded") == 1
    assert shown.stdout.count("final response: hello") == 1
    one = agents_cli("inspect", "two.jsonl", "--run", "2", cwd=tmp_path)
    assert "runs in this log" not in one.stdout and "final response: hello" in one.stdout
    assert "refunded" not in one.stdout
    last = agents_cli("inspect", "two.jsonl", "--run", "-1", "--json", cwd=tmp_path)
    assert json.loads(last.stdout)["final_response"] == "hello"
    both = json.loads(agents_cli("inspect", "two.jsonl", "--json", cwd=tmp_path).stdout)
    assert both["count"] == 2 and [r["final_response"] for r in both["runs"]] == [
        "refunded",
        "hello",
    ]
    missing = agents_cli("inspect", "two.jsonl", "--run", "3", cwd=tmp_path)
    assert missing.returncode == 2 and "the file holds 2 runs" in missing.stderr
    assert "Traceback" not in missing.stderr
    replayed = agents_cli("replay", "two.jsonl", "--verify", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("2 runs in this log")
    assert replayed.stdout.count("replay matches the record") == 2
    reported = agents_cli("report", "two.jsonl", "-o", "two.html", cwd=tmp_path)
    assert reported.returncode == 0 and "2 runs in this log" in reported.stdout
    page = (tmp_path / "two.html").read_text()
    assert "2 runs in this log" in page
    assert 'id="run-1-final-response">refunded<' in page
    assert 'id="run-2-final-response">hello<' in page
    assert page.count('id="final-response"') == 0  # each id once on the page

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = []
    for run in (tmp_path / "two.jsonl", first, other):
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        export(run, provider)
        spans.append(exporter.get_finished_spans())
        provider.shutdown()
    assert len(spans[0]) == len(spans[1]) + len(spans[2])
    assert [s.name for s in spans[0]].count("invoke_agent agent") == 2


def test_a_run_with_no_step_says_so_in_the_table(tmp_path):
    """A run that waits before any step is recorded shows "(no steps)", not an empty
    table."""
    from helpers import initial, make_loop

    from agents import tool
    from agents.testing import call

    @tool(requires_approval=True)
    def refund(amount: int) -> str:
        """Refund an amount."""
        return f"refunded {amount}"

    with AuditLog.open(tmp_path / "one.jsonl") as log:
        make_loop(call("refund", amount=5), tools=[refund], listeners=[log]).run(initial())
    shown = agents_cli("inspect", "one.jsonl", cwd=tmp_path)
    assert "(no steps)" in shown.stdout and "status: suspended" in shown.stdout
