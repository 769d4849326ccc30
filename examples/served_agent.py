"""A support agent to serve over HTTP, offline: its model reads the user's message (no API
key), it looks orders up, and a refund waits for a person's approval.

Run: ``.venv/bin/agents serve examples.served_agent:loop`` and open http://127.0.0.1:8000/
(say "status of A-1", then "refund A-1 15" and approve the call).
"""

from __future__ import annotations

import re
from typing import Any

from agents import AgentLoop, ToolCall, tool
from agents.testing import FunctionDriver

ORDERS = {"A-1": {"status": "shipped", "total": 40.0}, "B-2": {"status": "packing", "total": 12.5}}


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look up an order.

    Args:
        order_id: the order's id, such as A-1
    """
    return ORDERS.get(order_id, {"status": "unknown order"})


@tool(requires_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund part of an order (a person approves each refund).

    Args:
        order_id: the order to refund
        amount: how much
    """
    return f"refunded {amount:.2f} on {order_id}"


def model(request: Any) -> Any:
    """A stand-in for a real model: it answers from the user's last message."""
    last = request.messages[-1]
    if last.role.value == "tool":
        return f"Done: {last.content}"
    text = last.content
    order = re.search(r"[A-Z]-\d+", text)
    amount = re.search(r"(\d+(?:\.\d+)?)\s*$", text)
    if "refund" in text.lower() and order and amount:
        arguments = {"order_id": order.group(), "amount": float(amount.group(1))}
        return [ToolCall(id=f"refund-{len(request.messages)}", name="refund", arguments=arguments)]
    if order:
        return [
            ToolCall(
                id=f"lookup-{len(request.messages)}",
                name="lookup_order",
                arguments={"order_id": order.group()},
            )
        ]
    return "Ask me about an order (A-1, B-2), or for a refund: 'refund A-1 15'."


loop = AgentLoop(FunctionDriver(model), tools=[lookup_order, refund], max_steps=6)
