"""``agents eval``: an agent evaluated on a dataset, compared with a baseline; ``agents eval
rescore``: a recorded evaluation scored again (docs/how-to/evals.md).

Exit 0 when the agent is not significantly worse than the baseline (or with no baseline),
1 when it is, 2 for bad input (one line on stderr). On a terminal, a progress bar with an
estimate of the time left goes to stderr (tqdm: small, no dependencies of its own, and
litellm's install brings it already); piped, nothing but the result is written."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agents.cli.common import DIFFERENT, OK, load_attribute
from agents.cli.regress import agent_of

__all__ = ["evaluate", "scorers_of"]


def evaluate(args: argparse.Namespace, out: TextIO) -> int:
    """``agents eval DATASET MODULE:ATTR|FILE [--scorers MODULE:ATTR] [--trials K]
    [--concurrency N] [--out DIR] [--baseline DIR|JSON] [--alpha A] [--json] [--report
    OUT.html]``, or ``agents eval rescore DIR --scorers MODULE:ATTR [...]``."""
    from agents.errors import ConfigurationError
    from agents.evals import Dataset, compare, rescore
    from agents.evals import evaluate as run_evaluation

    scorers = scorers_of(args.scorers)
    if args.dataset == "rescore":
        if args.scorers is None:
            raise ConfigurationError("rescore needs --scorers MODULE:ATTR")
        report = rescore(args.target, scorers)
        folder = args.target
    else:
        dataset = Dataset.load(args.dataset)
        agent = agent_of(args.target)
        with _Progress(len(dataset) * args.trials) as tick:
            report = run_evaluation(
                agent,
                dataset,
                scorers,
                trials=args.trials,
                concurrency=args.concurrency,
                out=args.out,
                progress=tick,
            )
        folder = args.out
    comparison = compare(args.baseline, report, alpha=args.alpha) if args.baseline else None
    if args.report:
        report.write_html(args.report, comparison, folder)
    if args.json:
        out.write(report.to_json() if comparison is None else comparison.to_json())
    else:
        out.write(_summary(report, comparison))
    return DIFFERENT if comparison is not None and comparison.worse else OK


def scorers_of(spec: str | None) -> list[Any]:
    """The scorers ``--scorers MODULE:ATTR`` names (a list of them, or one); without it,
    ``equals()`` for the cases with an expected answer and ``completed`` for the others."""
    from agents.errors import ConfigurationError
    from agents.evals import scorers

    if spec is None:
        return [_expected_or_completed(scorers.equals(), scorers.completed)]
    found = load_attribute(spec)
    chosen = list(found) if isinstance(found, list | tuple) else [found]
    if not chosen or not all(callable(scorer) for scorer in chosen):
        raise ConfigurationError(f"{spec} is not a scorer or a list of scorers")
    return chosen


def _expected_or_completed(equals: Callable[..., Any], completed: Callable[..., Any]) -> Any:
    from agents.evals.scorers import scorer

    @scorer("answer")
    def answer(case: Any, state: Any) -> Any:
        return equals(case, state) if case.expected is not None else completed(case, state)

    return answer


class _Progress:
    """A progress bar with the time left on a terminal's stderr (tqdm); nothing when piped."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None

    def __enter__(self) -> Callable[[int, int], None] | None:
        if not sys.stderr.isatty():
            return None
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, unit="trial", file=sys.stderr, leave=False)
        bar = self.bar

        def tick(done: int, _total: int) -> None:
            bar.update(done - bar.n)

        return tick

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def _summary(report: Any, comparison: Any) -> str:
    low, high = report.interval
    lines = [
        f"{report.dataset}: {report.passes}/{report.run} trials passed "
        f"({report.pass_rate:.2f}, 95 % interval {low:.2f}-{high:.2f})"
    ]
    for case in report.cases:
        case_low, case_high = case.interval
        lines.append(f"  {case.name}: {case.passes}/{case.run} ({case_low:.2f}-{case_high:.2f})")
    if report.not_run:
        lines.append(f"  {len(report.not_run)} trials did not run: the budget was spent")
    if comparison is not None:
        worse = [case.name for case in comparison.cases if case.verdict == "worse"]
        lines.append(
            f"against the baseline: {comparison.verdict} (difference "
            f"{comparison.difference:+.3f}, p = {comparison.p_value:.4f})"
            + (f"; worse: {', '.join(worse)}" if worse else "")
        )
    return "\n".join(lines) + "\n"
