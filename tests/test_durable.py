"""Durable runs on DBOS (docs/design/sessions.md): real DBOS on SQLite and PostgreSQL system
databases.

The first tests run DBOS in this process (one launch for the module); the crash tests run
agents in child processes and kill them with SIGKILL.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="DBOS is not installed (the dbos extra)")

from dbos import DBOS
from helpers import agents_cli, assert_equal_states_encode_alike, python

from agents import (
    AgentError,
    AgentLoop,
    AgentState,
    BlobNotFound,
    ConfigurationError,
    ExecutionStatus,
    ImagePart,
    InferenceRequest,
    InferenceResponse,
    MemoryBlobStore,
    Role,
    Summarization,
    ToolCall,
    ToolContext,
    subagent_tool,
    tool,
)
from agents.cli.runfiles import compare
from agents.durable.dbos import (
    CodecSerializer,
    DurableAgent,
    launch,
    shutdown,
)
from agents.persistence import InMemorySessionStore, SQLiteSessionStore
from agents.records.blobs import keep_in
from agents.testing import FunctionDriver, capture_events

ROOT = Path(__file__).resolve().parent.parent
TIMES = {"started_at", "completed_at", "created_at", "updated_at"}

# -- an agent for the in-process tests ---------------------------------------------------------

SEEN: list[tuple[str, int, str]] = []  # idempotency keys the tools received


class StepOnlyClock:
    """The loop's clock; it refuses to be read outside a DBOS step (docs/design/sessions.md)."""

    def __init__(self) -> None:
        self.reads = 0

    def now(self) -> datetime:
        if DBOS.workflow_id is not None and DBOS.step_id is None:
            raise AssertionError("the loop's clock was read in workflow code, outside a step")
        self.reads += 1
        return datetime.now(UTC)


@tool
def slow_echo(text: str, delay: float, context: ToolContext) -> str:
    """Echo after a delay.

    Args:
        text: what to echo
        delay: seconds to wait
    """
    SEEN.append(context.idempotency_key)
    time.sleep(delay)
    return text


def echo_model(request: InferenceRequest) -> list[ToolCall] | str:
    """Step 1: one call; step 2: three calls at once, the first slowest; then an answer."""
    results = [m.content for m in request.messages if m.role is Role.TOOL]
    if not results:
        return [ToolCall(id="c1", name="slow_echo", arguments={"text": "one", "delay": 0})]
    if len(results) == 1:
        return [
            ToolCall(id=f"p{i}", name="slow_echo", arguments={"text": f"p{i}", "delay": d})
            for i, d in enumerate((0.3, 0.15, 0.0))
        ]
    if next(m.content for m in request.messages if m.role is Role.USER) == "fail":
        raise RuntimeError("the model is down")
    return "echoed " + ", ".join(results)


def counting_model(request: InferenceRequest) -> list[ToolCall] | str:
    """Summarises when asked; else echoes one, two, three, each after the last result."""
    if request.messages[0].content.startswith("You compress"):
        return InferenceResponse(content=f"summary of {len(request.messages[1].content)} chars")
    last = request.messages[-1].content
    following = {"go": "one", "one": "two", "two": "three"}.get(last)
    if following is None:
        return "counted"
    return [
        ToolCall(id=f"n-{following}", name="slow_echo", arguments={"text": following, "delay": 0})
    ]


COMPACTING = AgentLoop(
    FunctionDriver(counting_model),
    tools=[slow_echo],
    compaction=Summarization(2, 0, count=lambda message: 1),
)


def delegating_model(request: InferenceRequest) -> list[ToolCall] | str:
    """Asks the helper sub-agent once, then answers with what it said."""
    results = [m.content for m in request.messages if m.role is Role.TOOL]
    if not results:
        return [ToolCall(id="h1", name="helper", arguments={"task": "say hi"})]
    return f"the helper said: {results[0]}"


PARENT_EVENTS = capture_events()
DELEGATING = AgentLoop(
    FunctionDriver(delegating_model),
    tools=[
        subagent_tool(
            "helper",
            "Says hi.",
            lambda: AgentLoop(FunctionDriver(lambda request: "hi"), clock=StepOnlyClock()),
        )
    ],
    listeners=[PARENT_EVENTS],
)


@tool
def ask_name(context: ToolContext) -> str:
    """Greet whoever a human names."""
    answer = context.ask("Whom?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {answer.content['name']}"


def asking_model(request: InferenceRequest) -> list[ToolCall] | str:
    """One batch: an echo and a call that asks a human; then an answer."""
    results = [m.content for m in request.messages if m.role is Role.TOOL]
    if not results:
        return [
            ToolCall(id="e1", name="slow_echo", arguments={"text": "one", "delay": 0}),
            ToolCall(id="q1", name="ask_name", arguments={}),
        ]
    return "said " + ", ".join(results)


ASKING = AgentLoop(FunctionDriver(asking_model), tools=[slow_echo, ask_name])
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(20)


def screenshot() -> ImagePart:
    """A screenshot of the screen."""
    return ImagePart.from_bytes(PNG + b"screen", "image/png")


def seeing_model(request: InferenceRequest) -> list[ToolCall] | str:
    """Takes a screenshot, then says how many images it was shown."""
    if len(request.messages) < 3:
        return [ToolCall(id="s1", name="screenshot", arguments={})]
    shown = [p for m in request.messages for p in m.parts if isinstance(p, ImagePart)]
    return f"saw {len(shown)} images of {sum(len(p.data()) for p in shown)} bytes"


SEEING = AgentLoop(FunctionDriver(seeing_model), tools=[screenshot])
SEEN_BLOBS = MemoryBlobStore()
CLOCK = StepOnlyClock()
STORE = InMemorySessionStore()
LOOP = AgentLoop(FunctionDriver(echo_model), tools=[slow_echo], clock=CLOCK, max_steps=6)


@pytest.fixture(scope="module")
def durable(tmp_path_factory):
    """DBOS launched on a fresh SQLite system database, with the agents created before."""
    name = uuid.uuid4().hex[:8]
    agents = {
        "echo": DurableAgent(LOOP, f"echo-{name}", store=STORE),
        "plain": DurableAgent(LOOP.with_options(clock=None), f"plain-{name}"),
        "compacting": DurableAgent(COMPACTING, f"compacting-{name}"),
        "delegating": DurableAgent(DELEGATING, f"delegating-{name}"),
        "asking": DurableAgent(ASKING, f"asking-{name}"),
        "seeing": DurableAgent(SEEING, f"seeing-{name}", blobs=SEEN_BLOBS),
        "blind": DurableAgent(SEEING, f"blind-{name}"),
    }
    database = tmp_path_factory.mktemp("dbos") / "system.sqlite"
    launch(f"sqlite:///{database}")
    yield agents, database
    shutdown()


def initial(text: str = "go") -> AgentState:
    return AgentState.initial("You echo.", messages=[text])


def test_a_durable_run_tells_the_same_story_as_an_in_process_run(durable):
    """Same model, same tools: the durable run's history equals the plain run's (ids and
    times aside)."""
    agents, _ = durable
    final = agents["echo"].run(initial())
    plain = LOOP.with_options(clock=None).run(initial())
    assert final.status is ExecutionStatus.COMPLETED
    assert final.final_response == "echoed one, p0, p1, p2"
    assert compare(final, plain) is None
    assert final == AgentState.from_json(final.to_json())


def test_ids_derive_from_the_workflow_id(durable):
    """The workflow id names the execution and the new agent; other ids count from it."""
    agents, _ = durable
    final = agents["echo"].run(initial(), workflow_id="ids-1")
    assert final.agent_id == "ids-1"
    assert final.execution.execution_id == "ids-1"
    step_ids = [s.step.id for s in final.step_executions]
    tool_ids = [e.id for s in final.step_executions for e in s.step.tool_executions]
    assert step_ids == ["ids-1.step-1", "ids-1.step-3", "ids-1.step-7"]
    assert tool_ids == ["ids-1.tool-2", "ids-1.tool-4", "ids-1.tool-5", "ids-1.tool-6"]


def test_every_inference_and_tool_call_is_one_dbos_step(durable):
    """start, infer per model call, one step per tool call (parallel ones included), save."""
    agents, _ = durable
    handle = agents["echo"].start(initial())
    handle.result()
    steps = agents["echo"].steps(handle.workflow_id)
    assert [(s.kind, s.step, s.tool) for s in steps] == [
        ("start", None, None),
        ("infer", 1, None),
        ("tool", 1, "slow_echo"),
        ("infer", 2, None),
        ("tool", 2, "slow_echo"),
        ("tool", 2, "slow_echo"),
        ("tool", 2, "slow_echo"),
        ("infer", 3, None),
        ("save", None, None),
    ]
    assert [s.function_id for s in steps] == list(range(1, 10))
    assert all(s.error is None for s in steps)


def test_a_parallel_batch_runs_at_once_and_keeps_call_order(durable):
    """The three calls overlap in time (0.3 s, not 0.45 s) and each DBOS step records the
    call it was reserved for, in call order, although the last call finishes first."""
    agents, database = durable
    handle = agents["echo"].start(initial())
    final = handle.result()
    batch = final.step_executions[1].step.tool_executions
    assert [e.tool_call.id for e in batch] == ["p0", "p1", "p2"]
    assert batch[2].completed_at < batch[0].completed_at  # p2 finished first
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT function_id, output, started_at_epoch_ms, completed_at_epoch_ms "
            "FROM operation_outputs WHERE workflow_uuid = ? AND function_name LIKE "
            "'agents.tool:2:%' ORDER BY function_id",
            (handle.workflow_id,),
        ).fetchall()
    recorded = [json.loads(output)["executions"][0]["tool_call"]["id"] for _, output, *_ in rows]
    assert recorded == ["p0", "p1", "p2"]
    wall = (max(r[3] for r in rows) - min(r[2] for r in rows)) / 1000
    assert wall < 0.42, f"the batch took {wall:.2f} s: the calls did not overlap"


def test_tools_receive_the_idempotency_key(durable):
    """(execution id, step, tool call id), stable for a call that runs again."""
    agents, _ = durable
    SEEN.clear()
    agents["echo"].run(initial(), workflow_id="keys-1")
    assert sorted(SEEN) == [
        ("keys-1", 1, "c1"),
        ("keys-1", 2, "p0"),
        ("keys-1", 2, "p1"),
        ("keys-1", 2, "p2"),
    ]


def test_the_loop_clock_is_read_only_inside_dbos_steps(durable):
    """StepOnlyClock raises in workflow code; the run completes, so every read was in a
    step: one at the start, one per inference and two per tool call (start and end)."""
    agents, _ = durable
    before = CLOCK.reads
    final = agents["echo"].run(initial())
    assert final.status is ExecutionStatus.COMPLETED, final.execution.error
    assert CLOCK.reads - before == 1 + 3 + 4 * 2


def test_what_dbos_stores_is_our_json(durable):
    """The workflow's output is ``state.to_json()`` byte for byte; inputs and step outputs
    are JSON too, marked with our serializer's name (no pickle anywhere)."""
    agents, database = durable
    handle = agents["echo"].start(initial())
    final = handle.result()
    with sqlite3.connect(database) as db:
        (output,) = db.execute(
            "SELECT output FROM workflow_output WHERE workflow_uuid = ?", (handle.workflow_id,)
        ).fetchone()
        (inputs,) = db.execute(
            "SELECT inputs FROM workflow_input WHERE workflow_uuid = ?", (handle.workflow_id,)
        ).fetchone()
        (serialization,) = db.execute(
            "SELECT serialization FROM workflow_status WHERE workflow_uuid = ?",
            (handle.workflow_id,),
        ).fetchone()
        steps = db.execute(
            "SELECT output, serialization FROM operation_outputs WHERE workflow_uuid = ?",
            (handle.workflow_id,),
        ).fetchall()
    assert output == final.to_json()
    assert AgentState.from_json(output) == final
    assert AgentState.from_dict(json.loads(inputs)["args"][0]) == initial()
    assert serialization == "agents_json"
    assert {s for _, s in steps} == {"agents_json"}
    for text, _ in steps:
        json.loads(text)


def test_images_live_in_the_blob_store_before_dbos_records_what_refers_to_them(durable):
    """A run started with an image, whose tool returns a screenshot: DBOS's records hold
    references (read back from them, the bytes come from the agent's blob store, where
    they were put before each record); an agent without a blob store refuses such a run."""
    agents, database = durable
    start = AgentState.initial(messages=["look", ImagePart.from_bytes(PNG, "image/png")])
    handle = agents["seeing"].start(start)
    final = handle.result()
    assert final.final_response == f"saw 2 images of {2 * len(PNG) + 6} bytes"
    with sqlite3.connect(database) as db:
        steps = db.execute(
            "SELECT output FROM operation_outputs WHERE workflow_uuid = ?", (handle.workflow_id,)
        ).fetchall()
    assert steps and all("iVBORw0KGgo" not in (text or "") for (text,) in steps)  # no PNG
    recorded = CodecSerializer().deserialize(json.dumps(json.loads(final.to_json())))
    held = [p for m in recorded.messages for p in m.parts if isinstance(p, ImagePart)]
    with pytest.raises(BlobNotFound):
        held[0].data()
    keep_in(recorded, SEEN_BLOBS)  # what a worker does with what it reads
    assert [p.data() for p in held] == [PNG, PNG + b"screen"]
    assert SEEN_BLOBS.get(held[1].blob) == PNG + b"screen"
    with pytest.raises(ConfigurationError, match="blob store"):
        agents["blind"].start(start)


def test_the_final_state_lands_in_the_session_store(durable):
    """With ``store=``, the session named by the agent id holds the final state."""
    agents, _ = durable
    final = agents["echo"].run(initial(), workflow_id="stored-1")
    assert STORE.load("stored-1").state == final
    again = agents["echo"].run(final.with_user_message("go on"), workflow_id="stored-2")
    session = STORE.load("stored-1")  # the same conversation, one session
    assert session.state == again and session.version == 2


def test_the_durable_runs_output_encodes_as_any_equal_state(durable, tmp_path):
    """Equal states encode alike (docs/design/determinism.md) for what the durable runner returns:
    its output, a forked workflow's, and what the codec, a SQLite store, at_step and fork derive."""
    agents, _ = durable
    outputs = [agents[name].run(initial()) for name in ("echo", "compacting", "delegating")]
    agents["echo"].run(initial(), workflow_id="canonical-src")
    outputs.append(agents["echo"].fork("canonical-src", at_step=1).result())
    store = SQLiteSessionStore(tmp_path / "s.db")
    states = []
    for final in outputs:
        stored = store.load(store.create(final).session_id).state
        assert stored == final
        states += [final, AgentState.from_json(final.to_json()), stored]
        for source in (final, stored):
            for k in range(final.step_count + 1):
                states += [source.at_step(k), source.fork(k)]
    store.close()
    assert_equal_states_encode_alike(states)


def test_fork_from_step_k_agrees_with_state_fork(durable):
    """Forking workflow W at step 1 runs ``final.fork(at_step=1)``: step 1 kept as it was,
    new ids, the parent named."""
    agents, _ = durable
    original = agents["echo"].run(initial(), workflow_id="fork-src")
    forked = agents["echo"].fork("fork-src", at_step=1, new_workflow_id="fork-1").result()
    assert forked.parent_agent_id == "fork-src"
    assert forked.agent_id == "fork-1" and forked.execution.execution_id == "fork-1"
    assert forked.step_executions[0] == original.step_executions[0]
    assert compare(forked, original) is None  # the same model answers again from step 2
    assert forked.step_executions[1].step.id.startswith("fork-1.")
    with pytest.raises(AgentError, match="no workflow"):
        agents["echo"].fork("no-such-run", at_step=1)


def test_a_failure_inside_the_run_is_recorded_in_the_state(durable):
    """A model that raises: the workflow succeeds and returns a FAILED state."""
    agents, _ = durable
    handle = agents["echo"].start(initial("fail"))
    final = handle.result()
    assert final.status is ExecutionStatus.FAILED
    assert "the model is down" in final.execution.error.message
    assert handle.status() == "SUCCESS"


def test_a_summary_is_one_more_checkpointed_model_call(durable):
    """Context compaction's summary is an inference like any other: a DBOS step of its own,
    and the history is the one an in-process run writes."""
    agents, _ = durable
    handle = agents["compacting"].start(initial())
    final = handle.result()
    assert final.final_response == "counted"
    summaries = [s for s in final.steps if s.compaction is not None and s.compaction.summarizing]
    assert summaries
    infers = [s for s in agents["compacting"].steps(handle.workflow_id) if s.kind == "infer"]
    assert len(infers) == final.step_count + len(summaries)
    assert compare(final, COMPACTING.run(initial())) is None


def test_a_sub_agents_events_reach_the_durable_runs_listeners(durable):
    agents, _ = durable
    final = agents["delegating"].run(initial())
    assert final.final_response == "the helper said: hi"
    child = final.tool_executions[0].child
    assert child is not None and child.final_response == "hi"
    forwarded = [e for e in PARENT_EVENTS.events if e.agent_id == child.agent_id]
    assert [type(e).__name__ for e in forwarded][:1] == ["ExecutionStarted"]
    assert type(forwarded[-1]).__name__ == "ExecutionCompleted"


def test_a_durable_run_suspends_for_a_question_and_a_new_one_resumes_it(durable):
    """A call asking a human ends the durable run SUSPENDED with the question (the batch's
    finished call kept); the answered state, run again (another workflow), makes only the
    call that asked, and the run completes."""
    agents, _ = durable
    SEEN.clear()
    waiting = agents["asking"].run(initial(), workflow_id="asking-1")
    assert waiting.status.value == "suspended"
    assert [q.call_id for q in waiting.pending_inputs] == ["q1"]
    assert [e.value for e in waiting.execution.current_step.tool_executions] == ["one"]
    final = agents["asking"].run(waiting.with_input("q1", {"name": "Ada"}), workflow_id="asking-2")
    assert final.status.value == "completed"
    assert [e.value for e in final.tool_executions] == ["one", "hello Ada"]
    assert final.final_response == "said one, hello Ada"
    assert len(SEEN) == 1  # the echo ran once, in the first workflow


def test_enqueued_runs_are_taken_from_the_queue(durable):
    """A queue named by a string is registered on first use; this process listens to it."""
    agents, _ = durable
    handles = [agents["plain"].enqueue(initial(), "local-queue") for _ in range(3)]
    finals = [h.result() for h in handles]
    assert [f.final_response for f in finals] == ["echoed one, p0, p1, p2"] * 3
    assert len({f.agent_id for f in finals}) == 3


def test_the_serializer_refuses_what_only_pickle_could_store():
    """Records, JSON values and exceptions only; a state is stored as its to_json text."""
    serializer = CodecSerializer()
    state = initial()
    assert serializer.serialize(state) == state.to_json()
    assert serializer.deserialize(serializer.serialize({"s": state, "n": [1, None]})) == {
        "s": state,
        "n": [1, None],
    }
    error = serializer.deserialize(serializer.serialize(ValueError("bad")))
    assert isinstance(error, AgentError) and str(error) == "ValueError: bad"
    with pytest.raises(TypeError, match="not object"):
        serializer.serialize(object())


def test_the_serializer_writes_a_lone_surrogate_as_its_escape():
    """A tool's result holding text that is not Unicode (a file name decoded with
    ``surrogateescape``) is stored as JSON's escape, which the database takes."""
    serializer = CodecSerializer()
    name = b"report-\xff.txt".decode("utf-8", "surrogateescape")
    text = serializer.serialize({"result": name, "state": initial(name)})
    text.encode("utf-8")
    assert serializer.deserialize(text) == {"result": name, "state": initial(name)}


def test_a_durable_agent_checks_its_arguments(durable):
    agents, _ = durable
    with pytest.raises(AgentError, match="AgentLoop"):
        DurableAgent("not a loop", "x")  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="exists already"):
        DurableAgent(LOOP, agents["echo"].name)
    with pytest.raises(AgentError, match="AgentState"):
        agents["echo"].start("hello")  # type: ignore[arg-type]


# -- the command line ---------------------------------------------------------------------------


def agents_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m agents ARGS`` from the checkout, without the environment's database."""
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTS_DATABASE_URL", "DURABLE_LOG")}
    return subprocess.run(
        [sys.executable, "-m", "agents", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["worker", "examples.scale_out:agent", "--queue", "q"], "--database URL is required"),
        (
            ["worker", "no_such_module:agent", "--queue", "q", "--database", "sqlite:///x.db"],
            "cannot load no_such_module:agent: ModuleNotFoundError",
        ),
        (
            [
                "recover",
                "tests.durable_app:agent",
                "--executor",
                "w1",
                "--database",
                "sqlite:///x.db",
            ],
            "cannot load tests.durable_app:agent: KeyError",
        ),
        (
            ["recover", "agents.cli:main", "--executor", "w1", "--database", "sqlite:///x.db"],
            "agents.cli:main is not a DurableAgent",
        ),
        (
            ["worker", "examples.scale_out:agent", "--database", "sqlite:///x.db"],
            "the following arguments are required: --queue",
        ),
    ],
)
def test_worker_and_recover_reject_bad_input_with_one_line(tmp_path, args, message):
    """Exit code 2 and one line on stderr, no traceback, nothing written."""
    result = agents_command(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (ROOT / "x.db").exists()


@pytest.mark.parametrize("command", [["worker", "--queue", "q"], ["recover", "--executor", "w1"]])
def test_a_database_dbos_cannot_reach_is_said_in_lines_without_its_password(command):
    """A system database nobody answers at: the command printed DBOS's tracebacks and
    its own (the exception escaped); now each line is one line, the last the command's,
    exit 2, the URL's password redacted."""
    database = "postgresql://postgres:planted-dbos-password-8989@127.0.0.1:9/test"
    name, *options = command
    result = agents_command(name, "examples.scale_out:agent", *options, "--database", database)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "planted-dbos-password" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    shown = "postgresql://postgres:[redacted]@127.0.0.1:9/test"
    assert last.startswith(f"agents {name}: DBOS could not start on {shown}: OperationalError: ")
    assert all(not line.startswith((" ", "\t")) for line in result.stderr.splitlines())


def test_a_worker_stopped_with_sigterm_lets_its_run_finish(tmp_path):
    """SIGTERM: the worker takes no more runs, finishes the one in flight (within
    ``--grace``), says so and exits 0; every step ran once."""
    env = {
        **os.environ,
        "DURABLE_LOG": str(tmp_path / "effects"),
        "DURABLE_INFER_LOG": str(tmp_path / "infer"),
        "DURABLE_PAUSE": "0.3",
    }
    database = f"sqlite:///{tmp_path / 'system.sqlite'}"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents",
            "worker",
            "tests.durable_app:agent",
            "--queue",
            "q",
            "--database",
            database,
            "--grace",
            "60",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        enqueued = subprocess.run(
            [
                sys.executable,
                str(ROOT / "tests" / "durable_app.py"),
                "enqueue",
                database,
                "run-1",
                "5",
                "q",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert enqueued.returncode == 0, enqueued.stderr
        deadline = time.monotonic() + 60
        while not (tmp_path / "effects").exists():
            assert time.monotonic() < deadline and worker.poll() is None, "the run never started"
            time.sleep(0.05)
        worker.send_signal(signal.SIGTERM)
    finally:
        try:
            _, stderr = worker.communicate(timeout=120)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
    assert worker.returncode == 0, stderr
    assert "stopping (up to 60 s)" in stderr and "stopped" in stderr
    effects = (tmp_path / "effects").read_text().splitlines()
    assert effects == [f"run-1 {k} call-{k}" for k in range(1, 6)]
    with sqlite3.connect(tmp_path / "system.sqlite") as db:
        (status,) = db.execute(
            "SELECT status FROM workflow_status WHERE workflow_uuid = 'run-1'"
        ).fetchone()
    assert status == "SUCCESS"


# -- crashes: child processes killed with SIGKILL -----------------------------------------------


def _strip_times(value):
    if isinstance(value, dict):
        return {k: _strip_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_strip_times(v) for v in value]
    return value


def _app(database: str, workflow_id: str, steps: int, *extra: str, env: dict[str, str]):
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "durable_app.py"),
            database,
            workflow_id,
            str(steps),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.parametrize("kill_at", [1, 3, 5])
def test_a_run_killed_inside_a_tool_is_recovered_by_the_next_process(tmp_path, kill_at):
    """SQLite system database: the process dies inside the tool of step k; the next one
    launched on the database finishes the run. Finished steps are not run again (one model
    call per step, one side effect per finished call); the call in flight runs again; the
    result equals an uninterrupted run's, ids included, times aside."""
    env = {
        **os.environ,
        "DURABLE_LOG": str(tmp_path / "effects"),
        "DURABLE_INFER_LOG": str(tmp_path / "infer"),
    }
    database = f"sqlite:///{tmp_path / 'system.sqlite'}"
    killed = _app(database, "run-1", 5, str(kill_at), env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    recovered = _app(database, "run-1", 5, env=env)
    assert recovered.returncode == 0, recovered.stderr

    effects = Counter((tmp_path / "effects").read_text().splitlines())
    assert effects == Counter(
        {f"run-1 {k} call-{k}": 2 if k == kill_at else 1 for k in range(1, 6)}
    )
    assert (tmp_path / "infer").read_text().split() == ["1", "2", "3", "4", "5", "6"]

    reference_env = {
        **env,
        "DURABLE_LOG": str(tmp_path / "ref-effects"),
        "DURABLE_INFER_LOG": str(tmp_path / "ref-infer"),
    }
    reference = _app(f"sqlite:///{tmp_path / 'ref.sqlite'}", "run-1", 5, env=reference_env)
    assert reference.returncode == 0, reference.stderr
    final = AgentState.from_json(recovered.stdout)
    assert final.final_response == "counted to 5"
    assert _strip_times(json.loads(recovered.stdout)) == _strip_times(json.loads(reference.stdout))


def _mcp_app(database: str, *extra: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "durable_mcp_app.py"), database, "run-1", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    if extra:
        assert done.returncode == -signal.SIGKILL, done.stderr
        return {}
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_mcp_calls_are_dbos_steps_and_a_recovered_run_does_not_send_them_again(tmp_path):
    """A durable run with an MCP server's tools: what the server offered is a DBOS step,
    each call one more. Killed before its third call, the run is recovered by the next
    process, which starts a new server (its counter at 0): the first two calls are not
    sent again (their results come from DBOS), the third reaches the new server."""
    env = {**os.environ, "DURABLE_LOG": str(tmp_path / "killed")}
    whole = _mcp_app(f"sqlite:///{tmp_path / 'whole.sqlite'}", env=env)
    assert whole["steps"] == [
        ["start", None, None],
        ["sources", None, None],
        ["infer", 1, None],
        ["tool", 1, "count"],
        ["infer", 2, None],
        ["tool", 2, "count"],
        ["infer", 3, None],
        ["tool", 3, "count"],
        ["infer", 4, None],
    ]
    final = AgentState.from_json(json.dumps(whole["state"]))
    assert [e.value for e in final.tool_executions] == [1, 2, 3]  # one session for the run
    (offered,) = final.metadata["agents.tool_sources"]
    assert offered["server"]["name"] == "failing"
    assert "count" in [t["name"] for t in offered["tools"]]

    database = f"sqlite:///{tmp_path / 'system.sqlite'}"
    _mcp_app(database, "3", env=env)  # killed at the third inference
    recovered = _mcp_app(database, env=env)
    assert recovered["steps"] == whole["steps"]
    again = AgentState.from_json(json.dumps(recovered["state"]))
    assert [e.value for e in again.tool_executions] == [1, 2, 1]
    assert again.metadata == final.metadata
    assert again.final_response == "counted"


# -- PostgreSQL: two workers share a queue ------------------------------------------------------


class Worker:
    """``agents worker examples.scale_out:agent`` in a child process."""

    def __init__(self, executor: str, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agents",
                "worker",
                "examples.scale_out:agent",
                "--queue",
                "orders",
                "--executor-id",
                executor,
                "--concurrency",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            if "taking runs from orders" in line:
                self.ready.set()

    def wait_ready(self) -> None:
        assert self.ready.wait(60), "".join(self.lines)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(30)
        self.reader.join(30)
        assert self.process.stderr is not None
        self.process.stderr.close()


def test_two_workers_share_a_queue_and_a_killed_workers_run_completes_once(postgres_database):
    """examples/scale_out.py on PostgreSQL: ten runs split between two workers; one worker
    is killed while it works; ``agents recover`` hands its runs on; every run completes
    once, and every order is charged once although a call ran again."""
    psycopg = pytest.importorskip("psycopg")
    env = {**os.environ, "AGENTS_DATABASE_URL": postgres_database, "SCALE_OUT_PAUSE": "0.3"}
    # w1's tools pause for a minute, so that the kill lands inside one however late this
    # process, sharing a loaded machine, gets to send it.
    workers = [Worker("w1", {**env, "SCALE_OUT_PAUSE": "60"}), Worker("w2", env)]
    try:
        for worker in workers:
            worker.wait_ready()
        enqueue = python("examples/scale_out.py", "enqueue", "10", cwd=ROOT, env=env)
        assert enqueue.returncode == 0, enqueue.stderr
        w1 = workers[0].process.pid
        with psycopg.connect(postgres_database, autocommit=True) as db:
            deadline = time.monotonic() + 60
            while not db.execute("SELECT 1 FROM attempts WHERE pid = %s", (w1,)).fetchone():
                assert time.monotonic() < deadline, "worker w1 never took a run"
                time.sleep(0.05)
        workers[0].process.send_signal(signal.SIGKILL)
        workers[0].process.wait(30)
        with psycopg.connect(postgres_database, autocommit=True) as db:
            in_flight = {
                order
                for (order,) in db.execute(
                    "SELECT DISTINCT order_id FROM attempts WHERE pid = %s", (w1,)
                )
            }
        recover = agents_cli(
            "recover", "examples.scale_out:agent", "--executor", "w1", cwd=ROOT, env=env
        )
        assert recover.returncode == 0, recover.stderr
        report = python("examples/scale_out.py", "report", "10", cwd=ROOT, env=env)
        assert report.returncode == 0, report.stderr
    finally:
        for worker in workers:
            worker.stop()
    assert workers[1].process.returncode == 0, "".join(workers[1].lines)

    lines = report.stdout.splitlines()
    assert len(lines) == 10
    for number, line in enumerate(lines, start=1):
        assert line.startswith(f"order-{number}: 'order-{number} is on its way'"), line
        assert line.endswith("charged 1 time(s))"), line
    with psycopg.connect(postgres_database, autocommit=True) as db:
        pids = {pid for (pid,) in db.execute("SELECT DISTINCT pid FROM attempts")}
        charges = db.execute("SELECT order_id, count(*) FROM charges GROUP BY order_id").fetchall()
        statuses = db.execute(
            "SELECT status, count(*) FROM dbos.workflow_status "
            "WHERE name = 'agents.orders' GROUP BY status"
        ).fetchall()
        sessions = db.execute("SELECT count(*) FROM sessions").fetchone()
    assert {w.process.pid for w in workers} <= pids  # the work was split
    assert sorted(charges) == sorted((f"order-{n}", 1) for n in range(1, 11))
    assert statuses == [("SUCCESS", 10)]
    assert in_flight, "w1 was killed with runs in flight"
    recovered = re.search(r"recovered (\d+) run\(s\) of w1", recover.stdout)
    assert recovered and int(recovered.group(1)) >= 1, recover.stdout
    with psycopg.connect(postgres_database, autocommit=True) as db:
        finished_elsewhere = {
            order
            for (order,) in db.execute(
                "SELECT DISTINCT order_id FROM attempts WHERE pid <> %s", (w1,)
            )
        }
    assert in_flight & finished_elsewhere  # a run w1 had started was finished by another
    assert sessions == (10,)
