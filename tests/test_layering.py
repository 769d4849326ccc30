"""Architecture (SPEC §1, STYLE.md): imports point downward; each library has one importer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agents"

# Lower numbers are lower layers. A module may import its own layer and the ones below.
LAYERS = {
    # records: frozen values, no I/O
    **dict.fromkeys(
        [
            "persistent",
            "redaction",
            "record",
            "errors",
            "messages",
            "usage",
            "signals",
            "inference",
            "step",
            "context",
            "execution",
            "state",
            "events",
            "timeline",
            "goal",
        ],
        0,
    ),
    # edges the lower layers lean on: JSON codec, structlog bridge
    **dict.fromkeys(["codec", "log", "schema", "output"], 1),
    # pure core: effects, schemas, transitions, the step machine (+ its injected protocols)
    **dict.fromkeys(
        [
            "effects",
            "transitions",
            "stopping",
            "hooks",
            "tools",
            "machine",
            "phases",
            "compilers",
            "compaction",
            "clock",
            "cancellation",
            "bridge",
        ],
        2,
    ),
    # shell: runners and drivers
    **dict.fromkeys(
        ["loop", "drivers", "reporting", "retry", "perform", "describe", "subagents"], 3
    ),
    # the outermost edges
    **dict.fromkeys(
        [
            "testing",
            "cli",
            "audit",
            "replaying",
            "persistence",
            "durable",
            "definitions",
            "__init__",
            "__main__",
        ],
        4,
    ),
}
RECORDS = {name for name, layer in LAYERS.items() if layer == 0}
OWNERS = {
    "litellm": "drivers/litellm.py",
    "structlog": "log.py",
    "hypothesis": "testing/strategies.py",
    "dbos": "durable/dbos.py",
    "yaml": "definitions.py",
    "pytest": "testing/plugin.py",
    "psycopg": "persistence/postgres.py",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        yield relative, ast.parse(path.read_text(encoding="utf-8"))


def _layer(relative: Path) -> int:
    key = relative.parts[0].removesuffix(".py")
    return LAYERS[key]


def _module_level_imports(tree: ast.Module):
    """Imports executed at import time (function-level imports are deliberate and lazy)."""
    for node in tree.body:
        nodes = [node]
        if isinstance(node, ast.If):  # if TYPE_CHECKING: counts as a dependency
            nodes = node.body
        for item in nodes:
            if isinstance(item, ast.ImportFrom) and item.module:
                yield item.module
            elif isinstance(item, ast.Import):
                yield from (alias.name for alias in item.names)


def test_every_module_has_a_layer():
    """A new module must be placed in a layer."""
    for relative, _ in _modules():
        assert relative.parts[0].removesuffix(".py") in LAYERS, relative


def test_imports_point_downward():
    """No module imports from a layer above its own."""
    violations = []
    for relative, tree in _modules():
        own = _layer(relative)
        for name in _module_level_imports(tree):
            if not name.startswith("agents."):
                continue
            target = name.split(".")[1]
            if LAYERS[target] > own:
                violations.append(
                    f"{relative} (layer {own}) imports {name} (layer {LAYERS[target]})"
                )
    assert violations == []


def test_each_third_party_library_has_one_importer():
    """litellm, structlog, hypothesis and DBOS are each imported by one module only."""
    for relative, tree in _modules():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                if root in OWNERS:
                    assert str(relative) == OWNERS[root], f"{relative} imports {name}"


def test_records_do_no_io_and_no_json():
    """Records import neither json, the clock, random sources nor logging."""
    forbidden = {"json", "time", "random", "uuid", "os", "logging", "structlog", "datetime.now"}
    for relative, tree in _modules():
        if relative.parts[0].removesuffix(".py") not in RECORDS:
            continue
        for name in _module_level_imports(tree):
            assert name.split(".")[0] not in forbidden, f"{relative} imports {name}"
        source = ast.unparse(tree)
        assert ".now(" not in source and "uuid4" not in source, relative
