"""Steering and follow-ups (docs/design/sessions.md): queued messages delivered at the right
moment."""

from __future__ import annotations

from helpers import add, initial, make_loop

from agents import AgentState, ExecutionStatus, Role
from agents.testing import call, reply


def test_steering_joins_the_conversation_before_the_next_inference():
    """A steering message given mid-run is appended right before the next model call."""
    loop = make_loop(call("add", a=1, b=2), reply("ok, in euros"))
    after_first = next(iter(loop.iterate(initial())))
    steered = after_first.with_steering_message("Answer in euros, please.")
    assert next(iter(steered.context.steering)).content == "Answer in euros, please."
    final = make_loop(reply("ok, in euros")).run(steered)
    second_input = final.steps[1].input_messages
    assert [m.role for m in second_input][-2:] == [Role.TOOL, Role.USER]
    assert second_input[-1].content == "Answer in euros, please."
    assert len(final.context.steering) == 0


def test_follow_ups_start_a_new_step_instead_of_completing():
    """Queued follow-ups are delivered together when the run would otherwise complete."""
    state = initial().with_follow_up("Also: what is 3 + 4?").with_follow_up("And thanks!")
    final = make_loop(reply("first answer"), reply("7, you're welcome")).run(state)
    assert final.status is ExecutionStatus.COMPLETED
    assert final.step_count == 2
    contents = [m.content for m in final.messages]
    assert contents == [
        "hello",
        "first answer",
        "Also: what is 3 + 4?",
        "And thanks!",
        "7, you're welcome",
    ]
    assert len(final.context.follow_ups) == 0


def test_queues_survive_the_codec():
    """Both queues are part of the state's JSON."""
    state = initial().with_steering_message("s").with_follow_up("f")
    back = AgentState.from_json(state.to_json())
    assert back == state
    assert [m.content for m in back.context.steering] == ["s"]


def test_sending_to_a_suspended_session_steers_it():
    """``send`` to a session that is not finished queues the message as steering."""
    from agents import InMemorySessionStore, SessionRuntime, tool

    @tool(requires_approval=True)
    def risky() -> str:
        """Needs approval."""
        return "done"

    model = make_loop(call("risky"), reply("finished"), tools=[risky, add])
    runtime = SessionRuntime(InMemorySessionStore(), lambda session: model)
    runtime.create(session_id="s")
    waiting = runtime.send("s", "do it")
    assert waiting.state.status is ExecutionStatus.SUSPENDED
    steered = runtime.send("s", "actually, be careful")
    assert steered.state.status is ExecutionStatus.SUSPENDED  # still waiting for approval
    assert [m.content for m in steered.state.context.steering] == ["actually, be careful"]
