"""Tools that give back images, audio and documents (docs/design/content.md): the tool
message carries the parts, and chat completions get them in a user message after the
tool's result."""

from __future__ import annotations

import base64

import pytest
from llm_server import LLMServer, answer, tool_calls

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    ContentLimits,
    FilePart,
    ImagePart,
    LiteLLMDriver,
    TextPart,
    tool,
)
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


@tool
def screenshot() -> ImagePart:
    """Take a screenshot."""
    return ImagePart.from_bytes(PNG, "image/png")


@tool
def raw_screenshot() -> bytes:
    """Take a screenshot, as bytes."""
    return PNG


@tool
def captioned() -> list:
    """A screenshot with a caption."""
    return ["the login page", ImagePart.from_bytes(PNG, "image/png")]


@tool
def blob_of_bytes() -> bytes:
    """Some bytes of no known kind."""
    return b"\x00\x01\x02"


def run(*tools_, name: str, log=None) -> AgentState:
    loop = AgentLoop(
        ScriptedDriver([call(name), reply("seen")]),
        tools=list(tools_),
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    if log is not None:
        loop = loop.with_listeners(log)
    return loop.run(AgentState.initial("s", messages=["look"]))


@pytest.mark.parametrize("name", ["screenshot", "raw_screenshot"])
def test_a_tool_gives_back_an_image_its_message_carries(name):
    final = run(screenshot, raw_screenshot, name=name)
    (execution,) = final.tool_executions
    image = ImagePart.from_bytes(PNG, "image/png")
    assert execution.value is None and execution.ok and execution.content[0] == image
    tool_message = final.messages[2]
    assert tool_message.parts == (image,) and tool_message.parts[0].data() == PNG
    assert AgentState.from_json(final.to_json()) == final


def test_text_and_parts_and_unknown_bytes():
    final = run(captioned, name="captioned")
    assert final.messages[2].parts[0] == TextPart(text="the login page")
    unknown = run(blob_of_bytes, name="blob_of_bytes").messages[2].parts[0]
    assert type(unknown) is FilePart and unknown.media_type == "application/octet-stream"


def test_bytes_past_the_limit_fail_the_call_not_the_run():
    @tool
    def huge() -> bytes:
        """Too much."""
        return b"\x00" * (ContentLimits().max_blob_bytes + 1)

    final = run(huge, name="huge")
    (execution,) = final.tool_executions
    assert (
        execution.error.type == "InvalidToolResult" and "past the limit" in execution.error.message
    )
    assert final.final_response == "seen"


def test_an_audited_screenshot_is_stored_before_its_step_record(tmp_path):
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        final = run(screenshot, name="screenshot", log=log)
    assert AuditLog.check(tmp_path / "run.jsonl").blobs == 1
    assert AuditLog.read(tmp_path / "run.jsonl").messages[2].parts[0].data() == PNG
    assert final.messages[2] == AuditLog.read(tmp_path / "run.jsonl").messages[2]


def test_chat_completions_get_the_image_after_the_tool_result():
    with LLMServer() as server:
        server.plan(tool_calls(("c1", "screenshot", {})), answer("a login page"))
        driver = LiteLLMDriver(
            "openai/test-model", api_base=server.base_url, api_key="k", num_retries=0
        )
        final = AgentLoop(driver, tools=[screenshot]).run(AgentState.initial(messages=["look"]))
        sent = server.requests[1]["messages"]
    assert final.final_response == "a login page"
    assert sent[-2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[1 attachment(s) follow in the next user message]",
    }
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert sent[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached by tool call c1:"},
            {"type": "image_url", "image_url": {"url": data_url}},
        ],
    }
    # The state says so: the answer to that request names the call whose image it moved.
    first, second = (s.step.response for s in final.step_executions)
    assert list(first.moved_media) == [] and list(second.moved_media) == ["c1"]
    assert AgentState.from_json(final.to_json()) == final
