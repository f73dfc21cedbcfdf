"""The statistics behind the error bars (`results._intervals`), each against values worked out by hand or published.

Hand arithmetic, z = 1.959964 (z² = 3.841459):
- Wilson at k = 0: low 0, high z² / (n + z²); at k = n: low n / (n + z²), high 1.
  0/10 → high 3.841459 / 13.841459 = 0.27753; 10/10 → low 10 / 13.841459 = 0.72247.
- 5/10: centre (0.5 + z²/20) / (1 + z²/10) = 0.5; half = z·√(0.025 + z²/400) / (1 + z²/10)
  = 1.959964 · √0.0346036 / 1.3841459 = 0.26341 → [0.23659, 0.76341].
- 57/103: p = 0.553398, z²/n = 0.037296; centre (0.553398 + 0.018648) / 1.037296 = 0.551477;
  half = 1.959964 · √(0.553398·0.446602/103 + 3.841459/42436) / 1.037296 = 1.959964 · √0.0024901 / 1.037296
  = 0.094287 → [0.45719, 0.64576].
Published (Newcombe 1998, Stat Med 17:857, Table I, Wilson's method): 81/263 → 0.2553–0.3662,
15/148 → 0.0624–0.1605, 0/20 → 0–0.1611, 1/29 → 0.0061–0.1718.
"""

from __future__ import annotations

import math

import pytest

from results._intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Z95,
    bootstrap_paired_difference_interval,
    bootstrap_ratio_interval,
    effective_wilson_interval,
    mcnemar_exact_p,
    minimum_detectable_difference,
    paired_difference_interval,
    wilson_interval,
)


def test_z_is_the_two_sided_95_percent_quantile():
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize("successes, trials, low, high", [
    (0, 10, 0.0, 0.27753),
    (5, 10, 0.23659, 0.76341),
    (10, 10, 0.72247, 1.0),
    (57, 103, 0.45719, 0.64576),
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_bounds_equal_the_hand_computed_and_published_ones(successes, trials, low, high):
    got = wilson_interval(successes, trials)
    digits = 5 if (successes, trials) in {(0, 10), (5, 10), (10, 10), (57, 103)} else 4
    assert (round(got[0], digits), round(got[1], digits)) == (low, high)


def test_wilson_is_exactly_0_or_1_at_the_ends_and_refuses_what_is_not_a_proportion():
    assert wilson_interval(0, 103)[0] == 0.0 and wilson_interval(103, 103)[1] == 1.0
    for bad in ((1, 0), (-1, 5), (6, 5)):
        with pytest.raises(ValueError, match="not a proportion"):
            wilson_interval(*bad)


def test_equal_weights_give_wilson_and_unequal_weights_a_smaller_effective_n():
    assert effective_wilson_interval(5 / 10, [2.0] * 10) == pytest.approx(wilson_interval(5, 10))
    # weights 8, 1, 1, 1, 1: n_eff = 12² / 68 = 2.1176 — the interval is that of 2.1 tasks, not of 5
    score = 8 / 12  # the gold task passed, the others failed
    low, high = effective_wilson_interval(score, [8, 1, 1, 1, 1])
    n = 144 / 68
    centre = (score + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(score * (1 - score) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert high - low > wilson_interval(3, 5)[1] - wilson_interval(3, 5)[0]


def test_mcnemar_on_known_tables():
    # b = 14, c = 2: 16 discordant tasks; P(X ≤ 2) = (1 + 16 + 120) / 2^16 = 137 / 65536; p = 274 / 65536
    assert mcnemar_exact_p(14, 2) == 274 / 65536 == mcnemar_exact_p(2, 14)
    assert round(mcnemar_exact_p(14, 2), 3) == 0.004
    # Cavo et al. 2012 (Fagerland, Lydersen & Laake's example): b = 6, c = 16 → exact conditional P = 0.052479
    assert round(mcnemar_exact_p(6, 16), 6) == 0.052479
    # one each way: 2 · P(X ≤ 1 | n = 2) = 2 · 3/4 → capped at 1; none at all: no evidence, p = 1
    assert mcnemar_exact_p(1, 1) == 1.0 and mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 0) == 2 / 32  # all five the same way


def test_the_paired_interval_on_a_published_and_a_hand_computed_table():
    # Cavo et al. 2012: both 59, first only 6, second only 16, neither 80 → −0.0621 (−0.1186 to −0.0046)
    low, high = paired_difference_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    # Hand: n = 10, both 3, first only 2, second only 0, neither 5. p1 = 0.5, p2 = 0.3.
    # Wilson 5/10 = [0.236593, 0.763407], 3/10 = [0.107791, 0.603222]. A = 3·5 − 2·0 = 15 > n/2 = 5:
    # ψ = (15 − 5) / √(5·5·3·7) = 10 / 22.912878 = 0.436436.
    # low:  0.263407² + 0.303222² − 2ψ·0.263407·0.303222 = 0.161327 − 0.069717 = 0.091610; 0.2 − √0.091610 = −0.102671
    # high: 0.192209² + 0.263407² − 2ψ·0.192209·0.263407 = 0.106327 − 0.044193 = 0.062135; 0.2 + √0.062135 = 0.449268
    low, high = paired_difference_interval(3, 2, 0, 5)
    assert (round(low, 4), round(high, 4)) == (-0.1027, 0.4493)
    # no discordant task at all still leaves an interval around 0 (two rounds of 103 tasks, 71 passing in both)
    low, high = paired_difference_interval(71, 0, 0, 32)
    assert low < 0 < high and low == pytest.approx(-high, abs=1e-3)


def test_the_seeded_bootstrap_is_deterministic_and_where_it_should_be():
    passed = [1] * 59 + [0] * 44
    first = bootstrap_ratio_interval(passed, [1] * 103)
    assert first == bootstrap_ratio_interval(passed, [1] * 103)  # the same seed, the same interval
    assert first != bootstrap_ratio_interval(passed, [1] * 103, seed=BOOTSTRAP_SEED + 1)
    # one rollout per task: the bootstrap's interval is close to Wilson's (57.3 % of 103: [47.6, 66.4])
    wilson = wilson_interval(59, 103)
    assert abs(first[0] - wilson[0]) < 0.02 and abs(first[1] - wilson[1]) < 0.02
    # repeats inside tasks: 3 repeats each, the same pooled 57.3 %, and the interval is still about tasks
    # (identical repeats add no information: the same interval as one rollout each)
    assert bootstrap_ratio_interval([3 * p for p in passed], [3] * 103) == pytest.approx(first)
    # a task that always passes and one that never does: every resample lies in [0, 1], the ends included
    assert bootstrap_ratio_interval([2, 0], [2, 2]) == (0.0, 1.0)
    # a resample is a whole number of tasks: with 2 tasks of 4 rollouts the figure is k/8 for some k
    low, high = bootstrap_ratio_interval([4, 1], [4, 4])
    assert low * 8 == round(low * 8) and high * 8 == round(high * 8)
    assert BOOTSTRAP_RESAMPLES == 2000
    with pytest.raises(ValueError):
        bootstrap_ratio_interval([], [])


def test_the_paired_bootstrap_resamples_tasks_as_pairs():
    compared = [(2, 2)] * 20 + [(0, 2)] * 10
    baseline = [(2, 2)] * 10 + [(0, 2)] * 20
    low, high = bootstrap_paired_difference_interval(compared, baseline)
    assert low < 1 / 3 < high and low > 0  # +33.3 points: 10 tasks gained, none lost
    same = bootstrap_paired_difference_interval(baseline, baseline)
    assert same == (0.0, 0.0)  # paired: a configuration against itself has no spread at all


def test_the_minimum_detectable_difference():
    # (1.959964 + 0.841621) · √(0.5 / 103) = 2.801585 · 0.0696733 = 0.195195
    assert minimum_detectable_difference(103) == pytest.approx(0.195195, abs=1e-6)
    assert minimum_detectable_difference(412) == pytest.approx(minimum_detectable_difference(103) / 2)
    with pytest.raises(ValueError):
        minimum_detectable_difference(0)
