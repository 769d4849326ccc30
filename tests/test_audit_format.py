"""The audit log's format 3 (docs/design/auditing.md): each fact once, defaults left out, and
read back to exactly what the codec writes."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
from helpers import add, initial, make_loop
from hypothesis import HealthCheck, given, settings
from pyrsistent import pmap

from agents import (
    AgentState,
    AuditLog,
    HookContext,
    HookTrigger,
    Message,
    Role,
    StateDecodeError,
    ToolCall,
    hook,
)
from agents.audit.compact import (
    compact_field,
    compact_step,
    resolve_step,
    thick_field,
)
from agents.records.codec import (
    OMITTED,
    Encoding,
    compact_record,
    encode_field,
    encode_step_execution,
    encode_value,
)
from agents.records.compact import thick
from agents.records.compiled import replace_fields
from agents.records.decoding import Document, decode_step_execution
from agents.records.registry import field_plan
from agents.records.step import StepExecution
from agents.testing import call, calls, reply
from agents.testing.strategies import agent_states

DATA = Path(__file__).parent / "data"


def _round_trips(step_execution, context) -> None:
    """The compact form of a step reads back to the codec's JSON of it, exactly: made
    whole (``thick``) for the codec's decoder, and by the compact decoders straight."""
    full = encode_step_execution(step_execution, context)
    compact = compact_step(step_execution, context, Encoding(None))
    read = thick(resolve_step(json.loads(json.dumps(compact))), StepExecution)
    assert json.dumps(read) == json.dumps(full)
    read = decode_step_execution(
        resolve_step(json.loads(json.dumps(compact))), context, compact=True
    )
    assert json.dumps(encode_step_execution(read, context)) == json.dumps(full)
    for message in step_execution.step.output_messages:
        written = json.loads(json.dumps(compact_record(message)))
        assert json.dumps(thick(written, Message)) == json.dumps(encode_value(message))
        read = Document().record(written, Message, compact=True)
        assert json.dumps(encode_value(read)) == json.dumps(encode_value(message))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(agent_states(with_parts=True))
def test_every_generated_step_reads_back_to_what_the_codec_writes(state):
    for step_execution in state.step_executions:
        _round_trips(step_execution, state.context)
    for record in (state, state.context, state.execution):
        for field in field_plan(type(record)):
            full = encode_field(record, field.name)
            if full is OMITTED:
                continue
            written = json.loads(json.dumps(compact_field(record, field.name, None)))
            read = thick_field(type(record), field.name, written)
            assert json.dumps(read) == json.dumps(full), field.name


def _one_step() -> AgentState:
    loop = make_loop(calls(call("add", a=0, b=1), call("add", a=2, b=3)), reply("done"))
    return loop.run(initial())


def test_a_step_told_otherwise_than_its_response_is_written_whole():
    """An output message equal to the response's but not made from it, a tool call of the
    same id holding other values (``0`` and ``false`` are equal in Python, not in JSON), a
    repeated call id and a cost of ``-0.0``: each is written as it is and read back so."""
    state = _one_step()
    step_execution = state.step_executions[0]
    step, response = step_execution.step, step_execution.step.response
    assert response is not None
    first, second = response.tool_calls
    copied = ToolCall(id=first.id, name=first.name, arguments=dict(first.arguments))
    rebuilt = Message.assistant(response.content, [copied, second])
    other = ToolCall(id=first.id, name="add", arguments={"a": False, "b": 1})
    variants = [
        replace_fields(step, output_messages=[rebuilt, *step.output_messages[1:]]),
        replace_fields(
            step,
            tool_executions=[
                replace_fields(step.tool_executions[0], tool_call=other),
                step.tool_executions[1],
            ],
        ),
        replace_fields(step, response=response.with_tool_calls([first, first])),
        replace_fields(
            step,
            response=replace_fields(response, usage=replace_fields(response.usage, cost=-0.0)),
        ),
    ]
    for variant in variants:
        _round_trips(replace_fields(step_execution, step=variant), state.context)
    compact = compact_step(
        replace_fields(step_execution, step=variants[1]), state.context, Encoding(None)
    )
    assert compact["step"]["tool_executions"][0]["tool_call"]["arguments"] == {"a": False, "b": 1}


def test_an_assistant_message_with_more_than_the_response_is_written_whole():
    """The response's own content and calls in a message that is not the assistant's
    message the response makes — a name, a call id, metadata, another role — is written
    as a message, not as ``"response"``, and read back so."""
    state = _one_step()
    step_execution = state.step_executions[0]
    step, response = step_execution.step, step_execution.step.response
    assert response is not None
    made = step.output_messages[0]
    assert made == response.to_message()
    others = [
        replace_fields(made, name="planner"),
        replace_fields(made, tool_call_id="call-0"),
        replace_fields(made, metadata=pmap({"seen": True})),
        replace_fields(made, role=Role.USER),
    ]
    for other in others:
        variant = replace_fields(step, output_messages=[other, *step.output_messages[1:]])
        changed = replace_fields(step_execution, step=variant)
        written = compact_step(changed, state.context, Encoding(None))
        assert written["step"]["output_messages"][0] != "response", other
        _round_trips(changed, state.context)
    same = compact_step(step_execution, state.context, Encoding(None))
    assert same["step"]["output_messages"][0] == "response"


def test_a_steps_references_to_its_response_end_with_the_step():
    """What the step's encoders write as references to its response (its message, its
    calls) holds for the step only: the state's changes written after it with the same
    encoding write their records whole."""
    state = _one_step()
    step_execution = state.step_executions[0]
    encoding = Encoding(None)
    written = compact_step(step_execution, state.context, encoding)
    assert written["step"]["output_messages"][0] == "response"
    assert [e["tool_call"] for e in written["step"]["tool_executions"]] == ["call_1", "call_2"]
    assert encoding.refs is not None
    assert encoding.refs.response is None and encoding.refs.calls is None
    execution = compact_record(step_execution.step.tool_executions[0], encoding)
    assert execution["tool_call"] == {"arguments": {"a": 0, "b": 1}, "id": "call_1", "name": "add"}
    step = compact_record(step_execution.step, encoding)
    assert step["output_messages"][0] != "response"


def _step_records(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if '"record":"step"' in line]


def test_a_step_record_states_its_tool_call_once(tmp_path):
    """The tool call is in the response only: the assistant's message is ``"response"``,
    the execution names the call by id, and the conversation adds the step's outputs."""
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        final = make_loop(call("add", a=40, b=2), reply("42"), listeners=[log]).run(initial())
    (record,) = [json.loads(line) for line in _step_records(path)[:1]]
    step = record["payload"]["step_execution"]["step"]
    assert json.dumps(record).count('"a": 40') == 1
    assert step["output_messages"][0] == "response"
    assert step["tool_executions"][0]["tool_call"] == step["response"]["tool_calls"][0]["id"]
    assert record["payload"]["sections"] == {"messages": {"keep": 1}}
    assert AuditLog.read(path).to_json() == final.to_json()


def test_a_plain_tool_loops_steps_take_at_most_half_the_bytes_of_format_2(tmp_path):
    """The run of ``tests/data/audit_v2/make.py`` (one ``add`` call a step), written today
    and by the release before format 3: its step records take at most half the bytes
    (their first, which says more of the state's changes, a little over); the old log still
    reads back to the run's state, and so does the new one."""
    make = runpy.run_path(str(DATA / "audit_v2" / "make.py"))
    make["add_loop"](tmp_path)
    old_log, new_log = DATA / "audit_v2" / "add_loop.jsonl", tmp_path / "add_loop.jsonl"
    old, new = _step_records(old_log), _step_records(new_log)
    assert len(old) == len(new) == make["STEPS"]
    assert sum(map(len, new)) <= sum(map(len, old)) / 2
    assert all(len(b) <= len(a) / 2 for a, b in zip(old[1:], new[1:], strict=True))
    expected = (DATA / "audit_v2" / "add_loop.state.json").read_text().strip()
    assert (tmp_path / "add_loop.state.json").read_text().strip() == expected
    assert AuditLog.read(old_log).to_json() == AuditLog.read(new_log).to_json() == expected


def test_changed_conversations_and_rewritten_calls_read_back_exactly(tmp_path):
    """A hook that rewrites a tool call before it runs, and one that edits the model's
    message in the conversation: the record writes what differs in full."""

    @hook(HookTrigger.BEFORE_TOOL_USE, name="double")
    def double(context: HookContext) -> HookContext:
        assert context.tool_call is not None
        arguments = {**context.tool_call.arguments, "a": context.tool_call.arguments["a"] * 2}
        called = context.tool_call
        return context.with_tool_call(ToolCall(id=called.id, name=called.name, arguments=arguments))

    @hook(HookTrigger.BEFORE_STEP, name="copy")
    def copy(context: HookContext) -> HookContext:
        messages = list(context.state.messages)
        if len(messages) < 3:
            return context
        messages[-2] = Message.assistant("(edited)", list(messages[-2].tool_calls))
        return context.with_state(context.state.with_messages(messages))

    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        loop = make_loop(call("add", a=1, b=2), reply("6"), tools=[add], listeners=[log])
        final = loop.with_hooks(double, copy).run(initial())
    assert final.step_executions[0].step.tool_executions[0].value == 4
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert any("add" in r["payload"].get("sections", {}).get("messages", {}) for r in records)
    assert AuditLog.verify(path) == 4
    assert AuditLog.read(path).to_json() == final.to_json()


def test_a_float_json_writes_otherwise_is_written_as_json_writes_it(tmp_path):
    """``1e-05`` (orjson would write ``1e-5``): the record is the canonical JSON."""

    def tiny() -> float:
        """A tiny number."""
        return 1e-05

    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        make_loop(call("tiny"), reply("ok"), tools=[tiny], listeners=[log]).run(initial())
    (line,) = _step_records(path)[:1]
    assert '"value":1e-05' in line
    assert AuditLog.verify(path) == 4


def test_every_record_writes_a_float_json_writes_otherwise_as_json_writes_it(tmp_path):
    """The start record (a state's metadata), the first step's offer (a tool's default),
    the step, the end (a change of the metadata) and, with ``events=True``, the event
    records: each is written by orjson only where it holds no such float, and as ``json``
    writes it where it does."""

    def tiny(x: float, y: float = 4e-05) -> float:
        """A tiny number."""
        return x

    @hook(HookTrigger.AFTER_EXECUTION)
    def note(context: HookContext) -> HookContext:
        return context.with_state(context.state.with_metadata("last", 2e-05))

    for events in (False, True):
        path = tmp_path / f"run-{events}.jsonl"
        with AuditLog.open(path, events=events) as log:
            loop = make_loop(call("tiny", x=3e-05), reply("ok"), tools=[tiny], hooks=[note])
            final = loop.with_listeners(log).run(initial().with_metadata("first", 1e-05))
        text = path.read_text()
        for written in ('"first":1e-05', '"default":4e-05', '"x":3e-05', '"last":2e-05'):
            assert written in text, (events, written)
        for line in text.splitlines():  # each as json writes it (orjson: 0.00001)
            record = json.loads(line)
            del record["hash"]
            canonical = json.dumps(record, sort_keys=True, separators=(",", ":"))
            assert line.startswith(canonical[:-1] + ',"hash":'), (events, line[:80])
        assert AuditLog.verify(path) == len(text.splitlines())
        assert AuditLog.read(path).to_json() == final.to_json()


def _edited_step_log(path: Path, edit) -> None:
    """A one-call run's audit log at ``path`` whose step record (line 2) holds the step
    ``edit`` changed (the JSON of ``step_execution.step``, edited in place)."""
    with AuditLog.open(path) as log:
        make_loop(call("add", a=1, b=2), reply("3"), listeners=[log]).run(initial())
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    edit(record["payload"]["step_execution"]["step"])
    lines[1] = json.dumps(record) + "\n"
    path.write_text("".join(lines))


def test_a_forged_reference_is_a_typed_error_naming_the_line(tmp_path):
    path = tmp_path / "run.jsonl"
    _edited_step_log(path, lambda step: step["tool_executions"][0].update(tool_call="nope"))
    with pytest.raises(StateDecodeError, match="line 2"):
        AuditLog.read(path)


def test_a_bad_field_inside_a_compact_step_is_named_by_its_path(tmp_path):
    """The compact decoders doubt, and the codec's decoder says what is wrong and where."""
    path = tmp_path / "run.jsonl"
    _edited_step_log(path, lambda step: step["response"]["tool_calls"][0].update(name=7))
    with pytest.raises(StateDecodeError, match="line 2") as caught:
        AuditLog.read(path)
    # (the response's call is also its message's, the first output, where it is met first)
    assert "payload.step_execution.step.output_messages[0].tool_calls[0].name" in str(caught.value)
    assert "expected a string" in str(caught.value)


def test_compact_records_of_two_classes_written_alike_are_not_taken_for_each_other():
    """The compact form says no ``kind``: a message is not the tool call of the same JSON
    that the document read before (records read once are shared by their JSON)."""
    document = Document()
    written = {"id": "c1", "name": "add"}
    assert document.record(dict(written), ToolCall, compact=True) == ToolCall(id="c1", name="add")
    with pytest.raises(StateDecodeError, match="Message"):
        document.record(dict(written), Message, compact=True)
