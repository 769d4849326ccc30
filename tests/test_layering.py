"""Architecture (docs/architecture.md): imports point downward; each library has one importer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agents"

# Lower numbers are lower layers. A module may import its own layer and the ones below.
# Top-level modules and folders each sit in one layer.
LAYERS = {
    "errors": 0,  # the exception hierarchy
    "records": 1,  # frozen values, their JSON codec and schemas; no I/O
    "tools": 2,  # typed functions as tools: schemas, argument checks, invocation
    "core": 3,  # the pure core: the step machine, its phases, transitions, stopping, hooks
    "shell": 4,  # the loop and its runners, performers, retry, reporting, logging
    # the edges: one outside world each
    **dict.fromkeys(
        [
            "drivers",
            "persistence",
            "durable",
            "audit",
            "replaying",
            "runfiles",
            "otel",
            "mcp",
            "serve",
            "definitions",
            "definition_fields",
            "yaml_text",
            "cli",
            "testing",
            "evals",
            "__init__",
            "__main__",
        ],
        5,
    ),
}

OWNERS = {
    "litellm": "drivers/litellm.py",
    "structlog": "shell/log.py",
    "hypothesis": "testing/strategies.py",
    "dbos": "durable/dbos.py",
    "yaml": "yaml_text.py",
    "pytest": "testing/plugin.py",
    "psycopg": "persistence/postgres.py",
    "cryptography": "audit/keys.py",
    "orjson": "records/json_text.py",
    "opentelemetry": "otel/sdk.py",
    "mcp": "mcp/sdk.py",
    "httpx2": "mcp/sdk.py",
    "starlette": "serve/asgi.py",
    "uvicorn": "serve/asgi.py",
    "ag_ui": "serve/agui.py",
    "pydantic": "serve/agui.py",
    "tqdm": "cli/evals.py",
}


def _modules(package: Path = PACKAGE):
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        yield relative, ast.parse(path.read_text(encoding="utf-8"))


def _layer(relative: Path) -> int:
    key = relative.parts[0].removesuffix(".py")
    return LAYERS[key]


def _module_name(relative: Path, package: str) -> str:
    parts = [package, *relative.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(tree: ast.Module):
    """Imports executed at import time, and those under ``if TYPE_CHECKING:``."""
    for node in tree.body:
        nodes = [node]
        if isinstance(node, ast.If):  # if TYPE_CHECKING: counts as a dependency
            nodes = node.body
        for item in nodes:
            if isinstance(item, ast.ImportFrom) and item.module:
                yield item.module
            elif isinstance(item, ast.Import):
                yield from (alias.name for alias in item.names)


def _all_imports(tree: ast.Module):
    """Every import anywhere in a module: at module level, under ``if TYPE_CHECKING:``,
    and inside functions (a lazy import is a dependency all the same). ``from p import m``
    names the module ``p.m`` when ``m`` is one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None


def import_graph(package: Path, name: str = "agents") -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at any depth of its code)."""
    trees = {_module_name(relative, name): tree for relative, tree in _modules(package)}
    graph: dict[str, set[str]] = {module: set() for module in trees}
    for module, tree in trees.items():
        for target, member in _all_imports(tree):
            if member is not None and f"{target}.{member}" in trees:
                target = f"{target}.{member}"
            while target not in trees and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in trees and target != module and target != name:
                graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    without recursion): each is an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    """A new module must be placed in a layer."""
    for relative, _ in _modules():
        assert relative.parts[0].removesuffix(".py") in LAYERS, relative


def test_imports_point_downward():
    """No module imports from a layer above its own, not even inside a function."""
    violations = []
    for relative, tree in _modules():
        own = _layer(relative)
        for name, _ in _all_imports(tree):
            if not name.startswith("agents."):
                continue
            target = name.split(".")[1]
            if LAYERS[target] > own:
                violations.append(
                    f"{relative} (layer {own}) imports {name} (layer {LAYERS[target]})"
                )
    assert violations == []


def test_no_import_cycles():
    """No module imports itself through others: module-level, type-checking and
    function-level imports all count."""
    assert cycles(import_graph(PACKAGE)) == []


def test_the_cycle_check_finds_a_circle_made_by_a_lazy_import(tmp_path):
    """The check can fail: a function-level import that closes a circle is found."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from pkg import c\n")
    (package / "c.py").write_text("import pkg.a\n")
    (package / "d.py").write_text("from pkg.a import x\n")
    assert cycles(import_graph(package, "pkg")) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


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
    """Records import neither json, the clock, random sources nor logging; the codec and its
    strict reader of JSON text are the modules of the layer that write and read JSON."""
    forbidden = {"json", "time", "random", "uuid", "os", "logging", "structlog", "datetime.now"}
    for relative, tree in _modules():
        if relative.parts[0] != "records":
            continue
        json_modules = {Path("records/codec.py"), Path("records/json_text.py")}
        allowed = {"json"} if relative in json_modules else set()
        for name in _module_level_imports(tree):
            root = name.split(".")[0]
            assert root not in forbidden - allowed, f"{relative} imports {name}"
        source = ast.unparse(tree)
        assert ".now(" not in source and "uuid4" not in source, relative


def test_one_loop_drives_the_machines_effects():
    """Every runner drives the step machine through ``agents.shell.driving`` (``drive`` and
    ``adrive``): no other module sends results into a machine, and the durable runner uses
    no private member of the loop."""
    senders, private = [], []
    for relative, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "send"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "machine"
            ):
                senders.append(str(relative))
            if (
                relative.parts[0] == "durable"
                and isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and (
                    (isinstance(node.value, ast.Name) and node.value.id == "loop")
                    or (isinstance(node.value, ast.Attribute) and node.value.attr == "loop")
                )
            ):
                private.append(f"{relative}: loop.{node.attr}")
    assert senders == ["shell/driving.py", "shell/driving.py"]
    assert private == []


MAX_FUNCTION_LINES = 80


def long_functions(package: Path) -> dict[str, int]:
    """``module:function`` -> lines, for the functions of more than ``MAX_FUNCTION_LINES``."""
    found = {}
    for relative, tree in _modules(package):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{relative}:{node.name}"] = lines
    return found


MAX_MODULE_LINES = 550


def long_modules(root: Path) -> dict[str, int]:
    """Modules under ``root`` longer than ``MAX_MODULE_LINES``, with their line counts."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            found[str(path.relative_to(root))] = lines
    return found


def test_modules_stay_short():
    """No module is longer than 550 lines (docs/architecture.md)."""
    assert long_modules(PACKAGE) == {}


def test_the_module_check_finds_a_long_module(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * 551)
    (tmp_path / "short.py").write_text("x = 1\n" * 550)
    assert long_modules(tmp_path) == {"long.py": 551}


def test_functions_stay_short():
    """No function is longer than 80 lines."""
    assert long_functions(PACKAGE) == {}


def test_the_length_check_finds_a_long_function(tmp_path):
    """The check can fail: a function of 90 lines is reported."""
    body = "".join(f"    x{i} = {i}\n" for i in range(89))
    (tmp_path / "long.py").write_text(f"def long():\n{body}")
    assert long_functions(tmp_path) == {"long.py:long": 90}


# What is the whole process's, every thread's: the garbage collector switched, the umask set
# (even to read it), the recursion limit, the switch interval.
PROCESS_WIDE = {
    ("gc", "disable"),
    ("gc", "enable"),
    ("gc", "freeze"),
    ("os", "umask"),
    ("sys", "setrecursionlimit"),
    ("sys", "setswitchinterval"),
}


def process_wide_calls(package: Path) -> list[str]:
    """``module:line: call`` for each call under ``package`` that changes process-wide
    state (``PROCESS_WIDE``)."""
    found = []
    for relative, tree in _modules(package):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            if isinstance(owner, ast.Name) and (owner.id, node.func.attr) in PROCESS_WIDE:
                found.append(f"{relative}:{node.lineno}: {owner.id}.{node.func.attr}")
    return found


def test_no_module_changes_process_wide_state():
    """No module switches the garbage collector, sets the umask (reading it means setting
    it), the recursion limit or the switch interval (docs/architecture.md)."""
    assert process_wide_calls(PACKAGE) == []


def test_the_process_wide_check_finds_a_call(tmp_path):
    """The check can fail: a module turning the collector off and reading the umask."""
    (tmp_path / "m.py").write_text("import gc, os\ngc.disable()\nmask = os.umask(0)\n")
    assert process_wide_calls(tmp_path) == ["m.py:2: gc.disable", "m.py:3: os.umask"]
