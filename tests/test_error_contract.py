"""One error contract (docs/design/errors.md): every exception the library raises on
purpose is an ``AgentError``. The test reads every ``raise`` statement under ``agents/``
and resolves what it raises in the module's namespace. A name the module does not know as a
class or function is a value being passed on (``raise exc``: the user's own error, as it
was), which the contract lets through; a bare ``raise`` re-raises.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest

import agents
from agents.errors import AgentError

PACKAGE = Path(agents.__file__).parent

# Raises that a protocol outside the library requires, with where they may appear.
PROTOCOL: dict[str, tuple[str, ...]] = {
    "AttributeError": ("__getattr__",),  # a module's lazy attributes
    "IndexError": ("__getitem__",),  # the sequence protocol (History)
    "StopAsyncIteration": ("__anext__",),  # the async iterator protocol
    "UsageError": ("pytest_generate_tests",),  # pytest's error for a misused marker
    "ArgumentTypeError": ("*",),  # argparse's answer to a bad argument (agents/cli/)
    "ToolError": ("*",),  # the MCP SDK's tool error, which answers a call with isError
}
# A generated tool's failure stands for a user's tool raising its own exception.
USER_STAND_INS = {("agents/testing/strategies.py", "RuntimeError")}


def _modules() -> list[tuple[Path, Any]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name == "agents.__main__":
            continue
        found.append((path, importlib.import_module(name)))
    return found


def _resolve(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The object ``node`` names in the module, or ``None`` for a value (a local, an
    attribute of a value)."""
    if isinstance(node, ast.Name):
        if node.id in namespace:
            return namespace[node.id]
        return getattr(builtins, node.id, None)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, namespace)
        if inspect.ismodule(owner) or inspect.isclass(owner):
            return getattr(owner, node.attr, None)
    return None


def _is_abstract(function: ast.AST) -> bool:
    body = [
        statement
        for statement in getattr(function, "body", [])
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _offences(path: Path, module: Any) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    namespace = vars(module)
    where = str(path.relative_to(PACKAGE.parent))
    offences: list[str] = []

    def visit(node: ast.AST, function: ast.AST | None, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child, child.name)
                continue
            if isinstance(child, ast.Raise) and child.exc is not None:
                check(child, function, name)
            visit(child, function, name)

    def check(statement: ast.Raise, function: ast.AST | None, name: str) -> None:
        target = statement.exc
        called = target.func if isinstance(target, ast.Call) else target
        raised = _resolve(called, namespace)
        if raised is None:
            return  # a value passed on: the user's own exception, or one caught earlier
        if inspect.isfunction(raised):  # a helper that makes the exception
            raised = typing.get_type_hints(raised).get("return")
        if not (inspect.isclass(raised) and issubclass(raised, BaseException)):
            offences.append(f"{where}:{statement.lineno}: raises what it cannot name")
            return
        if issubclass(raised, AgentError):
            return
        allowed = PROTOCOL.get(raised.__name__, ())
        if "*" in allowed or name in allowed:
            return
        if raised is NotImplementedError and _is_abstract(function):
            return  # an abstract method, which a subclass overrides
        if (where, raised.__name__) in USER_STAND_INS:
            return
        offences.append(f"{where}:{statement.lineno}: raises {raised.__name__}")

    visit(tree, None, "")
    return offences


def test_every_deliberate_raise_is_an_agent_error() -> None:
    offences = [offence for path, module in _modules() for offence in _offences(path, module)]
    assert offences == []


def test_the_check_finds_a_builtin_raise(tmp_path: Path) -> None:
    """The walk itself: a made-up module raising ``ValueError`` is an offence, one
    passing a caught exception on is not."""
    source = (
        "def bad(x):\n    raise ValueError(x)\n\n"
        "def passes(exc):\n    raise exc\n\n"
        "def rethrows():\n    try:\n        pass\n    except KeyError:\n        raise\n"
    )
    path = PACKAGE / "_made_up_for_the_test.py"
    path.write_text(source, encoding="utf-8")
    try:
        module = importlib.import_module("agents._made_up_for_the_test")
        assert _offences(path, module) == ["agents/_made_up_for_the_test.py:2: raises ValueError"]
    finally:
        path.unlink()


def test_the_builtin_bases_callers_expect() -> None:
    """Where callers catch a built-in exception, ours is one too."""
    assert issubclass(agents.InvalidArgument, ValueError)
    assert issubclass(agents.InvalidType, TypeError)
    assert issubclass(agents.UsageError, RuntimeError)
    assert issubclass(agents.ResourceError, OSError)
    assert issubclass(agents.MissingExtra, ImportError)


def _settings(tmp_path: Path) -> dict[str, Any]:
    """Each setting that takes a number of seconds or dollars, by name: a maker given the
    value, and whether 0 is a value it takes."""
    from agents import AgentLoop, AuditLog, Goal, LiteLLMDriver, SQLiteSessionStore, tool
    from agents.mcp import MCPServerStdio
    from agents.shell.retry import RetryInterceptor
    from agents.testing import ScriptedDriver

    def loop(**options: Any) -> Any:
        return AgentLoop(ScriptedDriver([]), **options)

    def log(value: Any) -> Any:
        return AuditLog.open(tmp_path / "run.jsonl", durability="batch", flush_interval=value)

    db = tmp_path / "sessions.db"

    def timed(value: Any) -> Any:
        return tool(lambda: 1, name="one", timeout=value)

    return {
        "AuditLog.open(flush_interval=)": (log, False),
        "LiteLLMDriver(timeout=)": (lambda v: LiteLLMDriver("m", timeout=v), False),
        "LiteLLMDriver(retry_backoff=)": (lambda v: LiteLLMDriver("m", retry_backoff=v), True),
        "RetryInterceptor(retry_backoff=)": (lambda v: RetryInterceptor(retry_backoff=v), True),
        "tool(timeout=)": (timed, False),
        "MCPServerStdio(timeout=)": (lambda v: MCPServerStdio("x", timeout=v), False),
        "MCPServerStdio(start_timeout=)": (lambda v: MCPServerStdio("x", start_timeout=v), False),
        "MCPServerStdio(tool_timeouts=)": (
            lambda v: MCPServerStdio("x", tool_timeouts={"t": v}),
            False,
        ),
        "Goal(time_budget=)": (lambda v: Goal("g", time_budget=v), False),
        "SQLiteSessionStore(timeout=)": (lambda v: SQLiteSessionStore(db, timeout=v), True),
        "AgentLoop(max_cost=)": (lambda v: loop(max_cost=v), True),
        "AgentLoop(time_limit=)": (lambda v: loop(time_limit=v), True),
    }


_NONE_IS_NO_LIMIT = {  # the settings where None means none
    "AgentLoop(max_cost=)",
    "AgentLoop(time_limit=)",
    "Goal(time_budget=)",
    "tool(timeout=)",
    "MCPServerStdio(timeout=)",
}


def test_a_number_setting_takes_a_finite_number_and_says_so(tmp_path: Path) -> None:
    """Every setting of seconds or dollars refuses what is no finite number in range with
    one typed error naming it, where text or ``None`` was a bare ``TypeError`` (from
    ``AuditLog.open``, ``LiteLLMDriver``, ``tool`` and the MCP clients) and infinity was
    taken: ``flush_interval=inf`` killed the log's batch thread (an ``OverflowError``), so
    that nothing was fsynced until the run's end. An int past any float is no number of
    seconds either (a ``Goal`` of one was taken)."""
    import math

    for name, (make, zero) in _settings(tmp_path).items():
        odd = ("5", None, True, [1], math.nan, math.inf, 10**400, -1)
        for bad in (*odd, *(() if zero else (0,))):
            if bad is None and name in _NONE_IS_NO_LIMIT:
                continue
            try:
                made = make(bad)
            except AgentError as exc:
                said = str(exc)
                assert "finite number" in said or "float's range" in said, (name, bad, said)
                assert repr(bad)[:20] in said, (name, bad, said)
                continue
            except Exception as exc:  # what the contract forbids
                raise AssertionError(f"{name} {bad!r}: {type(exc).__name__}: {exc}") from None
            getattr(made, "close", lambda: None)()
            raise AssertionError(f"{name} took {bad!r}")
        for good in (0.5, 2, *((0,) if zero else ())):
            made = make(good)
            getattr(made, "close", lambda: None)()


def test_a_hook_a_subagent_a_replay_and_a_retry_refuse_what_they_cannot_use() -> None:
    """``hook(5)`` raised a bare ``TypeError`` ("'int' object is not iterable"),
    ``subagent_tool(5, ...)`` one from ``functools`` ("__name__ must be set to a string
    object"), ``ReplayDriver.from_state(5)`` an ``AttributeError``; ``RetryInterceptor(
    sleep=5)`` was taken and its first retry failed calling it. Each is refused, typed."""
    from agents import ConfigurationError, InvalidType, ReplayDriver, RetryInterceptor, hook
    from agents.shell.subagents import subagent_tool

    refused: dict[str, tuple[type[Exception], Any]] = {
        "hook() needs HookTrigger values, got 5": (ConfigurationError, lambda: hook(5)),
        "subagent_tool: name is text, not int": (
            ConfigurationError,
            lambda: subagent_tool(5, "d", lambda: None),
        ),
        "subagent_tool: description is text, not NoneType": (
            ConfigurationError,
            lambda: subagent_tool("n", None, lambda: None),
        ),
        "ReplayDriver.from_state takes an AgentState, not int": (
            InvalidType,
            lambda: ReplayDriver.from_state(5),
        ),
        "sleep is a function of seconds, not int": (
            ConfigurationError,
            lambda: RetryInterceptor(sleep=5),
        ),
    }
    for said, (kind, make) in refused.items():
        with pytest.raises(kind) as caught:
            make()
        assert str(caught.value).startswith(said), str(caught.value)
