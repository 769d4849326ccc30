"""Binary content: a 100-step tool run whose first message holds a 5 MB image, against the
same run with a text message, on the engine alone and audited (``durability="none"``),
and the text run with the least a record per step can cost (``StepLines``); what the
image costs in the state's JSON and in each audit record, and how many times its bytes
are stored (once) in the audit log's folder and a SQLite session.

``python benchmarks/bench_content.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from agents import AgentLoop, AgentState, AuditLog, ImagePart, SQLiteSessionStore, tool
from agents.records.codec import Encoding, encode_step_execution
from agents.records.events import StepCompleted
from agents.testing import ScriptedDriver, SequentialIds, TickingClock, call, reply

IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (5_000_000 // 256)  # ~5 MB


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def loop(steps: int) -> AgentLoop:
    script = [call("add", a=i, b=1) for i in range(steps - 1)] + [reply("done")]
    return AgentLoop(
        ScriptedDriver(script),
        tools=[add],
        max_steps=steps,
        clock=TickingClock(),
        ids=SequentialIds(),
    )


def initial(image: ImagePart | None) -> AgentState:
    first: Any = ["What is in this picture?", image] if image is not None else "What is 1 + 1?"
    return AgentState.initial("You add numbers.", messages=[first])


class StepLines:
    """The least an audit record per step costs in this design: a listener writing each
    step as the audit log's compact JSON (sorted keys) and its SHA-256, a line a step,
    without the state's changes, the chain or the references to the response that
    ``AuditLog`` adds. Not a log anything reads: a floor to measure against."""

    critical = True
    event_types = frozenset({StepCompleted})

    def __init__(self, path: Path) -> None:
        self.file = path.open("ab", buffering=0)

    def __call__(self, event: Any) -> None:
        if type(event) is not StepCompleted:  # (a run's start and end reach every listener)
            return
        encoding = Encoding(None, times=True)
        step = encode_step_execution(event.step_execution, event.state.context, encoding, True)
        body = orjson.dumps(step, option=orjson.OPT_SORT_KEYS)
        self.file.write(body + hashlib.sha256(body).hexdigest().encode() + b"\n")

    def close(self) -> None:
        self.file.close()


def per_step(steps: int, image: ImagePart | None, log: Path | None, floor: bool = False) -> float:
    """µs a step of one run (audited into the new file ``log`` when given, or with
    ``floor`` only its steps' lines written there, ``StepLines``; opening and closing the
    log left out)."""
    run, state = loop(steps), initial(image)
    audit: Any = None
    if log is not None:
        audit = StepLines(log) if floor else AuditLog.open(log, durability="none")
    if audit is not None:
        run = run.with_listeners(audit)
    start = time.perf_counter()
    final = run.run(state)
    elapsed = time.perf_counter() - start
    if audit is not None:
        audit.close()
    assert final.step_count == steps
    return elapsed / steps * 1e6


def interleaved(steps: int, image: ImagePart, folder: Path, repeats: int) -> dict[str, float]:
    """Best µs a step over ``repeats`` rounds of the five runs, one of each a round (on a
    shared machine the speed drifts: runs compared are measured side by side), the
    audited ones into ``folder``'s ``plain`` and ``pictured`` folders (``run-<round>``),
    the floor's into ``floor-<round>``."""
    kinds = ("engine text", "engine image", "audited text", "audited image", "floor text")
    best = dict.fromkeys(kinds)
    for round_ in range(repeats):
        for key in best:
            sort, kind = key.split()
            where = folder / ("plain" if kind == "text" else "pictured")
            name = f"floor-{round_}" if sort == "floor" else f"run-{round_}"
            log = where / f"{name}.jsonl" if sort != "engine" else None
            found = per_step(steps, image if kind == "image" else None, log, sort == "floor")
            best[key] = found if best[key] is None else min(best[key], found)
    return {key: float(value or 0.0) for key, value in best.items()}


def measure(steps: int, repeats: int) -> dict[str, Any]:
    image = ImagePart.from_bytes(IMAGE, "image/png")
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        plain, pictured = folder / "plain", folder / "pictured"
        plain.mkdir()
        pictured.mkdir()
        best = interleaved(steps, image, folder, repeats)
        engine_text, engine_image = best["engine text"], best["engine image"]
        audited_text, audited_image = best["audited text"], best["audited image"]
        text_log = (plain / "run-0.jsonl").read_bytes().splitlines()
        image_log = (pictured / "run-0.jsonl").read_bytes().splitlines()
        blob_files = [p for p in (pictured / "run-0.jsonl.blobs").rglob("*") if p.is_file()]
        final = loop(steps).run(initial(image))
        store = SQLiteSessionStore(folder / "sessions.db")
        store.create(final, session_id="s")
        store.close()
        rows = (
            sqlite3.connect(folder / "sessions.db").execute("SELECT COUNT(*) FROM blobs").fetchone()
        )
        reference = len(image.to_json()) - len('"schema_version":1,')
        return {
            "steps": steps,
            "image bytes": len(IMAGE),
            "engine us/step (text)": engine_text,
            "engine us/step (image)": engine_image,
            "engine ratio": engine_image / engine_text,
            "audited us/step (text)": audited_text,
            "audited us/step (image)": audited_image,
            "audited ratio": audited_image / audited_text,
            "audit cost (text, durability none)": audited_text / engine_text,
            "floor cost (text)": best["floor text"] / engine_text,
            "step record bytes (text)": sorted(
                len(line) for line in text_log if b'"record":"step"' in line
            )[len(text_log) // 2 - 1],
            "reference bytes": reference,
            "state JSON bytes over text": len(final.to_json())
            - len(loop(steps).run(initial(None)).to_json()),
            "largest record over text": max(map(len, image_log)) - max(map(len, text_log)),
            "records naming the image": sum(
                image.blob.sha256.encode() in line for line in image_log
            ),
            "audit log blob files": len(blob_files),
            "SQLite blob rows": rows[0],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(100, 3 if args.quick else 25)
    if args.json:
        print(json.dumps(found))
        return
    for key, value in found.items():
        print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
