"""An agent for the HTTP server's tests: its model answers from the conversation (the
same in every process), with a tool, a tool that needs approval, a slow tool and a tool
that asks a human a question."""

from __future__ import annotations

import struct
import time
import zlib
from typing import Any

from agents import AgentLoop, InferenceResponse, ReasoningPart, ToolCall, ToolContext, tool
from agents.testing import FunctionDriver


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(requires_approval=True)
def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


@tool
def book(what: str, context: ToolContext) -> str:
    """Book something on a date a human gives."""
    schema = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
    answer = context.ask(f"Which date for the {what}?", schema)
    return f"booked {what} on {answer.content['date']}" if answer.accepted else "not booked"


def _png(width: int, height: int) -> bytes:
    """A red PNG of that size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png(40, 30)


@tool
def screenshot() -> bytes:
    """Take a screenshot (a PNG)."""
    return PNG


@tool
def slow(seconds: float) -> str:
    """Take a while."""
    time.sleep(seconds)
    return "done"


def answer(request: Any) -> Any:
    last = request.messages[-1]
    media = [part for part in last.parts if hasattr(part, "media_type")]
    if last.role.value == "user" and media:  # what it was sent, its bytes read
        held = [f"{p.media_type} of {len(p.data())} bytes" if p.blob else p.url for p in media]
        return "you sent " + ", ".join(held)
    asked = next(m.text for m in reversed(request.messages) if m.role.value == "user")
    if last.role.value == "tool" and asked.startswith("refund"):
        results = [m.content for m in request.messages if m.role.value == "tool"]
        return "tool said: " + "; ".join(results)
    if last.role.value == "tool":
        if (
            asked.startswith("slow")
            and len([m for m in request.messages if m.role.value == "tool"]) < 4
        ):
            return [
                ToolCall(id=f"s{len(request.messages)}", name="slow", arguments={"seconds": 0.4})
            ]
        return f"tool said: {last.text or 'an image'}"
    if asked.startswith("add"):
        _, a, b = asked.split()
        return [ToolCall(id="c1", name="add", arguments={"a": int(a), "b": int(b)})]
    if asked.startswith("refund"):  # one call per amount, in one answer
        amounts = [int(word) for word in asked.split()[1:]]
        return [
            ToolCall(id=f"r{n}", name="refund", arguments={"amount": amount})
            for n, amount in enumerate(amounts, start=1)
        ]
    if asked.startswith("slow"):
        return [ToolCall(id="s0", name="slow", arguments={"seconds": 0.4})]
    if asked.startswith("shot"):
        return [ToolCall(id="p1", name="screenshot", arguments={})]
    if asked.startswith("think"):  # a reasoning model's answer: its thinking, then the text
        thought = ReasoningPart(text="The user wants me to think.", signature="sig-1")
        withheld = ReasoningPart(redacted="opaque-bytes")
        return InferenceResponse(content=[thought, withheld, "I thought about it."])
    if asked.startswith("book"):
        return [ToolCall(id="b1", name="book", arguments={"what": asked.split()[-1]})]
    return f"you said: {asked}"


def loop() -> AgentLoop:
    return AgentLoop(FunctionDriver(answer), tools=[add, refund, slow, book, screenshot])
