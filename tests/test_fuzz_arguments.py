"""Hostile arguments: every public function and constructor below, given a value of a type
it does not take in one of its parameters — a number (huge, NaN, infinite), ``None``, a
switch, bytes, a list, a map, an object — either takes it (where the value is one it
can use) or raises a typed ``AgentError`` naming what is wrong; never a bare ``TypeError``,
``AttributeError`` or ``ValueError`` from inside (docs/design/errors.md).

Paths are fuzzed with what is no text only: a text is a path, which the function would
use (files are made where a test says, never where a random text points).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import (
    AgentError,
    AgentLoop,
    AgentState,
    AuditLog,
    CancellationToken,
    ContentLimits,
    FileBlobStore,
    ImagePart,
    LiteLLMDriver,
    MemoryBlobStore,
    Message,
    RetryInterceptor,
    SQLiteSessionStore,
    hook,
    tool,
)
from agents.definitions import AgentDefinition
from agents.evals import Case, Dataset, EvalReport, compare, evaluate
from agents.evals import scorers as s
from agents.evals.report import Score
from agents.mcp import MCPServerHTTP, MCPServerStdio
from agents.testing import ScriptedDriver, reply

PNG = b"\x89PNG\r\n\x1a\n" + b"x" * 32

# What no parameter below takes as it is (a text aside: see the module's docstring).
WRONG = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just(object()),
    st.just(math.nan),
)


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _loop(**options: Any) -> AgentLoop:
    return AgentLoop(ScriptedDriver([reply("4")] * 1_000), **options)


def _takers() -> dict[str, Callable[[Any], Any]]:
    report = evaluate(_loop(), [Case("sum", "2+2", "4")], [s.equals()])
    return {
        "AuditLog.open(path)": AuditLog.open,
        "AuditLog.verify(path)": AuditLog.verify,
        "AuditLog.read(path)": AuditLog.read,
        "SQLiteSessionStore(path)": SQLiteSessionStore,
        "FileBlobStore(path)": FileBlobStore,
        "Dataset.load(path)": Dataset.load,
        "EvalReport.load(path)": EvalReport.load,
        "AgentDefinition.load(path)": AgentDefinition.load,
        "ImagePart.from_path(path)": ImagePart.from_path,
        "ImagePart.from_bytes(data)": lambda v: ImagePart.from_bytes(v, "image/png"),
        "ImagePart.from_bytes(media_type)": lambda v: ImagePart.from_bytes(PNG, v),
        "ImagePart.from_url(url)": ImagePart.from_url,
        "Message.user(content)": Message.user,
        "AgentState.initial(messages=)": lambda v: AgentState.initial("s", messages=v),
        "AgentLoop(tools=)": lambda v: _loop(tools=v),
        "AgentLoop(hooks=)": lambda v: _loop(hooks=v),
        "AgentLoop(listeners=)": lambda v: _loop(listeners=v),
        "AgentLoop(interceptors=)": lambda v: _loop(interceptors=v),
        "AgentLoop(max_steps=)": lambda v: _loop(max_steps=v),
        "AgentLoop(max_cost=)": lambda v: _loop(max_cost=v),
        "AgentLoop(time_limit=)": lambda v: _loop(time_limit=v),
        "tool(description=)": lambda v: tool(_add, description=v),
        "tool(timeout=)": lambda v: tool(_add, timeout=v),
        "tool(requires_approval=)": lambda v: tool(_add, requires_approval=v),
        "LiteLLMDriver(stream=)": lambda v: LiteLLMDriver("openai/m", stream=v),
        "LiteLLMDriver(timeout=)": lambda v: LiteLLMDriver("openai/m", timeout=v),
        "RetryInterceptor(sleep=)": lambda v: RetryInterceptor(sleep=v),
        "ContentLimits(max_blob_bytes=)": lambda v: ContentLimits(max_blob_bytes=v),
        "ContentLimits(image=)": lambda v: ContentLimits(image=v),
        "CancellationToken.cancel(message)": lambda v: CancellationToken().cancel(v),
        "MemoryBlobStore.get(blob)": lambda v: MemoryBlobStore().get(v),
        "hook(trigger)": hook,
        "Case(name)": lambda v: Case(v, "2+2"),
        "Case(input)": lambda v: Case("sum", v),
        "Case(metadata=)": lambda v: Case("sum", "2+2", metadata=v),
        "Dataset(cases)": Dataset,
        "Score(value)": lambda v: Score(v, True),
        "Score(passed)": lambda v: Score(1.0, v),
        "equals(value)": s.equals,
        "matches(pattern)": s.matches,
        "within(steps=)": lambda v: s.within(steps=v),
        "evaluate(dataset)": lambda v: evaluate(_loop(), v, [s.equals()]),
        "evaluate(scorers)": lambda v: evaluate(_loop(), [Case("sum", "2+2")], v),
        "evaluate(trials=)": lambda v: evaluate(_loop(), [Case("a", "x")], [s.equals()], trials=v),
        "compare(baseline)": lambda v: compare(v, report),
        "MCPServerStdio(command)": MCPServerStdio,
        "MCPServerStdio(args=)": lambda v: MCPServerStdio("x", args=v),
        "MCPServerStdio(env=)": lambda v: MCPServerStdio("x", env=v),
        "MCPServerStdio(sampling=)": lambda v: MCPServerStdio("x", sampling=v),
        "MCPServerHTTP(url)": MCPServerHTTP,
    }


@pytest.fixture(scope="module")
def takers() -> dict[str, Callable[[Any], Any]]:
    return _takers()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=WRONG)
def test_a_value_of_another_type_is_taken_or_refused_typed(takers, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where anything taken by mistake would be written
    untyped = []
    for name, take in takers.items():
        try:
            made = take(value)
        except AgentError:
            continue
        except Exception as exc:  # the finding: a bare error from inside
            untyped.append(f"{name} given {value!r:.40}: {type(exc).__name__}: {exc}")
            continue
        close = getattr(made, "close", None)
        if callable(close) and not isinstance(made, type):
            close()
    assert untyped == []
    assert [p for p in Path(tmp_path).rglob("*") if p.is_file()] == []
