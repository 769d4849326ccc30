"""How the format-1 audit logs in this folder were written (by the release before format 2,
commit e12e0a4): kept so that the logs' origin is reproducible. Each ``NAME.jsonl`` has its
``NAME.state.json``, the final state the run returned (or, for a crashed log, the state
after its last recorded step), which ``AuditLog.read`` must rebuild byte for byte.

Run from the repository root with that release installed: ``python tests/data/audit_v1/make.py``.
The same runs made by today's code, into another folder, are ``tests/data/golden/``
(``tests/test_golden.py``); made by the release before format 3 (commit 467c220), they are
the format-2 logs in ``tests/data/audit_v2/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/helpers.py

from helpers import add, echo, make_loop  # noqa: E402

from agents import AgentState, AuditLog, StepCompleted, subagent_tool  # noqa: E402
from agents.testing import call, calls, reply  # noqa: E402


def initial() -> AgentState:
    return AgentState.initial("You are a test agent.", messages=["hello"])


def tool_loop(folder: Path = HERE) -> None:
    """Two calls in one step, an unknown tool, an answer."""
    path = folder / "tool_loop.jsonl"
    path.unlink(missing_ok=True)
    with AuditLog.open(path) as log:
        script = [calls(call("add", a=1, b=2), call("echo", text="x")), call("nope"), reply("done")]
        final = make_loop(*script, tools=[add, echo], listeners=[log]).run(initial())
    (folder / "tool_loop.state.json").write_text(final.to_json() + "\n", encoding="utf-8")


def subagent(folder: Path = HERE) -> None:
    """A sub-agent's run recorded inside its parent's step."""
    path = folder / "subagent.jsonl"
    path.unlink(missing_ok=True)
    child = subagent_tool("helper", "Helps.", lambda: make_loop(reply("child answer")))
    with AuditLog.open(path) as log:
        loop = make_loop(call("helper", task="help"), reply("done"), tools=[child], listeners=[log])
        final = loop.run(initial())
    (folder / "subagent.state.json").write_text(final.to_json() + "\n", encoding="utf-8")


def two_runs(folder: Path = HERE) -> None:
    """Two runs appended to one log (``read`` gives the last)."""
    path = folder / "two_runs.jsonl"
    path.unlink(missing_ok=True)
    for text in ("first", "second"):
        with AuditLog.open(path) as log:
            loop = make_loop(call("add", a=2, b=3), reply(text), listeners=[log])
            final = loop.run(AgentState.initial("You add.", messages=[text]))
    (folder / "two_runs.state.json").write_text(final.to_json() + "\n", encoding="utf-8")


def crashed(folder: Path = HERE) -> None:
    """A log cut right after step 2's record, as a crash leaves it."""
    path = folder / "crashed.jsonl"
    path.unlink(missing_ok=True)
    after: list[AgentState] = []

    def keep(event: object) -> None:
        if isinstance(event, StepCompleted):
            after.append(event.state)

    with AuditLog.open(path) as log:
        script = [call("add", a=1, b=1), call("add", a=2, b=2), call("add", a=3, b=3), reply("6")]
        make_loop(*script, listeners=[log, keep]).run(initial())
    lines = path.read_bytes().splitlines(keepends=True)
    import json

    last = max(
        i
        for i, line in enumerate(lines)
        if json.loads(line)["record"] == "step" and json.loads(line)["step"] == 2
    )
    path.write_bytes(b"".join(lines[: last + 1]))
    (folder / "crashed.state.json").write_text(after[1].to_json() + "\n", encoding="utf-8")


if __name__ == "__main__":
    tool_loop()
    subagent()
    two_runs()
    crashed()
