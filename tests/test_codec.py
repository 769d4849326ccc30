"""The JSON codec (docs/design/determinism.md): lossless round trips, strict decoding, redaction,
references."""

from __future__ import annotations

import contextlib
import json
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from helpers import add, echo, explode, initial, make_loop, put_at

from agents import (
    AgentState,
    AgentStep,
    ErrorInfo,
    InferenceRequest,
    Message,
    StateDecodeError,
    StopReason,
    StopSignal,
    ToolCall,
    ToolExecution,
    Usage,
)
from agents.records.codec import REDACTED, SCHEMA_VERSION, from_dict, is_secret_key, to_dict
from agents.records.execution import ExecutionState
from agents.records.registry import plain_init
from agents.records.step import StepExecution
from agents.testing import TickingClock, call, calls, fail, reply


def rich_state() -> AgentState:
    """A finished run touching most record types."""
    loop = make_loop(
        calls(
            call("add", a=1, b=2),
            call("echo", text="é ✓"),
            call("explode"),
            usage=Usage(input_tokens=10, output_tokens=5, cache_read_tokens=3, cost=0.00123),
        ),
        call("add", '{"broken'),
        fail(RuntimeError("model down")),
        tools=[add, echo, explode],
    )
    state = initial().with_metadata("ticket", {"id": 7, "tags": ["a", "b"]})
    return loop.run(state.with_llm_config(model="test-model", temperature=0.2))


def test_round_trip_is_lossless():
    """``from_json(to_json(x)) == x`` and the text is stable."""
    state = rich_state()
    text = state.to_json()
    back = AgentState.from_json(text)
    assert back == state
    assert back.to_json() == text
    assert to_dict(state) == json.loads(text)
    assert back.usage == state.usage
    assert back.execution.error == state.execution.error
    assert back.tool_executions[1].value == "é ✓"


def test_every_record_round_trips_on_its_own():
    """Each record type has its own to_dict/from_dict."""
    at = datetime(2025, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    call_ = ToolCall(id="c1", name="add", arguments={"a": 1, "nested": {"x": [1, 2]}})
    records = [
        Message.user("hi"),
        call_,
        Usage(input_tokens=1, output_tokens=2, cost=0.1),
        ErrorInfo(type="X", message="y", details={"status_code": 500}),
        StopSignal(reason=StopReason.TIME_LIMIT, message="m", context={"elapsed": 1.5}),
        ToolExecution(
            id="t1",
            tool_call=call_,
            value={"k": [1, None]},
            started_at=at,
            completed_at=at + timedelta(seconds=1),
        ),
        InferenceRequest(
            messages=[Message.system("s"), Message.user("u")],
            tools=[add.schema],
            model="m",
            options={"temperature": 0.1},
        ),
        AgentStep(id="s1", input_messages=[Message.user("u")]),
    ]
    for record in records:
        data = record.to_dict()
        assert data["kind"] == type(record).__name__
        assert data["schema_version"] == SCHEMA_VERSION
        assert type(record).from_dict(data) == record
        assert from_dict(data) == record


def test_decoders_build_the_records_of_every_step_without_their_init():
    """The records a history holds many of are built by the decoder from their fields and
    checked by their validators, without ``__init__`` (which converts again): a converter the
    codec does not know as idempotent (``attrs.converters.optional(...)`` made the decoding
    of a 1,000-step state a fifth slower) sends a class the slow way."""
    hot = (Message, ToolCall, ToolExecution, AgentStep, StepExecution, ExecutionState)
    assert [cls.__name__ for cls in hot if plain_init(cls) is None] == []


def test_step_inputs_are_written_as_references():
    """A step's input messages are a prefix of the context: written as MessagesRef."""
    state = make_loop(*[call("add", a=i, b=1) for i in range(5)], reply("done")).run(initial())
    data = to_dict(state)
    refs = [se["step"]["input_messages"] for se in data["execution"]["step_executions"]]
    assert refs == [{"kind": "MessagesRef", "prefix": 1 + 2 * i} for i in range(6)]
    back = AgentState.from_dict(data)
    assert back.steps[3].input_messages == state.steps[3].input_messages
    assert back.steps[3].input_messages[0] == Message.system("You are a test agent.")


def test_history_serializes_in_linear_size():
    """Doubling the steps roughly doubles the JSON (no quadratic input copies)."""

    def size(n: int) -> int:
        loop = make_loop(*[call("add", a=i, b=1) for i in range(n)], reply("done"), max_steps=n + 1)
        return len(loop.run(initial()).to_json())

    small, large = size(50), size(100)
    assert large < 2.2 * small


def test_step_inputs_that_are_not_a_prefix_are_written_in_full():
    """When a hook replaced the conversation, earlier inputs are written as they were."""
    state = make_loop(call("add", a=1, b=1), reply("done")).run(initial())
    rewritten = state.with_messages([Message.user("something else")])
    data = to_dict(rewritten)
    first_input = data["execution"]["step_executions"][0]["step"]["input_messages"]
    assert isinstance(first_input, list)
    assert AgentState.from_dict(data) == rewritten


def test_timestamps_are_iso_with_microseconds_and_offset():
    """Timestamps keep microseconds and their offset through the codec."""
    at = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    state = AgentState.initial(created_at=at)
    data = to_dict(state)
    assert data["created_at"] == "2025-01-02T03:04:05.000000+02:00"
    assert AgentState.from_dict(data).created_at == at


@pytest.mark.parametrize(
    "start",
    [
        datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=UTC),
        datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=timezone(timedelta(hours=2))),
        datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=timezone(timedelta(0), "Z")),
    ],
    ids=["utc-fraction", "utc-whole-second", "offset", "named-zero-offset"],
)
@pytest.mark.parametrize("metadata", [{}, {"small": 1e-05}, {"lone": "\ud800"}])
def test_times_are_written_as_isoformat_by_every_writer(start, metadata):
    """``to_json`` leaves a time for orjson to write where it writes what
    ``isoformat(timespec="microseconds")`` does (UTC, a fraction of a second) and writes the
    others itself; the text is the same either way, and when ``json`` writes the document
    (a float orjson writes otherwise, a lone surrogate) too."""
    clock = TickingClock(start, timedelta(microseconds=500_000))
    loop = make_loop(call("add", a=1, b=2), call("add", a=2, b=3), reply("done"), clock=clock)
    state = loop.run(initial().with_metadata("held", metadata))
    expected = json.dumps(to_dict(state), ensure_ascii=False, separators=(",", ":"))
    expected = re.sub("[\ud800-\udfff]", lambda lone: json.dumps(lone.group())[1:-1], expected)
    assert state.to_json() == expected
    assert AgentState.from_json(state.to_json()) == state


def test_plain_maps_are_sorted_and_secrets_redacted():
    """Plain maps have sorted keys; values under secret-looking keys are redacted."""
    state = AgentState.initial(
        metadata={"zeta": 1, "alpha": {"API-Key": "sk-123", "max_tokens": 5}},
        llm_config={"model": "m", "openai_api_key": "sk-456", "Authorization": "Bearer x"},
    )
    text = state.to_json()
    assert "sk-123" not in text and "sk-456" not in text and "Bearer" not in text
    data = json.loads(text)
    assert list(data["context"]["metadata"]) == ["alpha", "zeta"]
    assert data["context"]["metadata"]["alpha"] == {"API-Key": REDACTED, "max_tokens": 5}
    assert data["llm_config"]["openai_api_key"] == REDACTED


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("X-Api-Key", True),
        ("token", True),
        ("Refresh_Token", True),
        ("db_password", True),
        ("client_secret", True),
        ("cookie", True),
        ("max_tokens", False),
        ("tokens", False),
        ("secretary", False),
        ("monkey", False),
    ],
)
def test_secret_keys(key, secret):
    """Secret keys are matched case-insensitively with ``-`` read as ``_``."""
    assert is_secret_key(key) is secret


def _corrupt(path: list, value):
    data = to_dict(rich_state())
    put_at(data, path, value)
    return data


@pytest.mark.parametrize(
    ("path", "value", "where", "reason"),
    [
        (["agent_id"], 5, "agent_id", "expected a string"),
        (["created_at"], "yesterday", "created_at", "not an ISO-8601"),
        (["created_at"], "2025-01-01T00:00:00", "created_at", "no UTC offset"),
        (["execution", "status"], "exploded", "execution.status", "not a ExecutionStatus"),
        (
            ["execution", "step_executions", 1, "step", "response", "usage", "cost"],
            "free",
            "execution.step_executions[1].step.response.usage.cost",
            "expected a number",
        ),
        (
            ["execution", "step_executions", 0, "step", "tool_executions", 2, "error"],
            KeyError,
            "execution.step_executions[0].step.tool_executions[2].error",
            "missing field",
        ),
        (
            ["execution", "step_executions", 0, "surprise"],
            1,
            "execution.step_executions[0].surprise",
            "unknown field",
        ),
        (
            ["context", "store", "messages", 0, "kind"],
            "Mess",
            "context.store.messages[0]",
            "expected kind 'Message'",
        ),
        (
            ["execution", "step_executions", 0, "step", "input_messages"],
            {"kind": "MessagesRef", "prefix": 99},
            "execution.step_executions[0].step.input_messages",
            "outside the conversation",
        ),
        (
            ["context", "store", "messages", 0, "role"],
            "robot",
            "context.store.messages[0].role",
            "not a Role",
        ),
    ],
)
@pytest.mark.parametrize("read", ["from_dict", "from_json"])
def test_malformed_input_names_the_path(path, value, where, reason, read):
    """Every decoding error names the path of the bad field and what was wrong — from
    JSON text too, whose first pass empties what it has read (the second reads the text
    again: an error late in the document is named as in the data)."""
    data = _corrupt(path, value)
    reading = AgentState.from_dict if read == "from_dict" else AgentState.from_json
    with pytest.raises(StateDecodeError) as info:
        reading(data if read == "from_dict" else json.dumps(data))
    assert info.value.path == where
    assert reason in str(info.value)
    assert str(info.value).endswith(f"(at {where})")


@pytest.mark.parametrize("version", [2, 0, "1", None, True])
def test_unknown_schema_versions_are_rejected(version):
    """A future (or nonsense) schema version is a StateDecodeError on schema_version."""
    data = to_dict(initial())
    data["schema_version"] = version
    with pytest.raises(StateDecodeError) as info:
        AgentState.from_dict(data)
    assert info.value.path == "schema_version"


def test_not_json_and_wrong_kind_are_rejected():
    """Garbage text and a record of another kind are typed errors."""
    with pytest.raises(StateDecodeError, match="not valid JSON"):
        AgentState.from_json("{nope")
    with pytest.raises(StateDecodeError, match="expected kind 'AgentState'"):
        AgentState.from_dict(Message.user("x").to_dict())
    with pytest.raises(StateDecodeError, match="missing schema_version"):
        AgentState.from_dict({"kind": "AgentState"})
    with pytest.raises(StateDecodeError, match="unknown kind"):
        from_dict({"kind": "Nope", "schema_version": SCHEMA_VERSION})
    with pytest.raises(StateDecodeError, match="expected a JSON object"):
        from_dict([1, 2])


def test_invalid_values_inside_valid_json_are_rejected():
    """A finish reason outside the documented set fails decoding with the record named."""
    state = make_loop(reply("x")).run(initial())
    data = to_dict(state)
    data["execution"]["step_executions"][0]["step"]["response"]["finish_reason"] = "bored"
    with pytest.raises(StateDecodeError, match="invalid InferenceResponse"):
        AgentState.from_dict(data)


def test_an_int_in_a_float_field_encodes_as_the_float_it_reads_back_as():
    """``Usage(cost=1)`` wrote ``"cost":1`` and read back ``1.0``: equal states with two
    encodings (docs/design/determinism.md). Float fields hold floats, whatever number they were
    given."""
    from agents import Goal, Usage
    from agents.definitions import AgentDefinition

    for record in (
        Usage(cost=1),
        Goal("x", time_budget=5),
        AgentDefinition(name="a", max_cost=1, time_limit=30),
        initial().with_goal(Goal("y", time_budget=2)),
    ):
        again = type(record).from_json(record.to_json())
        assert again == record
        assert again.to_json() == record.to_json()
    assert Usage(cost=1).cost == 1.0 and type(Usage(cost=1).cost) is float


def test_an_event_given_an_int_delay_writes_the_float_it_stands_for():
    """Events go into the audit log as JSON: ``InferenceRetry(delay=1)`` and ``delay=1.0``
    are equal and must be written alike."""
    from agents.records.codec import encode_value
    from agents.records.error_info import ErrorInfo
    from agents.records.events import InferenceRetry

    error = ErrorInfo(type="RateLimited", message="slow down")
    where = {"agent_id": "a", "execution_id": "e", "step": 1, "attempt": 1, "error": error}
    one = InferenceRetry(**where, delay=1)
    other = InferenceRetry(**where, delay=1.0)
    assert one == other
    assert encode_value(one.delay) == encode_value(other.delay) == 1.0
    assert json.dumps(encode_value(one.delay)) == "1.0"


def test_an_integer_too_large_for_a_float_field_is_a_decode_error():
    """A cost written as 400 digits is valid JSON but no float: it raised ``OverflowError``
    (found by the fuzz); now a ``StateDecodeError`` naming the field, and the record's own
    constructor says the same with a ``ValueError``."""
    from agents import Usage

    data = Usage().to_dict()
    data["cost"] = 10**400
    with pytest.raises(StateDecodeError, match="out of a number's range") as caught:
        Usage.from_dict(data)
    assert caught.value.path == "cost"
    with pytest.raises(ValueError, match="out of a float's range"):
        Usage(cost=10**400)


def test_a_document_decodes_after_a_record_that_failed_half_way():
    """``Document`` decodes its records with one context while none fails: one that failed
    inside a state (the state's conversation still what references refer to) is not used
    again — a step referring to a conversation is refused on its own, as before."""
    from agents.records.codec import Document

    state = make_loop(reply("hi")).run(initial())
    data = {key: value for key, value in to_dict(state).items() if key != "schema_version"}
    step = data["execution"]["step_executions"][0]
    assert step["step"]["input_messages"]["kind"] == "MessagesRef"
    document = Document()
    with pytest.raises(StateDecodeError):
        document.record({**data, "created_at": 5}, AgentState)  # after its context
    with pytest.raises(StateDecodeError, match="MessagesRef"):
        document.record(step, StepExecution)


def test_fields_decoded_one_by_one_share_nothing_but_what_no_record_changes():
    """``decode_field`` (an audit log's changes): a field that may hold records is decoded
    with a context of its own; the others share one, which stays as it was made — no
    decoded message kept in it, no reference, no nesting — whatever was decoded before."""
    from agents.records import decoding
    from agents.records.codec import decode_field

    state = make_loop(reply("hi")).run(initial())
    data = to_dict(state)
    context = decode_field(AgentState, "context", data["context"])
    assert context == state.context
    steps = data["execution"]["step_executions"]
    with pytest.raises(StateDecodeError, match="MessagesRef"):  # no conversation to refer to
        decode_field(ExecutionState, "step_executions", steps)
    assert decode_field(AgentState, "updated_at", data["updated_at"]) == state.updated_at
    shared = decoding._NO_RECORDS
    assert (shared.shared, shared.refs, shared.states, shared.paths) == ({}, None, 0, False)


def test_a_deeply_nested_value_anywhere_is_a_state_decode_error_naming_its_path():
    """A list nested 990 deep put in place of any value of an encoded state (a record's
    ``kind`` included, where the error quotes what it found) is a ``StateDecodeError``
    naming where — the field's path, or the line and column where the nesting passed what
    the JSON reader takes — never a ``RecursionError`` while the message is built."""
    from helpers import json_places

    final = make_loop(calls(call("add", a=1, b=2)), reply("3"), tools=[add]).run(initial())
    data = json.loads(final.to_json())
    nested = "[" * 990 + '"x"' + "]" * 990
    places = [path for path in json_places(data) if path]
    assert len(places) > 100
    for path in places:
        changed = json.loads(final.to_json())
        put_at(changed, path, "@@nested@@")
        text = json.dumps(changed).replace('"@@nested@@"', nested, 1)
        if path[-1] != "kind":
            with contextlib.suppress(StateDecodeError):  # metadata may hold any JSON
                AgentState.from_json(text)
            continue
        with pytest.raises(StateDecodeError) as info:
            AgentState.from_json(text)
        assert len(str(info.value)) < 500, path
        named = info.value.path != "$" or "line 1 column" in str(info.value)
        assert named or path == ("kind",), path  # the top one's is "$"


def test_reading_json_makes_no_decoder_per_document(monkeypatch):
    """One decoder reads every document: one made per call is a reference cycle with its
    scanner, left for the garbage collector (a regression over 1,000 logs grew by it)."""
    import json as stdlib_json

    from agents.records.json_text import loads

    made = []
    original = stdlib_json.JSONDecoder.__init__

    def counting(self, *args, **kwargs):
        made.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(stdlib_json.JSONDecoder, "__init__", counting)
    for text in ('{"a": [1, 2.5, "x"]}', b'{"b": null}', "[]"):
        loads(text)
    assert made == []
