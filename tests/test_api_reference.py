"""The API reference (docs/reference/, built by mkdocs with mkdocstrings): every public name
of ``agents`` and of each optional part's package has a docstring and a place in it."""

from __future__ import annotations

import functools
import importlib
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The packages the reference documents, and the page of each.
PACKAGES = {
    "agents": "agents.md",
    "agents.testing": "testing.md",
    "agents.testing.strategies": "testing.md",
    "agents.audit": "audit.md",
    "agents.definitions": "definitions.md",
    "agents.persistence.postgres": "postgres.md",
    "agents.durable.dbos": "dbos.md",
    "agents.mcp": "mcp.md",
    "agents.otel": "otel.md",
    "agents.serve": "serve.md",
    "agents.evals": "evals.md",
    "agents.evals.scorers": "evals.md",
}


def _public_names(package: str) -> list[str]:
    module = importlib.import_module(package)
    return list(module.__all__)


@functools.cache
def _read_by_griffe() -> Any:
    """The whole package as griffe reads it for the reference, once per test process (a
    subpackage's load reads all of ``agents`` again: about a second each)."""
    griffe = pytest.importorskip("griffe", reason="the docs extra is not installed")
    return griffe.load("agents", search_paths=[str(ROOT)], resolve_aliases=True)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_public_name_has_a_docstring(package: str) -> None:
    """Read as the reference reads it (griffe): a class or function by its own docstring,
    a constant or alias by the string that follows it."""
    tree = _read_by_griffe()
    loaded = tree if package == "agents" else tree[package.removeprefix("agents.")]
    missing = []
    for name in _public_names(package):
        member = loaded[name]
        target = member.final_target if member.is_alias else member
        if target.docstring is None or not target.docstring.value.strip():
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_package_has_its_page(package: str) -> None:
    page = (ROOT / "docs" / "reference" / PACKAGES[package]).read_text(encoding="utf-8")
    assert re.search(rf"^::: {re.escape(package)}$", page, re.M)


def _inventory(path: Path) -> set[str]:
    """The object names in a Sphinx inventory (``objects.inv``, what mkdocstrings writes)."""
    data = path.read_bytes()
    body = data.split(b"\n", 4)[4]  # four header lines, then zlib
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()}


def test_the_reference_builds_without_a_warning_and_holds_every_name(tmp_path: Path) -> None:
    """``mkdocs build --strict`` (a warning fails it): every public name is in the built
    reference's inventory."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    built = _inventory(site / "objects.inv")
    missing = [
        f"{package}.{name}"
        for package in PACKAGES
        for name in _public_names(package)
        if f"{package}.{name}" not in built
    ]
    assert missing == []
