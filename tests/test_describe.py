"""``loop.describe()``: a loop's make-up as JSON data and Markdown, without secrets."""

from __future__ import annotations

import json

from agents import AgentLoop, HookTrigger, LiteLLMDriver, RetryInterceptor, hook, tool
from agents.testing import ScriptedDriver, SequentialIds, reply


@tool(requires_approval=True, timeout=5)
def pay(amount: float, to: str) -> str:
    """Pay someone.

    Args:
        amount: how much
        to: who
    """
    return "ok"


@tool(sequential=True)
async def look_up(name: str) -> str:
    """Look a name up.

    Args:
        name: the name
    """
    return name


@hook(HookTrigger.BEFORE_STEP, priority=5, name="count-steps")
def count_steps(context):
    return context


@hook([HookTrigger.AFTER_TOOL_USE, HookTrigger.ON_STOP])
def note(context):
    return context


def test_describe_lists_tools_hooks_limits_and_driver():
    loop = AgentLoop(
        ScriptedDriver([reply("hi")]),
        tools=[pay, look_up],
        hooks=[note, count_steps],
        interceptors=[RetryInterceptor()],
        max_steps=7,
        max_cost=1.5,
        ids=SequentialIds(),
    )
    data = loop.describe()
    assert json.loads(json.dumps(data)) == data  # plain JSON
    assert data["driver"] == {"type": "ScriptedDriver", "model": None}
    assert [t["name"] for t in data["tools"]] == ["pay", "look_up"]
    pay_schema = data["tools"][0]
    assert pay_schema["requires_approval"] is True and pay_schema["timeout"] == 5
    assert pay_schema["parameters"]["required"] == ["amount", "to"]
    assert data["tools"][1]["sequential"] is True and data["tools"][1]["is_async"] is True
    assert data["hooks"] == [
        {"name": "count-steps", "triggers": ["before_step"], "priority": 5},
        {"name": "note", "triggers": ["after_tool_use", "on_stop"], "priority": 0},
    ]
    assert data["interceptors"] == [{"type": "RetryInterceptor", "inference": True, "tools": False}]
    assert data["limits"]["max_steps"] == 7 and data["limits"]["max_cost"] == 1.5
    assert data["ids"] == "SequentialIds" and data["clock"] == "SystemClock"
    assert "complete_goal" not in json.dumps(data)  # the reserved tool is the machine's


def test_describe_never_shows_secrets():
    driver = LiteLLMDriver(
        "openai/gpt-test", api_key="sk-very-secret", api_base="http://127.0.0.1:9/v1"
    )
    loop = AgentLoop(driver)
    data = loop.describe()
    assert data["driver"]["model"] == "openai/gpt-test"
    assert data["driver"]["options"] == {
        "api_base": "http://127.0.0.1:9/v1",
        "api_key": "[redacted]",
    }
    assert "sk-very-secret" not in json.dumps(data)
    assert "sk-very-secret" not in loop.describe_markdown()


def test_describe_markdown_renders_every_part():
    loop = AgentLoop(ScriptedDriver([reply("hi")]), tools=[pay], hooks=[count_steps])
    text = loop.describe_markdown()
    assert text.startswith("# Agent loop\n")
    assert "- Driver: `ScriptedDriver`" in text
    assert "### `pay` (requires approval, timeout 5 s)" in text
    assert '"amount": {' in text
    assert "| count-steps | before_step | 5 |" in text
    assert "| max_steps | 20 |" in text
    assert AgentLoop(ScriptedDriver([])).describe_markdown().count("No tools.") == 1


def test_describe_lists_the_modalities_the_model_takes():
    """From litellm's model list: Claude takes images and PDFs and reasons; a model litellm
    does not know, and a scripted driver, take text."""
    from agents import LiteLLMDriver
    from agents.testing import ScriptedDriver, reply

    claude = AgentLoop(LiteLLMDriver("anthropic/claude-sonnet-4-5")).describe()
    assert claude["modalities"] == ["text", "image", "pdf", "reasoning"]
    assert (
        "- Modalities: text, image, pdf, reasoning"
        in AgentLoop(LiteLLMDriver("anthropic/claude-sonnet-4-5")).describe_markdown()
    )
    assert AgentLoop(LiteLLMDriver("openai/no-such-model")).describe()["modalities"] == ["text"]
    assert AgentLoop(ScriptedDriver([reply("x")])).describe()["modalities"] == ["text"]
