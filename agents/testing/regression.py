"""What changed? Recorded runs through new agent code, without calling a model.

``regress(agent, runs)`` runs each recorded run again with the *new* agent (an
``AgentLoop``, an ``AgentDefinition`` or a definition file): the model is answered from the
record for as long as the new agent asks what the recorded one asked; tools run for real
(``tools="live"``) or answer from the record (``tools="record"``). Each run is then
**same** — the new history tells the recorded story, ids and times aside (or byte for byte,
``exact=True``) — or **changed** at its first difference: the step, the kind of change
(``CHANGE_KINDS``) and a short diff of the field (``Change.diff``).

What the record shows the agent could not have decided — a wall-clock limit that ran out, a
cancellation — is given back to the new run; the agent's own limits, hooks, tools,
prompts and compaction are what is tested. A recording that stops short (a crash) is
compared over the steps it holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from agents.audit import AuditLog
from agents.audit.records import request_shape
from agents.drivers.replay import (
    ReplayedFailure,
    recorded_inferences,
)
from agents.errors import AgentError, InvalidArgument, InvalidType, StateDecodeError, UsageError
from agents.records.arguments import path as checked_path
from agents.records.error_info import ReplayDivergence
from agents.records.execution import ExecutionStatus
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.signals import StopReason
from agents.records.state import AgentState
from agents.replaying import (
    END_OF_RECORD,
    RunRecord,
    answered,
    ended_signals,
    recorded_answers,
    recorded_signals,
    recorded_tools,
    run_segment,
)
from agents.runfiles import load_record
from agents.shell.loop import AgentLoop, loop_and_state, request_defaults
from agents.testing.changes import CHANGE_KINDS, Change, first_change, request_change
from agents.testing.regression_report import RegressionReport, RunOutcome, step_json

__all__ = [
    "CHANGE_KINDS",
    "Change",
    "NotAccepted",
    "RegressionReport",
    "RunOutcome",
    "accept",
    "recordings",
    "regress",
]

SUFFIXES: Final = (".jsonl", ".json")  # what a folder of recordings holds
# Signals the new run cannot raise by itself: the record gives them back.
_OUTSIDE: Final = frozenset({StopReason.TIME_LIMIT, StopReason.USER_REQUESTED})
Tools = Literal["live", "record"]


def regress(
    agent: Any,
    runs: Iterable[Any],
    *,
    tools: Tools = "live",
    exact: bool = False,
    continue_with: Any = None,
    registry: Any = None,
    listeners: Sequence[Callable[[Any], None]] = (),
    keep: Callable[[RunOutcome, AgentState], None] | None = None,
) -> RegressionReport:
    """Each recorded run of ``runs`` through ``agent``; what changed, run by run.

    ``agent``: an ``AgentLoop``; a ``(loop, state)`` pair, as ``AgentDefinition.build``
    gives, whose state brings what the agent sends with every conversation — its system
    prompt, its model and settings (``llm_config``) and its response format, which replace
    the recorded ones; a function returning either; an ``AgentDefinition`` or a definition
    file's path (``registry`` gives its tools). ``runs``: audit logs, their bundles and
    state files (paths, or folders of logs and states), ``AgentState``s, ``RunRecord``s,
    or ``(store, session_ids)`` pairs of a session store; read one at a time, so memory
    stays flat however many there are. ``tools``: ``"live"`` runs the agent's tools, ``"record"``
    answers calls from the record. ``exact``: same means byte-identical JSON (give the agent
    the recording's clock and ids). ``continue_with``: a driver that answers from the first
    changed request on, so that a changed run goes to its end. ``listeners`` get the new
    runs' events (an ``AuditLog`` records them). ``keep(outcome, state)`` is called with
    each new run's final state (the report keeps only the differences).

    A file that is not a recording raises ``StateDecodeError`` naming it.
    """
    if tools not in ("live", "record"):
        raise InvalidArgument(f"tools must be 'live' or 'record', not {tools!r}")
    loop, own = agent_under_test(agent, registry)
    if listeners:
        loop = loop.with_listeners(*listeners)
    outcomes = []
    for source, found in _found(runs):
        record = found if isinstance(found, RunRecord) else load_record(str(found))
        outcome, state = _regress_one(loop, own, source, record, tools, exact, continue_with)
        if keep is not None:
            keep(outcome, state)
        outcomes.append(outcome)
    return RegressionReport(runs=tuple(outcomes))


class NotAccepted(AgentError):
    """A changed run that cannot replace its recording: the new run did not get to its end
    (the model was asked something new and nobody answered: pass ``continue_with``)."""


def accept(agent: Any, path: str | os.PathLike[str], **options: Any) -> RegressionReport:
    """``regress`` one recording and, when the run changed, write the new run over it — an
    audit log for an audit log (``.jsonl``), a state for a state (``.json``) — so that the
    change shows as a diff of the recording in a code review. The file is replaced whole,
    or not at all. ``NotAccepted`` when the new run stopped at a request nobody answered."""
    target = Path(checked_path(path, "accept: path"))
    temporary = target.with_name(f".{target.name}.new")
    temporary.unlink(missing_ok=True)
    finals: list[AgentState] = []
    log = AuditLog.open(temporary) if target.suffix == ".jsonl" else None
    try:
        listeners = [log] if log is not None else []
        report = regress(
            agent,
            [target],
            listeners=listeners,
            keep=lambda _, state: finals.append(state),
            **options,
        )
    finally:
        if log is not None:
            log.close()
    try:
        (outcome,) = report.runs
        if outcome.same:
            return report
        error = finals[0].execution.error if finals[0].execution is not None else None
        if error is not None and error.type == "ReplayDivergence":
            assert outcome.change is not None
            raise NotAccepted(
                f"{target}: {outcome.change.describe()}; the model was asked something new "
                "and the recording holds no answer: pass continue_with= a driver that "
                "answers it (agent_recording.check(agent, continue_with=...) in pytest, "
                "--continue-with MODEL on the command line)"
            )
        if log is None:
            temporary.write_text(finals[0].to_json() + "\n", encoding="utf-8")
        os.replace(temporary, target)
        return report
    finally:
        temporary.unlink(missing_ok=True)


def recordings(runs: Iterable[Any]) -> Iterator[tuple[str, RunRecord]]:
    """``(source, record)`` for each recorded run of ``runs`` (see ``regress``), read as
    they are needed; folders in name order."""
    for source, found in _found(runs):
        yield source, found if isinstance(found, RunRecord) else load_record(str(found))


def _found(runs: Iterable[Any]) -> Iterator[tuple[str, RunRecord | Path]]:
    """``recordings``, each run file by its path (read when it is regressed)."""
    for index, item in enumerate(runs, start=1):
        if isinstance(item, RunRecord):
            yield f"record {index}", item
        elif isinstance(item, AgentState):
            yield f"state {index} ({item.agent_id})", RunRecord.from_state(item)
        elif isinstance(item, str | os.PathLike):
            yield from _files(Path(item))
        elif isinstance(item, tuple) and len(item) == 2 and hasattr(item[0], "load"):
            store, ids = item
            for session_id in [ids] if isinstance(ids, str) else ids:
                state = store.load(session_id).state
                if state is not None:
                    yield f"session {session_id}", RunRecord.from_state(state)
        else:
            raise InvalidType(
                "a recorded run is a path, an AgentState, a RunRecord or a (store, session "
                f"ids) pair, not {type(item).__name__}"
            )


def _files(path: Path) -> Iterator[tuple[str, Path]]:
    if path.is_dir():
        found = False
        for file in recording_files(path):
            found = True
            yield str(file), file
        if not found:
            raise StateDecodeError(f"{path}: no recordings (*.jsonl, *.json) in this folder")
    else:
        yield str(path), path


def recording_files(folder: Path) -> Iterator[Path]:
    """The recordings (``SUFFIXES``, files or links to files) in ``folder`` and the folders
    inside it, not through links to folders, in the order ``sorted(folder.rglob("*"))``
    gives them — found a folder at a time and kept by name until their turn, so a folder of
    many recordings is never held as many paths (they were most of the memory ``regress``
    grew by with the number of runs)."""
    try:
        with os.scandir(folder) as listing:
            names, folders = [], set()
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    folders.add(entry.name)
                    names.append(entry.name)
                elif os.path.splitext(entry.name)[1] in SUFFIXES and entry.is_file():
                    names.append(entry.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return  # as rglob: no folder there, or none this process may read, holds nothing
    names.sort(key=os.path.normcase)  # as paths compare their parts (case-folded on Windows)
    for name in names:
        if name in folders:
            yield from recording_files(folder / name)
        else:
            yield folder / name


def agent_under_test(agent: Any, registry: Any = None) -> tuple[AgentLoop, AgentState | None]:
    """The loop to test, and the state it starts conversations from (``None``: the
    recorded one as it is), from any form ``regress`` takes (see there)."""
    if callable(agent):
        agent = agent()  # a factory: the user's function, whose failure is theirs to see
    if isinstance(agent, AgentLoop):
        return agent, None
    pair = loop_and_state(agent)
    if pair is not None:
        return pair
    # A definition: its module (and PyYAML) loaded only for one
    from agents.definitions import SUFFIXES as DEFINITIONS
    from agents.definitions import AgentDefinition

    if isinstance(agent, str | os.PathLike) and Path(agent).suffix.lower() in DEFINITIONS:
        agent = AgentDefinition.load(agent)
    if isinstance(agent, AgentDefinition):
        return agent_under_test(agent.build(registry, driver=_Unanswered()))
    raise InvalidType(
        "regress() tests an AgentLoop, a (loop, state) pair, a function returning one, an "
        f"AgentDefinition or a definition file, not {type(agent).__name__}"
    )


class _Unanswered:
    """A model that is never asked (a definition's loop gets the record's answers)."""

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        raise UsageError("no model in a regression test: the record answers")


# -- one run ------------------------------------------------------------------------------------


def as_brought(start: AgentState, own: AgentState | None) -> AgentState:
    """The recorded ``start`` with what the agent under test sends with every conversation
    in place of the recorded: the system prompt, ``llm_config`` (the model and its
    settings) and the response format of its own state ``own`` (``None``: as recorded)."""
    if own is None:
        return start
    state = start.with_system_prompt(own.context.system_prompt)
    if state.llm_config != own.llm_config:
        state = attrs.evolve(state, llm_config=own.llm_config)
    if state.context.response_format != own.context.response_format:
        state = state.with_context(state.context.with_response_format(own.context.response_format))
    return state


def _regress_one(
    loop: AgentLoop,
    own: AgentState | None,
    source: str,
    record: RunRecord,
    tools: Tools,
    exact: bool,
    continue_with: Any,
) -> tuple[RunOutcome, AgentState]:
    final = record.final
    answers = _Answers(record, continue_with, request_defaults(loop.driver))
    steps = list(final.step_executions)
    hooks = recorded_signals(_outside(final, record.complete), answered(final), steps)
    recorded = recorded_tools(steps, as_made=True)
    interceptors = [recorded] if tools == "record" else []
    new_loop = loop.with_options(  # one copy of the loop (each copy checks its options)
        driver=answers,
        hooks=(*loop.hooks, *hooks),
        interceptors=(*loop.interceptors, *interceptors),
    )
    decisions = {d.call_id: d for d in final.execution.approvals} if final.execution else {}
    state = final
    for index, segment in enumerate(record.segments):
        start = as_brought(segment.start, own)
        if len(record.segments) == 1:
            state = run_segment(new_loop, start, decisions, recorded_answers(final))
        else:
            state = run_segment(new_loop, start, {})
        outcome = record.complete or index < len(record.segments) - 1
        change = first_change(segment.end, state, outcome, answers.change, exact)
        if change is not None:
            return _changed(source, segment.end, state, change, answers.change), state
    return RunOutcome(source=source, change=None), state


def _outside(final: AgentState, complete: bool) -> tuple[Any, ...]:
    """What stopped the recorded run that the new one cannot raise by itself."""
    if not complete:
        return (END_OF_RECORD,)
    return tuple(signal for signal in ended_signals(final) if signal.reason in _OUTSIDE)


def _changed(
    source: str, recorded: AgentState, new: AgentState, change: Change, asked: Change | None
) -> RunOutcome:
    """The outcome of a changed run, with both histories from the change on."""
    first = change.step
    return RunOutcome(
        source=source,
        change=change,
        recorded_steps=tuple(step_json(se) for se in recorded.step_executions[first - 1 :]),
        new_steps=tuple(step_json(se) for se in new.step_executions[first - 1 :]),
        continued=asked is not None and new.status is not ExecutionStatus.FAILED,
    )


# -- the model, answered from the record ----------------------------------------------------------


class _Answers:
    """The recorded answers, in order, for as long as each request is the recorded one.
    The first request that differs is the run's change (``change``); then the run fails
    there (a ``ReplayDivergence``), or ``continue_with`` answers from there on."""

    def __init__(self, record: RunRecord, continue_with: Any, defaults: Any) -> None:
        self._defaults = defaults  # the agent's driver's own settings go with each request
        start = record.segments[0].start
        self._recorded = recorded_inferences(record.final, after=answered(start))
        self._record = record
        self._position = 0
        self._then = continue_with
        self.change: Change | None = None
        self._shape: tuple[tuple[Any, ...], dict[str, Any]] | None = None
        self._verified: dict[int, tuple[Any, Any]] = {}  # messages found alike, by new id

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        if self.change is not None and self._then is not None:
            return _ask(self._then, request)
        position = self._position
        self._position += 1
        recorded = self._recorded[position] if position < len(self._recorded) else None
        change = request_change(
            request, recorded, self._record, position, self._shape_of, self._verified
        )
        if change is not None:
            self.change = change
            if self._then is not None:
                return _ask(self._then, request)
            raise ReplayDivergence(
                f"step {change.step}: {change.describe()}", step=change.step, field=change.field
            )
        assert recorded is not None
        if recorded.error is not None:
            raise ReplayedFailure(recorded.error)
        assert recorded.response is not None
        return recorded.response

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse:
        return self.infer(request)

    def request_defaults(self) -> Any:
        return self._defaults

    def _shape_of(self, request: InferenceRequest) -> dict[str, Any]:
        """``request_shape``, encoded again only when the request offers other objects
        (a loop offers the same tools and options at every step)."""
        parts = (request.tools, request.model, request.response_format, request.options)
        last = self._shape
        if last is not None and all(a is b for a, b in zip(parts, last[0], strict=True)):
            return last[1]
        shape = request_shape(request)
        self._shape = (parts, shape)
        return shape


def _ask(driver: Any, request: InferenceRequest) -> InferenceResponse:
    response: InferenceResponse = driver.infer(request)
    return response


# -- comparing ----------------------------------------------------------------------------------
