"""Reasoning through litellm as the providers speak it (docs/design/content.md): Claude
with thinking on and Gemini 3 with tools, each against a local server that speaks the
provider's own API and enforces its rule for sending reasoning back."""

from __future__ import annotations

import pytest
from provider_servers import ProviderServer, Turn

from agents import (
    AgentLoop,
    AgentState,
    LiteLLMDriver,
    ReasoningDelta,
    ReasoningPart,
    StopReason,
    tool,
)

MODELS = {
    "anthropic": (
        "anthropic/claude-sonnet-4-5",
        {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    ),
    "gemini": ("gemini/gemini-3-pro-preview", {"reasoning_effort": "low"}),
}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def five_turns() -> list[Turn]:
    calls = [
        Turn(thinking=f"I should add {i} and 1.", call=("add", {"a": i, "b": 1})) for i in range(4)
    ]
    return [*calls, Turn(thinking="All added.", text="The sums are done.")]


def ask(server: ProviderServer, provider: str, messages: list[dict]) -> object:
    import litellm  # here, not at collection: 4 s of CPU in every worker (CONTRIBUTING.md)

    model, options = MODELS[provider]
    return litellm.completion(
        model=model,
        messages=messages,
        api_base=server.base_url,
        api_key="test-key",
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add.",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    },
                },
            }
        ],
        num_retries=0,
        max_retries=0,
        **options,
    )


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_naive_conversation_gets_the_providers_400(provider):
    """Sending the tool call back without its reasoning (Claude's thinking block, Gemini's
    thought signature), as a chat-completions client that keeps only text and calls does."""
    import litellm

    with ProviderServer(provider).plan(*five_turns()) as server:
        first = ask(server, provider, [{"role": "user", "content": "go"}])
        call = first.choices[0].message.tool_calls[0]
        naive_id = call.id.split("__thought__")[0]  # the id as a plain client keeps it
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": naive_id,
                        "type": "function",
                        "function": {"name": "add", "arguments": call.function.arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": naive_id, "content": "1"},
        ]
        with pytest.raises(litellm.BadRequestError) as refused:
            ask(server, provider, messages)
        expected = "Expected `thinking`" if provider == "anthropic" else "thought_signature"
        assert expected in str(refused.value) and len(server.refusals) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_five_step_tool_run_with_thinking_passes(provider, stream):
    model, options = MODELS[provider]
    events: list[object] = []
    with ProviderServer(provider).plan(*five_turns()) as server:
        driver = LiteLLMDriver(
            model,
            api_base=server.base_url,
            api_key="test-key",
            num_retries=0,
            stream=stream,
            **options,
        )
        loop = AgentLoop(driver, tools=[add], max_steps=6, listeners=[events.append])
        final = loop.run(AgentState.initial("You add numbers.", messages=["go"]))
        assert server.refusals == [] and len(server.requests) == 5
    assert final.stop_reason is StopReason.COMPLETED and final.step_count == 5
    assert final.final_response == "The sums are done."
    assert [e.value for e in final.tool_executions] == [1, 2, 3, 4]
    for number, step in enumerate(final.steps):
        reasoning = [part for part in step.response.parts if type(part) is ReasoningPart]
        assert [part.text for part in reasoning] == [five_turns()[number].thinking]
        if provider == "anthropic":  # signed, and kept on the assistant message
            assert reasoning[0].signature and step.output_messages[0].parts[0] == reasoning[0]
    if provider == "gemini":  # the signature travels with the call
        assert all(e.tool_call.provider_fields["thought_signature"] for e in final.tool_executions)
    assert final.usage.reasoning_tokens > 0
    deltas = [e for e in events if type(e) is ReasoningDelta]
    assert (
        "".join(d.content for d in deltas) == "".join(t.thinking for t in five_turns())
    ) is stream
    assert AgentState.from_json(final.to_json()) == final


def test_gemini_needs_no_signature_in_the_call_id():
    """With litellm's id encoding off, the signature goes back in the call's provider
    fields alone."""
    model, options = MODELS["gemini"]
    with ProviderServer("gemini").plan(*five_turns()) as server:
        driver = LiteLLMDriver(
            model,
            api_base=server.base_url,
            api_key="test-key",
            num_retries=0,
            thought_signature_in_tool_call_id=False,
            **options,
        )
        final = AgentLoop(driver, tools=[add], max_steps=6).run(AgentState.initial(messages=["go"]))
    assert server.refusals == [] and final.stop_reason is StopReason.COMPLETED
    assert "__thought__" not in final.tool_executions[0].tool_call.id


def test_thinking_settings_in_llm_config_reach_the_provider():
    """``llm_config`` carries ``reasoning_effort`` and the provider's thinking settings to
    litellm, as the driver's own options do."""
    model, options = MODELS["anthropic"]
    with ProviderServer("anthropic").plan(*five_turns()) as server:
        driver = LiteLLMDriver(model, api_base=server.base_url, api_key="test-key", num_retries=0)
        state = AgentState.initial(messages=["go"], llm_config=options)
        final = AgentLoop(driver, tools=[add], max_steps=6).run(state)
        assert all(body["thinking"] == options["thinking"] for body in server.requests)
    assert server.refusals == [] and final.stop_reason is StopReason.COMPLETED


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_steps_cost_is_litellms_with_the_cache_written_at_its_price(stream):
    """Anthropic's answer says 3 of its prompt tokens were written to the prompt cache,
    which costs 1.25x an input token; the driver priced them as input tokens, below what
    litellm's own ``completion_cost`` gives for the same answer."""
    import litellm

    model, options = MODELS["anthropic"]
    with ProviderServer("anthropic").plan(*five_turns()[-1:], *five_turns()[-1:]) as server:
        bare = ask(server, "anthropic", [{"role": "user", "content": "go"}])
        driver = LiteLLMDriver(
            model, api_base=server.base_url, api_key="test-key", stream=stream, **options
        )
        final = AgentLoop(driver).run(AgentState.initial(messages=["go"]))
    assert bare.usage.cache_creation_input_tokens == final.usage.cache_write_tokens == 3
    assert final.usage.cost == pytest.approx(litellm.completion_cost(bare), rel=1e-9)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_steps_cost_is_litellms_with_audio_and_reasoning_at_their_prices(stream):
    """Gemini 2.5 Flash prices audio input at 3.3x text and has a rate of its own for
    reasoning; the driver priced every prompt token as text, half of what litellm's own
    ``completion_cost`` gives for an answer to a prompt of audio. Such models are priced
    by litellm from the whole usage."""
    import litellm

    model = "gemini/gemini-2.5-flash"
    with ProviderServer("gemini").plan(*five_turns()[-1:], *five_turns()[-1:]) as server:
        options = {"api_base": server.base_url, "api_key": "test-key", "num_retries": 0}
        bare = litellm.completion(
            model=model, messages=[{"role": "user", "content": "go"}], **options
        )
        driver = LiteLLMDriver(model, stream=stream, **options)
        final = AgentLoop(driver).run(AgentState.initial(messages=["go"]))
    assert bare.usage.prompt_tokens_details.audio_tokens == 14
    assert final.usage.cost == pytest.approx(litellm.completion_cost(bare), rel=1e-9)
