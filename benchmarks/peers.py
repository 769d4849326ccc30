"""The tool-loop workload on the peers, each with its own offline test model.

Every system runs the same script: the model asks for ``add(a, b)`` once per step and
answers ``"done"`` at step N; the tool adds. Each ``*_run(n)`` prepares a run outside the
timing (as a service builds its agent once) and returns a function doing one whole run.
The models count their calls instead of reading the conversation, so no model does work
that grows with the history: what grows is the framework's own.

The OpenAI Agents SDK installs a top-level package named ``agents`` too, so it cannot share
an environment with this library: it runs in its own virtualenv (``peer_openai_agents.py``,
driven by ``openai_agents_times``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPENAI_AGENTS_VERSION = "0.24.0"
OPENAI_AGENTS_VENV = HERE.parent / ".bench" / "openai-agents"


def langgraph_run(n: int) -> Callable[[], Any]:
    """LangGraph's prebuilt ReAct agent (``create_react_agent``) with a scripted chat model."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as lc_tool
    from langgraph.prebuilt import create_react_agent

    @lc_tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    class Scripted(BaseChatModel):
        calls: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, **kwargs: Any) -> ChatResult:
            self.calls += 1
            if self.calls < n:
                call = {"name": "add", "args": {"a": self.calls, "b": 1}, "id": f"c{self.calls}"}
                message = AIMessage(content="", tool_calls=[call])
            else:
                message = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=message)])

    model = Scripted()
    agent = create_react_agent(model, [add], prompt="You add numbers.")
    config = {"recursion_limit": 2 * n + 10}

    def run() -> Any:
        model.calls = 0
        out = agent.invoke({"messages": [("user", "go")]}, config)
        assert out["messages"][-1].content == "done"
        return out

    return run


def pydantic_ai_run(n: int) -> Callable[[], Any]:
    """pydantic-ai's ``Agent`` with a ``FunctionModel``."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    calls = [0]

    def model(messages: Any, info: Any) -> ModelResponse:
        calls[0] += 1
        if calls[0] < n:
            part = ToolCallPart("add", {"a": calls[0], "b": 1}, tool_call_id=f"c{calls[0]}")
            return ModelResponse(parts=[part])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), system_prompt="You add numbers.")

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    limits = UsageLimits(request_limit=None)

    def run() -> Any:
        calls[0] = 0
        result = agent.run_sync("go", usage_limits=limits)
        assert result.output == "done"
        return result

    return run


def available(name: str) -> str | None:
    """The installed version of a peer, ``None`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def openai_agents_python(install: bool) -> Path | None:
    """The interpreter of the OpenAI Agents SDK's own virtualenv (made when ``install``)."""
    python = OPENAI_AGENTS_VENV / "bin" / "python"
    if python.exists():
        return python
    if not install:
        return None
    try:
        subprocess.run([sys.executable, "-m", "venv", str(OPENAI_AGENTS_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"openai-agents=={OPENAI_AGENTS_VERSION}"],
            check=True,
            timeout=600,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"  (could not install openai-agents: {exc})", file=sys.stderr)
        return None
    return python


def openai_agents_times(python: Path, sizes: list[int], repeats: int, budget: float) -> Any:
    """µs per step at each size (``None`` past the time budget) and the import time, from
    the SDK's virtualenv."""
    result = subprocess.run(
        [
            str(python),
            str(HERE / "peer_openai_agents.py"),
            json.dumps(sizes),
            str(repeats),
            str(budget),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd="/",  # so this repository's ``agents`` package is not on the path
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},  # nor there
    )
    if result.returncode != 0:  # the peer failed: say why, and measure the rest
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"  (the OpenAI Agents SDK run failed: {last})", file=sys.stderr)
        return None
    return json.loads(result.stdout)
