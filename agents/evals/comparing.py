"""Comparing two evaluations (docs/how-to/evals.md): did a change make the agent worse, beyond
noise? Trials are paired by case and trial number; each case, and the whole, gets the
difference in pass rate, McNemar's exact test on the paired outcomes, a seeded paired
bootstrap interval of the mean score difference, and a verdict at ``alpha`` (Holm's
correction over the cases)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from agents.errors import InvalidArgument, InvalidType
from agents.evals import stats
from agents.evals.report import EvalReport, Trial
from agents.records.arguments import number
from agents.records.arguments import path as checked_path

__all__ = ["CaseComparison", "Comparison", "compare"]

Verdict = Literal["worse", "better", "no evidence"]
NO_EVIDENCE: Final = "no evidence"


@attrs.frozen
class CaseComparison:
    """One case's paired trials: ``pairs`` compared, ``difference`` (the candidate's pass
    rate less the baseline's), ``p_value`` (McNemar's exact), ``adjusted`` (Holm's), the
    bootstrap ``interval`` of the mean score difference, and the ``verdict``."""

    name: str
    pairs: int
    difference: float
    p_value: float
    adjusted: float
    interval: tuple[float, float]
    verdict: Verdict

    def to_data(self) -> dict[str, Any]:
        return {
            "adjusted_p_value": self.adjusted,
            "difference": self.difference,
            "interval": list(self.interval),
            "name": self.name,
            "p_value": self.p_value,
            "pairs": self.pairs,
            "verdict": self.verdict,
        }


@attrs.frozen
class Comparison:
    """Candidate against baseline: the whole (every pair of every case) and each case."""

    verdict: Verdict
    pairs: int
    difference: float
    p_value: float
    interval: tuple[float, float]
    alpha: float
    cases: tuple[CaseComparison, ...]
    missing: tuple[str, ...] = ()

    @property
    def worse(self) -> bool:
        """Whether the candidate is worse, as a CI gate asks."""
        return self.verdict == "worse"

    def to_data(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "cases": [case.to_data() for case in self.cases],
            "difference": self.difference,
            "interval": list(self.interval),
            "missing": list(self.missing),
            "p_value": self.p_value,
            "pairs": self.pairs,
            "verdict": self.verdict,
        }

    def to_json(self) -> str:
        """The comparison as JSON (sorted keys): the same reports, the same bytes."""
        return json.dumps(self.to_data(), indent=2, sort_keys=True) + "\n"

    def write_html(self, path: str | os.PathLike[str]) -> None:
        """Write the comparison as one HTML page (whole, or not at all)."""
        from agents.evals.pages import render_comparison
        from agents.shell.files import replacing

        page = render_comparison(self).encode("utf-8")
        with replacing(
            Path(checked_path(path, "Comparison.write_html: path")), fsync=False
        ) as file:
            file.write(page)


def compare(
    baseline: EvalReport | str | os.PathLike[str],
    candidate: EvalReport | str | os.PathLike[str],
    *,
    alpha: float = 0.05,
    seed: int = 0,
    rounds: int = 2_000,
) -> Comparison:
    """Whether ``candidate`` did worse than ``baseline`` (reports, or their JSON files or
    ``out`` folders). Cases are matched by name (those in one only are ``missing``), their
    trials by number where both ran. The verdicts rest on McNemar's test; the intervals
    of the score difference are a bootstrap of ``rounds`` draws from ``seed``."""
    if not 0 < number(alpha, "alpha") < 1:
        raise InvalidArgument(f"alpha is between 0 and 1, not {alpha!r}")
    stats.check_draws(seed, rounds)
    old, new = _report(baseline, "baseline"), _report(candidate, "candidate")
    theirs = {case.name: case for case in old.cases}
    paired: list[tuple[str, list[tuple[Trial, Trial]]]] = []
    for case in new.cases:
        before = theirs.get(case.name)
        if before is None:
            continue
        numbered = {trial.number: trial for trial in before.trials if trial.ran}
        pairs = [(numbered[t.number], t) for t in case.trials if t.ran and t.number in numbered]
        paired.append((case.name, pairs))
    missing = sorted({c.name for c in old.cases} ^ {c.name for c in new.cases})
    measured = [_measure(pairs, seed, rounds) for _, pairs in paired]
    adjusted = stats.holm([m[2] for m in measured])
    cases = tuple(
        CaseComparison(name, n, diff, p, adj, interval, _verdict(diff, adj, alpha))
        for (name, _), (n, diff, p, interval), adj in zip(paired, measured, adjusted, strict=True)
    )
    every = [pair for _, pairs in paired for pair in pairs]
    n, diff, p, interval = _measure(every, seed, rounds)
    return Comparison(_verdict(diff, p, alpha), n, diff, p, interval, alpha, cases, tuple(missing))


def _measure(
    pairs: list[tuple[Trial, Trial]], seed: int, rounds: int
) -> tuple[int, float, float, tuple[float, float]]:
    """Pairs, the difference in pass rate, McNemar's p-value, the score difference's
    bootstrap interval."""
    if not pairs:
        return 0, 0.0, 1.0, (0.0, 0.0)
    only_old = sum(1 for a, b in pairs if a.passed and not b.passed)
    only_new = sum(1 for a, b in pairs if b.passed and not a.passed)
    difference = (only_new - only_old) / len(pairs)
    interval = stats.bootstrap([b.score - a.score for a, b in pairs], seed=seed, rounds=rounds)
    return len(pairs), difference, stats.mcnemar(only_old, only_new), interval


def _verdict(difference: float, p_value: float, alpha: float) -> Verdict:
    if p_value >= alpha or difference == 0:
        return NO_EVIDENCE
    return "worse" if difference < 0 else "better"


def _report(value: Any, what: str) -> EvalReport:
    """A report given, or the one its JSON file or ``out`` folder holds."""
    if isinstance(value, EvalReport):
        return value
    if not isinstance(value, str | os.PathLike):
        raise InvalidType(
            f"compare: {what} is an EvalReport or the path of one, not {type(value).__name__}"
        )
    return EvalReport.load(value)
