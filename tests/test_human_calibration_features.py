"""DIAL human calibration with comparison features: judges' β_k in the LLM part, the humans'
β_h in the human part, the calibration space spanned by the judges' equal-feature abilities."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayescal import simulate_dial as sd
from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc
from bayescal.frequentist import order_effect_btl as oef
from bayescal.identify import IdentificationError

BETA_LLM = {"judge_00": 0.8, "judge_01": -0.4, "judge_02": 0.3}
BETA_HUMAN = 0.5


def simulate(n_items: int, n_judges: int, n_llm: int, n_human: int, seed: int
             ) -> tuple[pd.DataFrame, dict]:
    """One verdict frame: DIAL's synthetic judges (rank 1) and humans with s_h = μ, plus per
    answer log lengths (item means spread ±0.4, SD 0.7 within item) and a length effect β_k
    per judge (β_h for the humans)."""
    par = sd.truth(n_items, n_judges, 1, random_seed=seed)
    rng = np.random.default_rng(seed + 10)
    items = [f"item_{i:02d}" for i in range(n_items)]
    judges = [f"judge_{k:02d}" for k in range(n_judges)]
    length_mean = np.linspace(0.4, -0.4, n_items)
    rows = []
    for who, n in (("llm", n_llm), ("human", n_human)):
        a = rng.integers(0, n_items, n)
        b = (a + rng.integers(1, n_items, n)) % n_items
        x = length_mean[np.c_[a, b]] + rng.normal(0, 0.7, (n, 2))
        if who == "llm":
            k = rng.integers(0, n_judges, n)
            order = rng.choice([-1, 1], n)
            beta = np.array([BETA_LLM.get(j, 0.0) for j in judges])[k]
            eta = par["S"][k, a] - par["S"][k, b] + order * par["b"][k] + beta * (
                x[:, 0] - x[:, 1])
            judge = np.asarray(judges)[k]
        else:
            order = rng.choice([-1, 1], n)  # recorded, and ignored by the human part
            eta = par["s_h"][a] - par["s_h"][b] + BETA_HUMAN * (x[:, 0] - x[:, 1])
            judge = np.full(n, "human")
        rows.append(pd.DataFrame({
            "judge": judge, "item_a": np.asarray(items)[a], "item_b": np.asarray(items)[b],
            "order": order, "outcome": (rng.random(n) < expit(eta)).astype(float),
            "loglen_a": x[:, 0], "loglen_b": x[:, 1]}))
    return pd.concat(rows, ignore_index=True), par


def comparisons(frame: pd.DataFrame) -> Comparisons:
    return Comparisons.from_frame(frame, humans=["human"], features=[("loglen_a", "loglen_b")])


@pytest.fixture(scope="module")
def small():
    frame, par = simulate(5, 3, 1500, 300, seed=3)
    return frame, par, comparisons(frame)


def _frame_loglik(frame: pd.DataFrame, s_h, S, b, beta, beta_h, w: float,
                  items, judges) -> float:
    """L_h + w L_l summed over the frame's raw rows in item_a/item_b orientation, computed here
    from the definitions (no cells, no canonical flip)."""
    ia = frame["item_a"].map({it: n for n, it in enumerate(items)}).to_numpy()
    ib = frame["item_b"].map({it: n for n, it in enumerate(items)}).to_numpy()
    dx = (frame["loglen_a"] - frame["loglen_b"]).to_numpy()
    y = frame["outcome"].to_numpy()
    human = (frame["judge"] == "human").to_numpy()
    eta = np.empty(len(frame))
    eta[human] = s_h[ia[human]] - s_h[ib[human]] + beta_h * dx[human]
    k = frame.loc[~human, "judge"].map({j: n for n, j in enumerate(judges)}).to_numpy()
    eta[~human] = (S[k, ia[~human]] - S[k, ib[~human]]
                   + frame.loc[~human, "order"].to_numpy() * b[k] + beta[k, 0] * dx[~human])
    ll = y * -np.logaddexp(0, -eta) + (1 - y) * -np.logaddexp(0, eta)
    return float(ll[human].sum() + w * ll[~human].sum())


def test_loglik_equals_the_rows_likelihood_at_random_points(small):
    """The twin's loglik with features equals L_h + w L_l computed here on the raw rows (the
    human logit s_i − s_j + β_h Δx, the judges' S_ki − S_kj + a b_k + β_k Δx) at random
    points of the calibration space. Catches a feature difference of the wrong sign after the
    canonical flip, β_h left out of the human part, and β_k applied to another judge's cells."""
    frame, _, data = small
    rng = np.random.default_rng(1)
    items, judges = data.items, ("judge_00", "judge_01", "judge_02")
    n_h = float((frame["judge"] == "human").sum())
    n_l = float(len(frame)) - n_h
    for lam in (0.0, 2.5):
        for _ in range(3):
            G, Fm = rng.normal(size=(3, 2)), rng.normal(size=(5, 2))
            Fm -= Fm.mean(axis=0)
            S = G @ Fm.T
            s_h = 0.7 * S.mean(axis=0)  # consensus space: s_h = c μ
            b, beta, beta_h = rng.normal(size=3), rng.normal(size=(3, 1)), rng.normal(size=1)
            params = {"human_ability": s_h, "human_feature_effect": beta_h}
            if lam:
                params |= {"ability": S, "order_effect": b, "feature_effect": beta}
            got = hc.loglik(params, data, llm_weight=lam)
            want = _frame_loglik(frame, s_h, S, b, beta, beta_h[0], lam * n_h / n_l, items,
                                 judges)
            assert got == pytest.approx(want, rel=1e-10, abs=1e-8)


def test_gradient_and_hessian_match_finite_differences(small):
    """Analytic ∇q_λ and ∇²q_λ in the chart (with the judges' (b_k, β_k) block and the humans'
    β_h) against central differences at a random point. Catches a missing β–G or β–F cross
    term, β_h's column misplaced in the human design, and a Hessian block of the wrong judge."""
    *_, data = small
    for space in ("consensus", "full"):
        p = hc.problem(data, rank=1, space=space)
        z = np.random.default_rng(0).normal(scale=0.5, size=p.n_zeta)
        lam = 3.7
        dv = hc.derivatives(z, p, lam)
        h = 1e-5
        fd_g, fd_H = np.empty_like(z), np.empty((z.size, z.size))
        for e in range(z.size):
            up, dn = z.copy(), z.copy()
            up[e] += h
            dn[e] -= h
            fd_g[e] = (hc.derivatives(up, p, lam).value
                       - hc.derivatives(dn, p, lam).value) / (2 * h)
            fd_H[:, e] = (hc.derivatives(up, p, lam).gradient
                          - hc.derivatives(dn, p, lam).gradient) / (2 * h)
        assert np.max(np.abs(dv.gradient - fd_g)) < 1e-7
        assert np.max(np.abs(dv.hessian - fd_H)) < 1e-6


@pytest.mark.parametrize("information", ["expected", "sandwich"])
def test_lambda_zero_is_statsmodels_logit_with_the_feature(small, information):
    """λ = 0 is the humans' BTL with their length effect: ŝ_0 contrasts, β̂_h and their SEs
    equal statsmodels' Logit on the human rows (item dummies with the last item as baseline,
    the feature difference; HC0 for the sandwich). Catches β_h dropped from the λ = 0 fit or
    from its covariance."""
    frame, _, data = small
    est = hc.fit(data, llm_weight=0.0, information=information)
    rows = frame[frame["judge"] == "human"]
    items = list(data.items)
    X = np.zeros((len(rows), len(items)))
    X[np.arange(len(rows)), rows["item_a"].map(items.index)] += 1.0
    X[np.arange(len(rows)), rows["item_b"].map(items.index)] -= 1.0
    X = np.column_stack([X[:, :-1], rows["loglen_a"] - rows["loglen_b"]])
    res = sm.Logit(rows["outcome"].to_numpy(), X).fit(
        disp=0, cov_type="HC0" if information == "sandwich" else "nonrobust")
    beta_h = est.params["human_feature_effect"].values[0]
    assert beta_h == pytest.approx(res.params[-1], abs=1e-6)
    assert est.se["human_feature_effect[loglen]"] == pytest.approx(res.bse[-1], rel=1e-5)
    s = est.params["human_ability"].values
    assert s[:-1] - s[-1] == pytest.approx(res.params[:-1], abs=1e-6)


def test_anchored_llm_part_is_the_order_effect_btl_with_features():
    """With K = 2 judges and r = 1 the low-rank S (rank r + 1 = K) is unrestricted, so the λ = ∞
    judge fit is the order-effect BTL with features: S, b_k, β_k and their expected-information
    SEs equal :func:`order_effect_btl.fit` on the LLM verdicts alone. Catches the judges' β_k
    block of the gradient, Hessian or covariance in the wrong rows."""
    frame, _ = simulate(5, 2, 1500, 300, seed=5)
    data = comparisons(frame)
    est = hc.fit(data, rank=1, llm_weight=np.inf, information="expected")
    llm = Comparisons.from_frame(frame[frame["judge"] != "human"],
                                 features=[("loglen_a", "loglen_b")])
    ref = oef.fit(llm, information="expected")
    for name in ("ability", "order_effect", "feature_effect"):
        np.testing.assert_allclose(est.params[name].values, ref.params[name].values, atol=1e-6)
    for term in ("order_effect[judge_00]", "feature_effect[judge_01, loglen]",
                 "ability[judge_00, item_02]"):
        assert est.se[term] == pytest.approx(ref.se[term], rel=1e-5)


def test_calibration_uses_the_equal_feature_abilities(small):
    """At λ = ∞ the human scores are ŝ_h = M ĉ with M from the judges' abilities *at equal
    features*: ŝ_h lies in the span of the fitted ability's consensus Sᵀ1, β̂_h is the humans'
    own length effect, and refitting the humans on that fixed M by a logistic regression
    (design rows (M_i − M_j, Δx), statsmodels) gives the same ĉ and β̂_h. Catches a calibration
    space built from abilities that still carry the judges' length bias."""
    frame, _, data = small
    est = hc.fit(data, llm_weight=np.inf, information="expected", anchored="fixed")
    S = est.params["ability"].values
    mu = S.sum(axis=0)
    s_h = est.params["human_ability"].values
    c = s_h @ mu / (mu @ mu)
    np.testing.assert_allclose(s_h, c * mu, atol=1e-8)
    rows = frame[frame["judge"] == "human"]
    items = list(data.items)
    m_i = mu[rows["item_a"].map(items.index)] - mu[rows["item_b"].map(items.index)]
    X = np.column_stack([m_i, rows["loglen_a"] - rows["loglen_b"]])
    res = sm.Logit(rows["outcome"].to_numpy(), X).fit(disp=0)
    assert c == pytest.approx(res.params[0], rel=1e-6)
    assert est.params["human_feature_effect"].values[0] == pytest.approx(res.params[1],
                                                                          abs=1e-6)
    assert est.se["human_feature_effect[loglen]"] == pytest.approx(res.bse[1], rel=1e-5)


def test_finite_lambda_estimate_maximises_the_public_loglik(small):
    """At a finite λ the estimate is a stationary point of the public ``loglik`` along every
    feature effect (central differences of loglik in β_k and β_h vanish relative to their
    scale), and its loglik beats small perturbations. Catches a fit whose feature effects are
    not those of the weighted objective (11)."""
    *_, data = small
    est = hc.fit(data, llm_weight=5.0, information="expected")
    params = {name: est.params[name].values.copy() for name in
              ("human_ability", "human_feature_effect", "ability", "order_effect",
               "feature_effect")}
    base = hc.loglik(params, data, llm_weight=5.0)
    h = 1e-5
    for name, index in (("human_feature_effect", (0,)), ("feature_effect", (0, 0)),
                        ("feature_effect", (2, 0)), ("order_effect", (1,))):
        up = {k: v.copy() for k, v in params.items()}
        dn = {k: v.copy() for k, v in params.items()}
        up[name][index] += h
        dn[name][index] -= h
        grad = (hc.loglik(up, data, llm_weight=5.0) - hc.loglik(dn, data, llm_weight=5.0)) / (
            2 * h)
        assert abs(grad) < 1e-4 * 300, (name, index, grad)
        up[name][index] += 0.05
        assert hc.loglik(up, data, llm_weight=5.0) < base


def test_gacv_chooses_lambda_and_reports_every_feature_effect(small):
    """GACV runs unchanged on data with features (every candidate admissible here) and the
    selected fit reports β_h and one β_k per LLM judge, with finite SEs. Catches a path that
    drops the features at some λ."""
    *_, data = small
    table, est = hc.gacv(data)
    assert table["admissible"].all(), table
    assert est.params["feature_effect"].dims == ("judge", "feature")
    assert list(est.params["feature_effect"].coords["judge"].values) == [
        "judge_00", "judge_01", "judge_02"]
    assert np.isfinite(est.se["human_feature_effect[loglen]"])


def test_a_feature_the_humans_cannot_separate_is_refused(small):
    """A human feature that is constant within every pair is not identified (absorbed by the
    abilities): the fit refuses it naming the feature, before fitting."""
    frame, *_ = small
    bad = frame.copy()
    human = bad["judge"] == "human"
    lengths = {it: float(n) for n, it in enumerate(sorted(set(bad["item_a"])))}
    bad.loc[human, "loglen_a"] = bad.loc[human, "item_a"].map(lengths)
    bad.loc[human, "loglen_b"] = bad.loc[human, "item_b"].map(lengths)
    with pytest.raises(IdentificationError, match="loglen"):
        hc.fit(comparisons(bad))


def test_contrasts_to_the_humans_and_the_command_line(small, tmp_path, capsys):
    """β_k − β_h from :func:`order_effect_btl.feature_effect_contrasts` on the calibration's
    estimate equals the hand computation from its parameters and covariance (v_kk + v_hh −
    2 v_kh: the joint fit at a finite λ correlates them); the command line's ``--feature`` on
    ``fit human-calibration`` writes one ``feature_effect[judge, loglen]`` row per LLM judge and
    ``human_feature_effect[loglen]`` to summary.csv, equal to the twin, and the contrasts table;
    ``--feature`` with ``--human FILE`` is refused. Catches the flag parsed but not handed to
    the container, and a contrast that drops the cross covariance."""
    from bayescal.cli import main

    frame, _, data = small
    est = hc.fit(data, llm_weight=5.0, information="expected")
    table = oef.feature_effect_contrasts(est).set_index("judge")
    h = est.terms.index("human_feature_effect[loglen]")
    for k in ("judge_00", "judge_01", "judge_02"):
        a = est.terms.index(f"feature_effect[{k}, loglen]")
        want = float(est.params["feature_effect"].sel(judge=k, feature="loglen")
                     - est.params["human_feature_effect"].sel(feature="loglen"))
        se = np.sqrt(est.cov[a, a] + est.cov[h, h] - 2 * est.cov[a, h])
        assert table.loc[k, "estimate"] == pytest.approx(want)
        assert table.loc[k, "se"] == pytest.approx(se)
    assert abs(est.cov[est.terms.index("feature_effect[judge_00, loglen]"), h]) > 1e-8
    path = tmp_path / "v.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", "human-calibration", str(path), "--humans", "human", "--method", "mle",
                 "--llm-weight", "5", "--information", "expected", "--feature",
                 "loglen_a:loglen_b", "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    summary = pd.read_csv(tmp_path / "run" / "summary.csv", index_col="term")
    assert summary.loc["human_feature_effect[loglen]", "estimate"] == pytest.approx(
        float(est.params["human_feature_effect"].sel(feature="loglen")), rel=1e-6)
    for k in ("judge_00", "judge_01", "judge_02"):
        assert summary.loc[f"feature_effect[{k}, loglen]", "estimate"] == pytest.approx(
            float(est.params["feature_effect"].sel(judge=k, feature="loglen")), rel=1e-6)
    contrasts = pd.read_csv(tmp_path / "run" / "feature_effect_contrasts.csv")
    assert sorted(contrasts["judge"]) == ["judge_00", "judge_01", "judge_02"]
    human = tmp_path / "h.csv"
    frame[frame["judge"] == "human"].to_csv(human, index=False)
    assert main(["fit", "human-calibration", str(path), "--human", str(human), "--method",
                 "mle", "--feature", "loglen_a:loglen_b"]) == 2
    assert "--humans" in capsys.readouterr().err


def _reference_ses(data: Comparisons, est, lam: float) -> dict[str, pd.Series]:
    """The expected, observed and sandwich SEs at a finite λ rebuilt without the twin (the
    construction of ``_reference`` in tests/test_human_calibration.py, with the features).

    Gauge-fixed chart (consensus space, r = 1): G = [I; G₂], F = B_N F̃, b, β, β_h, c with
    S = G Fᵀ and s_h = c F Gᵀ1/K. Observed H: minus the finite-difference Hessian of the public
    ``loglik``, / n_h; Fisher informations per observation Σ n p(1 − p) ∇d ∇dᵀ / n with ∇d by
    finite differences of the linear predictors written here (features included); per-verdict
    meats from the cells' Σy, Σy². Cov = H⁻¹ J H⁻¹ / n_h to the outputs by a numeric delta
    method."""
    hcode = data.judges.index("human")
    llm_judges = [j for j in data.judges if j != "human"]
    K, N, r1 = len(llm_judges), data.n_items, 2
    hum = data.judge == hcode
    kk = np.array([llm_judges.index(data.judges[k]) if k != hcode else -1 for k in data.judge])
    n_h, n_l = data.count[hum].sum(), data.count[~hum].sum()
    dx = data.features[:, 0]
    S0 = est.params["ability"].values
    P, sv, Qt = np.linalg.svd(S0, full_matrices=False)
    G, F = P[:, :r1] * sv[:r1], Qt[:r1].T
    top = G[:r1]
    G2, F = (G @ np.linalg.inv(top))[r1:], F @ top.T
    basis = zero_sum_basis(N)
    mu_code = F @ np.vstack([np.eye(r1), G2]).sum(axis=0) / K
    s0 = est.params["human_ability"].values
    c0 = s0 @ mu_code / (mu_code @ mu_code)
    x0 = np.r_[G2.ravel(), (basis.T @ F).ravel(), est.params["order_effect"].values,
               est.params["feature_effect"].values[:, 0],
               est.params["human_feature_effect"].values, c0]
    n_g, n_f = G2.size, (N - 1) * r1

    def unpack(x):
        Gx = np.vstack([np.eye(r1), x[:n_g].reshape(-1, r1)])
        Fx = basis @ x[n_g:n_g + n_f].reshape(-1, r1)
        o = n_g + n_f
        return (Gx @ Fx.T, x[o:o + K], x[o + K:o + 2 * K], x[o + 2 * K],
                x[-1] * Fx @ Gx.sum(axis=0) / K)

    def total_ll(x):
        S, b, beta, beta_h, s = unpack(x)
        return hc.loglik({"ability": S, "order_effect": b, "feature_effect": beta[:, None],
                          "human_feature_effect": np.array([beta_h]), "human_ability": s},
                         data, llm_weight=lam)

    eye = np.eye(len(x0))
    h = 1e-4
    H_obs = -np.array([[(total_ll(x0 + h * a + h * e) - total_ll(x0 + h * a - h * e)
                         - total_ll(x0 - h * a + h * e) + total_ll(x0 - h * a - h * e))
                        / (4 * h * h) for e in eye] for a in eye])
    H_obs = (H_obs + H_obs.T) / 2 / n_h

    def predictor(x):
        S, b, beta, beta_h, s = unpack(x)
        k = np.where(hum, 0, kk)
        eta = S[k, data.item_i] - S[k, data.item_j] + data.order * b[k] + beta[k] * dx
        return np.where(hum, s[data.item_i] - s[data.item_j] + beta_h * dx, eta)

    X = np.array([(predictor(x0 + 1e-6 * e) - predictor(x0 - 1e-6 * e)) / 2e-6 for e in eye]).T
    p = expit(predictor(x0))
    n, y, y2 = data.count, data.wins, data.wins_sq

    def gram(weight, mask, total):
        return (X[mask] * weight[mask, None]).T @ X[mask] / total

    info = {"h": gram(n * p * (1 - p), hum, n_h), "l": gram(n * p * (1 - p), ~hum, n_l)}
    rho, sq = n * p - y, y2 - 2 * p * y + n * p**2
    gbar = {"h": X[hum].T @ rho[hum] / n_h, "l": X[~hum].T @ rho[~hum] / n_l}
    per_verdict = {part: gram(sq, mask, tot) - np.outer(gbar[part], gbar[part])
                   for part, mask, tot in (("h", hum, n_h), ("l", ~hum, n_l))}
    tau = n_h / n_l
    kinds = {"expected": (info["h"] + lam * info["l"], info["h"] + lam**2 * tau * info["l"]),
             "observed": (H_obs, lam * tau * H_obs + (1 - lam * tau) * info["h"]),
             "sandwich": (H_obs, per_verdict["h"] + lam**2 * tau * per_verdict["l"])}

    def targets(x):
        S, b, beta, beta_h, s = unpack(x)
        return np.r_[s, beta_h, S.ravel(), b, beta]

    J = np.array([(targets(x0 + 1e-6 * e) - targets(x0 - 1e-6 * e)) / 2e-6 for e in eye]).T
    labels = ([f"human_ability[{i}]" for i in data.items] + ["human_feature_effect[loglen]"]
              + [f"ability[{j}, {i}]" for j in llm_judges for i in data.items]
              + [f"order_effect[{j}]" for j in llm_judges]
              + [f"feature_effect[{j}, loglen]" for j in llm_judges])
    out = {}
    for kind, (bread, meat) in kinds.items():
        Hinv = np.linalg.inv(bread)
        out[kind] = pd.Series(np.sqrt(np.diag(J @ (Hinv @ meat @ Hinv / n_h) @ J.T)),
                              index=labels)
    return out


def test_finite_lambda_covariances_match_an_independent_computation(small):
    """Through the public ``fit(data, llm_weight=λ)`` with features: the expected, observed and
    sandwich SEs of ŝ_h, β̂_h, S, b and β̂_k equal the independent rebuild of
    ``_reference_ses`` (finite differences of the public ``loglik`` in a gauge-fixed chart of
    its own) to 0.5 %. Catches β_h's covariance rows taken from another coordinate, a judges'
    feature column missing from the LLM design of the meat, and SEs × 1.2."""
    *_, data = small
    lam = 5.0
    fits = {kind: hc.fit(data, llm_weight=lam, information=kind)
            for kind in ("expected", "observed", "sandwich")}
    ref = _reference_ses(data, fits["observed"], lam)
    for kind, est in fits.items():
        np.testing.assert_allclose(est.se.loc[ref[kind].index], ref[kind], rtol=5e-3,
                                   err_msg=kind)


# ------------------------------------------------------------------------------ PyMC
def _pymc_point(model, seed):
    rng = np.random.default_rng(seed)
    ip = model.initial_point()
    if "item_basis_free" in ip:
        ip["item_basis_free"] = np.eye(*ip["item_basis_free"].shape) * 2.0
    return {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in ip.items()}


def test_pymc_loglik_equals_the_twin_with_features(small):
    """At random points the PyMC power posterior's log-likelihood terms (the human ``outcome``
    plus the tempered LLM Potential) equal the twin's public ``loglik`` with the same
    ``feature_effect`` and ``human_feature_effect``, and the human node alone equals it at
    λ = 0; the λ = 0 model has β_h too. Catches β_h missing from the human node, β_k applied to
    another judge's cells, and a PyMC feature difference of the other sign."""
    from bayescal.models import human_calibration as hm

    *_, data = small
    lam = 4.0
    model = hm.build(data, llm_weight=lam)
    names = ["ability", "order_effect", "feature_effect", "human_feature_effect",
             "human_ability"]
    outs = model.replace_rvs_by_values([model[n] for n in names] + [model["llm_tempered"]])
    outs.append(model.logp(vars=[model["outcome"]]))
    f = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore")
    for seed in range(2):
        *values, pot, human_logp = f(_pymc_point(model, seed))
        params = dict(zip(names, values, strict=True))
        assert pot + human_logp == pytest.approx(hc.loglik(params, data, llm_weight=lam),
                                                 rel=1e-10)
        assert human_logp == pytest.approx(hc.loglik(params, data, llm_weight=0), rel=1e-10)
    zero = hm.build(data, llm_weight=0.0)
    assert "human_feature_effect" in zero.named_vars and "feature_effect" not in zero.named_vars


@pytest.mark.slow  # about 7 s of CPU (an L-BFGS run to 1e-10 on the flat power posterior)
def test_pymc_flat_map_equals_the_twin_with_features(small):
    """Flat priors on every identified block: the MAP of the power posterior at λ is the twin's
    weighted estimate (11), the feature effects included, within 1e-5. Catches a chart or
    feature-sign mismatch between the two models."""
    import warnings

    import pymc as pm

    from bayescal.models import human_calibration as hm

    *_, data = small
    lam = 4.0
    model = hm.build(data, llm_weight=lam, priors=hm.Priors.flat())
    start = model.initial_point()
    start.update(hm.initvals(model))
    start["calibration_consensus"] = np.array(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode = pm.find_MAP(start=start, model=model, method="L-BFGS-B", progressbar=False,
                           options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})
    est = hc.fit(data, llm_weight=lam)
    for name in ("human_ability", "ability", "order_effect", "feature_effect",
                 "human_feature_effect"):
        assert np.abs(mode[name] - est.params[name].values).max() < 1e-5, name
