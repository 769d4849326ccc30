"""Context compaction: overflow moved to the buffer, the buffer summarised by the
model as a recorded effect, replays answering the summary from the record."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import agents_cli, rendered_dom
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    CompactionPlan,
    ConfigurationError,
    ContextCompacted,
    ExecutionStatus,
    InferenceRequest,
    InferenceResponse,
    Message,
    RecordedCompactions,
    ReplayDriver,
    Role,
    Summarization,
    ToolCall,
    Usage,
    estimate_tokens,
    tool,
)
from agents.core.compaction import SUMMARY_HEADING, summary_request, transcript
from agents.testing import (
    FunctionDriver,
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    assert_invariants,
    call,
    capture_events,
    reply,
)

LOOKUP_K = ToolCall(id="c1", name="lookup", arguments={"key": "k"})
SUMMARY_USAGE = Usage(input_tokens=40, output_tokens=8, cost=0.01)


def one_token(message: Message) -> int:
    return 1


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value of {key}"


def is_summary_request(request: InferenceRequest) -> bool:
    return request.messages[0].content.startswith("You compress")


def scripted_summariser(script: list[str]):
    """A driver answering summary requests from ``script`` and the agent's requests with
    five lookups, then an answer; it records what each request held."""
    seen: list[InferenceRequest] = []
    summaries = iter(script)
    calls = iter([call("lookup", key=f"k{i}", id=f"c{i}") for i in range(5)] + [reply("done")])
    scripted = ScriptedDriver(list(calls))

    def answer(request: InferenceRequest):
        seen.append(request)
        if is_summary_request(request):
            return InferenceResponse(content=next(summaries), usage=SUMMARY_USAGE)
        return scripted.infer(request)

    return FunctionDriver(answer), seen


def make(driver, compaction=None, **options) -> AgentLoop:
    return AgentLoop(
        driver,
        tools=[lookup],
        ids=SequentialIds(),
        clock=TickingClock(),
        compaction=compaction,
        max_steps=20,
        **options,
    )


POLICY = Summarization(4, 2, count=one_token)  # four messages in the conversation, two buffered


def start() -> AgentState:
    return AgentState.initial("You look things up.", messages=["find k0 to k4"])


def compacted_run():
    driver, seen = scripted_summariser(["first summary", "second summary", "third summary"])
    final = make(driver, POLICY).run(start())
    return final, seen


# -- the policy --------------------------------------------------------------------------------


def conversation(*roles: Role) -> AgentState:
    state = AgentState.initial("system")
    for number, role in enumerate(roles):
        if role is Role.USER:
            state = state.with_user_message(f"u{number}")
        elif role is Role.ASSISTANT:
            state = state.with_message(Message.assistant(f"a{number}"))
        else:
            state = state.with_message(Message.tool(f"c{number}", "lookup", f"t{number}"))
    return state


def test_a_conversation_within_the_budget_is_left_alone():
    state = conversation(Role.USER, Role.ASSISTANT)
    assert Summarization(2, 10, count=one_token).plan(state.context, 1) is None


def test_the_oldest_messages_move_and_a_tool_result_is_never_cut_from_its_call():
    user, assistant, result = Role.USER, Role.ASSISTANT, Role.TOOL
    state = conversation(user, assistant, result, result, assistant, user)
    assert Summarization(5, 100, count=one_token).plan(state.context, 1) == CompactionPlan(1)
    # Keeping four would start the conversation with two tool results: two more move.
    assert Summarization(4, 100, count=one_token).plan(state.context, 1) == CompactionPlan(4)
    assert Summarization(3, 100, count=one_token).plan(state.context, 1) == CompactionPlan(4)
    # The newest message stays even when it alone is over the budget.
    assert Summarization(1, 1000, count=lambda m: 50).plan(state.context, 1) == CompactionPlan(5)
    # Only tool results after the first message: nothing can move without orphaning one.
    assert (
        Summarization(1, 100, count=one_token).plan(
            conversation(assistant, result, result).context, 1
        )
        is None
    )


def test_the_buffer_is_summarised_with_the_previous_summary_once_it_overflows():
    state = conversation(Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT, Role.USER)
    store = state.context.store
    state = state.with_context(
        state.context.with_store(
            store.with_section(
                "summary", [Message.system(f"{SUMMARY_HEADING}\nearlier")]
            ).with_section("buffer", [Message.user("old")])
        )
    )
    plan = Summarization(3, 2, count=one_token, model="small").plan(state.context, 1)
    assert plan.move == 2
    assert plan.request.model == "small" and not plan.request.tools
    text = plan.request.messages[1].content
    assert (
        text
        == "Summary so far:\nearlier\n\nConversation since:\nuser: old\nuser: u0\nassistant: a1"
    )
    assert Summarization(3, 3, count=one_token).plan(state.context, 1) == CompactionPlan(2)


def test_a_summariser_of_ones_own_makes_the_request():
    got = []

    def summarizer(summary, buffer):
        got.append((summary, buffer))
        return InferenceRequest(messages=[Message.user("squash")], tools=())

    state = conversation(Role.USER, Role.ASSISTANT, Role.USER)
    plan = Summarization(1, 0, summarizer, count=one_token).plan(state.context, 1)
    assert plan.request.messages[0].content == "squash"
    assert got == [((), tuple(state.messages.prefix(2)))]
    with pytest.raises(ConfigurationError, match="returned str"):
        Summarization(1, 0, lambda s, b: "no", count=one_token).plan(state.context, 1)


def test_the_transcript_names_calls_and_tool_results():
    messages = [
        Message.user("hi"),
        Message.assistant(
            "", tool_calls=[ToolCall(id="c1", name="lookup", arguments={"key": "k"})]
        ),
        Message.tool("c1", "lookup", "v"),
    ]
    assert transcript((), messages) == (
        'user: hi\nassistant called lookup({"key": "k"})\ntool lookup: v'
    )
    request = summary_request((), messages, prompt="P")
    assert [m.role for m in request.messages] == [Role.SYSTEM, Role.USER]


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ((0, 1), "max_message_tokens"),
        ((1, -1), "max_buffer_tokens"),
        ((1, 1, "not callable"), "summarizer"),
    ],
)
def test_bad_settings_are_configuration_errors(arguments, match):
    with pytest.raises(ConfigurationError, match=match):
        Summarization(*arguments)
    with pytest.raises(ConfigurationError, match="plan"):
        AgentLoop(ScriptedDriver([]), compaction=object())
    with pytest.raises(ConfigurationError, match="model"):
        Summarization(1, 1, model=3)
    with pytest.raises(ConfigurationError, match="prompt"):
        Summarization(1, 1, prompt=" ")


# -- a run -------------------------------------------------------------------------------------


def test_a_run_moves_the_overflow_and_the_scripted_summariser_writes_the_summary():
    final, seen = compacted_run()
    assert final.status is ExecutionStatus.COMPLETED and final.final_response == "done"
    assert_invariants(final)
    summaries = [r for r in seen if is_summary_request(r)]
    assert len(summaries) >= 2
    compactions = [(s.number, s.step.compaction) for s in final.step_executions]
    summarised = [c for _, c in compactions if c is not None and c.summarizing]
    assert [c.response.content for c in summarised] == [
        "first summary",
        "second summary",
        "third summary",
    ][: len(summarised)]
    # The second summary was asked with the first one in it.
    assert "Summary so far:\nfirst summary" in summaries[1].messages[1].content
    # Every request sent at most four conversation messages, the newest of them.
    for step in final.steps:
        body = step.input_messages.body()
        assert len(body) <= 4
    store = final.context.store
    assert [m.content for m in store.summary] == [
        f"{SUMMARY_HEADING}\n{summarised[-1].response.content}"
    ]
    assert store.summary[0].metadata["agents"] == "summary"
    assert final.messages[-1].content == "done"
    # Nothing is lost: the summarised messages are in the history.
    kept = [m for c in summarised for m in c.summarized]
    assert kept[0].content == "find k0 to k4"


def test_the_summarys_usage_counts_in_its_step_and_in_the_limits():
    final, _ = compacted_run()
    summarised = [s for s in final.step_executions if s.step.compaction is not None]
    step = next(s for s in summarised if s.step.compaction.summarizing)
    assert step.usage == step.step.response.usage + SUMMARY_USAGE
    row = final.timeline()[step.number - 1]
    assert row.input_tokens == step.usage.input_tokens
    assert final.usage.cost == pytest.approx(
        0.01 * len([s for s in summarised if s.step.compaction.summarizing])
    )
    driver, _ = scripted_summariser(["s1", "s2", "s3"])
    capped = make(driver, POLICY, max_cost=0.005).run(start())
    assert capped.stop_reason.value == "cost_limit"


def test_the_compaction_is_an_event():
    driver, _ = scripted_summariser(["s1", "s2", "s3"])
    recorder = capture_events()
    make(driver, POLICY, listeners=[recorder]).run(start())
    compacted = [e for e in recorder.events if isinstance(e, ContextCompacted)]
    assert compacted and all(e.step is not None for e in compacted)
    assert any(e.compaction.summarizing for e in compacted)


def test_the_async_runner_compacts_the_same_way():
    final, _ = compacted_run()
    driver, _ = scripted_summariser(["first summary", "second summary", "third summary"])
    assert asyncio.run(make(driver, POLICY).arun(start())).to_json() == final.to_json()


def test_a_step_suspended_for_approval_keeps_its_compaction():
    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: how much
        """
        return f"paid {amount}"

    lookups = [[ToolCall(id=f"c{i}", name="lookup", arguments={"key": "k"})] for i in range(3)]
    answers = iter([*lookups, [ToolCall(id="p", name="pay", arguments={"amount": 5})], "done"])

    def model(request):
        if is_summary_request(request):
            return InferenceResponse(content="a summary")
        return next(answers)

    loop = make(FunctionDriver(model), POLICY).with_tools(pay)
    suspended = loop.run(start())
    assert suspended.status is ExecutionStatus.SUSPENDED
    waiting = suspended.execution.current_step.compaction
    assert waiting is not None and waiting.summarizing
    suspended = AgentState.from_json(suspended.to_json())
    final = loop.run(suspended.with_approval("p", True))
    assert final.final_response == "done"
    assert final.steps[3].compaction == waiting
    assert final.tool_executions[-1].value == "paid 5"


# -- replay, rewinding, the codec --------------------------------------------------------------


def test_a_replay_answers_the_summaries_from_the_record_byte_for_byte():
    final, _ = compacted_run()
    replayed = make(ReplayDriver.from_state(final), POLICY).run(start())
    assert replayed.to_json() == final.to_json()
    # Where the policy is not at hand, the recorded compactions stand in for it.
    recorded = make(ReplayDriver.from_state(final), RecordedCompactions.from_state(final))
    assert recorded.run(start()).to_json() == final.to_json()


def test_a_replay_without_the_compaction_diverges_at_the_summary():
    final, _ = compacted_run()
    replayed = make(ReplayDriver.from_state(final)).run(start())
    assert replayed.status is ExecutionStatus.FAILED
    error = replayed.execution.error
    assert error.type == "ReplayDivergence"
    assert error.details["field"].startswith("compaction.messages")
    # Moving messages to the buffer does not change what the model sees; a summary does.
    first = next(
        s.number
        for s in final.step_executions
        if s.step.compaction is not None and s.step.compaction.summarizing
    )
    assert error.details["step"] == first


def test_at_step_rewinds_the_message_sections():
    final, _ = compacted_run()
    for k in range(final.step_count + 1):
        driver = ReplayDriver.from_state(final)
        partial = make(driver, POLICY).with_limits(max_steps=k).run(start()) if k else start()
        assert final.at_step(k).context.store == partial.context.store, k
    forked = final.fork(at_step=2)
    assert forked.parent_agent_id == final.agent_id and forked.step_count == 2


def test_histories_with_compaction_survive_the_codec_and_the_audit_log(tmp_path):
    driver, _ = scripted_summariser(["s1", "s2", "s3"])
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        final = make(driver, POLICY, listeners=[log]).run(start())
    text = final.to_json()
    assert '"compaction"' in text
    assert AgentState.from_json(text) == final
    assert AgentState.from_json(text).to_json() == text
    assert AuditLog.verify(path) > 0
    assert AuditLog.read(path) == final


def test_a_crashed_runs_log_gives_back_the_sections_as_far_as_it_got(tmp_path):
    """A log without its terminal record (a crash) is read step by step: the recorded
    compactions are done again, so the sections are those of the last complete step."""
    driver, _ = scripted_summariser(["s1", "s2", "s3"])
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        final = make(driver, POLICY, listeners=[log]).run(start())
    lines = path.read_bytes().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    summarised = next(
        s.number
        for s in final.step_executions
        if s.step.compaction is not None and s.step.compaction.summarizing
    )
    last = max(
        index
        for index, record in enumerate(records)
        if record["record"] == "step" and record["step"] == summarised + 1
    )
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_bytes(b"".join(lines[: last + 1]))
    partial = AuditLog.read(crashed)
    assert partial.step_count == summarised + 1
    assert partial.context.store == final.at_step(summarised + 1).context.store


def test_histories_without_compaction_are_written_as_before():
    final = make(ScriptedDriver([call("lookup", key="k"), reply("done")])).run(start())
    text = final.to_json()
    assert '"compaction"' not in text and '"conversation_length"' not in text


# -- failures ----------------------------------------------------------------------------------


def test_a_failed_summary_fails_the_run_with_nothing_lost():
    def answer(request):
        if is_summary_request(request):
            raise RuntimeError("the summariser is down")
        return [ToolCall(id="c1", name="lookup", arguments={"key": "k"})]

    final = make(FunctionDriver(answer), POLICY).run(start())
    assert final.status is ExecutionStatus.FAILED
    step = final.steps[-1]
    assert step.compaction.error.message == "the summariser is down"
    assert step.response is None
    store = final.context.store
    assert store.summary == () or len(store.summary) == 0
    # The moved messages wait in the buffer; the first message is still there.
    assert store.buffer[0].content == "find k0 to k4"
    assert_invariants(final)
    replayed = make(ReplayDriver.from_state(final), POLICY).run(start())
    assert replayed.to_json() == final.to_json()


@pytest.mark.parametrize(
    "summary",
    [
        [ToolCall(id="s1", name="lookup", arguments={"key": "k"})],
        "",
        "  \n ",
    ],
    ids=["a tool call", "empty", "white space"],
)
def test_a_summary_without_text_fails_the_run_with_nothing_lost(summary, tmp_path):
    """A summariser answering a tool call, or nothing, put an empty summary in place of the
    messages it was to sum up: the model went on without the user's words, and the run
    completed. It is a failed summary, as a failed call is (recorded with its answer)."""

    def answer(request):
        if is_summary_request(request):
            return summary
        return [ToolCall(id="c1", name="lookup", arguments={"key": "k"})]

    with AuditLog.open(tmp_path / "run.jsonl") as log:
        final = make(FunctionDriver(answer), POLICY).with_listeners(log).run(start())
    assert AuditLog.read(tmp_path / "run.jsonl") == final
    assert final.status is ExecutionStatus.FAILED
    step = final.steps[-1]
    assert step.compaction.error.type == "CompactionError"
    assert "no summary" in step.compaction.error.message
    assert step.compaction.response is not None  # what the summariser said is kept
    assert step.response is None
    store = final.context.store
    assert len(store.summary) == 0 and store.buffer[0].content == "find k0 to k4"
    assert_invariants(final)
    replayed = make(ReplayDriver.from_state(final), POLICY).run(start())
    assert replayed.to_json() == final.to_json()
    assert AgentState.from_json(final.to_json()) == final


def test_a_compactor_that_raises_or_returns_nonsense_fails_the_run():
    class Broken:
        def plan(self, context, step):
            raise ValueError("no plan")

    class Nonsense:
        def plan(self, context, step):
            return CompactionPlan(move=99)

    final = make(ScriptedDriver([reply("x")]), Broken()).run(start())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.message == "no plan"
    final = make(ScriptedDriver([reply("x")]), Nonsense()).run(start())
    assert final.execution.error.type == "CompactionError"
    again = make(ScriptedDriver([reply("x")]), Nonsense()).run(start())
    assert again.to_json() == final.to_json()  # the compactor named without its address
    assert "Nonsense object> returned" in final.execution.error.message


# -- inspect, replay and the report ------------------------------------------------------------


def _audited(tmp_path):
    driver, _ = scripted_summariser(["the user wants k0 to k4", "k0 to k2 found", "almost done"])
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        final = make(driver, POLICY, listeners=[log]).run(start())
    return path, final


def test_agents_inspect_and_replay_show_and_repeat_the_compactions(tmp_path):
    path, final = _audited(tmp_path)
    result = agents_cli("inspect", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "context compaction:" in result.stdout
    assert "summarised" in result.stdout and "'the user wants k0 to k4'" in result.stdout
    document = json.loads(agents_cli("inspect", "--json", str(path), cwd=tmp_path).stdout)
    recorded = [s.number for s in final.step_executions if s.step.compaction is not None]
    assert [c["step"] for c in document["compactions"]] == recorded
    assert document["compactions"][0]["moved"] >= 1
    replay = agents_cli("replay", "--verify", str(path), cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "replay matches the record" in replay.stdout


def test_agents_inspect_shortens_a_long_summary_to_one_line(tmp_path):
    long = "The user wants k0 to k4.\n" + "Found so far: k0. " * 40
    driver, _ = scripted_summariser([long, long, long])
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        make(driver, POLICY, listeners=[log]).run(start())
    text = agents_cli("inspect", str(path), cwd=tmp_path).stdout
    line = next(line for line in text.splitlines() if "summarised" in line)
    assert "The user wants k0 to k4. Found so far" in line and line.endswith("…'")
    assert len(line) < 200
    document = json.loads(agents_cli("inspect", "--json", str(path), cwd=tmp_path).stdout)
    assert document["compactions"][-1]["summary"] == long


def test_the_html_report_shows_the_compactions(tmp_path):
    path, final = _audited(tmp_path)
    page = tmp_path / "report.html"
    result = agents_cli("report", str(path), "-o", str(page), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    dom = rendered_dom(page, tmp_path)
    compacted = [s for s in final.step_executions if s.step.compaction is not None]
    assert dom.count('class="compaction"') == len(compacted)
    assert "the user wants k0 to k4" in dom
    assert "buffered messages summarised" in dom


# -- properties --------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    lookups=st.integers(min_value=0, max_value=7),
    max_message=st.integers(min_value=1, max_value=10),
    max_buffer=st.integers(min_value=0, max_value=8),
    wide=st.booleans(),
)
def test_any_budget_replays_byte_for_byte_and_rewinds_exactly(
    lookups, max_message, max_buffer, wide
):
    count = estimate_tokens if wide else one_token
    policy = Summarization(max_message * (12 if wide else 1), max_buffer, count=count)
    summaries = iter(range(1000))

    def script():
        answers = iter(
            [
                [ToolCall(id=f"c{n}", name="lookup", arguments={"key": f"k{n}"})]
                for n in range(lookups)
            ]
            + ["done"]
        )

        def answer(request):
            if is_summary_request(request):
                return InferenceResponse(content=f"summary {next(summaries)}", usage=SUMMARY_USAGE)
            return next(answers)

        return FunctionDriver(answer)

    final = make(script(), policy).run(start())
    assert final.final_response == "done", final.execution.error
    assert_invariants(final)
    for step in final.steps:  # never a tool result cut from its call
        body = step.input_messages.body()
        assert not body or body[0].role is not Role.TOOL
    text = final.to_json()
    assert AgentState.from_json(text).to_json() == text
    assert make(ReplayDriver.from_state(final), policy).run(start()).to_json() == text
    decoded = AgentState.from_json(text)
    for k in range(final.step_count + 1):
        partial = (
            make(ReplayDriver.from_state(final), policy).with_limits(max_steps=k).run(start())
            if k
            else start()
        )
        assert decoded.at_step(k).context.store == partial.context.store, k


def test_describe_names_the_compaction_policy():
    loop = make(ScriptedDriver([]), Summarization(100, 50, model="small"))
    assert loop.describe()["compaction"] == "Summarization(100, 50)"
    assert "- Compaction: `Summarization(100, 50)`" in loop.describe_markdown()
    assert make(ScriptedDriver([])).describe()["compaction"] is None


@settings(max_examples=60, deadline=None)
@given(
    growth=st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=40),
    max_message=st.integers(min_value=1, max_value=30),
    max_buffer=st.integers(min_value=0, max_value=20),
    edit_at=st.integers(min_value=0, max_value=45),
)
def test_a_long_lived_policy_plans_what_a_fresh_one_plans(growth, max_message, max_buffer, edit_at):
    """``Summarization`` counts a conversation from what its last plan left there when the
    conversation starts with it: step after step (moves carried out, messages appended, one
    conversation edited by hand on the way) it plans exactly what a new policy plans."""
    lasting = Summarization(max_message, max_buffer, count=lambda m: len(m.content))
    state = AgentState.initial("sys")
    number = 0
    for step, grown in enumerate(growth, start=1):
        more = [Message.user("x" * ((number + k) % 7)) for k in range(grown)]
        number += grown
        context = state.context.with_messages([*state.context.store.messages, *more])
        if step == edit_at and context.store.messages:  # a hook rewrote the conversation
            context = context.with_messages([Message.user("edited"), *context.store.messages])
        fresh = Summarization(max_message, max_buffer, count=lambda m: len(m.content))
        planned = lasting.plan(context, step)
        assert planned == fresh.plan(context, step), step
        if planned is not None:  # carried out as the machine does (a summary empties the buffer)
            store = context.store
            messages = list(store.messages)
            store = store.with_section("buffer", [*store.buffer, *messages[: planned.move]])
            store = store.with_section("messages", messages[planned.move :])
            if planned.request is not None:
                store = store.with_section("buffer", ()).with_section(
                    "summary", [Message.system("summary")]
                )
            context = context.with_store(store)
        state = state.with_context(context)
