"""The codec's fast paths write and read exactly what the general ones do:
``to_json`` (orjson, compiled encoders) is byte for byte Python's ``json`` on ``to_dict``,
for any JSON a run may hold — floats orjson writes otherwise (``1e-05``), integers past 64
bits, lone surrogates (as their escapes), non-finite numbers refused alike — and the
compiled decoders read it back equal, or refuse it with the same error and path as the
general decoder."""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any, Final

import pytest
from helpers import initial, json_places, put_at
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import AgentLoop, AgentState, StateDecodeError, tool
from agents.records.codec import from_dict, to_dict
from agents.records.redaction import is_secret_key, redact
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-5, -3.2e-9, 5e-324, 1e16, 1.5e300, 0.0001, -0.0, 1e-4])
    # A URL's secrets in a text (``x://u:pw@h``, ``?key=k``) are written redacted
    # (tests/test_secrets.py): no round trip.
    | st.text().filter(lambda text: redact(text) == text)
)
# Keys that name secrets are written redacted (tests/test_secrets.py): no round trip.
keys = st.text(max_size=5).filter(lambda key: not is_secret_key(key))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


def _stdlib(record) -> str:
    """``json.dumps`` of ``to_dict``, a lone surrogate written as ``json.dumps`` escapes it
    (canonical JSON is UTF-8, which holds no lone surrogate)."""
    text = json.dumps(to_dict(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return re.sub("[\ud800-\udfff]", lambda lone: json.dumps(lone.group())[1:-1], text)


def give(v: Any) -> Any:
    """Gives the value back."""
    return v


def _run(arguments: dict, value) -> AgentState:
    """A run whose tool call carries ``arguments`` (unknown ones fail validation: recorded
    all the same), whose tool returns ``value`` and whose state holds it as metadata."""
    loop = AgentLoop(
        ScriptedDriver([call("give", **{**arguments, "v": value}), reply("done")]),
        tools=[tool(give)],
        clock=TickingClock(),
        ids=SequentialIds(),
    )
    return loop.run(initial().with_metadata("held", value))


@settings(max_examples=150, deadline=None)
@given(arguments=st.dictionaries(keys, json_values, max_size=3), value=json_values)
def test_to_json_is_stdlib_json_byte_for_byte_and_reads_back(arguments, value):
    state = _run(arguments, value)
    expected = _stdlib(state)
    assert state.to_json() == expected
    back = AgentState.from_json(expected)
    assert back == state
    assert back.to_json() == expected


@pytest.mark.parametrize(
    "value",
    [1e-05, [2**70, -(2**64)], {"x": "\ud800 lone"}, {"deep": [[[1e-300]]]}, 1.5e300],
    ids=["small-float", "big-ints", "lone-surrogate", "nested-small-float", "large-float"],
)
def test_what_orjson_writes_otherwise_is_written_as_json_writes_it(value):
    state = _run({}, value)
    assert state.to_json() == _stdlib(state)
    assert AgentState.from_json(state.to_json().encode("utf-8")) == state


def test_a_small_float_is_written_with_pythons_exponent():
    assert '"held":1e-05' in _run({}, 1e-05).to_json()


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_non_finite_floats_are_refused_alike(bad):
    data = to_dict(_run({}, 1))
    data["execution"]["step_executions"][0]["step"]["response"]["usage"]["cost"] = bad
    with pytest.raises(StateDecodeError) as refused:
        from_dict(data)
    assert refused.value.path.endswith("response.usage.cost")
    with pytest.raises(ValueError, match="not JSON compliant"):
        json.dumps(data, allow_nan=False)


def test_a_wrong_type_deep_inside_is_named_by_its_path():
    data = json.loads(_run({}, 1).to_json())
    data["execution"]["step_executions"][0]["step"]["response"]["tool_calls"][0]["name"] = 7
    with pytest.raises(StateDecodeError) as refused:
        from_dict(data)
    assert refused.value.path == "execution.step_executions[0].step.response.tool_calls[0].name"


def _typed(value):
    """``value`` with every number tagged by its type (``==`` takes ``1`` for ``1.0``)."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


json_texts = st.one_of(
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    json_values.map(lambda v: json.dumps(v, ensure_ascii=True, indent=1)),
    st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasNIy\\ud', max_size=40),
    st.sampled_from(
        [
            "12345678901234567890",
            "[-9223372036854775809]",
            '{"a": 18446744073709551616}',
            '"\\ud800"',
            "1e400",
            "NaN",
            '{"a": 1, "a": 2.0}',
            "[" * 2000 + "]" * 2000,
            '"x" "y"',
            "\ufeff{}",
            # runs of 19 digits or more that are no integer's, beside ones that are
            '{"prev_hash": "0000000000000000000000000000000000000000000000000000000000000000"}',
            '["a12345678901234567890123", 12345678901234567890123]',
            '{"h": "00000000000000000000000", "n": -18446744073709551617}',
            "[0.12345678901234567890123, 1e1234567890123456789]",
            "[1E+12345678901234567890]",
            '["call 12345678901234567890"]',
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_json_text_is_read_as_json_reads_it(text):
    """``json_text.loads`` (orjson where it agrees) reads what Python's ``json`` reads, to
    the number's type, and refuses what it refuses (``NaN``, ``Infinity``: always)."""
    from agents.records.json_text import loads

    try:
        expected = json.loads(text, parse_constant=lambda name: 1 / 0)
    except (ValueError, RecursionError, ZeroDivisionError):
        with pytest.raises(StateDecodeError):
            loads(text)
        return
    assert _typed(loads(text)) == _typed(expected)
    assert _typed(loads(text.encode("utf-8", "surrogatepass"))) == _typed(expected)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(json_texts.filter(lambda text: "\n" not in text), max_size=5))
def test_json_lines_are_each_read_as_loads_reads_them(texts):
    """``JsonLines`` (a whole audit log looked at once for integers orjson reads as
    floats, each line read when asked for) reads each line as ``loads`` does, to the
    number's type, and refuses what it refuses; text without its last newline is refused."""
    from agents.records.json_text import JsonLines, loads

    data = "".join(f"{text}\n" for text in texts).encode("utf-8", "surrogatepass")
    lines = JsonLines(data)
    assert len(lines) == len(texts)
    for index, text in enumerate(texts):
        try:
            expected = loads(text)
        except StateDecodeError:
            with pytest.raises(StateDecodeError):
                lines[index]
            continue
        assert _typed(lines[index]) == _typed(expected)
    with pytest.raises(StateDecodeError):
        JsonLines(data + b"{}")  # a last line torn before its newline


def test_an_integer_past_64_bits_beside_a_hash_is_read_exactly():
    """The 64 zeros of an audit log's first hash are no integer (orjson reads the line);
    an integer past 64 bits on the same line, or another, still goes to ``json``."""
    from agents.records.json_text import JsonLines, loads

    genesis = '{"prev_hash": "' + "0" * 64 + '", "n": 1}'
    big = '{"prev_hash": "' + "0" * 64 + '", "n": 18446744073709551616}'
    assert loads(big)["n"] == 18446744073709551616
    lines = JsonLines(f"{genesis}\n{big}\n".encode())
    assert lines[0]["n"] == 1
    assert type(lines[1]["n"]) is int and lines[1]["n"] == 18446744073709551616


_DOCUMENT: Final = json.loads(_run({"a": 1}, {"b": [1.5, "x"]}).to_json())
_PLACES: Final = json_places(_DOCUMENT)[1:]


@settings(max_examples=300, deadline=None)
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(_PLACES), json_values | st.just(KeyError)), min_size=1, max_size=3
    )
)
def test_from_json_reads_a_document_as_from_dict_does(changes):
    """``from_json``'s first pass empties each object once its record is built (what it
    parsed is its own); whatever a document holds, it reads the record ``from_dict``
    reads, or refuses it with the same error at the same path (its second pass reading the
    text again)."""
    data = copy.deepcopy(_DOCUMENT)
    for place, value in changes:
        try:
            put_at(data, place, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change took this place away
    text = json.dumps(data, ensure_ascii=False)
    assert _outcome(AgentState.from_json, text) == _outcome(AgentState.from_dict, json.loads(text))


def _outcome(read: Any, given: Any) -> Any:
    """What ``read(given)`` gives: the record, or its error's text and path."""
    try:
        return read(given)
    except StateDecodeError as refused:
        return str(refused), refused.path
