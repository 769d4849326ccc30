"""The public surface (docs/design/index.md): sorted, complete, importable; ``import agents`` stays
light."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import agents
import agents.testing
from agents import AgentError
from agents.records.record import Record

DOCUMENTED_NAMES = [
    "AgentLoop",
    "AgentState",
    "AgentContext",
    "AgentStep",
    "StepExecution",
    "ToolExecution",
    "ExecutionState",
    "ExecutionStatus",
    "ExecutionContinuation",
    "StopSignal",
    "StopReason",
    "StepType",
    "Message",
    "Role",
    "ToolCall",
    "Usage",
    "InferenceRequest",
    "InferenceResponse",
    "ErrorInfo",
    "HookTrigger",
    "HookContext",
    "hook",
    "inference_interceptor",
    "tool_interceptor",
    "tool",
    "Tool",
    "Tools",
    "ToolResult",
    "ToolContext",
    "StopAgent",
    "CancellationToken",
    "FunctionDriver",
    "AgentError",
    "ConfigurationError",
    "StateDecodeError",
    "ScriptExhausted",
    "ReplayDivergence",
    "SessionNotFound",
    "SessionConflict",
    "AuditLogTampered",
    "InvariantViolation",
]

DOCUMENTED_TESTING_NAMES = [
    "ScriptedDriver",
    "reply",
    "call",
    "calls",
    "fail",
    "FunctionDriver",
    "FixedClock",
    "TickingClock",
    "SequentialIds",
    "capture_events",
    "EventRecorder",
    "check_invariants",
    "assert_invariants",
]


def _package_modules():
    for info in pkgutil.walk_packages(agents.__path__, "agents."):
        if info.name.endswith(("__main__", "strategies", "plugin")):
            continue
        yield importlib.import_module(info.name)


def test_all_is_sorted_and_unique():
    """``agents.__all__`` and ``agents.testing.__all__`` are sorted and without repeats."""
    for module in (agents, agents.testing):
        assert list(module.__all__) == sorted(set(module.__all__))


def test_all_names_exist():
    """Every name in ``__all__`` is importable."""
    for module in (agents, agents.testing):
        for name in module.__all__:
            assert hasattr(module, name), name


def test_spec_names_are_exported():
    """Every public name the design pages list is exported where they say."""
    assert set(DOCUMENTED_NAMES) <= set(agents.__all__)
    assert set(DOCUMENTED_TESTING_NAMES) <= set(agents.testing.__all__)


# Modules whose records are public from the module itself, not from ``agents``:
# AgentDefinition would bring PyYAML into ``import agents``, MCPToolError the MCP SDK,
# the server's errors Starlette.
APART = frozenset(
    {
        "agents.definitions",
        "agents.mcp.client",
        "agents.mcp.connection",
        "agents.serve.agui",
        "agents.serve.runs",
    }
)
# Errors that never reach a caller: the library records them in the run, or turns them into
# a public error before it returns (docs/design/errors.md).
INTERNAL = frozenset(
    {
        "agents.core.run.MachineFailure",  # a failure already turned into data
        "agents.drivers.replay.ReplayedFailure",  # a recorded failure, recorded again
        "agents.tools.outcomes.ToolTimeoutError",  # recorded as a ToolTimeout execution
        "agents.shell.files.UnreadableFile",  # read_file's callers say StateDecodeError
        "agents.shell.files.DirectoryGiven",  # ... or DefinitionError, naming the path
        "agents.shell.files.MissingFile",
    }
)


def test_every_record_error_and_event_is_exported():
    """No public record, error or event class is left out of ``agents.__all__``."""
    exported = {getattr(agents, name) for name in agents.__all__}
    for module in _package_modules():
        if module.__name__.startswith(("agents.testing", "agents.cli")):
            continue
        for name, value in vars(module).items():
            if name.startswith("_") or not inspect.isclass(value):
                continue
            if value.__module__ != module.__name__:
                continue
            public = (
                issubclass(value, Record | AgentError) or module.__name__ == "agents.records.events"
            )
            if f"{module.__name__}.{name}" in INTERNAL:
                continue
            if public and module.__name__ in APART:  # exported from its own module
                assert name in module.__all__, f"{module.__name__}.{name} is not exported"
            elif public:
                assert value in exported, f"{module.__name__}.{name} is not exported"


def test_import_agents_does_not_import_heavy_dependencies():
    """``import agents`` loads none of the libraries that only some users need."""
    heavy = (
        "litellm", "hypothesis", "pytest", "psycopg", "dbos", "yaml", "mcp",
        "opentelemetry", "starlette", "uvicorn", "cryptography",
    )  # fmt: skip
    code = (
        f"import sys, agents, agents.testing; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


BLOCKED = """
import sys

import pytest

class Missing:  # as if the package were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Missing())
try:
    {statement}
except ImportError as exc:
    from agents import AgentError
    print(type(exc).__name__, isinstance(exc, AgentError), exc)
"""


@pytest.mark.parametrize(
    ("extra", "statement", "blocked"),
    [
        ("mcp", "import agents.mcp", "mcp"),
        ("serve", "import agents.serve", "starlette"),
        ("serve", "from agents.serve import app", "ag_ui"),
        ("otel", "from agents.otel import OTelListener", "opentelemetry"),
    ],
)
def test_an_extras_module_without_the_extra_names_what_to_install(extra, statement, blocked):
    """Importing ``agents.mcp``, ``agents.serve`` or ``agents.otel`` without its extra is an
    ``ImportError`` (``MissingExtra``, an ``AgentError``) naming the package missing and
    ``pip install 'agents[extra]'``, not a bare ``ModuleNotFoundError``."""
    code = BLOCKED.format(blocked=blocked, statement=statement)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MissingExtra True ")
    assert f"pip install 'agents[{extra}]'" in done.stdout and blocked in done.stdout
