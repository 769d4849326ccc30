"""The statistics of an evaluation (docs/how-to/evals.md): pure functions, exact where they
can be, seeded where they draw.

- ``wilson``: the Wilson score interval of a pass rate (95 % by default), which keeps its
  coverage near the nominal level for small samples and rates near 0 or 1, where the
  normal approximation's does not.
- ``pass_at_k``: the unbiased estimator of Chen et al. 2021 (the chance that at least one
  of k trials drawn from n passes): 1 - C(n-c, k) / C(n, k).
- ``pass_hat_k``: the chance that k trials drawn from n all pass, C(c, k) / C(n, k), as
  τ-bench estimates its pass^k.
- ``mcnemar``: McNemar's exact test on paired pass/fail outcomes: under no difference, the
  discordant pairs split as a fair coin; the two-sided p-value of the split seen.
- ``bootstrap``: a seeded paired-bootstrap interval of a mean difference.
- ``holm``: Holm's step-down correction of p-values for many comparisons.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from statistics import NormalDist
from typing import Final

from agents.errors import InvalidArgument

__all__ = [
    "Z95",
    "bootstrap",
    "check_draws",
    "holm",
    "mcnemar",
    "pass_at_k",
    "pass_hat_k",
    "wilson",
]

Z95: Final = NormalDist().inv_cdf(0.975)
"""The standard normal quantile of a two-sided 95 % interval (1.95996...)."""


def wilson(passes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``passes`` out of ``trials`` (``(0.0, 1.0)`` for none)."""
    if trials <= 0:
        return 0.0, 1.0
    if not 0 <= passes <= trials:
        raise InvalidArgument(f"{passes} passes out of {trials} trials")
    rate = passes / trials
    z2 = z * z
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half = (
        z * math.sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    )
    low = 0.0 if passes == 0 else max(0.0, centre - half)  # (exactly: not 1e-17)
    return low, 1.0 if passes == trials else min(1.0, centre + half)


def pass_at_k(trials: int, passes: int, k: int) -> float:
    """The chance that at least one of ``k`` of the ``trials`` passes (unbiased)."""
    _check_k(trials, passes, k)
    if trials - passes < k:
        return 1.0
    return 1.0 - math.comb(trials - passes, k) / math.comb(trials, k)


def pass_hat_k(trials: int, passes: int, k: int) -> float:
    """The chance that ``k`` of the ``trials`` all pass (pass^k)."""
    _check_k(trials, passes, k)
    return math.comb(passes, k) / math.comb(trials, k)


def _check_k(trials: int, passes: int, k: int) -> None:
    if not 0 <= passes <= trials:
        raise InvalidArgument(f"{passes} passes out of {trials} trials")
    if not 1 <= k <= trials:
        raise InvalidArgument(f"k must be between 1 and the {trials} trials, not {k}")


def mcnemar(only_first: int, only_second: int) -> float:
    """The exact two-sided p-value of McNemar's test: ``only_first`` pairs passed the
    first way only, ``only_second`` the second only (the pairs that agree say nothing of
    a difference). 1.0 when no pair disagrees."""
    if only_first < 0 or only_second < 0:
        raise InvalidArgument(f"pairs cannot be negative: {only_first} and {only_second}")
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    low = min(only_first, only_second)
    tail: float = sum(math.comb(discordant, i) for i in range(low + 1)) / 2**discordant
    return min(1.0, 2 * tail)


def bootstrap(
    differences: Sequence[float], *, seed: int = 0, rounds: int = 2_000, level: float = 0.95
) -> tuple[float, float]:
    """The paired-bootstrap percentile interval of the mean of ``differences`` (one per
    pair), drawn from ``random.Random(seed)``: the same data and seed, the same interval.
    ``seed`` and ``rounds`` are whole numbers (``rounds`` 1 or more); ``level`` lies
    between 0 and 1."""
    check_draws(seed, rounds)
    if not 0 < level < 1:  # NaN too
        raise InvalidArgument(f"level is between 0 and 1, not {level!r}")
    if not differences:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(differences)
    drawn = rng.choices(differences, k=n * rounds)  # every round's draws at once
    means = sorted(math.fsum(drawn[i : i + n]) / n for i in range(0, n * rounds, n))
    tail = (1 - level) / 2
    return means[int(tail * rounds)], means[min(rounds - 1, int((1 - tail) * rounds))]


def check_draws(seed: int, rounds: int) -> None:
    """``InvalidArgument`` unless ``seed`` is a whole number and ``rounds`` a whole number
    of bootstrap draws, 1 or more."""
    if type(seed) is not int:
        raise InvalidArgument(f"seed is a whole number, not {seed!r}")
    if type(rounds) is not int or rounds < 1:
        raise InvalidArgument(f"rounds is a whole number of at least 1, not {rounds!r}")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the family-wise error stays at most
    the level each is compared with."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
