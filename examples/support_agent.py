"""A support agent with two tools and a guard hook, run offline on a scripted model.

Run: ``.venv/bin/python examples/support_agent.py``
"""

from __future__ import annotations

from agents import (
    AgentLoop,
    AgentState,
    HookContext,
    HookTrigger,
    InferenceRequest,
    Role,
    ToolCall,
    hook,
    tool,
)
from agents.testing import FunctionDriver, ScriptedDriver, call, reply

ORDERS = {"A-1": {"status": "shipped", "total": 40.0}}


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look up an order.

    Args:
        order_id: the order's id
    """
    return ORDERS[order_id]


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: the order to refund
        amount: how much
    """
    return f"refunded {amount:.2f} on {order_id}"


@hook(HookTrigger.BEFORE_TOOL_USE)
def cap_refunds(context: HookContext) -> HookContext:
    """Block refunds larger than the order total."""
    call_ = context.tool_call
    if call_ is not None and call_.name == "refund":
        total = float(ORDERS[call_.arguments["order_id"]]["total"])  # type: ignore[arg-type]
        if call_.arguments["amount"] > total:
            return context.with_tool_blocked(f"refund exceeds the order total of {total}")
    return context


def build() -> tuple[AgentLoop, AgentState]:
    """The agent (on a scripted model) and the conversation it starts from."""
    model = ScriptedDriver(
        [
            call("lookup_order", order_id="A-1"),
            call("refund", order_id="A-1", amount=400.0),
            call("refund", order_id="A-1", amount=40.0),
            reply("Refunded 40.00 on A-1."),
        ]
    )
    loop = AgentLoop(model, tools=[lookup_order, refund], hooks=[cap_refunds], max_steps=6)
    return loop, AgentState.initial("You are a support agent.", messages=["Refund A-1"])


def answer(request: InferenceRequest) -> list[ToolCall] | str:
    """The scripted model's next answer, read off the conversation (how many tool results
    it holds), so that a run resumed after an approval goes on where it stopped."""
    done = sum(1 for message in request.messages if message.role is Role.TOOL)
    script: list[list[ToolCall] | str] = [
        [ToolCall(id="call_1", name="lookup_order", arguments={"order_id": "A-1"})],
        [ToolCall(id="call_2", name="refund", arguments={"order_id": "A-1", "amount": 400.0})],
        [ToolCall(id="call_3", name="refund", arguments={"order_id": "A-1", "amount": 40.0})],
        "Refunded 40.00 on A-1.",
    ]
    return script[min(done, len(script) - 1)]


def loop() -> AgentLoop:
    """The agent as ``agents serve examples.support_agent:loop`` serves it: the same tools,
    guard and answers, but a refund waits for a human's approval (the page shows it with
    Approve and Deny), on a model that reads where the conversation is."""
    approved = tool(refund.function, requires_approval=True)
    return AgentLoop(
        FunctionDriver(answer), tools=[lookup_order, approved], hooks=[cap_refunds], max_steps=6
    )


def main() -> AgentState:
    """Run the agent and print what happened."""
    loop, state = build()
    final = loop.run(state)
    for step_execution in final.step_executions:
        for execution in step_execution.step.tool_executions:
            outcome = execution.error.describe() if execution.error else execution.value
            print(f"step {step_execution.number}: {execution.name} -> {outcome}")
    print(f"{final.status.value if final.status else 'none'}: {final.final_response}")
    return final


if __name__ == "__main__":
    main()
