"""A record built by hand with a value of another type than a field declares (``content=5``,
``role="user"``) is refused where it would be written — ``to_json``, a session store, an
audit log — with a ``TypeError`` naming the record and the field: the codec never writes
what it cannot read back (a stored session that could not be loaded again)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from helpers import initial, make_loop
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import AgentState, AuditLog, Message, Role, SQLiteSessionStore
from agents.records.compiled import optional_of, value_kind
from agents.records.registry import RECORDS_BY_TYPE, data_fields, hints
from agents.testing import reply
from agents.testing.strategies import agent_states

WRONG = (5, 1.5, True, "user", None, b"x", [1], {"a": 1}, Role.USER)


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
    """The fields the encoder checks: text, numbers, flags and enums."""
    annotations = hints(type(record))
    names = []
    for field in data_fields(type(record)):
        annotation = annotations[field.name]
        kind = optional_of(annotation) or annotation
        if value_kind(kind) in ("plain", "enum") or kind is float:
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
    except TypeError as exc:
        said = str(exc)
    else:
        assert type(bad).from_json(text).to_json() == text
        return
    assert f"{type(record).__name__}.{name} holds" in said


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
