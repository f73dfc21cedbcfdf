"""95 % intervals, paired differences and exact tests for the loop's rates — short formulas, proven by hand.

A run judges ~100 tasks once, so a figure like SR 57.3 carries ± 10 points of sampling noise, and
a difference of a few points between two rounds can be noise. These are the standard tools a
reader needs to tell, each chosen for small samples and rates near 0 or 1:

- `wilson_interval`: Wilson's score interval for k of n (one run; Wilson 1927). Unlike the Wald
  interval p ± z·√(p(1−p)/n) it stays inside [0, 1] and is not degenerate at 0/n or n/n.
- `effective_wilson_interval`: the same for a weighted proportion (the weighted score, one run),
  with Kish's effective sample size n_eff = (Σw)² / Σw² in place of n. Equal weights give
  `wilson_interval` exactly.
- `bootstrap_ratio_interval`: with repeats, a seeded percentile bootstrap over *tasks*: tasks are
  resampled with replacement, each bringing all its repeats (its k of N), and the figure is
  recomputed as Σk / Σn (weighted: Σw·k / Σw·n), as the tables compute it. Repeats average out a
  task's rollout noise, not which tasks were drawn; resampling tasks keeps both.
- `mcnemar_exact_p`: the exact (conditional) McNemar test of a paired comparison: the tasks that
  changed, b one way and c the other, are a binomial sample of b + c with p = ½ under "no
  difference"; p = min(1, 2·P(X ≤ min(b, c))).
- `paired_difference_interval`: Newcombe's square-and-add (hybrid score) interval for the
  difference of two proportions measured on the same tasks (Newcombe 1998, Stat Med 17:2635,
  method 10; with the correlation estimate as in Fagerland, Lydersen & Laake 2014, Stat Med
  33:2850, who recommend it): the two Wilson intervals combined, corrected for their correlation.
- `bootstrap_paired_difference_interval`: with repeats, the same paired bootstrap over tasks.
- `minimum_detectable_difference`: the smallest difference two rounds of n tasks can detect.

The bootstrap draws from NumPy's legacy `RandomState`, whose stream NumPy keeps fixed across
versions, with a fixed seed: results.json is the same, byte for byte, on every re-run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

import numpy as np

LEVEL = 0.95
"""The confidence level of every interval here."""

Z95 = NormalDist().inv_cdf(0.5 + LEVEL / 2)
"""The two-sided 95 % normal quantile, 1.959964…"""

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of the bootstrap: the 2.5th and 97.5th percentiles of 2000 are stable to ≈ 0.5 points at 100 tasks."""

BOOTSTRAP_SEED = 29
"""The bootstrap's fixed seed (issue 29), so the same results give the same intervals."""

_CHUNK_ELEMENTS = 1_000_000  # bounds the index matrix's memory for runs with many tasks

Interval = tuple[float, float]


def wilson_interval(successes: int, trials: int, z: float = Z95) -> Interval:
    """Wilson's score interval for `successes` of `trials`, as fractions in [0, 1].

    Raises:
        ValueError: trials is not positive, or successes is outside 0…trials.
    """
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"wilson_interval: {successes} successes of {trials} trials is not a proportion")
    return _wilson(successes / trials, trials, z)


def effective_wilson_interval(proportion: float, weights: Sequence[float], z: float = Z95) -> Interval:
    """Wilson's interval for a weighted proportion Σw·x / Σw, with Kish's n_eff = (Σw)² / Σw² for n.

    Raises:
        ValueError: no positive weight, or the proportion is outside [0, 1].
    """
    total, squares = sum(weights), sum(w * w for w in weights)
    if total <= 0 or squares <= 0 or not 0.0 <= proportion <= 1.0:
        raise ValueError(f"effective_wilson_interval: proportion {proportion} with weights summing to {total}")
    return _wilson(proportion, total * total / squares, z)


def _wilson(p: float, n: float, z: float) -> Interval:
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At p = 0 (or 1) the bound is 0 (or 1) exactly; floating point may miss it by an ulp.
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return low, high


def _bootstrap(statistic: Callable[[np.ndarray], np.ndarray], tasks: int, resamples: int, seed: int) -> Interval:
    """The percentile interval of `statistic` over `resamples` draws of `tasks` task indices with replacement, given
    row by row (chunked: the same stream as one draw, without holding it all)."""
    random = np.random.RandomState(seed)
    rows = max(1, _CHUNK_ELEMENTS // tasks)
    values = np.concatenate([statistic(random.randint(0, tasks, size=(min(rows, resamples - done), tasks)))
                             for done in range(0, resamples, rows)])
    low, high = np.percentile(values, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return float(low), float(high)


def bootstrap_ratio_interval(numerators: Sequence[float], denominators: Sequence[float], *,
                             resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval:
    """Percentile bootstrap interval of Σ numerators / Σ denominators, resampling the items (tasks).

    Item i contributes `numerators[i]` (its passes, or w·passes) over `denominators[i]` (its
    rollouts, or w·rollouts); the items' order decides which draw picks which, so give them in a
    stable order (the callers sort by app and task id).

    Raises:
        ValueError: no items, lengths differ, or an item has no positive denominator.
    """
    num, den = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    if num.size == 0 or num.shape != den.shape or (den <= 0).any():
        raise ValueError(f"bootstrap_ratio_interval: {num.size} numerators, {den.size} denominators (each must be > 0)")
    return _bootstrap(lambda rows: num[rows].sum(axis=1) / den[rows].sum(axis=1), num.size, resamples, seed)


def bootstrap_paired_difference_interval(compared: Sequence[tuple[float, float]], baseline: Sequence[tuple[float, float]],
                                         *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval:
    """Percentile bootstrap interval of Σk/Σn (compared) − Σk/Σn (baseline), resampling tasks as pairs.

    `compared[i]` and `baseline[i]` are task i's (passes, rollouts) in the two configurations.

    Raises:
        ValueError: no tasks, lengths differ, or a task has no rollout on one side.
    """
    a, b = np.asarray(compared, dtype=float).reshape(-1, 2), np.asarray(baseline, dtype=float).reshape(-1, 2)
    if a.shape[0] == 0 or a.shape != b.shape or (a[:, 1] <= 0).any() or (b[:, 1] <= 0).any():
        raise ValueError(f"bootstrap_paired_difference_interval: {a.shape[0]} and {b.shape[0]} tasks, each needs rollouts")
    return _bootstrap(lambda rows: a[rows, 0].sum(axis=1) / a[rows, 1].sum(axis=1)
                      - b[rows, 0].sum(axis=1) / b[rows, 1].sum(axis=1), a.shape[0], resamples, seed)


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: min(1, 2·P(X ≤ min(b, c))), X ~ Bin(b + c, ½).

    With no discordant pair there is no evidence of a difference: p = 1.

    Raises:
        ValueError: a negative count.
    """
    if gained < 0 or lost < 0:
        raise ValueError(f"mcnemar_exact_p: counts must be ≥ 0, got {gained} and {lost}")
    changed = gained + lost
    tail = sum(math.comb(changed, i) for i in range(min(gained, lost) + 1))
    return min(1.0, 2 * tail / 2 ** changed)


def paired_difference_interval(both: int, first_only: int, second_only: int, neither: int, z: float = Z95) -> Interval:
    """Newcombe's square-and-add interval for p_first − p_second on the same n items (the paired 2×2 table).

    `both`: items that pass in both; `first_only`: pass in the first only; `second_only`: in the
    second only; `neither`. p_first = (both + first_only) / n, p_second = (both + second_only) / n.
    The correlation estimate ψ is Newcombe's, as Fagerland et al. give it: with A = both·neither −
    first_only·second_only, ψ = (A − n/2)/√(marginals) if A > n/2, 0 if 0 ≤ A ≤ n/2, A/√(marginals)
    if A < 0, and 0 when a marginal is empty.

    Raises:
        ValueError: a negative count or an empty table.
    """
    cells = (both, first_only, second_only, neither)
    n = sum(cells)
    if n <= 0 or min(cells) < 0:
        raise ValueError(f"paired_difference_interval: counts {cells} are not a paired table")
    first, second = both + first_only, both + second_only
    p1, p2 = first / n, second / n
    l1, u1 = wilson_interval(first, n, z)
    l2, u2 = wilson_interval(second, n, z)
    marginals = first * (n - first) * second * (n - second)
    if marginals == 0:
        psi = 0.0
    else:
        a = both * neither - first_only * second_only
        psi = (a - n / 2) / math.sqrt(marginals) if a > n / 2 else 0.0 if a >= 0 else a / math.sqrt(marginals)
    estimate = p1 - p2
    low = estimate - math.sqrt(max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2)))
    high = estimate + math.sqrt(max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1)))
    return max(-1.0, low), min(1.0, high)


def minimum_detectable_difference(tasks: int, power: float = 0.8) -> float:
    """The smallest difference between two rates over `tasks` tasks each that a two-sided 95 % test
    detects with `power` (a fraction): (z_0.975 + z_power)·√(2·¼ / n).

    The two-proportion normal approximation at a rate of ½ — the largest variance a rate in [0, 1]
    can have, so the bound holds for any SR, and for the mean of per-task pass rates over repeats
    too (repeats cannot add tasks). It ignores pairing: two rounds judged on the same tasks detect
    less when few tasks change between them (`paired_difference_interval` shows by how much after
    the run).

    Raises:
        ValueError: tasks is not positive or power is outside (0, 1).
    """
    if tasks <= 0 or not 0 < power < 1:
        raise ValueError(f"minimum_detectable_difference: {tasks} tasks at power {power}")
    return (Z95 + NormalDist().inv_cdf(power)) * math.sqrt(2 * 0.25 / tasks)
