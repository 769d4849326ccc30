"""The scripts in examples/ run and do what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_support_agent_as_agents_serve_names_it_waits_for_approvals(monkeypatch):
    """``agents serve examples.support_agent:loop`` (the command docs/how-to/serve.md gives) finds a
    loop whose refunds wait for a human: approving each — the run resumed by a loop made
    again, as the server makes one for each run — the guard still blocks the oversized one
    and the run ends with the right refund."""
    from agents import AgentState, ExecutionStatus
    from agents.cli.serving import loop_factory

    monkeypatch.syspath_prepend(str(ROOT))
    factory = loop_factory("examples.support_agent:loop", None)
    state = AgentState.initial("You are a support agent.", messages=["Refund A-1"])
    asked = []
    state = factory(None).run(state)
    while state.status is ExecutionStatus.SUSPENDED and len(asked) < 5:
        (call,) = state.pending_approvals
        asked.append(dict(call.arguments))
        state = factory(None).run(state.with_approval(call.id, True))
    assert asked == [{"order_id": "A-1", "amount": 400.0}, {"order_id": "A-1", "amount": 40.0}]
    assert state.final_response == "Refunded 40.00 on A-1."
    assert [t.error.type if t.error else None for t in state.tool_executions] == [
        None,
        "ToolBlocked",
        None,
    ]


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


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _request(port: int, method: str, path: str, body: dict | None = None) -> dict:
    import json
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _start_service(store: list[str], port: int) -> subprocess.Popen:
    import time
    import urllib.error

    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "service.py"),
            *store,
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(200):
        try:
            _request(port, "GET", "/conversations/none")
        except urllib.error.HTTPError:
            return process  # it answers (404): up
        except OSError:
            time.sleep(0.05)
    _stop(process)
    raise AssertionError("the service did not start")


def _stop(process: subprocess.Popen) -> None:
    process.kill()
    process.communicate()  # reaps it and closes its pipes


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_service_survives_being_killed_mid_conversation(kind, tmp_path, request):
    """Drive the service over loopback, SIGKILL it, start it again: nothing is lost — on
    SQLite with no configuration, on PostgreSQL with a DSN."""
    if kind == "postgres":
        database = ["--dsn", request.getfixturevalue("postgres_dsn")]
    else:
        database = ["--db", str(tmp_path / "sessions.db")]
    port = _free_port()
    service = _start_service(database, port)
    try:
        first = _request(port, "POST", "/conversations/c1", {"message": "What is 2 + 3?"})
        assert first["status"] == "completed" and first["answer"] == "The sum is 5.0."
    finally:
        _stop(service)  # SIGKILL: no clean shutdown
    service = _start_service(database, port)
    try:
        again = _request(port, "GET", "/conversations/c1")
        assert [m["role"] for m in again["messages"]] == ["user", "assistant", "tool", "assistant"]
        second = _request(port, "POST", "/conversations/c1", {"message": "And 10 and 20?"})
        assert second["answer"] == "The sum is 30.0."
        assert len(second["messages"]) == 8
        assert _request(port, "POST", "/conversations/c1/resume")["version"] == (second["version"])
    finally:
        _stop(service)
