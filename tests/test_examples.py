"""The scripts in examples/ run and do what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_support_agent_example():
    """The support agent blocks the oversized refund and makes the right one."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "support_agent.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == ("step 2: refund -> ToolBlocked: refund exceeds the order total of 40.0")
    assert lines[2] == "step 3: refund -> refunded 40.00 on A-1"
    assert lines[-1] == "completed: Refunded 40.00 on A-1."
