"""The scripts in examples/ run and do what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_support_agent_example():
    """The support agent blocks the oversized refund and makes the right one."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "support_agent.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == ("step 2: refund -> ToolBlocked: refund exceeds the order total of 40.0")
    assert lines[2] == "step 3: refund -> refunded 40.00 on A-1"
    assert lines[-1] == "completed: Refunded 40.00 on A-1."


def test_real_model_example_runs_against_a_chat_completions_server():
    """``examples/real_model.py`` runs against the provider the environment names; here the
    local chat-completions server plays the provider."""
    import os

    from llm_server import LLMServer, answer, tool_calls

    with LLMServer() as server:
        server.plan(tool_calls(("c1", "multiply", {"a": 12.5, "b": 3.2})), answer("It is 40."))
        environment = {
            **os.environ,
            "AGENTS_MODEL": "openai/local-model",
            "AGENTS_API_BASE": server.base_url,
            "OPENAI_API_KEY": "sk-local",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        result = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "real_model.py")],
            capture_output=True,
            text=True,
            timeout=300,
            env=environment,
        )
    assert result.returncode == 0, result.stderr
    assert "completed: It is 40." in result.stdout
    assert server.requests[1]["messages"][-1]["content"] == "40.0"


def test_real_model_example_without_a_model_explains_itself():
    """Without AGENTS_MODEL the example prints how to run it."""
    import os

    environment = {k: v for k, v in os.environ.items() if k != "AGENTS_MODEL"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "real_model.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert result.returncode == 0
    assert "AGENTS_MODEL=" in result.stdout
