"""Misclassification model (Chen et al. 2026, K judges): the PyMC model and its twin.

Reference numbers: the two rendered vignettes of the authors' R package ``debiasLLMReporting``
(Chen et al. 2026, arXiv:2601.05420), reproduced to 6 decimals. Each distinct PyMC graph is
built and compiled once (module-scoped fixtures).
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy import integrate
from scipy.special import expit, logit
from scipy.stats import beta, norm

import bayescal as bc
from bayescal.data import DataError, Labels
from bayescal.diagnostics import DiagnosticWarning
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import misclassification as mf
from bayescal.frequentist._core import ConvergenceWarning
from bayescal.identify import IdentificationError, IdentificationWarning
from bayescal.models import misclassification as mm

PARAMS = ("prevalence", "specificity", "sensitivity")


# ------------------------------------------------------------------ data helpers
def from_counts(n11: int, n10: int, n01: int, n00: int, t1: int, t0: int) -> Labels:
    """One judge's Labels from the paper's counts (N_ab: calibration Y=a, Ŷ=b; T_b: test Ŷ=b)."""
    y = np.r_[np.ones(n11 + n10), np.zeros(n01 + n00)]
    yhat = np.r_[np.ones(n11), np.zeros(n10), np.ones(n01), np.zeros(n00)]
    return Labels.from_arrays(y, yhat, np.r_[np.ones(t1), np.zeros(t0)])


def simulate(
    seed: int, m: int, n: int, theta: float, q0: list[float], q1: list[float]
) -> Labels:
    """Seeded draw from the K-judge model: Y ~ Bern(θ), Ŷ_k | Y independent with (q0, q1)."""
    rng = np.random.default_rng(seed)
    spec, sens = np.asarray(q0), np.asarray(q1)

    def judge_labels(y: np.ndarray) -> np.ndarray:
        u = rng.uniform(size=(len(y), len(spec)))
        return np.where(y[:, None] == 1, u < sens, u >= spec).astype(float)

    y_cal = rng.binomial(1, theta, m).astype(float)
    y_test = rng.binomial(1, theta, n).astype(float)
    names = [f"judge_{chr(97 + k)}" for k in range(len(spec))]
    return Labels.from_arrays(y_cal, judge_labels(y_cal), judge_labels(y_test), judges=names)


def as_params(theta: float, q0: np.ndarray, q1: np.ndarray) -> dict[str, object]:
    return {"prevalence": theta, "specificity": np.asarray(q0), "sensitivity": np.asarray(q1)}


def vector(est: mf.Estimate | xr.Dataset) -> np.ndarray:
    ds = est.params if isinstance(est, mf.Estimate) else est
    return np.concatenate([np.ravel(ds[p].values) for p in PARAMS])


def map_vector(result: xr.DataTree) -> np.ndarray:
    post = result["posterior"].to_dataset()
    return np.concatenate([np.ravel(post[p].values) for p in PARAMS])


def random_points(rng: np.random.Generator, k: int, size: int) -> list[dict[str, object]]:
    """Random (θ, q0, q1) with κ > 0 for every judge."""
    out = []
    for _ in range(size):
        q1 = rng.uniform(0.05, 0.98, k)
        q0 = 1 - q1 * rng.uniform(0.02, 0.98, k)
        out.append(as_params(float(rng.uniform(0.05, 0.95)), q0, q1))
    return out


D11 = from_counts(31, 5, 1, 13, 223, 227)
D12 = from_counts(1, 3, 3, 21, 40, 208)
# judge_c is weak (κ = 0.15): its posterior comes close to the κ = 0 edge
TRUTH = {"theta": 0.35, "q0": [0.85, 0.70, 0.60], "q1": [0.80, 0.75, 0.55]}
K3 = simulate(2026, m=150, n=1500, **TRUTH)


# ------------------------------------------------------------------ PyMC fixtures
@pytest.fixture(scope="module")
def flat_d11() -> pm.Model:
    return mm.build(D11, priors=mm.Priors.flat())


@pytest.fixture(scope="module")
def default_d12() -> pm.Model:
    return mm.build(D12)


@pytest.fixture(scope="module")
def default_k3() -> pm.Model:
    return mm.build(K3)


def nuts(model: pm.Model, seed: int) -> xr.DataTree:
    with warnings.catch_warnings():
        # 2 x 300 draws is for speed; the checks below do not rest on R-hat
        warnings.simplefilter("ignore", DiagnosticWarning)
        return bc.fit(model, "nuts", draws=300, tune=300, chains=2, cores=1,
                      nuts_sampler="pymc", random_seed=seed)


@pytest.fixture(scope="module")
def nuts_k3(default_k3: pm.Model) -> xr.DataTree:
    return nuts(default_k3, 13)


# ------------------------------------------------------------------ reference numbers
@pytest.mark.parametrize("algorithm", ["newton", "em"])
def test_d11_published_mle_and_intervals(algorithm: str) -> None:
    """The R package's getting-started vignette: MLE and 90% logit-Wald intervals.

    The R code's ``optim(BFGS, reltol 1e-10)`` stops about 1e-6 short of the maximum: our θ̂ =
    0.6301736 has gradient ~1e-13 and a higher log-likelihood than the printed 0.630173, so the
    6th decimal may differ by one (tolerance 1.5e-6); the variances agree to 5 digits.
    """
    obs = mf.fit(D11, algorithm=algorithm, information="observed")
    exp = mf.fit(D11, algorithm=algorithm, information="expected")
    np.testing.assert_allclose(vector(obs), [0.630173, 0.956905, 0.784012], atol=2.5e-6)
    t_obs, t_exp = obs.summary(0.90), exp.summary(0.90)
    np.testing.assert_allclose(t_obs.loc["prevalence", ["lower", "upper"]].astype(float),
                               [0.533989, 0.717024], atol=1.5e-6)
    np.testing.assert_allclose(t_exp.loc["prevalence", ["lower", "upper"]].astype(float),
                               [0.544660, 0.708228], atol=1.5e-6)
    assert obs.cov[0, 0] == pytest.approx(3.1607e-03, abs=5e-8)
    assert exp.cov[0, 0] == pytest.approx(2.5135e-03, abs=5e-8)
    assert obs.method == "mle" and set(obs.interval.values()) == {"wald-logit"}
    # the printed MLE is not the maximum: our estimate has the higher likelihood
    printed = as_params(0.630173, [0.956905], [0.784012])
    assert obs.loglik > mf.loglik(printed, D11)


@pytest.mark.parametrize("algorithm", ["newton", "em"])
def test_d12_published_mle_and_interval(algorithm: str) -> None:
    """The R package's real-data vignette: MLE 0.144928 [0.065541, 0.290570] (observed)."""
    est = mf.fit(D12, algorithm=algorithm, information="observed")
    row = est.summary(0.90).loc["prevalence"]
    np.testing.assert_allclose([row["estimate"], row["lower"], row["upper"]],
                               [0.144928, 0.065541, 0.290570], atol=5e-7)
    # the expected-information interval is not published; it must at least be close
    exp = mf.fit(D12, algorithm=algorithm, information="expected").summary(0.90)
    assert exp.loc["prevalence", "estimate"] == pytest.approx(0.144928, abs=5e-7)
    assert abs(exp.loc["prevalence", "upper"] - 0.290570) < 0.01


def test_observed_information_matches_logit_chart_delta_method() -> None:
    """The R package's route (numerical Hessian in logits, then delta method) gives our
    observed-information covariance."""
    est = mf.fit(D11, information="observed")
    x = vector(est)
    eta0 = logit(x)

    def ll(eta: np.ndarray) -> float:
        p = expit(eta)
        return mf.loglik(as_params(p[0], p[1:2], p[2:3]), D11)

    h = 1e-4
    hess = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e_i, e_j = np.eye(3)[i] * h, np.eye(3)[j] * h
            hess[i, j] = (ll(eta0 + e_i + e_j) - ll(eta0 + e_i - e_j)
                          - ll(eta0 - e_i + e_j) + ll(eta0 - e_i - e_j)) / (4 * h * h)
    jac = np.diag(x * (1 - x))
    cov_seed = jac @ np.linalg.inv(-hess) @ jac
    np.testing.assert_allclose(est.cov, cov_seed, rtol=1e-5)


# ------------------------------------------------------------------ twin internals
@pytest.mark.parametrize("labels", [D11, D12, K3], ids=["d11", "d12", "k3"])
@pytest.mark.parametrize("penalized", [False, True])
def test_em_equals_newton(labels: Labels, penalized: bool) -> None:
    penalty = mm.Priors() if penalized else None
    newton = mf.fit(labels, algorithm="newton", penalty=penalty)
    em = mf.fit(labels, algorithm="em", penalty=penalty)
    np.testing.assert_allclose(vector(em), vector(newton), rtol=0, atol=1e-8)
    np.testing.assert_allclose(em.cov, newton.cov, rtol=1e-6)


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(5)
    k = K3.n_judges
    for point in random_points(rng, k, 4):
        g = mf.gradient(point, K3)
        analytic = np.concatenate([[g["prevalence"]], g["specificity"], g["sensitivity"]])
        x = vector(xr.Dataset({p: xr.DataArray(np.asarray(point[p])) for p in PARAMS}))
        numeric = np.zeros_like(x)
        for i in range(len(x)):
            h = 1e-6 * min(x[i], 1 - x[i])
            up, down = x.copy(), x.copy()
            up[i] += h
            down[i] -= h
            f_up = mf.loglik(as_params(up[0], up[1:1 + k], up[1 + k:]), K3)
            f_down = mf.loglik(as_params(down[0], down[1:1 + k], down[1 + k:]), K3)
            numeric[i] = (f_up - f_down) / (2 * h)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-4)


def test_observed_information_matches_finite_differences_of_gradient() -> None:
    point = random_points(np.random.default_rng(6), K3.n_judges, 1)[0]
    k = K3.n_judges
    x = np.concatenate([[point["prevalence"]], point["specificity"], point["sensitivity"]])

    def grad(v: np.ndarray) -> np.ndarray:
        g = mf.gradient(as_params(v[0], v[1:1 + k], v[1 + k:]), K3)
        return np.concatenate([[g["prevalence"]], g["specificity"], g["sensitivity"]])

    numeric = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        h = 1e-6 * min(x[i], 1 - x[i])
        e = np.eye(len(x))[i] * h
        numeric[:, i] = (grad(x + e) - grad(x - e)) / (2 * h)
    np.testing.assert_allclose(-mf.information(point, K3, "observed"), numeric,
                               rtol=1e-5, atol=1e-3)


def test_expected_information_closed_form_one_judge() -> None:
    """The paper's I_cal = diag(1/(θ(1-θ)), (1-θ)/(q0(1-q0)), θ/(q1(1-q1))), I_test = E[s sᵀ]."""
    theta, q0, q1 = 0.3, 0.85, 0.7
    p = (1 - theta) * (1 - q0) + theta * q1
    kappa = q0 + q1 - 1
    i_cal = np.diag([1 / (theta * (1 - theta)), (1 - theta) / (q0 * (1 - q0)),
                     theta / (q1 * (1 - q1))])
    s1 = np.array([kappa / p, -(1 - theta) / p, theta / p])
    s0 = np.array([-kappa / (1 - p), (1 - theta) / (1 - p), -theta / (1 - p)])
    i_test = p * np.outer(s1, s1) + (1 - p) * np.outer(s0, s0)
    m, n = D11.m, D11.n
    got = mf.information(as_params(theta, [q0], [q1]), D11, "expected")
    np.testing.assert_allclose(got, m * i_cal + n * i_test, rtol=1e-12)


def test_expected_information_enumerates_scores_two_judges() -> None:
    """K = 2: E[s sᵀ] over every calibration and test pattern, scores by finite differences."""
    labels = simulate(3, m=40, n=200, theta=0.4, q0=[0.8, 0.7], q1=[0.75, 0.9])
    x = np.array([0.4, 0.8, 0.7, 0.75, 0.9])

    def log_prob(v: np.ndarray, y: int | None, yh: tuple[int, int]) -> float:
        th, spec, sens = v[0], v[1:3], v[3:5]
        py1 = th * np.prod([sens[k] if yh[k] else 1 - sens[k] for k in range(2)])
        py0 = (1 - th) * np.prod([1 - spec[k] if yh[k] else spec[k] for k in range(2)])
        return float(np.log(py1 + py0 if y is None else (py1 if y == 1 else py0)))

    def outer_sum(y_values: list[int | None]) -> np.ndarray:
        total = np.zeros((5, 5))
        for y in y_values:
            for yh in [(0, 0), (0, 1), (1, 0), (1, 1)]:
                score = np.array([
                    (log_prob(x + e, y, yh) - log_prob(x - e, y, yh)) / 2e-6
                    for e in np.eye(5) * 1e-6
                ])
                total += np.exp(log_prob(x, y, yh)) * np.outer(score, score)
        return total

    expected = labels.m * outer_sum([0, 1]) + labels.n * outer_sum([None])
    got = mf.information(as_params(0.4, x[1:3], x[3:5]), labels, "expected")
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_loglik_counts_convention_one_judge() -> None:
    """ℓ = N11 log θq1 + N10 log θ(1-q1) + N01 log(1-θ)(1-q0) + N00 log(1-θ)q0 + T1 log p + ..."""
    theta, q0, q1 = 0.6, 0.9, 0.8
    p = (1 - theta) * (1 - q0) + theta * q1
    want = (31 * np.log(theta * q1) + 5 * np.log(theta * (1 - q1))
            + 1 * np.log((1 - theta) * (1 - q0)) + 13 * np.log((1 - theta) * q0)
            + 223 * np.log(p) + 227 * np.log(1 - p))
    assert mf.loglik(as_params(theta, [q0], [q1]), D11) == pytest.approx(want, rel=1e-14)


def test_multi_judge_recovery() -> None:
    """Three judges, known truth: the MLE lies within a few standard errors of it."""
    est = mf.fit(K3)
    truth = np.concatenate([[TRUTH["theta"]], TRUTH["q0"], TRUTH["q1"]])
    z = (vector(est) - truth) / est.se.to_numpy()
    assert np.all(np.abs(z) < 3.5), z
    assert list(est.params["specificity"].coords["judge"].values) == list(K3.judges)
    table = est.summary(0.95)
    assert "sensitivity[judge_b]" in table.index
    assert (table["lower"] < table["estimate"]).all() and (table["estimate"] < table["upper"]).all()
    # information of all three judges beats one judge: narrower prevalence interval
    one = mf.fit(K3, judges=["judge_a"])
    assert est.se["prevalence"] < one.se["prevalence"]


# ------------------------------------------------------------------ failure modes
def test_non_binary_labels_are_refused() -> None:
    labels = Labels.from_arrays([1, 0, 1], [1, 0.5, 1], [1, 0, 0, 1])
    with pytest.raises(DataError, match="0 or 1"):
        mf.fit(labels)
    with pytest.raises(DataError, match="0 or 1"):
        mm.build(labels)


def test_one_judge_without_positive_calibration_item() -> None:
    labels = Labels.from_arrays([0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 1, 0])
    with pytest.raises(IdentificationError, match=r"sensitivity of judge .* not identified"):
        mf.fit(labels)
    with pytest.warns(IdentificationWarning, match="prior only"):
        mm.build(labels)
    # the posterior is proper, but with the uniform prevalence prior its mode sits at θ = 0
    # (four Y = 0 labels and a free sensitivity); a Beta(2, 2) prevalence prior holds it inside
    with pytest.raises(MLEBoundaryError, match="prevalence → 0"):
        mf.fit(labels, penalty=mm.Priors())
    est = mf.fit(labels, penalty=mm.Priors(prevalence=(2.0, 2.0)))
    assert 0 < float(est.params["sensitivity"][0]) < 1
    assert 0 < float(est.params["prevalence"]) < 0.5


def test_one_judge_label_unseen_in_calibration_is_a_ridge() -> None:
    """Found by the fuzzer once ``converged`` stopped being hard-coded: no calibration item has
    Ŷ = 0 but a test item does, so P(Y = 1 | Ŷ = 0), hence θ, is not identified and Newton
    walks along a flat ridge. The twin used to return that point with converged=True and a
    finite interval; now it refuses before fitting, and the Bayesian model warns."""
    labels = Labels.from_arrays([0, 0, 1], [1, 1, 1], [0])
    with pytest.raises(IdentificationError, match=r"no calibration item has judge label Ŷ = 0"):
        mf.fit(labels)
    with pytest.warns(IdentificationWarning, match="prior only"):
        mm.build(labels)


def test_judge_worse_than_chance_under_kappa_positive_hits_the_boundary() -> None:
    """κ = -0.2 for judge_c: free κ (default) estimates it; kappa="positive" warns before the
    fit and reports the κ → 0 boundary by name, never a huge interval."""
    labels = simulate(7, m=200, n=2000, theta=0.4, q0=[0.85, 0.8, 0.4], q1=[0.8, 0.85, 0.4])
    for algorithm in ("newton", "em"):
        with pytest.warns(UserWarning, match=r"κ̂ < 0 for judge\(s\) 'judge_c'"), \
                pytest.raises(MLEBoundaryError, match=r"judge 'judge_c'.*κ = q0 \+ q1 - 1 → 0"):
            mf.fit(labels, algorithm=algorithm, kappa="positive")
    free = mf.fit(labels)
    kappa = free.info["kappa"]["judge_c"]
    se = float(np.hypot(free.se["specificity[judge_c]"], free.se["sensitivity[judge_c]"]))
    assert abs(kappa + 0.2) < 3.5 * se and kappa < 0
    # the truncated Beta product has positive density at κ = 0, so the MAP is there too
    with pytest.warns(UserWarning, match="kappa='positive'"), \
            pytest.raises(MLEBoundaryError, match=r"judge 'judge_c'.*kappa='nonzero'"):
        mf.fit(labels, penalty=mm.Priors(), kappa="positive")


def test_constant_judge_is_named() -> None:
    """A judge that always says 1 has q1 = 1, q0 = 0: κ = 0, reported by name."""
    base = simulate(8, m=100, n=500, theta=0.4, q0=[0.85], q1=[0.8])
    labels = Labels.from_arrays(base.y_cal, np.c_[base.yhat_cal, np.ones(base.m)],
                                np.c_[base.yhat_test, np.ones(base.n)],
                                judges=["good", "always_yes"])
    for algorithm in ("newton", "em"):
        with pytest.raises(MLEBoundaryError, match=r"judge 'always_yes'.*κ"):
            mf.fit(labels, algorithm=algorithm)


def test_perfect_calibration_judge_hits_q_boundary() -> None:
    labels = from_counts(36, 0, 1, 13, 223, 227)  # no calibration false negative
    with pytest.raises(MLEBoundaryError, match=r"judge 'judge': sensitivity → 1"):
        mf.fit(labels)
    assert float(mf.fit(labels, penalty=mm.Priors()).params["sensitivity"][0]) < 1


# ------------------------------------------------------------------ PyMC model vs twin
def test_prior_is_truncated_beta_product() -> None:
    """log p(q0, q1) = Beta(q0) + Beta(q1) on κ > 0 (Priors docstring numbers)."""
    def f(q0: float, q1: float) -> float:
        return float(beta.pdf(q0, 2, 2) * beta.pdf(q1, 2, 2))

    def mean(g) -> float:  # type: ignore[no-untyped-def]
        return integrate.dblquad(lambda q0, q1: g(q0, q1) * f(q0, q1), 0, 1,
                                 lambda q1: 1 - q1, 1)[0] / 0.5

    assert integrate.dblquad(f, 0, 1, lambda q1: 1 - q1, 1)[0] == pytest.approx(0.5)
    assert mean(lambda q0, q1: q1) == pytest.approx(22 / 35, abs=1e-8)
    assert mean(lambda q0, q1: q0 + q1 - 1) == pytest.approx(9 / 35, abs=1e-8)
    near_chance = integrate.dblquad(f, 0, 1, lambda q1: 1 - q1, lambda q1: min(1.0, 1.1 - q1))
    assert near_chance[0] / 0.5 == pytest.approx(0.236, abs=5e-4)
    # forward draws (prior predictive) follow the same truncated product
    rng = np.random.default_rng(1)
    q1 = mm._draw_sensitivity(np.array(2.0), np.array(2.0), np.array(2.0), np.array(2.0),
                              rng=rng, size=(40_000,))
    q0 = mm._draw_specificity(q1, np.array(2.0), np.array(2.0), rng=rng, size=(40_000,))
    assert np.all(q0 + q1 > 1)
    assert q1.mean() == pytest.approx(22 / 35, abs=4 * q1.std() / 200)
    assert q0.mean() == pytest.approx(22 / 35, abs=4 * q0.std() / 200)


def test_model_variables_and_prior_density(default_k3: pm.Model) -> None:
    assert {v.name for v in default_k3.free_RVs} == set(PARAMS)
    assert default_k3.named_vars_to_dims["specificity"] == ("judge",)
    assert default_k3.named_vars_to_dims["outcome"] == ("pattern",)
    points = random_points(np.random.default_rng(8), K3.n_judges, 4)
    idata = posterior_tree(points, K3.judges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prior = pm.stats.compute_log_prior(idata, model=default_k3,
                                           extend_inferencedata=False, progressbar=False)
    got = (prior["specificity"] + prior["sensitivity"]).values.reshape(4, -1)
    want = np.array([beta.logpdf(p["specificity"], 2, 2) + beta.logpdf(p["sensitivity"], 2, 2)
                     for p in points])
    # PyMC's log Beta function differs from scipy's by a constant ~4e-8
    diff = got - want
    np.testing.assert_allclose(diff, diff.mean(), atol=1e-10)
    assert abs(diff.mean()) < 1e-6


def posterior_tree(points: list[dict[str, object]], judges: tuple[str, ...]) -> xr.DataTree:
    stack = {p: np.array([np.asarray(pt[p], dtype=float) for pt in points]) for p in PARAMS}
    post = xr.Dataset(
        {
            "prevalence": (("chain", "draw"), stack["prevalence"][None]),
            "specificity": (("chain", "draw", "judge"), stack["specificity"][None]),
            "sensitivity": (("chain", "draw", "judge"), stack["sensitivity"][None]),
        },
        coords={"judge": list(judges)},
    )
    return xr.DataTree.from_dict({"posterior": post})


@pytest.mark.parametrize("which", ["d11", "k3"])
def test_pymc_loglik_equals_twin(which: str, request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue("flat_d11" if which == "d11" else "default_k3")
    labels = D11 if which == "d11" else K3
    points = random_points(np.random.default_rng(9), labels.n_judges, 6)
    ll = pm.compute_log_likelihood(posterior_tree(points, labels.judges), model=model,
                                   extend_inferencedata=False, progressbar=False)
    got = ll["outcome"].sum("pattern").values.ravel()
    want = np.array([mf.loglik(p, labels) for p in points])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_map_flat_equals_mle(flat_d11: pm.Model) -> None:
    result = bc.fit(flat_d11, "map")
    np.testing.assert_allclose(map_vector(result), vector(mf.fit(D11)), atol=1e-5)


@pytest.mark.parametrize("which", ["d12", "k3"])
def test_map_default_equals_penalized_mle(which: str, request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue("default_d12" if which == "d12" else "default_k3")
    labels = D12 if which == "d12" else K3
    result = bc.fit(model, "map")
    twin = mf.fit(labels, penalty=mm.Priors())
    assert twin.method == "penalized-mle"
    np.testing.assert_allclose(map_vector(result), vector(twin), atol=1e-5)
    post = result["posterior"].to_dataset()
    assert float((post["specificity"] + post["sensitivity"] - 1).min()) > 0


def exact_posterior_moments(
    counts: tuple[int, ...], kappa_positive: bool
) -> dict[str, tuple[float, float]]:
    """Posterior mean and sd of θ, q0, q1 of one judge's counts (N11, N10, N01, N00, T1, T0)
    under the default priors, by a midpoint grid over (0, 1)³ (160³ points): Beta(1, 1) on θ,
    Beta(2, 2) on q0 and q1, restricted to q0 + q1 > 1 when ``kappa_positive``."""
    n11, n10, n01, n00, t1, t0 = counts
    g = (np.arange(160) + 0.5) / 160
    theta, q0, q1 = np.meshgrid(g, g, g, indexing="ij", sparse=True)
    p = (1 - theta) * (1 - q0) + theta * q1
    logpost = (n11 * np.log(theta * q1) + n10 * np.log(theta * (1 - q1))
               + n01 * np.log((1 - theta) * (1 - q0)) + n00 * np.log((1 - theta) * q0)
               + t1 * np.log(p) + t0 * np.log(1 - p)
               + np.log(q0 * (1 - q0)) + np.log(q1 * (1 - q1)))
    if kappa_positive:
        logpost = np.where(q0 + q1 > 1, logpost, -np.inf)
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    out = {}
    for name, grid in (("prevalence", theta), ("specificity", q0), ("sensitivity", q1)):
        mean = float((w * grid).sum())
        out[name] = (mean, float(np.sqrt((w * (grid - mean) ** 2).sum())))
    return out


# a weak judge (calibration κ̂ = 0.1 on 20 items): the κ > 0 truncation moves the posterior
WEAK = (6, 4, 5, 5, 70, 50)


def test_kappa_positive_posterior_matches_exact_integration() -> None:
    """Bug caught: a posterior that is not the truncated-Beta posterior (a transform whose
    Jacobian or bounds are wrong, the truncation applied to the wrong parameter). κ > 0 in
    every draw is what the interval transform guarantees by construction, so the draws are
    checked against the posterior by direct numerical integration instead, on a weak judge
    where the truncation changes the answer. Means within 4 Monte Carlo standard errors (ESS
    from ArviZ), sds within 20 % (an sd estimate's own sd is ~1/sqrt(2 ESS) ≈ 4 %)."""
    import arviz as az

    exact = exact_posterior_moments(WEAK, kappa_positive=True)
    free = exact_posterior_moments(WEAK, kappa_positive=False)
    # the test can tell the two apart: the truncation moves q0's mean by 0.05 (10 Monte Carlo
    # standard errors) and shrinks its sd by a quarter
    assert abs(exact["specificity"][0] - free["specificity"][0]) > 0.04
    assert exact["specificity"][1] / free["specificity"][1] < 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        model = mm.build(from_counts(*WEAK), kappa="positive")
        assert {v.name for v in model.free_RVs} == set(PARAMS)
        result = bc.fit(model, "nuts", draws=500, tune=500, chains=2, cores=1,
                        nuts_sampler="pymc", random_seed=14)
    assert int(result["sample_stats"]["diverging"].sum()) <= 2
    post = result["posterior"].to_dataset()
    ess = az.ess(result, method="bulk").to_dataset()
    for name, (mean, sd) in exact.items():
        draws = post[name].values.ravel()
        n_eff = float(np.asarray(ess[name]).ravel()[0])
        assert abs(draws.mean() - mean) < 4 * sd / np.sqrt(n_eff), (name, draws.mean(), mean)
        assert 0.8 < draws.std() / sd < 1.2, (name, draws.std(), sd)


def test_posterior_near_mle_for_k3(nuts_k3: xr.DataTree) -> None:
    """With 1,650 items the posterior mean is within a fraction of an SE of the MLE."""
    post = bc.summarize(nuts_k3, 0.9)
    mle = mf.fit(K3).summary(0.9)
    diff = (post.loc[mle.index, "estimate"] - mle["estimate"]) / mle["se"]
    assert np.all(np.abs(diff) < 0.5), diff
    ratio = post.loc[mle.index, "se"] / mle["se"]
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio


def test_predictive_label_counts_have_model_means() -> None:
    pat = K3.patterns()
    theta, q0, q1 = 0.35, np.array(TRUTH["q0"]), np.array(TRUTH["q1"])
    rng = np.random.default_rng(4)
    draws = np.array([
        mm._draw_labels(np.array(theta), q0, q1, pat.yhat, pat.y, pat.test,
                        np.array(pat.m), np.array(pat.n), rng=rng)
        for _ in range(2000)
    ])
    a1 = theta * np.prod(np.where(pat.yhat == 1, q1, 1 - q1), axis=1)
    a0 = (1 - theta) * np.prod(np.where(pat.yhat == 1, 1 - q0, q0), axis=1)
    prob = np.where(pat.test, a1 + a0, np.where(pat.y == 1, a1, a0))
    mean = np.where(pat.test, pat.n, pat.m) * prob
    sd = np.sqrt(mean * (1 - prob))
    z = (draws.mean(axis=0) - mean) / (sd / np.sqrt(len(draws)))
    assert np.all(np.abs(z) < 4.5), z
    # within each set the drawn counts never exceed the set's size
    assert np.all(draws[:, ~pat.test].sum(axis=1) <= pat.m)
    assert np.all(draws[:, pat.test].sum(axis=1) <= pat.n)


def test_wald_logit_interval_matches_paper_formula() -> None:
    est = mf.fit(D12)
    row = est.summary(0.90).loc["prevalence"]
    t, se = row["estimate"], row["se"]
    z = norm.ppf(0.95)
    half = z * se / (t * (1 - t))
    assert row["lower"] == pytest.approx(expit(logit(t) - half), abs=1e-12)
    assert row["upper"] == pytest.approx(expit(logit(t) + half), abs=1e-12)


# ------------------------------------------------------------------ the sign of κ
FLIPPED_TRUTH = {"theta": 0.35, "q0": [0.15], "q1": [0.15]}  # κ = -0.7: says 1 for Y = 0
FLIPPED = simulate(41, m=200, n=2000, **FLIPPED_TRUTH)


def free_points(rng: np.random.Generator, k: int, size: int) -> list[dict[str, object]]:
    """Random (θ, q0, q1) with κ of either sign (about half the judges flipped)."""
    return [as_params(float(rng.uniform(0.05, 0.95)), rng.uniform(0.02, 0.98, k),
                      rng.uniform(0.02, 0.98, k)) for _ in range(size)]


@pytest.fixture(scope="module")
def flat_flipped() -> pm.Model:
    return mm.build(FLIPPED, priors=mm.Priors.flat())


@pytest.mark.parametrize("algorithm", ["newton", "em"])
def test_flipped_judge_mle_recovers_negative_kappa(algorithm: str) -> None:
    """Bug caught: κ > 0 imposed as if identification needed it. A judge with κ = -0.7 and both
    human classes in calibration is identified (the paper asks κ ≠ 0); the κ > 0 fit reported a
    boundary. Now: the MLE recovers θ, q0, q1 within 3.5 SE with a finite Wald interval."""
    est = mf.fit(FLIPPED, algorithm=algorithm)
    truth = np.array([0.35, 0.15, 0.15])
    se = est.se.to_numpy()
    assert np.all(np.isfinite(se)) and np.all(se > 0)
    assert np.all(np.abs(vector(est) - truth) < 3.5 * se), (vector(est), se)
    assert est.info["kappa"]["judge_a"] < -0.5 and est.info["kappa_constraint"] == "nonzero"
    row = est.summary(0.9).loc["prevalence"]
    assert 0 < row["lower"] < row["estimate"] < row["upper"] < 1
    # the one-judge model is saturated: the MLE is the all-items cell EIF whatever the sign
    from bayescal.frequentist import judge_mean as jm

    assert float(est.params["prevalence"]) == pytest.approx(
        float(jm.eif(FLIPPED).params["prevalence"]), abs=1e-8)
    assert np.isfinite(jm.estimate(FLIPPED, 0.9).loc["mle", "estimate"])
    with pytest.warns(UserWarning, match="κ̂ < 0"), pytest.raises(MLEBoundaryError):
        mf.fit(FLIPPED, algorithm=algorithm, kappa="positive")


def test_pymc_loglik_equals_twin_with_negative_kappa(
    flat_flipped: pm.Model, default_k3: pm.Model
) -> None:
    """The free-κ PyMC likelihood = the twin's at random points, κ < 0 included."""
    rng = np.random.default_rng(42)
    for model, labels in ((flat_flipped, FLIPPED), (default_k3, K3)):
        points = free_points(rng, labels.n_judges, 8)
        kappas = np.concatenate([np.asarray(p["specificity"]) + np.asarray(p["sensitivity"]) - 1
                                 for p in points])
        assert kappas.min() < -0.2 and kappas.max() > 0.2
        ll = pm.compute_log_likelihood(posterior_tree(points, labels.judges), model=model,
                                       extend_inferencedata=False, progressbar=False)
        got = ll["outcome"].sum("pattern").values.ravel()
        want = np.array([mf.loglik(p, labels) for p in points])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_map_flat_equals_mle_for_flipped_judge(flat_flipped: pm.Model) -> None:
    result = bc.fit(flat_flipped, "map")
    np.testing.assert_allclose(map_vector(result), vector(mf.fit(FLIPPED)), atol=1e-5)


def test_flipped_judge_posterior_is_not_pinned_at_zero() -> None:
    """Bug caught: with κ > 0 imposed the posterior of a flipped judge piled up at κ ≈ 0 with
    artefact intervals. Free κ: the posterior of κ sits around the MLE's κ̂ ≈ -0.7 (within
    3 posterior sd), and the κ > 0 model warns at build."""
    with pytest.warns(UserWarning, match="κ̂ < 0"):
        mm.build(FLIPPED, kappa="positive")
    post = nuts(mm.build(FLIPPED), 15)["posterior"].to_dataset()
    kappa = (post["specificity"] + post["sensitivity"] - 1).values.ravel()
    mle = mf.fit(FLIPPED).info["kappa"]["judge_a"]
    assert abs(kappa.mean() - mle) < 3 * kappa.std()
    assert np.mean(kappa < -0.3) > 0.99


def test_free_kappa_needs_both_classes_for_the_sign() -> None:
    """Label switching: without a Y = 1 calibration item the sign of κ is not identified under
    the free default (any number of judges): the twin refuses, build warns."""
    base = simulate(43, m=60, n=600, theta=0.4, q0=[0.8, 0.8], q1=[0.8, 0.8])
    keep = base.y_cal == 0
    labels = Labels.from_arrays(base.y_cal[keep], base.yhat_cal[keep], base.yhat_test,
                                judges=list(base.judges))
    with pytest.raises(IdentificationError, match="sign of each judge's κ"):
        mf.fit(labels)
    with pytest.warns(IdentificationWarning, match="label switching"):
        mm.build(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentificationWarning)
        mm.build(labels, kappa="positive")  # κ > 0 fixes the orientation
    with pytest.raises(ValueError, match="kappa must be"):
        mf.fit(labels, kappa="free")


def test_free_model_starts_on_the_calibration_side() -> None:
    """Bug caught: with κ free and several judges, the mirrored orientation (Y and 1 - Y
    swapped) is a local mode; chains started at q = 0.5 (the Beta mean) fell into it (on
    TriviaQA two of four chains, P(κ < 0) = 0.5). The model's initial point is the calibration
    proportions: κ > 0 for the good judges, κ < 0 for a flipped one."""
    base = simulate(44, m=120, n=1200, theta=0.4, q0=[0.85, 0.8, 0.2], q1=[0.8, 0.85, 0.15])
    start = mm.build(base).initial_point()
    q0, q1 = expit(start["specificity_logodds__"]), expit(start["sensitivity_logodds__"])
    kappa = q0 + q1 - 1
    assert kappa[0] > 0.4 and kappa[1] > 0.4 and kappa[2] < -0.4, kappa
    # the start is the add-a-half calibration proportion (N00 + 1/2)/(m0 + 1), computed here
    # from the raw labels, not through the model's or the twin's helpers
    y0 = base.y_cal == 0
    np.testing.assert_allclose(q0, ((base.yhat_cal[y0] == 0).sum(axis=0) + 0.5) / (y0.sum() + 1))
    result = bc.fit(mm.build(base, priors=mm.Priors.flat()), "map")
    np.testing.assert_allclose(map_vector(result), vector(mf.fit(base)), atol=1e-5)


# ------------------------------------------------------------------ covariance kinds
def correlated_judges(seed: int, m: int, n: int) -> Labels:
    """Two judges whose errors are dependent given Y (judge_b copies judge_a on 60 % of the
    items): the model's conditional independence fails, so the per-item sandwich differs from
    the model-based covariances (by 10-40 % here)."""
    rng = np.random.default_rng(seed)

    def judges(y: np.ndarray) -> np.ndarray:
        a = np.where(y == 1, rng.uniform(size=len(y)) < 0.8, rng.uniform(size=len(y)) >= 0.85)
        own = np.where(y == 1, rng.uniform(size=len(y)) < 0.75,
                       rng.uniform(size=len(y)) >= 0.8)
        b = np.where(rng.uniform(size=len(y)) < 0.6, a, own)
        return np.c_[a, b].astype(float)

    y_cal = rng.binomial(1, 0.4, m).astype(float)
    y_test = rng.binomial(1, 0.4, n).astype(float)
    return Labels.from_arrays(y_cal, judges(y_cal), judges(y_test), judges=["a", "b"])


CORRELATED = correlated_judges(61, m=300, n=3000)


def item_rows(labels: Labels) -> np.ndarray:
    """One row per item: (human label or 0, calibration flag, judge labels...)."""
    cal = np.c_[labels.y_cal, np.ones(labels.m), labels.yhat_cal]
    test = np.c_[np.zeros(labels.n), np.zeros(labels.n), labels.yhat_test]
    return np.vstack([cal, test])


def statsmodels_covariance(labels: Labels, x: np.ndarray, kind: str) -> np.ndarray:
    """Observed or sandwich covariance from statsmodels' GenericLikelihoodModel on the items:
    its numerical Hessian and per-item scores (numdiff), at the twin's estimate x."""
    from statsmodels.base.model import GenericLikelihoodModel

    k = labels.n_judges

    class Items(GenericLikelihoodModel):  # type: ignore[misc]
        def loglikeobs(self, params: np.ndarray) -> np.ndarray:
            theta, q0, q1 = params[0], params[1:1 + k], params[1 + k:]
            y, cal, yhat = self.endog[:, 0], self.endog[:, 1], self.endog[:, 2:]
            a1 = theta * np.prod(np.where(yhat == 1, q1, 1 - q1), axis=1)
            a0 = (1 - theta) * np.prod(np.where(yhat == 1, 1 - q0, q0), axis=1)
            return np.log(np.where(cal == 1, np.where(y == 1, a1, a0), a1 + a0))

    rows = item_rows(labels)
    model = Items(rows, np.ones((len(rows), 1)))
    scores = model.score_obs(x)
    assert np.abs(scores.sum(axis=0)).max() < 1e-4 * len(rows)  # x is the maximum
    bread = np.linalg.inv(-model.hessian(x))
    if kind == "observed":
        return np.asarray(bread)
    return np.asarray(bread @ (scores.T @ scores) @ bread)


def enumerated_expected_information(labels: Labels, x: np.ndarray) -> np.ndarray:
    """m E_cal[s sᵀ] + n E_test[s sᵀ] by enumerating every pattern, scores by central finite
    differences of the pattern log-probabilities (no use of the twin's code)."""
    k = labels.n_judges
    grid = np.array(np.meshgrid(*[[0, 1]] * k, indexing="ij")).reshape(k, -1).T

    def log_prob(v: np.ndarray, y: int | None, yh: np.ndarray) -> float:
        theta, q0, q1 = v[0], v[1:1 + k], v[1 + k:]
        a1 = theta * np.prod(np.where(yh == 1, q1, 1 - q1))
        a0 = (1 - theta) * np.prod(np.where(yh == 1, 1 - q0, q0))
        return float(np.log(a1 + a0 if y is None else (a1 if y == 1 else a0)))

    def outer(y_values: list[int | None]) -> np.ndarray:
        total = np.zeros((len(x), len(x)))
        for y in y_values:
            for yh in grid:
                score = np.array([(log_prob(x + e, y, yh) - log_prob(x - e, y, yh)) / 2e-6
                                  for e in np.eye(len(x)) * 1e-6])
                total += np.exp(log_prob(x, y, yh)) * np.outer(score, score)
        return total

    return labels.m * outer([0, 1]) + labels.n * outer([None])


@pytest.mark.parametrize("kind", ["expected", "observed", "sandwich"])
@pytest.mark.parametrize("which", ["d11", "correlated"])
def test_every_information_kind_matches_an_independent_computation(kind: str, which: str
                                                                   ) -> None:
    """Bugs caught: standard errors scaled by a constant (x1.2 is 44 % on the variance), the
    expected information returned for the observed one or the other way round (25 % apart on
    D11), a sandwich built on the expected bread or with the meat left out (10-40 % apart on
    the correlated judges). Each kind, through the public fit, against: statsmodels'
    GenericLikelihoodModel on the items (its numerical Hessian; with its numerical per-item
    scores for the sandwich) and the pattern-enumerated E[s sᵀ] with finite-difference scores
    (expected)."""
    labels = D11 if which == "d11" else CORRELATED
    est = mf.fit(labels, information=kind)
    assert est.info["information"] == kind and est.info["information_reason"] == "requested"
    x = vector(est)
    if kind == "expected":
        reference = np.linalg.inv(enumerated_expected_information(labels, x))
    else:
        reference = statsmodels_covariance(labels, x, kind)
    np.testing.assert_allclose(est.cov, reference, rtol=2e-4, atol=1e-12)


def test_information_kinds_differ_on_the_test_data() -> None:
    """The data above tell the kinds apart (else the pins could not catch a swap): on D11 the
    expected and observed prevalence variances differ by 20 %; on the correlated judges the
    sandwich differs from both by more than 10 % in some term. With one judge the sandwich
    equals the observed information at the MLE (the model is saturated on the items' patterns
    up to the labelling design): the test pins that identity too."""
    fits = {kind: mf.fit(D11, information=kind) for kind in mf.INFORMATION}
    ratio = fits["expected"].cov[0, 0] / fits["observed"].cov[0, 0]
    assert abs(ratio - 1) > 0.2
    np.testing.assert_allclose(fits["sandwich"].cov, fits["observed"].cov, rtol=1e-6)
    corr = {kind: mf.fit(CORRELATED, information=kind) for kind in mf.INFORMATION}
    for other in ("expected", "observed"):
        rel = np.abs(np.diag(corr["sandwich"].cov) / np.diag(corr[other].cov) - 1)
        assert rel.max() > 0.1, (other, rel)


def test_auto_resolves_to_expected_and_records_why() -> None:
    est = mf.fit(D11)
    assert est.info["information"] == "expected"
    assert "no cluster key" in est.info["information_reason"]
    np.testing.assert_allclose(est.cov, mf.fit(D11, information="expected").cov, rtol=0)


def test_cluster_and_unknown_kinds_are_refused_before_fitting(monkeypatch) -> None:
    """Items carry no cluster key: information='cluster', a cluster= key or a correction= are
    refused by name (never ignored), before any optimizer runs."""
    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("the optimizer ran before the request was checked")

    monkeypatch.setattr(mf, "_newton", no_fit)
    with pytest.raises(ValueError, match="information='cluster' is not available"):
        mf.fit(D11, information="cluster")
    with pytest.raises(ValueError, match=r"cluster='battle'.*no cluster-robust covariance"):
        mf.fit(D11, cluster="battle", information="observed")
    with pytest.raises(ValueError, match="not available"):
        mf.fit(D11, cluster="battle")
    with pytest.raises(ValueError, match=r"correction='CR0'.*no cluster-robust covariance"):
        mf.fit(D11, correction="CR0", information="sandwich")
    with pytest.raises(ValueError, match="information must be one of"):
        mf.fit(D11, information="hessian")


def test_penalized_sandwich_uses_the_penalized_bread() -> None:
    """With a penalty the bread is minus the Hessian of the penalized objective, the meat the
    likelihood's per-item scores: checked against finite differences of the public loglik plus
    the Beta log densities."""
    est = mf.fit(CORRELATED, information="sandwich", penalty=mm.Priors())
    x = vector(est)
    k = CORRELATED.n_judges
    a = np.r_[1.0, [2.0] * 2 * k]
    b = a.copy()

    def objective(v: np.ndarray) -> float:
        return (mf.loglik(as_params(v[0], v[1:1 + k], v[1 + k:]), CORRELATED)
                + float(np.sum(beta.logpdf(v, a, b))))

    h = 1e-5
    hess = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        for j in range(len(x)):
            ei, ej = np.eye(len(x))[i] * h, np.eye(len(x))[j] * h
            hess[i, j] = (objective(x + ei + ej) - objective(x + ei - ej)
                          - objective(x - ei + ej) + objective(x - ei - ej)) / (4 * h * h)
    rows = item_rows(CORRELATED)
    scores = np.zeros((len(rows), len(x)))
    for i in range(len(x)):
        e = np.eye(len(x))[i] * 1e-6

        def per_item(v: np.ndarray) -> np.ndarray:
            theta, q0, q1 = v[0], v[1:1 + k], v[1 + k:]
            y, cal, yhat = rows[:, 0], rows[:, 1], rows[:, 2:]
            a1 = theta * np.prod(np.where(yhat == 1, q1, 1 - q1), axis=1)
            a0 = (1 - theta) * np.prod(np.where(yhat == 1, 1 - q0, q0), axis=1)
            return np.log(np.where(cal == 1, np.where(y == 1, a1, a0), a1 + a0))

        scores[:, i] = (per_item(x + e) - per_item(x - e)) / 2e-6
    bread = np.linalg.inv(-hess)
    np.testing.assert_allclose(est.cov, bread @ (scores.T @ scores) @ bread, rtol=1e-4)


def test_converged_comes_from_the_optimizer(monkeypatch) -> None:
    """Bug caught: ``converged=True`` hard-coded for the Newton path. An optimizer stopped
    after one BFGS iteration and no Newton step reports converged=False and warns."""
    monkeypatch.setattr(mf, "_BFGS_MAX_ITER", 1)
    monkeypatch.setattr(mf, "_NEWTON_MAX_STEPS", 0)
    with pytest.warns(ConvergenceWarning, match="without converging"):
        est = mf.fit(K3)
    assert est.converged is False
    monkeypatch.undo()
    assert mf.fit(K3).converged is True


# ------------------------------------------------------------------ data layer, priors
def test_label_patterns_by_bit_packing_equal_the_row_unique() -> None:
    """Bug caught: a packing that mixes up bit order (judge order, the human label's bit) or
    drops an empty code. Binary patterns by packing = np.unique(axis=0) over the rows, in the
    same order; the general path (binary=False) and the many-judge path (sorting packed codes)
    give the same counts."""
    rng = np.random.default_rng(12)
    y = rng.integers(0, 2, 80).astype(float)
    cal, test = rng.integers(0, 2, (80, 4)).astype(float), rng.integers(0, 2, (900, 4))
    labels = Labels.from_arrays(y, cal, test.astype(float))
    pat = labels.patterns()
    rows_cal, c_cal = np.unique(np.c_[y, cal], axis=0, return_counts=True)
    rows_test, c_test = np.unique(test, axis=0, return_counts=True)
    np.testing.assert_array_equal(pat.yhat, np.vstack([rows_cal[:, 1:], rows_test]))
    np.testing.assert_array_equal(pat.y[~pat.test], rows_cal[:, 0])
    np.testing.assert_array_equal(pat.count, np.r_[c_cal, c_test])
    assert pat.m == 80 and pat.n == 900 and pat.count.sum() == 980
    general = labels.patterns(binary=False)
    for field in ("yhat", "y", "test", "count"):
        np.testing.assert_array_equal(getattr(general, field), getattr(pat, field))
    chosen = labels.patterns(["judge_2", "judge_0"])
    np.testing.assert_array_equal(chosen.yhat[chosen.test],
                                  np.unique(test[:, [2, 0]], axis=0))
    # 21 judges: 2^22 codes, counted by sorting the packed integers instead of a bincount
    wide = Labels.from_arrays(y, rng.integers(0, 2, (80, 21)).astype(float),
                              rng.integers(0, 2, (900, 21)).astype(float))
    many = wide.patterns()
    np.testing.assert_array_equal(many.count, wide.patterns(binary=False).count)
    with pytest.raises(DataError, match="0 or 1"):
        Labels.from_arrays([1, 0], [[1, 2], [0, 1]], [[1, 1]]).patterns()
    assert Labels.from_arrays([1, 0], [2.0, 1.0], [3.0]).patterns(binary=False).names == [
        "y=0 yhat=1", "y=1 yhat=2", "yhat=3"]


def test_priors_use_the_shared_checks() -> None:
    """A Beta pair must be two finite positive numbers (a bool, NaN, a zero or a single number
    is refused by the one shared check, in the model's Priors and the twin's penalty)."""
    for bad in ((True, 1.0), (0.0, 1.0), (np.nan, 1.0), (2.0,), "ab"):
        with pytest.raises(ValueError, match="Beta"):
            mm.Priors(prevalence=bad)  # type: ignore[arg-type]

    class Loose:
        prevalence = (1.0, 1.0)
        specificity = (2.0, -1.0)
        sensitivity = (2.0, 2.0)

    with pytest.raises(ValueError, match=r"penalty\.specificity must be a Beta"):
        mf.fit(D11, penalty=Loose())
    with pytest.raises(TypeError, match="priors must be"):
        mm.build(D11, priors=Loose())  # type: ignore[arg-type]
    flat = mm.Priors.flat()
    assert flat.prevalence == flat.specificity == flat.sensitivity == (1.0, 1.0)


def test_model_imports_no_twin() -> None:
    """Models never import twins: a shared bug in a reduction would pass both."""
    import ast
    from pathlib import Path

    for module in ("misclassification", "score_calibration"):
        path = Path(__file__).resolve().parents[1] / "bayescal" / "models" / f"{module}.py"
        tree = ast.parse(path.read_text())
        imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names]
        assert not [m for m in imported if m and "frequentist" in m], (module, imported)
