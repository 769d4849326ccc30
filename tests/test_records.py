"""Records (docs/design/records.md): frozen values, ``with_*`` transitions, the derived read API."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from helpers import add, explode, initial, make_loop
from pyrsistent import PMap, PVector

from agents import (
    AgentContext,
    AgentLoop,
    AgentState,
    ExecutionStatus,
    History,
    Message,
    MessageStore,
    Role,
    StepType,
    StopReason,
    StopSignal,
    ToolCall,
    Usage,
    tool,
)
from agents.testing import FunctionDriver, call, calls, reply


def test_records_are_frozen_slotted_and_keyword_only():
    """Records cannot be changed in place and take keyword arguments only."""
    message = Message.user("hi")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]
    assert not hasattr(message, "__dict__")
    with pytest.raises(TypeError):
        Message(Role.USER, "hi")  # type: ignore[misc]


def test_collections_are_converted_to_persistent_ones():
    """Lists and dicts passed in become PVector/PMap, deeply."""
    call_ = ToolCall(id="1", name="f", arguments={"items": [1, {"k": "v"}]})
    assert isinstance(call_.arguments, PMap)
    assert isinstance(call_.arguments["items"], PVector)
    assert isinstance(call_.arguments["items"][1], PMap)
    message = Message.assistant("x", [call_])
    assert isinstance(message.tool_calls, PVector)


def test_converters_keep_persistent_inputs_identical():
    """An existing PVector/PMap is kept as is, not copied."""
    call_ = ToolCall(id="1", name="f", arguments={"a": 1})
    again = ToolCall(id="2", name="f", arguments=call_.arguments)
    assert again.arguments is call_.arguments


def test_with_methods_return_the_same_instance_when_nothing_changes():
    """``new is old`` means nothing happened."""
    state = initial()
    assert state.with_system_prompt(state.context.system_prompt) is state
    assert state.with_messages(state.messages) is state
    assert state.for_next_execution() is state
    assert state.with_metadata("k", 1).with_metadata("k", 1) is not state
    changed = state.with_metadata("k", 1)
    assert changed.with_metadata("k", 1) is changed
    message = Message.user("x")
    assert message.with_content("x") is message


def test_with_methods_do_not_touch_the_original():
    """Transitions return new values and leave their inputs as they were."""
    state = initial()
    longer = state.with_user_message("second").with_system_prompt("new").with_metadata("a", 1)
    assert [m.content for m in state.messages] == ["hello"]
    assert [m.content for m in longer.messages] == ["hello", "second"]
    assert state.context.system_prompt == "You are a test agent."
    assert dict(state.metadata) == {}


def test_message_constructors():
    """Named constructors set the role and fields."""
    call_ = ToolCall(id="c", name="f")
    assert Message.system("s").role is Role.SYSTEM
    assert Message.assistant("a", [call_]).tool_calls[0] is call_
    tool_message = Message.tool("c", "f", "out")
    assert (tool_message.role, tool_message.tool_call_id, tool_message.name) == (
        Role.TOOL,
        "c",
        "f",
    )


def test_usage_adds_field_wise():
    """``a + b`` adds every field; total tokens are input plus output."""
    total = Usage(input_tokens=1, output_tokens=2, cache_read_tokens=1, cost=0.5) + Usage(
        input_tokens=10, output_tokens=20, cost=0.25
    )
    assert total == Usage(input_tokens=11, output_tokens=22, cache_read_tokens=1, cost=0.75)
    assert total.total_tokens == 33


def test_initial_state_is_pure():
    """``AgentState.initial`` reads no clock and makes no ids."""
    assert AgentState.initial("s", messages=["a"]) == AgentState.initial("s", messages=["a"])
    state = AgentState.initial()
    assert state.status is None
    assert state.should_stop
    assert state.step_count == 0
    assert state.final_response is None
    assert state.stop_reason is None


def test_read_api_of_a_finished_run():
    """The derived read API reflects the current execution."""
    usage = Usage(input_tokens=3, output_tokens=2, cost=0.01)
    final = make_loop(
        calls(call("add", a=1, b=2), call("explode"), usage=usage),
        calls(call("add", a=3, b=4), usage=usage),
        reply("  the end  ", usage=usage),
        tools=[add, explode],
    ).run(initial())
    assert final.status is ExecutionStatus.COMPLETED
    assert final.step_count == 3
    assert [s.step_type for s in final.steps] == [
        StepType.ERROR,
        StepType.TOOL_EXECUTION,
        StepType.FINAL_RESPONSE,
    ]
    assert [e.name for e in final.tool_executions] == ["add", "explode", "add"]
    assert final.last_tool_execution is final.tool_executions[-1]
    assert final.last_step is final.steps[-1]
    assert final.usage == Usage(input_tokens=9, output_tokens=6, cost=0.03)
    assert [e.type for e in final.errors] == ["RuntimeError"]
    assert final.stop_reason is StopReason.COMPLETED
    assert final.final_response == "  the end  "
    assert final.should_stop
    assert final.execution_duration is not None and final.execution_duration > 0
    step_execution = final.step_executions[0]
    assert step_execution.duration > 0
    assert step_execution.usage == usage
    assert final.steps[0].requested_tool_calls[1].name == "explode"
    assert [c.name for c in final.steps[0].executed_tool_calls] == ["add", "explode"]


def test_final_response_is_none_for_blank_or_non_final_steps():
    """Blank answers and tool steps have no final response."""
    assert make_loop(reply("   ")).run(initial()).final_response is None
    stopped = make_loop(call("add", a=1, b=1), reply("x"), max_steps=1).run(initial())
    assert stopped.final_response is None


def test_should_stop_follows_the_chain():
    """No execution: stop; in progress with nothing: go on; a signal: stop; continued: go on."""
    state = initial()
    assert state.should_stop
    running = make_loop(call("add", a=1, b=1), reply("x"))
    middle = next(iter(running.iterate(initial())))
    assert middle.status is ExecutionStatus.IN_PROGRESS
    assert not middle.should_stop
    signalled = middle.with_stop_signal(StopSignal(reason=StopReason.STOP_REQUESTED))
    assert signalled.should_stop
    assert not signalled.with_execution_continued().should_stop


def test_with_stop_signal_without_execution_creates_a_pending_one():
    """A signal on a fresh state creates a PENDING execution that has no id yet."""
    state = initial().with_stop_signal(StopSignal(reason=StopReason.USER_REQUESTED))
    assert state.status is ExecutionStatus.PENDING
    assert state.execution.execution_id is None
    assert initial().with_execution_continued().status is ExecutionStatus.PENDING


def test_message_store_sections():
    """The store has messages, buffer and summary; the model sees summary and buffer first."""
    store = (
        MessageStore(messages=[Message.user("m")])
        .with_section("summary", [Message.system("earlier: ...")])
        .with_message(Message.user("b"), "buffer")
    )
    context = AgentContext(store=store, system_prompt="sys")
    assert [m.content for m in context.compile()] == ["sys", "earlier: ...", "b", "m"]
    with pytest.raises(Exception, match="unknown message section"):
        store.section("scratch")


class TestHistory:
    """``History``: an immutable sequence that is cheap to append to and to share."""

    def test_behaves_like_a_sequence(self):
        """Indexing, slicing, iteration, reversal and equality with other sequences."""
        items = History(range(100))
        assert len(items) == 100
        assert items[0] == 0 and items[-1] == 99 and items[37] == 37
        assert list(items[10:13]) == [10, 11, 12]
        assert list(reversed(items))[:2] == [99, 98]
        assert items == list(range(100))
        assert items != list(range(99))
        assert hash(items) == hash(History(range(100)))
        with pytest.raises(IndexError):
            items[100]

    def test_append_shares_structure_and_keeps_the_original(self):
        """Appending leaves the original intact and shares full chunks."""
        base = History(range(64))
        longer = base.append(64)
        assert len(base) == 64 and len(longer) == 65
        assert longer._chunks is base._chunks
        assert list(longer) == list(range(65))

    def test_head_prefix_and_is_prefix_of(self):
        """A head in front of a shared body; prefixes share chunks."""
        body = History(range(70))
        with_head = body.with_head(("h",))
        assert list(with_head)[:2] == ["h", 0]
        assert len(with_head) == 71
        assert with_head.body() == body
        prefix = body.prefix(40)
        assert list(prefix) == list(range(40))
        assert prefix.is_prefix_of(body)
        assert History(range(1, 41)).is_prefix_of(body) is False
        assert prefix.with_head(("h",)).is_prefix_of(body) is False  # a head: not head-less
        assert prefix.with_head(("h",)).body_is_prefix_of(with_head)  # its body: is
        assert with_head.body_is_prefix_of(body) and body.body_is_prefix_of(with_head)
        assert body.append(70).body_is_prefix_of(with_head) is False
        assert History(range(1, 41)).with_head(("h",)).body_is_prefix_of(body) is False
        assert body.prefix(0) == []
        assert body.last() == 69 and History().last() is None

    def test_grew_by_is_the_earlier_history_and_the_same_objects_after_it(self):
        """What the audit log asks of a step's conversation: the one before it, and the
        step's messages (the objects themselves) after it, and nothing else."""
        one, two = object(), object()
        for length in (0, 5, 31, 32, 33, 63, 64):  # the new items in the tail, or across
            earlier = History([object() for _ in range(length)])
            grown = earlier.append(one).append(two)
            assert grown.grew_by(earlier, [one, two])
            assert grown.append(object()).grew_by(earlier, [one, two]) is False
            assert grown.grew_by(earlier, [two, one]) is False
            assert grown.grew_by(earlier, [one]) is False
            assert earlier.grew_by(earlier, []) is False  # nothing added is no growth
            other = History([object() for _ in range(length)])
            assert other.append(one).append(two).grew_by(earlier, [one, two]) is bool(length == 0)
            assert grown.with_head(("h",)).grew_by(earlier, [one, two]) is False
            assert grown.grew_by(earlier.with_head(("h",)), [one, two]) is False
        assert History(["a", "b"]).grew_by(History(["a"]), ["b"])
        made = "".join(["b", "b"])  # "bb", another object
        assert History(["a", made]).grew_by(History(["a"]), ["bb"]) is False


def test_generated_record_code_shows_its_source_in_tracebacks():
    """The fast constructors generated for records are registered with ``linecache`` (as
    attrs does for its methods): a traceback through one shows the line, not ``<string>``."""
    import traceback

    from agents.records.record import updater
    from agents.records.usage import Usage

    update = updater(Usage, "cost")
    with pytest.raises(AttributeError) as caught:
        update(object(), 1.0)  # not a Usage: the generated body fails reading its fields
    text = "".join(traceback.format_exception(caught.value))
    assert '"<agents generated update agents.records.usage.Usage' in text
    assert "_set_input_tokens(new, self.input_tokens)" in text


NOT_JSON = [  # (a value, where the error says it is)
    ({1, 2}, "a value of type 'set' is not JSON at the top"),
    ({"a": [1, frozenset()]}, "a value of type 'frozenset' is not JSON at .a[1]"),
    (b"raw", "a value of type 'bytes' is not JSON at the top"),
    ({"when": object()}, "a value of type 'object' is not JSON at .when"),
    ({1: "a"}, "a key that is not a string (int 1) at the top"),
    ({"a": {("x", 1): "b"}}, "a key that is not a string (tuple ('x', 1)) at .a"),
]


@pytest.mark.parametrize(("value", "said"), NOT_JSON)
def test_records_refuse_what_json_cannot_write(value, said):
    """Metadata, tool-call arguments and every other JSON value a record holds refuse a set,
    bytes, an object or a key that is not a string where it enters (a ``ValueError`` saying
    where); they were taken, and the state's ``to_json`` raised ``TypeError`` later — or
    wrote ``{1: "a"}`` as ``{"1": "a"}``, which reads back as another value."""
    with pytest.raises(ValueError, match="is not") as refused:
        initial().with_metadata("k", value)
    assert str(refused.value) == said
    with pytest.raises(ValueError, match="is not"):
        ToolCall(id="c1", name="add", arguments={"a": value})


def test_a_str_enum_key_is_kept_as_its_text():
    """A ``StrEnum`` member as a map's key (a tool's ``{Status.OK: 3}``) is the text JSON
    writes for it, so the record reads back equal; it was refused ("a key that is not a
    string"), in a dict and in a pyrsistent map alike, while the same member as a value
    was taken."""
    import enum

    from pyrsistent import pmap

    class Status(enum.StrEnum):
        OK = "ok"

    for given in ({Status.OK: 3}, pmap({Status.OK: 3}), {"inner": {Status.OK: [3]}}):
        state = initial().with_metadata("k", given)
        held = state.metadata["k"]
        keys = held["inner"].keys() if "inner" in held else held.keys()
        assert [type(key) for key in keys] == [str]
        assert AgentState.from_json(state.to_json()) == state
        call_ = ToolCall(id="c1", name="add", arguments={"a": given})
        assert ToolCall.from_json(call_.to_json()) == call_


@pytest.mark.parametrize(("value", "said"), NOT_JSON)
def test_persistent_maps_and_vectors_are_checked_as_plain_ones(value, said):
    """A ``PMap`` or ``PVector`` built by the user with pyrsistent holds anything: it used to
    be taken as it was (frozen already, it seemed) — a set or bytes then failed ``to_json``,
    ``{1: "a"}`` was written as ``{"1": "a"}`` (read back as another value), a map nested
    200 deep was written and could then not be read. Now it is checked as a dict or a list
    is, with the same error and the same depth limit."""
    from pyrsistent import pmap, pvector

    with pytest.raises(ValueError, match="is not") as refused:
        initial().with_metadata("k", pmap(value) if isinstance(value, dict) else pvector([value]))
    expected = said if isinstance(value, dict) else said.replace("the top", "[0]")
    assert str(refused.value) == expected
    with pytest.raises(ValueError, match="is not"):
        ToolCall(id="c1", name="add", arguments=pmap({"a": value}))
    with pytest.raises(ValueError, match="is not"):
        Message(role=Role.USER, content="x", metadata=pmap({"a": pvector([value])}))


def test_a_persistent_map_holding_mutable_or_deep_values_is_frozen_or_refused():
    """Inside a ``PMap``: a dict or a list becomes frozen (the record is hashable and
    equal to one built from plain values, the same object kept when nothing needed
    freezing), nesting has the same limit as a dict's, and ``NaN`` is refused."""
    from pyrsistent import pmap

    from agents.records.frozen import MAX_DEPTH

    loose = pmap({"a": {"b": [1, {"c": 2}]}})
    call = ToolCall(id="c1", name="add", arguments=loose)
    assert call == ToolCall(id="c1", name="add", arguments={"a": {"b": [1, {"c": 2}]}})
    hash(call)
    frozen = call.arguments
    assert ToolCall(id="c1", name="add", arguments=frozen).arguments is frozen

    def nested(depth, make):
        value = 1
        for _ in range(depth):
            value = make({"x": value})
        return value

    for depth in (MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
        outcomes = []
        for make in (dict, pmap):
            try:
                Message(role=Role.USER, content="x", metadata=nested(depth, make))
                outcomes.append("taken")
            except ValueError as exc:
                outcomes.append(str(exc).split(" at ")[0])
        assert outcomes[0] == outcomes[1], depth
    with pytest.raises(ValueError, match="nested deeper than"):
        Message.user("x").with_metadata("k", nested(3 * MAX_DEPTH, pmap))
    with pytest.raises(ValueError, match=r"nan is not a JSON number at \.a"):
        ToolCall(id="c1", name="add", arguments=pmap({"a": float("nan")}))


def test_a_model_answer_holding_what_json_cannot_write_fails_the_run_not_its_state():
    """A model whose tool call holds a set: the run fails with the error recorded, and its
    state encodes and reads back equal (it completed with a state ``to_json`` refused)."""

    def model(request):
        return [ToolCall(id="c1", name="add", arguments={"a": {1, 2}, "b": 1})]

    final = AgentLoop(FunctionDriver(model), tools=[add]).run(initial())
    assert final.status is ExecutionStatus.FAILED
    assert final.execution.error.message == "a value of type 'set' is not JSON at .a"
    assert AgentState.from_json(final.to_json()) == final


def _unchanged_cases():
    from datetime import UTC, datetime

    from agents import ErrorInfo, InferenceRequest, InferenceResponse
    from agents.records.step import ToolExecution

    at = datetime(2026, 1, 1, tzinfo=UTC)
    call_ = ToolCall(id="c1", name="add", arguments={"a": 1})
    execution = ToolExecution(
        id="t1", tool_call=call_, value={"n": [1, 2]}, started_at=at, completed_at=at
    )
    request = InferenceRequest(messages=[Message.user("x")], tools=[], options={"t": 1})
    response = InferenceResponse(content="", tool_calls=[call_], finish_reason="tool_calls")
    state = initial().with_metadata("k", {"n": 1}).with_llm_config(temperature=0.5)
    return [
        (
            "Message.with_metadata",
            Message.user("x").with_metadata("k", 1),
            lambda r: r.with_metadata("k", 1),
            lambda r: r.with_metadata("k", True),
        ),
        (
            "AgentState.with_metadata",
            state,
            lambda r: r.with_metadata("k", {"n": 1}),
            lambda r: r.with_metadata("k", {"n": 1.0}),
        ),
        (
            "AgentContext.with_metadata",
            state.context,
            lambda r: r.with_metadata("k", {"n": 1}),
            lambda r: r.with_metadata("k", {"n": True}),
        ),
        (
            "AgentState.with_llm_config",
            state,
            lambda r: r.with_llm_config(temperature=0.5),
            lambda r: r.with_llm_config(top_p=1),
        ),
        (
            "AgentState.with_response_format",
            state.with_response_format({"type": "object"}),
            lambda r: r.with_response_format({"type": "object"}),
            lambda r: r.with_response_format({"type": "array"}),
        ),
        (
            "InferenceRequest.with_options",
            request,
            lambda r: r.with_options(t=1),
            lambda r: r.with_options(t=1.0),
        ),
        (
            "InferenceRequest.with_messages",
            request,
            lambda r: r.with_messages(list(r.messages)),
            lambda r: r.with_messages([Message.user("y")]),
        ),
        (
            "InferenceResponse.with_tool_calls",
            response,
            lambda r: r.with_tool_calls(list(r.tool_calls)),
            lambda r: r.with_tool_calls([]),
        ),
        (
            "ToolExecution.with_value",
            execution,
            lambda r: r.with_value({"n": [1, 2]}),
            lambda r: r.with_value({"n": (1, 2.0)}),
        ),
        (
            "ToolExecution.with_completed_at",
            execution,
            lambda r: r.with_completed_at(at),
            lambda r: r.with_completed_at(at.replace(second=1)),
        ),
        (
            "ErrorInfo.with_details",
            ErrorInfo(type="E", message="m", details={"d": 1}),
            lambda r: r.with_details({"d": 1}),
            lambda r: r.with_details({"d": False}),
        ),
    ]


@pytest.mark.parametrize(
    ("name", "record", "same", "other"),
    _unchanged_cases(),
    ids=lambda c: c if isinstance(c, str) else "",
)
def test_a_with_method_that_changes_nothing_gives_back_the_record_itself(name, record, same, other):
    """docs/design/records.md: a ``with_*`` method returns the same instance when nothing changes
    (these made a copy each time); a value equal in Python but written otherwise (``1`` and
    ``True``, ``1`` and ``1.0``) is a change, kept as given (``AgentState.with_metadata``
    kept the old value for it)."""
    assert same(record) is record, name
    changed = other(record)
    assert changed is not record and changed.to_json() != record.to_json(), name


def test_a_tuple_a_tool_returns_reads_back_equal():
    """A tool returning a tuple (as Python functions often do), a tuple in metadata: held
    as a ``PVector``, so the state reads back from its JSON equal to itself (the tuple was
    kept, and read back as a ``PVector``: the state was not equal to its own round trip)."""

    @tool
    def pair(a: int) -> list[int]:
        """Two of a number."""
        return (a, a)  # type: ignore[return-value]

    final = make_loop(call("pair", a=1), reply("ok"), tools=[pair]).run(initial())
    assert final.tool_executions[0].value == [1, 1]
    assert AgentState.from_json(final.to_json()) == final
    state = initial().with_metadata("k", {"point": (1, (2, 3))})
    assert AgentState.from_json(state.to_json()) == state


def test_json_like_mappings_sequences_and_scalar_subclasses_are_taken():
    """A ``defaultdict``, an ``OrderedDict``, a read-only mapping, a tuple subclass and an
    ``IntEnum`` are JSON all the same: frozen as the plain values are."""
    import collections
    import enum
    import types

    class Level(enum.IntEnum):
        HIGH = 2

    Point = collections.namedtuple("Point", "x y")
    value = {
        "counts": collections.defaultdict(int, {"a": 1}),
        "ordered": collections.OrderedDict(b=[1, 2]),
        "proxy": types.MappingProxyType({"c": True}),
        "point": Point(1, 2),
        "level": Level.HIGH,
    }
    state = initial().with_metadata("k", value)
    plain = {"counts": {"a": 1}, "ordered": {"b": [1, 2]}, "proxy": {"c": True}}
    assert state.with_metadata("k", {**plain, "point": [1, 2], "level": 2}).to_json() == (
        state.to_json()
    )


def _misuses() -> list[tuple[str, Any]]:
    state = initial()
    return [
        ("with_system_prompt(3)", lambda: state.with_system_prompt(3)),
        ("with_message('text')", lambda: state.with_message("text")),
        ("with_messages([3])", lambda: state.with_messages([Message.user("a"), 3])),
        ("with_metadata(3, 'x')", lambda: state.with_metadata(3, "x")),
        ("with_goal('x')", lambda: state.with_goal("finish")),
        ("with_context(None)", lambda: state.with_context(None)),
        ("with_execution(3)", lambda: state.with_execution(3)),
        ("with_stop_signal('x')", lambda: state.with_stop_signal("stop")),
        ("context.with_steering(3)", lambda: state.context.with_steering(3)),
        ("context.with_appended([None])", lambda: state.context.with_appended([None])),
        ("at_step(1.5)", lambda: state.at_step(1.5)),
        ("timeline('1')", lambda: state.timeline("1")),
        ("from_json(3)", lambda: AgentState.from_json(3)),
    ]


@pytest.mark.parametrize(("call_", "misuse"), _misuses(), ids=[m for m, _ in _misuses()])
def test_with_methods_refuse_what_a_state_cannot_hold(call_, misuse):
    """A ``with_*`` method given something else than what the state holds there raises
    ``TypeError``: it was taken, and the state encoded but could not be read back (a
    stored session no one could load), or failed later with an unrelated error."""
    with pytest.raises(TypeError, match=r"takes|is a str"):
        misuse()


def test_a_state_the_with_methods_make_reads_back_equal():
    """What the ``with_*`` methods still take, reads back equal."""
    state = (
        initial()
        .with_system_prompt("Be brief.")
        .with_message(Message.assistant("hi"))
        .with_messages([Message.user("a"), Message.assistant("b")])
        .with_metadata("k", {"a": [1]})
        .with_steering_message("hurry")
        .with_follow_up("then this")
    )
    assert AgentState.from_json(state.to_json()) == state
    assert AgentState.from_json(bytearray(state.to_json().encode())) == state


def test_with_user_message_takes_a_user_message_only():
    """A ``Message`` of another role given to ``with_user_message`` was appended as it was:
    ``with_user_message(Message.assistant("ok"))`` put words in the model's mouth, and a
    run went on as if it had said them. Refused; ``with_message`` appends any role."""
    from agents import InvalidArgument, Message

    state = AgentState.initial("s")
    for message in (Message.assistant("ok"), Message.system("x"), Message.tool("c", "t", "1")):
        with pytest.raises(InvalidArgument, match=f"takes no {message.role.value} message"):
            state.with_user_message(message)
        assert state.with_message(message).messages[-1] is message
    user = Message.user("hi")
    assert state.with_user_message(user).messages[-1] is user
    assert state.with_user_message("hi").messages[-1] == user
