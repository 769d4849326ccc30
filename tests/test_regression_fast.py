"""The short way through ``regress`` (``agents.testing.regression_fast``): it is taken for
a plain recorded run, and wherever it vouches that a run is the same, the general way —
which reads the whole record — says so too and gives the same final state."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers import add, echo, initial, json_places, make_loop
from regression_agents import SCRIPT, add_described, agent, cooler, double, no_echo, polite

from agents import (
    AgentLoop,
    AuditLog,
    HookContext,
    HookTrigger,
    Message,
    hook,
    inference_interceptor,
    tool,
    tool_interceptor,
)
from agents.errors import AgentError
from agents.records.frozen import History
from agents.runfiles import load_record
from agents.testing import regression as regression_module
from agents.testing.regression import regress
from agents.testing.regression_fast import same_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fast") / "run.jsonl"
    with AuditLog.open(path) as log:
        make_loop(*SCRIPT, tools=[add, echo]).with_listeners(log).run(initial())
    return path


def general(loop: AgentLoop, path: Path) -> tuple[bool, Any]:
    """The general way alone: whether the run is the same, and the new final state."""
    outcome, state = regression_module._regress_one(
        loop, None, str(path), load_record(str(path)), "record", False, None
    )
    return outcome.same, state


def agrees(make: Callable[[], AgentLoop], path: Path) -> Any:
    """The short way's verdict on ``path``, checked against the general way's (each with
    a loop of its own: a clock and ids that start afresh)."""
    state = same_run(make(), None, path.read_bytes())
    if state is not None:
        same, expected = general(make(), path)
        assert same, "the short way vouched for a run the general way finds changed"
        assert state.to_json() == expected.to_json()
    return state


def test_a_plain_run_through_the_same_agent_takes_the_short_way(recorded):
    """Not a way nobody takes: the plain recording goes through it."""
    assert agrees(agent, recorded) is not None
    assert regress(agent(), [recorded], tools="record").ok


@hook(HookTrigger.AFTER_STEP, name="noted")
def noted(context: HookContext) -> HookContext:
    return context.with_state(context.state.with_metadata("noted", True))


@hook(HookTrigger.AFTER_STEP, name="nudge")
def nudge(context: HookContext) -> HookContext:
    return context.with_state(context.state.with_user_message("and then?"))


@hook(HookTrigger.AFTER_STEP, name="buffered")
def buffered(context: HookContext) -> HookContext:
    """After the last step (an answer), a note in the buffer: seen by no request."""
    state, step = context.state, context.step
    if step is None or step.tool_executions:
        return context
    store = state.context.store.with_section("buffer", [Message.user("remember this")])
    return context.with_state(state.with_context(state.context.with_store(store)))


@tool_interceptor
def louder(call: Any, call_next: Any) -> Any:
    """Each tool's result rewritten after the tool (the record's, with tools="record")."""
    execution = call_next(call)
    return attrs.evolve(execution, value=f"{execution.value}!")


@tool_interceptor
def stringly(call: Any, call_next: Any) -> Any:
    """Each tool's result as text: the model is sent the same message (``3`` is rendered
    as ``"3"`` is), only the tool execution tells."""
    execution = call_next(call)
    return attrs.evolve(execution, value=str(execution.value))


@tool_interceptor
def restarted(call: Any, call_next: Any) -> Any:
    """Each tool execution's start time put a day later: a time, not the story."""
    execution = call_next(call)
    return attrs.evolve(execution, started_at=execution.started_at + timedelta(days=1))


CHANGED = {
    "a hook blocks a call": {"hooks": [no_echo]},
    "an interceptor rewrites a tool's result": {"interceptors": [louder]},
    "an interceptor retypes a tool's result": {"interceptors": [stringly]},
    "a hook rewrites the answer": {"hooks": [polite]},
    "a hook changes the options": {"hooks": [cooler]},
    "a hook adds a message": {"hooks": [nudge]},
    "a tool's schema": {"tools": [tool(add_described, name="add"), echo]},
    "a tool left out": {"tools": [add]},
    "a step limit": {"max_steps": 2},
    "a hook rewrites a call": {"hooks": [double]},
}
# Changes the general way does not report (metadata is not part of the story; a buffer no
# request saw): the short way, which compares the whole state, declines them and leaves
# them to it.
DECLINED = {
    "a hook writes metadata": {"hooks": [noted]},
    "a hook fills the buffer after the last request": {"hooks": [buffered]},
}


@pytest.mark.parametrize("name", sorted(CHANGED) + sorted(DECLINED))
def test_a_changed_agent_never_goes_the_short_way(recorded, name):
    """Each change: the short way declines it, and regress says what the general way
    says (changed, for the changes it reports)."""
    options = {**CHANGED, **DECLINED}[name]
    assert agrees(lambda: agent(**options), recorded) is None
    report = regress(agent(**options), [recorded], tools="record")
    assert report.ok is general(agent(**options), recorded)[0]
    assert report.ok is (name in DECLINED)


@inference_interceptor
def brief(request: Any, call_next: Any) -> Any:
    """Asks the model to be brief, in the messages it is sent (the state is unchanged)."""
    messages = list(request.messages)
    messages[-1] = messages[-1].with_content(messages[-1].content + " (be brief)")
    return call_next(request.with_messages(messages))


def test_a_request_rewritten_on_its_way_to_the_model_never_goes_the_short_way(recorded):
    """An interceptor that rewrites the messages the model is sent leaves the state as it
    was: only the requests tell (the short way compares them after the run)."""
    assert agrees(lambda: agent(interceptors=[brief]), recorded) is None
    assert not regress(agent(interceptors=[brief]), [recorded], tools="record").ok


@inference_interceptor
def reworded(request: Any, call_next: Any) -> Any:
    """The first user message reworded in what the model is sent, behind the head the loop
    sent (the state is unchanged: only the requests tell)."""
    messages = request.messages
    body = list(messages.body())
    body[0] = body[0].with_content(body[0].content + "?")
    return call_next(request.with_messages(History(body).with_head(messages.head)))


def test_a_request_sending_another_conversation_behind_the_same_head_is_declined(recorded):
    """The short way compares the final conversation with the record, then finds each
    request's a prefix of it: one that is not is compared whole, and declined."""
    assert agrees(lambda: agent(interceptors=[reworded]), recorded) is None
    assert not regress(agent(interceptors=[reworded]), [recorded], tools="record").ok


@pytest.mark.parametrize(
    "change",
    [
        lambda state: state.with_system_prompt("Be brief."),
        lambda state: state.with_llm_config(temperature=0.5),
        lambda state: state.with_response_format({"type": "object"}),
    ],
    ids=["system prompt", "llm_config", "response format"],
)
def test_another_start_never_goes_the_short_way(recorded, change):
    """An agent bringing another system prompt, model settings or response format than
    the recorded start's is asked otherwise from its first request: not the short way."""
    start = AuditLog.read(recorded).at_step(0)
    assert same_run(agent(), start, recorded.read_bytes()) is not None
    assert same_run(agent(), change(start), recorded.read_bytes()) is None


def test_ids_and_times_of_another_clock_still_go_the_short_way(recorded):
    from datetime import UTC, datetime

    from agents.testing import TickingClock

    def later() -> AgentLoop:
        return agent(clock=TickingClock(start=datetime(2031, 1, 1, tzinfo=UTC)))

    assert agrees(later, recorded) is not None


def test_a_tool_execution_given_from_the_record_then_retimed_still_goes_the_short_way(recorded):
    """An execution the run was given and that changed after in a time alone is compared
    field by field (the short way's identity shortcut is for executions only stamped with
    their completion): still the same, ids and times aside."""
    assert agrees(lambda: agent(interceptors=[restarted]), recorded) is not None


@pytest.mark.parametrize("enabled", [True, False])
def test_the_short_way_never_switches_the_garbage_collector(recorded, enabled):
    """Library code leaves process-wide state alone: the collector is as the application
    set it while the agent's hooks run and after — for a run the short way vouches for,
    one it declines, and a log it cannot read."""
    seen: list[bool] = []

    @hook(HookTrigger.BEFORE_STEP, name="probe")
    def probe(context: HookContext) -> HookContext:
        seen.append(gc.isenabled())
        return context

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        for loop, data in [
            (agent(hooks=[probe]), recorded.read_bytes()),
            (agent(hooks=[nudge, probe]), recorded.read_bytes()),
            (agent(), b"{not json\n"),
        ]:
            same_run(loop, None, data)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen and set(seen) == {enabled}


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[path[0]] = _replaced(data[path[0]], path[1:], value)
    return copy


def vouched_alike(forged: Path, what: str) -> bool:
    """Whether the short way vouched for the run ``forged`` records; when it did, the
    general way must read the log without an error, find the run the same and give the
    same state."""
    state = same_run(agent(), None, forged.read_bytes())
    if state is None:
        return False
    try:
        same, expected = general(agent(), forged)
    except AgentError as exc:
        pytest.fail(f"{what}: vouched for a log the general way refuses: {exc}")
    assert same, what
    assert state.to_json() == expected.to_json(), what
    return True


FORGED = (
    *(None, True, False, 0, 1, 2, -1, 1.0, 0.5, "", "x", [], {}),
    *("2025-01-01T00:00:00", "not a time", "2031-01-01T00:00:00+01:00", "step-1"),
    *("2025-01-01T00:00:00.002000+00:00", "completed", "assistant", "tool", "MessagesRef"),
)


def test_a_forged_value_anywhere_is_never_vouched_for_by_the_short_way_alone(recorded, tmp_path):
    """Every value of the log replaced in turn by each of ``FORGED`` (ids and times too,
    the records' kinds, the references; ~10,000 logs): wherever the short way still
    vouches for the run, the general way reads the forged log without an error, finds the
    run the same and gives the same state. (It found an empty array of tool executions
    forged into ``""`` taken as empty, and ``"changes": ""`` read as no change.)"""
    lines = recorded.read_bytes().decode().splitlines()
    forged = tmp_path / "run.jsonl"
    vouched = 0
    for number, line in enumerate(lines):
        entry = json.loads(line)
        for path in json_places(entry):
            if path and path[0] in ("hash", "prev_hash"):
                continue  # the chain is the verifier's (neither way checks it)
            for value in FORGED:
                copy = list(lines)
                copy[number] = json.dumps(_replaced(entry, path, value))
                forged.write_text("\n".join(copy) + "\n")
                vouched += vouched_alike(forged, f"line {number + 1}, {path}, {value!r}")
    assert vouched > 100  # other ids and times, equal values: the short way still goes


def test_a_changed_run_is_told_once_to_the_loops_listeners(recorded):
    """A loop whose events go somewhere takes the general way alone: a changed run
    (which the short way would have run first) reaches its listeners once."""
    seen: list[Any] = []
    loop = agent(hooks=[no_echo]).with_listeners(seen.append)
    assert not regress(loop, [recorded], tools="record").ok
    assert [type(event).__name__ for event in seen].count("ExecutionStarted") == 1


def _without(data: Any, path: tuple[Any, ...]) -> Any:
    """``data`` without the key at ``path``."""
    if len(path) == 1:
        return {key: value for key, value in data.items() if key != path[0]}
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[path[0]] = _without(data[path[0]], path[1:])
    return copy


def _with_extra(data: Any, path: tuple[Any, ...]) -> Any:
    """``data`` with a key more in the object at ``path``."""
    if not path:
        return {**data, "extra": 1}
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[path[0]] = _with_extra(data[path[0]], path[1:])
    return copy


def _forged_structures(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Each line dropped, repeated, swapped with the next; each key of each record
    removed; a key added to each object."""
    forged = []
    for number, line in enumerate(lines):
        forged.append((f"line {number + 1} dropped", lines[:number] + lines[number + 1 :]))
        forged.append((f"line {number + 1} twice", lines[: number + 1] + lines[number:]))
        if number + 1 < len(lines):
            swapped = [*lines[:number], lines[number + 1], line, *lines[number + 2 :]]
            forged.append((f"lines {number + 1} and {number + 2} swapped", swapped))
        entry = json.loads(line)
        for path in json_places(entry):
            if not path:
                continue
            parent = entry
            for key in path[:-1]:
                parent = parent[key]
            if isinstance(parent, dict):
                changed = [*lines[:number], json.dumps(_without(entry, path)), *lines[number + 1 :]]
                forged.append((f"line {number + 1} without {path}", changed))
            if isinstance(parent, dict) and path[-1] == next(iter(parent)):
                extra = json.dumps(_with_extra(entry, path[:-1]))
                forged.append(
                    (
                        f"line {number + 1}, {path[:-1]} with a key more",
                        [*lines[:number], extra, *lines[number + 1 :]],
                    )
                )
    return forged


def test_a_forged_structure_is_never_vouched_for_by_the_short_way_alone(recorded, tmp_path):
    """Lines dropped, repeated or swapped, keys removed or added (~1,000 logs): wherever
    the short way still vouches, the general way reads the log, finds the run the same and
    gives the same state. (It found the short way vouching for lines without the fields
    of an audit record, which the general way refuses as tampered.)"""
    lines = recorded.read_bytes().decode().splitlines()
    forged = tmp_path / "run.jsonl"
    for what, changed in _forged_structures(lines):
        forged.write_text("\n".join(changed) + "\n")
        vouched_alike(forged, what)


def test_a_known_record_stands_only_for_json_written_alike():
    """``Known``: a record met again is compared by the text of the JSON it stands for
    (written once): an equal copy matches, one with a number of another JSON type (``1``
    for ``1.0``, which ``==`` takes as equal) does not, however often it is asked."""
    from agents import ToolCall
    from agents.records.codec import encode_value
    from agents.records.matching import Known, matches

    call = ToolCall(id="c1", name="add", arguments={"a": 1.5, "b": 2})
    written = encode_value(call)
    known = Known()
    known.add(call, written)
    copy = json.loads(json.dumps(written))
    retyped = {**copy, "arguments": {"a": 1.5, "b": 2.0}}
    for _ in range(2):
        assert matches(call, copy, frozenset(), None, known)
        assert not matches(call, retyped, frozenset(), None, known)
        assert not matches(call, {**copy, "id": "c2"}, frozenset(), None, known)
