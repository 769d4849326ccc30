"""Structured output: schemas from classes, validated answers, feedback, and the retry limit."""

from __future__ import annotations

import dataclasses
from typing import Literal, TypedDict

import attrs
import pytest
from helpers import initial, make_loop
from llm_server import LLMServer, answer

from agents import (
    AgentLoop,
    AgentState,
    ConfigurationError,
    ExecutionStatus,
    LiteLLMDriver,
    Role,
    StopReason,
)
from agents.records.compiled import replace_fields
from agents.records.output import output_schema
from agents.testing import SequentialIds, TickingClock, reply


@attrs.frozen
class Verdict:
    label: Literal["spam", "ham"]
    confidence: float
    reasons: list[str] = attrs.field(factory=list)


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: int


def with_format(spec) -> AgentState:
    return AgentState.initial("Classify.", messages=["Buy now!!!"], response_format=spec)


def test_schemas_are_derived_from_attrs_dataclasses_and_typeddicts():
    """Fields, types and defaults become a JSON schema."""
    assert output_schema(Verdict) == {
        "title": "Verdict",
        "type": "object",
        "properties": {
            "label": {"enum": ["spam", "ham"]},
            "confidence": {"type": "number"},
            "reasons": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
        "required": ["label", "confidence"],
    }
    assert output_schema(Point)["required"] == ["x"]
    assert output_schema(Movie)["required"] == ["title", "year"]
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert output_schema(schema) == schema
    with pytest.raises(ConfigurationError, match="not an attrs class"):
        output_schema(int)
    with pytest.raises(ConfigurationError):
        output_schema(42)


NO_SCHEMAS = [  # (response_format, what the error names)
    ({"type": "decimal"}, "unknown type 'decimal' at $.type"),
    ({"type": "object", "properties": None}, "expected an object, got null at $.properties"),
    ({"type": "array", "items": "string"}, "a schema is an object, not string at $.items"),
    ({"anyOf": {"type": "string"}}, "expected an array, got object at $.anyOf"),
    ({"type": "object", "required": "a"}, "expected an array, got string at $.required"),
    ({"enum": 3}, "expected an array, got integer at $.enum"),
    (
        {"properties": {"a": {"type": []}}, "type": "object"},
        "empty list of types at $.properties.a.type",
    ),
]


@pytest.mark.parametrize(("schema", "named"), NO_SCHEMAS)
def test_a_response_format_that_is_no_schema_is_refused_or_fails_the_run(schema, named):
    """A schema no answer can be checked against: ``with_response_format`` refuses it, and
    a state that holds one anyway (a document written elsewhere) makes its run fail with
    the error recorded — ``run`` raised ``KeyError``, ``AttributeError`` or ``TypeError``
    before."""
    with pytest.raises(ConfigurationError, match="not a usable JSON schema: ") as refused:
        with_format(schema)
    assert str(refused.value).endswith(named)
    plain = initial()
    document = replace_fields(plain, context=plain.context.with_response_format(schema))
    held = AgentState.from_json(document.to_json())
    final = make_loop(reply('{"label": "spam"}')).run(held)
    assert final.status is ExecutionStatus.FAILED
    assert final.stop_reason is StopReason.ERROR
    assert final.execution.error.type == "ConfigurationError"
    assert named in final.execution.error.message
    assert AgentState.from_json(final.to_json()) == final


def test_a_type_may_be_a_list_of_types():
    """``"type": ["object", "null"]`` (JSON Schema's union) checks each; a value of none of
    them goes back to the model (it raised ``TypeError``: a list is no dictionary key)."""
    schema = {
        "type": ["object", "null"],
        "properties": {"n": {"type": ["integer", "string"]}},
        "required": ["n"],
    }
    final = make_loop(reply("3"), reply("null")).run(with_format(schema))
    assert final.status is ExecutionStatus.COMPLETED and final.final_output is None
    assert "matches no allowed type" in final.messages[-2].content
    final = make_loop(reply('{"n": [1]}'), reply('{"n": "x"}')).run(with_format(schema))
    assert dict(final.final_output) == {"n": "x"}


def test_a_valid_answer_becomes_final_output():
    """A JSON answer matching the schema is kept as ``final_output``."""
    final = make_loop(reply('{"label": "spam", "confidence": 0.97}')).run(with_format(Verdict))
    assert final.status is ExecutionStatus.COMPLETED
    assert dict(final.final_output) == {"label": "spam", "confidence": 0.97}
    assert final.output_as(Verdict) == Verdict(label="spam", confidence=0.97)
    assert AgentState.from_json(final.to_json()) == final


def test_fenced_json_is_accepted():
    """An answer wrapped in a ```json fence is parsed."""
    final = make_loop(reply('```json\n{"x": 3}\n```')).run(with_format(Point))
    assert final.output_as(Point) == Point(x=3, y=0)


def test_an_invalid_answer_is_sent_back_with_the_error():
    """The model is told what was wrong and tries again."""
    loop = make_loop(
        reply("It is spam."),
        reply('{"label": "junk", "confidence": 1}'),
        reply('{"label": "spam", "confidence": 1}'),
    )
    final = loop.run(with_format(Verdict))
    assert final.status is ExecutionStatus.COMPLETED
    assert final.step_count == 3
    assert final.output_as(Verdict).label == "spam"
    feedback = [m for m in final.messages if m.metadata.get("agents") == "output_feedback"]
    assert [m.role for m in feedback] == [Role.USER, Role.USER]
    assert "not valid JSON" in feedback[0].content
    assert "label: 'junk' is not one of ['spam', 'ham']" in feedback[1].content
    assert final.steps[1].input_messages[-1] == feedback[0]


def test_the_retry_limit_stops_the_run():
    """After ``output_retries`` failed retries the run ends STOPPED with RETRY_LIMIT."""
    loop = make_loop(reply("no"), reply("still no"), reply("never"), output_retries=1)
    final = loop.run(with_format(Movie))
    assert final.status is ExecutionStatus.STOPPED
    assert final.stop_reason is StopReason.RETRY_LIMIT
    assert final.step_count == 2
    assert final.final_output is None
    assert "after 2 tries" in final.stop_signal.message


def test_the_schema_reaches_the_provider():
    """LiteLLMDriver sends the schema as a json_schema response format."""
    with LLMServer() as server:
        server.plan(answer('{"title": "Alien", "year": 1979}'))
        driver = LiteLLMDriver("openai/test-model", api_base=server.base_url, api_key="sk-x")
        final = AgentLoop(driver, clock=TickingClock(), ids=SequentialIds()).run(with_format(Movie))
    assert final.final_output["year"] == 1979
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Movie"
    assert sent["json_schema"]["schema"]["required"] == ["title", "year"]


def test_bad_output_retries_option_is_rejected():
    """``output_retries`` must be a non-negative int."""
    with pytest.raises(ConfigurationError, match="output_retries"):
        make_loop(reply("x"), output_retries=-1)


def test_no_format_means_no_final_output():
    """Without a response format answers are plain text."""
    assert make_loop(reply('{"a": 1}')).run(initial()).final_output is None
