"""``LiteLLMDriver`` through the real litellm client, over real HTTP, against a local server."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
from helpers import add, initial
from llm_server import LLMServer, Reply, aclose_litellm_clients, answer, fault, tool_calls
from structlog.testing import capture_logs

from agents import (
    AgentLoop,
    ConfigurationError,
    ExecutionStatus,
    InferenceDelta,
    InferenceRequest,
    InferenceRetry,
    LiteLLMDriver,
    Message,
    ProviderError,
    RetryInterceptor,
    StepCompleted,
    StepType,
    StopReason,
)
from agents.testing import SequentialIds, TickingClock, capture_events

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
def server():
    with LLMServer() as running:
        yield running


def driver(server: LLMServer, **options) -> LiteLLMDriver:
    options.setdefault("sleep", lambda seconds: None)
    return LiteLLMDriver("openai/test-model", api_base=server.base_url, api_key=SECRET, **options)


def loop(server: LLMServer, **options) -> AgentLoop:
    driver_options = {
        k: options.pop(k)
        for k in list(options)
        if k
        in {"stream", "num_retries", "retry_backoff", "timeout", "sleep", "keep_raw", "temperature"}
    }
    return AgentLoop(
        driver(server, **driver_options),
        tools=options.pop("tools", [add]),
        clock=TickingClock(),
        ids=SequentialIds(),
        **options,
    )


def test_plain_answer_maps_content_usage_and_finish_reason(server):
    """A text answer becomes an InferenceResponse with usage; an unknown model costs 0.0."""
    server.plan(
        answer(
            "Hello!",
            usage={
                "prompt_tokens": 20,
                "completion_tokens": 5,
                "total_tokens": 25,
                "prompt_tokens_details": {"cached_tokens": 8},
            },
        )
    )
    final = loop(server).run(initial("hi"))
    assert final.status is ExecutionStatus.COMPLETED
    assert final.final_response == "Hello!"
    response = final.steps[0].response
    assert response.finish_reason == "stop"
    assert response.model == "test-model"
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cache_read_tokens,
        response.usage.cost,
    ) == (20, 5, 8, 0.0)
    sent = server.requests[0]
    assert sent["model"] == "test-model"
    assert sent["messages"] == [
        {"role": "system", "content": "You are a test agent."},
        {"role": "user", "content": "hi"},
    ]
    assert sent["tools"][0] == {"type": "function", "function": add.schema}
    assert server.headers[0]["x-stainless-retry-count"] == "0"


def test_tool_round_trip_sends_calls_and_results_back(server):
    """Tool calls come back parsed; the next request carries them and their results."""
    server.plan(tool_calls(("call-a", "add", {"a": 2, "b": 3})), answer("It is 5."))
    final = loop(server).run(initial("2+3?"))
    assert final.final_response == "It is 5."
    assert final.tool_executions[0].value == 5
    second = server.requests[1]["messages"]
    assert second[2]["role"] == "assistant"
    assert not second[2].get("content")
    assert second[2]["tool_calls"] == [
        {
            "id": "call-a",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
        }
    ]
    assert second[3] == {"role": "tool", "tool_call_id": "call-a", "content": "5"}
    assert final.steps[0].response.finish_reason == "tool_calls"


def test_invalid_json_arguments_are_kept_and_fail_the_call(server):
    """Unparseable arguments stay in raw_arguments; the model sees the error and goes on."""
    server.plan(tool_calls(("c1", "add", '{"a": 1, "b":')), answer("Sorry."))
    final = loop(server).run(initial())
    execution = final.tool_executions[0]
    assert execution.tool_call.raw_arguments == '{"a": 1, "b":'
    assert execution.error.type == "InvalidArguments"
    assert final.steps[0].step_type is StepType.ERROR
    assert server.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == (
        '{"a": 1, "b":'
    )
    assert final.final_response == "Sorry."


def test_finish_reasons_are_normalised(server):
    """Provider finish reasons map onto the documented values."""
    server.plan(answer("cut", finish_reason="length"), answer("x", finish_reason="weird"))
    request = InferenceRequest(messages=[Message.user("hi")])
    assert driver(server).infer(request).finish_reason == "length"
    assert driver(server).infer(request).finish_reason == "stop"


def test_options_pass_through_and_forbidden_ones_are_rejected(server):
    """temperature, max_tokens and headers reach the provider; driver-owned options do not."""
    server.plan(answer("ok"))
    custom = LiteLLMDriver(
        "openai/test-model",
        api_base=server.base_url,
        api_key=SECRET,
        temperature=0.25,
        max_tokens=50,
        extra_headers={"X-Trace": "t-1"},
    )
    custom.infer(InferenceRequest(messages=[Message.user("hi")], options={"top_p": 0.5}))
    sent = server.requests[0]
    assert (sent["temperature"], sent["max_tokens"], sent["top_p"]) == (0.25, 50, 0.5)
    assert server.headers[0]["x-trace"] == "t-1"
    for bad in ({"max_retries": 3}, {"tools": []}, {"messages": []}):
        with pytest.raises(ConfigurationError):
            LiteLLMDriver("openai/x", **bad)
    with pytest.raises(ConfigurationError):
        LiteLLMDriver("openai/x", num_retries=-1)


def test_api_key_never_reaches_state_events_or_logs(server):
    """The key goes to the provider only: not in the JSON, events, logs or repr."""
    server.plan(fault(400, message=f"invalid key {SECRET}"))
    events = capture_events()
    with capture_logs() as logs:
        final = loop(server, listeners=[events]).run(initial())
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    error = final.execution.error
    assert SECRET not in error.message and "[redacted]" in error.message
    assert SECRET not in final.to_json()
    assert SECRET not in repr(events.events) and SECRET not in repr(logs)
    assert SECRET not in repr(driver(server))
    assert error.details["status_code"] == 400
    assert error.details["attempts"] == 1  # a 4xx other than 429 is never retried


def test_rate_limit_honours_retry_after_then_succeeds(server):
    """A 429 is retried after the provider's Retry-After; each retry is an event."""
    slept: list[float] = []
    server.plan(fault(429, retry_after="2"), answer("finally"))
    events = capture_events()
    final = loop(server, sleep=slept.append, listeners=[events]).run(initial())
    assert final.final_response == "finally"
    assert slept == [2.0]
    retries = events.of_type(InferenceRetry)
    assert [(r.attempt, r.error.details["status_code"], r.delay) for r in retries] == [
        (1, 429, 2.0)
    ]
    assert len(server.requests) == 2


def test_server_errors_back_off_exponentially(server):
    """5xx faults are retried with doubling delays."""
    slept: list[float] = []
    server.plan(fault(500), fault(503), answer("ok"))
    final = loop(server, sleep=slept.append, retry_backoff=0.5, num_retries=2).run(initial())
    assert final.final_response == "ok"
    assert slept == [0.5, 1.0]


def test_exhausted_attempts_fail_the_run_with_status_and_attempts(server):
    """When attempts run out the run ends FAILED; earlier steps stay intact."""
    server.plan(tool_calls(("c1", "add", {"a": 1, "b": 1})), fault(503), fault(503), fault(503))
    final = loop(server, num_retries=2).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.stop_reason is StopReason.ERROR
    assert final.step_count == 2
    assert final.tool_executions[0].value == 2
    error = final.execution.error
    assert error.type == "ServiceUnavailableError"
    assert (error.details["status_code"], error.details["attempts"]) == (503, 3)
    assert len(server.requests) == 4


def test_timeouts_and_malformed_bodies_are_retried(server):
    """A slow answer (past the timeout) and a malformed body are retried."""
    server.plan(
        Reply(content="late", finish_reason="stop", delay=1.5), Reply(malformed=True), answer("ok")
    )
    slept: list[float] = []
    events = capture_events()
    final = loop(server, timeout=0.5, sleep=slept.append, listeners=[events]).run(initial())
    assert final.final_response == "ok"
    statuses = [r.error.details["status_code"] for r in events.of_type(InferenceRetry)]
    assert statuses == [None, 500]


def test_timeout_exhausted_records_no_status(server):
    """When no response arrived the recorded status is null."""
    server.plan(Reply(content="late", finish_reason="stop", delay=1.0))
    final = loop(server, timeout=0.3, num_retries=0).run(initial())
    assert final.execution.error.details == {"status_code": None, "attempts": 1}


def test_streaming_emits_deltas_and_matches_the_non_streaming_history(server):
    """Streamed pieces reach listeners; the history equals the non-streaming one."""
    script = [
        tool_calls(("c1", "add", {"a": 20, "b": 22}), content="Let me add."),
        answer("The answer is 42, as computed."),
    ]
    server.plan(*script)
    plain = loop(server).run(initial())
    server.plan(*script)
    events = capture_events()
    streamed = loop(server, stream=True, listeners=[events]).run(initial())
    assert streamed.to_json() == plain.to_json()
    assert server.requests[2]["stream"] is True
    assert server.requests[2]["stream_options"] == {"include_usage": True}
    deltas = events.of_type(InferenceDelta)
    text = "".join(d.content for d in deltas if d.step == 2)
    assert text == "The answer is 42, as computed."
    arguments = "".join(d.arguments for d in deltas if d.step == 1)
    assert json.loads(arguments) == {"a": 20, "b": 22}
    assert {d.tool_name for d in deltas if d.tool_name} == {"add"}


class Naming:
    """A listener that says which events it acts on (``event_types``)."""

    def __init__(self, *types):
        self.event_types = frozenset(types)
        self.seen = []

    def __call__(self, event):
        self.seen.append(type(event))


def test_pieces_and_retries_are_reported_only_to_listeners_that_may_act_on_them(server):
    """A driver's streamed pieces and retries become events only when a listener may act
    on them (no ``event_types``, or naming one of them): no reporter is made a step
    otherwise. The run's state is the same either way."""
    script = [fault(429, retry_after="0"), tool_calls(("c1", "add", {"a": 1, "b": 2})), answer("3")]
    finals, seen = [], []
    for listener in (Naming(StepCompleted), Naming(InferenceRetry), capture_events()):
        server.plan(*script)
        finals.append(loop(server, stream=True, listeners=[listener]).run(initial()))
        seen.append(
            set(getattr(listener, "seen", ())) or {type(event) for event in listener.events}
        )
    reported = {InferenceDelta, InferenceRetry}
    assert not seen[0] & reported
    assert reported <= seen[1] and reported <= seen[2]
    assert finals[0].to_json() == finals[1].to_json() == finals[2].to_json()
    assert finals[0].final_response == "3"


def test_stream_cut_midway_is_retried_and_the_partial_text_dropped(server):
    """A stream dropped mid-way is retried; its pieces carry attempt 1, the answer attempt 2."""
    server.plan(
        Reply(content="abcdefghijklmnop", finish_reason="stop", cut_after_chunks=3),
        answer("complete answer"),
    )
    events = capture_events()
    final = loop(server, stream=True, listeners=[events]).run(initial())
    assert final.final_response == "complete answer"
    deltas = events.of_type(InferenceDelta)
    assert {d.attempt for d in deltas if d.content.startswith(("abcd", "efgh"))} == {1}
    assert "".join(d.content for d in deltas if d.attempt == 2) == "complete answer"
    retry = events.of_type(InferenceRetry)[0]
    assert retry.error.details["status_code"] is None


def test_async_driver_gives_the_same_history(server):
    """``arun`` through ``acompletion`` records the same history as ``run``.

    litellm caches one async HTTP client per event loop and never closes it: the test
    closes them inside its loop, or their sockets would be left to the collector.
    """
    script = [tool_calls(("c1", "add", {"a": 1, "b": 2})), answer("3")]
    server.plan(*script)
    sync = loop(server).run(initial())

    async def both():
        try:
            server.plan(*script)
            plain = await loop(server).arun(initial())
            server.plan(*script)
            streamed = await loop(server, stream=True).arun(initial())
        finally:
            await aclose_litellm_clients()
        return plain, streamed

    async_, streamed = asyncio.run(both())
    assert async_.to_json() == sync.to_json()
    assert streamed.to_json() == sync.to_json()


def test_cost_comes_from_litellm_prices_for_known_models(server):
    """A model litellm prices gets a cost (cached tokens priced as such)."""
    server.plan(
        answer("ok", usage={"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100})
    )
    known = LiteLLMDriver("openai/gpt-4o-mini", api_base=server.base_url, api_key=SECRET)
    usage = known.infer(InferenceRequest(messages=[Message.user("hi")])).usage
    import litellm

    expected = sum(
        litellm.cost_per_token(
            model="openai/gpt-4o-mini", prompt_tokens=1000, completion_tokens=100
        )
    )
    assert usage.cost == pytest.approx(expected) and usage.cost > 0


def test_keep_raw_keeps_the_provider_answer(server):
    """``keep_raw=True`` stores the provider's JSON answer."""
    server.plan(answer("raw please"))
    response = driver(server, keep_raw=True).infer(InferenceRequest(messages=[Message.user("x")]))
    assert response.raw["choices"][0]["message"]["content"] == "raw please"


def test_retry_interceptor_applies_the_policy_to_any_driver(server):
    """``RetryInterceptor`` retries a driver that does not retry by itself."""
    slept: list[float] = []
    server.plan(fault(429, retry_after="1.5"), fault(502), answer("ok"), fault(404))
    no_retries = driver(server, num_retries=0)
    wrapped = AgentLoop(
        no_retries,
        interceptors=[RetryInterceptor(3, 0.25, sleep=slept.append)],
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    assert wrapped.run(initial()).final_response == "ok"
    assert slept == [1.5, 0.5]
    final = wrapped.run(initial())
    assert final.execution.error.details["status_code"] == 404
    assert final.execution.error.details["attempts"] == 1
    with pytest.raises(ConfigurationError):
        RetryInterceptor(-1)


def test_provider_error_carries_the_error_info(server):
    """Calling the driver directly raises ProviderError with the recorded ErrorInfo."""
    server.plan(fault(401, message="bad credentials"))
    with pytest.raises(ProviderError) as info:
        driver(server).infer(InferenceRequest(messages=[Message.user("x")]))
    assert info.value.error_info.details["status_code"] == 401


def test_async_retries_use_the_async_sleep(server):
    """``arun`` retries with ``asleep`` and records the same failure details."""
    waited: list[float] = []

    async def asleep(seconds: float) -> None:
        waited.append(seconds)

    async def main():
        try:
            server.plan(fault(429, retry_after="4"), answer("ok"))
            driver_ = LiteLLMDriver(
                "openai/test-model", api_base=server.base_url, api_key=SECRET, asleep=asleep
            )
            return await AgentLoop(driver_, clock=TickingClock(), ids=SequentialIds()).arun(
                initial()
            )
        finally:
            await aclose_litellm_clients()

    final = asyncio.run(main())
    assert final.final_response == "ok"
    assert waited == [4.0]


def test_unknown_models_cost_zero_with_a_logged_note(server):
    """A model litellm cannot price costs 0.0 and is noted once in the log."""
    server.plan(answer("a"), answer("b"))
    unknown = driver(server)
    request = InferenceRequest(messages=[Message.user("x")])
    with capture_logs() as logs:
        costs = [unknown.infer(request).usage.cost for _ in range(2)]
    assert costs == [0.0, 0.0]
    notes = [entry for entry in logs if entry["event"] == "model_not_priced"]
    assert len(notes) == 1 and notes[0]["model"] == "openai/test-model"


def test_litellm_loads_before_the_first_step():
    """Constructing the driver imports litellm and what its first call would import by
    itself (~0.3 s of pydantic models), so the first step's duration is the model's, not
    seconds of imports; ``import agents`` alone still imports none of it."""
    code = textwrap.dedent(
        """
        import sys
        import agents
        assert "litellm" not in sys.modules
        agents.LiteLLMDriver("openai/m", api_key="k")
        print(sorted(m for m in ("litellm", "litellm.proxy._types") if m in sys.modules))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert result.returncode == 0, result.stderr
    loaded = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert loaded == ["litellm", "litellm.proxy._types"]


def test_the_drivers_model_and_settings_go_with_each_request_not_its_secrets(server, tmp_path):
    """``request_defaults``: the model and the options that shape the answer, which each
    request carries (so the audit log records them); not the key, nor where the request
    goes; the provider receives the same either way."""
    from agents import AuditLog

    server.plan(answer("ok"))
    custom = driver(server, temperature=0.25, extra_headers={"Authorization": f"Bearer {SECRET}"})
    assert custom.request_defaults() == {"model": "openai/test-model", "temperature": 0.25}
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        audited = AgentLoop(custom, clock=TickingClock(), ids=SequentialIds(), listeners=[log])
        final = audited.run(initial("hi").with_llm_config(top_p=0.5))
    assert final.status is ExecutionStatus.COMPLETED
    assert (server.requests[0]["temperature"], server.requests[0]["top_p"]) == (0.25, 0.5)
    step = json.loads(path.read_text().splitlines()[1])
    assert step["payload"]["request"]["model"] == "openai/test-model"
    assert step["payload"]["request"]["options"] == {"temperature": 0.25, "top_p": 0.5}
    assert SECRET not in path.read_text() and server.base_url not in path.read_text()


def test_the_drivers_switches_and_sleeps_are_what_they_say():
    """``LiteLLMDriver(model, stream="no")`` streamed and ``keep_raw="no"`` kept every raw
    answer (a non-empty text is true); ``sleep=5`` was taken and the first retry then failed
    calling it. Each is refused when the driver is made."""
    from agents import ConfigurationError, InvalidType, LiteLLMDriver

    for option in ("stream", "keep_raw"):
        with pytest.raises(InvalidType, match=f"LiteLLMDriver: {option} is True or False"):
            LiteLLMDriver("openai/m", **{option: "no"})
    for option in ("sleep", "asleep"):
        with pytest.raises(ConfigurationError, match=f"LiteLLMDriver: {option} is a function"):
            LiteLLMDriver("openai/m", **{option: 5})
    assert LiteLLMDriver("openai/m", stream=True).stream is True
