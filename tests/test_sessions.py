"""Sessions (docs/design/sessions.md): one contract for every store, the runtime, crashes and
races."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import weakref
from pathlib import Path

import pytest
from helpers import BlockingAsyncStore, add, echo, initial, make_loop
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import (
    AgentLoop,
    AgentState,
    AsyncPostgresSessionStore,
    FunctionDriver,
    History,
    HookTrigger,
    InferenceResponse,
    InMemorySessionStore,
    PostgresSessionStore,
    SessionConflict,
    SessionNotFound,
    SessionRuntime,
    SQLiteSessionStore,
    StateDecodeError,
    Summarization,
    TokenWindowCompiler,
    ToolCall,
    hook,
    tool,
)
from agents.records.compiled import replace_fields
from agents.testing import SequentialIds, TickingClock, call, calls, reply

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["memory", "sqlite", "postgres", "postgres-async"])
def store(request, tmp_path):
    options = {"clock": TickingClock(), "ids": SequentialIds()}
    if request.param == "memory":
        yield InMemorySessionStore(**options)
        return
    if request.param == "postgres-async":
        opened = BlockingAsyncStore(request.getfixturevalue("postgres_dsn"), **options)
        yield opened
        opened.close()
        return
    if request.param == "postgres":
        opened = PostgresSessionStore(request.getfixturevalue("postgres_dsn"), **options)
    else:
        opened = SQLiteSessionStore(tmp_path / "sessions.db", **options)
    yield opened
    opened.close()


def finished_state() -> AgentState:
    return make_loop(
        calls(call("add", a=1, b=2), call("echo", text="x")), reply("done"), tools=[add, echo]
    ).run(initial())


# -- the store contract -------------------------------------------------------------------


def test_create_load_round_trip(store):
    """A created session loads back with version 1 and the same state."""
    state = finished_state()
    created = store.create(state, session_id="s-1")
    assert created.version == 1
    loaded = store.load("s-1")
    assert loaded.state == state
    assert loaded.version == 1 and loaded.created_at == created.created_at


def test_save_bumps_the_version_and_stale_writes_conflict(store):
    """A write from the stored version wins; one from an older version changes nothing."""
    session = store.create(initial(), session_id="s-1")
    newer = store.save(session.with_state(session.state.with_user_message("second")))
    assert newer.version == 2
    with pytest.raises(SessionConflict, match="version 2"):
        store.save(session.with_state(session.state.with_user_message("stale")))
    assert [m.content for m in store.load("s-1").state.messages] == ["hello", "second"]


def test_a_write_based_on_a_session_deleted_and_created_again_conflicts(store):
    """Versions start at 1 again when a session is deleted and created again with the same
    id: a write based on the old session's version is refused (it wrote over the new
    session before) and the new session stays as it is."""
    old = store.create(initial(), session_id="s-1")
    store.delete("s-1")
    new = store.create(AgentState.initial(messages=["another"]), session_id="s-1")
    assert new.version == old.version
    with pytest.raises(SessionConflict, match="deleted and created again"):
        store.save(old.with_state(old.state.with_user_message("stale")))
    assert [m.content for m in store.load("s-1").state.messages] == ["another"]
    newer = store.save(new.with_state(new.state.with_user_message("more")))
    assert newer.version == 2


def test_a_save_with_events_commits_both_or_neither(store):
    """``save_with_events`` (the server's checkpoints): the session and its events in one
    write, numbered after the events before; a conflicting save writes no event either."""
    if not hasattr(store, "save_with_events"):
        pytest.skip("the asyncio PostgreSQL store keeps no event logs")
    session = store.create(initial(), session_id="s-1")
    store.append_events("s-1", ['{"type":"A"}'])
    state = session.state.with_user_message("second")
    saved, numbers = store.save_with_events(session.with_state(state), ['{"type":"B"}', "{}"])
    assert saved.version == 2 and list(numbers) == [2, 3]
    assert store.load("s-1").state == state
    with pytest.raises(SessionConflict):
        store.save_with_events(session.with_state(state), ['{"type":"C"}'])
    assert [text for _, text in store.events("s-1")] == ['{"type":"A"}', '{"type":"B"}', "{}"]
    assert store.save_with_events(saved, [])[1] == []  # no events: a plain save
    assert store.load("s-1").version == 3


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_writers_of_one_sessions_events_on_two_connections_take_turns(kind, tmp_path, request):
    """Two processes append events to one session's log at once (two servers, say): every
    append is written, numbered one after the other. (PostgreSQL's writers read the same
    last number and collided on the log's key: the loser's events were refused, as a
    "concurrent write", though nothing conflicted.)"""

    def opened() -> SQLiteSessionStore | PostgresSessionStore:
        if kind == "postgres":
            return PostgresSessionStore(request.getfixturevalue("postgres_dsn"))
        return SQLiteSessionStore(tmp_path / "events.db")

    first, second = opened(), opened()
    session = first.create(initial(), session_id="s").session_id
    failures: list[BaseException] = []

    def append(store: SQLiteSessionStore | PostgresSessionStore, tag: str) -> None:
        for index in range(60):
            try:
                if index % 2:
                    store.append_events(session, [f'{{"type":"{tag}{index}"}}', "{}"])
                else:
                    batch = [(session, [f'{{"type":"{tag}{index}"}}', "{}"])]
                    store.append_event_batches(batch)
            except BaseException as exc:  # every failure reported below
                failures.append(exc)

    writers = [
        threading.Thread(target=append, args=(s, t)) for s, t in ((first, "A"), (second, "B"))
    ]
    try:
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        assert failures == []
        numbers = [number for number, _ in first.events(session, limit=1000)]
        assert numbers == list(range(1, 241))
    finally:
        first.close()
        second.close()


def test_unknown_sessions_and_duplicates(store):
    """Unknown ids raise SessionNotFound; creating an existing id conflicts."""
    with pytest.raises(SessionNotFound):
        store.load("nope")
    with pytest.raises(SessionNotFound):
        store.delete("nope")
    store.create(initial(), session_id="s-1")
    with pytest.raises(SessionConflict):
        store.create(initial(), session_id="s-1")


def test_exists_tells_a_stored_session_without_loading_it(store):
    """``exists``: true once created, false for an unknown id, an id no store can keep,
    and once deleted."""
    assert not store.exists("e-1") and not store.exists("a\x00b")
    store.create(initial(), session_id="e-1")
    assert store.exists("e-1")
    store.delete("e-1")
    assert not store.exists("e-1")


def test_list_gives_headers_and_delete_removes(store):
    """``list`` returns headers without states; ``delete`` forgets a session."""
    store.create(initial(), session_id="a")
    store.create(initial(), session_id="b", parent_session_id="a")
    headers = store.list()
    assert sorted(h.session_id for h in headers) == ["a", "b"]
    assert all(h.state is None for h in headers)
    assert {h.session_id: h.parent_session_id for h in headers}["b"] == "a"
    store.delete("a")
    assert [h.session_id for h in store.list()] == ["b"]


def test_racing_writers_one_wins_per_version(store):
    """20 writers from the same version: exactly one wins, the others conflict."""
    base = store.create(initial(), session_id="race")
    outcomes: list[str] = []
    lock = threading.Lock()

    def write(index: int) -> None:
        try:
            store.save(base.with_state(base.state.with_metadata("writer", index)))
            result = "won"
        except SessionConflict:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("won") == 1 and outcomes.count("conflict") == 19
    assert store.load("race").version == 2


def test_async_store_writers_on_separate_connections_race(postgres_dsn):
    """20 coroutines, each with its own connection, save from the same version: the row
    lock serialises them and exactly one wins."""

    async def scenario():
        first = await AsyncPostgresSessionStore.open(postgres_dsn)
        base = await first.create(initial(), session_id="race")
        stores = [await AsyncPostgresSessionStore.open(postgres_dsn) for _ in range(20)]

        async def write(store, index):
            try:
                await store.save(base.with_state(base.state.with_metadata("writer", index)))
                return "won"
            except SessionConflict:
                return "conflict"

        outcomes = await asyncio.gather(*(write(s, i) for i, s in enumerate(stores)))
        loaded = await first.load("race")
        for store in [first, *stores]:
            await store.close()
        return outcomes, loaded

    outcomes, loaded = asyncio.run(scenario())
    assert outcomes.count("won") == 1 and outcomes.count("conflict") == 19
    assert loaded.version == 2
    winner = outcomes.index("won")
    assert loaded.state.metadata["writer"] == winner


def test_async_store_must_be_opened(postgres_dsn):
    store = AsyncPostgresSessionStore(postgres_dsn)
    with pytest.raises(RuntimeError, match="not open"):
        asyncio.run(store.load("x"))


# -- the runtime --------------------------------------------------------------------------


def runtime_for(store, *script):
    def loop_factory(session):
        return make_loop(*script, tools=[add, echo], ids=SequentialIds("r-"))

    return SessionRuntime(store, loop_factory, ids=SequentialIds("rt-"))


def test_send_commits_and_checkpoints_every_step(store):
    """``send`` runs the agent; every step was committed on the way (versions count them)."""
    runtime = runtime_for(store, call("add", a=1, b=1), call("add", a=2, b=2), reply("done"))
    session = runtime.create(AgentState.initial("sys"), session_id="chat")
    final = runtime.send("chat", "hi")
    assert final.state.final_response == "done"
    # create (1) + user message (2) + two checkpoints (3, 4) + the final state (5)
    assert final.version == 5
    assert runtime.get("chat").state == final.state
    assert session.version == 1
    again = runtime_for(store, reply("second answer"))
    assert again.send("chat", "more").state.final_response == "second answer"
    assert [m.content for m in runtime.get("chat").state.messages][-2:] == ["more", "second answer"]


def counting_model(calls: int, first: int = 0):
    """A model asking for ``calls`` additions (``a`` from ``first`` on), then answering
    "done"; asked for a summary, it writes one."""
    planned = [
        [ToolCall(id=f"c{n}", name="add", arguments={"a": n, "b": 1})]
        for n in range(first, first + calls)
    ]
    answers = iter([*planned, "done"])

    def model(request):
        if request.messages[0].content.startswith("You compress"):
            return InferenceResponse(content=f"summary of {len(request.messages[1].content)}")
        return next(answers)

    return model


def compacting_loop(model, max_message: int, max_buffer: int, **options) -> AgentLoop:
    """A loop over ``model`` with ``add``, one token a message, and summaries."""
    options.setdefault("ids", SequentialIds("r-"))
    options.setdefault("clock", TickingClock())
    return AgentLoop(
        FunctionDriver(model),
        tools=[add],
        compaction=Summarization(max_message, max_buffer, count=lambda message: 1),
        **options,
    )


def test_a_compacting_agent_checkpoints_and_loads_back_exactly(store):
    """Compaction moves messages out of the conversation and rewrites the head under the
    stored steps: every checkpoint must still load back as the state that was saved."""
    model = counting_model(6)
    runtime = SessionRuntime(
        store, lambda session: compacting_loop(model, 4, 2), ids=SequentialIds("rt-")
    )
    runtime.create(AgentState.initial("sys"), session_id="long")
    final = runtime.send("long", "count")
    assert final.state.final_response == "done"
    assert any(s.compaction is not None and s.compaction.summarizing for s in final.state.steps)
    loaded = runtime.get("long").state
    assert loaded == final.state
    assert loaded.to_json() == final.state.to_json()


@pytest.mark.parametrize("window", [None, 6])
def test_every_checkpoint_loads_back_when_the_sections_change_under_the_stored_steps(store, window):
    """Saved after every step while compaction moves messages, summaries replace the
    buffer, a hook changes the system prompt and (with a window) some steps are stored
    whole: each save loads back as exactly the state saved."""

    @hook(HookTrigger.AFTER_STEP)
    def new_prompt_at_step_5(context):
        if context.state.step_count == 4:  # the step being finished is the fifth
            return context.with_state(context.state.with_system_prompt("sys, again"))
        return context

    loop = compacting_loop(
        counting_model(9),
        5,
        3,
        hooks=[new_prompt_at_step_5],
        message_compiler=None if window is None else TokenWindowCompiler(window, lambda m: 1),
    )
    session = store.create(AgentState.initial("sys", messages=["count"]), session_id="long")
    for state in loop.iterate(session.state):
        session = store.save(session.with_state(state))
        loaded = store.load("long").state
        assert loaded == state, state.step_count
        assert loaded.to_json() == state.to_json()
    assert state.final_response == "done"
    assert state.context.system_prompt == "sys, again"
    assert any(s.compaction is not None and s.compaction.summarizing for s in state.steps)


def test_rows_referring_to_old_sections_are_rewritten_even_when_the_last_row_is_whole(store):
    """A windowed step is stored whole, the steps before it as references into the
    conversation; a new system prompt changes what those references mean: the store
    rewrites them, whatever the last row looks like."""
    script = [call("add", a=i, b=1) for i in range(5)] + [reply("done")]
    loop = make_loop(*script, message_compiler=TokenWindowCompiler(8, lambda message: 1))
    final = loop.run(AgentState.initial("sys", messages=["go"]))
    assert final.steps[0].conversation_length is None  # sent whole: stored as a reference
    assert final.steps[-1].conversation_length is not None  # a window: stored whole
    session = store.create(final, session_id="s-1")
    changed = final.with_system_prompt("another prompt")
    store.save(session.with_state(changed))
    assert store.load("s-1").state == changed


@settings(max_examples=30, deadline=None)
@given(
    lookups=st.integers(min_value=0, max_value=9),
    max_message=st.integers(min_value=1, max_value=8),
    max_buffer=st.integers(min_value=0, max_value=6),
    window=st.none() | st.integers(min_value=2, max_value=10),
    saves=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_any_compaction_and_save_cadence_loads_back_exactly(
    lookups, max_message, max_buffer, window, saves
):
    """SQLite, saving after the steps ``saves`` picks (several compactions may happen
    between two saves): every save loads back as the state saved."""
    loop = compacting_loop(
        counting_model(lookups),
        max_message,
        max_buffer,
        message_compiler=None if window is None else TokenWindowCompiler(window, lambda m: 1),
    )
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteSessionStore(Path(folder) / "s.db")
        session = store.create(AgentState.initial("sys", messages=["count"]), session_id="s")
        for number, state in enumerate(loop.iterate(session.state)):
            if saves[number % len(saves)] or state.status.terminal:
                session = store.save(session.with_state(state))
                assert store.load("s").state == state
        assert state.final_response == "done"
        store.close()


def test_a_rewound_run_that_goes_on_differently_replaces_the_stored_steps(store):
    """Rewound to step 3 and run on with other answers (the same execution, more steps than
    stored, compaction changing the sections): no stored step of the first run survives."""
    first = compacting_loop(counting_model(9), 4, 2)
    session = store.create(AgentState.initial("sys", messages=["count"]), session_id="s")
    for state in first.iterate(session.state):
        if state.step_count == 8:
            session = store.save(session.with_state(state))
            break
    again = compacting_loop(counting_model(9, first=100), 4, 2, ids=SequentialIds("again-"))
    other = again.run(state.at_step(3))
    assert other.step_count > 8
    assert other.execution.execution_id == state.execution.execution_id
    store.save(session.with_state(other))
    assert store.load("s").state == other


def test_a_compacting_session_writes_each_step_row_about_twice(tmp_path):
    """Compaction changes the sections under the stored steps at almost every step; the
    store rewrites only the rows written as references, not the whole history."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE step_writes (number INTEGER);"
        "CREATE TRIGGER counted_insert AFTER INSERT ON steps "
        "BEGIN INSERT INTO step_writes VALUES (new.number); END;"
        "CREATE TRIGGER counted_update AFTER UPDATE ON steps "
        "BEGIN INSERT INTO step_writes VALUES (new.number); END;"
    )
    db.commit()
    steps = 40
    model = counting_model(steps - 1)
    runtime = SessionRuntime(store, lambda session: compacting_loop(model, 6, 4, max_steps=steps))
    runtime.create(AgentState.initial("sys"), session_id="long")
    final = runtime.send("long", "count").state
    assert final.step_count == steps and runtime.get("long").state == final
    writes = db.execute("SELECT COUNT(*) FROM step_writes").fetchone()[0]
    assert writes <= 3 * steps, writes  # all rows at every checkpoint would be ~steps**2 / 2
    store.close()


def test_fork_and_resume(store):
    """``fork`` starts a child session from a step; ``resume`` of a finished one is a no-op."""
    runtime = runtime_for(store, call("add", a=1, b=1), reply("done"))
    runtime.create(session_id="chat")
    finished = runtime.send("chat", "hi")
    assert runtime.resume("chat") == finished
    child = runtime.fork("chat", at_step=1)
    assert child.parent_session_id == "chat"
    assert child.state.step_count == 1
    resumed = runtime_for(store, reply("from the fork")).resume(child.session_id)
    assert resumed.state.final_response == "from the fork"


def test_sqlite_checkpoints_write_one_step_row(tmp_path):
    """A checkpoint adds a step row and the new messages, not the whole history."""
    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = runtime_for(store, *[call("add", a=i, b=1) for i in range(5)], reply("done"))
    runtime.create(session_id="chat")
    runtime.send("chat", "go")
    db = sqlite3.connect(tmp_path / "s.db")
    steps = db.execute("SELECT data FROM steps WHERE session_id = 'chat'").fetchall()
    assert len(steps) == 6
    inputs = [json.loads(row[0])["step"]["input_messages"] for row in steps]
    assert all(i["kind"] == "LogRef" for i in inputs)
    # the conversation so far: one range of the message log
    assert [i["parts"] for i in inputs] == [[[0, 1 + 2 * k]] for k in range(6)]
    count = db.execute("SELECT COUNT(*) FROM messages WHERE session_id = 'chat'").fetchone()
    assert count[0] == len(store.load("chat").state.messages)


def _rows(path, table: str, key: str) -> dict:
    db = sqlite3.connect(path)
    try:
        return dict(db.execute(f"SELECT {key}, data FROM {table} WHERE session_id = 's'"))
    finally:
        db.close()


@pytest.mark.parametrize("window", [None, 3])
def test_compacting_checkpoints_append_and_never_rewrite(tmp_path, window):
    """The message rows are a log: compaction moves positions, not rows. Saved after
    every step while messages move to the buffer and summaries replace it, no message
    or step row is ever written again, the log holds each message once, and a step row
    refers to the messages its request sent by position."""
    loop = compacting_loop(
        counting_model(12),
        4,
        2,
        message_compiler=None if window is None else TokenWindowCompiler(window, lambda m: 1),
    )
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    session = store.create(AgentState.initial("sys", messages=["count"]), session_id="s")
    messages_seen, steps_seen = {}, {}
    for state in loop.iterate(session.state):
        session = store.save(session.with_state(state))
        messages, steps = _rows(path, "messages", "position"), _rows(path, "steps", "number")
        assert {k: messages[k] for k in messages_seen} == messages_seen  # never rewritten
        assert {k: steps[k] for k in steps_seen} == steps_seen
        messages_seen, steps_seen = messages, steps
        assert store.load("s").state == state
    assert state.final_response == "done"
    assert sum(1 for s in state.steps if s.compaction and s.compaction.summarizing) >= 2
    # every message the run ever had, once: the first, then each step's outputs
    assert len(messages_seen) == 1 + sum(len(s.output_messages) for s in state.steps)
    for text in steps_seen.values():
        parts = json.loads(text)["step"]["input_messages"]["parts"]
        assert all(isinstance(p, list) or p["role"] == "system" for p in parts)
    store.close()


def test_a_loaded_session_rewinds_like_the_state_saved(store):
    """A store builds each step's input whole (not split into head and conversation as
    the loop builds it); the loaded state is equal, so it must rewind alike: ``at_step``
    counts the conversation a request sent by value, not by how the history is split."""
    final = make_loop(
        call("add", a=1, b=2),
        calls(call("add", a=2, b=3), call("echo", text="x")),
        reply("done"),
        tools=[add, echo],
    ).run(initial())
    session = store.create(final, session_id="s")
    loaded = store.load(session.session_id).state
    assert loaded == final
    for k in range(final.step_count + 1):
        assert loaded.at_step(k) == final.at_step(k), k
        assert loaded.at_step(k).to_json() == final.at_step(k).to_json(), k


def test_a_conversation_edited_by_hand_is_placed_in_the_log_again(tmp_path):
    """A conversation that is not the stored one moved and grown (edited by hand between
    two saves) is appended to the log again; the stored steps keep their positions."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    final = make_loop(call("add", a=1, b=2), reply("done"), tools=[add]).run(initial())
    session = store.create(final, session_id="s")
    first = len(_rows(path, "messages", "position"))
    edited = final.with_context(
        final.context.with_messages([m.with_metadata("seen", True) for m in final.messages])
    )
    session = store.save(session.with_state(edited))
    assert store.load("s").state == edited
    assert len(_rows(path, "messages", "position")) == first + len(edited.messages)
    swapped = edited.with_context(edited.context.with_messages(list(edited.messages)[::-1]))
    store.save(session.with_state(swapped))
    assert store.load("s").state == swapped
    store.close()


def _first_layout_store(path, session_id: str, state: AgentState) -> None:
    """A session stored the way version 1 of the store wrote it: the conversation as
    rows, each step's input as a ``MessagesRef`` into the state, no message log."""
    from agents.records.codec import encode_step_execution, to_dict, value_json

    SQLiteSessionStore(path).close()
    light = replace_fields(
        state,
        context=state.context.with_messages(()),
        execution=replace_fields(state.execution, step_executions=()),
    )
    head = {**to_dict(light), "agents_store": {"refs_from": 1}}
    db = sqlite3.connect(path)
    db.execute("UPDATE agents_schema SET version = 1")
    db.execute(
        "INSERT INTO sessions VALUES (?, 1, NULL, '2026-01-01T00:00:00Z', "
        "'2026-01-01T00:00:00Z', ?, ?, ?, ?)",
        (
            session_id,
            json.dumps(head),
            state.execution.execution_id,
            len(state.messages),
            state.step_count,
        ),
    )
    db.executemany(
        "INSERT INTO messages VALUES (?, ?, ?)",
        [(session_id, k, value_json(m)) for k, m in enumerate(state.messages)],
    )
    db.executemany(
        "INSERT INTO steps VALUES (?, ?, ?)",
        [
            (session_id, k + 1, json.dumps(encode_step_execution(se, state.context)))
            for k, se in enumerate(state.step_executions)
        ],
    )
    db.commit()
    db.close()


def test_a_store_of_the_first_layout_is_read_and_moved_to_the_log_when_saved(tmp_path):
    """Opening a version-1 store upgrades its schema row; its sessions read as they were
    written, and a save writes a session's rows again in the log layout."""
    path = tmp_path / "old.db"
    loop = compacting_loop(counting_model(6), 4, 2)
    states = list(loop.iterate(AgentState.initial("sys", messages=["count"])))
    middle = states[len(states) // 2]
    _first_layout_store(path, "s", middle)
    store = SQLiteSessionStore(path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM agents_schema").fetchone() == (2,)
    session = store.load("s")
    assert session.state == middle
    store.save(session.with_state(states[-1]))
    assert store.load("s").state == states[-1]
    head = json.loads(db.execute("SELECT head FROM sessions").fetchone()[0])
    assert "log" in head["agents_store"]
    db.close()
    store.close()


@pytest.mark.parametrize(
    ("table", "sql", "match"),
    [
        ("steps", "replace(data, '},[0,', '},[-5,')", "outside the log"),
        ("steps", "replace(data, '},[0,', '},[0,1,')", "LogRef range"),
        ("steps", "replace(data, '\"parts\"', '\"pieces\"')", "exactly 'kind'"),
        ("sessions", "replace(head, '\"log\":', '\"log\":1')", "message log"),
    ],
)
def test_forged_log_references_are_typed_errors(tmp_path, table, sql, match):
    """A step row or a layout whose positions are outside the log is a typed error that
    names the session, never a wrong state or a raw exception."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    final = make_loop(call("add", a=1, b=2), reply("done"), tools=[add]).run(initial())
    store.create(final, session_id="s")
    db = sqlite3.connect(path)
    column = "head" if table == "sessions" else "data"
    db.execute(f"UPDATE {table} SET {column} = {sql}")
    db.commit()
    db.close()
    with pytest.raises(StateDecodeError, match=match) as raised:
        store.load("s")
    assert "'s'" in str(raised.value)
    store.close()


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("created_at", "'yesterday'"),
        ("updated_at", "'2026-13-01T00:00:00+00:00'"),
        ("created_at", "7"),
        ("version", "'x'"),
        ("version", "1.5"),
    ],
)
def test_a_session_row_of_another_type_is_a_typed_error(tmp_path, column, value):
    """A session row whose time is no ISO time, or whose version is no whole number:
    ``load`` and ``list`` raise a ``StateDecodeError`` naming the session, where a time
    was ``fromisoformat``'s bare ``ValueError`` and a version of text was taken (and
    compared with the next write's)."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    store.create(finished_state(), session_id="s")
    db = sqlite3.connect(path)
    db.execute(f"UPDATE sessions SET {column} = {value}")
    db.commit()
    db.close()
    for read in (lambda: store.load("s"), store.list):
        with pytest.raises(StateDecodeError, match=f"session 's'.*{column}"):
            read()
    store.close()


def test_corrupt_files_and_future_schemas_are_typed_errors(tmp_path):
    """A file that is not SQLite, or a store from the future, is a clear typed error."""
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StateDecodeError, match="not a usable SQLite store"):
        SQLiteSessionStore(garbage)
    future = tmp_path / "future.db"
    SQLiteSessionStore(future).close()
    db = sqlite3.connect(future)
    db.execute("UPDATE agents_schema SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(StateDecodeError, match="schema version 99"):
        SQLiteSessionStore(future)


def test_a_corrupted_row_does_not_hide_the_other_sessions(tmp_path):
    """One unreadable session raises; the others stay readable."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    store.create(finished_state(), session_id="good")
    store.create(finished_state(), session_id="bad")
    db = sqlite3.connect(path)
    db.execute("UPDATE messages SET data = '{broken' WHERE session_id = 'bad'")
    db.commit()
    db.close()
    with pytest.raises(StateDecodeError, match="'bad'"):
        store.load("bad")
    assert store.load("good").state.final_response == "done"


# -- crash safety ---------------------------------------------------------------------------

CRASHING_AGENT = textwrap.dedent("""
    import json, os, signal, sys
    from pathlib import Path
    from agents import AgentLoop, SQLiteSessionStore, SessionRuntime, ToolContext, tool
    from agents.testing import ScriptedDriver, call, reply

    database, effects, kill_at = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    from agents import PostgresSessionStore

    @tool
    def charge(ctx: ToolContext, amount: int) -> str:
        \"\"\"An idempotent side effect: done once per idempotency key.\"\"\"
        key = json.dumps(list(ctx.idempotency_key))
        done = effects.read_text().splitlines() if effects.exists() else []
        if key not in done:
            with effects.open("a") as out:
                out.write(key + "\\n")
                out.flush()
                os.fsync(out.fileno())
        step = ctx.idempotency_key[1]
        if step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # die after the effect, before the commit
        return f"charged {amount}"

    SCRIPT = [call("charge", amount=i, id=f"c{i}") for i in range(30)] + [reply("all done")]

    def loop_factory(session):
        done = session.state.step_count
        return AgentLoop(ScriptedDriver(SCRIPT[done:]), tools=[charge], max_steps=40)

    store = (PostgresSessionStore(database) if database.startswith("postgresql")
             else SQLiteSessionStore(database))
    runtime = SessionRuntime(store, loop_factory)
    if sys.argv[4] == "start":
        runtime.create(session_id="chat")
        final = runtime.send("chat", "charge thirty times")
    else:
        final = runtime.resume("chat")
    print(final.state.status.value, final.state.step_count)
""")


KILL_POINTS = sorted(random.Random(20).sample(range(1, 31), 20))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_a_killed_process_resumes_without_losing_or_repeating_work(
    tmp_path, kill_at, kind, request
):
    """SIGKILL mid-run; the resumed run completes, steps contiguous, each effect once."""
    script = tmp_path / "agent.py"
    script.write_text(CRASHING_AGENT, encoding="utf-8")
    effects = tmp_path / "effects.txt"
    database = (
        request.getfixturevalue("postgres_dsn") if kind == "postgres" else str(tmp_path / "s.db")
    )
    first = subprocess.run(
        [sys.executable, str(script), str(database), str(effects), str(kill_at), "start"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert first.returncode == -9, first.stderr
    second = subprocess.run(
        [sys.executable, str(script), str(database), str(effects), "0", "resume"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["completed", "31"]
    reader = PostgresSessionStore(database) if kind == "postgres" else SQLiteSessionStore(database)
    state = reader.load("chat").state
    reader.close()
    assert [se.number for se in state.step_executions] == list(range(1, 32))
    keys = effects.read_text().splitlines()
    assert len(keys) == len(set(keys)) == 30  # every charge happened exactly once
    assert len({json.loads(k)[0] for k in keys}) == 1  # one execution id throughout


def test_the_memory_stores_event_batches_are_appended_under_one_lock():
    """Several sessions' events handed over together are appended in one critical
    section, as the SQL stores append them in one transaction: no reader sees half."""
    store = InMemorySessionStore()
    held = []

    class Watched:
        def __init__(self, lock):
            self.lock = lock

        def __enter__(self):
            held.append("enter")
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    store._lock = Watched(store._lock)
    numbers = store.append_event_batches([("a", ["1", "2"]), ("b", ["3"]), ("a", ["4"])])
    assert numbers == [[1, 2], [1], [3]]
    assert held == ["enter"]
    assert store.events("a") == [(1, "1"), (2, "2"), (3, "4")]


def test_a_forged_layout_or_renumbered_log_is_a_typed_error_on_load_and_save(tmp_path):
    """A message log with a gap in its numbering fails the load; a layout that is not five
    whole numbers fails a save based on it: typed errors, the stored rows unchanged."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    final = make_loop(call("add", a=1, b=2), reply("done"), tools=[add]).run(initial())
    session = store.create(final, session_id="s")
    db = sqlite3.connect(path)
    db.execute("UPDATE messages SET position = 99 WHERE position = 1")
    db.commit()
    with pytest.raises(StateDecodeError, match="numbered"):
        store.load("s")
    db.execute("UPDATE messages SET position = 1 WHERE position = 99")
    db.execute("""UPDATE sessions SET head = replace(head, '"archived":[', '"archived":["x",')""")
    db.commit()
    heads = db.execute("SELECT head FROM sessions").fetchall()
    with pytest.raises(StateDecodeError, match="layout"):
        store.save(session.with_state(final.with_follow_up("more")))
    assert db.execute("SELECT head FROM sessions").fetchall() == heads
    db.close()
    store.close()


def test_a_step_suspended_after_compacting_is_stored_and_resumed_exactly(tmp_path):
    """A step that compacted and then waits for approval: its compaction already moved the
    sections, but the step is not archived yet. Saved suspended, then resumed and saved
    again (the step archived, its compaction counted once), then a new run on the same
    session: every save loads back as the state saved."""

    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        return f"paid {amount}"

    answers = [*[[ToolCall(id=f"c{i}", name="add", arguments={"a": i, "b": 1})] for i in range(4)]]
    answers += [[ToolCall(id="p", name="pay", arguments={"amount": 5})], "done", "again"]
    script = iter(answers)

    def model(request):
        if request.messages[0].content.startswith("You compress"):
            return InferenceResponse(content="a summary")
        return next(script)

    loop = compacting_loop(model, 3, 1).with_tools(pay)
    store = SQLiteSessionStore(tmp_path / "s.db")
    session = store.create(AgentState.initial("sys", messages=["count"]), session_id="s")
    for state in loop.iterate(session.state):
        session = store.save(session.with_state(state))
        assert store.load("s").state == state
    assert state.status.value == "suspended"
    assert state.execution.current_step.compaction is not None
    for state in loop.iterate(store.load("s").state.with_approval("p", True)):
        session = store.save(session.with_state(state))
        assert store.load("s").state == state
    assert state.final_response == "done"
    done = state
    for state in loop.iterate(done.with_user_message("more")):
        session = store.save(session.with_state(state))
        assert store.load("s").state == state
    assert state.final_response == "again"
    store.close()


# -- a save stores the state it is given, whatever part of it changed -------------------------


SECRET = "sk-planted-7d1e0c"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: {SECRET}" if key == "api" else f"{key}: nothing"


@hook(HookTrigger.BEFORE_STEP)
def scrub_history(context):
    """Scrubs the secret from earlier messages, once the conversation has grown past it
    (the edited message is then in the middle of the stored log)."""
    state = context.state
    messages = state.messages
    if len(messages) > 5 and any(SECRET in m.content for m in messages):
        scrubbed = [m.with_content(m.content.replace(SECRET, "***")) for m in messages]
        state = state.with_messages(scrubbed)
    return context.with_state(state)


def test_a_hook_that_scrubs_history_leaves_no_secret_in_the_stored_conversation(store):
    """A hook rewrites a message in the middle of the conversation during a run: each
    checkpoint stores the state as it is, so the stored session is the final state and
    its conversation holds no scrubbed secret (the rows' ends alone do not tell)."""
    script = [call("lookup", key="api"), call("lookup", key="a"), call("lookup", key="b")]
    runtime = SessionRuntime(
        store,
        lambda session: make_loop(*script, reply("done"), tools=[lookup], hooks=[scrub_history]),
        ids=SequentialIds("rt-"),
    )
    runtime.create(AgentState.initial("sys"), session_id="scrubbed")
    final = runtime.send("scrubbed", "go").state
    assert final.final_response == "done"
    assert "***" in final.messages[2].content
    stored = runtime.get("scrubbed").state
    assert stored == final
    assert SECRET not in "".join(m.content for m in stored.messages)


def test_a_message_edited_in_the_middle_and_an_earlier_step_edited_are_stored(store):
    """Edits no spot check sees — a message in the middle of the conversation, same
    length; an earlier step, the last one unchanged — are stored by the next save."""
    final = make_loop(*[call("add", a=i, b=1) for i in range(4)], reply("done")).run(initial())
    session = store.create(final, session_id="edited")
    session = store.load("edited")
    messages = list(session.state.messages)
    messages[3] = messages[3].with_content("edited in the middle")
    edited = session.state.with_messages(messages)
    session = store.save(session.with_state(edited))
    assert store.load("edited").state == edited
    execution = edited.execution
    steps = list(execution.step_executions)
    steps[1] = replace_fields(steps[1], completed_at=steps[1].started_at)
    earlier = edited.with_execution(replace_fields(execution, step_executions=History(steps)))
    store.save(session.with_state(earlier))
    loaded = store.load("edited").state
    assert loaded == earlier
    assert loaded.to_json() == earlier.to_json()


def test_a_store_that_did_not_write_the_rows_compares_all_of_them(tmp_path):
    """A second store object on the same file (another process, say) knows nothing of
    what the first wrote: it compares the state with every row, not with their ends."""
    path = tmp_path / "s.db"
    first = SQLiteSessionStore(path)
    final = make_loop(*[call("add", a=i, b=1) for i in range(4)], reply("done")).run(initial())
    session = first.create(final, session_id="s")
    second = SQLiteSessionStore(path)
    messages = list(final.messages)
    messages[4] = messages[4].with_content("edited elsewhere")
    edited = final.with_messages(messages)
    second.save(session.with_state(edited))
    assert first.load("s").state == edited
    first.close()
    second.close()


def test_a_session_created_again_by_another_store_is_not_mixed_with_the_old_one(tmp_path):
    """Another process deletes a session and creates it again, to the same version: this
    store's write based on the old session is refused. (It was accepted, and as this store
    took the rows for the ones it wrote, it stored the new session's messages followed by
    the old one's new message: a state nobody wrote.)"""
    path = tmp_path / "s.db"
    here, elsewhere = SQLiteSessionStore(path), SQLiteSessionStore(path)
    mine = here.create(AgentState.initial(messages=["mine"]), session_id="s")
    elsewhere.delete("s")
    elsewhere.create(AgentState.initial(messages=["theirs"]), session_id="s")
    with pytest.raises(SessionConflict, match="deleted and created again"):
        here.save(mine.with_state(mine.state.with_user_message("more of mine")))
    for store in (here, elsewhere):
        assert [m.content for m in store.load("s").state.messages] == ["theirs"]
    here.close()
    elsewhere.close()


@settings(max_examples=30, deadline=None)
@given(
    max_message=st.integers(min_value=2, max_value=8),
    max_buffer=st.integers(min_value=0, max_value=6),
    edits=st.lists(
        st.none() | st.tuples(st.sampled_from(["messages", "buffer"]), st.integers(0, 40)),
        min_size=12,
        max_size=12,
    ),
)
def test_any_edit_between_saves_of_a_compacting_session_loads_back_exactly(
    max_message, max_buffer, edits
):
    """SQLite, a compacting session saved after every step, a message of the
    conversation or the buffer edited before some saves: every save loads back as the
    state saved (shown to fail while the store judged its rows by their ends)."""
    loop = compacting_loop(counting_model(10), max_message, max_buffer)
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteSessionStore(Path(folder) / "s.db")
        session = store.create(AgentState.initial("sys", messages=["count"]), session_id="s")
        for number, state in enumerate(loop.iterate(session.state)):
            edit = edits[number % len(edits)]
            if edit is not None:
                name, index = edit
                section = list(state.context.store.section(name))
                if section:
                    at = index % len(section)
                    section[at] = section[at].with_content(f"edited before save {number}")
                    sections = state.context.store.with_section(name, section)
                    state = state.with_context(state.context.with_store(sections))
            session = store.save(session.with_state(state))
            assert store.load("s").state == state, number
        store.close()


def test_checkpoints_read_no_row_back_and_the_store_keeps_no_history_alive(tmp_path):
    """What a store knows its rows hold spares a checkpoint reading rows back (a run's
    checkpoints select no message or step row); it holds the records weakly, so a session
    nobody holds any more keeps nothing alive (its next save compares the rows instead)."""
    store = SQLiteSessionStore(tmp_path / "s.db")
    runtime = runtime_for(store, *[call("add", a=i, b=1) for i in range(5)], reply("done"))
    runtime.create(session_id="chat")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    final = runtime.send("chat", "go").state
    store._db.set_trace_callback(None)
    reads = [s for s in statements if s.startswith("SELECT") and "FROM sessions" not in s]
    loads = [s for s in reads if "ORDER BY position" in s]
    assert len(loads) == 1  # the load at the start of send, nothing after it
    assert all("ORDER BY" in s for s in reads), reads  # a load's message and step rows
    conversation = weakref.ref(final.context.store.messages)
    session = runtime.get("chat")
    del final, session
    gc.collect()
    assert conversation() is None
    store.close()


# -- text that is not Unicode (tests/test_lone_surrogates.py) -------------------------------------


@tool
def newest_file() -> str:
    """The newest file's name, as os.listdir gives one that is not UTF-8."""
    return b"report-\xff.txt".decode("utf-8", "surrogateescape")


def _file_loop() -> AgentLoop:
    return make_loop(call("newest_file"), reply("found \ud800 it"), tools=[newest_file])


def test_sessions_store_such_text_and_load_it_back(store):
    runtime = SessionRuntime(store, lambda session: _file_loop())
    session = runtime.create(AgentState.initial("You find files."))
    final = runtime.send(session.session_id, "which file? \udcfe and \x00")
    assert final.state.final_response == "found \ud800 it"
    loaded = store.load(session.session_id)
    assert loaded.state == final.state
    assert loaded.state.to_json() == final.state.to_json()


@pytest.mark.parametrize(
    ("bad", "refusal", "said"),
    [
        ("a\x00b", ValueError, "cannot be stored"),
        ("\ud800", ValueError, "cannot be stored"),
        ("s-\udcff", ValueError, "cannot be stored"),
        (3, TypeError, "session_id is a str, not int"),
        (("a",), TypeError, "session_id is a str, not tuple"),
        (b"id", TypeError, "session_id is a str, not bytes"),
    ],
)
def test_an_id_no_store_can_keep_is_refused_and_never_found(store, bad, refusal, said):
    """A session id is text without NUL or a lone surrogate: another is refused when a
    session is created with it (an int was stored as it was — SQLite keeps any type — and
    no later call could find it: each raised ``TypeError: argument of type 'int' is not
    iterable``), and no session has it, in every store alike."""
    with pytest.raises(refusal, match=said):
        store.create(AgentState.initial(), bad)
    with pytest.raises(SessionNotFound):
        store.load(bad)
    with pytest.raises(SessionNotFound):
        store.delete(bad)
    assert store.exists(bad) is False
    with pytest.raises(SessionNotFound):
        store.load(None)


def test_a_session_holds_an_agent_state_or_nothing(store):
    """``create`` and ``with_state`` take an ``AgentState`` (the in-memory store kept an int
    as a session's state; the SQL stores raised ``AttributeError``)."""
    with pytest.raises(TypeError, match="a session's state is an AgentState, not int"):
        store.create(3)
    session = store.create(AgentState.initial())
    with pytest.raises(TypeError, match="not dict"):
        session.with_state({"messages": []})
    assert store.load(session.session_id).state == session.state


def test_a_locked_sqlite_database_is_a_typed_error_and_nothing_is_lost(tmp_path):
    """Another process holding the database's write lock past the store's busy timeout:
    the write raises ``StoreUnavailable`` naming the file and the reason (it raised
    ``sqlite3.OperationalError``), the stored session is as it was, and the next write
    once the lock is gone succeeds."""
    import sqlite3

    from agents import SQLiteSessionStore, StoreUnavailable

    path = tmp_path / "locked.sqlite"
    store = SQLiteSessionStore(path, timeout=0.05)
    session = store.create(AgentState.initial())
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailable, match="locked") as failure:
            store.save(session.with_state(session.state.with_user_message("hi")))
        assert str(path) in str(failure.value) and failure.value.__cause__ is None
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.load(session.session_id) == session
    saved = store.save(session.with_state(session.state.with_user_message("hi")))
    assert saved.version == session.version + 1
    store.close()


def test_a_lost_postgresql_connection_is_a_typed_error_and_the_next_call_connects_again(
    postgres_dsn,
):
    """The server ends the store's connection (a restart, a failover, an idle timeout): the
    call that finds it gone raises ``StoreUnavailable`` without the DSN's password (it
    raised psycopg's ``OperationalError``, and every later call failed too); the next call
    connects again and the session is there, unchanged by the failed write."""
    import psycopg

    from agents import PostgresSessionStore, StoreUnavailable

    planted = "pw-planted-0451"  # the test server trusts every login: any password will do
    dsn = postgres_dsn.replace("://postgres@", f"://postgres:{planted}@")
    assert planted in dsn
    store = PostgresSessionStore(dsn)
    session = store.create(AgentState.initial())
    backend = store._db.info.backend_pid
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (backend,))
    with pytest.raises(StoreUnavailable) as failure:
        store.save(session.with_state(session.state.with_user_message("hi")))
    assert failure.value.__cause__ is None and "\n" not in str(failure.value)
    assert planted not in f"{failure.value!r} {failure.value}"
    assert store.load(session.session_id) == session
    saved = store.save(session.with_state(session.state.with_user_message("hi")))
    assert saved.version == session.version + 1
    store.close()


def test_the_async_postgresql_store_connects_again_too(postgres_dsn):
    """The asyncio store: a lost connection is ``StoreUnavailable`` for the call that finds
    it, and the next call connects again."""
    import psycopg

    from agents import AsyncPostgresSessionStore, StoreUnavailable

    async def scenario() -> None:
        store = await AsyncPostgresSessionStore.open(postgres_dsn)
        session = await store.create(AgentState.initial())
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (store._db.info.backend_pid,))
        with pytest.raises(StoreUnavailable, match="the database failed"):
            await store.load(session.session_id)
        assert await store.load(session.session_id) == session
        await store.close()

    asyncio.run(scenario())
