"""Judge-specific effects of comparison features in the judge-discrimination BTL (issue 19).

logit P(k prefers i over j) = γ_k (s_i - s_j) + β_kᵀ(x_i - x_j) (Xu, Tan, Wu, Zhou 2026,
arXiv:2601.21817, eq. 1, with a feature term not scaled by γ_k): the twin against an
independent maximum likelihood on the raw verdict rows (every covariance kind), the unweighted
model against statsmodels, the gradient against finite differences, the PyMC model against the
twin, the identification checks without display order, and recovery in a fixed-seed study.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.optimize import minimize
from scipy.special import expit, log_expit

import bayescal as bc
from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.frequentist import judge_discrimination_btl as jdf
from bayescal.frequentist.features import feature_effect_contrasts
from bayescal.identify import IdentificationError
from bayescal.models import judge_discrimination_btl as jdm


def _load_study():
    path = Path(__file__).resolve().parents[1] / "validation" / "judge_discrimination_features.py"
    spec = importlib.util.spec_from_file_location("validation_jd_features", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


STUDY = _load_study()
ITEMS, JUDGES, FEATURES = STUDY.ITEMS, STUDY.JUDGES, STUDY.FEATURES
N, K, F = len(ITEMS), len(JUDGES), 2
Z95 = 1.959963984540054


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return STUDY.simulate_frame(200, seed=21)


@pytest.fixture(scope="module")
def data(frame) -> Comparisons:
    return Comparisons.from_frame(frame, features=FEATURES, cluster="question", humans=["h"])


# ------------------------------------------------------ an independent MLE on the raw rows
class _Rows:
    """The model written on the frame's own rows (item_a/item_b orientation, no cells, no
    canonical flip), with its own chart θ = (u, v, β): s = A u, log γ = B v."""

    def __init__(self, frame: pd.DataFrame, weighted: bool = True):
        self.k = frame["judge"].map({j: c for c, j in enumerate(JUDGES)}).to_numpy()
        self.ia = frame["item_a"].map({x: c for c, x in enumerate(ITEMS)}).to_numpy()
        self.ib = frame["item_b"].map({x: c for c, x in enumerate(ITEMS)}).to_numpy()
        self.x = np.column_stack([frame["loglen_a"] - frame["loglen_b"],
                                  frame["md_a"] - frame["md_b"]])
        self.y = frame["outcome"].to_numpy()
        self.g = frame["question"].astype(int).to_numpy()
        self.weighted = weighted
        self.a_s, self.a_k = zero_sum_basis(N), zero_sum_basis(K)

    def raw(self, theta):
        nv = K - 1 if self.weighted else 0
        s = self.a_s @ theta[:N - 1]
        alpha = self.a_k @ theta[N - 1:N - 1 + nv] if self.weighted else np.zeros(K)
        return s, alpha, theta[N - 1 + nv:].reshape(K, F)

    def eta(self, theta):
        s, alpha, beta = self.raw(theta)
        return (np.exp(alpha)[self.k] * (s[self.ia] - s[self.ib])
                + np.sum(self.x * beta[self.k], axis=1))

    def loglik(self, theta):
        e = self.eta(theta)
        return float(np.sum(self.y * log_expit(e) + (1 - self.y) * log_expit(-e)))

    def deta(self, theta):
        """Rows x θ: ∂η/∂θ of each verdict, analytic in the raw coordinates, then the chart."""
        s, alpha, _ = self.raw(theta)
        gam = np.exp(alpha)[self.k]
        rows = np.arange(len(self.y))
        d_s = np.zeros((len(rows), N))
        d_s[rows, self.ia] += gam
        d_s[rows, self.ib] -= gam
        parts = [d_s @ self.a_s]
        if self.weighted:
            d_a = np.zeros((len(rows), K))
            d_a[rows, self.k] = gam * (s[self.ia] - s[self.ib])
            parts.append(d_a @ self.a_k)
        d_b = np.zeros((len(rows), K, F))
        d_b[rows, self.k] = self.x
        parts.append(d_b.reshape(len(rows), K * F))
        return np.hstack(parts)

    def fit(self):
        dim = N - 1 + (K - 1 if self.weighted else 0) + K * F
        res = minimize(lambda t: -self.loglik(t), np.zeros(dim),
                       jac=lambda t: -self.deta(t).T @ (self.y - expit(self.eta(t))),
                       method="BFGS", options={"gtol": 1e-10, "maxiter": 2000})
        return res.x

    def hessian(self, theta, h=1e-4):
        """Minus the Hessian of the row log-likelihood by central differences of its score."""
        def score(t):
            return self.deta(t).T @ (self.y - expit(self.eta(t)))
        cols = []
        for e in np.eye(len(theta)):
            cols.append((score(theta + h * e) - score(theta - h * e)) / (2 * h))
        hm = -np.array(cols)
        return (hm + hm.T) / 2

    def covariance(self, theta, kind):
        """Covariance of θ for every kind, from the rows alone."""
        g = self.deta(theta)
        p = expit(self.eta(theta))
        expected = g.T @ (g * (p * (1 - p))[:, None])
        observed = self.hessian(theta)
        if kind == "expected":
            return np.linalg.inv(expected)
        bread = np.linalg.inv(observed)
        if kind == "observed":
            return bread
        scores = g * (self.y - p)[:, None]
        if kind == "cluster":  # CR0: no small-sample factor
            sums = np.zeros((self.g.max() + 1, scores.shape[1]))
            np.add.at(sums, self.g, scores)
            scores = sums
        return bread @ (scores.T @ scores) @ bread

    def terms(self, theta, cov):
        """(estimates, covariance) of (s, γ, β) by the chart's Jacobian and γ's delta method."""
        s, alpha, beta = self.raw(theta)
        blocks = [self.a_s]
        if self.weighted:
            blocks.append(np.exp(alpha)[:, None] * self.a_k)
        jac = np.zeros((N + (K if self.weighted else 0) + K * F, len(theta)))
        r = c = 0
        for b in blocks:
            jac[r:r + b.shape[0], c:c + b.shape[1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        jac[r:, c:] = np.eye(K * F)
        values = np.concatenate([s] + ([np.exp(alpha)] if self.weighted else [])
                                + [beta.ravel()])
        return values, jac @ cov @ jac.T


def _twin_terms(est) -> list[str]:
    names = [f"ability[{i}]" for i in ITEMS]
    if "discrimination" in est.params:
        names += [f"discrimination[{j}]" for j in JUDGES]
    return names + [f"feature_effect[{j}, {f}]" for j in JUDGES for f in ("loglen", "md")]


@pytest.mark.parametrize("information", ["expected", "observed", "sandwich", "cluster"])
def test_twin_equals_an_independent_mle_on_the_raw_rows(frame, data, information):
    """Estimates of (s, γ, β) and their whole covariance equal those of the model written here
    on the frame's raw rows (BFGS, finite-difference observed information, per-verdict and
    per-question meats, CR0), for every information kind. Catches the feature term scaled by
    γ (or ∂η/∂log γ taken as η), a feature column missing from the bread's ability x β or
    log γ x β blocks or from the meat, a sign error in the canonical flip, or β's rows
    misplaced in the chart; an SE 20% too wide fails (checked below)."""
    extra = {"cluster": {"correction": "CR0"}}.get(information, {})
    est = jdf.fit(data, information=information, **extra)
    rows = _Rows(frame)
    theta = rows.fit()
    ref, ref_cov = rows.terms(theta, rows.covariance(theta, information))
    idx = [est.terms.index(t) for t in _twin_terms(est)]
    got = np.concatenate([est.params["ability"].values, est.params["discrimination"].values,
                          est.params["feature_effect"].values.ravel()])
    np.testing.assert_allclose(got, ref, atol=1e-6)
    got_cov = est.cov[np.ix_(idx, idx)]
    np.testing.assert_allclose(got_cov, ref_cov, rtol=2e-5, atol=1e-9)
    se = np.sqrt(np.diag(got_cov))
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(1.2 * se, np.sqrt(np.diag(ref_cov)), rtol=2e-5)


@pytest.mark.parametrize("information", ["expected", "sandwich", "cluster"])
def test_unweighted_model_with_features_equals_statsmodels(frame, data, information):
    """discrimination=False with features is a logistic regression on the raw rows with design
    [item_a minus item_b dummies (item A dropped), each judge's x_a - x_b in its own columns]:
    β and its SEs equal statsmodels' Logit, with HC0 and cluster (no correction) meats. Catches
    judges pooled into one cell while each has its own β (the β's would be averaged)."""
    est = jdf.fit(data, discrimination=False, information=information,
                  **({"correction": "CR0"} if information == "cluster" else {}))
    rows = _Rows(frame, weighted=False)
    design = np.zeros((len(frame), N - 1 + K * F))
    for c, item in enumerate(ITEMS[1:]):
        design[:, c] = ((frame["item_a"] == item).to_numpy(float)
                        - (frame["item_b"] == item).to_numpy(float))
    for k in range(K):
        design[rows.k == k, N - 1 + k * F:N - 1 + (k + 1) * F] = rows.x[rows.k == k]
    kw = {"expected": {}, "sandwich": {"cov_type": "HC0"},
          "cluster": {"cov_type": "cluster", "cov_kwds": {"groups": rows.g,
                                                          "use_correction": False}}}[information]
    res = sm.Logit(rows.y, design).fit(disp=0, method="newton", tol=1e-12, maxiter=100, **kw)
    beta = est.params["feature_effect"].values.ravel()
    se = np.array([est.se[f"feature_effect[{j}, {f}]"] for j in JUDGES for f in ("loglen", "md")])
    np.testing.assert_allclose(beta, res.params[N - 1:], atol=1e-7)
    np.testing.assert_allclose(se, res.bse[N - 1:], rtol=1e-6)


def test_loglik_on_cells_equals_the_raw_rows_and_the_gradient_its_differences(frame, data,
                                                                              rng):
    """loglik on the twin's cells (display orders pooled, features kept) equals the row-by-row
    log-likelihood at random points, and the analytic gradient in (s, log γ, β) equals central
    differences of loglik. Catches rows with different features pooled into one cell when the
    orders are pooled, and a feature gradient taken with the wrong judge or column."""
    rows = _Rows(frame)
    for _ in range(3):
        theta = rng.normal(size=N - 1 + K - 1 + K * F)
        s, alpha, beta = rows.raw(theta)
        params = {"ability": s, "discrimination": np.exp(alpha), "feature_effect": beta}
        assert jdf.loglik(params, data) == pytest.approx(rows.loglik(theta), rel=1e-12)
    params = {"ability": rng.normal(size=N), "discrimination": np.exp(rng.normal(size=K)),
              "feature_effect": rng.normal(size=(K, F))}
    grad = jdf.gradient(params, data)
    h = 1e-6
    coords = {"ability": params["ability"], "log_discrimination": np.log(params["discrimination"]),
              "feature_effect": params["feature_effect"]}

    def at(name, value):
        p = {**params, name: value}
        if name == "log_discrimination":
            p = {**params, "discrimination": np.exp(value)}
        return jdf.loglik(p, data)

    for name, value in coords.items():
        num = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            up, down = value.copy(), value.copy()
            up[idx] += h
            down[idx] -= h
            num[idx] = (at(name, up) - at(name, down)) / (2 * h)
        np.testing.assert_allclose(grad[name], num, rtol=1e-6, atol=1e-5)


def test_features_not_scaled_by_the_discrimination(data):
    """The feature effect is in logits of the judge's own verdicts, not multiplied by γ_k: with
    equal abilities the discriminations drop out of the likelihood. Catches β scaled by γ_k
    (the loglik would then change with γ)."""
    beta = np.array([[0.5, -0.2], [1.0, 0.3], [-0.7, 0.1]])
    gamma = np.array([4.0, 1.0, 0.25])
    zero = {"ability": np.zeros(N), "discrimination": gamma, "feature_effect": beta}
    ones = {"ability": np.zeros(N), "discrimination": np.ones(K), "feature_effect": beta}
    assert jdf.loglik(zero, data) == pytest.approx(jdf.loglik(ones, data), rel=1e-13)


# ----------------------------------------------------------------------- the PyMC model
def _model_params(model):
    names = ("ability", "discrimination", "feature_effect")
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    return lambda point: dict(zip(names, fn(point), strict=True))


def test_pymc_loglik_equals_twin_and_flat_map_is_the_mle(data, rng):
    """The PyMC likelihood equals the twin's loglik at random points, the flat-prior MAP equals
    the MLE and a tight feature prior's MAP the twin's penalized MLE. Catches a feature term
    indexed by the wrong judge or scaled by γ in one of the two, or a feature prior missing
    from the twin's penalty."""
    model = jdm.build(data)
    assert model.named_vars_to_dims["feature_effect"] == ("judge", "feature")
    logp = model.compile_logp(vars=[model["outcome"]], jacobian=False)
    params = _model_params(model)
    for _ in range(3):
        point = {v.name: rng.normal(size=model.initial_point()[v.name].shape)
                 for v in model.value_vars}
        np.testing.assert_allclose(logp(point), jdf.loglik(params(point), data), rtol=1e-10)
    tight = jdm.Priors(feature_effect_sd=0.2)
    mle = jdf.fit(data, information="expected")
    pen = jdf.fit(data, penalty=tight, information="expected")
    assert np.max(np.abs(pen.params["feature_effect"] - mle.params["feature_effect"])) > 0.05
    for priors, ref in ((jdm.Priors.flat(), mle), (tight, pen)):
        mode = bc.fit(jdm.build(data, priors=priors), "map")
        for name in ("ability", "discrimination", "feature_effect"):
            np.testing.assert_allclose(mode["posterior"][name].values[0, 0],
                                       ref.params[name].values, atol=2e-5)


# ------------------------------------------------------------------------ identification
def test_identification_without_display_order(frame):
    """The model has no order effect, so a feature equal to the display order is identified
    here (it is refused by the order-effect BTL), while a feature constant within every pair
    and one that copies another are refused by twin and model, judge and feature named; and
    Davidson's tie model refuses features. Catches the order column left in this model's
    design (a valid feature refused) or the rank checks skipped."""
    f = frame.copy()
    f["order"] = np.random.default_rng(3).choice([-1, 1], len(f))
    f["orderish_a"], f["orderish_b"] = 0.5 * f["order"], 0.0
    ok = Comparisons.from_frame(f, features={"loglen": ("loglen_a", "loglen_b"),
                                             "orderish": ("orderish_a", "orderish_b")})
    assert ok.n_features == 2
    est = jdf.fit(ok, information="expected")
    assert np.all(np.isfinite(est.se.filter(like="orderish")))
    value = dict(zip(ITEMS, (0.1, 0.7, -0.2, 0.3, 0.0), strict=True))
    f["per_item_a"], f["per_item_b"] = f["item_a"].map(value), f["item_b"].map(value)
    f["copy_a"], f["copy_b"] = 2 * f["loglen_a"], 2 * f["loglen_b"]
    for column, reason in (("per_item", "one value within every pair"),
                           ("copy", "linear combination of the item contrasts and the other")):
        bad = Comparisons.from_frame(f, features={"loglen": ("loglen_a", "loglen_b"),
                                                  column: (f"{column}_a", f"{column}_b")})
        with pytest.raises(IdentificationError, match=f"feature '{column}': .*{reason}"):
            jdf.fit(bad)
        with pytest.raises(IdentificationError, match=f"judge 'h', feature '{column}'"):
            jdm.build(bad)
    tied = Comparisons.from_frame(f.assign(outcome=np.where(np.arange(len(f)) % 7 == 0, 0.5,
                                                            f["outcome"])), features=FEATURES)
    for call in (lambda: jdf.fit(tied, ties="davidson"),
                 lambda: jdm.build(tied, ties="davidson")):
        with pytest.raises(DataError, match="no feature effects"):
            call()


# ----------------------------------------------------------- contrasts, recovery and the CLI
def test_contrasts_carry_the_covariance_of_the_shared_abilities(data):
    """β_k − β_h from the shared contrasts table, against the estimate's own covariance: the
    judges share s and log γ, so the cross term v_kh is non-zero even under the per-verdict
    sandwich (no shared cluster key). Catches a contrast SE that drops the cross term."""
    est = jdf.fit(data, information="sandwich")
    table = feature_effect_contrasts(est).set_index(["judge", "feature"])
    assert sorted(table.index) == [(k, f) for k in ("k1", "k2") for f in ("loglen", "md")]
    a = est.terms.index("feature_effect[k1, loglen]")
    c = est.terms.index("feature_effect[h, loglen]")
    assert abs(est.cov[a, c]) > 1e-6
    se = np.sqrt(est.cov[a, a] + est.cov[c, c] - 2 * est.cov[a, c])
    assert table.loc[("k1", "loglen"), "se"] == pytest.approx(se, rel=1e-12)


def test_recovery_bias_within_mc_error_and_ses_match_the_spread():
    """40 fixed-seed replications of validation/judge_discrimination_features.py (300
    questions x 3 judges, γ = 1.5, 1, 2/3, β per judge on log length and markdown). For each of
    the 9 γ_k and β_kf: mean estimate within 3.5 Monte Carlo SEs of the truth (< 1%
    family-wise false alarms); mean Wald SE within 35% of the SD of the estimates (the SD of
    40 draws has relative SE 1/√80 ≈ 11%, so 35% is about 3σ); 95% coverage at least 0.85
    (binomial(40, 0.95): 3σ below is 0.85). Catches a β biased by a flip or by a γ scaling,
    an SE from the wrong row, and intervals that do not cover."""
    table = STUDY.study(40)
    assert np.all(np.abs(table["bias_in_mc_se"]) < 3.5), table
    ratio = table["mean_se"] / table["sd"]
    assert np.all((ratio > 0.65) & (ratio < 1.35)), table
    assert np.all(table["coverage_95"] >= 0.85), table


def test_cli_feature_flag_on_the_judge_discrimination_fit(frame, tmp_path, capsys):
    """``fit judge-discrimination-btl --feature loglen_a:loglen_b --feature md_a:md_b --humans
    h``: summary.csv has one row per (judge, feature) equal to the twin's MLE, and
    feature_effect_contrasts.csv the contrasts to h. Catches the flag offered only on the
    order-effect fit, or parsed but not handed to the container."""
    from bayescal.cli import main

    path = tmp_path / "v.csv"
    frame.drop(columns="question").to_csv(path, index=False)
    assert main(["fit", "judge-discrimination-btl", str(path), "--method", "mle", "--feature",
                 "loglen_a:loglen_b", "--feature", "md_a:md_b", "--humans", "h", "--out",
                 str(tmp_path / "run")]) == 0
    capsys.readouterr()
    table = pd.read_csv(tmp_path / "run" / "summary.csv", index_col="term")
    est = jdf.fit(Comparisons.from_frame(frame, features=FEATURES))
    for k in JUDGES:
        for f in ("loglen", "md"):
            assert table.loc[f"feature_effect[{k}, {f}]", "estimate"] == pytest.approx(
                float(est.params["feature_effect"].sel(judge=k, feature=f)))
    contrasts = pd.read_csv(tmp_path / "run" / "feature_effect_contrasts.csv")
    assert len(contrasts) == 4 and set(contrasts["human"]) == {"h"}
