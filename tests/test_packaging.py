"""The package declares what it imports: each third-party module a file of ``agents/``
imports comes from a distribution that ``pyproject.toml`` names — among the dependencies,
or in the extra of the part that file belongs to."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agents"

# Which extra a file's imports belong to (by its path in agents/); any other file's belong
# to the dependencies every install has.
EXTRAS = {
    "mcp/": "mcp",
    "serve/": "serve",
    "otel/": "otel",
    "durable/dbos.py": "dbos",
    "persistence/postgres.py": "postgres",
    "audit/keys.py": "signing",
    "testing/strategies.py": "testing",
    "testing/plugin.py": "testing",
}


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    bare = re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def _declared() -> dict[str, set[str]]:
    """The distributions ``pyproject.toml`` names: ``""`` for the dependencies, then by
    extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {"": {_name(r) for r in project["dependencies"]}}
    for extra, requirements in project["optional-dependencies"].items():
        declared[extra] = {_name(r) for r in requirements if not r.startswith("agents[")}
    return declared


@functools.cache
def _owners() -> dict[str, str]:
    """Each installed file's distribution (normalised), by its absolute path: each
    distribution's folder resolved (links followed) once, its files' paths joined to it."""
    owners = {}
    for dist in importlib.metadata.distributions():
        name = _name(dist.metadata["Name"])
        base = Path(dist.locate_file("")).resolve()
        for file in dist.files or ():
            owners[os.path.normpath(base / file)] = name
    return owners


def _imports() -> dict[str, set[str]]:
    """Third-party modules imported (absolute imports), by the file of agents/ that does."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
                if _namespace(node.module):  # ``from opentelemetry import trace``
                    names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "agents":
                    found.setdefault(relative, set()).add(name)
    return found


def _namespace(module: str) -> bool:
    """Whether ``module`` is a namespace package (files of several distributions)."""
    if module.split(".")[0] in sys.stdlib_module_names or module.startswith("agents"):
        return False
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.origin is None


def _extra_of(relative: str) -> str:
    return next((extra for prefix, extra in EXTRAS.items() if relative.startswith(prefix)), "")


def test_every_imported_distribution_is_declared_where_it_is_used():
    """No file imports a third-party module whose distribution its part does not declare
    (``mcp/sdk.py``'s ``httpx2`` and ``mcp_types`` in the ``mcp`` extra, ``serve/agui.py``'s
    ``pydantic`` in ``serve``, each OpenTelemetry package ``otel/sdk.py`` imports in
    ``otel``)."""
    declared, owners = _declared(), _owners()
    missing = []
    for relative, modules in _imports().items():
        extra = _extra_of(relative)
        allowed = declared[""] | declared.get(extra, set())
        for module in sorted(modules):
            spec = importlib.util.find_spec(module)
            assert spec is not None and spec.origin is not None, module
            owner = owners.get(str(Path(spec.origin).resolve()))
            assert owner is not None, f"{module}: no installed distribution has it"
            if owner not in allowed:
                missing.append(
                    f"{relative} imports {module} ({owner}), not in [{extra or 'dependencies'}]"
                )
    assert missing == []


def test_the_check_finds_an_undeclared_import():
    """The check can fail: a module of ``cryptography`` is not among the dependencies."""
    spec = importlib.util.find_spec("cryptography.fernet")
    assert spec is not None and spec.origin is not None
    owner = _owners()[str(Path(spec.origin).resolve())]
    assert owner == "cryptography" and owner not in _declared()[""]
