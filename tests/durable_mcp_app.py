"""A durable agent whose tool is an MCP server's, run in a child process by
tests/test_durable.py (so it can be killed).

    python tests/durable_mcp_app.py DATABASE_URL WORKFLOW_ID [KILL_AT_INFERENCE]

The model calls ``count`` of tests/mcp_failing_server.py (a counter kept by the server
process) three times, then answers. With KILL_AT_INFERENCE, the model kills its process
with SIGKILL at that inference (once: the marker file ``DURABLE_LOG`` says it happened);
the next process launched on the same database recovers the run. Prints
``{"state": final state, "steps": [[kind, step, tool], ...]}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from agents import AgentLoop, AgentState, InferenceRequest, Role, ToolCall
from agents.durable.dbos import DurableAgent, launch, retrieve, shutdown
from agents.mcp import MCPServerStdio
from agents.testing import FunctionDriver

FAILING = str(Path(__file__).parent / "mcp_failing_server.py")
MARKER = os.environ["DURABLE_LOG"]
KILL_AT: int | None = None  # set by main() from the command line


def model(request: InferenceRequest) -> list[ToolCall] | str:
    """``count`` three times, then the answer."""
    done = sum(1 for m in request.messages if m.role is Role.TOOL)
    if done + 1 == KILL_AT and not os.path.exists(MARKER):
        Path(MARKER).write_text("killed")
        os.kill(os.getpid(), signal.SIGKILL)
    if done < 3:
        return [ToolCall(id=f"call-{done + 1}", name="count", arguments={})]
    return "counted"


server = MCPServerStdio(sys.executable, [FAILING])
agent = DurableAgent(AgentLoop(FunctionDriver(model), tools=[server], max_steps=10), "mcp")


def main() -> None:
    from dbos import DBOS

    global KILL_AT
    database, workflow_id = sys.argv[1], sys.argv[2]
    KILL_AT = int(sys.argv[3]) if len(sys.argv) > 3 else None
    launch(database)  # recovers this executor's pending runs, if any
    try:
        if DBOS.get_workflow_status(workflow_id) is None:
            final = agent.run(AgentState.initial("You count.", messages=["go"]), workflow_id)
        else:  # started by a process that died: launch handed it to this one
            final = retrieve(workflow_id).result()
        steps = [[s.kind, s.step, s.tool] for s in DurableAgent.steps(workflow_id)]
        sys.stdout.write(json.dumps({"state": json.loads(final.to_json()), "steps": steps}))
    finally:
        shutdown()


if __name__ == "__main__":
    main()
