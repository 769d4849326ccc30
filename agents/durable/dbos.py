"""Agent runs as DBOS workflows (docs/design/sessions.md): durable, recoverable, shared by workers.

An execution is a DBOS workflow; each ``Infer`` and each tool call is a DBOS step (the
effects of docs/design/index.md), so a run whose process dies is recovered by DBOS without
repeating the steps that had finished. What DBOS stores is this library's JSON
(``CodecSerializer``), never pickle.

Why a recovered run takes the same decisions: the step machine is driven again from the
workflow's input; model answers, tool results and clock readings of finished steps come
back from DBOS's records, and ids derive from the workflow id and a counter
(``WorkflowIds``, ``agents.durable.workflow``). The machine's clock (``RecordedClock``)
tells the time read at the end of the latest DBOS step: the loop's own clock is read only
inside steps, so only steps that ran again carry new times.

This is the only module importing DBOS (the ``dbos`` extra).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import json
import logging
import math
import sys
import threading
from collections.abc import Iterable
from typing import Any, Final, TypeVar, cast

import attrs
from dbos import DBOS, Queue, Serializer, SetWorkflowID, WorkflowHandle

from agents.core.clock import Clock, RandomIds, SystemClock
from agents.durable.workflow import RecordedClock, WorkflowIds, at, reading
from agents.errors import AgentError, ConfigurationError, InvalidType, SessionNotFound
from agents.persistence.session import SessionStore
from agents.records.blobs import BlobStore, blobs_in, keep_in
from agents.records.codec import RECORDS, from_dict, to_dict
from agents.records.effects import Failed, Infer, InvokeTools, ToolInvocation
from agents.records.frozen import deep_thaw
from agents.records.json_text import dumps
from agents.records.record import Record
from agents.records.state import AgentState
from agents.records.step import ToolExecution
from agents.shell.driving import drive
from agents.shell.loop import SOURCES_KEY, AgentLoop
from agents.shell.perform import BlockingPerformer, SyncTools
from agents.shell.reporting import forwarding

T = TypeVar("T")

__all__ = [
    "CodecSerializer",
    "DurableAgent",
    "DurableHandle",
    "RecordedClock",
    "WorkflowIds",
    "WorkflowStep",
    "launch",
    "recover",
    "retrieve",
    "shutdown",
]

_ERROR_KIND: Final = "Exception"
_PREFIX: Final = "agents."
_MAX_THREADS: Final = 16


# -- what DBOS stores ---------------------------------------------------------------------------


class CodecSerializer(Serializer):
    """DBOS's serializer: records in this library's JSON (tagged with ``kind`` and
    ``schema_version``; an ``AgentState`` is stored as exactly ``state.to_json()``), plain
    JSON for the rest, exceptions as their type and message. Anything that only pickle could
    store is refused with a ``TypeError`` naming its type."""

    def serialize(self, data: Any) -> str:
        return dumps(_encode(data), exotic=True)  # as json writes it

    def deserialize(self, serialized_data: str) -> Any:
        return _decode(json.loads(serialized_data))

    def name(self) -> str:
        return "agents_json"


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Record):
        return to_dict(value)
    if isinstance(value, BaseException):
        return {"kind": _ERROR_KIND, "type": type(value).__name__, "message": str(value)}
    if isinstance(value, dict):
        return {str(key): _encode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(item) for item in value]
    raise InvalidType(
        f"agents' DBOS serializer stores records and JSON values, not {type(value).__name__}"
    )


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("kind")
    if kind == _ERROR_KIND and set(value) == {"kind", "type", "message"}:
        return AgentError(f"{value['type']}: {value['message']}")
    if isinstance(kind, str) and kind in RECORDS and "schema_version" in value:
        return from_dict(value)
    return {key: _decode(item) for key, item in value.items()}


# -- the steps --------------------------------------------------------------------------------


def _kept(record: T, blobs: BlobStore | None) -> T:
    """``record``, its blobs' bytes in ``blobs`` before DBOS records it (and read there)."""
    return record if blobs is None else keep_in(record, blobs)


def _infer_step(run: BlockingPerformer, effect: Infer, clock: Clock, blobs: Any) -> dict[str, Any]:
    outcome = run.infer(effect)
    if type(outcome) is Failed:
        return {"failed": outcome.error, "at": reading(clock)}
    return _kept({"response": outcome, "at": reading(clock)}, blobs)


def _tool_step(tools: SyncTools, call: ToolInvocation, clock: Clock, blobs: Any) -> dict[str, Any]:
    outcome = tools.perform(InvokeTools((call,), True))  # stamps with the real clock
    if type(outcome) is Failed:
        return {"executions": [], "failed": outcome.error, "at": reading(clock)}
    return _kept({"executions": list(outcome), "at": reading(clock)}, blobs)


def _save_step(store: SessionStore, state: AgentState) -> int:
    """Store the final state in the session named by its agent id; the session's version."""
    session_id = state.agent_id or ""
    try:
        session = store.load(session_id)
    except SessionNotFound:
        return store.create(state, session_id=session_id).version
    if session.state == state:  # this step ran before its record was written
        return session.version
    return store.save(session.with_state(state)).version


def _tool_step_name(invocation: ToolInvocation) -> str:
    return f"{_PREFIX}tool:{invocation.step}:{invocation.tool_call.name}"


# -- the runner -------------------------------------------------------------------------------


@attrs.frozen
class DurableHandle:
    """A durable run: its ``workflow_id``, and ``result()`` waiting for the final state."""

    handle: WorkflowHandle[AgentState] = attrs.field(repr=False)

    @property
    def workflow_id(self) -> str:
        """The workflow's id (the execution id of a run that started a new execution)."""
        return self.handle.get_workflow_id()

    def result(self, *, polling_interval: float = 0.1) -> AgentState:
        """Wait for the run to finish; its final state."""
        return self.handle.get_result(polling_interval_sec=polling_interval)

    def status(self) -> str:
        """DBOS's status of the workflow: ``ENQUEUED``, ``PENDING``, ``SUCCESS``, ``ERROR``…"""
        return str(self.handle.get_status().status)


@attrs.frozen(kw_only=True)
class WorkflowStep:
    """One DBOS step of a durable run: which effect it recorded, for which agent step."""

    function_id: int
    name: str
    kind: str  # "start", "infer", "tool" or "save"
    step: int | None
    tool: str | None
    error: str | None


_AGENTS: dict[str, DurableAgent] = {}
_AGENTS_LOCK = threading.Lock()


class DurableAgent:
    """An ``AgentLoop`` run as a DBOS workflow named ``agents.<name>``.

    Create every ``DurableAgent`` before ``launch`` (DBOS recovers pending runs while it
    launches, and a worker must know the workflow to run it). With ``store``, each run's
    final state is written, in a last DBOS step, to the session named by its agent id.
    ``blobs`` (``store.blobs`` by default): where the bytes of the images, audio and
    documents a run holds are kept for any worker to read, each before DBOS records what
    refers to it; a run holding such bytes needs one.
    """

    def __init__(
        self,
        loop: AgentLoop,
        name: str,
        *,
        store: SessionStore | None = None,
        blobs: BlobStore | None = None,
    ) -> None:
        if not isinstance(loop, AgentLoop):
            raise ConfigurationError(f"DurableAgent needs an AgentLoop, got {loop!r}")
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"DurableAgent needs a non-empty name, got {name!r}")
        if store is not None and not isinstance(store, SessionStore):
            raise ConfigurationError(f"store must be a SessionStore, got {store!r}")
        self.loop = loop
        self.name = name
        self.store = store
        self.blobs = blobs if blobs is not None else getattr(store, "blobs", None)
        self._clock: Clock = loop.clock if loop.clock is not None else SystemClock()
        with _AGENTS_LOCK:
            if name in _AGENTS:
                raise ConfigurationError(
                    f"a DurableAgent named {name!r} exists already in this process"
                )
            _AGENTS[name] = self

        def workflow(state: AgentState) -> AgentState:
            return self._execute(state)

        workflow.__qualname__ = workflow.__name__ = f"{_PREFIX}{name}"
        self._workflow = DBOS.workflow(name=f"{_PREFIX}{name}")(workflow)

    def __repr__(self) -> str:
        return f"DurableAgent({self.name!r})"

    # -- starting runs ----------------------------------------------------------------------

    def run(self, state: AgentState, workflow_id: str | None = None) -> AgentState:
        """Run ``state`` as a workflow in this process and wait for its final state."""
        return self.start(state, workflow_id).result()

    def start(self, state: AgentState, workflow_id: str | None = None) -> DurableHandle:
        """Start ``state`` as a workflow in this process. A ``workflow_id`` that was used
        before gives that workflow back instead of a new run (DBOS's idempotency)."""
        state = self._check(state)
        with SetWorkflowID(workflow_id or _new_workflow_id()):
            return DurableHandle(DBOS.start_workflow(self._workflow, state))

    def enqueue(
        self, state: AgentState, queue: str | Queue, workflow_id: str | None = None
    ) -> DurableHandle:
        """Put ``state`` on a DBOS queue (a name, registered with defaults when unknown, or
        a ``Queue``); a worker listening on it runs it."""
        state = self._check(state)
        target = _queue(queue)
        with SetWorkflowID(workflow_id or _new_workflow_id()):
            return DurableHandle(target.enqueue(self._workflow, state))

    def fork(
        self, workflow_id: str, at_step: int, new_workflow_id: str | None = None
    ) -> DurableHandle:
        """Start a new run from a finished run's state after step ``at_step``: the input is
        ``final.fork(at_step=at_step)`` (new ids, ``parent_agent_id`` set), so steps up to
        ``at_step`` are kept as they were and the model is asked again from the next one."""
        status = DBOS.get_workflow_status(workflow_id)
        if status is None:
            raise ConfigurationError(f"no workflow {workflow_id!r}")
        if status.status != "SUCCESS":
            raise ConfigurationError(
                f"workflow {workflow_id!r} is {status.status}: only a finished run can be forked "
                "(recover or wait for it first)"
            )
        final: object = DBOS.retrieve_workflow(workflow_id).get_result()
        if not isinstance(final, AgentState):
            raise ConfigurationError(f"workflow {workflow_id!r} is not an agent run")
        return self.start(final.fork(at_step=at_step), new_workflow_id)

    @staticmethod
    def steps(workflow_id: str) -> list[WorkflowStep]:
        """The DBOS steps a run has recorded, in order."""
        rows = []
        for info in DBOS.list_workflow_steps(workflow_id):
            name = info["function_name"]
            kind, _, rest = name.removeprefix(_PREFIX).partition(":")
            number, _, tool = rest.partition(":")
            error = info["error"]
            rows.append(
                WorkflowStep(
                    function_id=info["function_id"],
                    name=name,
                    kind=kind,
                    step=int(number) if number.isdigit() else None,
                    tool=tool or None,
                    error=None if error is None else str(error),
                )
            )
        return rows

    # -- the workflow -----------------------------------------------------------------------

    def _check(self, state: AgentState) -> AgentState:
        if not isinstance(state, AgentState):
            raise ConfigurationError(
                f"a durable run needs an AgentState, got {type(state).__name__}"
            )
        if self.blobs is None and next(blobs_in(state), None) is not None:
            raise ConfigurationError(
                "a durable run holding images, audio or documents needs a blob store for its "
                "workers to read them: DurableAgent(..., blobs=) or a store with blobs"
            )
        return _kept(state, self.blobs)

    def _execute(self, state: AgentState) -> AgentState:
        """The workflow body: the step machine, its effects performed as DBOS steps."""
        real, state = self._clock, _kept(state, self.blobs)  # (read back from JSON)
        clock = RecordedClock(at(DBOS.run_step({"name": f"{_PREFIX}start"}, reading, real)))
        ids = WorkflowIds(DBOS.workflow_id or "")
        base, release = self.loop, _nothing
        if base.tools.sources:  # MCP servers: opened for the run, what they offered a step
            base, state, release = _opened(base, state)
        try:
            loop = base.with_options(clock=clock, ids=ids)
            machine, emit = loop.machine_for(state, progress=False)
            inner = base.blocking_performer(emit, now=real.now)
            performer = _DurablePerformer(inner, real, clock, self.blobs)
            final = state
            for final in drive(machine, performer, progress=False):  # noqa: B007
                pass  # the loop keeps the last state
        finally:
            release()
        if self.store is not None:
            DBOS.run_step({"name": f"{_PREFIX}save"}, _save_step, self.store, final)
        return final


def _opened(loop: AgentLoop, state: AgentState) -> tuple[AgentLoop, AgentState, Any]:
    """``loop`` with its tool sources' tools for the run (``AgentLoop.opened``: servers
    started, sessions opened, again in a recovered run, whose calls need them), and the
    state recording what they offered, as a DBOS step recorded it: a recovered run records
    the catalogue its first attempt was offered, even if a server changed meanwhile."""
    opened, offered, release = loop.opened(state)
    try:
        catalogue = DBOS.run_step(
            {"name": f"{_PREFIX}sources"}, _catalogue_step, offered.metadata.get(SOURCES_KEY)
        )
    except BaseException:
        release()
        raise
    if state.metadata.get(SOURCES_KEY) != catalogue:
        state = state.with_metadata(SOURCES_KEY, catalogue)
    return opened, state, release


def _catalogue_step(catalogue: Any) -> Any:
    return deep_thaw(catalogue)


def _nothing() -> None:
    return None


class _DurablePerformer:
    """Performs the machine's effects inside a workflow: each ``Infer`` a DBOS step, each
    tool call a DBOS step of its own (``_Batch``); the recorded clock moves on to the time
    each step recorded."""

    __slots__ = ("_batch", "_blobs", "_clock", "_inner", "_real")

    def __init__(self, inner: BlockingPerformer, real: Clock, clock: RecordedClock, blobs: Any):
        self._inner, self._real, self._clock, self._blobs = inner, real, clock, blobs
        self._batch = _Batch(inner.tools, real, clock, blobs)

    def infer(self, effect: Infer) -> Any:
        name, inner = f"{_PREFIX}infer:{effect.step}", self._inner
        record = DBOS.run_step({"name": name}, _infer_step, inner, effect, self._real, self._blobs)
        record = _kept(record, self._blobs)
        self._clock.advance(at(record["at"]))
        return record["response"] if "response" in record else Failed(record["failed"])

    def invoke(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        emit = self._inner.emit
        if emit is None:
            return self._batch.perform(effect)
        with forwarding(emit):  # a sub-agent started by a tool reports to this run's listeners
            return self._batch.perform(effect)

    def close(self) -> None:
        self._batch.close()


class _Batch:
    """Performs ``InvokeTools`` inside a workflow: one DBOS step per call; a parallel batch
    reserves its step ids in call order and runs them on threads; results in call order."""

    __slots__ = ("_blobs", "_clock", "_pool", "_real", "_tools")

    def __init__(self, tools: SyncTools, real: Clock, clock: RecordedClock, blobs: Any) -> None:
        self._tools, self._real, self._clock, self._blobs = tools, real, clock, blobs
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def perform(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed:
        invocations = effect.invocations
        records: list[dict[str, Any]] = []
        if effect.sequential or len(invocations) == 1:
            for invocation in invocations:
                record = DBOS.run_step(
                    {"name": _tool_step_name(invocation)},
                    _tool_step,
                    self._tools,
                    invocation,
                    self._real,
                    self._blobs,
                )
                records.append(record)
                if "failed" in record:
                    break
        else:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=_MAX_THREADS, thread_name_prefix="agents-durable-tools"
                )
            # Step ids are drawn here, in call order, so a recovered run finds each call's
            # record whatever order the threads finish in.
            reservations = [DBOS.reserve_step() for _ in invocations]
            futures: list[concurrent.futures.Future[dict[str, Any]]] = [
                self._pool.submit(
                    contextvars.copy_context().run,
                    self._reserved,
                    reservation,
                    invocation,
                )
                for reservation, invocation in zip(reservations, invocations, strict=True)
            ]
            records = [future.result() for future in futures]
        for record in records:
            _kept(record, self._blobs)
            self._clock.advance(at(record["at"]))
        finished = tuple(execution for record in records for execution in record["executions"])
        failed = next((record["failed"] for record in records if "failed" in record), None)
        return finished if failed is None else Failed(failed, finished)

    def _reserved(self, reservation: Any, invocation: ToolInvocation) -> dict[str, Any]:
        return cast(
            dict[str, Any],
            reservation.run(
                {"name": _tool_step_name(invocation)},
                _tool_step,
                self._tools,
                invocation,
                self._real,
                self._blobs,
            ),
        )

    def close(self) -> None:
        self._tools.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)


_IDS = RandomIds()


def _new_workflow_id() -> str:
    return _IDS.new_id("workflow")


def _queue(queue: str | Queue) -> Queue:
    if isinstance(queue, Queue):
        return queue
    if not isinstance(queue, str) or not queue:
        raise ConfigurationError(f"queue must be a queue name or a dbos Queue, got {queue!r}")
    found = DBOS.retrieve_queue(queue)
    return found if found is not None else DBOS.register_queue(queue)


# -- DBOS's lifecycle -------------------------------------------------------------------------


def launch(
    database_url: str,
    *,
    name: str = "agents",
    executor_id: str | None = None,
    queues: Iterable[str] | None = None,
    concurrency: int | None = None,
    application_version: str | None = None,
    log_level: str = "WARNING",
) -> None:
    """Configure and launch DBOS on a system database (``sqlite:///path`` on one machine,
    ``postgresql://...`` for several), with this library's serializer.

    ``queues``, when given, are the only queues this process takes work from (each registered
    when unknown, with at most ``concurrency`` runs at once in this process); runs recovered
    from a dead executor are taken in any case. Pending runs of ``executor_id`` (default
    ``"local"``) are recovered while launching.
    """
    config: dict[str, Any] = {
        "name": name,
        "system_database_url": database_url,
        "serializer": CodecSerializer(),
        "log_level": log_level,
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    if application_version is not None:
        config["application_version"] = application_version
    _log_to_current_stderr()
    DBOS(config=cast(Any, config))  # a DBOSConfig: the keys set above
    listen = None if queues is None else list(queues)
    if listen is not None:
        DBOS.listen_queues(listen)
    DBOS.launch()
    for queue in listen or ():
        if DBOS.retrieve_queue(queue) is None or concurrency is not None:
            DBOS.register_queue(queue, worker_concurrency=concurrency, on_conflict="always_update")


def _log_to_current_stderr() -> None:
    """DBOS's console log handler keeps the ``sys.stderr`` of its first launch; a later launch
    (after ``sys.stderr`` was replaced, as by a test runner) must not write to a closed one."""
    for handler in logging.getLogger("dbos").handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler.stream, "closed", False):
            with handler.lock or contextlib.nullcontext():
                handler.stream = sys.stderr  # setStream would flush the closed stream


def shutdown(grace: float = 0) -> None:
    """Stop DBOS in this process: take no more runs, wait up to ``grace`` seconds for the
    runs in flight, and leave the rest to recovery (the next launch with this executor id,
    or ``recover``)."""
    DBOS.destroy(workflow_completion_timeout_sec=math.ceil(grace))


def retrieve(workflow_id: str) -> DurableHandle:
    """The handle of a run started earlier, by any process sharing the system database."""
    return DurableHandle(DBOS.retrieve_workflow(workflow_id))


def recover(executor_ids: Iterable[str]) -> list[DurableHandle]:
    """Hand the unfinished runs of dead executors to the live workers (DBOS re-enqueues
    them); their handles, to wait for them."""
    handles = DBOS._recover_pending_workflows(list(executor_ids))
    return [DurableHandle(handle) for handle in handles]
