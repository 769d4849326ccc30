"""Any JSON value given as a JSON schema — a tool's from an MCP server, a response format
from a stored state — compiles to a validator or is refused with a ``ConfigurationError``
naming the place; a validator answers any JSON value with a converted value or a one-line
error, never an exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agents import ConfigurationError
from agents.records.frozen import deep_freeze
from agents.records.schema import compile_validator

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYWORDS = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "prefixItems",
        "anyOf",
        "enum",
        "required",
        "additionalProperties",
        "description",
        "a",
    ]
)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
SCHEMAS = st.recursive(
    SCALARS | TYPES,
    lambda inner: st.dictionaries(KEYWORDS, inner, max_size=4) | st.lists(inner, max_size=3),
    max_leaves=30,
)


@given(SCHEMAS, VALUES, st.booleans())
def test_any_schema_compiles_or_is_refused_and_any_value_is_answered(schema, value, frozen):
    if frozen:  # as a state holds it
        schema, value = deep_freeze(schema), deep_freeze(value)
    refused: ConfigurationError | None = None
    try:
        validate = compile_validator(schema)
    except ConfigurationError as exc:
        refused = exc
    if refused is not None:
        said = str(refused)
        assert said.startswith("not a usable JSON schema: ") and " at $" in said
        assert "\n" not in said
        return
    _, error = validate(value, "value")
    assert error is None or (isinstance(error, str) and error)
