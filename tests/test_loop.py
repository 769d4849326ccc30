"""The loop's runners (docs/design/loop.md): failures as data, resuming, iterate, async, listeners,
misuse."""

from __future__ import annotations

import asyncio

import pytest
from helpers import add, echo, initial, make_loop

from agents import (
    AgentLoop,
    AgentState,
    ConfigurationError,
    ErrorInfo,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    InferenceResponse,
    Message,
    StepType,
    StopReason,
    ToolCall,
    hook,
    inference_interceptor,
    tool,
    tool_interceptor,
)
from agents.testing import (
    FunctionDriver,
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    call,
    calls,
    capture_events,
    fail,
    reply,
)


def test_run_does_not_change_its_input():
    """The input state is a value: running it leaves it as it was."""
    state = initial()
    before = state.to_json()
    final = make_loop(call("add", a=1, b=2), reply("3")).run(state)
    assert state.to_json() == before
    assert state.execution is None
    assert final is not state


def test_unset_agent_id_and_created_at_come_from_the_loop():
    """An initial state is pure; the first run fills agent id and creation time."""
    state = AgentState.initial("sys")
    assert state.agent_id is None and state.created_at is None
    final = make_loop(reply("x")).run(state.with_user_message("hi"))
    assert final.agent_id == "agent-1"
    assert final.created_at is not None
    assert final.execution is not None
    assert final.execution.execution_id == "execution-1"


def test_a_finished_state_starts_a_new_execution():
    """Running a terminal state again starts a new execution and keeps the conversation."""
    loop = make_loop(reply("one"), reply("two"))
    first = loop.run(initial())
    second = loop.run(first.with_user_message("again"))
    assert second.execution_count == 2
    assert first.execution.execution_id == "execution-1"
    assert second.execution.execution_id == "execution-2"  # a new id, never None
    assert second.step_count == 1
    assert [m.content for m in second.messages] == ["hello", "one", "again", "two"]


def test_an_in_progress_state_resumes_where_it_was():
    """A state taken mid-run continues with the same execution and step numbering."""
    loop = make_loop(call("add", a=1, b=1), call("add", a=2, b=2), reply("done"))
    states = list(loop.iterate(initial()))
    middle = states[0]
    assert middle.status is ExecutionStatus.IN_PROGRESS
    assert middle.step_count == 1
    resumed = make_loop(call("add", a=2, b=2), reply("done"), ids=SequentialIds("r-")).run(middle)
    assert resumed.execution.execution_id == middle.execution.execution_id
    assert resumed.execution_count == middle.execution_count
    assert [se.number for se in resumed.step_executions] == [1, 2, 3]
    assert resumed.final_response == "done"


def test_iterate_yields_each_continuing_step_then_the_final_state():
    """``iterate`` yields once per continuing step plus once for the final state."""
    loop = make_loop(call("add", a=1, b=1), call("add", a=2, b=2), reply("done"))
    states = list(loop.iterate(initial()))
    assert [s.step_count for s in states] == [1, 2, 3]
    assert [s.status for s in states] == [ExecutionStatus.IN_PROGRESS] * 2 + [
        ExecutionStatus.COMPLETED
    ]


def test_run_and_arun_give_byte_identical_histories():
    """The async runner records the same history as the sync one."""
    script = [calls(call("add", a=1, b=2), call("echo", text="hi")), call("nope"), reply("ok")]
    sync = make_loop(*script, tools=[add, echo]).run(initial())
    async_ = asyncio.run(make_loop(*script, tools=[add, echo]).arun(initial()))
    assert sync.to_json() == async_.to_json()


def test_aiterate_matches_iterate():
    """``aiterate`` yields the same states as ``iterate``."""
    script = [call("add", a=1, b=1), reply("done")]

    async def collect():
        return [s async for s in make_loop(*script).aiterate(initial())]

    assert [s.to_json() for s in asyncio.run(collect())] == [
        s.to_json() for s in make_loop(*script).iterate(initial())
    ]


def test_script_exhausted_is_recorded_not_raised():
    """A driver with no answer left fails the run; it does not raise."""
    final = make_loop(call("add", a=1, b=1)).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "ScriptExhausted"
    assert final.step_count == 2
    assert final.steps[0].step_type is StepType.TOOL_EXECUTION


def test_an_error_carrying_error_info_is_recorded_as_it():
    """An exception with an ``error_info`` attribute is recorded as that ErrorInfo."""

    class ProviderError(Exception):
        error_info = ErrorInfo(
            type="RateLimited", message="slow down", details={"status_code": 429}
        )

    final = make_loop(fail(ProviderError())).run(initial())
    assert final.execution.error == ProviderError.error_info
    assert final.stop_signal.message == "RateLimited: slow down"


def test_driver_returning_garbage_fails_the_run():
    """A driver answer that is not an InferenceResponse is recorded as a failure."""
    loop = AgentLoop(FunctionDriver(lambda request: 42), clock=TickingClock(), ids=SequentialIds())
    final = loop.run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "TypeError"


def test_error_in_after_step_keeps_the_assembled_messages():
    """A failure after the step was assembled archives it with its messages."""

    @hook(HookTrigger.AFTER_STEP)
    def broken(context: HookContext) -> HookContext:
        raise KeyError("missing")

    final = make_loop(call("add", a=1, b=2), reply("x"), hooks=[broken]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    step = final.steps[0]
    assert step.step_type is StepType.ERROR
    assert step.tool_executions[0].value == 3
    assert [m.role.value for m in final.messages] == ["user", "assistant", "tool"]


def test_error_in_after_tool_use_keeps_finished_executions_but_not_messages():
    """A failure before the messages were assembled keeps executions, appends no messages."""

    @hook(HookTrigger.AFTER_TOOL_USE)
    def broken(context: HookContext) -> HookContext:
        raise RuntimeError("after tool")

    final = make_loop(call("add", a=1, b=2), reply("x"), hooks=[broken]).run(initial())
    step = final.steps[0]
    assert step.errors[0].message == "after tool"
    assert [e.value for e in step.tool_executions] == [3]
    assert [m.role.value for m in final.messages] == ["user"]


def test_on_error_runs_once_and_phase_five_still_runs():
    """An exception in ON_STOP runs ON_ERROR (once) and AFTER_EXECUTION still runs."""
    log: list[str] = []

    @hook(HookTrigger.ON_STOP, priority=5)
    def bad_stop(context: HookContext) -> HookContext:
        log.append("on_stop")
        raise RuntimeError("stop hook")

    @hook(HookTrigger.ON_STOP)
    def skipped(context: HookContext) -> HookContext:
        log.append("skipped")
        return context

    @hook([HookTrigger.ON_ERROR, HookTrigger.AFTER_EXECUTION])
    def record(context: HookContext) -> HookContext:
        log.append(context.trigger.value)
        return context

    final = make_loop(reply("x"), hooks=[bad_stop, skipped, record]).run(initial())
    assert log == ["on_stop", "on_error", "after_execution"]
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.message == "stop hook"


def test_first_error_is_kept():
    """``execution.error`` keeps the first error; every error adds its ERROR signal."""

    @hook(HookTrigger.AFTER_EXECUTION)
    def late(context: HookContext) -> HookContext:
        raise RuntimeError("second")

    final = make_loop(fail(RuntimeError("first")), hooks=[late]).run(initial())
    assert final.execution.error.message == "first"
    errors = [
        s.message for s in final.execution.continuation.stop_signals if s.reason is StopReason.ERROR
    ]
    assert errors == ["RuntimeError: first", "RuntimeError: second"]


def test_hook_returning_the_wrong_type_fails_the_run():
    """A hook must return a HookContext; anything else is a recorded failure."""

    @hook(HookTrigger.BEFORE_STEP, name="sloppy")
    def sloppy(context: HookContext) -> HookContext:
        return None  # type: ignore[return-value]

    final = make_loop(reply("x"), hooks=[sloppy]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "HookReturnError"
    assert "sloppy" in final.execution.error.message


def test_hook_state_changes_are_kept_for_every_trigger():
    """Metadata written by a hook at any trigger survives into the final state."""

    @hook(list(HookTrigger))
    def mark(context: HookContext) -> HookContext:
        key = context.trigger.value
        count = context.state.metadata.get(key, 0)
        return context.with_state(context.state.with_metadata(key, count + 1))

    final = make_loop(call("add", a=1, b=2), reply("x"), hooks=[mark]).run(initial())
    metadata = dict(final.metadata)
    assert metadata == {
        "before_execution": 1,
        "before_step": 2,
        "before_inference": 2,
        "after_inference": 2,
        "before_tool_use": 1,
        "after_tool_use": 1,
        "after_step": 2,
        "on_stop": 1,
        "after_execution": 1,
    }


def test_hooks_run_by_priority_then_registration_order():
    """Higher priority first; equal priorities in the order given."""
    order: list[str] = []

    def make(name: str, priority: int):
        @hook(HookTrigger.BEFORE_EXECUTION, priority=priority, name=name)
        def record(context: HookContext) -> HookContext:
            order.append(name)
            return context

        return record

    hooks = [make("low", -1), make("a", 0), make("high", 10), make("b", 0)]
    make_loop(reply("x"), hooks=hooks).run(initial())
    assert order == ["high", "a", "b", "low"]


def test_hooks_can_rewrite_request_and_response():
    """BEFORE_INFERENCE may change the request, AFTER_INFERENCE the response."""
    seen: list[int] = []

    @hook(HookTrigger.BEFORE_INFERENCE)
    def shorten(context: HookContext) -> HookContext:
        assert context.request is not None
        return context.with_request(context.request.with_messages(context.request.messages[-1:]))

    @hook(HookTrigger.AFTER_INFERENCE)
    def shout(context: HookContext) -> HookContext:
        assert context.response is not None
        return context.with_response(context.response.with_content("LOUD"))

    def model(request):
        seen.append(len(request.messages))
        return "quiet"

    loop = AgentLoop(
        FunctionDriver(model), hooks=[shorten, shout], clock=TickingClock(), ids=SequentialIds()
    )
    final = loop.run(initial())
    assert seen == [1]
    assert final.final_response == "LOUD"


def test_before_tool_use_can_rewrite_a_call():
    """A rewritten call is the one that runs and is recorded."""

    @hook(HookTrigger.BEFORE_TOOL_USE)
    def double(context: HookContext) -> HookContext:
        call_ = context.tool_call
        assert call_ is not None
        return context.with_tool_call(call_.with_arguments({"a": call_.arguments["a"] * 2, "b": 0}))

    final = make_loop(call("add", a=5, b=1), reply("x"), hooks=[double]).run(initial())
    execution = final.tool_executions[0]
    assert execution.value == 10
    assert dict(execution.arguments) == {"a": 10, "b": 0}


def test_after_tool_use_can_replace_the_execution():
    """AFTER_TOOL_USE may redact a result before the model sees it."""

    @hook(HookTrigger.AFTER_TOOL_USE)
    def redact(context: HookContext) -> HookContext:
        assert context.tool_execution is not None
        return context.with_tool_execution(context.tool_execution.with_value("[hidden]"))

    final = make_loop(call("echo", text="secret"), reply("x"), tools=[echo], hooks=[redact]).run(
        initial()
    )
    assert final.tool_executions[0].value == "[hidden]"
    assert final.messages[2].content == "[hidden]"


def test_interceptors_wrap_in_order_first_outermost():
    """The first interceptor is the outermost layer."""
    log: list[str] = []

    def layer(name):
        @inference_interceptor
        def intercept(request, call_next):
            log.append(f"{name}>")
            response = call_next(request)
            log.append(f"<{name}")
            return response

        return intercept

    make_loop(reply("x"), interceptors=[layer("outer"), layer("inner")]).run(initial())
    assert log == ["outer>", "inner>", "<inner", "<outer"]


def test_a_loop_made_from_one_that_ran_takes_its_own_interceptors():
    """A loop finds its interceptors' layers at its first run and keeps them; a loop
    made from it with other interceptors finds its own (run once and again, both)."""
    log: list[str] = []

    def layer(name):
        @tool_interceptor
        def intercept(call_, call_next):
            log.append(name)
            return call_next(call_)

        return intercept

    def model(request):  # a tool call first, then an answer: every run alike
        if len(request.messages) == 2:
            return [ToolCall(id="c1", name="add", arguments={"a": 1, "b": 1})]
        return "x"

    first = AgentLoop(
        FunctionDriver(model),
        tools=[add],
        interceptors=[layer("first")],
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    first.run(initial())
    second = first.with_options(interceptors=[layer("second")])
    second.run(initial())
    first.run(initial())
    assert log == ["first", "second", "first"]


def test_inference_interceptor_can_answer_without_the_driver():
    """A caching interceptor answers by itself; the driver is not asked."""
    driver = ScriptedDriver([])

    @inference_interceptor
    def cache(request, call_next):
        return InferenceResponse(content="cached")

    loop = AgentLoop(driver, interceptors=[cache], clock=TickingClock(), ids=SequentialIds())
    assert loop.run(initial()).final_response == "cached"
    assert driver.last_request is None


def test_tool_interceptor_sees_and_may_change_each_call():
    """A tool interceptor wraps each call and may rewrite it."""

    @tool_interceptor
    def plus_one(call_: ToolCall, call_next):
        return call_next(call_.with_arguments({**call_.arguments, "b": call_.arguments["b"] + 1}))

    final = make_loop(call("add", a=1, b=1), reply("x"), interceptors=[plus_one]).run(initial())
    assert final.tool_executions[0].value == 3


def test_interceptor_that_raises_fails_the_step():
    """An interceptor failure is recorded like a driver failure."""

    @tool_interceptor
    def broken(call_, call_next):
        raise PermissionError("denied by policy")

    final = make_loop(call("add", a=1, b=1), reply("x"), interceptors=[broken]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "PermissionError"
    assert final.steps[0].step_type is StepType.ERROR


def test_async_interceptor_needs_the_async_runner():
    """``run`` rejects async interceptors before anything runs; ``arun`` uses them."""

    @inference_interceptor
    async def slow(request, call_next):
        await asyncio.sleep(0)
        return await call_next(request)

    loop = make_loop(reply("x"), interceptors=[slow])
    with pytest.raises(ConfigurationError, match="arun"):
        loop.run(initial())
    assert asyncio.run(loop.arun(initial())).final_response == "x"


def test_sync_interceptor_works_in_the_async_runner_around_an_async_one():
    """Sync and async interceptors can be mixed under ``arun``."""
    log: list[str] = []

    @inference_interceptor
    def sync_layer(request, call_next):
        log.append("sync")
        return call_next(request)

    @inference_interceptor
    async def async_layer(request, call_next):
        log.append("async")
        return await call_next(request)

    @tool_interceptor
    async def async_tool(call_, call_next):
        log.append(f"tool:{call_.name}")
        return await call_next(call_)

    loop = make_loop(
        call("add", a=1, b=2), reply("x"), interceptors=[sync_layer, async_layer, async_tool]
    )
    final = asyncio.run(loop.arun(initial()))
    assert final.tool_executions[0].value == 3
    assert log == ["sync", "async", "tool:add", "sync", "async"]


def test_listener_failure_is_ignored_unless_critical():
    """A failing listener does not stop the run; a critical one fails it."""

    def flaky(event):
        raise OSError("disk full")

    assert make_loop(reply("x"), listeners=[flaky]).run(initial()).status is (
        ExecutionStatus.COMPLETED
    )

    class Critical:
        critical = True

        def __call__(self, event):
            raise OSError("audit disk full")

    final = make_loop(reply("x"), listeners=[Critical()]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "ListenerFailed"
    assert "audit disk full" in final.execution.error.message


def test_a_critical_listeners_failure_is_recorded_the_same_in_every_run():
    """The failure names the listener by its ``repr`` without a memory address (a default
    ``repr``, a function's, a bound method's): two runs with the same inputs give the same
    JSON (the address made each run's record differ)."""

    class Critical:
        critical = True

        def __call__(self, event):
            raise OSError("audit disk full")

        def method(self, event):
            raise OSError("audit disk full")

    def function(event):
        raise OSError("audit disk full")

    function.critical = True
    Critical.method.critical = True  # a bound method reads its function's attributes
    for listener_of in (Critical, lambda: function, lambda: Critical().method):
        texts = {make_loop(reply("x"), listeners=[listener_of()]).run(initial()).to_json()}
        texts.add(make_loop(reply("x"), listeners=[listener_of()]).run(initial()).to_json())
        assert len(texts) == 1, texts
        assert " at 0x" not in texts.pop()


def test_an_error_naming_an_object_is_recorded_the_same_in_every_run():
    """A tool's error whose text shows an object's default ``repr``: recorded without the
    memory address (``<...Session object>``), so two runs give the same JSON."""

    class Session:
        pass

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ValueError(f"{Session()} is closed")

    texts = set()
    for _ in range(2):
        final = make_loop(call("fetch", url="u"), reply("sorry"), tools=[fetch]).run(initial())
        texts.add(final.to_json())
    assert len(texts) == 1
    message = final.tool_executions[0].error.message
    assert message.endswith("Session object> is closed"), message


@pytest.mark.parametrize("bad", [None, {"messages": []}, "hello", Message.user("x")])
def test_run_rejects_something_that_is_not_a_state(bad):
    """Passing anything but an AgentState is misuse, named in the error."""
    loop = make_loop(reply("x"))
    with pytest.raises(ConfigurationError, match=type(bad).__name__):
        loop.run(bad)
    with pytest.raises(ConfigurationError):
        loop.iterate(bad)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"driver": object()}, "infer"),
        ({"hooks": [lambda c: c]}, "hook"),
        ({"interceptors": [object()]}, "intercept"),
        ({"tool_execution": "random"}, "tool_execution"),
        ({"stop_on_finish_reasons": ["done"]}, "stop_on_finish_reasons"),
        ({"clock": object()}, "clock"),
        ({"ids": object()}, "ids"),
        ({"listeners": [42]}, "listener"),
    ],
)
def test_bad_configuration_is_rejected_up_front(options, match):
    """Misconfiguration raises ConfigurationError naming the culprit."""
    driver = options.pop("driver", ScriptedDriver([reply("x")]))
    with pytest.raises(ConfigurationError, match=match):
        AgentLoop(driver, **options)


def test_loop_is_immutable_and_with_variants_copy():
    """``with_*`` returns a new loop and leaves the original alone."""
    loop = make_loop(reply("x"))
    other = loop.with_limits(max_steps=3).with_tools(echo)
    assert loop.max_steps == 20 and other.max_steps == 3
    assert "echo" not in loop.tools and "echo" in other.tools
    with pytest.raises(AttributeError):
        loop.max_steps = 5  # type: ignore[misc]
    with pytest.raises(ConfigurationError):
        loop.with_limits(steps=3)


def test_events_cover_the_whole_run_and_end_with_execution_completed():
    """Events follow the phases; the last is ExecutionCompleted."""

    @hook(HookTrigger.BEFORE_TOOL_USE)
    def block_echo(context: HookContext) -> HookContext:
        if context.tool_call is not None and context.tool_call.name == "echo":
            return context.with_tool_blocked("no echo")
        return context

    events = capture_events()
    loop = make_loop(
        calls(call("add", a=1, b=2), call("echo", text="x")),
        reply("done"),
        tools=[add, echo],
        hooks=[block_echo],
        listeners=[events],
        max_steps=1,
    )
    final = loop.run(initial())
    assert events.names == [
        "ExecutionStarted",
        "StepStarted",
        "InferenceCompleted",
        "ToolCallStarted",
        "ToolCallCompleted",
        "ToolCallBlocked",
        "StepCompleted",
        "StopSignalReceived",
        "ExecutionStopped",
        "ExecutionCompleted",
    ]
    last = events.events[-1]
    assert last.status is ExecutionStatus.STOPPED
    assert last.state == final
    assert all(e.agent_id == final.agent_id for e in events.events)
    assert {e.step for e in events.of_type(type(events.events[3]))} == {1}


def test_failed_run_emits_execution_failed_before_completed():
    """A FAILED run ends with ExecutionFailed then ExecutionCompleted."""
    events = capture_events()
    make_loop(fail(RuntimeError("x")), listeners=[events]).run(initial())
    assert events.names[-2:] == ["ExecutionFailed", "ExecutionCompleted"]


def test_one_thing_alone_where_a_list_goes_is_refused_by_name():
    """``messages="hello"`` made five user messages, "h" to "o"; ``tools=add``,
    ``hooks=a_hook`` and ``listeners=print`` raised a bare ``TypeError`` ("'function'
    object is not iterable"). Each is an ``InvalidType`` naming the argument."""
    from agents import AgentState, InvalidType
    from agents.testing import ScriptedDriver

    @hook(HookTrigger.BEFORE_STEP)
    def noop(context: HookContext) -> HookContext:
        return context

    cases = {
        "AgentState.initial: messages is a list, not the text 'hello'": lambda: AgentState.initial(
            "s", messages="hello"
        ),
        "AgentState.initial: messages is a list, not Message": lambda: AgentState.initial(
            "s", messages=Message.user("hello")
        ),
        "AgentLoop: tools is a list, not function": lambda: AgentLoop(
            ScriptedDriver([reply("x")]), tools=add.function
        ),
        "AgentLoop: tools is a list, not Tool": lambda: AgentLoop(
            ScriptedDriver([reply("x")]), tools=add
        ),
        "AgentLoop: hooks is a list, not": lambda: AgentLoop(
            ScriptedDriver([reply("x")]), hooks=noop
        ),
        "AgentLoop: listeners is a list, not builtin_function_or_method": lambda: AgentLoop(
            ScriptedDriver([reply("x")]), listeners=print
        ),
        "AgentLoop: interceptors is a list, not the text 'x'": lambda: AgentLoop(
            ScriptedDriver([reply("x")]), interceptors="x"
        ),
    }
    for said, make in cases.items():
        with pytest.raises(InvalidType) as caught:
            make()
        assert str(caught.value).startswith(said), str(caught.value)
    assert len(AgentState.initial("s", messages=["hello"]).context.store.messages) == 1
    assert len(AgentState.initial("s", messages=("a", "b")).context.store.messages) == 2
