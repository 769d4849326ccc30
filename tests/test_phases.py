"""Phase order (docs/design/loop.md): every hook call and effect, in sequence, for the basic shapes
of a run."""

from __future__ import annotations

from helpers import PhaseRecorder, add, echo, explode, initial, make_loop

from agents import ExecutionStatus, HookContext, HookTrigger, StepType, StopReason
from agents.testing import call, calls, fail, reply

START = ["BEFORE_EXECUTION", "BEFORE_STEP", "BEFORE_INFERENCE", "infer", "AFTER_INFERENCE"]
END = ["ON_STOP", "AFTER_EXECUTION"]


def run_recorded(*script, recorder=None, **options):
    recorder = recorder or PhaseRecorder()
    loop = make_loop(*script, hooks=[recorder.hook], interceptors=[recorder], **options)
    return loop.run(initial()), recorder.log


def test_plain_answer():
    """A plain answer is one step: inference, AFTER_STEP, then the end hooks."""
    final, log = run_recorded(reply("hi"))
    assert log == [*START, "AFTER_STEP", *END]
    assert final.status is ExecutionStatus.COMPLETED
    assert final.stop_reason is StopReason.COMPLETED


def test_one_tool_call_then_answer():
    """A tool step runs BEFORE_TOOL_USE, the call, AFTER_TOOL_USE, then the next step."""
    final, log = run_recorded(call("add", a=1, b=2), reply("3"))
    assert log == [
        *START,
        "BEFORE_TOOL_USE(add)",
        "tool(add)",
        "AFTER_TOOL_USE(add)",
        "AFTER_STEP",
        "BEFORE_STEP",
        "BEFORE_INFERENCE",
        "infer",
        "AFTER_INFERENCE",
        "AFTER_STEP",
        *END,
    ]
    assert [s.step_type for s in final.steps] == [StepType.TOOL_EXECUTION, StepType.FINAL_RESPONSE]


def test_two_tool_calls_in_one_step():
    """All BEFORE_TOOL_USE hooks come before the batch, AFTER_TOOL_USE after it, in call order."""
    final, log = run_recorded(
        calls(call("add", a=1, b=2), call("echo", text="x")),
        reply("done"),
        tools=[add, echo],
        tool_execution="sequential",
    )
    assert log == [
        *START,
        "BEFORE_TOOL_USE(add)",
        "BEFORE_TOOL_USE(echo)",
        "tool(add)",
        "tool(echo)",
        "AFTER_TOOL_USE(add)",
        "AFTER_TOOL_USE(echo)",
        "AFTER_STEP",
        "BEFORE_STEP",
        "BEFORE_INFERENCE",
        "infer",
        "AFTER_INFERENCE",
        "AFTER_STEP",
        *END,
    ]
    assert [e.value for e in final.tool_executions] == [3, "x"]


def test_tool_that_raises():
    """A raising tool is a failed execution the model sees; the run goes on."""
    final, log = run_recorded(call("explode", reason="kaput"), reply("sorry"), tools=[explode])
    assert log == [
        *START,
        "BEFORE_TOOL_USE(explode)",
        "tool(explode)",
        "AFTER_TOOL_USE(explode)",
        "AFTER_STEP",
        "BEFORE_STEP",
        "BEFORE_INFERENCE",
        "infer",
        "AFTER_INFERENCE",
        "AFTER_STEP",
        *END,
    ]
    execution = final.tool_executions[0]
    assert execution.error is not None
    assert (execution.error.type, execution.error.message) == ("RuntimeError", "kaput")
    assert final.steps[0].step_type is StepType.ERROR
    assert final.messages[2].content == "Error: RuntimeError: kaput"
    assert final.status is ExecutionStatus.COMPLETED


def test_blocked_call():
    """A blocked call never reaches the tool, but AFTER_TOOL_USE still sees it."""

    def block(context: HookContext) -> HookContext | None:
        if context.trigger is HookTrigger.BEFORE_TOOL_USE:
            return context.with_tool_blocked("not today")
        return None

    final, log = run_recorded(call("add", a=1, b=2), reply("ok"), recorder=PhaseRecorder(on=block))
    assert log == [
        *START,
        "BEFORE_TOOL_USE(add)",
        "AFTER_TOOL_USE(add)",
        "AFTER_STEP",
        "BEFORE_STEP",
        "BEFORE_INFERENCE",
        "infer",
        "AFTER_INFERENCE",
        "AFTER_STEP",
        *END,
    ]
    execution = final.tool_executions[0]
    assert execution.blocked and execution.error is not None
    assert execution.error.type == "ToolBlocked"
    assert final.messages[2].content == "Error: ToolBlocked: not today"


def test_driver_that_raises():
    """A driver failure archives an ERROR step with no response, runs ON_ERROR, ends FAILED."""
    final, log = run_recorded(fail(ConnectionError("model down")))
    assert log == [*START[:-1], "ON_ERROR", *END]
    assert final.status is ExecutionStatus.FAILED
    assert final.step_count == 1
    step = final.steps[0]
    assert step.response is None
    assert step.step_type is StepType.ERROR
    assert final.execution is not None and final.execution.error is not None
    assert final.execution.error.type == "ConnectionError"
    assert final.stop_reason is StopReason.ERROR
    assert [m.role.value for m in final.messages] == ["user"]


def test_hook_that_raises_at_before_step():
    """A failure before the step starts archives no step."""

    def explode_hook(context: HookContext) -> HookContext | None:
        if context.trigger is HookTrigger.BEFORE_STEP:
            raise ValueError("bad hook")
        return None

    final, log = run_recorded(reply("never"), recorder=PhaseRecorder(on=explode_hook))
    assert log == ["BEFORE_EXECUTION", "BEFORE_STEP", "ON_ERROR", *END]
    assert final.status is ExecutionStatus.FAILED
    assert final.step_count == 0
    assert final.execution is not None and final.execution.error is not None
    error = final.execution.error
    assert (error.type, error.message) == ("ValueError", "bad hook")
    assert error.details["hook"] == "recorder"
    assert error.details["trigger"] == "before_step"
