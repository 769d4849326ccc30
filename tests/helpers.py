"""Helpers for the tests: deterministic loops, tools, and a recorder of phases."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents import (
    AgentLoop,
    AgentState,
    HookContext,
    HookTrigger,
    InferenceRequest,
    ToolCall,
    hook,
    tool,
)
from agents.testing import ScriptedDriver, ScriptStep, SequentialIds, TickingClock


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
def explode(reason: str = "boom") -> str:
    """Always raise."""
    raise RuntimeError(reason)


def make_loop(*script: ScriptStep, tools: Any = (add,), **options: Any) -> AgentLoop:
    """A loop over a scripted model with a ticking clock and sequential ids."""
    options.setdefault("clock", TickingClock())
    options.setdefault("ids", SequentialIds())
    return AgentLoop(ScriptedDriver(script), tools=tools, **options)


def initial(text: str = "hello", system: str = "You are a test agent.") -> AgentState:
    """A fresh state with one user message."""
    return AgentState.initial(system, messages=[text])


class PhaseRecorder:
    """Hooks on every trigger and interceptors on both effects, writing one shared log."""

    def __init__(self, on: Callable[[HookContext], HookContext | None] | None = None) -> None:
        self.log: list[str] = []
        self._on = on

        @hook(list(HookTrigger), priority=-100, name="recorder")
        def record(context: HookContext) -> HookContext:
            label = context.trigger.name
            if context.tool_call is not None:
                label += f"({context.tool_call.name})"
            self.log.append(label)
            if self._on is not None:
                changed = self._on(context)
                if changed is not None:
                    return changed
            return context

        self.hook = record

    def intercept_inference(self, request: InferenceRequest, call_next: Any) -> Any:
        self.log.append("infer")
        return call_next(request)

    def intercept_tool(self, call: ToolCall, call_next: Any) -> Any:
        self.log.append(f"tool({call.name})")
        return call_next(call)


def python(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a child process (this interpreter), its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def agents_cli(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m agents ARGS`` in a child process."""
    return python("-m", "agents", *args, cwd=cwd, env=env)
