"""The repository stands alone: code, tests and docs cite its own pages (docs/design/ holds
the contract), never documents kept outside it, and every page they cite exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [
        *(ROOT / "agents").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "benchmarks").rglob("*.py"),
        *(ROOT / "examples").rglob("*.py"),
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "agents").rglob("*.html"),
        *(ROOT / "agents").rglob("*.js"),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        ROOT / "pyproject.toml",
        ROOT / ".ci" / "run",
    ]
)
# Documents that lived beside the project, and the tracker's numbers: written so that this
# file does not match itself.
OUTSIDE = re.compile(r"\b(" + "SP" + "EC|FA" + "CTS|ST" + r"YLE)\b|\b[Ii]ssues? #?\d+")
CITED = re.compile(r"(?<![\w/.])docs/[\w./-]+\.(?:md|png)")
LINK = re.compile(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _mentions(text: str) -> list[str]:
    return [match.group(0) for match in OUTSIDE.finditer(text)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_document_from_outside_is_cited(path: Path) -> None:
    assert _mentions(_text(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_cited_page_exists(path: Path) -> None:
    text = _text(path)
    missing = [cited for cited in CITED.findall(text) if not (ROOT / cited).exists()]
    if path.suffix == ".md":  # relative links of a page
        missing += [
            link
            for link in LINK.findall(text)
            if not link.startswith(("http", "mailto")) and not (path.parent / link).exists()
        ]
    assert missing == []


def test_the_checks_find_what_they_look_for() -> None:
    """The patterns themselves, on made-up text: a citation of an outside document or an
    issue number is found, and a page that does not exist is named."""
    outside = "see " + "SP" + "EC §3 and " + "is" + "sue 12; the _ST" + "YLE constant is fine"
    assert _mentions(outside) == ["SP" + "EC", "is" + "sue 12"]
    nowhere = "docs/" + "nowhere.md"
    assert CITED.findall(f"as docs/design/loop.md and {nowhere} say") == [
        "docs/design/loop.md",
        nowhere,
    ]
    assert not (ROOT / nowhere).exists() and (ROOT / "docs/design/loop.md").exists()


def test_the_design_pages_cover_the_contract() -> None:
    """The contract's parts each have a page."""
    pages = {path.stem for path in (ROOT / "docs" / "design").glob("*.md")}
    assert {
        "index", "records", "loop", "hooks", "tools", "drivers", "determinism",
        "events", "sessions", "auditing", "testing", "errors",
    } <= pages  # fmt: skip
