"""``durability="none"`` records a run's steps in batches (docs/design/auditing.md): the
same records as the other modes, byte for byte; a step it cannot record fails the run at
the run's next event, that run's and no other."""

from __future__ import annotations

import json
import threading

import pytest
from helpers import add, ended_in_threads, explode, initial, make_loop

from agents import (
    AuditLog,
    AuditLogTampered,
    ContentError,
    ImagePart,
    InvalidType,
    StepCompleted,
    subagent_tool,
    tool,
)
from agents.audit import log as audit_log
from agents.persistence.memory import InMemorySessionStore
from agents.persistence.runtime import SessionRuntime
from agents.testing import SequentialIds, call, fail, reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


@tool
def screenshot() -> ImagePart:
    """Take a screenshot."""
    return ImagePart.from_bytes(PNG, "image/png")


def adds(steps):
    return [call("add", a=i, b=1) for i in range(steps - 1)] + [reply("done")]


def pictured(good, after):
    """A script whose step ``good + 1`` takes a screenshot (the log must store its bytes)."""
    return [*adds(good + 1)[:good], call("screenshot"), *adds(after + 1)]


def unstorable(tmp_path, name="run.jsonl"):
    """A log whose blob folder cannot be made (a file is in its place)."""
    (tmp_path / "taken").write_text("a file, not a folder")
    return AuditLog.open(tmp_path / name, durability="none", blobs=tmp_path / "taken")


@pytest.mark.parametrize("steps", [3, 64, 65, 150])
def test_the_records_are_those_of_every_mode_byte_for_byte(tmp_path, steps):
    """Batches of steps (64 a batch, and the run's end) change nothing written."""
    finals, logs = [], []
    for mode in ("step", "none"):
        path = tmp_path / f"{mode}.jsonl"
        with AuditLog.open(path, durability=mode) as log:
            finals.append(make_loop(*adds(steps), listeners=[log], max_steps=steps).run(initial()))
        logs.append(path.read_bytes())
    assert finals[0].to_json() == finals[1].to_json()
    assert logs[0] == logs[1]
    assert AuditLog.verify(tmp_path / "none.jsonl") == steps + 2


def test_sub_agents_and_failures_are_recorded_as_every_mode_records_them(tmp_path):
    """A sub-agent's records (its events come through the parent's listeners, between the
    parent's steps), a tool that fails and a run that fails: the same bytes in both modes,
    and each run reads back as it returned."""
    child = subagent_tool(
        "helper", "Helps.", lambda: make_loop(call("add", a=1, b=2), reply("child answer"))
    )
    script = [
        call("add", a=1, b=1),
        call("helper", task="help"),
        call("explode", reason="tool down"),
        call("helper", task="again"),
        fail(RuntimeError("model down")),
    ]
    finals, logs = [], []
    for mode in ("step", "none"):
        path = tmp_path / f"{mode}.jsonl"
        with AuditLog.open(path, durability=mode) as log:
            loop = make_loop(*script, tools=[add, child, explode], listeners=[log])
            finals.append(loop.run(initial()))
        logs.append(path.read_bytes())
    assert finals[0].status.value == "failed"
    assert finals[0].to_json() == finals[1].to_json()
    assert logs[0] == logs[1]
    records = [json.loads(line) for line in logs[1].splitlines()]
    nested = [r["record"] for r in records if r["payload"].get("depth") == 1]
    assert nested == ["step", "step", "end"] * 2  # (a start says its depth in its state)
    assert AuditLog.read(tmp_path / "none.jsonl").to_json() == finals[1].to_json()


def test_a_step_that_cannot_be_recorded_fails_the_run_at_its_next_event(tmp_path):
    """With "step" the run fails at the step; with "none" at the run's next event (its end
    here): the records before the step are written, the log is incomplete, never torn."""
    script = pictured(good=1, after=2)
    (tmp_path / "taken").write_text("a file, not a folder")
    finals = {}
    for mode in ("step", "none"):
        path = tmp_path / f"{mode}.jsonl"
        with AuditLog.open(path, durability=mode, blobs=tmp_path / "taken") as log:
            finals[mode] = make_loop(*script, tools=[add, screenshot], listeners=[log]).run(
                initial()
            )
        assert AuditLog.verify(path, complete=False) == 2  # the start and step 1
        with pytest.raises(AuditLogTampered, match="incomplete"):
            AuditLog.verify(path)
    for final in finals.values():
        assert final.status.value == "failed"
        assert final.execution.error.type == "ListenerFailed"
        assert "taken" in final.execution.error.message
    assert finals["step"].step_count == 2
    assert finals["none"].step_count == len(script)


def test_a_step_refused_fails_its_own_run_not_another_writing_the_log(tmp_path):
    """A run whose held step another run's record finds unrecordable is told at its own
    next event; the other run goes on and is recorded whole."""
    log = unstorable(tmp_path)
    first = make_loop(*pictured(good=1, after=2), tools=[add, screenshot], listeners=[log])
    steps = first.iterate(initial())
    states = [next(steps), next(steps)]  # its step 2, the screenshot, held back
    assert states[-1].step_count == 2
    other = make_loop(*adds(3), listeners=[log], ids=SequentialIds("other-"))
    second = other.run(initial())  # its start records the step held
    assert second.status.value == "completed"
    rest = list(steps)
    log.close()
    assert rest[-1].status.value == "failed"
    assert rest[-1].step_count == 3  # told at its next step
    assert "taken" in rest[-1].execution.error.message
    runs = AuditLog.read_runs(tmp_path / "run.jsonl")
    assert [run.complete for run in runs] == [False, True]
    assert AuditLog.read(tmp_path / "run.jsonl").to_json() == second.to_json()


def test_close_records_the_steps_held_and_raises_what_it_could_not(tmp_path):
    """A run left before its end (an iterator not finished): its held steps are recorded
    on ``close()``, which raises, once the file is closed, the error of one it could not."""
    path = tmp_path / "left.jsonl"
    log = AuditLog.open(path, durability="none")
    seen = []
    loop = make_loop(*adds(5), listeners=[log, seen.append])
    steps = loop.iterate(initial())
    next(steps), next(steps)
    log.close()
    assert AuditLog.verify(path, complete=False) == 3  # the start and two steps
    assert sum(isinstance(event, StepCompleted) for event in seen) == 2

    log = unstorable(tmp_path, "refused.jsonl")
    steps = make_loop(*pictured(good=1, after=2), tools=[add, screenshot], listeners=[log]).iterate(
        initial()
    )
    next(steps), next(steps)
    with pytest.raises(ContentError, match="taken"):
        log.close()
    assert AuditLog.verify(tmp_path / "refused.jsonl", complete=False) == 2
    after = make_loop(*adds(2), listeners=[log]).run(initial())  # a closed log takes none
    assert after.status.value == "failed" and "is closed" in after.execution.error.message


def test_runs_in_threads_share_a_log_whose_steps_are_held(tmp_path):
    """Runs in threads writing one log: every step of each is recorded, once, and each run
    reads back as it returned."""
    path = tmp_path / "threads.jsonl"
    runs, steps, finals = 8, 90, {}
    with AuditLog.open(path, durability="none") as log:

        def one(i):
            loop = make_loop(
                *adds(steps), listeners=[log], max_steps=steps, ids=SequentialIds(f"r{i}-")
            )
            finals[i] = loop.run(initial(f"run {i}"))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(runs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert all(final.step_count == steps for final in finals.values())
    assert AuditLog.verify(path) == runs * (steps + 2)
    read = {run.final.agent_id: run.final.to_json() for run in AuditLog.read_runs(path)}
    assert len(read) == runs
    assert read == {final.agent_id: final.to_json() for final in finals.values()}


def test_a_step_whose_record_cannot_be_made_keeps_the_steps_before_it(tmp_path, monkeypatch):
    """A step whose record cannot be made (a fault planted in the writer) fails its run at
    its end, and the run's records before it are written."""
    real = audit_log.step_payload

    def planted(step_execution, *args, **kwargs):
        if step_execution.number == 3:
            raise InvalidType("planted: step 3 cannot be written")
        return real(step_execution, *args, **kwargs)

    monkeypatch.setattr(audit_log, "step_payload", planted)
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path, durability="none") as log:
        final = make_loop(*adds(5), listeners=[log]).run(initial())
    assert final.status.value == "failed" and "planted" in final.execution.error.message
    assert AuditLog.verify(path, complete=False) == 3  # the start and steps 1 and 2


def test_runs_in_threads_on_an_anchoring_store_do_not_deadlock(tmp_path):
    """A run's end anchors the log in its session store while the store's saves ask the
    log for its head: the log must not hold its lock across the anchor (with steps held
    back it did, and six threads of sessions hung within a second)."""
    store = InMemorySessionStore()
    path = tmp_path / "anchored.jsonl"
    log = AuditLog.open(path, durability="none", anchor=store)

    def sessions(i):
        for n in range(30):
            runtime = SessionRuntime(
                store,
                lambda session, n=n: make_loop(
                    call("add", a=1, b=2),
                    reply("3"),
                    listeners=[log],
                    ids=SequentialIds(f"t{i}-{n}-"),
                ),
            )
            runtime.send(runtime.create().session_id, "add")

    assert ended_in_threads(sessions, 6, seconds=60), "deadlocked"
    log.close()
    assert AuditLog.verify(path, anchor=store) == 6 * 30 * 4
    assert len(store.list()) == 6 * 30
