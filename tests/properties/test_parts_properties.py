"""Parts in every path (docs/design/content.md): canonical JSON however a message was
made, states with parts round-trip byte for byte, and runs holding parts replay from their
audit logs, blobs included."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from helpers import add
from hypothesis import given
from hypothesis import strategies as st

from agents import AgentLoop, AgentState, AuditLog, Message, Role
from agents.cli import main
from agents.records.content import to_content
from agents.testing import ScriptedDriver, SequentialIds, TickingClock
from agents.testing.strategies import agent_states, contents, messages, scripts


@given(contents())
def test_a_message_is_written_alike_however_its_content_was_given(body):
    """As a list, as the content it makes, and read back: identical bytes."""
    made = Message(role=Role.USER, content=body)
    converted = Message(role=Role.USER, content=to_content(body))
    read = Message.from_json(made.to_json())
    assert made == converted == read
    assert made.to_json() == converted.to_json() == read.to_json()


@given(messages(with_parts=True))
def test_generated_messages_round_trip(message):
    assert Message.from_json(message.to_json()) == message


@given(agent_states([add], with_parts=True))
def test_states_with_parts_round_trip_byte_for_byte(state):
    text = state.to_json()
    read = AgentState.from_json(text)
    assert read == state and read.to_json() == text


@given(scripts([add], max_steps=4), contents())
def test_a_run_holding_parts_replays_from_its_audit_log(script, question):
    """The run's log, its blobs beside it, reads back as the state the run returned and
    replays (``agents replay --verify``) with exit 0; every blob is there and whole."""
    loop = AgentLoop(ScriptedDriver(script), tools=[add], clock=TickingClock(), ids=SequentialIds())
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "run.jsonl"
        with AuditLog.open(path, durability="none") as log:
            final = loop.with_listeners(log).run(AgentState.initial("s", messages=[question]))
        assert AuditLog.read(path).to_json() == final.to_json()
        AuditLog.verify(path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(["replay", "--verify", str(path)])
        assert code == 0, out.getvalue()
        read = AuditLog.read(path).messages[0].parts  # bytes from the folder beside the log
        for kept, given_part in zip(read, final.messages[0].parts, strict=True):
            if getattr(given_part, "blob", None) is not None:
                assert kept.data() == given_part.data()


@given(st.lists(contents(), min_size=1, max_size=3))
def test_equal_states_from_parts_give_identical_json(bodies):
    """A state built from the bodies, and the same state appended message by message."""
    whole = AgentState.initial("s", messages=[Message.user(b) for b in bodies])
    grown = AgentState.initial("s")
    for body in bodies:
        grown = grown.with_user_message(Message.user(body))
    assert whole.to_json() == grown.to_json()
