"""Gating a test on an evaluation (docs/how-to/evals.md): plain assertions, so that any test
runner reports them, on a report made live or re-scored from recorded runs offline."""

from __future__ import annotations

import os

from agents.errors import EvalGateFailed, InvalidArgument
from agents.evals.comparing import compare
from agents.evals.report import EvalReport
from agents.records.arguments import number

__all__ = ["assert_not_worse", "assert_pass_rate"]


def assert_pass_rate(report: EvalReport, at_least: float, *, case: str | None = None) -> None:
    """Fail (``EvalGateFailed``, an ``AssertionError``) unless the lower bound of the 95 %
    interval of the pass rate — the whole report's, or ``case``'s — is at least
    ``at_least``: the rate is that high beyond what the trials' noise could explain."""
    if not 0 <= number(at_least, "at_least") <= 1:
        raise InvalidArgument(f"at_least is a rate between 0 and 1, not {at_least!r}")
    measured = report.case(case) if case is not None else report
    low, high = measured.interval
    if low < at_least:
        what = f"case {case!r}" if case is not None else report.dataset
        raise EvalGateFailed(
            f"{what}: {measured.passes}/{measured.run} passed ({measured.pass_rate:.2f}, "
            f"95 % interval {low:.2f}-{high:.2f}): its lower bound is below {at_least:.2f}"
        )


def assert_not_worse(
    baseline: EvalReport | str | os.PathLike[str],
    candidate: EvalReport | str | os.PathLike[str],
    *,
    alpha: float = 0.05,
) -> None:
    """Fail (``EvalGateFailed``, an ``AssertionError``) when ``compare`` says the candidate
    is worse than the baseline, overall or in a case (Holm-corrected), naming what got
    worse."""
    comparison = compare(baseline, candidate, alpha=alpha)
    worse = [case for case in comparison.cases if case.verdict == "worse"]
    if comparison.worse or worse:
        named = ", ".join(f"{c.name} ({c.difference:+.2f}, p={c.adjusted:.4f})" for c in worse)
        raise EvalGateFailed(
            f"worse than the baseline: difference {comparison.difference:+.3f} "
            f"(p={comparison.p_value:.4f})" + (f"; cases: {named}" if named else "")
        )
