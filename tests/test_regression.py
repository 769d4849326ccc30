"""``agents.testing.regress`` and ``agents regress``: recorded runs through new agent code,
and the first place where the behaviour changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers import add, echo, initial, make_loop, rendered_dom
from regression_agents import (
    SCRIPT,
    add_described,
    agent,
    cooler,
    double,
    no_echo,
    polite,
)

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    HookContext,
    HookTrigger,
    SQLiteSessionStore,
    Summarization,
    hook,
    tool,
)
from agents.cli.demo import build_demo
from agents.core.compaction import DEFAULT_SUMMARY_PROMPT
from agents.definitions import AgentDefinition
from agents.testing import (
    FunctionDriver,
    ScriptedDriver,
    SequentialIds,
    TickingClock,
    call,
    reply,
)
from agents.testing.regression import NotAccepted, accept, regress


def record(path: Path, loop: AgentLoop, state: AgentState | None = None) -> AgentState:
    """Run ``loop`` with an audit log at ``path``; the final state."""
    with AuditLog.open(path) as log:
        return loop.with_listeners(log).run(state or initial())


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A recorded three-step run: a tool call, a parallel batch, an answer."""
    path = tmp_path / "runs" / "run.jsonl"
    record(path, make_loop(*SCRIPT, tools=[add, echo]))
    return path


def add_more(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b + 1  # the same schema as helpers.add, another result


def only_change(report: Any) -> Any:
    assert len(report.runs) == 1
    (outcome,) = report.runs
    assert outcome.change is not None, "the run should have changed"
    return outcome.change


def test_the_same_code_tells_the_same_story_byte_for_byte(recorded):
    """With the recording's clock and ids, the same agent gives the same JSON exactly."""
    report = regress(agent(), [recorded], exact=True)
    assert report.ok and report.runs[0].same
    assert report.summary().startswith("1 runs: 1 same, 0 changed")


def test_ids_and_times_alone_are_a_change_only_when_exact(recorded):
    """Another clock changes every timestamp: not a change, unless ``exact``."""
    later = agent(clock=TickingClock(start=datetime(2031, 1, 1, tzinfo=UTC)))
    assert regress(later, [recorded]).ok
    assert only_change(regress(later, [recorded], exact=True)).kind == "ids or times"


def test_a_guard_hook_that_now_blocks_a_call_is_found_at_its_step(recorded):
    """A hook that blocks ``echo``: changed at step 2, kind blocked, the tool named."""

    change = only_change(regress(agent(hooks=[no_echo]), [recorded]))
    assert (change.step, change.kind, change.part) == (2, "blocked", "echo")
    assert change.field == "step.tool_executions[0].blocked"
    assert "-false" in change.diff() and "+true" in change.diff()


def test_a_tool_whose_result_changed_is_found_at_that_step(recorded):
    """``add`` that adds one more: changed at step 1, the tool result, as a diff."""

    report = regress(agent(tools=[tool(add_more, name="add"), echo]), [recorded])
    change = only_change(report)
    assert (change.step, change.kind, change.part) == (1, "tool result", "add")
    assert (change.recorded, change.new) == (3, 4)
    # Answered from the record instead, the tool's change does not show.
    assert regress(agent(tools=[tool(add_more, name="add"), echo]), [recorded], tools="record").ok


def test_a_changed_system_prompt_is_a_changed_request_at_step_1(tmp_path):
    """A definition file whose prompt changed: the request's system prompt, step 1."""
    first = tmp_path / "agent.md"
    first.write_text("---\nname: adder\ntools: [add]\n---\nYou add numbers.\n")
    definition = AgentDefinition.load(first)
    loop, state = definition.build([add], driver=ScriptedDriver(SCRIPT[:1] + SCRIPT[2:]))
    recorded = tmp_path / "run.jsonl"
    record(recorded, loop, state.with_user_message("1 + 2?"))
    assert regress(first, [recorded], registry=[add]).ok
    first.write_text("---\nname: adder\ntools: [add]\n---\nYou add numbers, carefully.\n")
    change = only_change(regress(first, [recorded], registry=[add]))
    assert (change.step, change.kind, change.part) == (1, "request", "system prompt")
    assert change.field == "messages[0].content"
    assert "+You add numbers, carefully." in change.diff()


def test_a_tool_calls_provider_fields_dropped_on_the_way_back_is_a_changed_request(tmp_path):
    """New code that sends a tool call back without what the provider gave with it
    (Gemini's ``thought_signature``, which its API answers 400 without): regress called
    the run the same, as a replay did (the calls' provider fields were not compared)."""
    import attrs

    from agents import ToolCall

    def model(request):
        if request.messages[-1].role.value == "tool":
            return "3"
        signed = {"thought_signature": "sig-1"}
        return [ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2}, provider_fields=signed)]

    @hook(HookTrigger.BEFORE_INFERENCE)
    def unsigned(context: HookContext) -> HookContext:
        request = context.request
        messages = [
            attrs.evolve(m, tool_calls=[attrs.evolve(c, provider_fields={}) for c in m.tool_calls])
            for m in request.messages
        ]
        return context.with_request(attrs.evolve(request, messages=messages))

    def loop(*hooks: Any) -> AgentLoop:
        ids, clock = SequentialIds(), TickingClock()
        return AgentLoop(FunctionDriver(model), tools=[add], hooks=hooks, ids=ids, clock=clock)

    recorded = tmp_path / "run.jsonl"
    record(recorded, loop())
    assert regress(loop(), [recorded], tools="record").ok
    change = only_change(regress(loop(unsigned), [recorded], tools="record"))
    assert (change.step, change.kind) == (2, "request")
    assert change.field == "messages[2].tool_calls[0].provider_fields"
    assert '-    "provider_fields": {' in change.diff()


def test_a_definition_with_another_limit_stops_elsewhere(tmp_path):
    """``max_steps: 2`` where the recorded run took three: the stop reason changed."""
    path = tmp_path / "agent.toml"
    path.write_text('name = "adder"\ntools = ["add", "echo"]\nsystem_prompt = "Add."\n')
    loop, state = AgentDefinition.load(path).build([add, echo], driver=ScriptedDriver(SCRIPT))
    recorded = tmp_path / "run.jsonl"
    record(recorded, loop, state.with_user_message("go"))
    path.write_text(path.read_text() + "max_steps = 2\n")
    change = only_change(regress(path, [recorded], registry=[add, echo]))
    assert change.kind == "stop reason"
    assert change.recorded["stop_reason"] == "completed"
    assert change.new["stop_reason"] == "steps_limit"


def test_a_hook_that_rewrites_a_call_is_found_at_its_step(recorded):
    """A hook that now changes ``add``'s arguments: rewritten, at the step of the call."""

    change = only_change(regress(agent(hooks=[double]), [recorded]))
    assert (change.step, change.kind, change.part) == (2, "rewritten", "add")
    assert change.field == "step.tool_executions[1].tool_call.arguments"
    # Answered from the record, the rewritten call still shows (it was answered with the
    # recorded execution, the call as recorded, and the run found the same).
    change = only_change(regress(agent(hooks=[double]), [recorded], tools="record"))
    assert (change.step, change.kind, change.part) == (2, "rewritten", "add")
    assert change.field == "step.tool_executions[1].tool_call.arguments"


def test_a_changed_final_answer_is_found_at_the_last_step(recorded):
    """A hook that rewrites the model's last answer: the final answer changed."""

    change = only_change(regress(agent(hooks=[polite]), [recorded]))
    assert (change.step, change.kind) == (3, "final answer")
    assert (change.recorded, change.new) == ("done", "Done, thank you.")


@hook(HookTrigger.BEFORE_INFERENCE, name="forgetful")
def forgetful(context: HookContext) -> HookContext:
    """A hook that, from the third request on, sends the user's first words changed."""
    request = context.request
    assert request is not None
    messages = list(request.messages)
    if len(messages) < 5:
        return context
    messages[1] = attrs.evolve(messages[1], content="hello again")
    return context.with_request(request.with_messages(messages))


def test_an_earlier_message_changed_late_is_found_where_it_was_sent(recorded):
    """Messages found alike in a run's earlier requests are not compared again (each
    request repeats the conversation so far); one of them sent changed at step 3, the
    same message the new run sent before, is the change there."""
    change = only_change(regress(agent(hooks=[forgetful]), [recorded]))
    assert (change.step, change.kind, change.part) == (3, "request", "messages")
    assert change.field == "messages[1].content"
    assert (change.recorded, change.new) == ("hello", "hello again")


@hook(HookTrigger.BEFORE_INFERENCE, name="cooler_later")
def cooler_later(context: HookContext) -> HookContext:
    """A hook that changes the request's options from the second request on."""
    request = context.request
    assert request is not None
    return context if len(request.messages) < 3 else cooler(context)


def test_an_offer_found_the_same_is_compared_again_once_it_changes(recorded):
    """What step 1 offered was the recorded offer; step 2 offers other options, and
    that is the change (an offer is compared at every step)."""
    change = only_change(regress(agent(hooks=[cooler_later]), [recorded]))
    assert (change.step, change.part, change.field) == (2, "parameters", "request.options")


def test_tool_schemas_and_parameters_are_parts_of_the_request(recorded):
    """A tool's description changed, or the request's options: the request differs there
    (the audit log keeps what each request offered besides its messages)."""
    change = only_change(regress(agent(tools=[tool(add_described, name="add"), echo]), [recorded]))
    assert (change.step, change.kind, change.part) == (1, "request", "tool schemas")

    change = only_change(regress(agent(hooks=[cooler]), [recorded]))
    assert (change.step, change.kind, change.part, change.field) == (
        1,
        "request",
        "parameters",
        "request.options",
    )


def test_a_new_compaction_policy_is_found_where_it_first_compacts(tmp_path):
    """Summaries that start once the conversation grows: a compaction, at that step."""
    script = [call("echo", text="word " * 40) for _ in range(5)] + [reply("done")]
    recorded = tmp_path / "run.jsonl"
    record(recorded, make_loop(*script, tools=[echo]))
    policy = Summarization(120, 60)
    compacting = make_loop(reply("x"), tools=[echo], compaction=policy)
    change = only_change(regress(compacting, [recorded]))
    assert change.kind == "compaction"
    # Where the policy compacts first when the model answers as recorded:
    scripted = ScriptedDriver(script)

    def answer(request: Any) -> Any:
        if request.messages[0].content == DEFAULT_SUMMARY_PROMPT:
            return "a summary"
        return scripted.infer(request)

    live = AgentLoop(FunctionDriver(answer), tools=[echo], compaction=policy)
    first = next(se.number for se in live.run(initial()).step_executions if se.step.compaction)
    assert change.step == first > 1


def test_a_crashed_recording_is_compared_over_its_valid_prefix(recorded):
    """A log cut after its second step record (the run crashed): its two steps compare,
    and a changed tool is still found within them."""
    lines = recorded.read_bytes().splitlines(keepends=True)
    recorded.write_bytes(b"".join(lines[:3]))  # start, step 1, step 2
    assert regress(agent(), [recorded]).ok

    change = only_change(regress(agent(tools=[tool(add_more, name="add"), echo]), [recorded]))
    assert (change.step, change.kind) == (1, "tool result")


def test_runs_come_from_folders_states_and_session_stores(tmp_path, recorded):
    """A folder (every recording in it), a state, and a session store's sessions."""
    state = AuditLog.read(recorded)
    (recorded.parent / "state.json").write_text(state.to_json())
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    session = store.create(state)
    report = regress(agent(), [recorded.parent, state, (store, [session.session_id])])
    store.close()
    assert [run.same for run in report.runs] == [True] * 4
    assert report.runs[0].source.endswith("run.jsonl")
    assert report.runs[-1].source == f"session {session.session_id}"


def test_continue_with_finishes_a_changed_run_live(recorded):
    """From the first changed request on, another driver answers: the run goes on."""

    def add_described(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    live = ScriptedDriver([call("add", a=5, b=5), reply("ten")])
    report = regress(
        agent(tools=[tool(add_described, name="add"), echo]), [recorded], continue_with=live
    )
    outcome = report.runs[0]
    assert outcome.change is not None and outcome.change.kind == "request"
    assert outcome.continued
    assert outcome.new_steps[-1]["step"]["response"]["content"] == "ten"


def deterministic(loop: AgentLoop) -> AgentLoop:
    return loop.with_options(clock=TickingClock(), ids=SequentialIds())


def test_the_demo_and_the_support_example_regress_as_same_byte_for_byte(tmp_path):
    """Recorded runs of the demo and of examples/support_agent.py, against their own code:
    the same story, and with the recording's clock and ids the same JSON exactly."""
    demo, state = build_demo()
    record(tmp_path / "demo.jsonl", deterministic(demo), state)
    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    try:
        import support_agent  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    loop, start = support_agent.build()
    record(tmp_path / "support.jsonl", deterministic(loop), start)
    for code, run in ((build_demo, "demo.jsonl"), (support_agent.build, "support.jsonl")):
        assert regress(code()[0], [tmp_path / run]).ok
        assert regress(deterministic(code()[0]), [tmp_path / run], exact=True).ok


# -- the command line -----------------------------------------------------------------------------


def agents(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agents", *args], capture_output=True, text=True, cwd=cwd
    )


CHANGED_DEMO = """
from agents.cli.demo import build_demo, known_currencies_only
from agents import HookContext, HookTrigger, hook

@hook(HookTrigger.BEFORE_TOOL_USE, name="no_gbp")
def no_gbp(context: HookContext) -> HookContext:
    call = context.tool_call
    if call is not None and call.arguments.get("currency") == "GBP":
        return context.with_tool_blocked("no GBP today")
    return context

loop = build_demo()[0].with_hooks(no_gbp)
"""


def test_the_command_reports_same_changed_and_bad_input(tmp_path):
    """Exit 0 for the demo's own code, 1 with a summary (and --json, --report) for a changed
    hook, 2 with one line for a file that is no recording."""
    demo, state = build_demo()
    record(tmp_path / "runs" / "demo.jsonl", demo, state)
    same = agents("regress", "agents.cli.demo:build_demo", "runs", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert "1 runs: 1 same, 0 changed" in same.stdout
    (tmp_path / "changed_demo.py").write_text(CHANGED_DEMO)
    changed = agents("regress", "changed_demo:loop", "runs", "--report", "out.html", cwd=tmp_path)
    assert changed.returncode == 1, changed.stderr
    assert "blocked (convert) at step 1: step.tool_executions[1].blocked" in changed.stdout
    as_json = json.loads(
        agents("regress", "changed_demo:loop", "runs", "--json", cwd=tmp_path).stdout
    )
    assert as_json["changed"] == 1 and as_json["by_kind"][0]["kind"] == "blocked"
    page = rendered_dom(tmp_path / "out.html", tmp_path)
    assert "blocked (convert) at step 1" in page and "recorded" in page and "new" in page
    (tmp_path / "runs" / "junk.jsonl").write_text("not a log\n")
    bad = agents("regress", "changed_demo:loop", "runs", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "junk.jsonl" in bad.stderr
    assert "Traceback" not in bad.stderr
    nothing = agents("regress", "changed_demo:nothing", "runs", cwd=tmp_path)
    assert nothing.returncode == 2 and "Traceback" not in nothing.stderr


MY_AGENTS = """
from agents import AgentState
from agents.cli.demo import build_demo


def prompt_changed():
    loop, state = build_demo()
    return loop, AgentState.initial(
        "You are a terse travel assistant.", messages=list(state.messages)
    )


def hotter():
    loop, state = build_demo()
    return loop, state.with_llm_config(temperature=0.9)


def as_recorded():
    return build_demo()
"""


def test_a_factory_whose_state_changed_the_prompt_or_settings_is_changed(tmp_path):
    """``agents regress my_agents:prompt_changed``: the factory's ``(loop, state)`` brings
    a new system prompt, which is a changed request at step 1 (exit 1), as a definition's
    is; its settings too; the same factory unchanged is the same (exit 0)."""
    demo, state = build_demo()
    record(tmp_path / "recordings" / "demo.jsonl", demo, state)
    (tmp_path / "my_agents.py").write_text(MY_AGENTS)
    same = agents("regress", "my_agents:as_recorded", "recordings", cwd=tmp_path)
    assert same.returncode == 0 and "1 runs: 1 same, 0 changed" in same.stdout, same.stdout
    changed = agents("regress", "my_agents:prompt_changed", "recordings", cwd=tmp_path)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "request (system prompt) at step 1" in changed.stdout
    hotter = agents("regress", "my_agents:hotter", "recordings", "--tools", "record", cwd=tmp_path)
    assert hotter.returncode == 1 and "request (parameters) at step 1" in hotter.stdout


def test_the_drivers_own_model_and_settings_are_compared(tmp_path):
    """A driver's own model and settings (``request_defaults``, as ``LiteLLMDriver``
    gives) travel with each request: recorded, and compared by ``regress``."""

    class Settled:
        def __init__(self, **defaults: Any) -> None:
            self.defaults = defaults
            self.script = ScriptedDriver(list(SCRIPT))

        def request_defaults(self) -> dict[str, Any]:
            return self.defaults

        def infer(self, request: Any) -> Any:
            assert request.model == self.defaults.get("model")
            return self.script.infer(request)

    path = tmp_path / "run.jsonl"
    record(path, make_loop(*SCRIPT, tools=[add, echo]).with_driver(Settled(model="m", top_p=1)))
    (step,) = [json.loads(line) for line in path.read_text().splitlines()][1:2]
    assert step["payload"]["request"]["model"] == "m"
    assert step["payload"]["request"]["options"] == {"top_p": 1}
    assert regress(agent().with_driver(Settled(model="m", top_p=1)), [path]).ok
    for other in ({"model": "n", "top_p": 1}, {"model": "m", "top_p": 0.5}, {"model": "m"}):
        change = only_change(regress(agent().with_driver(Settled(**other)), [path]))
        assert (change.step, change.kind, change.part) == (1, "request", "parameters")


def test_anything_else_is_refused_as_an_agent():
    """``regress`` names what it takes when given something else."""
    with pytest.raises(TypeError, match=r"a \(loop, state\) pair"):
        regress(42, [])


def test_a_run_file_is_not_needed_to_be_json_lines(tmp_path):
    """A state document is a recording too (the CLI reads it like an audit log)."""
    demo, state = build_demo()
    final = demo.run(state)
    (tmp_path / "demo.json").write_text(final.to_json())
    done = agents("regress", "agents.cli.demo:build_demo", "demo.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_copies_of_recordings_are_left_as_they_were(tmp_path, recorded):
    """Regressing reads recordings and writes nothing next to them."""
    before = {p: p.read_bytes() for p in recorded.parent.iterdir()}
    regress(agent(hooks=[]), [recorded.parent])
    assert {p: p.read_bytes() for p in recorded.parent.iterdir()} == before


# -- snapshots in pytest --------------------------------------------------------------------------

pytest_plugins = ["pytester"]

AGENT_MODULE = '''
from agents import AgentLoop, tool
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

def loop() -> AgentLoop:
    script = [call("add", a=1, b=2), call("add", a=3, b=4), reply("done")]
    return AgentLoop(
        ScriptedDriver(script), tools=[add], clock=TickingClock(), ids=SequentialIds(),
        max_steps={limit},
    )
'''

SNAPSHOT_TEST = """
import pytest
from my_agent import loop

@pytest.mark.agent_recordings("recordings")
def test_my_agent_behaves_as_recorded(agent_recording):
    agent_recording.check(loop(), exact=True)
"""


def test_recordings_are_snapshots_that_fail_on_a_change_and_can_be_accepted(pytester):
    """A test parametrised over a folder of recordings passes while the agent behaves as
    recorded, fails with the change when it does not, and ``--agents-accept`` rewrites the
    recordings (then it passes again, and the recording's diff shows the change)."""
    pytester.makepyfile(my_agent=AGENT_MODULE.format(limit=10), test_snapshots=SNAPSHOT_TEST)
    pytester.syspathinsert()
    folder = pytester.path / "recordings"
    folder.mkdir()
    sys.path.insert(0, str(pytester.path))
    try:
        import my_agent  # type: ignore[import-not-found]

        record(folder / "one.jsonl", my_agent.loop(), AgentState.initial("Add.", messages=["go"]))
        state = my_agent.loop().run(AgentState.initial("Add.", messages=["again"]))
        (folder / "two.json").write_text(state.to_json())
    finally:
        sys.path.pop(0)
        sys.modules.pop("my_agent", None)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    before = (folder / "one.jsonl").read_bytes()

    pytester.makepyfile(my_agent=AGENT_MODULE.format(limit=2))  # a tighter step limit
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=2)
    assert "stop reason (steps) at step 2: steps" in failed.stdout.str()
    assert "--agents-accept" in failed.stdout.str()

    pytester.runpytest("-p", "no:cacheprovider", "--agents-accept").assert_outcomes(passed=2)
    after = (folder / "one.jsonl").read_bytes()
    assert after != before and b'"steps_limit"' in after and b'"steps_limit"' not in before
    assert AuditLog.verify(folder / "one.jsonl")
    assert not list(folder.glob(".*"))  # no temporary file left behind
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_accepting_needs_answers_for_new_requests(tmp_path, recorded):
    """A run that now asks the model something new cannot replace its recording without a
    driver to answer it; the recording stays as it was."""

    def add_described(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    before = recorded.read_bytes()
    changed = agent(tools=[tool(add_described, name="add"), echo])
    with pytest.raises(NotAccepted, match="continue_with"):
        accept(changed, recorded)
    assert recorded.read_bytes() == before
    live = ScriptedDriver(SCRIPT)
    accept(agent(tools=[tool(add_described, name="add"), echo]), recorded, continue_with=live)
    assert recorded.read_bytes() != before
    assert regress(agent(tools=[tool(add_described, name="add"), echo]), [recorded]).ok


def test_continue_with_a_litellm_model_from_the_command_line(tmp_path):
    """``--continue-with MODEL`` finishes a changed run with a real litellm client talking
    HTTP to a local chat-completions server (the model named, its address from the
    environment as litellm reads it)."""
    from llm_server import LLMServer, Reply

    demo, state = build_demo()
    record(tmp_path / "runs" / "demo.jsonl", demo, state)
    (tmp_path / "changed_demo.py").write_text(CHANGED_DEMO)
    with LLMServer() as server:
        server.plan(Reply(content="Only the hotel and the dinner could be converted."))
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agents",
                "regress",
                "changed_demo:loop",
                "runs",
                "--json",
                "--continue-with",
                "openai/test-model",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={
                **os.environ,
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "sk-test-0123456789abcdef",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            },
        )
        asked = list(server.requests)
    assert done.returncode == 1, done.stderr
    outcome = json.loads(done.stdout)["outcomes"][0]
    assert outcome["change"]["kind"] == "blocked" and outcome["continued"] is True
    assert len(asked) == 1  # step 2 onward: the model was asked once, and answered
    assert "sk-test-0123456789abcdef" not in done.stdout + done.stderr


def test_a_folder_of_recordings_is_listed_as_rglob_sorts_it(tmp_path):
    """``recording_files`` (``regress`` and the pytest plugin, a folder at a time) finds
    what ``sorted(folder.rglob("*"))`` finds, files or links to files with a recording's
    suffix, in its order: names that sort between a folder and its contents, a folder
    named like a recording, hidden ones, links to folders not followed, broken links."""
    from agents.testing.regression import SUFFIXES, recording_files

    folder = tmp_path / "runs"
    for name in [
        "b.jsonl",
        "a.jsonl",
        "a-b.json",
        "a/x.jsonl",
        "a/.hidden.jsonl",
        "a/b/c.json",
        "x.jsonl/inner.jsonl",
        ".jsonl",
        "notes.txt",
        "A.json",
        "a.b.jsonl",
    ]:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    (folder / "linked").symlink_to(folder / "a", target_is_directory=True)
    (folder / "link.jsonl").symlink_to(folder / "b.jsonl")
    (folder / "broken.jsonl").symlink_to(folder / "nowhere.jsonl")
    expected = sorted(p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    assert list(recording_files(folder)) == expected
    assert len(expected) == 10
    assert list(recording_files(tmp_path / "nowhere")) == []
    assert list(recording_files(folder / "b.jsonl")) == []


GUARDED_DEMO = (  # the guard of CHANGED_DEMO (the how-to's section 3), as a function
    CHANGED_DEMO
    + """
def guarded_demo():
    return build_demo()[0].with_hooks(no_gbp)
"""
)

WITHOUT_A_MODEL = """
import pytest
from guarded import guarded_demo


@pytest.mark.agent_recordings("recordings")
def test_without_a_model(agent_recording):
    agent_recording.check(guarded_demo())
"""

WITH_A_MODEL = """
import pytest
from guarded import guarded_demo
from agents.testing import ScriptedDriver, reply


@pytest.mark.agent_recordings("recordings")
def test_with_a_model_when_accepting(agent_recording):
    answers = ScriptedDriver([reply("The train could not be converted.")] * 5)
    model = answers if agent_recording.accepting else None
    agent_recording.check(guarded_demo(), continue_with=model)
"""


def test_the_how_tos_hook_change_is_accepted_with_continue_with(pytester):
    """In the how-to's order: the demo recorded, the guard of its section 3 added.
    ``--agents-accept`` without a model fails in one line saying to pass
    ``continue_with``; the how-to's test, giving one when accepting, rewrites the
    recording; then both tests pass as they are."""
    demo, state = build_demo()
    folder = pytester.path / "recordings"
    folder.mkdir()
    record(folder / "trip.jsonl", demo, state)
    pytester.syspathinsert()
    pytester.makepyfile(guarded=GUARDED_DEMO, test_without=WITHOUT_A_MODEL)
    refused = pytester.runpytest("-p", "no:cacheprovider", "--agents-accept")
    refused.assert_outcomes(failed=1)
    output = refused.stdout.str()
    assert "agent_recording.check(agent, continue_with=...)" in output
    assert "Traceback" not in output and "raise NotAccepted" not in output
    pytester.makepyfile(test_with=WITH_A_MODEL)
    accepted = pytester.runpytest("-p", "no:cacheprovider", "--agents-accept", "-k", "with_a")
    accepted.assert_outcomes(passed=1)
    assert b"The train could not be converted." in (folder / "trip.jsonl").read_bytes()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_regressing_a_loop_loads_nothing_a_definition_needs(tmp_path):
    """``regress`` of an ``AgentLoop`` or a ``(loop, state)`` pair does not import the
    definitions module (nor PyYAML): it was imported for every agent, and its modules
    were most of what a regression's memory peak grew by."""
    demo, state = build_demo()
    record(tmp_path / "demo.jsonl", demo, state)
    code = (
        "import sys\n"
        "from agents.cli.demo import build_demo\n"
        "from agents.testing.regression import regress\n"
        f"assert regress(build_demo()[0], [{str(tmp_path / 'demo.jsonl')!r}]).ok\n"
        f"assert regress(build_demo(), [{str(tmp_path / 'demo.jsonl')!r}]).ok\n"
        "print('agents.definitions' in sys.modules, 'yaml' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_a_changed_runs_hooks_run_once(tmp_path):
    """regress runs the new agent code once per recording: a changed run's hooks are called
    as often as in one run of it (a second way through, tried first, ran them twice)."""
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        make_loop(*SCRIPT, tools=[add, echo]).with_listeners(log).run(initial())
    calls: list[str] = []

    @hook(HookTrigger.AFTER_STEP, name="counted")
    def counted(context: HookContext) -> HookContext:
        calls.append("after step")
        return context

    report = regress(agent(hooks=[no_echo, counted]), [path], tools="record")
    assert not report.ok
    assert calls == ["after step"] * 2  # steps 1 and 2: the request of step 3 changed
