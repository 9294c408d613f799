"""Monotone ordinal calibration map (the Bayesian counterpart of Subasic et al. 2026's streaming
quantile matching, arXiv:2611.00447): PyMC model and twin."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayescal as bc
from bayescal.data import DataError, Ratings
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import score_calibration as scf
from bayescal.models import score_calibration as sc
from bayescal.predictive import central_set

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
    return sc.build(data, priors=sc.Priors.flat())


@pytest.fixture(scope="module")
def mle(data):
    return scf.fit(data)


def test_pymc_loglik_equals_twin(data, flat_model) -> None:
    """Catches a dropped multinomial coefficient, a cutpoint sign flip or an off-by-one level."""
    rng = np.random.default_rng(2)
    for model in (flat_model, sc.build(data)):
        logp = model.compile_logp(vars=[model["outcome"]], jacobian=False)
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


def statsmodels_ordered_logit(data: Ratings, cov_type: str):  # type: ignore[no-untyped-def]
    om = pytest.importorskip("statsmodels.miscmodels.ordinal_model")
    j = data.judge.astype(int)
    exog = (j[:, None] == np.arange(2, 6)[None, :]).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' numerical-derivative chatter
        # tol=1e-8 is reached in 5 Newton steps (parameters within 2e-9, standard errors within
        # 2e-7 of the 1e-12 fit, far inside the pins' tolerances); 1e-12 is never reached, so
        # that fit ran all 200 steps of numerical Hessians (4 s each time)
        fit = om.OrderedModel(data.human.astype(int), exog, distr="logit").fit(
            method="newton", disp=False, tol=1e-8, maxiter=200, cov_type=cov_type)
    assert fit.mle_retvals["converged"]  # a reference is an optimum, not the last of 200 steps
    return fit


def test_twin_equals_statsmodels_ordered_logit(data, mle) -> None:
    """With an interior optimum the monotone model is statsmodels' OrderedModel on judge-level
    dummies: same effects and cutpoints."""
    ref = statsmodels_ordered_logit(data, "nonrobust")
    effect = mle.params["level_effect"].values[1:]
    np.testing.assert_allclose(effect, ref.params[:4], atol=1e-5)
    thr = np.concatenate([[ref.params[4]], ref.params[4] + np.cumsum(np.exp(ref.params[5:]))])
    np.testing.assert_allclose(mle.params["cutpoint"].values, thr, atol=1e-5)


def expected_information_by_differences(data: Ratings, x: dict) -> np.ndarray:
    """Σ_j n_j Σ_h ∂p ∂pᵀ / p with ∂p by central differences of the public probabilities."""
    flat = np.concatenate([np.ravel(x[k]) for k in ("cutpoint_first", "cutpoint_log_gap",
                                                   "log_increment")])

    def probs(v: np.ndarray) -> np.ndarray:
        return scf.probabilities({"cutpoint_first": v[0], "cutpoint_log_gap": v[1:4],
                                  "log_increment": v[4:]})

    grad = np.stack([(probs(flat + e) - probs(flat - e)) / 2e-6
                     for e in np.eye(len(flat)) * 1e-6], axis=-1)
    rows = np.bincount(data.judge[data.rated].astype(int) - 1, minlength=5)
    p = probs(flat)
    return np.einsum("j,jh,jha,jhb->ab", rows, 1 / p, grad, grad)


def level_effect_cov_by_delta(x: dict, cov_free: np.ndarray) -> np.ndarray:
    """Delta method from the free chart to the level effects β_2..β_5, by differences."""
    flat = np.concatenate([np.ravel(x[k]) for k in ("cutpoint_first", "cutpoint_log_gap",
                                                   "log_increment")])

    def effects(v: np.ndarray) -> np.ndarray:
        return np.cumsum(np.exp(v[4:]))

    jac = np.stack([(effects(flat + e) - effects(flat - e)) / 2e-6
                    for e in np.eye(len(flat)) * 1e-6], axis=-1)
    return jac @ cov_free @ jac.T


@pytest.mark.parametrize("kind", ["expected", "observed", "sandwich"])
def test_every_information_kind_matches_an_independent_computation(data, kind: str) -> None:
    """Bugs caught: standard errors off by a factor (x1.2), the expected information returned
    for the observed one or the other way round, a sandwich on the wrong bread or without its
    meat, a delta method that forgets the exp of the log increments. Through the public fit:
    observed = statsmodels' OrderedModel (nonrobust), sandwich = OrderedModel(cov_type="HC0")
    (the sandwich is invariant to the chart at the MLE), expected = the multinomial Fisher
    information with finite-difference derivatives of the public probabilities."""
    est = scf.fit(data, information=kind)
    assert est.info["information"] == kind and est.converged
    names = [f"level_effect[{v}]" for v in range(2, 6)]
    rows = [est.terms.index(t) for t in names]
    got = est.cov[np.ix_(rows, rows)]
    if kind == "expected":
        free = est.info["free"]
        want = level_effect_cov_by_delta(
            free, np.linalg.inv(expected_information_by_differences(data, free)))
    else:
        want = statsmodels_ordered_logit(data, "nonrobust" if kind == "observed" else "HC0"
                                         ).cov_params()[:4, :4]
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_information_kinds_differ_on_the_test_data(data) -> None:
    """The pins above can only catch a swapped matrix if the kinds differ on these data: the
    expected and the sandwich level-effect variances each differ from the observed ones by more
    than 1 % (a tolerance of 1e-4 resolves that), and auto resolves to expected."""
    fits = {kind: scf.fit(data, information=kind) for kind in scf.INFORMATION}
    obs = np.diag(fits["observed"].cov)[5:9]
    for other in ("expected", "sandwich"):
        assert np.max(np.abs(np.diag(fits[other].cov)[5:9] / obs - 1)) > 0.01, other
    auto = scf.fit(data)
    assert auto.info["information"] == "expected"
    np.testing.assert_array_equal(auto.cov, fits["expected"].cov)


def test_cluster_kind_and_keys_are_refused(data) -> None:
    with pytest.raises(ValueError, match="information='cluster' is not available"):
        scf.fit(data, information="cluster")
    with pytest.raises(ValueError, match=r"cluster='dataset'.*no cluster-robust covariance"):
        scf.fit(data, information="sandwich", cluster="dataset")


def test_converged_comes_from_the_optimizer(data, monkeypatch) -> None:
    """The optimizer's own verdict, never hard-coded: stopped after one iteration it says no."""
    real = scf.minimize

    def one_step(*args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["options"] = {**kwargs.get("options", {}), "maxiter": 1}
        return real(*args, **kwargs)

    monkeypatch.setattr(scf, "minimize", one_step)
    assert scf.fit(data).converged is False
    monkeypatch.undo()
    assert scf.fit(data).converged is True


def test_priors_are_validated_by_the_shared_check() -> None:
    """A negative, zero, NaN or boolean prior sd is refused when Priors is built (it used to
    reach the model as a Normal with sd -1); None stays the flat prior."""
    for field in ("cutpoint_sd", "gap_log_sd", "increment_log_sd"):
        for bad in (-1.0, 0.0, float("nan"), True):
            with pytest.raises(ValueError, match=field):
                sc.Priors(**{field: bad})
    with pytest.raises(ValueError, match="increment_log_mean"):
        sc.Priors(increment_log_mean=float("inf"))
    assert sc.Priors.flat().cutpoint_sd is None


def test_rating_counts_are_the_cells(data) -> None:
    """Ratings.rating_counts: judge level x human level counts of the anchors only."""
    counts = data.rating_counts()
    assert counts.shape == (5, 5) and counts.sum() == data.rated.sum()
    j, h = data.judge.astype(int) - 1, data.human.astype(int) - 1
    np.testing.assert_array_equal(counts, np.histogram2d(j, h, bins=[np.arange(6)] * 2)[0])
    partly = Ratings.from_arrays([1, 2, 3], [1, np.nan, 3], scale=(1, 3))
    assert partly.rating_counts().sum() == 2
    with pytest.raises(DataError, match="at least 3 points"):
        Ratings.from_arrays([1, 2], [1, 2], scale=(1, 2)).rating_counts(min_points=3)
    with pytest.raises(DataError, match="no item has a human score"):
        Ratings.from_arrays([1, 2], None, scale=(1, 3)).rating_counts()


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


def test_nuts_calibration_table_matches_the_posterior() -> None:
    """Small anchor set (40), NUTS. Monotone draws and rows summing to 1 are what the model's
    construction guarantees, so the test checks what it does not: the table of
    ``calibration_table`` against an independent summary of the same draws (``bc.summarize``'s
    equal-tailed interval of ``calibrated_mean``), its P(H=v) columns in scale order (the mean
    column is Σ_v v P(H=v)), and its default probability (0.95). Bugs caught: quantiles at the
    wrong levels, columns mislabelled or reversed, a 0.9 default."""
    small = simulate(40, 5)
    post = bc.fit(sc.build(small), "nuts", draws=150, tune=150, chains=2, cores=1,
                  nuts_sampler="pymc", random_seed=3, check=False)
    table = sc.calibration_table(post)
    assert (table["prob"] == 0.95).all()
    summary = bc.summarize(post, 0.95)
    rows = summary.loc[[f"calibrated_mean[{v}]" for v in range(1, 6)]]
    np.testing.assert_allclose(table["mean"], rows["estimate"], rtol=1e-12)
    np.testing.assert_allclose(table[["lower", "upper"]], rows[["lower", "upper"]], rtol=1e-10)
    probs = table[[f"P(H={v})" for v in range(1, 6)]].to_numpy()
    np.testing.assert_allclose(probs @ np.arange(1, 6), table["mean"], rtol=1e-12)
    narrow = sc.calibration_table(post, prob=0.5)
    assert ((narrow["upper"] - narrow["lower"]) < (table["upper"] - table["lower"])).all()
    with pytest.raises(ValueError, match="prob"):
        sc.calibration_table(post, prob=95)
    # predictive_sets: the set rule on the table's posterior predictive columns, in scale values
    sets = sc.predictive_sets(post, 0.8)
    rule = central_set(probs, 0.8)
    np.testing.assert_array_equal(sets["lower"], rule.lower + 1)
    np.testing.assert_array_equal(sets["upper"], rule.upper + 1)
    np.testing.assert_allclose(sets["mass"], rule.mass)
    # the twin's importance-sampled posterior predictive is the same distribution (its Monte
    # Carlo error and the 300 NUTS draws' are each ~0.01 per probability)
    pred, ess = scf.posterior_predictive(small, priors=sc.Priors(), random_seed=1)
    assert ess > 100
    np.testing.assert_allclose(pred, probs, atol=0.04)


def test_an_mle_running_off_the_boundary_is_an_mle_boundary_error():
    """On this 30-anchor set the trust-region step drove a cell probability to 0 and scipy
    raised its raw "array must not contain infs or NaNs" ValueError; the twin now says the
    MLE is on the boundary and what to use instead."""
    from bayescal import simulate
    from bayescal.frequentist._core import MLEBoundaryError

    data, _ = simulate.score_calibration(30, random_seed=10)
    with pytest.raises(MLEBoundaryError, match="on the boundary"):
        scf.fit(data)
