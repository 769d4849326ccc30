"""What an evaluation gives (docs/how-to/evals.md): each trial's scores, each case's pass
rate with its Wilson interval, pass@k and pass^k, and the whole; as JSON that is the same,
byte for byte, for the same trials and scorers."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

import attrs

from agents.errors import InvalidArgument, InvalidType, StateDecodeError
from agents.evals import stats
from agents.evals.dataset import Case
from agents.records.arguments import amount, number
from agents.records.arguments import path as checked_path
from agents.records.frozen import to_float
from agents.records.json_text import loads
from agents.records.state import AgentState
from agents.shell.files import read_file

__all__ = [
    "CaseResult",
    "EvalReport",
    "Score",
    "Scorer",
    "Trial",
    "check_limit",
    "scorer_name",
]


def _number(value: Any) -> Any:
    """A number as a float; anything else (a bool, a text) left for ``_unit`` to refuse."""
    return float(value) if isinstance(value, float) else to_float(value)


def _typed(value: Any, kind: type, name: str) -> None:
    """A score's ``passed`` is ``True`` or ``False`` and its explanation a text: what its
    report writes, and reads back (``EvalReport.load``)."""
    if type(value) is not kind:
        raise InvalidType(f"a score's {name} is a {kind.__name__}, not {type(value).__name__}")


def _unit(_: Any, attribute: Any, value: Any) -> None:
    number(value, "a score's value")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidArgument(f"a score's value is a number in [0, 1], not {value!r}")


def check_limit(name: str, value: Any, *, whole: bool = False) -> None:
    """``InvalidArgument`` unless a limit (a budget's, ``within``'s) is ``None`` (none) or a
    finite number of 0 or more (``whole``: a whole one): nothing is ever past NaN, and a
    text cannot be compared with a count."""
    if whole and value is not None and type(value) is not int:
        raise InvalidArgument(f"{name} must be a whole number >= 0, got {value!r:.40}")
    if value is not None:
        amount(value, name, zero=True, error=InvalidArgument)


@attrs.frozen
class Score:
    """What a scorer made of one trial: ``value`` in [0, 1], whether it ``passed``, and
    why (``explanation``)."""

    value: float = attrs.field(converter=_number, validator=_unit)
    passed: bool = attrs.field(validator=lambda _, __, value: _typed(value, bool, "passed"))
    explanation: str = attrs.field(
        default="", validator=lambda _, __, value: _typed(value, str, "explanation")
    )

    def to_data(self) -> dict[str, Any]:
        return {"explanation": self.explanation, "passed": self.passed, "value": self.value}


@runtime_checkable
class Scorer(Protocol):
    """``(case, final_state) -> Score``, or a coroutine giving one; named by its ``name``
    attribute (else its function's name)."""

    def __call__(self, case: Case, state: AgentState) -> Score | Awaitable[Score]: ...


def scorer_name(scorer: Callable[..., Any]) -> str:
    """How a report names ``scorer``."""
    name = getattr(scorer, "name", None) or getattr(scorer, "__name__", None)
    return str(name or type(scorer).__name__)


@attrs.frozen
class Trial:
    """One run of a case: its number (from 0), its final ``state`` (``None``: not run,
    the budget spent), its scores by scorer name, and the ``error`` that kept it from
    passing (a scorer that raised; a failed run is told by its state)."""

    case: str
    number: int
    state: AgentState | None = attrs.field(default=None, eq=False, repr=False)
    scores: tuple[tuple[str, Score], ...] = ()
    error: str | None = None
    ran: bool = True

    @property
    def passed(self) -> bool:
        """Run, no error, and every scorer passed it."""
        return self.ran and self.error is None and all(s.passed for _, s in self.scores)

    @property
    def score(self) -> float:
        """The mean of its scores' values (0 for a trial not run or without scores)."""
        values = [s.value for _, s in self.scores]
        return sum(values) / len(values) if self.ran and values else 0.0

    def to_data(self) -> dict[str, Any]:
        usage = self.state.usage if self.state is not None else None
        return {
            "cost": usage.cost if usage is not None else 0.0,
            "error": self.error,
            "passed": self.passed,
            "ran": self.ran,
            "scores": {name: score.to_data() for name, score in self.scores},
            "status": self.state.status.value if self.state and self.state.status else None,
            "steps": self.state.step_count if self.state is not None else 0,
            "tokens": usage.total_tokens if usage is not None else 0,
            "trial": self.number,
        }


@attrs.frozen
class CaseResult:
    """A case's trials, in order, and what they say."""

    name: str
    trials: tuple[Trial, ...]

    @property
    def run(self) -> int:
        """How many trials ran."""
        return sum(1 for trial in self.trials if trial.ran)

    @property
    def passes(self) -> int:
        return sum(1 for trial in self.trials if trial.passed)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.run if self.run else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson 95 % interval of the pass rate."""
        return stats.wilson(self.passes, self.run)

    def pass_at_k(self, k: int) -> float:
        """The chance that at least one of ``k`` trials passes (Chen et al. 2021)."""
        return stats.pass_at_k(self.run, self.passes, k)

    def pass_hat_k(self, k: int) -> float:
        """The chance that ``k`` trials all pass (pass^k, as τ-bench estimates it)."""
        return stats.pass_hat_k(self.run, self.passes, k)

    @property
    def mean_score(self) -> float:
        ran = [trial.score for trial in self.trials if trial.ran]
        return sum(ran) / len(ran) if ran else 0.0

    def to_data(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "interval": [low, high],
            "mean_score": self.mean_score,
            "name": self.name,
            "pass_rate": self.pass_rate,
            "passes": self.passes,
            "run": self.run,
            "trials": [trial.to_data() for trial in self.trials],
        }


@attrs.frozen
class EvalReport:
    """An evaluation: each case's result in the dataset's order, the scorers' names, and
    the overall figures (over every trial run)."""

    dataset: str
    cases: tuple[CaseResult, ...]
    scorers: tuple[str, ...]
    inputs: tuple[Case, ...] = attrs.field(default=(), eq=False, repr=False)

    @property
    def run(self) -> int:
        return sum(case.run for case in self.cases)

    @property
    def passes(self) -> int:
        return sum(case.passes for case in self.cases)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.run if self.run else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson 95 % interval of the overall pass rate (trials of one case are not
        independent draws: read each case's interval for one case)."""
        return stats.wilson(self.passes, self.run)

    @property
    def not_run(self) -> list[tuple[str, int]]:
        """The trials the budget kept from running: ``(case name, trial number)``."""
        return [(t.case, t.number) for case in self.cases for t in case.trials if not t.ran]

    def case(self, name: str) -> CaseResult:
        """The result of the case named ``name``."""
        for case in self.cases:
            if case.name == name:
                return case
        raise InvalidArgument(f"no case named {name!r} in this report")

    def to_data(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "cases": [case.to_data() for case in self.cases],
            "dataset": self.dataset,
            "interval": [low, high],
            "not_run": [list(pair) for pair in self.not_run],
            "pass_rate": self.pass_rate,
            "passes": self.passes,
            "run": self.run,
            "scorers": list(self.scorers),
        }

    def to_json(self) -> str:
        """The report as JSON: sorted keys, two-space indents; the same trials and scorers
        give the same bytes."""
        return json.dumps(self.to_data(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def write_html(
        self,
        path: str | os.PathLike[str],
        comparison: Any = None,
        out: str | os.PathLike[str] | None = None,
    ) -> None:
        """Write the report as one HTML page (with ``comparison`` against a baseline, and,
        from ``out``, each trial's run report beside it, linked)."""
        from agents.evals.pages import write_html

        write_html(self, path, comparison, out)

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "report") -> EvalReport:
        """A report written by ``to_json`` (its trials' states are not in it);
        ``StateDecodeError`` naming the field of what does not fit."""
        try:
            data = loads(text)
            cases = tuple(
                CaseResult(
                    name=case["name"],
                    trials=tuple(_trial(case["name"], trial) for trial in case["trials"]),
                )
                for case in data["cases"]
            )
            dataset, scorers = data["dataset"], data["scorers"]
            if type(dataset) is not str or not (
                type(scorers) is list and all(type(name) is str for name in scorers)
            ):
                raise InvalidArgument("its dataset is a name and its scorers a list of names")
            return cls(dataset, cases, tuple(scorers))
        except (ValueError, KeyError, TypeError, StateDecodeError) as exc:
            said = exc.reason if isinstance(exc, StateDecodeError) else str(exc)
            said = f"no {exc}" if isinstance(exc, KeyError) else said
            raise StateDecodeError(f"{source}: not an evaluation report ({said})") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """The report in ``path``: a report's JSON, or an ``out`` folder holding one."""
        target = Path(checked_path(path, "EvalReport.load: path"))
        try:
            if target.is_dir():
                target = target / "report.json"
            data = read_file(target)
        except OSError as exc:  # (an ``UnreadableFile``, or a path ``is_dir`` cannot test)
            raise StateDecodeError(f"{target}: cannot read it ({exc.strerror or exc})") from None
        return cls.from_json(data, str(target))


def _trial(case: Any, data: Any) -> Trial:
    """A trial as ``Trial.to_data`` wrote it, each field of its type (``"ran": "false"``
    is no ``false``): ``InvalidArgument`` naming the field otherwise."""
    if type(case) is not str or type(data) is not dict:
        raise InvalidArgument(f"case {case!r:.40}: a case is named and its trials are objects")
    where = f"case {case!r:.40}, trial {data.get('trial')!r:.20}"
    _check(data, _TRIAL, where)
    scores = []
    for name, score in sorted(data["scores"].items()):
        _check(score, _SCORE, f"{where}: score {name!r:.40}")
        scores.append((name, Score(score["value"], score["passed"], score["explanation"])))
    return Trial(case, data["trial"], None, tuple(scores), data["error"], data["ran"])


def _check(data: Any, fields: dict[str, tuple[Callable[[Any], bool], str]], where: str) -> None:
    for field, (fits, said) in fields.items():
        if type(data) is not dict or field not in data or not fits(data[field]):
            raise InvalidArgument(f"{where}: {field} is not {said}")


_TRIAL: Final = {
    "trial": (lambda value: type(value) is int and value >= 0, "a whole number"),
    "error": (lambda value: value is None or type(value) is str, "text or null"),
    "ran": (lambda value: type(value) is bool, "true or false"),
    "scores": (lambda value: type(value) is dict, "an object"),
}
_SCORE: Final = {
    "value": (lambda value: type(value) in (int, float), "a number"),
    "passed": (lambda value: type(value) is bool, "true or false"),
    "explanation": (lambda value: type(value) is str, "text"),
}
