"""Message compilers: which messages a step's request sends (docs/how-to/context-window.md).

A ``MessageCompiler`` turns the context into the request's messages. The default sends
everything in the order system prompt, summary, buffer, conversation (sharing the
conversation's structure, so histories serialize by reference). ``TokenWindowCompiler``
sends the head and the newest conversation messages that fit a token budget. Pure: the
tokens are counted by a function of the message, by default a character estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

from agents.errors import ConfigurationError
from agents.records.content import AudioPart, ImagePart, MediaPart, ReasoningPart
from agents.records.context import AgentContext
from agents.records.frozen import CHUNK, History
from agents.records.messages import Message, Role

__all__ = [
    "IMAGE_TOKENS",
    "CachedCount",
    "DefaultCompiler",
    "MessageCompiler",
    "TokenWindowCompiler",
    "estimate_tokens",
    "media_tokens",
]

_PER_MESSAGE: Final = 4  # role and separators, as chat formats spend them


IMAGE_TOKENS: Final = 1_000
"""What ``estimate_tokens`` counts for an image: about what the providers charge for one of
a megapixel (Anthropic about 1,400, OpenAI 765 in high detail, Gemini 258 a tile)."""


def estimate_tokens(message: Message) -> int:
    """A provider-neutral estimate: a token per 4 characters of content, reasoning and
    tool-call arguments, plus 4 per message; an image ``IMAGE_TOKENS``, audio a token per
    500 bytes (about 32 a second, as Gemini counts), a document or file a token per 4
    bytes. Pass a real counter (``LiteLLMDriver.token_counter``, which counts images as
    the model's provider does) where the budget must be exact."""
    size = len(message.text)
    media = 0
    if type(message.content) is not str:
        for part in message.parts:
            if isinstance(part, ReasoningPart):
                size += len(part.text or part.redacted or "")
            elif isinstance(part, MediaPart):
                media += media_tokens(part)
    for call in message.tool_calls:
        size += len(call.name) + sum(len(str(k)) + len(str(v)) for k, v in call.arguments.items())
    return _PER_MESSAGE + (size + 3) // 4 + media


def media_tokens(part: MediaPart) -> int:
    """What ``estimate_tokens`` counts for a media part: an image ``IMAGE_TOKENS``, audio a
    token per 500 bytes, a document or file a token per 4 bytes."""
    if isinstance(part, ImagePart):
        return IMAGE_TOKENS
    size = part.blob.size if part.blob is not None else 0
    return size // 500 if isinstance(part, AudioPart) else (size + 3) // 4


class CachedCount:
    """A token counter remembering its counts by message identity: records are immutable,
    so a message counted once is counted for good, and a conversation is not re-counted
    before every request. Each entry keeps its message alive, so an ``id`` is never taken
    for another message's; the cache empties itself past ``size`` entries. ``count`` must be
    a pure function of the message (both built-in counters are)."""

    __slots__ = ("_chunks", "_entries", "count", "size")

    def __init__(self, count: Callable[[Message], int], size: int = 16_384) -> None:
        self.count = count
        self.size = size
        self._entries: dict[int, tuple[Message, int]] = {}
        # the tokens of a history's full chunk (shared by every version holding it)
        self._chunks: dict[int, tuple[tuple[Message, ...], int]] = {}

    def __call__(self, message: Message) -> int:
        entry = self._entries.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        tokens = self.count(message)
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[id(message)] = (message, tokens)
        return tokens

    def chunk(self, chunk: tuple[Message, ...]) -> int:
        """The tokens of a block of ``History.blocks()``, remembered for full chunks."""
        if len(chunk) < CHUNK:  # a tail: each message is remembered
            return sum(map(self, chunk))
        entry = self._chunks.get(id(chunk))
        if entry is not None and entry[0] is chunk:
            return entry[1]
        tokens = 0
        entries = self._entries
        for message in chunk:  # __call__ inlined: a moved conversation is counted again
            known = entries.get(id(message))
            tokens += known[1] if known is not None and known[0] is message else self(message)
        if len(self._chunks) >= self.size // CHUNK:
            self._chunks.clear()
        self._chunks[id(chunk)] = (chunk, tokens)
        return tokens

    def total(self, messages: History[Message]) -> int:
        """The tokens of a history (its head and its blocks)."""
        return sum(map(self, messages.head)) + sum(map(self.chunk, messages.blocks()))

    def __repr__(self) -> str:
        return f"CachedCount({self.count!r})"


@runtime_checkable
class MessageCompiler(Protocol):
    """Chooses the messages of a step's request from the context."""

    def compile(self, context: AgentContext) -> History[Message]: ...


class DefaultCompiler:
    """System prompt, summary, buffer, then the whole conversation."""

    __slots__ = ()

    def compile(self, context: AgentContext) -> History[Message]:
        """Everything, sharing the conversation's structure."""
        return context.compile()

    def __repr__(self) -> str:
        return "DefaultCompiler()"


class TokenWindowCompiler:
    """The head (system prompt, summary, buffer) and the newest conversation messages that
    fit ``max_tokens`` together with it. A window never starts with tool results whose call
    it left out; the newest message is always sent, even alone over the budget."""

    __slots__ = ("_counted", "count", "max_tokens")

    def __init__(self, max_tokens: int, count: Callable[[Message], int] = estimate_tokens) -> None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be an int >= 1, got {max_tokens!r}")
        if not callable(count):
            raise ConfigurationError(f"count must be callable, got {count!r}")
        self.max_tokens = max_tokens
        self.count = count
        self._counted = CachedCount(count)

    def compile(self, context: AgentContext) -> History[Message]:
        """The head and the newest messages within the budget (reads only those: whole
        chunks of the conversation at a time where a chunk fits)."""
        head = context.head()
        messages = context.store.messages
        if messages.head:  # a conversation built with a head of its own: its items in blocks
            messages = History(tuple(messages))
        count = self._counted
        budget = self.max_tokens - sum(count(m) for m in head)
        total = len(messages)
        start = total
        blocks = messages.blocks()
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            if start < total and index < len(blocks) - 1:  # a full chunk, not the newest
                cost = count.chunk(block)
                if cost <= budget:  # every message of it fits: taken whole
                    budget -= cost
                    start -= len(block)
                    continue
            for message in reversed(block):  # newest first
                cost = count(message)
                if start < total and cost > budget:
                    break
                budget -= cost
                start -= 1
            else:
                continue
            break
        window = messages.items_from(start)
        for message in window:
            if start == total - 1 or message.role is not Role.TOOL:
                break
            start += 1  # its tool call was left out: providers reject an orphan result
        if start == 0:
            return context.compile()
        return History(messages.items_from(start)).with_head(head)

    def __repr__(self) -> str:
        return f"TokenWindowCompiler({self.max_tokens})"
