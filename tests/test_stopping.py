"""Stop signals and limits (docs/design/loop.md)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from helpers import add, echo, initial, make_loop

from agents import (
    CancellationToken,
    ConfigurationError,
    ExecutionContinuation,
    ExecutionStatus,
    HookContext,
    HookTrigger,
    StopAgent,
    StopReason,
    StopSignal,
    ToolResult,
    Usage,
    hook,
    tool,
)
from agents.testing import FixedClock, TickingClock, call, calls, reply


def loop_calls(n: int, **options):
    """A loop whose model calls ``add`` n times, then answers."""
    return make_loop(*[call("add", a=i, b=1) for i in range(n)], reply("done"), **options)


def test_priorities_follow_spec_order():
    """ERROR is the most important reason and UNKNOWN the least."""
    assert [r.priority for r in StopReason] == list(range(11))
    assert not StopReason.COMPLETED.forced
    assert not StopReason.FINISH_REASON.forced
    assert StopReason.STEPS_LIMIT.forced


def test_highest_signal_ties_go_to_the_first_added():
    """Of two signals with the same reason, the first one added wins."""
    first = StopSignal(reason=StopReason.STEPS_LIMIT, message="first")
    second = StopSignal(reason=StopReason.STEPS_LIMIT, message="second")
    low = StopSignal(reason=StopReason.COMPLETED)
    continuation = ExecutionContinuation(stop_signals=[low, first, second])
    assert continuation.highest_signal is first
    assert continuation.should_stop
    assert "steps_limit" in continuation.explain()


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_max_steps_runs_exactly_that_many_steps(limit):
    """``max_steps=k`` runs exactly k steps, and 0 runs none."""
    final = loop_calls(10, max_steps=limit).run(initial())
    assert final.step_count == limit
    assert final.status is ExecutionStatus.STOPPED
    assert final.stop_reason is StopReason.STEPS_LIMIT
    signal = final.stop_signal
    assert signal is not None and signal.context["max_steps"] == limit


def test_max_steps_not_reached_completes():
    """A run that answers within the limit completes normally."""
    final = loop_calls(2, max_steps=3).run(initial())
    assert final.step_count == 3
    assert final.status is ExecutionStatus.COMPLETED


def test_max_tokens_stops_once_usage_reaches_it():
    """The token limit is checked at BeforeStep against the execution's total usage."""
    usage = Usage(input_tokens=60, output_tokens=40)
    loop = make_loop(*[calls(call("add", a=i, b=1), usage=usage) for i in range(5)], max_tokens=250)
    final = loop.run(initial())
    assert final.step_count == 3
    assert final.usage.total_tokens == 300
    assert final.stop_reason is StopReason.TOKEN_LIMIT


def test_max_cost_stops_once_cost_reaches_it():
    """The cost limit counts usage cost."""
    usage = Usage(input_tokens=1, cost=0.5)
    loop = make_loop(*[calls(call("add", a=i, b=1), usage=usage) for i in range(5)], max_cost=1.0)
    final = loop.run(initial())
    assert final.step_count == 2
    assert final.stop_reason is StopReason.COST_LIMIT


def test_time_limit_reads_the_injected_clock():
    """Seconds since the execution started, from the loop's clock."""
    clock = TickingClock(step=timedelta(seconds=10))
    final = loop_calls(10, clock=clock, time_limit=45).run(initial())
    assert final.stop_reason is StopReason.TIME_LIMIT
    assert final.status is ExecutionStatus.STOPPED
    assert 0 < final.step_count < 10
    signal = final.stop_signal
    assert signal is not None and signal.context["elapsed"] >= 45


def test_limit_signal_added_once_per_execution():
    """A hook continuing past a limit does not make the limit add its signal twice."""

    @hook(HookTrigger.BEFORE_STEP)
    def keep_going(context: HookContext) -> HookContext:
        return context.with_state(context.state.with_execution_continued())

    final = loop_calls(3, max_steps=1, hooks=[keep_going]).run(initial())
    reasons = [s.reason for s in final.execution.continuation.stop_signals]
    assert reasons.count(StopReason.STEPS_LIMIT) == 1


def test_stop_on_finish_reasons():
    """A finish reason in ``stop_on_finish_reasons`` adds FINISH_REASON and ends COMPLETED."""
    loop = make_loop(
        calls(call("add", a=1, b=1), finish_reason="length"),
        reply("never"),
        stop_on_finish_reasons=["length"],
    )
    final = loop.run(initial())
    assert final.step_count == 1
    assert final.stop_reason is StopReason.FINISH_REASON
    assert final.status is ExecutionStatus.COMPLETED


def test_cancellation_before_the_run_stops_at_the_first_checkpoint():
    """A cancelled token stops the run before any step, as USER_REQUESTED."""
    token = CancellationToken()
    token.cancel("user left")
    final = loop_calls(3).run(initial(), cancellation=token)
    assert final.step_count == 0
    assert final.stop_reason is StopReason.USER_REQUESTED
    assert final.stop_signal is not None and final.stop_signal.message == "user left"
    assert final.status is ExecutionStatus.STOPPED


def test_cancellation_from_a_tool_stops_after_that_step():
    """Cancelling during a step stops at the step's ShouldStop checkpoint."""
    token = CancellationToken()

    @tool
    def cancel_now() -> str:
        """Cancel the run."""
        token.cancel()
        return "cancelled"

    loop = make_loop(call("cancel_now"), call("cancel_now"), reply("x"), tools=[cancel_now])
    final = loop.run(initial(), cancellation=token)
    assert final.step_count == 1
    assert final.stop_reason is StopReason.USER_REQUESTED


def test_cancellation_token_is_thread_safe():
    """Many threads cancelling at once keep exactly one message."""
    token = CancellationToken()
    threads = [threading.Thread(target=token.cancel, args=(f"t{i}",)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert token.cancelled
    assert token.message in {f"t{i}" for i in range(20)}


def test_stop_agent_keeps_the_step_and_its_other_results():
    """``StopAgent`` from a tool adds STOP_REQUESTED; the step and sibling results are kept."""

    @tool
    def halt(why: str) -> str:
        """Stop the agent."""
        raise StopAgent(why)

    loop = make_loop(
        calls(call("add", a=1, b=2), call("halt", why="enough")), reply("x"), tools=[add, halt]
    )
    final = loop.run(initial())
    assert final.step_count == 1
    assert final.status is ExecutionStatus.STOPPED
    assert final.stop_reason is StopReason.STOP_REQUESTED
    first, second = final.tool_executions
    assert first.value == 3
    assert second.error is None and second.ok
    assert second.stop_signal is not None and second.stop_signal.message == "enough"
    assert final.messages[-1].content == "Stopped: enough"


def test_tool_result_terminate_needs_every_result():
    """The run completes after a step only when every non-blocked result says terminate."""

    @tool
    def finish(answer: str) -> ToolResult:
        """Finish with an answer."""
        return ToolResult(answer, terminate=True)

    alone = make_loop(call("finish", answer="42"), reply("never"), tools=[finish])
    final = alone.run(initial())
    assert final.step_count == 1
    assert final.status is ExecutionStatus.COMPLETED
    assert final.stop_reason is StopReason.COMPLETED
    assert final.tool_executions[0].terminate

    mixed = make_loop(
        calls(call("finish", answer="42"), call("echo", text="x")),
        reply("done"),
        tools=[finish, echo],
    )
    assert mixed.run(initial()).step_count == 2


def test_stop_on_tool_error_adds_an_error_signal():
    """With ``stop_on_tool_error`` a failed tool ends the run FAILED after its step."""
    final = make_loop(call("add", a="x", b=1), reply("never"), stop_on_tool_error=True).run(
        initial()
    )
    assert final.step_count == 1
    assert final.status is ExecutionStatus.FAILED
    assert final.stop_reason is StopReason.ERROR


def test_continuation_request_lasts_one_step():
    """A hook may continue past a final answer once; the request is cleared after the step."""
    seen: list[bool] = []

    @hook(HookTrigger.AFTER_STEP)
    def once(context: HookContext) -> HookContext:
        seen.append(True)
        if len(seen) == 1:
            return context.with_state(context.state.with_execution_continued())
        return context

    final = make_loop(reply("first"), reply("second"), hooks=[once]).run(initial())
    assert final.step_count == 2
    assert final.step_executions[0].continuation.continuation_requested
    assert not final.execution.continuation.continuation_requested
    assert final.final_response == "second"


def test_signal_added_before_the_run_stops_it():
    """A state carrying a signal stops at the first checkpoint with zero steps."""
    state = initial().with_stop_signal(StopSignal(reason=StopReason.STOP_REQUESTED, message="no"))
    assert state.status is ExecutionStatus.PENDING
    final = loop_calls(2).run(state)
    assert final.step_count == 0
    assert final.status is ExecutionStatus.STOPPED
    assert final.execution_count == 1


@pytest.mark.parametrize(
    "option",
    [
        {"max_steps": -1},
        {"max_tokens": -5},
        {"max_cost": -0.1},
        {"time_limit": -1},
        {"max_steps": 1.5},
        {"max_steps": True},
        {"max_cost": float("nan")},  # was kept: nothing is ever past NaN, no limit at all
        {"time_limit": float("nan")},
    ],
)
def test_invalid_limits_are_configuration_errors(option):
    """A negative, NaN or mistyped limit is rejected before anything runs."""
    name = next(iter(option))
    with pytest.raises(ConfigurationError, match=name):
        make_loop(reply("x"), **option)


def test_fixed_clock_never_trips_the_time_limit():
    """With a fixed clock no time passes."""
    final = loop_calls(3, clock=FixedClock(), time_limit=0.5).run(initial())
    assert final.status is ExecutionStatus.COMPLETED


def test_a_cancellation_whose_message_is_no_text_is_refused_where_it_is_given():
    """``token.cancel(5)`` was taken, and the run it stopped then raised ``InvalidType``
    out of ``run`` (its stop signal could not be recorded): a crash where a run must
    return its state. The message is refused by ``cancel``; the token stays as it was."""
    from agents import InvalidType

    token = CancellationToken()
    for message in (5, None, b"stop"):
        with pytest.raises(InvalidType, match=r"CancellationToken\.cancel: message is text"):
            token.cancel(message)
    assert not token.cancelled
    token.cancel("enough")
    final = make_loop(reply("x")).run(initial(), cancellation=token)
    assert final.status is ExecutionStatus.STOPPED
    assert final.stop_signal is not None and final.stop_signal.message == "enough"
