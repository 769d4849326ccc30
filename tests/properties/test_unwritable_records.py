"""A record built by hand with a value of another type than a field declares (``content=5``,
``role="user"``, a dict for a model's response, a string among a step's messages, a time
without an offset) is refused where it would be written — ``to_json``, a session store, an
audit log — with a ``TypeError`` (a ``ValueError`` for a naive time) naming the record and
the field: the codec never writes what it cannot read back (a stored session that could not
be loaded again)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs
import pytest
from helpers import add, initial, make_loop
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import AgentState, AuditLog, Message, Role, SQLiteSessionStore, ToolCall
from agents.records.registry import (
    RECORD,
    RECORDS_BY_TYPE,
    data_fields,
    hints,
    optional_of,
    value_kind,
)
from agents.testing import call, reply
from agents.testing.strategies import agent_states

WRONG = (
    5,
    1.5,
    True,
    "user",
    None,
    b"x",
    [1],
    {"a": 1},
    Role.USER,
    Message.user("x"),
    ToolCall(id="c", name="n"),
    [Message.user("x")],
    ["x"],
    [{"role": "user"}],
    datetime(2026, 1, 1),  # naive
    datetime(2026, 1, 1, tzinfo=UTC).date(),
    "2026-01-01T00:00:00+00:00",
    float("nan"),  # a float field's NaN was written as NaN, a line no JSON reader takes
    float("-inf"),
)


def _records(value: Any, found: dict[int, Any]) -> None:
    """Every record inside ``value`` (a state), by identity."""
    if type(value) in RECORDS_BY_TYPE:
        if id(value) in found:
            return
        found[id(value)] = value
        for field in attrs.fields(type(value)):
            _records(getattr(value, field.name), found)
    elif isinstance(value, tuple | list) or type(value).__name__ in ("PVector", "History"):
        for item in value:
            _records(item, found)


def _checked_fields(record: Any) -> list[str]:
    """The fields the encoder checks: text, numbers, flags, enums, times, records and
    sequences of records (every field but plain maps and JSON values, which are frozen and
    checked where a record is made)."""
    annotations = hints(type(record))
    names = []
    for field in data_fields(type(record)):
        annotation = annotations[field.name]
        kind = optional_of(annotation) or annotation
        checked = ("plain", "enum", "datetime", "record", "records")
        if value_kind(kind) in checked or kind is float or field.metadata.get(RECORD):
            names.append(field.name)
    return names


@settings(max_examples=40, deadline=None)
@given(agent_states(), st.data())
def test_the_codec_never_writes_what_it_cannot_read(state, data):
    """Any record of a run with any field given a value of another type: ``to_json``
    refuses it, or what it writes reads back equal."""
    found: dict[int, Any] = {}
    _records(state, found)
    record = data.draw(st.sampled_from(list(found.values())))
    names = _checked_fields(record)
    if not names:
        return
    name = data.draw(st.sampled_from(names))
    wrong = data.draw(st.sampled_from(WRONG))
    try:  # as a user makes it: through the constructor (its converters and validators)
        bad = attrs.evolve(record, **{name: wrong})
    except (TypeError, ValueError):
        return  # refused where it is made
    try:
        text = bad.to_json()
    except (TypeError, ValueError) as exc:
        said = str(exc)
    else:
        assert type(bad).from_json(text).to_json() == text
        return
    assert f"{type(record).__name__}.{name} holds" in said


@settings(max_examples=60, deadline=None)
@given(agent_states(), st.data())
def test_what_a_run_is_handed_is_checked_as_the_codec_would_write_it(state, data):
    """``check_changes`` (what the run checks of a hook's, a driver's or an interceptor's
    records where they enter) refuses exactly what ``to_json`` refuses, with the same
    words: given the record the bad one was made from (only the changed field is looked
    at) and given nothing (all of it)."""
    from agents.records.encoding import check_changes

    found: dict[int, Any] = {}
    _records(state, found)
    record = data.draw(st.sampled_from(list(found.values())))
    check_changes(record)
    names = _checked_fields(record)
    if not names:
        return
    name = data.draw(st.sampled_from(names))
    try:
        bad = attrs.evolve(record, **{name: data.draw(st.sampled_from(WRONG))})
    except (TypeError, ValueError):
        return
    try:
        bad.to_json()
        written = None
    except (TypeError, ValueError) as exc:
        written = (type(exc), str(exc))
    for old in (record, None):
        try:
            check_changes(bad, old)
            checked = None
        except (TypeError, ValueError) as exc:
            checked = (type(exc), str(exc))
        assert checked == written


def test_a_models_nan_cost_fails_its_step_and_the_log_stays_json(tmp_path):
    """A driver answering with ``Usage(cost=nan)`` ran on: the run completed holding NaN,
    its ``to_json`` raised a bare ``ValueError``, and the audit log wrote ``"cost":NaN``, a
    line that is no JSON (the log then failed to verify as tampered). The answer fails
    its step, naming the field; the log verifies."""
    from agents import ExecutionStatus, InferenceResponse, Usage
    from agents.testing import FunctionDriver

    nan = Usage(cost=float("nan"))
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        loop = make_loop(reply("x"), listeners=[log]).with_driver(
            FunctionDriver(lambda request: InferenceResponse(content="ok", usage=nan))
        )
        final = loop.run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert "Usage.cost holds nan, which JSON cannot write" in final.execution.error.message
    assert AgentState.from_json(final.to_json()) == final
    assert AuditLog.verify(path) > 0


def test_a_store_and_an_audit_log_refuse_what_could_not_be_read(tmp_path):
    """A message built with ``content=5``: the store writes nothing (it used to store a
    session it could not load), and a run audited with it fails, its log unwritten."""
    bad = AgentState.initial("x", messages=[Message(role=Role.USER, content=5)])
    with pytest.raises(TypeError, match=r"Message\.content holds int, not str"):
        bad.to_json()
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    with pytest.raises(TypeError, match=r"Message\.content holds int"):
        store.create(bad)
    assert store.list() == []
    with AuditLog.open(tmp_path / "run.jsonl") as log:
        final = make_loop(reply("hi")).with_listeners(log).run(bad)
    assert final.status.value == "failed"
    assert "Message.content holds int" in final.execution.error.message
    assert (tmp_path / "run.jsonl").read_bytes() == b""
    good = make_loop(reply("hi")).run(initial())
    assert AgentState.from_json(good.to_json()) == good


def test_a_store_refuses_a_record_field_holding_what_could_not_be_read(tmp_path):
    """A step whose response is a dict, a string among its messages, a time as text: each
    is refused where the state would be written, naming the field (each used to be stored,
    and the session could then not be loaded: ``expected kind 'InferenceResponse'``)."""
    final = make_loop(call("add", a=1, b=2), reply("done"), tools=[add]).run(initial())
    step_execution = final.step_executions[0]
    step = step_execution.step
    broken = {
        r"AgentStep\.response holds dict, not InferenceResponse or None": attrs.evolve(
            step, response={"content": "x"}
        ),
        r"AgentStep\.output_messages holds a str item, not Message": attrs.evolve(
            step, output_messages=["x"]
        ),
        r"ToolExecution\.tool_call holds Message, not ToolCall": attrs.evolve(
            step,
            tool_executions=[attrs.evolve(step.tool_executions[0], tool_call=Message.user("x"))],
        ),
    }
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    for said, bad_step in broken.items():
        executions = [attrs.evolve(step_execution, step=bad_step), *final.step_executions[1:]]
        bad = attrs.evolve(
            final, execution=attrs.evolve(final.execution, step_executions=executions)
        )
        with pytest.raises(TypeError, match=said):
            store.create(bad)
    late = attrs.evolve(step_execution, started_at="2026-01-01T00:00:00+00:00")
    with pytest.raises(TypeError, match=r"StepExecution\.started_at holds str, not datetime"):
        late.to_json()
    naive = attrs.evolve(step_execution, completed_at=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match=r"StepExecution\.completed_at holds a naive datetime"):
        naive.to_json()
    with pytest.raises(TypeError, match=r"AgentState\.context holds Message, not AgentContext"):
        attrs.evolve(final, context=Message.user("x")).to_json()
    assert store.list() == []
    session = store.create(final)
    assert store.load(session.session_id).state == final


def test_a_map_field_given_another_kind_of_value_is_refused_where_it_is_made():
    """Metadata or arguments given a list or a text: a ``ValueError`` saying so (it was an
    ``AttributeError`` from inside the converter)."""
    with pytest.raises(ValueError, match="a list where an object belongs"):
        Message(role=Role.USER, content="x", metadata=[1])
    with pytest.raises(ValueError, match="a str where an object belongs"):
        ToolCall(id="c", name="n", arguments="a=1")
    assert Message(role=Role.USER, content="x", metadata=None).metadata == {}


def test_a_subclass_of_a_fields_type_is_written_as_that_type():
    """A ``StrEnum`` member as a message's text and an ``IntEnum`` member as a count are
    written as the text and the number (as orjson writes them, and as before the check):
    the same JSON as the plain values', read back equal; ``True`` for a count is refused."""
    import enum

    from agents import Usage

    class Greeting(enum.StrEnum):
        HELLO = "hello"

    class Count(enum.IntEnum):
        THREE = 3

    odd = AgentState.initial("x", messages=[Message(role=Role.USER, content=Greeting.HELLO)])
    plain = AgentState.initial("x", messages=[Message(role=Role.USER, content="hello")])
    assert odd.to_json() == plain.to_json()
    assert AgentState.from_json(odd.to_json()) == odd
    assert Usage(input_tokens=Count.THREE).to_json() == Usage(input_tokens=3).to_json()
    with pytest.raises(TypeError, match=r"Usage\.input_tokens holds bool, not int"):
        Usage(input_tokens=True).to_json()
