"""Running an evaluation (docs/how-to/evals.md): each case's trials through the agent's
``arun``, ``concurrency`` at once, each scored; with ``out``, each trial's run recorded in
an audit log (its blobs beside it), so that ``rescore`` scores again with no model call."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

from agents.audit import AuditLog
from agents.core.clock import Clock, SystemClock
from agents.drivers.replay import RecordingInterceptor
from agents.errors import DatasetError, InvalidArgument, InvalidType, StateDecodeError, UsageError
from agents.evals.dataset import Case, Dataset, case_of
from agents.evals.judging import recording
from agents.evals.report import CaseResult, EvalReport, Score, Trial, check_limit, scorer_name
from agents.records.arguments import function, listed
from agents.records.arguments import path as checked_path
from agents.records.execution import ExecutionStatus
from agents.records.json_text import json_lines, loads
from agents.records.state import AgentState
from agents.shell.files import UnreadableFile, read_file, replacing
from agents.shell.loop import AgentLoop
from agents.testing.regression import agent_under_test

__all__ = ["Budget", "aevaluate", "evaluate", "rescore"]

Progress = Callable[[int, int], None]
T = TypeVar("T")

MAX_TRIALS: Final = 100_000
"""The most trials a case may have: past it, the jobs alone would not fit in memory (and a
forged folder would have ``rescore`` count trials for ever)."""


def _amount(_: Any, attribute: Any, value: Any) -> None:
    check_limit(f"a budget's {attribute.name}", value, whole=attribute.name == "tokens")


@attrs.frozen
class Budget:
    """What an evaluation may spend: ``tokens``, ``cost`` (dollars) and ``seconds`` of wall
    clock. Once one is spent no new trial starts (those running finish); the report lists
    the trials that did not run."""

    tokens: int | None = attrs.field(default=None, validator=_amount)
    cost: float | None = attrs.field(default=None, validator=_amount)
    seconds: float | None = attrs.field(default=None, validator=_amount)

    def spent(self, tokens: float, cost: float, seconds: float) -> bool:
        return (
            (self.tokens is not None and tokens >= self.tokens)
            or (self.cost is not None and cost >= self.cost)
            or (self.seconds is not None and seconds >= self.seconds)
        )


def evaluate(
    agent: Any,
    dataset: Dataset | Iterable[Case],
    scorers: Sequence[Callable[..., Any]],
    *,
    trials: int = 1,
    concurrency: int = 8,
    out: str | os.PathLike[str] | None = None,
    budget: Budget | None = None,
    initial: Callable[[Case], AgentState] | None = None,
    clock: Clock | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """``aevaluate`` from blocking code (not inside a running event loop), on an event loop
    of its own: the HTTP clients litellm made in it are closed when it ends."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise UsageError("evaluate() blocks: inside an event loop, await aevaluate()")
    return _run_owned(
        aevaluate(
            agent,
            dataset,
            scorers,
            trials=trials,
            concurrency=concurrency,
            out=out,
            budget=budget,
            initial=initial,
            clock=clock,
            progress=progress,
        )
    )


def _run_owned(work: Coroutine[Any, Any, T]) -> T:
    """``work`` on an event loop of its own; the HTTP clients litellm made in it are closed
    before it ends (or their sockets would outlive it)."""

    async def owned() -> T:
        try:
            return await work
        finally:
            if "litellm" in sys.modules:
                from agents.drivers.litellm import close_async_clients

                await close_async_clients()

    return asyncio.run(owned())


async def aevaluate(
    agent: Any,
    dataset: Dataset | Iterable[Case],
    scorers: Sequence[Callable[..., Any]],
    *,
    trials: int = 1,
    concurrency: int = 8,
    out: str | os.PathLike[str] | None = None,
    budget: Budget | None = None,
    initial: Callable[[Case], AgentState] | None = None,
    clock: Clock | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Run every case of ``dataset`` ``trials`` times through ``agent`` (an ``AgentLoop``, a
    ``(loop, state)`` pair, a function giving either, a definition or its file, as
    ``regress`` takes it), ``concurrency`` runs at once, and score each final state with
    every one of ``scorers``. A case's trials start from ``initial(case)`` (asked once a
    case): by default the case's state, or the agent's own state (a pair's) or a new one,
    with the case's input as the user's message. A failed run, a trial that cannot start
    or a scorer that raises fails its trial and says why; nothing raises. ``out``: a new
    folder where each trial's run is recorded (``runs/``: its audit log, and the recording
    of its model calls), with the cases and the report, for ``rescore``. ``budget``: when
    spent, no trial starts. ``progress(done, total)`` is told of each trial done."""
    if not isinstance(dataset, Dataset):
        dataset = Dataset(listed(dataset, "evaluate: dataset"))  # each a Case, named once
    cases, name = dataset.cases, dataset.name
    named = _named(scorers)
    if not _whole(trials, MAX_TRIALS) or not _whole(concurrency):
        raise InvalidArgument(
            f"trials (at most {MAX_TRIALS:,}) and concurrency are whole numbers of at least 1"
        )
    if budget is not None and not isinstance(budget, Budget):
        raise InvalidType(f"budget is a Budget, not {type(budget).__name__}")
    function(initial, "initial", "a case")
    loop, own = agent_under_test(agent)
    make = initial or (lambda case: _initial(case, own))
    starts: dict[int, AgentState] = {}  # a case's trials start from one state (a value)

    def start(index: int) -> AgentState:
        state = starts.get(index)
        if state is None:
            state = starts[index] = make(cases[index])
        return state

    folder = _prepared(out, name, cases, trials) if out is not None else None
    spent = _Spent(budget, clock or SystemClock())
    jobs = [(index, number) for index in range(len(cases)) for number in range(trials)]
    results: dict[tuple[int, int], Trial] = {}
    waiting = iter(jobs)

    async def worker() -> None:
        for index, number in waiting:
            case = cases[index]
            if spent.over():
                results[index, number] = Trial(case.name, number, ran=False)
                continue
            try:
                state = await _trial_run(loop, start(index), folder, f"{index}-{number}")
            except Exception as exc:  # the trial's failure (its start, its log), not the eval's
                error = f"the trial could not run: {type(exc).__name__}: {exc}"
                results[index, number] = Trial(case.name, number, None, (), error)
                continue
            spent.add(state)
            key = (folder, f"{index}-{number}") if folder is not None else None
            results[index, number] = await score_trial(case, number, state, named, key)
            if progress is not None:
                progress(len(results), len(jobs))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)) or 1)))
    report = _report(name, cases, trials, results, named)
    if folder is not None:
        with replacing(folder / "report.json", fsync=False) as file:  # whole, or not at all
            file.write(report.to_json().encode("utf-8"))
    return report


class _Spent:
    """What an evaluation's trials have spent, and whether that is past its budget
    (counted only when there is a budget: a run's usage is a sum over its steps)."""

    def __init__(self, budget: Budget | None, clock: Clock) -> None:
        self.budget, self.clock, self.began = budget, clock, clock.now()
        self.tokens, self.cost = 0, 0.0

    def over(self) -> bool:
        if self.budget is None:
            return False
        seconds = (self.clock.now() - self.began).total_seconds()
        return self.budget.spent(self.tokens, self.cost, seconds)

    def add(self, state: AgentState) -> None:
        if self.budget is not None:
            usage = state.usage
            self.tokens += usage.total_tokens
            self.cost += usage.cost


async def _trial_run(
    loop: AgentLoop, state: AgentState, folder: Path | None, key: str
) -> AgentState:
    """One trial's run, recorded in ``folder`` when there is one: its audit log (its blobs
    beside it) and the recording of its model calls (``<key>.calls.jsonl``, which a
    ``ReplayDriver.from_file`` answers from)."""
    if folder is None:
        return await loop.arun(state)
    log = AuditLog.open(folder / "runs" / f"{key}.jsonl", durability="none")
    calls = RecordingInterceptor(folder / "runs" / f"{key}.calls.jsonl")
    try:
        return await loop.with_listeners(log).with_interceptors(calls).arun(state)
    finally:
        log.close()
        calls.close()


def rescore(out: str | os.PathLike[str], scorers: Sequence[Callable[..., Any]]) -> EvalReport:
    """The report of an evaluation recorded in ``out`` (``evaluate(..., out=...)``) scored
    again by ``scorers``: each trial's final state read from its audit log, no model called
    (but by a scorer that calls one). The same scorers give the same report, byte for
    byte."""
    folder = Path(checked_path(out, "rescore: out"))
    named = _named(scorers)
    dataset, trials, cases = _recorded_cases(folder)

    async def scored() -> dict[tuple[int, int], Trial]:
        results = {}
        for index, case in enumerate(cases):
            for number in range(trials):
                path = folder / "runs" / f"{index}-{number}.jsonl"
                if not path.exists():
                    results[index, number] = Trial(case.name, number, ran=False)
                    continue
                state = AuditLog.read(path)
                key = (folder, f"{index}-{number}")
                results[index, number] = await score_trial(case, number, state, named, key)
        return results

    return _report(dataset, cases, trials, _run_owned(scored()), named)


async def score_trial(
    case: Case,
    number: int,
    state: AgentState,
    scorers: Sequence[tuple[str, Any]],
    kept: tuple[Path, str] | None = None,
) -> Trial:
    """A trial's scores; a failed run, or a scorer that raised, is its error. ``kept``:
    the evaluation's folder and the trial's key there, where a judge keeps its
    judgements."""
    if kept is None and recording.get() is None:
        return await _scored(case, number, state, scorers)
    token = recording.set(kept)
    try:
        return await _scored(case, number, state, scorers)
    finally:
        recording.reset(token)


async def _scored(
    case: Case, number: int, state: AgentState, scorers: Sequence[tuple[str, Any]]
) -> Trial:
    scores: list[tuple[str, Score]] = []
    errors: list[str] = []
    if state.status is ExecutionStatus.FAILED:
        error = state.execution.error if state.execution is not None else None
        errors.append(f"the run failed: {error.describe() if error else 'no error recorded'}")
    for name, scorer in scorers:
        try:
            score = scorer(case, state)
            if type(score) is not Score and inspect.isawaitable(score):
                score = await score
            if not isinstance(score, Score):
                raise InvalidType(f"gave {type(score).__name__}, not a Score")
        except Exception as exc:  # the scorer's failure is its trial's, not the run's
            errors.append(f"scorer {name!r} raised {type(exc).__name__}: {exc}")
            score = Score(0.0, False, f"raised {type(exc).__name__}")
        scores.append((name, score))
    return Trial(case.name, number, state, tuple(scores), "; ".join(errors) or None)


def _whole(value: Any, most: float = float("inf")) -> bool:
    """Whether ``value`` is a whole number from 1 to ``most`` (``True`` is not one)."""
    return type(value) is int and 1 <= value <= most


def _named(scorers: Sequence[Callable[..., Any]]) -> list[tuple[str, Any]]:
    given = listed(scorers, "scorers")
    if not given:
        raise InvalidArgument("give at least one scorer")
    wrong = next((scorer for scorer in given if not callable(scorer)), None)
    if wrong is not None:
        raise InvalidType(f"a scorer is a function of a case and a state, not {wrong!r:.60}")
    named = [(scorer_name(scorer), scorer) for scorer in given]
    names = [name for name, _ in named]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidArgument(f"two scorers are named {twice[0]!r}: name them apart")
    return named


def _initial(case: Case, own: AgentState | None) -> AgentState:
    if own is None or isinstance(case.input, AgentState):
        return case.initial()
    given = list(case.input) if isinstance(case.input, tuple) else case.input
    return own.with_user_message(given)


def _report(
    name: str,
    cases: Sequence[Case],
    trials: int,
    results: dict[tuple[int, int], Trial],
    named: Sequence[tuple[str, Any]],
) -> EvalReport:
    outcome = tuple(
        CaseResult(case.name, tuple(results[index, n] for n in range(trials)))
        for index, case in enumerate(cases)
    )
    return EvalReport(name, outcome, tuple(n for n, _ in named), tuple(cases))


def _prepared(out: str | os.PathLike[str], name: str, cases: Sequence[Case], trials: int) -> Path:
    """``out`` made ready, with ``cases.jsonl``: a header (the dataset's name, the trials per
    case), then each case as JSON data (what ``rescore`` compares the runs with)."""
    folder = Path(checked_path(out, "evaluate: out"))
    if (folder / "cases.jsonl").exists() or (folder / "runs").exists():
        raise InvalidArgument(
            f"{folder} holds an evaluation already: give a new folder (its runs and judgements "
            "would mix with this one's)"
        )
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"dataset": name, "trials": trials}, sort_keys=True)]
    lines += [json.dumps(case.to_data(), sort_keys=True, ensure_ascii=False) for case in cases]
    with replacing(folder / "cases.jsonl", fsync=False) as file:  # whole, or not at all
        file.write(("\n".join(lines) + "\n").encode("utf-8"))
    return folder


def _recorded_cases(folder: Path) -> tuple[str, int, list[Case]]:
    """The dataset's name, the trials per case and the cases of the evaluation recorded in
    ``folder`` (``_prepared``); a ``DatasetError`` naming the line that is not one."""
    path = folder / "cases.jsonl"
    try:
        data = read_file(path)
    except UnreadableFile as exc:
        raise InvalidArgument(f"{folder}: not an evaluation's folder ({exc})") from None
    try:
        lines = json_lines(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 (byte {exc.start})", file=str(path)) from None
    try:
        header = loads(lines[0]) if lines else None
    except StateDecodeError:
        header = None
    if not (
        type(header) is dict
        and type(header.get("dataset")) is str
        and _whole(header.get("trials"), MAX_TRIALS)
    ):
        raise DatasetError(
            f'not the header {{"dataset": NAME, "trials": K}} (K from 1 to {MAX_TRIALS:,})',
            file=str(path),
            line=1,
        )
    cases = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            data = loads(line)
        except StateDecodeError as exc:
            raise DatasetError(exc.reason, file=str(path), line=number) from None
        cases.append(_recorded_case(data, number, str(path)))
    return header["dataset"], header["trials"], cases


def _recorded_case(data: Any, line: int, source: str) -> Case:
    """A case as ``cases.jsonl`` holds it, checked as a dataset's are (its input is in
    each run's log, not needed to score: a case's text, else empty)."""
    if isinstance(data, dict) and "input" in data and not isinstance(data["input"], str):
        data = {**data, "input": ""}
    return case_of(data, line, {}, source)
