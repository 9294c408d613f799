"""Score calibrators: SQM (exact, predictive, P²) against hand-computed maps and properties.

Cross-check cases worked by hand (small SQM maps and metrics, the P² test vector of Jain &
Chlamtac 1985) and the conventions of ``models/score_calibration.md``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import beta, kendalltau, wasserstein_distance

from bayescal.calibration import SQM, NoAnchorsWarning, PredictiveSQM, from_dict
from bayescal.calibration.metrics import (
    discordant_pairs,
    exact_match,
    mae,
    round_scores,
    wasserstein,
)
from bayescal.calibration.p2 import ContinuousSQM, P2Quantiles
from bayescal.data import DataError

D42_J = [3, 3, 4, 4, 4, 5, 5, 5, 5, 5]
D42_H = [1, 2, 2, 3, 3, 3, 4, 4, 5, 5]
P2_VECTOR = [0.02, 0.5, 0.74, 3.39, 0.83, 22.37, 10.15, 15.43, 38.62, 15.92, 34.60, 10.28, 1.47,
             0.40, 0.05, 11.39, 0.27, 0.42, 0.09, 11.37]


# ----------------------------------------------------------------------------- exact SQM
def test_d42_upper_map_is_the_papers_formula() -> None:
    """Worked case: F_J(3)=.2, F_J(4)=.5, F_J(5)=1 → g = {1:1, 2:1, 3:2, 4:3, 5:5}.

    Catches a strict inequality in the inverse (gives 3:3, 4:4) or the mid rule used by mistake.
    """
    sqm = SQM((1, 5), position="upper").fit(D42_J, D42_H)
    assert sqm.map_table().tolist() == [1, 1, 2, 3, 5]


def test_d42_mid_map_and_its_boundary_tie_goes_down() -> None:
    """Card convention 2: mid rule gives {1:1, 2:1, 3:1, 4:3, 5:4}; j = 3 is an exact tie.

    At j = 3 the mid position u = (0 + 0.2)/2 = 0.1 equals F_H(1) = 0.1 exactly; the tie goes to
    the lower level (1). A strict '>' (or a float comparison that lands above) would give 2.
    """
    sqm = SQM((1, 5), position="mid").fit(D42_J, D42_H)
    cj, ch = np.cumsum(sqm.judge_counts), np.cumsum(sqm.human_counts)
    assert 2 * ch[0] * 10 == (cj[1] + cj[2]) * 10  # the exact tie at j = 3
    assert sqm.map_table().tolist() == [1, 1, 1, 3, 4]
    assert SQM().map_table().tolist() == [1, 2, 3, 4, 5]


def test_inverse_is_restricted_to_observed_human_levels() -> None:
    """Convention 2: J = [3, 3], H = [2, 4], j = 1 → 2 (the lowest observed human level), not 1."""
    for position in ("upper", "mid"):
        assert SQM((1, 5), position=position).fit([3, 3], [2, 4]).predict([1]).tolist() == [2.0]


def test_maps_are_monotone_integer_and_discordant_pairs_never_grow(rng) -> None:
    """Non-decreasing maps: discordant pairs after ⊆ before (card, convention 9).

    Catches a map that reorders levels (e.g. an off-by-one in the cumulative counts). Kendall's τ_b
    may change because merged levels create ties; it is unchanged when the map is strictly
    increasing on the observed levels.
    """
    for _ in range(200):
        n = int(rng.integers(2, 40))
        j = rng.integers(1, 6, n)
        h = np.clip(j + rng.integers(-2, 3, n), 1, 5)
        for position in ("upper", "mid"):
            sqm = SQM((1, 5), position=position).fit(j, h)
            table = sqm.map_table()
            assert (np.diff(table) >= 0).all()
            g = sqm.predict(j)
            assert not (discordant_pairs(g, h) & ~discordant_pairs(j, h)).any()
            seen = np.unique(j)
            if len(np.unique(table[seen - 1])) == len(seen) and len(seen) > 1:
                assert kendalltau(g, h).statistic == pytest.approx(kendalltau(j, h).statistic)


def _pushforward_cdf(sqm: SQM) -> np.ndarray:
    image = np.zeros(5)
    np.add.at(image, sqm.map_table() - 1, sqm.judge_counts)
    return np.cumsum(image) / image.sum()


def test_pushforward_equals_human_marginal_where_the_grid_allows(rng) -> None:
    """Upper SQM's pushforward of F̂_J equals F̂_H exactly when every human CDF level is a judge
    CDF level, and is ≤ F̂_H everywhere otherwise (card, convention 2).

    The human counts are built by merging consecutive judge CDF steps, so the grid allows an exact
    match; an inverse that rounds the wrong way misses it.
    """
    for _ in range(300):
        cj = rng.multinomial(int(rng.integers(5, 60)), np.full(5, 0.2))
        cum = np.cumsum(cj)
        keep = np.unique(np.append(rng.choice(cum, size=int(rng.integers(1, 5))), cum[-1]))
        keep = keep[keep > 0]
        levels = np.sort(rng.choice(5, size=len(keep), replace=False))
        ch = np.zeros(5, dtype=np.int64)
        ch[levels] = np.diff(np.concatenate([[0], keep]))
        j = np.repeat(np.arange(1, 6), cj)
        h = rng.permutation(np.repeat(np.arange(1, 6), ch))
        sqm = SQM((1, 5), position="upper").fit(j, h)
        np.testing.assert_allclose(_pushforward_cdf(sqm), np.cumsum(ch) / ch.sum())
        # the general case: arbitrary humans, pushforward CDF ≤ F̂_H
        h2 = rng.integers(1, 6, len(j))
        sqm2 = SQM((1, 5), position="upper").fit(j, h2)
        f_h = np.cumsum(np.bincount(h2 - 1, minlength=5)) / len(h2)
        assert (_pushforward_cdf(sqm2) <= f_h + 1e-12).all()


def test_streaming_equals_batch_at_every_prefix(rng) -> None:
    """fit on the first n anchors == update anchor by anchor to n, state and map, both modes."""
    j = rng.integers(1, 6, 120)
    h = rng.integers(1, 6, 120)
    w = rng.dirichlet(np.ones(5), 120)
    for position in ("upper", "mid"):
        stream, pstream = SQM((1, 5), position), PredictiveSQM((1, 5), position)
        for n in range(1, 121):
            stream.update(j[n - 1], h[n - 1])
            pstream.update(w[n - 1], h[n - 1])
            batch = SQM((1, 5), position).fit(j[:n], h[:n])
            assert stream.to_dict() == batch.to_dict()
            pbatch = PredictiveSQM((1, 5), position).fit(w[:n], h[:n])
            assert pstream.to_dict() == pbatch.to_dict()
            assert pstream.map_table().tolist() == pbatch.map_table().tolist()


def test_state_is_o_k_and_json_serialisable(rng) -> None:
    """The state holds K counts, whatever the number of anchors (O(K) memory and update)."""
    small = SQM((1, 5)).fit(rng.integers(1, 6, 10), rng.integers(1, 6, 10))
    big = SQM((1, 5)).fit(rng.integers(1, 6, 100_000), rng.integers(1, 6, 100_000))
    for state in (small.to_dict()["state"], big.to_dict()["state"]):
        assert len(state["judge_counts"]) == len(state["human_counts"]) == 5
    again = from_dict(json.loads(json.dumps(big.to_dict())))
    assert isinstance(again, SQM) and again.map_table().tolist() == big.map_table().tolist()


def test_predict_before_any_anchor_is_identity_with_a_warning() -> None:
    with pytest.warns(NoAnchorsWarning, match="identity"):
        assert SQM((1, 5)).predict([1, 4]).tolist() == [1.0, 4.0]
    with pytest.warns(NoAnchorsWarning):
        out = PredictiveSQM((1, 4)).predict(np.array([[0.5, 0.5, 0, 0]]))
    assert out.tolist() == [1.5]


def test_bad_anchor_and_query_input_is_refused() -> None:
    sqm = SQM((1, 5))
    with pytest.raises(DataError, match=r"human score off the declared scale 1\.\.5"):
        sqm.update(3, 6)
    with pytest.raises(DataError, match="judge score is not an integer at positions \\[1\\]"):
        sqm.fit([1, 2.5], [1, 2])
    with pytest.raises(DataError, match="takes judge point scores"):
        sqm.predict(np.full((2, 5), 0.2))
    with pytest.raises(DataError, match="does not sum to 1 at positions \\[0\\]"):
        PredictiveSQM((1, 5)).update([0.5, 0.1, 0.1, 0.1, 0.1], 3)
    with pytest.raises(DataError, match="negative or missing mass"):
        PredictiveSQM((1, 3)).update([1.2, -0.2, 0.0], 3)
    with pytest.raises(DataError, match="position must be one of"):
        SQM((1, 5), position="lower")


# ----------------------------------------------------------------------------- predictive SQM
def test_predictive_sqm_on_one_hot_rows_equals_sqm(rng) -> None:
    j = rng.integers(1, 6, 50)
    h = rng.integers(1, 6, 50)
    for position in ("upper", "mid"):
        a = SQM((1, 5), position).fit(j, h)
        b = PredictiveSQM((1, 5), position).fit(np.eye(5)[j - 1], h)
        assert a.map_table().tolist() == b.map_table().tolist()
        np.testing.assert_array_equal(b.predict(np.eye(5)[j - 1]), a.predict(j))


def test_predictive_sqm_tolerates_float_sums_and_maps_distributions() -> None:
    """Fractional judge mass 0.1 + 0.2 lands exactly on a human CDF step: the 1e−9 tolerance
    keeps the level (without it 0.30000000000000004 > 0.3 moves it up)."""
    w = np.array([[0.1, 0.2, 0.7], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0, 0, 1.0], [0, 0, 1.0],
                  [0, 0, 1.0], [0, 0, 1.0], [0, 0, 1.0], [0, 0, 1.0], [0, 0, 1.0]])
    h = [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]  # F_H(1) = 0.3
    sqm = PredictiveSQM((1, 3), "upper").fit(w, h)
    assert sqm.map_table().tolist() == [1, 1, 3]
    dist = sqm.predict_distribution(np.array([[0.2, 0.3, 0.5]]))
    np.testing.assert_allclose(dist, [[0.5, 0.0, 0.5]])
    assert sqm.predict(np.array([[0.2, 0.3, 0.5]]))[0] == pytest.approx(2.0)


# ----------------------------------------------------------------------------- metrics
def test_d43_metrics_and_discrete_w1_formula(rng) -> None:
    """Worked case: calibrated [2,3,3,5] vs human [1,3,4,5]: MAE .5, exact match .5, W1 .5; and
    scipy's W1 equals Σ_v |F̂_1(v) − F̂_2(v)| on random integer samples."""
    assert mae([2, 3, 3, 5], [1, 3, 4, 5]) == 0.5
    assert exact_match([2, 3, 3, 5], [1, 3, 4, 5], (1, 5)) == 0.5
    assert wasserstein([2, 3, 3, 5], [1, 3, 4, 5]) == pytest.approx(0.5)
    for _ in range(50):
        a, b = rng.integers(1, 6, 30), rng.integers(1, 6, 17)
        fa = np.cumsum(np.bincount(a - 1, minlength=5)) / 30
        fb = np.cumsum(np.bincount(b - 1, minlength=5)) / 17
        assert wasserstein(a, b) == pytest.approx(np.abs(fa - fb)[:4].sum())
        assert wasserstein(a, b) == wasserstein_distance(a, b)


def test_rounding_is_half_up_and_clipped() -> None:
    assert round_scores([0.2, 1.5, 2.5, 2.49, 7.0], (1, 5)).tolist() == [1, 2, 3, 2, 5]


# ----------------------------------------------------------------------------- P²
@pytest.mark.parametrize(("p", "expected"), [(0.25, 0.3871122398589066), (0.5, 4.2462394088036435),
                                             (0.75, 17.765707208697677), (0.9, 27.79468696892623)])
def test_p2_textbook_vector(p: float, expected: float) -> None:
    """P² test vector (Jain & Chlamtac): catches the psquare bug (5th point taken twice: 6.1013)."""
    q = P2Quantiles([p])
    for x in P2_VECTOR:
        q.update(x)
    assert q.value()[0] == pytest.approx(expected, rel=1e-12)


def test_p2_markers_vectorised_over_levels_match_one_at_a_time() -> None:
    together = P2Quantiles([0.25, 0.5, 0.75, 0.9])
    for x in P2_VECTOR:
        together.update(x)
    np.testing.assert_array_equal(together.positions[1], [1, 6, 10, 16, 20])
    np.testing.assert_allclose(together.desired[1], [1, 5.75, 10.5, 15.25, 20])
    few = P2Quantiles([0.5])
    for x in (3.0, 1.0, 2.0):
        few.update(x)
    assert few.value()[0] == 2.0


def test_continuous_sqm_approaches_the_exact_quantile_map(rng) -> None:
    """J ~ Beta(2, 5), H ~ Beta(5, 2): g(j) = F_H⁻¹(F_J(j)). With 2,000 anchors at 19 levels the
    sample-quantile sd is ~0.01 and linear interpolation between 5 % levels adds < 0.02, so
    |ĝ − g| < 0.05 on [0.12, 0.5]; swapping the roles of J and H (a bug that returns
    F_J⁻¹(F_H(j))) is off by > 0.35 there."""
    j = rng.beta(2, 5, 2_000)
    h = rng.beta(5, 2, 2_000)
    sqm = ContinuousSQM((0.0, 1.0), probs=np.linspace(0.05, 0.95, 19)).fit(j, h)
    grid = np.linspace(0.12, 0.5, 9)
    truth = beta(5, 2).ppf(beta(2, 5).cdf(grid))
    assert np.abs(sqm.predict(grid) - truth).max() < 0.05
    again = from_dict(json.loads(json.dumps(sqm.to_dict())))
    np.testing.assert_array_equal(again.predict(grid), sqm.predict(grid))
