"""Tools (docs/design/tools.md): schemas, validation, every failure mode as data, batches,
timeouts."""

from __future__ import annotations

import asyncio
import enum
import threading
import time
from typing import Annotated, Any, Literal

import pytest
from helpers import add, echo, initial, make_loop

from agents import (
    AgentLoop,
    AgentState,
    ConfigurationError,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    StepType,
    Tool,
    ToolContext,
    Tools,
    hook,
    tool,
)
from agents.testing import call, calls, reply


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_schema_from_signature_and_google_docstring():
    """Types, defaults and docstring descriptions become the JSON schema."""

    @tool
    def search(
        query: str, limit: int = 10, exact: bool = False, tags: list[str] | None = None
    ) -> list[str]:
        """Search the catalogue.

        Longer explanation that is not part of the summary.

        Args:
            query: what to look for
            limit: how many results,
                at most
            exact: whole words only
            tags: restrict to these tags
        """
        return []

    assert search.name == "search"
    assert search.description == "Search the catalogue."
    assert search.schema["parameters"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "description": "how many results, at most", "default": 10},
            "exact": {"type": "boolean", "description": "whole words only", "default": False},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "description": "restrict to these tags",
                "default": None,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_schema_from_sphinx_docstring_literal_enum_and_annotated():
    """Sphinx ``:param:`` lines, Literal, Enum and Annotated descriptions are understood."""

    @tool(name="paint", description="Paint a wall.")
    def paint_wall(
        colour: Colour,
        finish: Literal["matt", "gloss"],
        coats: Annotated[int, "number of coats"] = 2,
        extras: dict[str, float] | None = None,
    ) -> str:
        """Ignored because description= is given.

        :param colour: the colour
        :param finish: the finish
        """
        return f"{colour.value}/{finish}/{coats}"

    properties = paint_wall.schema["parameters"]["properties"]
    assert paint_wall.name == "paint"
    assert paint_wall.description == "Paint a wall."
    assert properties["colour"] == {"enum": ["red", "blue"], "description": "the colour"}
    assert properties["finish"] == {"enum": ["matt", "gloss"], "description": "the finish"}
    assert properties["coats"] == {
        "type": "integer",
        "description": "number of coats",
        "default": 2,
    }
    assert properties["extras"]["anyOf"][0] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    final = make_loop(
        call("paint", colour="red", finish="gloss"), reply("done"), tools=[paint_wall]
    ).run(initial())
    assert final.tool_executions[0].value == "red/gloss/2"


@pytest.mark.parametrize(
    ("annotation", "match"),
    [
        (set[int], "cannot be expressed"),
        (object, "cannot be expressed"),
        (dict[int, str], "str keys"),
        (threading.Lock, "cannot be expressed"),
    ],
)
def test_unsupported_parameter_types_are_configuration_errors(annotation, match):
    """A parameter type JSON schema cannot express is rejected when the tool is built."""

    def f(x):  # annotated below
        return x

    f.__annotations__ = {"x": annotation}
    with pytest.raises(ConfigurationError, match=rf"tool 'f', parameter 'x'.*{match}"):
        tool(f)


def test_missing_annotation_and_var_args_are_configuration_errors():
    """Every parameter needs a type and a name the model can pass."""

    def untyped(x):
        return x

    def varargs(*items: int) -> int:
        return 0

    with pytest.raises(ConfigurationError, match="needs a type annotation"):
        tool(untyped)
    with pytest.raises(ConfigurationError, match=r"\*args"):
        tool(varargs)
    with pytest.raises(ConfigurationError, match="timeout"):
        tool(add.function, timeout=0)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("requires_approval", "false"),
        ("requires_approval", None),
        ("sequential", 1),
        ("thread", "no"),
    ],
)
def test_a_tools_switch_is_true_or_false(option, value):
    """``requires_approval="false"`` asked for approval (a non-empty text is true) and
    ``requires_approval=None`` for none: a switch read from a configuration as text
    decided the opposite of what it said. Anything but a bool is refused."""
    with pytest.raises(ConfigurationError, match=rf"tool 'add': {option} is True or False"):
        tool(add.function, **{option: value})


def test_a_tools_description_is_text():
    """``tool(fn, description=5)`` was taken, and the schema the model is offered then
    held a number where its description goes."""
    with pytest.raises(ConfigurationError, match="tool 'add': description is text, not int"):
        tool(add.function, description=5)
    assert tool(add.function, description="Sum two numbers.").description == "Sum two numbers."


def test_tools_reject_duplicate_names():
    """Two tools with one name are a configuration error."""
    with pytest.raises(ConfigurationError, match="add"):
        Tools([add, add])
    assert list(Tools([add]).with_tool(echo)) == ["add", "echo"]
    assert list(Tools([add, echo]).without("add")) == ["echo"]


def run_calls(*script_calls, tools=(add,), **options):
    loop = make_loop(*script_calls, reply("done"), tools=tools, **options)
    return loop.run(initial())


@pytest.mark.parametrize(
    ("step", "error_type", "fragment"),
    [
        (call("nope", x=1), "UnknownTool", "unknown tool 'nope'; available tools: add"),
        (call("add", "{not json"), "InvalidArguments", "not a valid JSON object"),
        (call("add", "[1, 2]"), "InvalidArguments", "not a valid JSON object"),
        (call("add", a=1), "InvalidArguments", "missing required argument 'b'"),
        (call("add", a="1", b=2), "InvalidArguments", "a: expected integer, got string"),
        (call("add", a=1, b=2, c=3), "InvalidArguments", "unexpected argument 'c'"),
        (call("add", a=True, b=2), "InvalidArguments", "a: expected integer, got boolean"),
    ],
)
def test_bad_calls_become_failed_executions_the_model_sees(step, error_type, fragment):
    """Unknown tools, invalid JSON and wrong arguments are recorded; the run goes on."""
    final = run_calls(step)
    assert final.status is ExecutionStatus.COMPLETED
    execution = final.tool_executions[0]
    assert execution.error is not None
    assert execution.error.type == error_type
    assert fragment in execution.error.message
    assert final.messages[2].content.startswith(f"Error: {error_type}: ")
    assert final.steps[0].step_type is StepType.ERROR


def test_raw_arguments_are_kept_for_invalid_json():
    """The model's original text survives in ``raw_arguments``."""
    final = run_calls(call("add", '{"a": 1,'))
    assert final.tool_executions[0].tool_call.raw_arguments == '{"a": 1,'


def test_integral_floats_are_accepted_as_integers():
    """JSON ``2.0`` is an integer by JSON schema's rules."""
    assert run_calls(call("add", a=2.0, b=1)).tool_executions[0].value == 3


def test_nested_arguments_reach_the_tool_as_plain_python():
    """Lists and maps arrive as list and dict, not as persistent collections."""
    seen: list[Any] = []

    @tool
    def inspect_args(items: list[dict[str, int]], meta: Any = None) -> int:
        """Look at the argument types."""
        seen.append((type(items), type(items[0]), type(meta)))
        return len(items)

    final = run_calls(call("inspect_args", items=[{"x": 1}], meta={"k": [1]}), tools=[inspect_args])
    assert final.tool_executions[0].value == 1
    assert seen == [(list, dict, dict)]


def test_tool_context_is_injected_and_hidden_from_the_model():
    """A ``ToolContext`` parameter gets the call's context and is not in the schema."""
    seen: list[ToolContext] = []

    @tool
    def whoami(ctx: ToolContext, greeting: str) -> str:
        """Say who called."""
        seen.append(ctx)
        return f"{greeting} {ctx.call_id}"

    assert list(whoami.schema["parameters"]["properties"]) == ["greeting"]
    final = run_calls(call("whoami", greeting="hi", id="c-7"), tools=[whoami])
    assert final.tool_executions[0].value == "hi c-7"
    context = seen[0]
    assert context.idempotency_key == (final.execution.execution_id, 1, "c-7")
    assert context.state.messages[0].content == "hello"


def test_non_json_results_are_failures():
    """A result that is not JSON-able is recorded as a failure, not a crash."""

    @tool
    def weird() -> Any:
        """Return a set."""
        return {1, 2}

    @tool
    def infinite() -> float:
        """Return infinity."""
        return float("inf")

    final = run_calls(calls(call("weird"), call("infinite")), tools=[weird, infinite])
    errors = [e.error for e in final.tool_executions]
    assert [e.type for e in errors] == ["InvalidToolResult", "InvalidToolResult"]
    assert "set" in errors[0].message
    assert "non-finite" in errors[1].message


def test_values_are_rendered_for_the_model():
    """Strings as they are, other values as JSON with sorted keys."""

    @tool
    def data() -> dict[str, Any]:
        """Return a map."""
        return {"b": [1, 2], "a": None}

    final = run_calls(calls(call("data"), call("echo", text="plain")), tools=[data, echo])
    assert [m.content for m in final.messages[2:4]] == ['{"a": null, "b": [1, 2]}', "plain"]
    assert final.tool_executions[0].value["b"][1] == 2


def test_async_tools_run_under_both_runners():
    """An ``async def`` tool works with run and arun."""

    @tool
    async def slow_add(a: int, b: int) -> int:
        """Add, slowly."""
        await asyncio.sleep(0)
        return a + b

    final = run_calls(call("slow_add", a=2, b=2), tools=[slow_add])
    assert final.tool_executions[0].value == 4
    loop = make_loop(call("slow_add", a=2, b=2), reply("done"), tools=[slow_add])
    assert asyncio.run(loop.arun(initial())).tool_executions[0].value == 4


def test_parallel_batch_runs_concurrently_and_records_in_call_order():
    """Parallel calls overlap in time, yet results are recorded in call order."""
    barrier = threading.Barrier(3, timeout=5)

    @tool
    def meet(name: str) -> str:
        """Wait until all three calls are running."""
        barrier.wait()
        return name

    script = calls(call("meet", name="a"), call("meet", name="b"), call("meet", name="c"))
    final = run_calls(script, tools=[meet])
    assert [e.value for e in final.tool_executions] == ["a", "b", "c"]
    assert [m.tool_call_id for m in final.messages[2:5]] == ["call_1", "call_2", "call_3"]
    barrier.reset()
    loop = make_loop(script, reply("done"), tools=[meet])
    assert [e.value for e in asyncio.run(loop.arun(initial())).tool_executions] == ["a", "b", "c"]


def test_sequential_tool_makes_its_batch_sequential():
    """One ``sequential=True`` tool serialises the whole batch."""
    active = 0
    peak = 0
    lock = threading.Lock()

    def work(name: str) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.01)
        with lock:
            active -= 1
        return name

    parallel_tool = tool(work, name="work")
    serial_tool = tool(work, name="serial", sequential=True)
    run_calls(
        calls(call("work", name="a"), call("work", name="b"), call("serial", name="c")),
        tools=[parallel_tool, serial_tool],
    )
    assert peak == 1
    peak = 0
    run_calls(
        calls(call("work", name="a"), call("work", name="b")),
        tools=[parallel_tool],
        tool_execution="sequential",
    )
    assert peak == 1


def test_parallel_history_is_deterministic():
    """With deterministic clock and ids a parallel batch gives the same history every time."""

    @tool
    def jitter(n: int) -> int:
        """Sleep a little, differently each call."""
        time.sleep(0.001 * (3 - n))
        return n

    script = calls(*(call("jitter", n=i) for i in range(3)))
    outputs = {run_calls(script, tools=[jitter]).to_json() for _ in range(3)}
    assert len(outputs) == 1


@pytest.mark.parametrize("runner", ["run", "arun"])
def test_timeouts_are_failed_executions(runner):
    """A tool past its timeout is recorded as ToolTimeout; the run goes on."""

    @tool(timeout=0.05)
    def sleepy() -> str:
        """Sleep too long."""
        time.sleep(0.5)
        return "late"

    @tool(timeout=0.05)
    async def asleep() -> str:
        """Sleep too long, asynchronously."""
        await asyncio.sleep(0.5)
        return "late"

    loop = make_loop(calls(call("sleepy"), call("asleep")), reply("done"), tools=[sleepy, asleep])
    final = loop.run(initial()) if runner == "run" else asyncio.run(loop.arun(initial()))
    assert [e.error.type for e in final.tool_executions] == ["ToolTimeout", "ToolTimeout"]
    assert "0.05 s" in final.tool_executions[0].error.message
    assert final.status is ExecutionStatus.COMPLETED


def test_tool_is_still_callable_directly():
    """A ``Tool`` calls its function when called."""
    assert isinstance(add, Tool)
    assert add(2, 3) == 5


def test_under_arun_a_sync_tool_runs_on_a_thread_unless_thread_false():
    """By default a synchronous tool leaves the event loop's thread (a slow call cannot
    stall other runs); with ``thread=False`` it runs on the loop itself, with the same
    history."""
    seen: dict[str, threading.Thread] = {}

    def where(name: str) -> Any:
        def record(x: int) -> int:
            seen[name] = threading.current_thread()
            return x + 1

        record.__name__ = name
        return record

    threaded, inline = tool(where("threaded")), tool(where("inline"), thread=False)
    assert (threaded.thread, inline.thread) == (True, False)

    async def main() -> Any:
        loop = make_loop(
            calls(call("threaded", x=1), call("inline", x=2)),
            reply("done"),
            tools=[threaded, inline],
        )
        return threading.current_thread(), await loop.arun(initial())

    loop_thread, final = asyncio.run(main())
    assert [e.value for e in final.tool_executions] == [2, 3]
    assert seen["inline"] is loop_thread
    assert seen["threaded"] is not loop_thread
    assert "on the event loop" in make_loop(reply("x"), tools=[inline]).describe_markdown()


def test_under_arun_a_sync_tool_raising_stop_iteration_fails_its_call():
    """``StopIteration`` from a synchronous tool on a worker thread is the call's error
    (a future refuses it, so ``asyncio.to_thread`` left the run waiting for good)."""

    @tool
    def exhausted() -> int:
        """Read the next item of an empty iterator."""
        return next(iter([]))

    loop = make_loop(call("exhausted"), reply("done"), tools=[exhausted])
    final = asyncio.run(asyncio.wait_for(loop.arun(initial()), 10))
    error = final.tool_executions[0].error
    assert error is not None and error.type == "StopIteration"
    assert final.final_response == "done"


def test_a_sync_tool_without_a_thread_cannot_be_timed_out():
    """``thread=False`` with a ``timeout`` is refused when the tool is built."""
    with pytest.raises(ConfigurationError, match="cannot be timed out"):
        tool(add.function, name="quick", thread=False, timeout=1.0)


class _Unreadable(Exception):
    """An exception whose text cannot be had: its ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no text")


def _ran(loop: Any, mode: str) -> AgentState:
    return loop.run(initial()) if mode == "run" else asyncio.run(loop.arun(initial()))


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_an_exception_whose_text_cannot_be_read_is_recorded_all_the_same(mode):
    """A tool raising an exception whose ``str()`` raises is a failed tool execution of its
    type (the step failed as the ``RuntimeError`` of ``str()``), and a hook raising one
    fails the run with it recorded (``run`` raised that ``RuntimeError``)."""

    def unreadable() -> str:
        raise _Unreadable

    @hook(HookTrigger.BEFORE_STEP)
    def guard(context: HookContext) -> HookContext:
        raise _Unreadable

    final = _ran(make_loop(call("unreadable"), reply("sorry"), tools=[tool(unreadable)]), mode)
    assert final.status is ExecutionStatus.COMPLETED
    (failed,) = final.tool_executions
    assert failed.error.type == "_Unreadable"
    assert failed.error.message == "(its message could not be read: str() raised)"
    final = _ran(make_loop(reply("never"), hooks=[guard]), mode)
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.type == "_Unreadable"
    assert AgentState.from_json(final.to_json()) == final


def test_a_tool_raising_stop_iteration_is_recorded_alike_by_run_and_arun():
    """``StopIteration`` cannot cross a future: under ``arun`` (a worker thread) it was a
    ``RuntimeError`` whose message held the function's address — another record than
    ``run``'s, and another at every run. Both record the ``StopIteration`` now."""

    def exhausted() -> str:
        return next(iter(()))

    def loop() -> AgentLoop:
        return make_loop(call("exhausted"), reply("done"), tools=[tool(exhausted)])

    sync, async_ = _ran(loop(), "run"), _ran(loop(), "arun")
    assert sync.tool_executions[0].error.type == "StopIteration"
    assert async_.tool_executions[0].error == sync.tool_executions[0].error
    assert _ran(loop(), "arun").to_json() == async_.to_json()
