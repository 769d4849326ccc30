"""The recorded agent of the regression tests (``test_regression``), and the changes made
to its code: hooks and tools."""

from __future__ import annotations

from typing import Any

from helpers import add, echo, make_loop

from agents import AgentLoop, HookContext, HookTrigger, hook
from agents.testing import call, calls, reply

SCRIPT = (
    call("add", a=1, b=2),
    calls(call("echo", text="x"), call("add", a=3, b=4)),
    reply("done"),
)


def agent(**options: Any) -> AgentLoop:
    """The recorded agent's code, as it is now (its model is never asked)."""
    return make_loop(reply("never asked"), **{"tools": [add, echo], **options})


@hook(HookTrigger.BEFORE_TOOL_USE, name="no_echo")
def no_echo(context: HookContext) -> HookContext:
    """A guard that now blocks ``echo``."""
    if context.tool_call is not None and context.tool_call.name == "echo":
        return context.with_tool_blocked("echo is not allowed")
    return context


@hook(HookTrigger.BEFORE_TOOL_USE, name="double")
def double(context: HookContext) -> HookContext:
    """A hook that now changes the second ``add``'s arguments."""
    call_ = context.tool_call
    if call_ is not None and call_.name == "add" and call_.arguments["a"] == 3:
        return context.with_tool_call(call_.with_arguments({"a": 6, "b": 4}))
    return context


@hook(HookTrigger.AFTER_INFERENCE, name="polite")
def polite(context: HookContext) -> HookContext:
    """A hook that now rewrites the model's last answer."""
    response = context.response
    if response is not None and not response.tool_calls:
        return context.with_response(response.with_content("Done, thank you."))
    return context


@hook(HookTrigger.BEFORE_INFERENCE, name="cooler")
def cooler(context: HookContext) -> HookContext:
    """A hook that now changes the request's options."""
    assert context.request is not None
    return context.with_request(context.request.with_options(temperature=0.1))


def add_described(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b
