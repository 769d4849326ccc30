"""The ``agents`` command line: ``demo`` runs offline and writes a run file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from agents import AgentState, ExecutionStatus, StepType
from agents.cli import main
from agents.cli.demo import build_demo


def agents_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agents", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


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
    assert path.parent == tmp_path
    state = AgentState.from_json(path.read_text(encoding="utf-8"))
    assert state.status is ExecutionStatus.COMPLETED
    assert [s.step_type for s in state.steps] == [StepType.TOOL_EXECUTION] * 2 + [
        StepType.FINAL_RESPONSE
    ]
    assert result.stderr == ""


def test_demo_writes_to_the_current_directory_by_default(tmp_path):
    """Without ``--out`` the run file lands in the working directory."""
    result = agents_cli("demo", cwd=tmp_path)
    assert result.returncode == 0
    assert len(list(tmp_path.glob("agents-demo-*.json"))) == 1


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
