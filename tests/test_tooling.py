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


def type_ignores(root: Path) -> tuple[list[str], list[str]]:
    """Every ``# type: ignore`` under ``root`` (``file:line``), and those without a reason:
    a comment after it on its line, or a comment line right above it."""
    found, unexplained = [], []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if "# type: ignore" not in line:
                continue
            where = f"{path.relative_to(root)}:{number}"
            found.append(where)
            after = line.split("# type: ignore", 1)[1]
            above = lines[number - 2].strip() if number > 1 else ""
            if "#" not in after and not above.startswith("#"):
                unexplained.append(where)
    return found, unexplained


def test_ten_type_ignores_at_most_each_with_its_reason():
    found, unexplained = type_ignores(Path(__file__).resolve().parent.parent / "agents")
    assert len(found) <= 10, found
    assert unexplained == []


def test_the_type_ignore_check_finds_one_without_a_reason(tmp_path):
    (tmp_path / "a.py").write_text(
        "x = f()  # type: ignore[misc]\ny = g()  # type: ignore[misc]  # g is untyped\n"
    )
    assert type_ignores(tmp_path) == (["a.py:1", "a.py:2"], ["a.py:1"])


def test_the_loop_is_typed_by_its_protocols():
    """``AgentLoop``'s parts are typed by the protocols they follow, not ``Any``."""
    import typing

    from agents import AgentLoop
    from agents.core.compaction import Compactor
    from agents.core.compilers import MessageCompiler
    from agents.core.driver import Driver
    from agents.shell.log import Logger

    hints = typing.get_type_hints(AgentLoop)
    assert hints["driver"] == Driver
    assert hints["message_compiler"] == MessageCompiler | None
    assert hints["compaction"] == Compactor | None
    assert hints["logger"] == Logger | None


def test_no_frozen_object_is_written_behind_attrs_back():
    """A frozen object's caches live in a holder of their own (``AgentLoop._derived``), or
    are made with it (attrs factories): nothing writes through ``object.__setattr__``."""
    package = Path(__file__).resolve().parent.parent / "agents"
    writes = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "object.__setattr__" in line
    ]
    assert writes == []
