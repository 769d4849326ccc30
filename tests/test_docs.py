"""Every Python example in README.md and docs/ runs (each page's blocks in order)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_every_page_is_checked():
    """The pages the README and the design pages point to exist."""
    names = {str(page.relative_to(ROOT)) for page in PAGES}
    expected = {
        "README.md",
        "docs/index.md",
        "docs/tutorial.md",
        "docs/glossary.md",
        "docs/benchmarks.md",
        "docs/how-to/llm-providers.md",
        "docs/how-to/record-replay.md",
        "docs/how-to/property-testing.md",
        "docs/how-to/auditing.md",
        "docs/how-to/sessions.md",
        "docs/how-to/human-approval.md",
        "docs/how-to/scale-out.md",
        "docs/how-to/describe.md",
        "docs/how-to/subagents.md",
        "docs/how-to/definitions.md",
        "docs/how-to/context-window.md",
        "docs/how-to/regression-testing.md",
        "docs/how-to/tracing.md",
        "docs/how-to/mcp.md",
        "docs/how-to/serve.md",
        "docs/architecture.md",
    } | {f"docs/concepts/{name}.md" for name in ("state", "loop", "hooks", "stopping", "tools")}
    assert expected <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_examples_run(page, tmp_path, monkeypatch, capsys):
    """The page's Python blocks run in one namespace, top to bottom."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT / "tests"))  # pages may use the local LLM server
    text = page.read_text(encoding="utf-8")
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for number, match in enumerate(BLOCK.finditer(text), start=1):
        code = compile(match.group(1), f"{page.name}[block {number}]", "exec")
        exec(code, namespace)


def test_the_architecture_page_names_modules_that_exist():
    """Every module and folder the maintainers' page names (``core/machine.py``,
    ``agents/records/``, a bare ``codec.py`` in its folder's row) is in the package."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = {
        path.removeprefix("agents/")
        for path in re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", page)
    }
    package = ROOT / "agents"
    files = {path.name for path in package.rglob("*.py")}
    missing = sorted(
        path
        for path in named
        if not (ROOT / path).exists()  # tests/, benchmarks/ ...
        and not (package / path).exists()
        and not ("/" not in path and path in files)  # a file named in its folder's row
    )
    assert len(named) > 20
    assert missing == []
