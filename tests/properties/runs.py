"""Genuine runs for properties: random scripts over every feature the library has.

A ``Scenario`` is drawn by Hypothesis and ``perform`` runs it for real, with an audit log:
tool failures, calls blocked by a hook, a tool that stops the run, one that ends it, an
approval gate (suspending the run; each suspension is answered, with steering added before
the approval or not), follow-ups queued before the run, a goal (with or without a token
budget), a sub-agent, context compaction (a window, or summaries), structured output with
retries, and failing inference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
from hypothesis import strategies as st

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    ExecutionStatus,
    FunctionDriver,
    Goal,
    HookContext,
    HookTrigger,
    InferenceResponse,
    StepCompleted,
    StopAgent,
    Summarization,
    TokenWindowCompiler,
    ToolResult,
    hook,
    subagent_tool,
    tool,
)
from agents.core.compaction import DEFAULT_SUMMARY_PROMPT
from agents.shell.subagents import DEPTH_KEY
from agents.testing import (
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    call,
    calls,
    fail,
    reply,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode() -> str:
    """Raise."""
    raise RuntimeError("tool failed")


@tool
def halt(why: str = "") -> str:
    """Stop the agent."""
    raise StopAgent(why)


@tool
def finish(answer: str = "") -> ToolResult:
    """Finish the run."""
    return ToolResult(answer, terminate=True)


@tool
def guarded(text: str = "") -> str:
    """A tool a hook never lets run."""
    return text


@tool(requires_approval=True)
def transfer(amount: int) -> str:
    """Move money (a human approves each call)."""
    return f"moved {amount}"


def _child_loop() -> AgentLoop:
    return AgentLoop(
        ScriptedDriver([reply("the child's answer")]),
        clock=TickingClock(),
        ids=SequentialIds("child-"),
    )


helper = subagent_tool("helper", "Asks a helper agent.", _child_loop)


@hook(HookTrigger.BEFORE_TOOL_USE, name="block_guarded")
def block_guarded(context: HookContext) -> HookContext:
    if context.tool_call is not None and context.tool_call.name == "guarded":
        return context.with_tool_blocked("guarded is off limits")
    return context


TOOLS = (add, explode, halt, finish, guarded, transfer, helper)
SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}

small = st.integers(min_value=-50, max_value=50)
words = st.sampled_from(["ok", "done", "thinking", "", "{}", '{"n": 1}', '{"n": "x"}'])

single_calls = st.one_of(
    st.builds(lambda a, b: call("add", a=a, b=b), small, small),
    st.just(call("add", a="not a number", b=1)),
    st.just(call("explode")),
    st.just(call("missing_tool")),
    st.builds(lambda w: call("halt", why=w), words),
    st.builds(lambda w: call("finish", answer=w), words),
    st.builds(lambda w: call("guarded", text=w), words),
    st.builds(lambda a: call("transfer", amount=a), small),
    st.just(call("helper", task="help me")),
    st.just(call("complete_goal", summary="done")),
)

steps = st.one_of(
    st.builds(reply, words),
    st.builds(lambda n: reply(f'{{"n": {n}}}'), small),
    st.builds(lambda cs: calls(*cs), st.lists(single_calls, min_size=1, max_size=3)),
    st.just(fail(RuntimeError("the model is down"))),
)


@attrs.frozen
class Scenario:
    """What to run: the model's script and everything around it."""

    script: tuple[Any, ...]
    follow_ups: tuple[str, ...]
    goal: str | None  # None, "goal", or "budget" (a goal with a small token budget)
    compaction: str | None  # None, "window" or "summary"
    structured: bool
    decisions: tuple[tuple[bool, str | None], ...]  # per suspension: approve, steering
    max_steps: int


scenarios = st.builds(
    Scenario,
    script=st.lists(steps, min_size=1, max_size=8).map(tuple),
    follow_ups=st.lists(st.sampled_from(["and then?", "once more"]), max_size=2).map(tuple),
    goal=st.sampled_from([None, None, "goal", "budget"]),
    compaction=st.sampled_from([None, None, "window", "summary"]),
    structured=st.booleans(),
    decisions=st.lists(
        st.tuples(st.booleans(), st.sampled_from([None, "steer left", "wait"])), max_size=3
    ).map(tuple),
    max_steps=st.integers(min_value=1, max_value=10),
)


@attrs.frozen
class Performed:
    """A run as it happened: its final state, its audit log, and the live state after each
    of its top-level steps (in order, across suspensions)."""

    final: AgentState
    log: Path
    after_steps: tuple[AgentState, ...]


def _driver(script: tuple[Any, ...]) -> FunctionDriver:
    """The scripted model; summaries (asked for by compaction) get a fixed answer."""
    scripted = ScriptedDriver(list(script))

    def answer(request: Any) -> Any:
        if request.messages and request.messages[0].content == DEFAULT_SUMMARY_PROMPT:
            return InferenceResponse(content="a summary", tool_calls=(), finish_reason="stop")
        return scripted.infer(request)

    return FunctionDriver(answer)


def loop_of(scenario: Scenario) -> AgentLoop:
    """The agent of ``scenario``: its model, tools, hook, limit and compaction, with a
    fresh clock and ids."""
    options: dict[str, Any] = {}
    if scenario.compaction == "window":
        options["message_compiler"] = TokenWindowCompiler(40)
    elif scenario.compaction == "summary":
        options["compaction"] = Summarization(30, 20)
    return AgentLoop(
        _driver(scenario.script),
        tools=TOOLS,
        hooks=[block_guarded],
        clock=TickingClock(),
        ids=SequentialIds(),
        max_steps=scenario.max_steps,
        **options,
    )


def start_of(scenario: Scenario) -> AgentState:
    """The state ``scenario``'s run starts from, before its follow-ups and goal."""
    return AgentState.initial(
        "You are tested.",
        messages=["go"],
        response_format=SCHEMA if scenario.structured else None,
    )


def perform(scenario: Scenario, log: Path) -> Performed:
    """Run ``scenario`` for real with an audit log at ``log``."""
    after_steps: list[AgentState] = []

    def keep(event: Any) -> None:
        if isinstance(event, StepCompleted) and DEPTH_KEY not in event.state.metadata:
            after_steps.append(event.state)

    state = start_of(scenario)
    for text in scenario.follow_ups:
        state = state.with_follow_up(text)
    if scenario.goal is not None:
        budget = 60 if scenario.goal == "budget" else None
        state = state.with_goal(Goal("reach the end", token_budget=budget))
    with AuditLog.open(log) as audit:
        loop = loop_of(scenario).with_listeners(audit, keep)
        final = loop.run(state)
        for approve, steering in scenario.decisions:
            if final.status is not ExecutionStatus.SUSPENDED:
                break
            for pending in final.pending_approvals:
                final = final.with_approval(pending.id, approve, "" if approve else "no")
            if steering is not None:
                final = final.with_steering_message(steering)
            final = loop.run(final)
    return Performed(final, log, tuple(after_steps))
