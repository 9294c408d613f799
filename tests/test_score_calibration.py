"""Monotone ordinal calibration map (seed 003's Bayesian counterpart): PyMC model and twin."""

from __future__ import annotations

import numpy as np
import pytest

import bayescal as bc
from bayescal.data import DataError, Ratings
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import score_calibration as scf
from bayescal.models import score_calibration as sc

TRUTH = {"cutpoint_first": -1.0, "cutpoint_log_gap": np.log([1.0, 0.8, 1.2]),
         "log_increment": np.log([0.8, 0.5, 1.0, 0.7])}


def simulate(n: int, seed: int) -> Ratings:
    rng = np.random.default_rng(seed)
    p = scf.probabilities(TRUTH)
    j = rng.integers(1, 6, n)
    h = (p[j - 1].cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1) + 1
    return Ratings.from_arrays(j, h, scale=(1, 5))


@pytest.fixture(scope="module")
def data() -> Ratings:
    return simulate(400, 1)


@pytest.fixture(scope="module")
def flat_model(data):
    return sc.build(data, sc.Priors.flat())


@pytest.fixture(scope="module")
def mle(data):
    return scf.fit(data)


def test_pymc_loglik_equals_twin(data, flat_model) -> None:
    """Catches a dropped multinomial coefficient, a cutpoint sign flip or an off-by-one level."""
    rng = np.random.default_rng(2)
    for model in (flat_model, sc.build(data)):
        logp = model.compile_logp(vars=[model["human_counts"]], jacobian=False)
        for _ in range(5):
            point = {"cutpoint_first": np.array(rng.normal()),
                     "cutpoint_log_gap": rng.normal(size=3), "log_increment": rng.normal(size=4)}
            np.testing.assert_allclose(logp(point), scf.loglik(point, data), rtol=1e-10)


def test_map_with_flat_priors_equals_mle(flat_model, mle) -> None:
    mode = bc.fit(flat_model, "map")
    for name in ("cutpoint", "level_effect", "calibrated_mean"):
        np.testing.assert_allclose(mode["posterior"][name].values.ravel(),
                                   mle.params[name].values, atol=2e-5)


def test_map_with_default_priors_equals_penalized_twin() -> None:
    """On 25 anchors with a judge level missing (no MLE), the priors make the MAP exist; the
    twin's penalized optimum is the same point (catches a prior mean or scale mismatch)."""
    small = simulate(25, 9)
    small = small.take(np.flatnonzero(small.judge != 4))
    mode = bc.fit(sc.build(small), "map")
    pen = scf.fit(small, penalty=sc.Priors())
    assert pen.method == "penalized-mle"
    for name in ("cutpoint", "level_effect", "calibrated_mean"):
        np.testing.assert_allclose(mode["posterior"][name].values.ravel(),
                                   pen.params[name].values, atol=2e-5)


def test_twin_equals_statsmodels_ordered_logit(data, mle) -> None:
    """With an interior optimum the monotone model is statsmodels' OrderedModel on judge-level
    dummies: same effects and the same standard errors (catches a Hessian off by a factor, or a
    delta method that forgets the exp of the log increments)."""
    om = pytest.importorskip("statsmodels.miscmodels.ordinal_model")
    j = data.judge.astype(int)
    exog = (j[:, None] == np.arange(2, 6)[None, :]).astype(float)
    ref = om.OrderedModel(data.human.astype(int), exog, distr="logit").fit(
        method="newton", disp=False, tol=1e-12, maxiter=200)
    effect = mle.params["level_effect"].values[1:]
    np.testing.assert_allclose(effect, ref.params[:4], atol=1e-4)
    se = mle.se.loc[[f"level_effect[{v}]" for v in range(2, 6)]].to_numpy()
    np.testing.assert_allclose(se, ref.bse[:4], rtol=2e-3)
    thr = np.concatenate([[ref.params[4]], ref.params[4] + np.cumsum(np.exp(ref.params[5:]))])
    np.testing.assert_allclose(mle.params["cutpoint"].values, thr, atol=1e-4)


def test_twin_refuses_unidentified_or_boundary_fits() -> None:
    r = Ratings.from_arrays([1, 2, 2, 3, 4, 4], [1, 2, 3, 3, 4, 5], scale=(1, 5))
    with pytest.raises(MLEBoundaryError, match=r"judge level\(s\) \[5\]"):
        scf.fit(r)
    reversed_ = Ratings.from_arrays(np.repeat([1, 2, 3], 20), np.tile([3, 3, 2, 2, 1], 12),
                                    scale=(1, 3))
    with pytest.raises(MLEBoundaryError, match="boundary"):
        scf.fit(reversed_)
    with pytest.raises(DataError, match="at least 3 points"):
        scf.fit(Ratings.from_arrays([1, 2], [1, 2], scale=(1, 2)))


def test_nuts_posterior_map_is_monotone_and_tabulated() -> None:
    """Small anchor set (40): every posterior draw of the calibrated mean is non-decreasing in the
    judge level (the constraint is in the model), and the table's predictive distributions sum
    to 1 with the mean inside its interval."""
    small = simulate(40, 5)
    post = bc.fit(sc.build(small), "nuts", draws=150, tune=150, chains=2, cores=1,
                  nuts_sampler="pymc", random_seed=3, check=False)
    means = post["posterior"]["calibrated_mean"].values.reshape(-1, 5)
    assert (np.diff(means, axis=1) >= -1e-12).all()
    table = sc.calibration_table(post, prob=0.9)
    np.testing.assert_allclose(table.filter(like="P(H=").sum(axis=1), 1.0, atol=1e-12)
    assert ((table["lower"] <= table["mean"]) & (table["mean"] <= table["upper"])).all()
    summary = bc.summarize(post, 0.9)
    assert "calibrated_mean[3]" in summary.index
