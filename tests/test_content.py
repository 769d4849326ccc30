"""Content parts and blobs (docs/design/content.md): records, their JSON, blob stores and
hostile input."""

from __future__ import annotations

import base64
import hashlib
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents import (
    AgentState,
    AudioPart,
    Blob,
    BlobCorrupted,
    BlobNotFound,
    BlobStore,
    ContentError,
    ContentLimits,
    DocumentPart,
    FileBlobStore,
    FilePart,
    ImagePart,
    InvalidType,
    MemoryBlobStore,
    Message,
    ReasoningPart,
    Role,
    StateDecodeError,
    TextPart,
    Usage,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 100
PDF = b"%PDF-1.7\n" + b"x" * 50
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 40


def image() -> ImagePart:
    return ImagePart.from_bytes(PNG, "image/png")


# -- records and their JSON ------------------------------------------------------------------


def test_a_part_holds_a_blob_reference_not_its_bytes():
    part = image()
    assert part.blob == Blob(
        sha256=hashlib.sha256(PNG).hexdigest(), media_type="image/png", size=len(PNG)
    )
    text = part.to_json()
    assert base64.b64encode(PNG).decode()[:40] not in text and len(text) <= 200
    assert part.data() == PNG  # held in memory until a store takes it


def test_message_content_is_text_or_parts_in_order():
    part = image()
    message = Message.user(["What is this?", part, "And this?"])
    assert message.parts == (TextPart(text="What is this?"), part, TextPart(text="And this?"))
    assert message.text == "What is this?\nAnd this?"
    assert Message.user("hi").parts == (TextPart(text="hi"),) and Message.user("").parts == ()
    assert Message.user(["hi"]).content == "hi" == Message.user(TextPart(text="hi")).content
    assert Message.user(part).parts == (part,)


def test_text_only_messages_encode_as_before():
    assert json.loads(Message.user("hi").to_json())["content"] == "hi"
    before = (
        '{"kind":"Message","schema_version":1,"role":"user","content":"hi","tool_calls":[],'
        '"tool_call_id":null,"name":null,"metadata":{}}'
    )
    assert Message.user(["hi"]).to_json() == before


def test_equal_states_give_identical_json_from_every_path():
    part = image()
    given_parts = AgentState.initial("s", messages=[["look", part]])
    by_message = AgentState.initial("s", messages=[Message(role=Role.USER, content=("look", part))])
    appended = AgentState.initial("s").with_user_message(["look", part])
    read = AgentState.from_json(given_parts.to_json())
    texts = {state.to_json() for state in (given_parts, by_message, appended, read)}
    assert len(texts) == 1 and read == given_parts


def test_every_part_kind_round_trips():
    parts = [
        TextPart(text="t"),
        ImagePart.from_url("https://example.com/cat.png"),
        AudioPart.from_bytes(WAV, "audio/wav"),
        DocumentPart.from_bytes(PDF, "application/pdf", name="report.pdf"),
        FilePart.from_bytes(b"\x00\x01", "application/octet-stream"),
        ReasoningPart(text="thinking", signature="sig=="),
        ReasoningPart(redacted="opaque"),
    ]
    message = Message(role=Role.ASSISTANT, content=parts)
    assert Message.from_json(message.to_json()) == message
    assert list(Message.from_json(message.to_json()).parts) == parts


def test_usage_gains_cache_write_and_reasoning_tokens_written_only_when_used():
    old = Usage(input_tokens=3).to_json()
    assert "reasoning_tokens" not in old and Usage.from_json(old).reasoning_tokens == 0
    usage = Usage(cache_write_tokens=2, reasoning_tokens=5)
    assert Usage.from_json(usage.to_json()) == usage
    assert (usage + usage).reasoning_tokens == 10 and (usage + usage).cache_write_tokens == 4


# -- blob stores ------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "file"])
def store(request, tmp_path) -> BlobStore:
    return MemoryBlobStore() if request.param == "memory" else FileBlobStore(tmp_path / "blobs")


def test_a_store_keeps_bytes_once_by_hash(store):
    blobs = {store.put(PNG, "image/png") for _ in range(100)}
    (blob,) = blobs
    assert isinstance(store, BlobStore) and store.has(blob) and store.get(blob) == PNG
    if isinstance(store, FileBlobStore):
        files = [p for p in store.path.rglob("*") if p.is_file()]
        assert [p.name for p in files] == [blob.sha256]
    else:
        assert len(store) == 1


def test_a_missing_or_altered_blob_is_a_typed_error_naming_its_hash(tmp_path):
    store = FileBlobStore(tmp_path)
    blob = store.put(PNG, "image/png")
    other = Blob.of(JPEG, "image/jpeg")
    with pytest.raises(BlobNotFound, match=other.sha256):
        store.get(other)
    lying = Blob(sha256=blob.sha256, media_type="image/png", size=5)
    with pytest.raises(BlobCorrupted, match="the reference says 5 bytes; those with its hash"):
        store.get(lying)  # the size is what is wrong, not the bytes
    (tmp_path / blob.sha256[:2] / blob.sha256).write_bytes(PNG[:-1] + b"!")
    with pytest.raises(BlobCorrupted, match=f"{blob.sha256} .*do not match the hash"):
        store.get(blob)


def test_a_reference_lying_about_its_media_type_fails_when_its_bytes_are_read(tmp_path):
    """A state whose JSON calls a stored PNG a JPEG (its hash right): the part is read,
    and its bytes, when they are needed, are a ContentError naming the hash, as a part
    made from those bytes and that type would be refused."""
    store = FileBlobStore(tmp_path)
    store.put(PNG, "image/png")
    text = AgentState.initial(messages=[["look", image()]]).to_json()
    lying = AgentState.from_json(text.replace("image/png", "image/jpeg"), blobs=store)
    part = lying.messages[0].parts[1]
    with pytest.raises(ContentError, match=f"{part.blob.sha256}: the bytes are not image/jpeg"):
        part.data()
    assert AgentState.from_json(text, blobs=store).messages[0].parts[1].data() == PNG


def test_a_failed_put_leaves_nothing_behind(tmp_path, monkeypatch):
    store = FileBlobStore(tmp_path)

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(ContentError, match="No space left"):
        store.put(PNG, "image/png")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_state_reads_its_bytes_from_its_store_when_needed(tmp_path):
    store = FileBlobStore(tmp_path)
    part = image()
    store.put(part.data(), part.media_type)
    text = AgentState.initial(messages=[["look", part]]).to_json()
    unbound = AgentState.from_json(text)  # no store: decoded all the same
    with pytest.raises(BlobNotFound, match=part.blob.sha256):
        unbound.messages[0].parts[1].data()
    bound = AgentState.from_json(text, blobs=store)
    assert bound.messages[0].parts[1].data() == PNG
    elsewhere = AgentState.from_json(text, blobs=MemoryBlobStore())
    with pytest.raises(BlobNotFound, match=part.blob.sha256):
        elsewhere.messages[0].parts[1].data()


def test_from_path_takes_the_media_type_from_the_suffix(tmp_path):
    (tmp_path / "scan.pdf").write_bytes(PDF)
    part = DocumentPart.from_path(tmp_path / "scan.pdf")
    assert (part.media_type, part.name, part.data()) == ("application/pdf", "scan.pdf", PDF)
    (tmp_path / "a.xyz").write_bytes(b"x")
    with pytest.raises(ContentError, match="no known media type"):
        FilePart.from_path(tmp_path / "a.xyz")
    with pytest.raises(ContentError, match="not a regular file"):
        FilePart.from_path(tmp_path, "application/octet-stream")
    with pytest.raises(ContentError, match="No such file"):
        ImagePart.from_path(tmp_path / "missing.png")
    with pytest.raises(ContentError, match="null byte"):  # was a bare ValueError
        ImagePart.from_path(f"{tmp_path}/a\0b.png")


def test_a_data_url_becomes_a_blob():
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert ImagePart.from_url(url) == image()


def test_a_urls_scheme_is_read_in_any_case():
    """Schemes are case-insensitive (RFC 3986), as data URLs already were read."""
    assert ImagePart.from_url("HTTPS://x.test/a.png").url == "HTTPS://x.test/a.png"
    assert ImagePart(media_type="image/png", url="Http://x.test/a").url == "Http://x.test/a"
    url = "DATA:image/png;base64," + base64.b64encode(PNG).decode()
    assert ImagePart.from_url(url) == image()
    with pytest.raises(ContentError, match="http"):
        ImagePart.from_url("HTTPX://x.test/a.png")


# -- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: ImagePart.from_url("data:image/png;base64,@@@"), "not base64"),
        (lambda: ImagePart.from_url("data:image/png,abc"), "malformed data URL"),
        (lambda: ImagePart.from_url("data:;base64,AAAA"), "not a media type"),
        (lambda: ImagePart.from_url("javascript:alert(1)"), "http"),
        (lambda: ImagePart.from_url("https://x.test/a b.png"), "malformed url"),
        (lambda: ImagePart.from_url("https://x.test/page"), "no known media type"),
        (lambda: ImagePart.from_bytes(JPEG, "image/png"), "lack its signature"),
        (lambda: ImagePart.from_bytes(PDF, "application/pdf"), "ImagePart takes"),
        (lambda: AudioPart.from_bytes(PNG, "audio/wav"), "lack its signature"),
        (lambda: DocumentPart.from_bytes(b"\xff\xfe", "text/plain"), "not UTF-8"),
        (lambda: FilePart.from_bytes(b"x", "Not A Type"), "not a media type"),
        (lambda: FilePart.from_bytes("text", "text/plain"), "bytes, not str"),
        (
            lambda: ImagePart.from_bytes(PNG, "image/png", limits=ContentLimits(max_blob_bytes=10)),
            "past the limit",
        ),
        (lambda: ImagePart(media_type="image/png"), "url or a blob"),
        (lambda: ImagePart(media_type="application/pdf", url="https://x.test/a"), "ImagePart of"),
        (lambda: Blob(sha256="../../etc/passwd", media_type="image/png", size=1), "64 lower-case"),
    ],
)
def test_hostile_content_gets_a_content_error(make, words):
    with pytest.raises(ContentError, match=words):
        make()


@pytest.mark.parametrize("content", [5, None, {"text": "hi"}, [5], ["hi", None], [b"png"]])
@pytest.mark.parametrize(
    "make",
    [
        Message.user,
        Message.system,
        Message.assistant,
        lambda content: Message.tool("c1", "add", content),
        lambda content: Message.user("hi").with_content(content),
        lambda content: AgentState.initial(messages=[content]),
        lambda content: AgentState.initial().with_user_message(content),
    ],
    ids=["user", "system", "assistant", "tool", "with_content", "initial", "with_user_message"],
)
def test_what_is_no_content_is_refused_where_the_message_is_made(make, content):
    """Not left in the message for the codec to refuse when the state is written (a
    list holding an int made a state no store could keep)."""
    with pytest.raises(InvalidType, match="text, a part or a list of"):
        make(content)


@pytest.mark.parametrize(
    "make",
    [
        lambda: TextPart(5),
        lambda: TextPart(None),
        lambda: ReasoningPart(["thought"]),
        lambda: ReasoningPart("x", signature=5),
        lambda: ReasoningPart(redacted=b"opaque"),
        lambda: ImagePart(media_type="image/png", url="https://a.test/x.png", name=5),
    ],
    ids=["text int", "text none", "reasoning list", "signature int", "redacted bytes", "name"],
)
def test_a_part_holds_text_where_it_holds_text(make):
    """Refused where the part is made: such a part was taken by ``Message.user`` and
    ``AgentState.initial``, ran to the end, and then no store, log or ``to_json`` could
    write the state."""
    with pytest.raises(InvalidType, match=r"Part\.\w+ is text, not"):
        make()
    assert ReasoningPart("x", signature="s", redacted=None).signature == "s"


@pytest.mark.parametrize(
    "url",
    [
        "https://bob:hunter2-planted@a.test/x.png",  # it was kept, in every state and log
        "ftp://bob:hunter2-planted@a.test/x.png",  # refused, the password in the error
        "https://bob:hunter2-planted@a.test/x",
        "HTTP://bob:hunter2-planted@a.test:8080/x.png",
    ],
)
def test_a_part_url_holding_a_password_is_refused_without_saying_it(url):
    with pytest.raises(ContentError) as raised:
        ImagePart.from_url(url)
    assert "hunter2-planted" not in str(raised.value) and "[redacted]" in str(raised.value)
    data = json.loads(Message.user(["a", image()]).to_json())
    data["content"][1] = {"kind": "ImagePart", "media_type": "image/png", "url": url}
    with pytest.raises(StateDecodeError) as decoded:
        Message.from_dict(data)
    assert "hunter2-planted" not in str(decoded.value)
    assert ImagePart.from_url("https://bob@a.test/x.png").url == "https://bob@a.test/x.png"


def test_a_lying_part_in_json_is_a_decode_error_naming_the_field():
    data = json.loads(Message.user(["a", image()]).to_json())
    data["content"][1]["blob"]["sha256"] = "0" * 63
    with pytest.raises(StateDecodeError, match=r"content\[1\]"):
        Message.from_dict(data)
    data["content"] = [{"kind": "Message"}]
    with pytest.raises(StateDecodeError, match="expected a part"):
        Message.from_dict(data)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_part_like = st.fixed_dictionaries(
    {"kind": st.sampled_from(["TextPart", "ImagePart", "Blob", "ReasoningPart", "x"])},
    optional={
        "text": _json,
        "media_type": st.sampled_from(["image/png", "a/b", "", 5]) | _json,
        "url": st.sampled_from(["https://a.test/x.png", "data:x"]) | _json,
        "blob": _json,
        "signature": _json,
    },
)


@given(content=st.lists(_part_like | _json, max_size=3) | _json)
def test_random_content_in_json_reads_or_fails_typed(content):
    data = json.loads(Message.user("x").to_json())
    data["content"] = content
    try:
        message = Message.from_dict(data)
    except StateDecodeError:
        return
    assert Message.from_json(message.to_json()) == message


def test_parts_go_to_the_provider_in_the_chat_completions_form():
    from agents.drivers.chat_format import wire_message

    doc = DocumentPart.from_bytes(PDF, "application/pdf", name="a.pdf")
    sent = wire_message(Message.user(["see", image(), AudioPart.from_bytes(WAV, "audio/wav"), doc]))
    data = base64.b64encode(PNG).decode()
    assert sent["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
        {
            "type": "input_audio",
            "input_audio": {"data": base64.b64encode(WAV).decode(), "format": "wav"},
        },
        {
            "type": "file",
            "file": {
                "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
                "filename": "a.pdf",
            },
        },
    ]
    thought = Message(
        role=Role.ASSISTANT,
        content=[ReasoningPart(text="hmm", signature="s1"), ReasoningPart(redacted="x"), "done"],
    )
    assert wire_message(thought) == {
        "role": "assistant",
        "content": "done",
        "thinking_blocks": [
            {"type": "thinking", "thinking": "hmm", "signature": "s1"},
            {"type": "redacted_thinking", "data": "x"},
        ],
    }
    with pytest.raises(ContentError, match="by URL"):
        wire_message(Message.user(DocumentPart.from_url("https://x.test/a.pdf")))


def test_token_estimates_count_media_and_reasoning():
    from agents import estimate_tokens
    from agents.core.compilers import IMAGE_TOKENS

    text = estimate_tokens(Message.user("abcdefgh"))
    assert text == 4 + 2
    assert estimate_tokens(Message.user(["abcdefgh", image()])) == text + IMAGE_TOKENS
    audio = AudioPart.from_bytes(WAV, "audio/wav")
    assert estimate_tokens(Message.user(["abcdefgh", audio])) == text + len(WAV) // 500
    thought = Message(role=Role.ASSISTANT, content=[ReasoningPart(text="x" * 40), "abcdefgh"])
    assert estimate_tokens(thought) == text + 10


def test_text_and_reasoning_parts_take_their_fields_by_position():
    """``TextPart(text)`` and ``ReasoningPart(text, signature=None, redacted=None)``, as the
    reference names them (by name too)."""
    from agents import ReasoningPart, TextPart

    assert TextPart("hi") == TextPart(text="hi")
    assert ReasoningPart("thought", "sig") == ReasoningPart(text="thought", signature="sig")
    assert ReasoningPart("", None, "opaque").redacted == "opaque"


def test_a_state_read_with_blobs_that_are_no_store_is_refused_at_once(tmp_path):
    """``AgentState.from_json(text, blobs=FOLDER)`` was taken, and the parts' bytes then
    failed with a bare ``AttributeError`` when a hook or the driver read them."""
    from agents import InvalidType, MemoryBlobStore

    store = MemoryBlobStore()
    part = ImagePart.from_bytes(PNG, "image/png")
    store.put(PNG, "image/png")
    text = AgentState.initial("s", messages=[["look", part]]).to_json()
    for wrong in (str(tmp_path), tmp_path, 5, {}):
        with pytest.raises(InvalidType, match="blobs= takes a BlobStore"):
            AgentState.from_json(text, blobs=wrong)
    assert AgentState.from_json(text, blobs=store).messages[0].parts[1].data() == PNG


def test_a_log_given_blobs_that_are_no_store_is_refused_as_a_state_is(tmp_path):
    """``AuditLog.open(path, blobs=5)`` raised ``ContentError`` (a ``ValueError``: content
    the library does not take), where ``AgentState.from_json(text, blobs=5)`` raises
    ``InvalidType``: a wrong type is an ``InvalidType`` (a ``TypeError``) in both
    (docs/design/errors.md)."""
    from agents import AuditLog, InvalidType

    for wrong in (5, {}, b"folder"):
        with pytest.raises(InvalidType, match="blobs= takes a BlobStore or a folder, not"):
            AuditLog.open(tmp_path / "run.jsonl", blobs=wrong)
    assert not (tmp_path / "run.jsonl").exists()


def test_a_blob_store_asked_for_what_is_no_blob_says_so(tmp_path):
    """``store.get("<hash>")`` and ``store.has(5)`` raised a bare ``AttributeError`` ("'str'
    object has no attribute 'sha256'"); an ``InvalidType`` naming the store."""
    from agents import SQLiteSessionStore

    sql = SQLiteSessionStore(tmp_path / "s.db")
    for store in (MemoryBlobStore(), FileBlobStore(tmp_path / "blobs"), sql.blobs):
        for value in (image().blob.sha256, 5, None):
            for ask in (store.get, store.has):
                with pytest.raises(
                    InvalidType, match=f"{type(store).__name__} is asked for a Blob"
                ):
                    ask(value)
    sql.close()


def test_content_limits_are_what_they_say_or_refused():
    """``ContentLimits(max_blob_bytes="5")`` was taken and every part made with it then
    raised a bare ``TypeError``; ``max_blob_bytes=0`` or ``-1`` refused every blob;
    ``image="image/png"`` was a set of letters (``in`` found "png" in it)."""
    for size in ("5", 0, -1, True, 1.5, float("nan")):
        with pytest.raises(InvalidType, match="ContentLimits: max_blob_bytes is an int"):
            ContentLimits(max_blob_bytes=size)
    for kind in ("image", "audio", "document"):
        for value in ("image/png", 5, [5]):
            with pytest.raises(InvalidType, match="ContentLimits: a kind's media types"):
                ContentLimits(**{kind: value})
    limits = ContentLimits(max_blob_bytes=len(PNG), image=["image/png"])
    assert limits.image == frozenset({"image/png"})
    assert ImagePart.from_bytes(PNG, "image/png", limits=limits).blob.size == len(PNG)
    with pytest.raises(ContentError, match="past the limit"):
        ImagePart.from_bytes(PNG + b"x", "image/png", limits=limits)
