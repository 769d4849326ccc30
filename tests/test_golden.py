"""The JSON formats do not move: the runs of ``tests/data/audit_v1/make.py`` made by today's
code give, byte for byte, the final states in ``tests/data/golden/`` (written by the code of
0.1.0's last commit before the maintainers' clean-up) and its audit logs of format 3 (written
when format 3 came; those of format 2 are in ``tests/data/audit_v2/``, and every format
still reads: ``test_audit``). A change that alters them changes what users have stored: it
needs a new schema version or format, not a new golden file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"


def _make() -> object:
    spec = importlib.util.spec_from_file_location("audit_v1_make", DATA / "audit_v1" / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("run", ["tool_loop", "subagent", "two_runs", "crashed"])
def test_the_runs_write_what_they_always_wrote(run: str, tmp_path: Path) -> None:
    getattr(_make(), run)(tmp_path)
    for suffix in (".jsonl", ".state.json"):
        name = run + suffix
        assert (tmp_path / name).read_bytes() == (GOLDEN / name).read_bytes(), name
