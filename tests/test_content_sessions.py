"""Blobs in the SQLite and PostgreSQL session stores (docs/design/content.md): a table of
their own, written in the save's transaction, and the store as a ``BlobStore``."""

from __future__ import annotations

import pytest

from agents import (
    AgentLoop,
    AgentState,
    BlobCorrupted,
    BlobNotFound,
    BlobStore,
    ImagePart,
    PostgresSessionStore,
    SessionRuntime,
    SQLiteSessionStore,
    ToolCall,
    tool,
)
from agents.persistence.plans import Query
from agents.testing import FunctionDriver, ScriptedDriver, SequentialIds, TickingClock, call, reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    options = {"clock": TickingClock(), "ids": SequentialIds()}
    if request.param == "postgres":
        opened = PostgresSessionStore(request.getfixturevalue("postgres_dsn"), **options)
    else:
        opened = SQLiteSessionStore(tmp_path / "sessions.db", **options)
    yield opened
    opened.close()


def blob_rows(store) -> list[tuple]:
    with store._read() as db:
        return db.perform(Query("SELECT sha256, size FROM blobs ORDER BY sha256", fetch="all"))


def test_a_session_keeps_its_images_bytes_once_and_reads_them_back(store):
    image = ImagePart.from_bytes(PNG, "image/png")
    state = AgentState.initial("s", messages=[["look", image], ["again", image]])
    session = store.create(state)
    store.save(store.load(session.session_id))  # saved again: still one row
    assert isinstance(store.blobs, BlobStore) and store.blobs.has(image.blob)
    assert [tuple(row) for row in blob_rows(store)] == [(image.blob.sha256, len(PNG))]
    loaded = store.load(session.session_id).state
    assert loaded == state and loaded.messages[1].parts[1].data() == PNG
    assert store.blobs.get(image.blob) == PNG


def test_a_run_checkpointed_step_by_step_keeps_the_image(store):
    image = ImagePart.from_bytes(PNG, "image/png")
    script = [call("add", a=i, b=1) for i in range(3)] + [reply("done")]
    loop = AgentLoop(ScriptedDriver(script), tools=[add], clock=TickingClock(), ids=SequentialIds())
    runtime = SessionRuntime(store, lambda session: loop)
    session = store.create(AgentState.initial("s"))
    final = runtime.send(session.session_id, ["what is this?", image])
    assert final.state.step_count == 4
    assert store.load(session.session_id).state.messages[0].parts[1].data() == PNG
    assert len(blob_rows(store)) == 1


def test_a_state_whose_bytes_are_nowhere_is_not_saved(store):
    image = ImagePart.from_bytes(PNG, "image/png")
    text = AgentState.initial(messages=[["look", image]]).to_json()
    orphan = AgentState.from_json(text)  # the reference, without the bytes
    with pytest.raises(BlobNotFound, match=image.blob.sha256):
        store.create(orphan, session_id="s1")
    assert not store.exists("s1")  # nothing committed


def test_altered_bytes_in_the_table_are_found(store):
    image = ImagePart.from_bytes(PNG, "image/png")
    store.create(AgentState.initial(messages=[image]), session_id="s1")
    with store._transaction() as db:
        db.perform(Query("UPDATE blobs SET data = ?", (PNG[:-1] + b"!",)))
    part = store.load("s1").state.messages[0].parts[0]
    with pytest.raises(BlobCorrupted, match=image.blob.sha256):
        part.data()


def test_an_image_survives_a_suspension_for_approval_and_the_resume(store):
    """A run holding an image waits for a human's approval, in the store; another runtime
    (another process, as far as the store knows) approves and the run ends: the image's
    bytes come from the table, the tool's screenshot too."""

    @tool(requires_approval=True)
    def screenshot() -> bytes:
        """Take a screenshot."""
        return PNG

    def model(request):  # answers from the conversation: the same in every process
        if request.messages[-1].role.value == "tool":
            return "seen"
        return [ToolCall(id="shot-1", name="screenshot", arguments={})]

    def factory(session):
        return AgentLoop(FunctionDriver(model), tools=[screenshot])

    image = ImagePart.from_bytes(PNG, "image/png")
    runtime = SessionRuntime(store, factory)
    session = runtime.create(session_id="s")
    waiting = runtime.send("s", ["what is this?", image]).state
    assert [c.name for c in waiting.pending_approvals] == ["screenshot"]
    later = SessionRuntime(store, factory)  # a state read back from the rows alone
    done = later.approve("s", waiting.pending_approvals[0].id, True).state
    assert done.final_response == "seen"
    loaded = store.load(session.session_id).state
    assert loaded.messages[0].parts[1].data() == PNG
    assert loaded.tool_executions[0].content[0].data() == PNG
    assert len(blob_rows(store)) == 1  # the same bytes: one row


def test_the_asyncio_postgres_store_keeps_images_and_its_loads_read_them(postgres_dsn):
    """The asyncio store writes the bytes in the save's transaction, and a state another
    store loads reads them back (over the store's blocking connection, opened when the
    bytes are first needed); bytes that are nowhere are refused."""
    import asyncio

    from agents import AsyncPostgresSessionStore

    image = ImagePart.from_bytes(PNG + b"async", "image/png")

    async def main() -> None:
        async with await AsyncPostgresSessionStore.open(postgres_dsn) as writer:
            session = await writer.create(AgentState.initial("s", messages=[["look", image]]))
        async with await AsyncPostgresSessionStore.open(postgres_dsn) as reader:
            loaded = (await reader.load(session.session_id)).state
            (part,) = [p for p in loaded.messages[0].parts if isinstance(p, ImagePart)]
            assert not part.blob.held and part.data() == PNG + b"async"
            assert reader.blobs.has(image.blob) and isinstance(reader.blobs, BlobStore)
            nowhere = AgentState.from_json(
                AgentState.initial(
                    messages=[[ImagePart.from_bytes(PNG + b"x", "image/png")]]
                ).to_json()
            )
            with pytest.raises(BlobNotFound):
                await reader.create(nowhere)

    asyncio.run(main())
