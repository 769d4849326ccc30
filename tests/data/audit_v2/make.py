"""How ``add_loop.jsonl`` in this folder was written, by the release before format 3 (commit
467c220): a plain tool loop — a scripted model, one ``add`` call a step — whose step records
format 3 must write in half the bytes or fewer (``tests/test_audit_format.py``). The other
logs here are the runs of ``tests/data/audit_v1/make.py``, written by that release.

Run from the repository root: ``python tests/data/audit_v2/make.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/helpers.py

from helpers import make_loop  # noqa: E402

from agents import AgentState, AuditLog  # noqa: E402
from agents.testing import call, reply  # noqa: E402

STEPS = 10


def add_loop(folder: Path = HERE) -> None:
    """Ten steps, each one ``add`` call, then an answer."""
    path = folder / "add_loop.jsonl"
    path.unlink(missing_ok=True)
    script = [call("add", a=i, b=1) for i in range(STEPS - 1)] + [reply("done")]
    with AuditLog.open(path) as log:
        final = make_loop(*script, listeners=[log], max_steps=STEPS).run(
            AgentState.initial("You add numbers.", messages=["go"])
        )
    (folder / "add_loop.state.json").write_text(final.to_json() + "\n", encoding="utf-8")


if __name__ == "__main__":
    add_loop()
