"""Any Python value a user may hand a record as JSON (metadata, tool arguments, a tool's
value) is refused where it enters, or frozen into what the codec writes and reads back
equal, byte for byte: tuples, named tuples, persistent maps and vectors built with
pyrsistent, read-only mappings, enums, odd floats and integers past 64 bits among them."""

from __future__ import annotations

import collections
import enum
import types

from helpers import initial
from hypothesis import given, settings
from hypothesis import strategies as st
from pyrsistent import pmap, pvector

from agents import AgentState, ToolCall


class Level(enum.IntEnum):
    HIGH = 2


class Colour(enum.StrEnum):
    RED = "red"


Point = collections.namedtuple("Point", "x y")

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities among them: refused
    st.text(max_size=5),
    st.sampled_from([Level.HIGH, Colour.RED, -0.0, 1e-7, 1e16, 2**63, -(2**64)]),
)


def _containers(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    keys = st.text(max_size=3)
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3).map(pvector),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(pmap),
        st.dictionaries(keys, children, max_size=3).map(types.MappingProxyType),
        st.tuples(children, children).map(lambda pair: Point(*pair)),
        st.sets(st.integers(), max_size=2),  # not JSON: refused
    )


VALUES = st.recursive(SCALARS, _containers, max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_a_value_is_refused_or_read_back_equal(value):
    try:
        state = initial().with_metadata("k", value)
        call = ToolCall(id="c1", name="f", arguments={"a": value})
    except ValueError:
        return
    text = state.to_json()
    back = AgentState.from_json(text)
    assert back == state
    assert back.to_json() == text
    assert ToolCall.from_json(call.to_json()) == call
