"""A durable agent run in a child process by tests/test_durable.py (so it can be killed).

    python tests/durable_app.py DATABASE_URL WORKFLOW_ID STEPS [KILL_AT_STEP]
    python tests/durable_app.py enqueue DATABASE_URL WORKFLOW_ID STEPS QUEUE

Runs a counting agent for STEPS tool steps as workflow WORKFLOW_ID and prints its final
state as JSON. Side effects go to the files named by ``DURABLE_LOG`` (one line per tool call
with its idempotency key) and ``DURABLE_INFER_LOG`` (one line per model call). With
KILL_AT_STEP, the tool of that step kills its process with SIGKILL right after its side
effect, before DBOS records the step (once: a marker file says it happened); the next
process launched on the same database recovers the run and prints it instead.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from agents import AgentLoop, AgentState, InferenceRequest, Role, ToolCall, ToolContext, tool
from agents.durable.dbos import DurableAgent, launch, retrieve, shutdown
from agents.testing import FunctionDriver

LOG = os.environ["DURABLE_LOG"]
INFER_LOG = os.environ["DURABLE_INFER_LOG"]
KILL_AT: int | None = None  # set by main() from the command line
PAUSE = float(os.environ.get("DURABLE_PAUSE", "0"))  # seconds per tool call


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


@tool
def bump(n: int, context: ToolContext) -> int:
    """Count one more.

    Args:
        n: the count so far
    """
    execution_id, step, call_id = context.idempotency_key
    _append(LOG, f"{execution_id} {step} {call_id}")
    time.sleep(PAUSE)
    marker = f"{LOG}.killed"
    if step == KILL_AT and not os.path.exists(marker):
        _append(marker, "killed")
        os.kill(os.getpid(), signal.SIGKILL)
    return n + 1


def model(request: InferenceRequest) -> list[ToolCall] | str:
    """Call ``bump`` until the count reaches the goal in the user's message."""
    goal = int(next(m.content for m in request.messages if m.role is Role.USER))
    done = sum(1 for m in request.messages if m.role is Role.TOOL)
    _append(INFER_LOG, str(done + 1))
    if done < goal:
        return [ToolCall(id=f"call-{done + 1}", name="bump", arguments={"n": done})]
    return f"counted to {goal}"


agent = DurableAgent(AgentLoop(FunctionDriver(model), tools=[bump], max_steps=50), "counter")


def main() -> None:
    from dbos import DBOS

    if sys.argv[1] == "enqueue":  # put a run on a queue for a worker, and leave
        database, workflow_id, steps, queue = sys.argv[2:6]
        launch(database, executor_id="client", queues=[])
        try:
            agent.enqueue(AgentState.initial("You count.", messages=[steps]), queue, workflow_id)
        finally:
            shutdown()
        return
    global KILL_AT
    database, workflow_id, steps = sys.argv[1], sys.argv[2], sys.argv[3]
    KILL_AT = int(sys.argv[4]) if len(sys.argv) > 4 else None
    launch(database)  # recovers this executor's pending runs, if any
    try:
        if DBOS.get_workflow_status(workflow_id) is None:
            final = agent.run(AgentState.initial("You count.", messages=[steps]), workflow_id)
        else:  # started by a process that died: launch handed it to this one
            final = retrieve(workflow_id).result()
        sys.stdout.write(final.to_json())
    finally:
        shutdown()


if __name__ == "__main__":
    main()
