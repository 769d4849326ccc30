"""An agent for the HTTP server's tests: its model answers from the conversation (the
same in every process), with a tool, a tool that needs approval, a slow tool and a tool
that asks a human a question."""

from __future__ import annotations

import time
from typing import Any

from agents import AgentLoop, ToolCall, ToolContext, tool
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


@tool
def slow(seconds: float) -> str:
    """Take a while."""
    time.sleep(seconds)
    return "done"


def answer(request: Any) -> Any:
    last = request.messages[-1]
    asked = next(m.content for m in reversed(request.messages) if m.role.value == "user")
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
        return f"tool said: {last.content}"
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
    if asked.startswith("book"):
        return [ToolCall(id="b1", name="book", arguments={"what": asked.split()[-1]})]
    return f"you said: {asked}"


def loop() -> AgentLoop:
    return AgentLoop(FunctionDriver(answer), tools=[add, refund, slow, book])
