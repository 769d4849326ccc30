"""The statistics of ``agents.evals`` are right (docs/how-to/evals.md): seeded simulations
through the engine with a stochastic fake model that answers case i right with a known
probability p_i, and exhaustive checks of the estimators."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from agents import AgentLoop
from agents.errors import InvalidArgument
from agents.evals import Case, Dataset, compare, evaluate
from agents.evals.scorers import equals
from agents.evals.stats import bootstrap, holm, mcnemar, pass_at_k, pass_hat_k, wilson
from agents.testing import FunctionDriver


class Coin:
    """A model answering case ``i`` (its input is ``i``) right with probability ``p[i]``,
    drawing from its own seeded generator."""

    def __init__(self, p: list[float], seed: int) -> None:
        self.p, self.rng = p, random.Random(seed)

    def __call__(self, request):
        case = int(request.messages[-1].text)
        return "right" if self.rng.random() < self.p[case] else "wrong"


def _dataset(n: int) -> Dataset:
    return Dataset([Case(str(i), str(i), "right") for i in range(n)])


def _run(p: list[float], seed: int, trials: int):
    agent = AgentLoop(FunctionDriver(Coin(p, seed)))
    return evaluate(agent, _dataset(len(p)), [equals()], trials=trials)


def test_wilson_intervals_cover_the_true_rate_95_percent_of_the_time():
    """2,000 intervals (200 evaluations of 10 cases, 10 trials each, p from 0.1 to 0.95):
    between 93 % and 97 % of them hold their case's p."""
    p = [0.1 * i for i in range(1, 10)] + [0.95]
    covered = total = 0
    for seed in range(200):
        for case, rate in zip(_run(p, seed, 10).cases, p, strict=True):
            low, high = case.interval
            covered += low <= rate <= high
            total += 1
    assert total == 2_000
    assert 0.93 <= covered / total <= 0.97, covered / total


def test_equal_agents_are_called_worse_at_most_at_rate_alpha():
    """100 comparisons of two runs of the same agent (50 cases, 5 trials): ``worse`` in at
    most alpha (0.05) plus 0.05 of them, and no case ever worse after Holm's correction
    more often than that."""
    rng = random.Random(7)
    p = [rng.uniform(0.2, 0.9) for _ in range(50)]
    worse = case_worse = 0
    for seed in range(100):
        comparison = compare(_run(p, 2 * seed, 5), _run(p, 2 * seed + 1, 5), rounds=50)
        worse += comparison.verdict == "worse"
        case_worse += any(case.verdict == "worse" for case in comparison.cases)
    assert worse / 100 <= 0.10, worse
    assert case_worse / 100 <= 0.10, case_worse


def test_a_real_drop_of_point_two_is_called_worse_at_least_80_percent_of_the_time():
    """50 comparisons, 50 cases of 5 trials, each case's p lower by 0.2 in the candidate."""
    rng = random.Random(11)
    p = [rng.uniform(0.4, 0.95) for _ in range(50)]
    lower = [rate - 0.2 for rate in p]
    worse = sum(
        compare(_run(p, 2 * seed, 5), _run(lower, 2 * seed + 1, 5), rounds=50).verdict == "worse"
        for seed in range(50)
    )
    assert worse / 50 >= 0.80, worse


def test_pass_at_k_and_pass_hat_k_match_the_closed_form_on_every_small_case():
    """For every n ≤ 7 trials, c passes and k: the share of the k-subsets of the trials
    holding a pass (pass@k), and holding only passes (pass^k)."""
    for n in range(1, 8):
        for c in range(n + 1):
            outcomes = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(outcomes, k))
                anyone = sum(any(s) for s in subsets) / len(subsets)
                everyone = sum(all(s) for s in subsets) / len(subsets)
                assert math.isclose(pass_at_k(n, c, k), anyone), (n, c, k)
                assert math.isclose(pass_hat_k(n, c, k), everyone), (n, c, k)


def test_the_exact_tests_and_corrections_on_known_values():
    """McNemar's exact p-value (binomial, two-sided), Holm's step-down, Wilson's bounds and
    the bootstrap's seeding, against values worked by hand."""
    assert mcnemar(0, 0) == 1.0
    assert math.isclose(mcnemar(0, 5), 2 / 32)  # five discordant pairs, all one way
    assert math.isclose(mcnemar(2, 8), 2 * (1 + 10 + 45) / 1024)
    assert mcnemar(5, 5) == 1.0
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    low, high = wilson(0, 10)
    assert low == 0.0 and math.isclose(high, 0.27753, abs_tol=1e-5)
    low, high = wilson(5, 10)
    assert math.isclose(low, 0.23659, abs_tol=1e-5) and math.isclose(high, 0.76341, abs_tol=1e-5)
    data = [0.13, -0.71, 0.42, 0.9, -0.05, 0.33, 0.61, -0.27]
    low, high = bootstrap(data, seed=3)
    assert (low, high) == bootstrap(data, seed=3)
    assert min(data) <= low < sum(data) / len(data) < high <= max(data)
    assert bootstrap(data, seed=3, rounds=50) != bootstrap(data, seed=4, rounds=50)


def test_draws_and_levels_that_make_no_interval_are_refused_by_name():
    """No rounds, a level outside (0, 1), a seed ``random`` cannot take and negative pair
    counts are ``InvalidArgument``s naming the value, not an ``IndexError`` from an empty
    list of means or an interval (or p-value) computed from nonsense."""
    data = [0.1, 0.2, 0.5]
    for options, named in (
        ({"rounds": 0}, "rounds"),
        ({"rounds": -5}, "rounds"),
        ({"rounds": 2.5}, "rounds"),
        ({"level": 1.0}, "level"),
        ({"level": 1.5}, "level"),
        ({"level": float("nan")}, "level"),
        ({"seed": [1]}, "seed"),
    ):
        with pytest.raises(InvalidArgument, match=named):
            bootstrap(data, **options)
    with pytest.raises(InvalidArgument, match="negative"):
        mcnemar(-1, 3)
    report = _run([0.5, 0.5], seed=1, trials=3)
    with pytest.raises(InvalidArgument, match="rounds"):
        compare(report, report, rounds=0)
    assert compare(report, report, rounds=1).verdict == "no evidence"
