"""Message compilers (docs/how-to/context-window.md): what a step's request sends."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import add, agents_cli, python
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    CachedCount,
    ConfigurationError,
    DefaultCompiler,
    Message,
    ReplayDriver,
    Role,
    TokenWindowCompiler,
    estimate_tokens,
)
from agents.core.compaction import _cut
from agents.records.frozen import History
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

ROOT = Path(__file__).resolve().parent.parent


def one_token(message: Message) -> int:
    return 1


def windowed_loop(driver) -> AgentLoop:
    """A loop whose requests send at most five messages (one token each)."""
    return AgentLoop(
        driver,
        tools=[add],
        ids=SequentialIds(),
        clock=TickingClock(),
        message_compiler=TokenWindowCompiler(5, count=one_token),
    )


def long_conversation() -> AgentState:
    state = AgentState.initial("You add.")
    for number in range(10):
        state = state.with_user_message(f"question {number}")
        state = state.with_message(Message.assistant(f"answer {number}"))
    return state.with_user_message("last question")


def test_the_default_compiler_sends_everything_in_order():
    state = long_conversation()
    messages = DefaultCompiler().compile(state.context)
    assert list(messages) == list(state.context.compile())
    assert messages[0].role is Role.SYSTEM and len(messages) == 22


def test_the_window_keeps_the_head_and_the_newest_messages_within_the_budget():
    state = long_conversation()
    window = TokenWindowCompiler(6, count=one_token).compile(state.context)
    assert [m.content for m in window] == [
        "You add.",
        "question 8",
        "answer 8",
        "question 9",
        "answer 9",
        "last question",
    ]
    assert sum(one_token(m) for m in window) <= 6
    everything = TokenWindowCompiler(10_000).compile(state.context)
    assert list(everything) == list(state.context.compile())


def test_the_window_never_starts_with_an_orphan_tool_result_and_keeps_the_newest():
    driver = ScriptedDriver([call("add", a=1, b=2), call("add", a=3, b=4), reply("done")])
    loop = AgentLoop(driver, tools=[add], ids=SequentialIds(), clock=TickingClock())
    state = loop.run(AgentState.initial(messages=["go"]))
    # conversation: user, assistant(call), tool, assistant(call), tool, assistant
    window = TokenWindowCompiler(2, count=one_token).compile(state.context)
    assert window[0].role is not Role.TOOL
    assert [m.role for m in window] == [Role.ASSISTANT]
    tiny = TokenWindowCompiler(1, count=lambda m: 50).compile(state.context)
    assert [m.content for m in tiny] == ["done"]  # the newest, alone over the budget


def test_a_run_with_a_window_records_what_was_sent_and_replays():
    script = [call("add", a=i, b=1) for i in range(6)] + [reply("done")]

    loop = windowed_loop(ScriptedDriver(script))
    final = loop.run(AgentState.initial("You add.", messages=["go"]))
    last = final.steps[-1].input_messages
    assert len(last) <= 5 and last[0].content == "You add."
    assert len(final.messages) == 14  # the conversation itself is whole
    assert AgentState.from_json(final.to_json()) == final
    replayed = windowed_loop(ReplayDriver.from_state(final)).run(
        AgentState.initial("You add.", messages=["go"])
    )
    assert replayed.to_json() == final.to_json()


def test_at_step_rewinds_a_windowed_run_to_its_whole_conversation():
    """A windowed step records how long the conversation was, so rewinding does not take the
    window's length for the conversation's."""
    script = [call("add", a=i, b=1) for i in range(6)] + [reply("done")]

    start = AgentState.initial("You add.", messages=["go"])
    final = windowed_loop(ScriptedDriver(script)).run(start)
    windowed = [s for s in final.steps if s.conversation_length is not None]
    assert windowed and all(len(s.input_messages) <= 5 for s in windowed)
    decoded = AgentState.from_json(final.to_json())
    for k in range(final.step_count + 1):
        partial = windowed_loop(ScriptedDriver(script)).with_limits(max_steps=k).run(start)
        expected = list(partial.messages) if k else list(start.messages)
        assert list(final.at_step(k).messages) == expected, k
        assert list(decoded.at_step(k).messages) == expected, k


def test_agents_replay_repeats_a_windowed_run_from_its_file(tmp_path):
    """The command line has no message compiler: it sends the recorded windows and still
    compiles and compares every other request."""
    script = [call("add", a=i, b=1) for i in range(6)] + [reply("done")]
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        windowed_loop(ScriptedDriver(script)).with_listeners(log).run(
            AgentState.initial("You add.", messages=["go"])
        )
    result = agents_cli("replay", "--verify", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "replay matches the record" in result.stdout


def test_counts_are_remembered_per_message_and_the_cache_stays_bounded():
    calls = []

    def counting(message: Message) -> int:
        calls.append(message.content)
        return len(message.content)

    cached = CachedCount(counting, size=2)
    hello = Message.user("hello")
    assert [cached(hello), cached(hello)] == [5, 5] and calls == ["hello"]
    assert cached(Message.user("hello")) == 5 and len(calls) == 2  # another message
    cached(Message.user("x"))  # past the size: the cache starts again
    assert cached(hello) == 5 and calls[-1] == "hello"


COUNTED = """
import http.server, threading
import litellm
from agents import AudioPart, DocumentPart, ImagePart, LiteLLMDriver, Message, estimate_tokens
from agents.core.compilers import IMAGE_TOKENS

fetched = []

class Images(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        fetched.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Images)
threading.Thread(target=server.serve_forever, daemon=True).start()
litellm.user_url_validation = False  # litellm would fetch from 127.0.0.1 too (here only)
count = LiteLLMDriver("openai/gpt-4o-mini").token_counter()
text = count(Message.user("hello there, how are you?"))
url = f"http://127.0.0.1:{server.server_port}/photo.png"
linked = count(Message.user(["hello there, how are you?", ImagePart.from_url(url, "image/png")]))
wav = b"RIFF" + (1036).to_bytes(4, "little") + b"WAVEfmt " + bytes(16) + b"data" + bytes(50_000)
pdf = b"%PDF-1.4\\n" + b"x" * 40_000 + b"\\n%%EOF"
media = [AudioPart.from_bytes(wav, "audio/wav"), DocumentPart.from_bytes(pdf, "application/pdf")]
heard = count(Message.user(["hello there, how are you?", *media]))
empty = estimate_tokens(Message.user(""))
estimated = sum(estimate_tokens(Message.user(part)) - empty for part in media)
print(text, linked - text - IMAGE_TOKENS, len(fetched), heard - text - estimated)
"""


def test_estimates_and_litellms_counter():
    """``estimate_tokens``; and litellm's counter, which counts an image given by a link
    as ``IMAGE_TOKENS`` without fetching it (litellm's own would GET it to learn its size,
    from inside a step), and audio and documents as ``estimate_tokens`` does (litellm's
    refuses audio, and counts a document as nothing)."""
    assert estimate_tokens(Message.user("x" * 40)) == 4 + 10
    # in a child process (importing litellm here would leave its cached clients to the
    # tests of the litellm driver, which close them)
    counted = python("-c", COUNTED, cwd=ROOT)
    assert counted.returncode == 0, counted.stderr
    text, beyond, fetched, heard = map(int, counted.stdout.split())
    assert 5 <= text <= 20
    assert (beyond, fetched, heard) == (0, 0, 0)
    with pytest.raises(ConfigurationError, match="max_tokens"):
        TokenWindowCompiler(0)
    with pytest.raises(ConfigurationError, match="compile"):
        AgentLoop(ScriptedDriver([]), message_compiler=object())


def _reference_window(head, messages, budget, count):
    """The window as first written: message by message from the newest."""
    budget -= sum(count(m) for m in head)
    total = len(messages)
    start = total
    while start > 0:
        cost = count(messages[start - 1])
        if start < total and cost > budget:
            break
        budget -= cost
        start -= 1
    while start < total - 1 and messages[start].role is Role.TOOL:
        start += 1
    return [*head, *messages[start:]] if start else [*head, *messages]


def _conversation(roles_and_sizes):
    return [
        Message.tool(f"r{i}", "add", "x" * size) if tool else Message.assistant("y" * size)
        for i, (tool, size) in enumerate(roles_and_sizes)
    ]


def _messages(size: int):
    """``size`` (is a tool result, tokens) pairs: long conversations span several chunks."""
    pair = st.tuples(st.booleans(), st.integers(min_value=0, max_value=3))
    return st.lists(pair, min_size=size, max_size=size)


def _length(message: Message) -> int:
    return len(message.content)


@settings(max_examples=300, deadline=None)
@given(
    roles_and_sizes=st.integers(min_value=0, max_value=140).flatmap(_messages),
    budget=st.integers(min_value=1, max_value=160),
    grown=st.integers(min_value=0, max_value=40),
)
@example(roles_and_sizes=[(False, 1)] * 64, budget=63, grown=0)  # a chunk one token over
@example(roles_and_sizes=[(False, 1)] * 64, budget=64, grown=1)  # a chunk that just fits
def test_the_window_taken_chunk_by_chunk_is_the_window_taken_message_by_message(
    roles_and_sizes, budget, grown
):
    """Whole chunks of the conversation are taken at once where they fit (their tokens
    remembered): the same window as counting message by message, before and after the
    conversation grows (remembered chunks reused). Small sizes make exact fits common."""
    compiler = TokenWindowCompiler(budget, count=_length)
    state = AgentState.initial("", messages=_conversation(roles_and_sizes))
    for _ in range(2):
        head = state.context.head()
        messages = list(state.context.store.messages)
        expected = _reference_window(head, messages, budget, _length)
        assert list(compiler.compile(state.context)) == expected
        more = _conversation([(False, k % 4) for k in range(grown)])
        state = state.with_context(state.context.with_messages([*messages, *more]))


def _reference_cut(messages, sizes, budget):
    """The cut as first written, from a list of every message's size."""
    total = sum(sizes)
    if total <= budget:
        return 0
    last = len(messages) - 1
    wanted = 0
    while wanted < last and total > budget:
        total -= sizes[wanted]
        wanted += 1
    for cut in range(wanted, last + 1):
        if messages[cut].role is not Role.TOOL:
            return cut
    for cut in range(wanted - 1, 0, -1):
        if messages[cut].role is not Role.TOOL:
            return cut
    return 0


@settings(max_examples=200, deadline=None)
@given(
    roles_and_sizes=st.integers(min_value=0, max_value=140).flatmap(_messages),
    budget=st.integers(min_value=1, max_value=160),
)
@example(roles_and_sizes=[(False, 1)] * 40, budget=39)
@example(roles_and_sizes=[(True, 1)] * 3 + [(False, 1)] * 3, budget=2)
def test_the_cut_counted_as_far_as_needed_is_the_cut_counted_in_full(roles_and_sizes, budget):
    """``Summarization`` counts the conversation by remembered chunks and the oldest
    messages only as far as the cut: the same cut as from every message's size."""
    messages = History(_conversation(roles_and_sizes))
    count = CachedCount(_length)
    sizes = [_length(m) for m in messages]
    assert _cut(messages, count, count.total(messages), budget) == _reference_cut(
        list(messages), sizes, budget
    )
