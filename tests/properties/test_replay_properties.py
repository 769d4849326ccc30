"""Replay and crash reading over genuine runs: whatever run the
library makes — tool failures, blocked calls, follow-ups, steering, approvals across a
suspension, goals, sub-agents, compaction, output retries — ``agents replay --verify`` of
its audit log exits 0, and so does the log cut by a crash at any line; the cut log reads
back as the state after its last recorded step."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from runs import perform, scenarios

from agents import AuditLog
from agents.cli import main
from agents.shell.subagents import DEPTH_KEY


def replay_verify(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", "--verify", str(path)])
    return code, out.getvalue() + err.getvalue()


@given(scenarios)
def test_every_run_replays_from_its_audit_log(scenario):
    """``agents replay --verify`` of a genuine run's log exits 0; ``read`` gives the state
    the run returned."""
    with tempfile.TemporaryDirectory() as directory:
        done = perform(scenario, Path(directory) / "run.jsonl")
        assert AuditLog.read(done.log).to_json() == done.final.to_json()
        code, output = replay_verify(done.log)
        assert code == 0, output


def _top_level(record: dict) -> bool:
    payload = record["payload"]
    if "changes" in payload:  # a format-2 step or end record says its depth
        return payload.get("depth", 0) == 0
    state = payload.get("state", {})
    return DEPTH_KEY not in state.get("context", {}).get("metadata", {})


@given(scenarios, st.floats(min_value=0, max_value=1), st.booleans())
def test_a_crash_at_any_line_leaves_a_log_that_replays(scenario, where, tear):
    """Cut the log at any line (and tear the next one or not): the prefix replays with
    exit 0, and when it ends on a step record it reads back as the live state after that
    step."""
    with tempfile.TemporaryDirectory() as directory:
        done = perform(scenario, Path(directory) / "run.jsonl")
        lines = done.log.read_bytes().split(b"\n")[:-1]
        keep = 1 + int(where * (len(lines) - 1))
        cut = b"\n".join(lines[:keep]) + b"\n"
        if tear and keep < len(lines):
            cut += lines[keep][: len(lines[keep]) // 2]
        path = Path(directory) / "cut.jsonl"
        path.write_bytes(cut)
        code, output = replay_verify(path)
        assert code == 0, output
        records = [json.loads(line) for line in lines[:keep]]
        marks = [r for r in records if r["record"] in ("step", "end") and _top_level(r)]
        starts = [r for r in records if r["type"] == "ExecutionStarted" and _top_level(r)]
        if marks and marks[-1]["record"] == "step" and starts[-1]["seq"] < marks[-1]["seq"]:
            steps = sum(1 for r in marks if r["record"] == "step")
            assert AuditLog.read(path).to_json() == done.after_steps[steps - 1].to_json()
