"""The code stays clean: ruff and ``mypy --strict`` pass (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_is_clean():
    """``ruff check`` finds nothing in the package, tests, benchmarks and examples."""
    result = _run("ruff", "check", "agents", "tests", "benchmarks", "examples")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean():
    """``mypy --strict`` (pyproject settings) passes on the package."""
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
