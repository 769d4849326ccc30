"""Sub-agents: an agent as a tool, its run kept for audit, its usage rolled up."""

from __future__ import annotations

import json

import pytest
from helpers import TIMELINE_HEADER, add, agents_cli, rendered_dom

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    ExecutionCompleted,
    ExecutionStatus,
    InferenceRequest,
    InMemorySessionStore,
    Role,
    StepType,
    ToolCall,
    Usage,
    subagent_tool,
    tool,
)
from agents.definitions import AgentDefinition
from agents.errors import InvalidType
from agents.evals.scorers import trajectory
from agents.shell.subagents import DEPTH_KEY
from agents.testing import (
    FunctionDriver,
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    assert_invariants,
    call,
    capture_events,
    fail,
    reply,
)

PARENT_USAGE = Usage(input_tokens=100, output_tokens=20, cost=0.5)
CHILD_USAGE = Usage(input_tokens=30, output_tokens=7, cost=0.25)


@tool
def sub(a: int, b: int) -> int:
    """Subtract.

    Args:
        a: first
        b: second
    """
    return a - b


def child_loop(*steps) -> AgentLoop:
    return AgentLoop(
        ScriptedDriver(list(steps)),
        tools=[add, sub],
        ids=SequentialIds("child-"),
        clock=TickingClock(),
    )


def parent_loop(researcher, *steps, listeners=()) -> AgentLoop:
    return AgentLoop(
        ScriptedDriver(list(steps)),
        tools=[researcher],
        ids=SequentialIds(),
        clock=TickingClock(),
        listeners=listeners,
    )


def test_the_childs_answer_is_the_tool_result_and_its_run_is_kept():
    researcher = subagent_tool(
        "researcher",
        "Finds things out.",
        lambda: child_loop(call("add", a=40, b=2), reply("it is 42", usage=CHILD_USAGE)),
        system_prompt="You research.",
    )
    loop = parent_loop(
        researcher,
        call("researcher", task="what is 40 + 2?", id="r1"),
        reply("The answer is 42.", usage=PARENT_USAGE),
    )
    final = loop.run(AgentState.initial("You delegate.", messages=["go"]))
    assert final.status is ExecutionStatus.COMPLETED
    (execution,) = final.find_tool_executions(name="researcher")
    assert execution.value == "it is 42" and execution.error is None
    child = execution.child
    assert child is not None and child.status is ExecutionStatus.COMPLETED
    assert child.parent_agent_id == final.agent_id == "agent-1"
    assert child.agent_id == "child-agent-1"
    assert child.context.system_prompt == "You research."
    assert child.metadata[DEPTH_KEY] == 1
    assert [m.content for m in child.messages][:1] == ["what is 40 + 2?"]
    assert child.tool_executions[0].value == 42
    assert final.messages[-2].content == "it is 42"  # what the parent's model saw
    assert_invariants(final)
    assert_invariants(child)


def test_the_childs_usage_rolls_up_into_the_parents_step():
    researcher = subagent_tool(
        "researcher",
        "Finds things out.",
        lambda: child_loop(call("add", a=1, b=2), reply("3", usage=CHILD_USAGE)),
    )
    loop = parent_loop(
        researcher,
        call("researcher", task="1 + 2?"),
        reply("3", usage=PARENT_USAGE),
    )
    final = loop.run(AgentState.initial(messages=["go"]))
    child = final.tool_executions[0].child
    first, second = final.steps
    assert first.usage == first.response.usage + child.usage
    assert child.usage == CHILD_USAGE
    assert final.usage == first.usage + second.usage
    assert final.usage.cost == CHILD_USAGE.cost + PARENT_USAGE.cost
    row = final.timeline()[0]
    assert (row.input_tokens, row.output_tokens, row.cost) == (30, 7, 0.25)


def test_the_childs_events_reach_the_parents_listeners_with_the_childs_ids():
    events = capture_events()
    researcher = subagent_tool(
        "researcher", "Finds things out.", lambda: child_loop(reply("found"))
    )
    loop = parent_loop(researcher, call("researcher", task="find"), reply("ok"), listeners=[events])
    final = loop.run(AgentState.initial(messages=["go"]))
    completed = [e for e in events.events if isinstance(e, ExecutionCompleted)]
    assert [e.agent_id for e in completed] == ["child-agent-1", final.agent_id]
    child_events = [e for e in events.events if e.agent_id == "child-agent-1"]
    assert child_events and all(
        e.execution_id == final.tool_executions[0].child.execution.execution_id
        for e in child_events
    )


def nested_loop(max_depth: int) -> AgentLoop:
    """An agent whose tool is itself: each level delegates once, then answers."""

    def model(request: InferenceRequest) -> list[ToolCall] | str:
        results = [m for m in request.messages if m.role is Role.TOOL]
        if not results:
            return [ToolCall(id="deeper", name="helper", arguments={"task": "go deeper"})]
        return f"done after: {results[-1].content}"

    helper = subagent_tool("helper", "Delegates.", lambda: nested_loop(max_depth), max_depth)
    return AgentLoop(
        FunctionDriver(model), tools=[helper], ids=SequentialIds(), clock=TickingClock()
    )


def test_nesting_stops_at_the_depth_limit_with_a_failed_call_the_model_sees():
    final = nested_loop(max_depth=3).run(AgentState.initial(messages=["start"]))
    assert final.status is ExecutionStatus.COMPLETED
    depths = []
    state = final
    while state.tool_executions and state.tool_executions[0].child is not None:
        state = state.tool_executions[0].child
        depths.append(state.metadata[DEPTH_KEY])
    assert depths == [1, 2, 3]
    deepest = state.tool_executions[0]
    assert deepest.child is None and deepest.failed
    assert "would run at depth 4; the limit is 3" in deepest.error.message
    assert state.steps[0].step_type is StepType.ERROR
    assert state.final_response.startswith("done after: Error")  # the model saw the error
    assert final.final_response.startswith("done after: " * 4 + "Error: SubagentFailed")


def test_a_failed_child_is_a_failed_tool_execution_and_is_kept():
    researcher = subagent_tool(
        "researcher",
        "Finds things out.",
        lambda: child_loop(fail(RuntimeError("model down"))),
    )
    loop = parent_loop(researcher, call("researcher", task="find"), reply("sorry"))
    final = loop.run(AgentState.initial(messages=["go"]))
    execution = final.tool_executions[0]
    assert execution.failed and execution.error.type == "SubagentFailed"
    assert "sub-agent 'researcher' failed: RuntimeError: model down" in execution.error.message
    assert execution.child is not None and execution.child.status is ExecutionStatus.FAILED
    assert "model down" in final.messages[-2].content  # the parent's model sees the failure


def test_a_loop_factory_that_raises_is_a_failed_tool_execution():
    def broken():
        raise KeyError("no such agent")

    researcher = subagent_tool("researcher", "Finds things out.", broken)
    final = parent_loop(researcher, call("researcher", task="x"), reply("ok")).run(
        AgentState.initial(messages=["go"])
    )
    execution = final.tool_executions[0]
    assert execution.failed and execution.child is None
    assert "could not be built: KeyError" in execution.error.message


def test_allow_and_deny_narrow_the_childs_tools():
    only_add = subagent_tool(
        "adder",
        "Adds.",
        lambda: child_loop(call("sub", a=3, b=1), reply("no sub")),
        allow_tools=["add"],
    )
    final = parent_loop(only_add, call("adder", task="x"), reply("ok")).run(
        AgentState.initial(messages=["go"])
    )
    child = final.tool_executions[0].child
    assert child.tool_executions[0].error.type == "UnknownTool"
    assert "available tools: add" in child.tool_executions[0].error.message

    no_sub = subagent_tool(
        "adder", "Adds.", lambda: child_loop(call("sub", a=3, b=1), reply("no")), deny_tools=["sub"]
    )
    final = parent_loop(no_sub, call("adder", task="x"), reply("ok")).run(
        AgentState.initial(messages=["go"])
    )
    assert final.tool_executions[0].child.tool_executions[0].error.type == "UnknownTool"


def test_a_text_where_a_list_of_names_goes_is_refused():
    """``deny_tools="sub"`` denied the tools named by its letters, none: the child
    called ``sub`` (shown below on the list the text should have been). The same text for
    any list of names — a definition's tools, a loop's finish reasons, a server's hosts,
    a trajectory — is an ``InvalidType`` that shows the list to write."""
    from agents.serve.asgi import app  # the serve extra's

    def child():
        return child_loop(call("sub", a=3, b=1), reply("no"))

    with pytest.raises(InvalidType, match=r"deny_tools .* \(write \['sub'\]\)"):
        subagent_tool("adder", "Adds.", child, deny_tools="sub")
    with pytest.raises(InvalidType, match="allow_tools"):
        subagent_tool("adder", "Adds.", child, allow_tools="add")
    with pytest.raises(InvalidType, match="deny_tools"):
        AgentDefinition(name="a", deny_tools="shell")
    with pytest.raises(InvalidType, match="stop_on_finish_reasons"):
        AgentLoop(FunctionDriver(lambda request: "x"), stop_on_finish_reasons="length")
    with pytest.raises(InvalidType, match="trajectory"):
        trajectory("add")
    with pytest.raises(InvalidType, match="allowed_hosts"):
        app(lambda session: None, store=InMemorySessionStore(), allowed_hosts="localhost")


def test_a_history_with_sub_agents_survives_the_codec_and_the_audit_log(tmp_path):
    path, final = _audited_run_with_a_sub_agent(tmp_path)
    assert AgentState.from_json(final.to_json()) == final
    assert AuditLog.verify(path) > 0
    assert AuditLog.read(path) == final


def test_a_history_without_sub_agents_is_written_as_before():
    """``child`` is written only when set: histories without sub-agents keep their JSON."""
    final = child_loop(call("add", a=1, b=1), reply("2")).run(AgentState.initial(messages=["go"]))
    text = final.to_json()
    assert '"child"' not in text
    assert AgentState.from_json(text) == final


def test_limits_count_the_childs_cost_and_a_child_without_an_answer_fails_the_call():
    pricey = subagent_tool("pricey", "Costs.", lambda: child_loop(reply("done", usage=CHILD_USAGE)))
    loop = parent_loop(pricey, call("pricey", task="x"), reply("never")).with_limits(max_cost=0.2)
    final = loop.run(AgentState.initial(messages=["go"]))
    assert final.step_count == 1  # the child's 0.25 crossed the parent's budget
    assert final.stop_reason.value == "cost_limit"

    endless = subagent_tool(
        "endless",
        "Never answers.",
        lambda: child_loop(call("add", a=1, b=1), call("add", a=2, b=2)).with_limits(max_steps=1),
    )
    final = parent_loop(endless, call("endless", task="x"), reply("ok")).run(
        AgentState.initial(messages=["go"])
    )
    execution = final.tool_executions[0]
    assert execution.failed
    assert "stopped (steps_limit) without an answer" in execution.error.message
    assert execution.child.step_count == 1


def _audited_run_with_a_sub_agent(tmp_path):
    researcher = subagent_tool(
        "researcher",
        "Finds things out.",
        lambda: child_loop(call("add", a=20, b=22), reply("it is 42", usage=CHILD_USAGE)),
    )
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        loop = parent_loop(
            researcher, call("researcher", task="40+2?", id="r1"), reply("42"), listeners=[log]
        )
        final = loop.run(AgentState.initial(messages=["go"]))
    return path, final


def test_agents_inspect_shows_the_sub_agents_runs(tmp_path):
    path, _ = _audited_run_with_a_sub_agent(tmp_path)
    result = agents_cli("inspect", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "sub-agent researcher (step 1, call r1, agent child-agent-1):" in out
    nested = out.split("sub-agent researcher", 1)[1].splitlines()[1:]
    assert nested[0].split() == TIMELINE_HEADER
    assert nested[1].split()[:3] == ["1", "tool_execution", "add"]
    assert "  final response: it is 42" in out
    document = json.loads(agents_cli("inspect", "--json", str(path), cwd=tmp_path).stdout)
    (child,) = document["subagents"]
    assert (child["tool"], child["call_id"], child["agent_id"]) == (
        "researcher",
        "r1",
        "child-agent-1",
    )
    assert [row["step_type"] for row in child["timeline"]] == ["tool_execution", "final_response"]
    assert document["usage"]["input_tokens"] == CHILD_USAGE.input_tokens


def test_the_html_report_nests_the_sub_agents_steps(tmp_path):
    path, final = _audited_run_with_a_sub_agent(tmp_path)
    page = tmp_path / "report.html"
    result = agents_cli("report", str(path), "-o", str(page), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    execution_id = final.tool_executions[0].id
    dom = rendered_dom(page, tmp_path)
    assert 'class="subagent" data-agent-id="child-agent-1"' in dom
    assert f'id="{execution_id}-step-1"' in dom and f'id="{execution_id}-step-2"' in dom
    assert dom.count('class="step"') == 2 and dom.count('class="substep"') == 2
    assert "it is 42" in dom
