"""Deterministic drivers (docs/design/drivers.md): the scripted model and the function model."""

from __future__ import annotations

import asyncio

import pytest
from helpers import initial

from agents import ConfigurationError, InferenceRequest, InferenceResponse, Message, ToolCall
from agents.errors import ScriptExhausted
from agents.testing import FunctionDriver, ScriptedDriver, call, calls, fail, reply

REQUEST = InferenceRequest(messages=[Message.user("hi")])


def test_script_answers_in_order_then_is_exhausted():
    """Each request takes the next step; past the end ScriptExhausted is raised."""
    driver = ScriptedDriver([reply("one"), reply("two")])
    assert driver.infer(REQUEST).content == "one"
    assert asyncio.run(driver.ainfer(REQUEST)).content == "two"
    assert driver.remaining == 0
    with pytest.raises(ScriptExhausted, match="2 steps"):
        driver.infer(REQUEST)
    driver.reset()
    assert driver.infer(REQUEST).content == "one"


def test_call_ids_count_calls_through_the_script():
    """Unset ids are call_1, call_2, ... across single and parallel calls."""
    driver = ScriptedDriver(
        [call("a"), calls(call("b"), call("c", id="mine"), call("d")), call("e")]
    )
    ids = [c.id for _ in range(3) for c in driver.infer(REQUEST).tool_calls]
    assert ids == ["call_1", "call_2", "mine", "call_4", "call_5"]


def test_call_merges_arguments_and_keywords():
    """``arguments`` and keywords merge; a parameter named ``id`` goes in arguments."""
    response = ScriptedDriver([call("f", {"id": 7, "x": 1}, y=2)]).infer(REQUEST)
    tool_call = response.tool_calls[0]
    assert dict(tool_call.arguments) == {"id": 7, "x": 1, "y": 2}
    assert tool_call.id == "call_1"
    assert response.finish_reason == "tool_calls"


def test_raw_string_arguments():
    """A string that parses as a JSON object is used; anything else is kept raw."""
    driver = ScriptedDriver([call("f", '{"a": 1}'), call("f", "oops")])
    assert dict(driver.infer(REQUEST).tool_calls[0].arguments) == {"a": 1}
    broken = driver.infer(REQUEST).tool_calls[0]
    assert broken.raw_arguments == "oops" and dict(broken.arguments) == {}


def test_fail_raises_the_given_exception():
    """``fail(exc)`` makes the driver raise it (an exception class is instantiated)."""
    driver = ScriptedDriver([fail(TimeoutError("slow")), fail(KeyError), InferenceResponse()])
    with pytest.raises(TimeoutError, match="slow"):
        driver.infer(REQUEST)
    with pytest.raises(KeyError):
        driver.infer(REQUEST)
    assert driver.infer(REQUEST) == InferenceResponse()


def test_keep_requests_records_what_the_model_saw():
    """With ``keep_requests=True`` every request is kept."""
    driver = ScriptedDriver([reply("a"), reply("b")], keep_requests=True)
    driver.infer(REQUEST)
    driver.infer(REQUEST)
    assert driver.requests == [REQUEST, REQUEST]
    assert driver.last_request is REQUEST


@pytest.mark.parametrize(
    "bad",
    [
        lambda: calls(),
        lambda: calls(reply("x")),
        lambda: fail("boom"),
        lambda: ScriptedDriver(["text"]),
        lambda: call("f", "raw", x=1),
    ],
)
def test_malformed_scripts_are_configuration_errors(bad):
    """Script mistakes are caught when the script is built."""
    with pytest.raises(ConfigurationError):
        bad()


def test_function_driver_accepts_text_calls_and_responses():
    """A function may return text, a list of ToolCall, or a response; async works too."""
    assert FunctionDriver(lambda r: "hi").infer(REQUEST).content == "hi"
    response = FunctionDriver(lambda r: [ToolCall(id="1", name="f")]).infer(REQUEST)
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls[0].name == "f"

    async def answer(request):
        return InferenceResponse(content=str(len(request.messages)))

    assert FunctionDriver(answer).infer(REQUEST).content == "1"
    assert asyncio.run(FunctionDriver(answer).ainfer(REQUEST)).content == "1"
    with pytest.raises(TypeError, match="must return"):
        FunctionDriver(lambda r: 3).infer(REQUEST)
    with pytest.raises(ConfigurationError):
        FunctionDriver("not callable")  # type: ignore[arg-type]


def test_function_driver_sees_the_compiled_request():
    """The request holds the system prompt then the conversation, and the tool schemas."""
    from helpers import add, make_loop

    seen: list[InferenceRequest] = []

    def model(request):
        seen.append(request)
        return "done"

    loop = make_loop(tools=[add]).with_driver(FunctionDriver(model))
    loop.run(initial().with_llm_config(model="m1", temperature=0.5))
    request = seen[0]
    assert [m.role.value for m in request.messages] == ["system", "user"]
    assert request.tool_names() == ["add"]
    assert request.model == "m1"
    assert dict(request.options) == {"temperature": 0.5}
