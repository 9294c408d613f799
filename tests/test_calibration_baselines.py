"""Baselines of arXiv:2611.00447 (App. A): one interface, each checked on a property it needs."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from bayescal import calibration as cal
from bayescal.calibration.metrics import discordant_pairs

POINT_METHODS = [cal.Raw, cal.SQM, cal.MedianScaling, cal.StreamingLinear, cal.BayesianUpdate,
                 cal.FewShot, cal.Platt, cal.Isotonic, cal.SDKDE, cal.CrossEntropyMatching,
                 cal.DawidSkene, cal.SlicedWassersteinOT, cal.Conformal]
DIST_METHODS = [cal.PredictiveSQM, cal.ContrastiveRollout]


@pytest.fixture(scope="module")
def anchors() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    j = rng.integers(1, 6, 37)
    h = np.clip(j + rng.integers(-1, 2, 37), 1, 5)
    w = rng.dirichlet(np.ones(5), 37)
    return j, h, w


@pytest.mark.parametrize("method", POINT_METHODS + DIST_METHODS, ids=lambda m: m.name)
def test_fit_equals_streaming_updates_and_state_round_trips(method, anchors) -> None:
    """fit(arrays) == update anchor by anchor (state and predictions) at n = 7 and n = 37;
    the JSON state restores the same predictions; identity with a warning before anchors."""
    j, h, w = anchors
    x = w if method in DIST_METHODS else j
    query = np.eye(5) if method in DIST_METHODS else np.arange(1, 6)
    with pytest.warns(cal.NoAnchorsWarning):
        np.testing.assert_allclose(method((1, 5)).predict(query), np.arange(1, 6.0))
    for n in (7, 37):
        stream = method((1, 5))
        for a, b in zip(x[:n], h[:n], strict=True):
            stream.update(a, b)
        batch = method((1, 5)).fit(x[:n], h[:n])
        assert json.dumps(stream.to_dict()) == json.dumps(batch.to_dict())
        np.testing.assert_allclose(stream.predict(query), batch.predict(query), rtol=1e-12)
        again = cal.from_dict(json.loads(json.dumps(batch.to_dict())))
        np.testing.assert_allclose(again.predict(query), batch.predict(query), rtol=1e-12)
        assert np.isfinite(batch.predict(query)).all()


@pytest.mark.parametrize("method", [cal.Raw, cal.SQM, cal.Isotonic], ids=lambda m: m.name)
def test_monotone_methods_create_no_discordant_pair(method) -> None:
    """Non-decreasing maps never reverse a pair: discordant after ⊆ before (convention 9)."""
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(3, 30))
        j = rng.integers(1, 6, n)
        h = np.clip(6 - j + rng.integers(-2, 3, n), 1, 5)  # anti-correlated: hard for PAVA
        g = method((1, 5)).fit(j, h).predict(j)
        assert not (discordant_pairs(g, h) & ~discordant_pairs(j, h)).any()


def test_streaming_linear_equals_least_squares() -> None:
    rng = np.random.default_rng(5)
    j, h = rng.integers(1, 6, 50), rng.integers(1, 6, 50)
    slope, icept = np.polyfit(j, h, 1)
    a, b = cal.StreamingLinear((1, 5)).fit(j, h).coefficients()
    assert (a, b) == pytest.approx((icept, slope), rel=1e-10)


def test_median_scaling_is_least_squares_through_the_median() -> None:
    """Catches the inverted fraction T (slope Σu²/Σuv instead of Σuv/Σu²) and an even-n median
    taken as the lower middle value."""
    rng = np.random.default_rng(6)
    j, h = rng.integers(1, 6, 40), rng.integers(1, 6, 40)
    med = np.median(j)
    u, v = j - med, h - med
    slope = (u @ v) / (u @ u)
    got = cal.MedianScaling((1, 5)).fit(j, h).predict(np.arange(1, 6))
    np.testing.assert_allclose(got, med + (np.arange(1, 6) - med) * slope)
    assert cal.MedianScaling((1, 5)).fit([2, 3], [2, 3])._fitted()[0] == 2.5


def test_bayesian_update_equals_closed_form_ridge() -> None:
    rng = np.random.default_rng(7)
    j, h = rng.integers(1, 6, 30).astype(float), rng.integers(1, 6, 30).astype(float)
    phi = np.column_stack([j * j, j, np.ones_like(j)])
    tau, s2 = 2.0, 0.5
    mu = np.linalg.solve(tau * np.eye(3) + phi.T @ phi / s2, phi.T @ h / s2)
    got = cal.BayesianUpdate((1, 5), tau=tau, sigma2=s2).fit(j, h).predict(np.arange(1, 6))
    q = np.arange(1, 6.0)
    np.testing.assert_allclose(got, np.column_stack([q * q, q, np.ones(5)]) @ mu)


def test_few_shot_breaks_distance_ties_by_recency() -> None:
    """Six anchors at j = 3: the five most recent are used (weights equal, distance 0)."""
    fs = cal.FewShot((1, 5), k=5).fit([3, 3, 3, 3, 3, 3, 1], [5, 1, 1, 2, 2, 3, 5])
    assert fs.predict([3])[0] == pytest.approx((1 + 1 + 2 + 2 + 3) / 5)


def test_platt_equals_fractional_logit_glm() -> None:
    """statsmodels' binomial GLM on fractional targets has the same (A, B) estimating equations."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(8)
    j = rng.integers(1, 6, 60)
    h = np.clip(j + rng.integers(-1, 2, 60), 1, 5)
    t = np.clip((h - 1) / 4, 1e-3, 1 - 1e-3)
    glm = sm.GLM(t, sm.add_constant(j.astype(float)), family=sm.families.Binomial()).fit(tol=1e-12)
    pl = cal.Platt((1, 5)).fit(j, h)
    a, b = pl._fitted()
    assert (a, b) == pytest.approx((glm.params[1], glm.params[0]), abs=1e-6)


def test_isotonic_equals_sklearn_at_seen_levels_and_steps_between() -> None:
    skl = pytest.importorskip("sklearn.isotonic")
    rng = np.random.default_rng(9)
    j = rng.choice([1, 2, 4, 5], 40)
    h = rng.integers(1, 6, 40)
    ref = skl.IsotonicRegression().fit(j, h)
    iso = cal.Isotonic((1, 5)).fit(j, h)
    np.testing.assert_allclose(iso.predict([1, 2, 4, 5]), ref.predict([1, 2, 4, 5]), atol=1e-12)
    assert iso.predict([3])[0] == iso.predict([2])[0]


def test_sd_kde_local_linear_reproduces_a_line() -> None:
    """Local-linear regression is exact on linear data (a local-constant fit is biased at ends)."""
    j = np.array([1, 1, 2, 3, 3, 4, 4, 4])
    got = cal.SDKDE((1, 5)).fit(j, j + 1).predict(np.arange(1, 5))
    np.testing.assert_allclose(got, np.arange(2, 6), atol=1e-9)


def test_cross_entropy_matching_recovers_a_shift() -> None:
    """Humans = judge + 1: KL(p(α, β) ‖ q) is minimised by α = 1, β = 1 (up to ε smoothing)."""
    rng = np.random.default_rng(10)
    j = rng.integers(1, 5, 200)
    got = cal.CrossEntropyMatching((1, 5)).fit(j, j + 1).predict(np.arange(1, 5))
    np.testing.assert_allclose(got, np.arange(2, 6), atol=0.05)


def test_dawid_skene_em_climbs_and_maps_agreement_to_itself() -> None:
    rng = np.random.default_rng(12)
    j = rng.integers(1, 6, 80)
    h = np.where(rng.random(80) < 0.7, j, rng.integers(1, 6, 80))
    ds = cal.DawidSkene((1, 5), batch_size=80).fit(j, h)
    trace = ds.em(ds.fitted_cells)[3]
    assert (np.diff(trace) >= -1e-9).all() and len(trace) > 2
    exact = cal.DawidSkene((1, 5), batch_size=50).fit(np.repeat(np.arange(1, 6), 10),
                                                       np.repeat(np.arange(1, 6), 10))
    np.testing.assert_allclose(exact.predict(np.arange(1, 6)), np.arange(1, 6), atol=0.05)


def test_batch_methods_change_only_at_batch_boundaries() -> None:
    rng = np.random.default_rng(13)
    j, h = rng.integers(1, 6, 25), rng.integers(1, 6, 25)
    for method in (cal.DawidSkene, cal.SlicedWassersteinOT):
        a = method((1, 5), batch_size=10).fit(j[:20], h[:20]).predict(np.arange(1, 6))
        b = method((1, 5), batch_size=10).fit(j[:25], h[:25]).predict(np.arange(1, 6))
        np.testing.assert_array_equal(a, b)


def test_sliced_wasserstein_pairs_order_statistics() -> None:
    """Within a batch the i-th smallest judge is paired with the i-th smallest human score."""
    sw = cal.SlicedWassersteinOT((1, 5), batch_size=4).fit([4, 1, 3, 2], [2, 3, 4, 5])
    np.testing.assert_allclose(sw.predict([1, 2, 3, 4]), [2, 3, 4, 5])


def test_conformal_interval_covers_at_the_nominal_rate() -> None:
    """Prequential coverage over 3,000 exchangeable anchors ≥ 0.9 − 4 binomial sd (0.022);
    using the α- instead of the (1 − α)-quantile of residuals covers ~10 %."""
    rng = np.random.default_rng(14)
    j = rng.integers(1, 6, 3000)
    h = np.clip(j + rng.integers(-2, 3, 3000), 1, 5)
    conf = cal.Conformal((1, 5), window=200, alpha=0.1)
    hits = []
    for t, (a, b) in enumerate(zip(j, h, strict=True)):
        if t >= 200:
            lo, hi = conf.predict_interval(np.array([a]))
            hits.append(lo[0] <= b <= hi[0])
        conf.update(a, b)
    assert np.mean(hits) >= 0.9 - 4 * np.sqrt(0.09 / len(hits))


def test_contrastive_rollout_moves_queries_only_up_to_the_target() -> None:
    rng = np.random.default_rng(15)
    w = rng.dirichlet(np.ones(5), 60)
    h = np.clip(np.round(w @ np.arange(1, 6)) + rng.integers(-1, 2, 60), 1, 5)
    cr = cal.ContrastiveRollout((1, 5)).fit(w, h)
    v_hat, target = cr.direction()
    query = rng.dirichlet(np.ones(5), 200)
    z = np.log(query + cr.eps)
    s = z @ v_hat
    plain = (query + cr.eps) / (query + cr.eps).sum(1, keepdims=True) @ np.arange(1, 6)
    got = cr.predict(query)
    np.testing.assert_allclose(got[s >= target], plain[s >= target])
    moved = s < target
    assert moved.any()
    z2 = z + (target - s)[:, None] * v_hat[None, :]
    np.testing.assert_allclose((z2 @ v_hat)[moved], target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(cal.base.DataError, match="needs judge predictive distributions"):
            cr.predict([1, 2])
