"""Agent runs shared by worker processes on PostgreSQL, surviving a killed worker.

The walkthrough is docs/how-to/scale-out.md. In short, with ``AGENTS_DATABASE_URL`` naming a
PostgreSQL database (run from the repository root)::

    agents worker examples.scale_out:agent --queue orders --executor-id w1 --concurrency 2 &
    agents worker examples.scale_out:agent --queue orders --executor-id w2 --concurrency 2 &
    python examples/scale_out.py enqueue 10     # ten orders onto the queue
    kill -9 <pid of w1>                         # while it works
    agents recover examples.scale_out:agent --executor w1
    python examples/scale_out.py report         # every order done, each charged once

Each order is one agent run: the model (offline, a function) reserves stock, charges the
customer and answers. ``charge`` writes to the database under its idempotency key, so a call
that runs again after a crash still charges once. Final states land in the session store.
"""

from __future__ import annotations

import os
import sys
import time

import psycopg

from agents import (
    AgentLoop,
    AgentState,
    FunctionDriver,
    InferenceRequest,
    Role,
    ToolCall,
    ToolContext,
    tool,
)
from agents.durable.dbos import DurableAgent, launch, retrieve, shutdown
from agents.persistence import PostgresSessionStore

DATABASE_URL = os.environ.get("AGENTS_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
# Seconds each tool call takes: time enough to kill a worker in the middle of a run.
PAUSE = float(os.environ.get("SCALE_OUT_PAUSE", "0.5"))
QUEUE = "orders"

SCHEMA = """
SELECT pg_advisory_xact_lock(7);
CREATE TABLE IF NOT EXISTS charges (
    idempotency_key TEXT PRIMARY KEY, order_id TEXT NOT NULL, amount NUMERIC NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id BIGSERIAL PRIMARY KEY, order_id TEXT NOT NULL, tool TEXT NOT NULL, pid INT NOT NULL
);
"""


def connect() -> psycopg.Connection:
    return psycopg.connect(DATABASE_URL, autocommit=True)


with connect() as setup, setup.transaction():
    setup.execute(SCHEMA)


def _attempt(order_id: str, name: str) -> None:
    """Every call is noted, including one that runs again after a crash (at-least-once)."""
    with connect() as db:
        db.execute(
            "INSERT INTO attempts (order_id, tool, pid) VALUES (%s, %s, %s)",
            (order_id, name, os.getpid()),
        )


@tool
def reserve_stock(order_id: str) -> str:
    """Reserve the items of an order.

    Args:
        order_id: the order
    """
    _attempt(order_id, "reserve_stock")
    time.sleep(PAUSE)
    return f"stock reserved for {order_id}"


@tool
def charge(order_id: str, amount: float, context: ToolContext) -> str:
    """Charge the customer for an order, once.

    Args:
        order_id: the order
        amount: the amount to charge
    """
    _attempt(order_id, "charge")
    time.sleep(PAUSE)
    key = "/".join(map(str, context.idempotency_key))  # (execution id, step, tool call id)
    with connect() as db:
        db.execute(
            "INSERT INTO charges VALUES (%s, %s, %s) ON CONFLICT (idempotency_key) DO NOTHING",
            (key, order_id, amount),
        )
    return f"charged {amount:.2f} for {order_id}"


def model(request: InferenceRequest) -> list[ToolCall] | str:
    """A stand-in model: reserve, charge, answer."""
    order_id = next(m.content for m in request.messages if m.role is Role.USER)
    done = sum(1 for m in request.messages if m.role is Role.TOOL)
    if done == 0:
        return [ToolCall(id="reserve", name="reserve_stock", arguments={"order_id": order_id})]
    if done == 1:
        amount = 10.0 + int(order_id.rsplit("-", 1)[-1])
        return [
            ToolCall(id="charge", name="charge", arguments={"order_id": order_id, "amount": amount})
        ]
    return f"{order_id} is on its way"


store = PostgresSessionStore(DATABASE_URL)
agent = DurableAgent(
    AgentLoop(FunctionDriver(model), tools=[reserve_stock, charge], max_steps=5),
    "orders",
    store=store,
)


def enqueue(count: int) -> None:
    """Put ``count`` orders on the queue (workflow ids order-1..N: enqueueing again is a
    no-op for orders already there)."""
    for number in range(1, count + 1):
        order_id = f"order-{number}"
        state = AgentState.initial("You fulfil orders.", messages=[order_id])
        agent.enqueue(state, QUEUE, workflow_id=order_id)
        print(f"enqueued {order_id}")


def report(count: int) -> None:
    """Wait for every order; print its answer, where its tools ran, and its charges."""
    with connect() as db:
        for number in range(1, count + 1):
            order_id = f"order-{number}"
            final = retrieve(order_id).result()
            pids = sorted(
                {
                    row[0]
                    for row in db.execute(
                        "SELECT pid FROM attempts WHERE order_id = %s", (order_id,)
                    )
                }
            )
            (charges,) = db.execute(
                "SELECT count(*) FROM charges WHERE order_id = %s", (order_id,)
            ).fetchone() or (0,)
            print(
                f"{order_id}: {final.final_response!r} "
                f"(tools ran in pids {pids}; charged {charges} time(s))"
            )


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or argv[0] not in ("enqueue", "report"):
        print("usage: python examples/scale_out.py enqueue|report [COUNT]", file=sys.stderr)
        return 2
    count = int(argv[1]) if len(argv) == 2 else 10
    launch(DATABASE_URL, executor_id=f"client-{os.getpid()}", queues=[])  # runs nothing
    try:
        (enqueue if argv[0] == "enqueue" else report)(count)
    finally:
        shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
