"""``python -m benchmarks --quick``: the benchmark runner's smoke run (times are not checked;
performance is measured by the runner itself, never asserted in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_quick_run_measures_every_workload_and_writes_its_report(tmp_path):
    report = tmp_path / "benchmarks.md"
    report.write_text("# Benchmarks\n\nIntro.\n\n## Hand-written section\n\nKept.\n")
    for _ in range(2):  # the second run replaces the generated part, keeping the rest
        result = subprocess.run(
            [sys.executable, "-m", "benchmarks", "--quick", "--report", str(report)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
    text = report.read_text()
    assert text.count("<!-- benchmarks:begin -->") == 1
    assert text.startswith("# Benchmarks\n\nIntro.\n\n<!-- benchmarks:begin -->")
    assert text.endswith("## Hand-written section\n\nKept.\n")
    for needle in (
        "| agents | 0.1.0 |",
        "| bare loop | - |",
        "| LangGraph |",
        "| pydantic-ai |",
        "| OpenAI Agents SDK |",
        "every intermediate state kept",
        "`to_json` + `from_json`",
        "runs at once (`arun`)",
        "Import time (fresh interpreter): agents",
        "| injected clock and ids: ≤ 12x the bare dict loop (N = 100) |",
        "| **defaults**: ≤ 10x the bare dict loop (N = 100, interleaved) |",
        "| **defaults**: µs per step at N = 10,000 ≤ 1.15x N = 100 |",
        "| codec ≤ 1.5x stdlib json (200-step state) |",
        "| durable step ≤ 1.3x raw DBOS doing the same work (sqlite, N = 100) |",
        "| compacting SQL session step ≤ 1 ms, flat to N = 300 |",
        "| every intermediate state retained ≤ 1.3x the final state (200 steps) |",
        "| regress 1,000 recorded 20-step runs (tools=record) ≤ 2x running them |",
        "| regress: memory flat (peak at 100 runs ≤ 2x the peak at a tenth of them",
        "`thread=False` tool, on the event loop",
        "| live tracing (OTelListener, SDK batch processor), 100 steps ≤ 3x untraced |",
        "| agents serve: the server's CPU per step (100 sessions at once) ≤ 3x in process |",
    ):
        assert needle in text, needle
