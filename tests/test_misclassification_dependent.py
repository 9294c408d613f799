"""The item-effect misclassification model (judges' errors correlated given Y) and the all-items
latent-class test of conditional independence (bayescal.independence.pattern_test)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize
from scipy.special import expit, logit
from scipy.stats import binom

import bayescal as bc
from bayescal import simulate
from bayescal.frequentist import misclassification as mf
from bayescal.frequentist import misclassification_dependent as md
from bayescal.identify import IdentificationError
from bayescal.independence import ConditionalDependenceWarning, pattern_test

Q0 = [0.8, 0.75, 0.85, 0.7]
Q1 = [0.8, 0.85, 0.7, 0.75]


def _labels(seed: int, n_items: int = 600, k: int = 4, item_sd: float | tuple = 1.0,
            fraction: float = 0.2) -> bc.Labels:
    lab, _ = simulate.misclassification(n_items, prevalence=0.4, specificity=Q0[:k],
                                        sensitivity=Q1[:k], labelled_fraction=fraction,
                                        random_seed=seed, item_sd=item_sd)
    return lab


def _random_params(rng: np.random.Generator, k: int, sd_high: float = 1.5) -> dict:
    return {"prevalence": rng.uniform(0.2, 0.8), "specificity": rng.uniform(0.55, 0.95, k),
            "sensitivity": rng.uniform(0.55, 0.95, k), "item_sd": rng.uniform(0.1, sd_high, 2)}


def _flat(p: dict) -> np.ndarray:
    return np.concatenate([[p["prevalence"]], p["specificity"], p["sensitivity"], p["item_sd"]])


def _unflat(x: np.ndarray, k: int) -> dict:
    return {"prevalence": x[0], "specificity": x[1 : 1 + k], "sensitivity": x[1 + k : 1 + 2 * k],
            "item_sd": x[1 + 2 * k :]}


def _brute_loglik(p: dict, lab: bc.Labels) -> float:
    """Σ items log P(pattern) with P(ŷ | y) = ∫ Π_k π_k(u)^ŷ (1 - π_k(u))^(1-ŷ) φ(u) du by
    adaptive quadrature, π_k(u) = σ(logit q1k + σ1 u) for Y = 1, σ(-logit q0k + σ0 u) for
    Y = 0: written from the model's definition, sharing no code with the twin."""
    pat = lab.patterns()
    alpha = {1: logit(p["sensitivity"]), 0: -logit(p["specificity"])}
    prior = {1: p["prevalence"], 0: 1 - p["prevalence"]}

    def joint(yh: np.ndarray, cls: int) -> float:
        def integrand(u: float) -> float:
            pi = expit(alpha[cls] + p["item_sd"][cls] * u)
            return float(np.prod(np.where(yh == 1, pi, 1 - pi)) * np.exp(-u * u / 2)
                         / np.sqrt(2 * np.pi))
        return prior[cls] * quad(integrand, -np.inf, np.inf, epsabs=1e-15, epsrel=1e-13)[0]

    total = 0.0
    for yh, y, test, c in zip(pat.yhat, pat.y, pat.test, pat.count, strict=True):
        total += c * np.log(joint(yh, 0) + joint(yh, 1) if test else joint(yh, int(y)))
    return total


def test_loglik_equals_adaptive_quadrature_at_random_points():
    """The Gauss–Hermite log-likelihood equals adaptive quadrature of the model's integral per
    pattern at random points (σ up to 1.5). Catches: the physicists' Hermite rule (weight
    e^{-u²}, σ off by √2), unnormalised weights, σ_0 and σ_1 swapped, the sign of α_0
    (specificity read as P(Ŷ = 1 | Y = 0))."""
    rng = np.random.default_rng(7)
    lab = _labels(1, n_items=300, k=3)
    for _ in range(3):
        p = _random_params(rng, 3)
        assert md.loglik(p, lab) == pytest.approx(_brute_loglik(p, lab), rel=1e-11, abs=1e-9)


@pytest.mark.parametrize("k", [2, 4])
def test_sigma_zero_is_the_independent_model(k):
    """At item_sd = 0 the log-likelihood is the conditionally independent twin's, exactly
    (1e-12). Catches: a different convention for the calibration or test terms, the
    specificity's chart sign, a multinomial coefficient added on one side."""
    rng = np.random.default_rng(k)
    lab = _labels(2, k=k)
    p = _random_params(rng, k)
    p["item_sd"] = np.zeros(2)
    assert md.loglik(p, lab) == pytest.approx(mf.loglik(p, lab), rel=1e-13, abs=1e-10)


def test_gradient_and_observed_information_match_finite_differences():
    """The analytic gradient (natural scale) and observed information (chart) equal central
    differences of loglik and of the chart gradient. Catches: a missing node-posterior
    covariance term in the Hessian (Louis), the σ–α cross term's z factor, the chain rule of
    the logit chart, the y = 0 block's sign flip."""
    rng = np.random.default_rng(11)
    k = 3
    lab = _labels(3, k=k)
    p = _random_params(rng, k)
    x = _flat(p)
    h = 1e-6
    fd = np.array([(md.loglik(_unflat(x + h * e, k), lab) - md.loglik(_unflat(x - h * e, k), lab))
                   / (2 * h) for e in np.eye(len(x))])
    g = md.gradient(p, lab)
    analytic = np.concatenate([[g["prevalence"]], g["specificity"], g["sensitivity"],
                               g["item_sd"]])
    np.testing.assert_allclose(analytic, fd, rtol=1e-6, atol=1e-5)
    # the chart: logits of the probabilities, σ itself
    c = np.concatenate([logit(x[:-2]), x[-2:]])

    def at_chart(cc: np.ndarray) -> dict:
        return _unflat(np.concatenate([expit(cc[:-2]), cc[-2:]]), k)

    def chart_grad(cc: np.ndarray) -> np.ndarray:
        gg = md.gradient(at_chart(cc), lab)
        nat = np.concatenate([[gg["prevalence"]], gg["specificity"], gg["sensitivity"],
                              gg["item_sd"]])
        pr = expit(cc[:-2])
        return nat * np.concatenate([pr * (1 - pr), [1.0, 1.0]])

    hess = np.array([(chart_grad(c + h * e) - chart_grad(c - h * e)) / (2 * h)
                     for e in np.eye(len(c))])
    np.testing.assert_allclose(md.information(p, lab, "observed"), -(hess + hess.T) / 2,
                               rtol=1e-5, atol=1e-4)


def test_expected_information_is_the_expected_negative_hessian():
    """The expected information (E[s sᵀ] over all 2^K patterns) equals the expected observed
    information, m E_cal[-∇²ℓ] + n E_test[-∇²ℓ], built from the observed information of
    one-item data sets of every pattern weighted by its probability (the information
    identity). Catches: test patterns weighted by P(ŷ | y) instead of P(ŷ), the calibration
    part missing or counted n times, a grid whose columns are in another judge order."""
    rng = np.random.default_rng(5)
    k = 2
    p = _random_params(rng, k)
    lab = _labels(4, n_items=200, k=k)
    grid = [np.array([a, b], dtype=float) for a in (0, 1) for b in (0, 1)]
    base = bc.Labels.from_arrays([0.0], [[0.0, 0.0]], [[0.0, 0.0]], judges=lab.judges)

    def plus(y_cal: list, yhat_cal: list, yhat_test: list) -> bc.Labels:
        return bc.Labels.from_arrays(y_cal, yhat_cal, yhat_test, judges=lab.judges)

    total = np.zeros((2 * k + 3, 2 * k + 3))
    # one more item of each kind beside a fixed base: its probability and information are
    # the differences of loglik and of the observed information
    for yh in grid:
        for y in (0.0, 1.0):
            more = plus([0.0, y], [[0.0, 0.0], yh], [[0.0, 0.0]])
            prob = np.exp(md.loglik(p, more) - md.loglik(p, base))
            info = md.information(p, more, "observed") - md.information(p, base, "observed")
            total += lab.m * prob * info
        more = plus([0.0], [[0.0, 0.0]], [[0.0, 0.0], yh])
        prob = np.exp(md.loglik(p, more) - md.loglik(p, base))
        info = md.information(p, more, "observed") - md.information(p, base, "observed")
        total += lab.n * prob * info
    np.testing.assert_allclose(md.information(p, lab, "expected"), total, rtol=1e-9,
                               atol=1e-9)


def test_fit_is_the_maximum_and_recovers_the_truth():
    """The MLE is a stationary point whose log-likelihood no Nelder–Mead run from it improves,
    reports |σ̂|, and lands within 4 standard errors of the truth on 4,000 simulated items
    (σ = (0.8, 1.5)); its three covariance kinds are positive and close. Catches: a fit that
    stops at the σ = 0 saddle, a covariance carried to the natural scale with the wrong
    Jacobian (the σ row sign flip, the logit derivative), ``information=`` ignored."""
    lab = _labels(8, n_items=4000, item_sd=(0.8, 1.5), fraction=0.1)
    est = md.fit(lab)
    assert est.converged and est.info["information"] == "expected"
    k = 4
    x = np.concatenate([[float(est.params["prevalence"])], est.params["specificity"].values,
                        est.params["sensitivity"].values, est.params["item_sd"].values])
    assert np.all(x[-2:] > 0)
    best = minimize(lambda v: -md.loglik(_unflat(v, k), lab), x, method="Nelder-Mead",
                    options={"maxiter": 400, "xatol": 1e-9, "fatol": 1e-9})
    assert -best.fun <= est.loglik + 1e-6
    truth = np.concatenate([[0.4], Q0, Q1, [0.8, 1.5]])
    se = np.sqrt(np.diag(est.cov))
    assert np.all(np.abs(x - truth) < 4 * se), (x - truth) / se
    # the observed kind is the chart's inverse information carried by the delta method
    # (dθ/dlogit θ = θ(1 - θ), σ unchanged)
    observed = md.fit(lab, information="observed")
    params = {name: observed.params[name].values for name in observed.params.data_vars}
    jac = np.diag(np.concatenate([x[:-2] * (1 - x[:-2]), [1.0, 1.0]]))
    np.testing.assert_allclose(
        observed.cov, jac @ np.linalg.inv(md.information(params, lab, "observed")) @ jac,
        rtol=1e-8, atol=1e-12)
    se_theta = {kind: float(np.sqrt(md.fit(lab, information=kind).cov[0, 0]))
                for kind in ("observed", "sandwich")}
    assert all(abs(v / se[0] - 1) < 0.25 for v in se_theta.values()), (se[0], se_theta)
    assert se_theta["observed"] != se[0]


def test_unidentified_designs_are_refused_before_fitting():
    """One judge, three judges with a single labelled item of a class, a class absent from the
    calibration set, the cluster kind and a bad node count are refused with errors naming
    the cause. Catches: σ fitted where only its prior (or a ridge) determines it, arguments
    ignored."""
    rng = np.random.default_rng(0)
    with pytest.raises(IdentificationError, match="one judge"):
        md.fit(_labels(1, k=1))
    yhat = (rng.uniform(size=(200, 3)) < 0.5).astype(float)
    few = bc.Labels.from_arrays([1.0, 0.0, 0.0, 0.0], yhat[:4], yhat[4:],
                                judges=["a", "b", "c"])
    with pytest.raises(IdentificationError, match=r"item_sd\[1\].*two labelled items"):
        md.fit(few)
    none = bc.Labels.from_arrays([0.0, 0.0, 0.0], yhat[:3], yhat[3:], judges=["a", "b", "c"])
    with pytest.raises(IdentificationError, match="Y = 1"):
        md.fit(none)
    lab = _labels(2)
    with pytest.raises(ValueError, match="cluster"):
        md.fit(lab, information="cluster")
    with pytest.raises(ValueError, match="nodes"):
        md.fit(lab, nodes=0)


def test_quadrature_check_warns_when_sigma_is_large_for_the_rule():
    """With 8 nodes at σ = 2 the fit warns that the rule is not accurate and names a larger
    ``nodes``; with the default at the same data it records a small quadrature error.
    Catches: a quadrature error left silent (a wrong answer at large σ)."""
    lab = _labels(9, n_items=3000, item_sd=2.0, fraction=0.1)
    with pytest.warns(UserWarning, match="nodes=32"):
        md.fit(lab, nodes=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = md.fit(lab)
    assert est.info["quadrature_error"] < 1e-4


# ------------------------------------------------------------------ the all-items test
def _lc_loglik(v: np.ndarray, table: np.ndarray, bits: np.ndarray) -> float:
    theta, q0, q1 = expit(v[0]), expit(v[1:5]), expit(v[5:])
    p1 = theta * np.prod(np.where(bits == 1, q1, 1 - q1), axis=1)
    p0 = (1 - theta) * np.prod(np.where(bits == 1, 1 - q0, q0), axis=1)
    return float(table @ np.log(p1 + p0))


def test_pattern_g2_equals_an_independent_latent_class_fit():
    """G² and df of the all-items test equal the likelihood ratio of the saturated multinomial
    against the latent-class MLE found by scipy (BFGS on logits) on the pattern table, on
    15 − 9 = 6 df for K = 4; K = 3 (saturated) is not testable. Catches: the calibration
    items' patterns left out, EM stopped early, a wrong df (e.g. 15 − 8), a missing factor 2."""
    lab = _labels(3, n_items=800, item_sd=1.0)
    pat = lab.patterns()
    test = pattern_test(pat.yhat, pat.count, 0.4, Q0, Q1, bootstrap=99)
    k = 4
    bits = ((np.arange(16)[:, None] >> np.arange(k)) & 1).astype(float)
    table = np.zeros(16)
    np.add.at(table, (pat.yhat.astype(int) << np.arange(k)).sum(axis=1), pat.count)
    assert table.sum() == lab.m + lab.n
    start = logit(np.r_[0.4, Q0, Q1])
    res = minimize(lambda v: -_lc_loglik(v, table, bits), start, method="BFGS",
                   options={"gtol": 1e-10})
    mask = table > 0
    saturated = float(table[mask] @ np.log(table[mask] / table.sum()))
    assert test.df == 6
    assert test.g2 == pytest.approx(2 * (saturated + res.fun), rel=1e-6, abs=1e-6)
    assert pattern_test(pat.yhat[:, :3], pat.count, 0.4, Q0[:3], Q1[:3]) is None


@pytest.mark.parametrize("reps, alt_reps", [
    pytest.param(40, 10, id="fast"),
    pytest.param(150, 30, id="full", marks=pytest.mark.slow),
])
def test_pattern_test_size_and_power(reps, alt_reps):
    """Under conditional independence (K = 4, 300 items) the all-items test rejects at 5 %
    within the ±3 sd binomial band of the replicates (150; 40 in the fast version, about 2 s,
    against 10 s); with an item effect σ = 2 shared by the judges (1,000 items) it rejects in
    most of them. Catches: a bootstrap from the wrong null (e.g. resampling the observed
    table), a statistic at an unconverged EM point (size off), a p-value that ignores the
    observed table (no power)."""
    null = [pattern_test(*(lambda pt: (pt.yhat, pt.count))(_labels(s, 300, item_sd=0.0)
                                                            .patterns()),
                         0.4, Q0, Q1, bootstrap=99).p_value for s in range(reps)]
    rejections = int(np.sum(np.asarray(null) < 0.05))
    lo, hi = binom.ppf(0.00135, reps, 0.05), binom.ppf(0.99865, reps, 0.05)
    assert lo <= rejections <= hi, (rejections, lo, hi)
    alt = [pattern_test(*(lambda pt: (pt.yhat, pt.count))(_labels(1000 + s, 1000, item_sd=2.0)
                                                          .patterns()),
                        0.4, Q0, Q1, bootstrap=99).p_value for s in range(alt_reps)]
    assert np.mean(np.asarray(alt) < 0.05) > 0.6


def test_pattern_test_survives_a_degenerate_fit():
    """A judge that says 1 on every item and another that copies the first (rates at 1 and a
    pattern table with empty cells) gives a finite G² and a p-value in (0, 1]. Catches: rates
    at 0 or 1 making the E-step 0/0 (NaN G², or a NaN bootstrap that never counts as
    extreme, p = 1/(B + 1) for no reason)."""
    rng = np.random.default_rng(4)
    a = (rng.uniform(size=300) < 0.5).astype(float)
    yhat = np.column_stack([np.ones(300), a, a, (rng.uniform(size=300) < 0.5)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        test = pattern_test(yhat, np.ones(300), 0.5, [0.5] * 4, [0.99] * 4, bootstrap=99)
    assert np.isfinite(test.g2) and np.isfinite(test.p_value_chi2)
    assert 0 < test.p_value <= 1


def test_twin_warning_names_both_statistics_and_the_dependent_model():
    """With four dependent judges the K-judge twin warns once, naming the labelled and the
    all-items statistics and misclassification_dependent.fit, and records both in info; the
    dependent model's own fit of the same data covers the truth where the independent one
    does not. With 21 labels, where only the all-items test rejects, it warns too. Catches: the
    all-items test computed but not reported, or not warned on alone (by the twin or by the
    PyMC model's build); the calibration items' patterns left out of it; two warnings; a
    remedy that names no function."""
    lab = _labels(12, n_items=2000, item_sd=2.0, fraction=0.1)
    with pytest.warns(ConditionalDependenceWarning) as record:
        est = mf.fit(lab)
    messages = [str(w.message) for w in record if w.category is ConditionalDependenceWarning]
    assert len(messages) == 1
    assert "labelled items" in messages[0] and "all items' judge-label patterns" in messages[0]
    assert "misclassification_dependent.fit" in messages[0]
    assert est.info["pattern_independence_df"] == 6
    assert est.info["pattern_independence_p_value"] < 0.01
    every = np.vstack([lab.yhat_cal, lab.yhat_test])
    alone = pattern_test(every, np.ones(len(every)), float(est.params["prevalence"]),
                         est.params["specificity"].values, est.params["sensitivity"].values)
    assert est.info["pattern_independence_g2"] == pytest.approx(alone.g2, rel=1e-9)
    # 21 labels: the labelled test does not reject at 1 %, the all-items test does, and the
    # fit warns on it alone
    few = _labels(0, n_items=3000, item_sd=2.0, fraction=0.008)
    with pytest.warns(ConditionalDependenceWarning, match="all items' judge-label patterns"):
        sparse = mf.fit(few)
    assert sparse.info["independence_p_value"] > 0.01 > sparse.info["pattern_independence_p_value"]
    from bayescal.models import misclassification as mm

    with pytest.warns(ConditionalDependenceWarning, match="all items' judge-label patterns"):
        mm.build(few)
    dep = md.fit(lab)
    theta, se = float(dep.params["prevalence"]), float(np.sqrt(dep.cov[0, 0]))
    assert abs(theta - 0.4) < 3 * se


# ------------------------------------------------------------------ the PyMC model
def _pymc_case():
    from bayescal.models import misclassification_dependent as mdm

    lab = _labels(5, n_items=500, k=3, item_sd=(1.0, 1.5))
    return mdm, lab, mdm.build(lab, priors=mdm.Priors.flat())


def test_pymc_logp_equals_twin_loglik():
    """The PyMC model's observed log-probability equals the twin's loglik at random points
    (independent code: a pytensor graph against numpy; about 2 s of compilation). Catches: the
    classes' item_sd swapped in one of them, the sign of the specificity's logit, a different
    node rule. The one-judge model is refused."""
    mdm, lab, model = _pymc_case()
    logp = model.compile_logp(vars=model.observed_RVs, jacobian=False)
    rng = np.random.default_rng(3)
    for _ in range(3):
        p = _random_params(rng, 3)
        point = {"prevalence_logodds__": logit(p["prevalence"]),
                 "specificity_logodds__": logit(p["specificity"]),
                 "sensitivity_logodds__": logit(p["sensitivity"]),
                 "item_sd_log__": np.log(p["item_sd"])}
        assert float(logp(point)) == pytest.approx(md.loglik(p, lab), rel=1e-11)
    with pytest.raises(IdentificationError, match="one judge"):
        mdm.build(_labels(1, k=1))


@pytest.mark.slow
def test_pymc_flat_map_equals_mle():
    """The flat-prior MAP (no Jacobians) equals the twin's MLE to 1e-4 (about 10 s; the logp
    equality above is the fast pin). Catches: a prior left in the flat MAP (a half-normal on
    item_sd), a twin optimum that is not the maximum."""
    _, lab, model = _pymc_case()
    result = bc.fit(model, "map")
    est = md.fit(lab)
    for name in ("prevalence", "specificity", "sensitivity", "item_sd"):
        np.testing.assert_allclose(np.asarray(result.posterior[name]).ravel(),
                                   np.asarray(est.params[name]).ravel(), atol=1e-4)


def test_penalized_fit_is_the_map_objective_maximum_and_refusal_names_it():
    """With ``penalty=Priors()`` the estimate maximises loglik + the log prior kernels written
    here from scratch (Beta(2, 2) on each rate, Beta(1, 1) on θ, half-normal(1) on σ; no
    Jacobian): its finite-difference gradient vanishes there, and its method is
    "penalized-mle". A judge
    that never errs on 20 labels runs the MLE to the boundary, whose refusal names the
    penalized fit; the penalized fit of the same data is interior. Catches: a prior gradient
    on the wrong scale (the chart's Jacobian added), a penalty accepted but not applied."""
    from scipy.stats import beta, halfnorm

    from bayescal.models import misclassification_dependent as mdm

    k = 3
    lab = _labels(6, n_items=500, k=k, item_sd=1.0)
    est = md.fit(lab, penalty=mdm.Priors())
    assert est.method == "penalized-mle"

    def objective(x: np.ndarray) -> float:
        p = _unflat(x, k)
        if not (np.all((x[:-2] > 0) & (x[:-2] < 1)) and np.all(x[-2:] > 0)):
            return np.inf
        prior = (beta.logpdf(x[1:-2], 2, 2).sum() + halfnorm.logpdf(x[-2:]).sum())
        return -(md.loglik(p, lab) + prior)

    x = np.concatenate([[float(est.params["prevalence"])], est.params["specificity"].values,
                        est.params["sensitivity"].values, est.params["item_sd"].values])
    h = 1e-6
    slope = [(objective(x + h * e) - objective(x - h * e)) / (2 * h) for e in np.eye(len(x))]
    np.testing.assert_allclose(slope, 0, atol=1e-4)
    y = np.r_[np.ones(10), np.zeros(10)]
    rng = np.random.default_rng(2)
    cal = np.column_stack([y, (rng.uniform(size=(20, 2)) < 0.5)]).astype(float)
    test = np.column_stack([rng.uniform(size=200) < 0.5,
                            rng.uniform(size=(200, 2)) < 0.5]).astype(float)
    perfect = bc.Labels.from_arrays(y, cal, test, judges=["a", "b", "c"])
    with pytest.raises(bc.frequentist._core.MLEBoundaryError, match="penalty="):
        md.fit(perfect)
    assert md.fit(perfect, penalty=mdm.Priors()).converged


def test_simulated_patterns_follow_the_model():
    """simulate.misclassification(..., item_sd=) draws class-y judge patterns with the model's
    probabilities ∫ Π π^ŷ (1 - π)^(1-ŷ) φ du (adaptive quadrature), each frequency of 20,000
    items within 4 binomial sd; item_sd = 0 leaves the independent draw unchanged. Catches: the
    item effect drawn per judge (no dependence), σ_0 and σ_1 swapped, the sign of α_0, an
    item_sd = 0 draw that consumed extra random numbers."""
    sd, k = (0.5, 1.5), 3
    lab, truth = simulate.misclassification(20_000, prevalence=0.5, specificity=Q0[:k],
                                            sensitivity=Q1[:k], labelled_fraction=0.5,
                                            random_seed=3, item_sd=sd)
    assert list(truth["item_sd"].values) == list(sd)
    for cls in (0, 1):
        rows = lab.yhat_cal[lab.y_cal == cls].astype(int)
        alpha = logit(np.asarray(Q1[:k])) if cls == 1 else -logit(np.asarray(Q0[:k]))
        for code in range(2**k):
            yh = (code >> np.arange(k)) & 1
            def density(u: float, yh: np.ndarray = yh, a: np.ndarray = alpha,
                        s: float = sd[cls]) -> float:
                pi = expit(a + s * u)
                return float(np.prod(np.where(yh == 1, pi, 1 - pi))
                             * np.exp(-u * u / 2) / np.sqrt(2 * np.pi))

            prob = quad(density, -np.inf, np.inf)[0]
            seen = int(np.sum(np.all(rows == yh, axis=1)))
            n = len(rows)
            assert abs(seen - n * prob) < 4 * np.sqrt(n * prob * (1 - prob)), (cls, yh)
    plain = simulate.misclassification(500, prevalence=0.4, specificity=Q0, sensitivity=Q1,
                                       labelled_fraction=0.2, random_seed=5)[0]
    zero = simulate.misclassification(500, prevalence=0.4, specificity=Q0, sensitivity=Q1,
                                      labelled_fraction=0.2, random_seed=5, item_sd=0.0)[0]
    np.testing.assert_array_equal(plain.yhat_test, zero.yhat_test)


def test_pymc_forward_draws_follow_the_model():
    """The PyMC model's ``outcome`` draws (its prior predictive, which the SBC check uses) at
    fixed parameters: on a design listing every pattern, with m = 32,000 calibration and
    n = 16,000 test items, each pattern's count is within 4 binomial sd of m θ_y P(ŷ | y) or
    n Σ_y θ_y P(ŷ | y) (adaptive quadrature of the model's integral). Seen to fail when the
    item effect was drawn per judge (no dependence: 12 of the 24 counts out) and when σ_0 and
    σ_1 were swapped (22 out)."""
    import pymc as pm

    from bayescal.models import misclassification_dependent as mdm

    k, theta, sd = 3, 0.4, (0.5, 1.5)
    q0, q1 = np.asarray(Q0[:k]), np.asarray(Q1[:k])
    yhat = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(float)
    cal_y = np.repeat([0.0, 1.0], 2**k)
    design = bc.Labels.from_arrays(np.resize(cal_y, 32_000), np.resize(np.tile(yhat, (2, 1)),
                                                                        (32_000, k)),
                                   np.resize(yhat, (16_000, k)))
    model = pm.do(mdm.build(design), {"prevalence": theta, "specificity": q0,
                                      "sensitivity": q1, "item_sd": np.asarray(sd)})
    counts = pm.draw(model["outcome"], random_seed=4)
    pat = design.patterns()
    alpha = {1: logit(q1), 0: -logit(q0)}

    def joint(yh: np.ndarray, cls: int) -> float:
        def density(u: float) -> float:
            pi = expit(alpha[cls] + sd[cls] * u)
            return float(np.prod(np.where(yh == 1, pi, 1 - pi)) * np.exp(-u * u / 2)
                         / np.sqrt(2 * np.pi))

        return (theta if cls == 1 else 1 - theta) * quad(density, -np.inf, np.inf)[0]

    for yh, y, test, seen in zip(pat.yhat, pat.y, pat.test, counts, strict=True):
        size = pat.n if test else pat.m
        prob = joint(yh, 0) + joint(yh, 1) if test else joint(yh, int(y))
        assert abs(seen - size * prob) < 4 * np.sqrt(size * prob * (1 - prob)), (test, y, yh)
    assert counts[~pat.test].sum() == pat.m and counts[pat.test].sum() == pat.n


def test_item_sd_interval_is_positive_and_none_at_the_boundary():
    """σ_y ≥ 0 is |σ̂_y|: away from 0 its interval is on the log scale and stays positive; at
    σ̂_y = 0 (seen as the MAP on TriviaQA) no interval is given, with a note, while θ keeps its
    interval. Catches a natural-scale Wald interval for σ (the MAP at 0 printed [-1.64, 1.64]
    for a standard deviation)."""
    lab = _labels(8, n_items=4000, item_sd=(0.8, 1.5), fraction=0.1)
    est = md.fit(lab)
    table = est.summary(0.9)
    assert (table.loc[["item_sd[0]", "item_sd[1]"], "lower"] > 0).all()
    assert est.interval["item_sd"] == "wald-log" and "item_sd_note" not in est.info
    x = np.concatenate([[float(est.params["prevalence"])], est.params["specificity"].values,
                        est.params["sensitivity"].values, [0.0, 1.5]])
    at_zero = md._estimate(md._patterns(lab, None), x, est.cov, est.loglik, {}, True, False)
    table = at_zero.summary(0.9)
    assert table.loc[["item_sd[0]", "item_sd[1]"], ["lower", "upper"]].isna().all().all()
    assert np.isfinite(table.loc["prevalence", ["lower", "upper"]].astype(float)).all()
    assert "boundary" in at_zero.info["item_sd_note"]
