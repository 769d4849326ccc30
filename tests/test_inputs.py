"""A human's input asked by a tool call while it runs (docs/design/sessions.md, as approvals): the
step suspends with the calls that finished, the state survives storage, and once answered the
calls that asked are made again with the answers, without asking the model again."""

from __future__ import annotations

import pytest
from helpers import add, initial, make_loop

from agents import (
    AgentState,
    ExecutionStatus,
    InMemorySessionStore,
    InputRequired,
    SessionRuntime,
    StepType,
    ToolCallCompleted,
    ToolContext,
    tool,
)
from agents.records.compiled import replace_fields
from agents.testing import call, calls, capture_events, check_invariants, reply

made: list[str] = []

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool
def greet(context: ToolContext) -> str:
    """Greet someone whose name a human gives."""
    made.append("greet")
    answer = context.ask("Whom shall I greet?", NAME)
    if not answer.accepted:
        return f"nobody to greet ({answer.action})"
    return f"hello {answer.content['name']}"


@tool
def transfer(amount: int, context: ToolContext) -> str:
    """Two questions, one after the other."""
    made.append("transfer")
    to = context.ask("To whom?", NAME).content["name"]
    sure = context.ask(f"Send {amount} to {to}?")
    return f"sent {amount} to {to}" if sure.accepted else "not sent"


SCRIPT = [calls(call("add", a=1, b=2), call("greet")), reply("done")]


def asking():
    made.clear()
    loop = make_loop(*SCRIPT, tools=[add, greet])
    return loop, loop.run(initial())


def test_a_call_that_asks_suspends_the_run_keeping_the_calls_that_finished():
    _, state = asking()
    assert state.status is ExecutionStatus.SUSPENDED
    (request,) = state.pending_inputs
    assert (request.call_id, request.message, request.source) == (
        "call_2",
        "Whom shall I greet?",
        "greet",
    )
    assert request.schema["required"] == ["name"]
    assert state.step_count == 0
    kept = state.execution.current_step.tool_executions
    assert [(e.name, e.value) for e in kept] == [("add", 3)]
    assert check_invariants(state) == []
    assert AgentState.from_json(state.to_json()) == state  # survives storage


def test_the_answer_makes_the_call_again_and_only_that_call():
    loop, state = asking()
    answered = state.with_input("call_2", {"name": "Ada"})
    assert len(answered.pending_inputs) == 0
    final = loop.run(AgentState.from_json(answered.to_json()))
    assert final.status is ExecutionStatus.COMPLETED
    assert made == ["greet", "greet"]  # add ran once, greet again with the answer
    add_execution, greet_execution = final.tool_executions
    assert add_execution.value == 3 and add_execution.inputs is None
    assert greet_execution.value == "hello Ada"
    (given,) = greet_execution.inputs  # the question and its answer, kept for the audit
    assert (given.request.message, given.action, dict(given.content)) == (
        "Whom shall I greet?",
        "accept",
        {"name": "Ada"},
    )
    assert final.final_response == "done"
    assert [s.step_type for s in final.steps] == [StepType.TOOL_EXECUTION, StepType.FINAL_RESPONSE]
    assert final.execution.inputs is None and final.execution.pending_inputs is None
    assert final.messages[3].content == "hello Ada"
    assert check_invariants(final) == []
    assert AgentState.from_json(final.to_json()) == final


def test_a_declined_question_reaches_the_tool():
    loop, state = asking()
    final = loop.run(state.with_input("call_2", action="decline"))
    assert final.tool_executions[1].value == "nobody to greet (decline)"


def test_running_without_an_answer_stays_suspended_and_calls_nothing():
    loop, state = asking()
    made.clear()
    again = loop.run(state)
    assert again.status is ExecutionStatus.SUSPENDED
    assert [r.call_id for r in again.pending_inputs] == ["call_2"]
    assert made == []


def test_a_second_question_suspends_again_and_both_answers_are_kept():
    made.clear()
    loop = make_loop(call("transfer", amount=5), reply("ok"), tools=[transfer])
    first = loop.run(initial())
    assert first.pending_inputs[0].message == "To whom?"
    second = loop.run(first.with_input("call_1", {"name": "Bob"}))
    assert second.status is ExecutionStatus.SUSPENDED
    assert second.pending_inputs[0].message == "Send 5 to Bob?"
    final = loop.run(second.with_input("call_1"))
    assert final.tool_executions[0].value == "sent 5 to Bob"
    assert [a.request.message for a in final.tool_executions[0].inputs] == [
        "To whom?",
        "Send 5 to Bob?",
    ]
    assert made == ["transfer"] * 3


def test_bad_answers_are_refused_with_a_clear_error():
    _, state = asking()
    with pytest.raises(ValueError, match="no pending question for call 'call_9'"):
        state.with_input("call_9", {"name": "x"})
    with pytest.raises(ValueError, match="action must be one of"):
        state.with_input("call_2", {"name": "x"}, action="maybe")
    with pytest.raises(ValueError, match="does not fit the question's schema"):
        state.with_input("call_2", {"name": 3})
    with pytest.raises(ValueError, match="has no content"):
        state.with_input("call_2", {"name": "x"}, action="cancel")
    with pytest.raises(ValueError, match="JSON object"):
        state.with_input("call_2", ["x"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a JSON number"):
        state.with_input("call_2", {"name": "x", "n": float("nan")})


def test_events_announce_no_completion_for_a_call_that_waits():
    events = capture_events()
    loop, state = asking()
    loop.with_listeners(events).run(state)
    completed = [e.tool_execution.name for e in events.of_type(ToolCallCompleted)]
    assert completed == []  # suspended at once: nothing ran
    events = capture_events()
    made.clear()
    loop = make_loop(*SCRIPT, tools=[add, greet]).with_listeners(events)
    state = loop.run(initial())
    assert [e.tool_execution.name for e in events.of_type(ToolCallCompleted)] == ["add"]
    final = loop.run(state.with_input("call_2", {"name": "Ada"}))
    names = [e.tool_execution.name for e in events.of_type(ToolCallCompleted)]
    assert names == ["add", "greet"] and final.status is ExecutionStatus.COMPLETED


def test_a_tool_may_raise_input_required_itself():
    from agents import InputRequest

    @tool
    def confirm() -> str:
        """Asks without a context."""
        raise InputRequired(InputRequest(call_id="", message="sure?"))

    loop = make_loop(call("confirm"), reply("x"), tools=[confirm])
    state = loop.run(initial())
    assert state.pending_inputs[0].call_id == "call_1"
    assert state.pending_inputs[0].message == "sure?"


def test_sessions_keep_questions_and_answer_resumes():
    made.clear()
    model = make_loop(*SCRIPT, tools=[add, greet])
    runtime = SessionRuntime(InMemorySessionStore(), lambda session: model)
    runtime.create(session_id="s")
    waiting = runtime.send("s", "greet someone")
    assert waiting.state.status is ExecutionStatus.SUSPENDED
    assert [r.call_id for r in runtime.get("s").state.pending_inputs] == ["call_2"]
    final = runtime.answer("s", "call_2", {"name": "Ada"})
    assert final.state.status is ExecutionStatus.COMPLETED
    assert final.state.tool_executions[1].value == "hello Ada"


@tool(requires_approval=True)
def pay(context: ToolContext) -> str:
    """Needs approval, then asks how much."""
    made.append("pay")
    return f"paid {context.ask('How much?').content.get('amount', 0)}"


def test_an_approved_call_that_asks_runs_after_its_answer_and_not_before():
    made.clear()
    loop = make_loop(calls(call("pay"), call("add", a=2, b=2)), reply("ok"), tools=[pay, add])
    state = loop.run(initial())
    assert [c.name for c in state.pending_approvals] == ["pay"]
    state = loop.run(state.with_approval("call_1", approved=True))
    assert state.status is ExecutionStatus.SUSPENDED
    assert [r.message for r in state.pending_inputs] == ["How much?"]
    final = loop.run(state.with_input("call_1", {"amount": 7}))
    assert [e.value for e in final.tool_executions] == ["paid 7", 4]
    assert made == ["pay", "pay"]


def test_a_parallel_batch_keeps_every_finished_call_and_asks_all_questions():
    made.clear()
    loop = make_loop(
        calls(call("greet"), call("add", a=1, b=1), call("greet")),
        reply("ok"),
        tools=[greet, add],
        tool_execution="parallel",
    )
    state = loop.run(initial())
    assert [r.call_id for r in state.pending_inputs] == ["call_1", "call_3"]
    state = state.with_input("call_3", {"name": "Bo"})
    assert loop.run(state).status is ExecutionStatus.SUSPENDED  # one question is left
    final = loop.run(state.with_input("call_1", {"name": "Al"}))
    assert [e.value for e in final.tool_executions] == ["hello Al", 2, "hello Bo"]
    assert AgentState.from_json(final.to_json()) == final


def test_a_run_that_asked_replays_from_its_audit_log_and_its_state_file(tmp_path):
    """The audit log of a run suspended for a question and resumed with the answer
    replays (``agents replay --verify``), as does its final state document."""
    import subprocess
    import sys

    from agents import AuditLog

    path = tmp_path / "run.jsonl"
    made.clear()
    with AuditLog.open(path) as log:
        loop = make_loop(*SCRIPT, tools=[add, greet], listeners=[log])
        waiting = loop.run(initial())
        final = loop.run(waiting.with_input("call_2", {"name": "Ada"}))
    assert final.tool_executions[1].value == "hello Ada"
    (tmp_path / "final.json").write_text(final.to_json(), encoding="utf-8")
    for name in ("run.jsonl", "final.json"):
        replayed = subprocess.run(
            [sys.executable, "-m", "agents", "replay", name, "--verify"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert replayed.returncode == 0, name + replayed.stdout + replayed.stderr
    # The same agent, regressed on both records with its tools live or from the record:
    # the recorded answers are given again, and nothing changed.
    from agents.testing import regress

    for tools in ("live", "record"):
        runs = [path, tmp_path / "final.json"]
        report = regress(make_loop(tools=[add, greet]), runs, tools=tools)
        assert [r.change for r in report.runs] == [None, None], (tools, report.runs)


def test_a_secret_in_an_answer_is_never_written_nor_shown(tmp_path):
    """An answer under a secret key (a password a careless question asked for) stays out
    of the stored state, the audit log, the session store and every repr."""
    import sqlite3

    from agents import AuditLog, SQLiteSessionStore

    secret = "hunter2-planted-0042"

    @tool
    def login(context: ToolContext) -> str:
        """Asks for a password (as a form must not: the record keeps it redacted)."""
        answer = context.ask("Your password?")
        return "logged in" if answer.content.get("password") else "no password"

    loop = make_loop(call("login"), reply("ok"), tools=[login])
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        runtime = SessionRuntime(
            SQLiteSessionStore(tmp_path / "sessions.db"), lambda s: loop.with_listeners(log)
        )
        runtime.create(session_id="s")
        runtime.send("s", "log me in")
        final = runtime.answer("s", "call_1", {"password": secret}).state
    assert final.tool_executions[0].value == "logged in"  # the tool had it
    with sqlite3.connect(tmp_path / "sessions.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = repr([list(db.execute(f"SELECT * FROM {table}")) for table in tables])
    texts = {
        "state": final.to_json(),
        "repr": repr(final),
        "audit log": (tmp_path / "run.jsonl").read_text(encoding="utf-8"),
        "session rows": rows,
    }
    assert {where for where, text in texts.items() if secret in text} == set()
    assert "[redacted]" in texts["state"]


def test_a_sub_agents_question_is_the_parent_calls_and_its_answer_goes_down():
    """A child's tool asks: the parent's run suspends with the question (its source names
    the sub-agent); answered, the parent's call runs the child again, which gets the
    answer and finishes; both runs keep the exchange."""
    from agents import subagent_tool

    def child():
        return make_loop(call("greet"), reply("child done"), tools=[greet])

    helper = subagent_tool("helper", "Greets.", child)
    made.clear()
    waiting = make_loop(call("helper", task="greet"), reply("ok"), tools=[helper]).run(initial())
    assert waiting.status is ExecutionStatus.SUSPENDED
    (question,) = waiting.pending_inputs
    assert (question.call_id, question.source) == ("call_1", "helper: greet")
    answered = AgentState.from_json(waiting.with_input("call_1", {"name": "Ada"}).to_json())
    final = make_loop(reply("ok"), tools=[helper]).run(answered)
    (execution,) = final.tool_executions
    assert execution.value == "child done" and execution.inputs[0].content["name"] == "Ada"
    assert execution.child.tool_executions[0].value == "hello Ada"
    assert made == ["greet", "greet", "greet"]  # asked, made again (child from the start)


def test_the_invariants_catch_forged_questions_and_answers():
    """A question outside a suspended step, one for a call that has a result, and an
    answer kept on another call's execution are each named."""
    from agents import InputAnswer, InputRequest

    _, waiting = asking()
    execution = waiting.execution
    stray = replace_fields(waiting, execution=replace_fields(execution, current_step=None))
    assert any("outside a suspended step" in p for p in check_invariants(stray))
    done_call = InputRequest(call_id="call_1", message="again?")
    forged = replace_fields(
        waiting, execution=replace_fields(execution, pending_inputs=[done_call])
    )
    assert any("which has a result" in p for p in check_invariants(forged))
    final = make_loop(*SCRIPT, tools=[add, greet]).run(
        waiting.with_input("call_2", {"name": "Ada"})
    )
    first = final.execution.step_executions[0]
    wrong = InputAnswer(request=InputRequest(call_id="call_9", message="?"), action="cancel")
    add_execution = replace_fields(first.step.tool_executions[0], inputs=[wrong])
    step = replace_fields(
        first.step, tool_executions=first.step.tool_executions.set(0, add_execution)
    )
    moved = replace_fields(
        final,
        execution=replace_fields(
            final.execution,
            step_executions=[
                replace_fields(first, step=step),
                *final.execution.step_executions[1:],
            ],
        ),
    )
    assert any("keeps an answer to call 'call_9'" in p for p in check_invariants(moved))
    assert check_invariants(final) == []


def test_a_sub_agents_call_needing_approval_is_asked_through_the_parent():
    """A child's call that needs approval is a question of the parent call ("approve
    ...?"): accepted, the child's call runs; declined, it is blocked with the reason."""
    from agents import subagent_tool

    @tool(requires_approval=True)
    def wire(amount: int) -> str:
        """Needs approval."""
        made.append(f"wire {amount}")
        return f"wired {amount}"

    def child():
        return make_loop(call("wire", amount=5), reply("child done"), tools=[wire])

    helper = subagent_tool("helper", "Wires.", child)
    for action, expected in (("accept", "wired 5"), ("decline", "denied: decline")):
        made.clear()
        waiting = make_loop(call("helper", task="pay"), reply("ok"), tools=[helper]).run(initial())
        (question,) = waiting.pending_inputs
        assert question.message == 'approve wire({"amount": 5})?'
        assert question.source == "helper: approval"
        answered = waiting.with_input("call_1", action=action)
        final = make_loop(reply("ok"), tools=[helper]).run(answered)
        child_call = final.tool_executions[0].child.tool_executions[0]
        shown = child_call.value if child_call.ok else child_call.error.message
        assert expected in shown
        assert made == (["wire 5"] if action == "accept" else [])


def test_inspect_and_report_say_which_questions_a_suspended_run_waits_for(tmp_path):
    """A run file of a run waiting for an answer: ``agents inspect`` names the call and
    its question (cut to one line), the HTML report says so at the top, escaped."""
    from helpers import agents_cli

    @tool
    def probe(context: ToolContext) -> str:
        """Ask something long and hostile."""
        return context.ask("<b>Which</b> account?\n" + "x" * 200).content["name"]

    state = make_loop(call("probe"), reply("done"), tools=[probe]).run(initial())
    (tmp_path / "run.json").write_text(state.to_json())
    shown = agents_cli("inspect", "run.json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    (line,) = [text for text in shown.stdout.splitlines() if "waiting for" in text]
    assert "an answer to call " in line and "'<b>Which</b> account? xxx" in line
    assert "x" * 100 not in line and "…" in line
    report = agents_cli("report", "run.json", "-o", "out.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "out.html").read_text()
    assert "waiting for an answer to call" in page
    assert "&lt;b&gt;Which&lt;/b&gt;" in page and "<b>Which</b>" not in page
