"""DIAL human calibration ((11)/(12) of DIAL 2026): the twin, GACV, the covariance kinds."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import bayescal as bc
from bayescal import simulate_dial as sd
from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.dial import canonical
from bayescal.frequentist import covariance
from bayescal.frequentist import human_calibration as hc
from bayescal.frequentist import low_rank_judges as lr
from bayescal.frequentist._core import MLEBoundaryError
from bayescal.frequentist.human_calibration import path as hc_path
from bayescal.identify import IdentificationError
from bayescal.identify import calibration as condition4


def _joined(llm: Comparisons, human: Comparisons) -> Comparisons:
    return Comparisons.concat([llm, human], humans=["human"])


@pytest.fixture(scope="module")
def small():
    """N = 6, K = 3, r = 1; s_h off the consensus (so finite λ matters)."""
    par = sd.truth(6, 3, 1, random_seed=2)
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    llm, human = sd.llm(par, 3000, random_seed=3), sd.human(par, 400, random_seed=4)
    return par, llm, human, _joined(llm, human)


def _human_rows(human: Comparisons):
    """Individual 0/1 rows of a tie-free human Comparisons (for statsmodels)."""
    i = np.repeat(human.item_i, human.count.astype(int))
    j = np.repeat(human.item_j, human.count.astype(int))
    y = np.concatenate([np.r_[np.ones(int(w)), np.zeros(int(n - w))]
                        for n, w in zip(human.count, human.wins, strict=True)])
    return i, j, y


def _contrast(est, a: str, b: str) -> pd.Series:
    return bc.contrasts(est, parameter="human_ability").loc[
        f"human_ability[{a}] - human_ability[{b}]"]


@pytest.mark.parametrize("space", ["consensus", "full"])
@pytest.mark.parametrize("order", [True, False])
def test_gradient_and_hessian_match_finite_differences(small, space, order):
    """Analytic ∇q_λ and ∇²q_λ against central differences at a random point.

    Catches a dropped curvature (ρ ∇²η) term, a missing c–G cross term of the consensus map
    s = c F Gᵀ1/K, or a wrong λ/n_l scaling; a wrong Hessian would corrupt GACV and the sandwich.
    """
    *_, data = small
    p = hc.problem(data, rank=1, space=space, order_effects=order)
    rng = np.random.default_rng(0)
    z = rng.normal(scale=0.5, size=p.n_zeta)
    lam = 3.7
    dv = hc.derivatives(z, p, lam)
    h = 1e-5
    fd_g = np.empty_like(z)
    fd_H = np.empty((z.size, z.size))
    for e in range(z.size):
        up, dn = z.copy(), z.copy()
        up[e] += h
        dn[e] -= h
        fd_g[e] = (hc.derivatives(up, p, lam).value - hc.derivatives(dn, p, lam).value) / (2 * h)
        fd_H[:, e] = (hc.derivatives(up, p, lam).gradient
                      - hc.derivatives(dn, p, lam).gradient) / (2 * h)
    assert np.max(np.abs(dv.gradient - fd_g)) < 1e-7
    assert np.max(np.abs(dv.hessian - fd_H)) < 1e-6
    assert np.allclose(dv.hessian, dv.hessian.T, atol=1e-12)


def test_lambda_zero_is_the_human_btl_mle(small):
    """λ = 0 equals the centred human BTL fitted by statsmodels' logistic regression; its
    ``expected`` intervals equal the Fisher ones (L⁺) and its ``sandwich`` ones statsmodels'
    HC0. Catches a λ = 0 endpoint that keeps any LLM term or ignores the kind asked for."""
    _, llm, hum, data = small
    i, j, y = _human_rows(hum)
    N = llm.n_items
    X = np.zeros((y.size, N))
    X[np.arange(y.size), i] = 1
    X[np.arange(y.size), j] = -1
    for kind, cov_type in (("expected", "nonrobust"), ("observed", "nonrobust"),
                           ("sandwich", "HC0")):
        est = hc.fit(data, llm_weight=0, information=kind)
        res = sm.Logit(y, X[:, 1:]).fit(disp=0, tol=1e-12, cov_type=cov_type)
        s = np.r_[0.0, res.params]
        s -= s.mean()
        assert np.allclose(est.params["human_ability"].values, s, atol=1e-7)
        # contrasts: Var(s_0 − s_1) = Var(β_1) of the reference-coded fit
        row = _contrast(est, llm.items[0], llm.items[1])
        assert row["se"] == pytest.approx(res.bse[0], rel=1e-5), kind
        assert row["estimate"] == pytest.approx(-res.params[0], abs=1e-7)
        assert est.info["llm_weight"] == 0 and est.info["information"] == kind


@pytest.mark.parametrize("space", ["consensus", "full"])
def test_lambda_infinity_is_the_staged_fit(small, space):
    """λ = ∞ equals (12): the low-rank twin's LLM-only MLE, then a logistic regression of the
    human outcomes on M_i − M_j (statsmodels), with its Fisher interval when M is held fixed.
    Catches an anchored endpoint that lets the human data move θ, or the wrong basis."""
    _, llm, hum, data = small
    est = hc.fit(data, llm_weight=np.inf, space=space, anchored="fixed", information="expected")
    lo = lr.fit(llm, rank=1)
    S = lo.params["ability"].values
    assert np.allclose(est.params["ability"].values, S, atol=1e-5)
    assert np.allclose(est.params["order_effect"].values, lo.params["order_effect"].values,
                       atol=1e-5)
    M = canonical(S, 1).basis(space)
    i, j, y = _human_rows(hum)
    res = sm.Logit(y, M[i] - M[j]).fit(disp=0, tol=1e-12)
    assert np.allclose(est.params["human_ability"].values, M @ res.params, atol=1e-5)
    v = np.zeros(llm.n_items)
    v[0], v[1] = 1, -1
    se = np.sqrt(v @ M @ res.cov_params() @ M.T @ v)
    assert _contrast(est, llm.items[0], llm.items[1])["se"] == pytest.approx(se, rel=1e-4)


@pytest.mark.parametrize("kind", ["expected", "observed", "sandwich", "cluster"])
def test_lambda_infinity_judges_have_the_low_rank_twins_intervals(small, kind):
    """At λ = ∞ the judges' part is the LLM-only fit: S and b get exactly the low-rank twin's
    covariance of the same kind (its own independent pins), so each kind means the same in the
    two twins. Catches a λ = ∞ path that ignores the kind or mixes the CR corrections."""
    _, llm, _, data = small
    kw = {"cluster": "judge_pair"} if kind == "cluster" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", covariance.FewClustersWarning)
        est = hc.fit(data, llm_weight=np.inf, information=kind, **kw)
        lo = lr.fit(llm, rank=1, information=kind, **kw)
    terms = [t for t in est.terms if t.startswith(("ability", "order_effect"))]
    np.testing.assert_allclose(est.se.loc[terms], lo.se.loc[terms], rtol=1e-5)


def test_finite_lambda_is_stationary_and_moves_between_endpoints(small):
    """At finite λ the projected gradient vanishes and the Hessian has exactly (r+1)² null
    directions; the human NLL decreases monotonically as λ falls (the trade-off (11)).
    Catches a wrong gauge count (every candidate inadmissible) or a λ applied to ℓ_h."""
    *_, data = small
    table, _ = hc.gacv(data)
    assert table["admissible"].all(), table
    nll = table["human_nll"].to_numpy()
    assert np.all(np.diff(nll) <= 1e-10)
    p = hc.problem(data)
    f = hc_path.run_path(p, [p.n_l / p.n_h]).candidates[0].fit
    dv = hc.derivatives(f.zeta, p, f.lam)
    _, free = p.gauge(f.zeta)
    assert np.max(np.abs(free.T @ dv.gradient)) < 1e-8
    assert hc_path.null_count(dv.hessian) == 4


def test_gacv_table_selection_and_ties(small):
    """The table lists the 9 candidates (∞, 7 finite, 0) in scan order, exactly one selected,
    the admissible minimiser; each Estimate records its λ."""
    _, llm, hum, data = small
    table, est = hc.gacv(data)
    assert len(table) == 9 and table["llm_weight"].iloc[0] == np.inf
    assert table["llm_weight"].iloc[-1] == 0
    lam0 = llm.n_rows / hum.n_rows
    assert np.isclose(table["llm_weight"].iloc[4], lam0)
    sel = table[table["selected"]]
    assert len(sel) == 1
    assert sel["gacv"].iloc[0] == table.loc[table["admissible"], "gacv"].min()
    assert est.info["llm_weight"] == sel["llm_weight"].iloc[0]
    assert (table["reason_code"] == "").all()


def test_gacv_gap_to_exact_loo_shrinks_like_nh_squared():
    """Theorem 5: |GACV − CV_LOO| = O(n_h⁻²), so doubling n_h divides the largest gap over the
    grid by ≈ 4 (measured 4.5 for this seed); we require ≥ 3 at each doubling, and the gap at
    n_h = 800 below 1e-4. Catches a GACV with 1/n_h instead of 1/(n_h − 1), an uncentred Ĵ
    (both O(n_h⁻¹) gaps: ratio ≈ 2) or a Hessian without the LLM block."""
    par = sd.truth(5, 3, 1, random_seed=1)
    par["s_h"] = par["mu"] + 0.5 * par["V"][:, 0]
    llm = sd.llm(par, 3000, random_seed=3)
    gaps = []
    for nh in (200, 400, 800):
        data = _joined(llm, sd.human(par, nh, random_seed=4))
        lam0 = llm.n_rows / nh
        tab = hc.exact_loo(data, grid_values=[np.inf, 10 * lam0, lam0, 0.1 * lam0, 0])
        assert tab["loo"].notna().all()
        gaps.append(tab["gap"].abs().max())
    assert gaps[0] / gaps[1] >= 3 and gaps[1] / gaps[2] >= 3, gaps
    assert gaps[2] < 1e-4


# ---------------------------------------------------------------- covariances at a finite λ
def _reference(data: Comparisons, est, lam: float, battle: bool = False) -> dict[str, pd.Series]:
    """Every kind's covariance at a finite λ rebuilt independently of the twin.

    Gauge-fixed chart of the joint model (consensus space): G = [I; G₂], F = B_N F̃, b, c with
    S = G Fᵀ and s_h = c F Gᵀ1/K. The observed H is minus the finite-difference Hessian of the
    public ``loglik`` at λ, divided by n_h; the Fisher informations per observation are
    Σ n p(1 − p) ∇d ∇dᵀ / n with ∇d by finite differences of the linear predictors written here.
    Meats: model-based I_h + λ²τ I_l (τ = n_h/n_l; written λτ H + (1 − λτ) I_h for the observed
    kind, the chart-free form), centred per-verdict (from the cells' Σy, Σy²) and, for the
    cluster kind, the centred judge × pair cluster totals with G/(G − 1) (LLM) and
    per-comparison humans — or, with ``battle``, both samples clustered by the data's battle
    key. Cov = H⁻¹ J H⁻¹ / n_h, carried to (ŝ_h, S, b) by a numeric delta method."""
    hcode = data.judges.index("human")
    llm_judges = [j for j in data.judges if j != "human"]
    K, N, r1 = len(llm_judges), data.n_items, 2
    hum = data.judge == hcode
    kk = np.array([llm_judges.index(data.judges[k]) if k != hcode else -1 for k in data.judge])
    n_h, n_l = data.count[hum].sum(), data.count[~hum].sum()
    S0 = est.params["ability"].values
    P, sv, Qt = np.linalg.svd(S0, full_matrices=False)
    G, F = P[:, :r1] * sv[:r1], Qt[:r1].T
    top = G[:r1]
    G2, F = (G @ np.linalg.inv(top))[r1:], F @ top.T
    basis = zero_sum_basis(N)
    mu_code = F @ np.vstack([np.eye(r1), G2]).sum(axis=0) / K
    s0 = est.params["human_ability"].values
    c0 = s0 @ mu_code / (mu_code @ mu_code)
    x0 = np.r_[G2.ravel(), (basis.T @ F).ravel(), est.params["order_effect"].values, c0]
    n_g, n_f = G2.size, (N - 1) * r1

    def unpack(x):
        Gx = np.vstack([np.eye(r1), x[:n_g].reshape(-1, r1)])
        Fx = basis @ x[n_g:n_g + n_f].reshape(-1, r1)
        bx = x[n_g + n_f:n_g + n_f + K]
        return Gx @ Fx.T, bx, x[-1] * Fx @ Gx.sum(axis=0) / K

    def params(x):
        S, b, s = unpack(x)
        return {"ability": S, "order_effect": b, "human_ability": s}

    def total_ll(x):
        return hc.loglik(params(x), data, llm_weight=lam)

    def hessian(f, h=1e-4):
        eye = np.eye(len(x0))
        H = np.array([[(f(x0 + h * a + h * e) - f(x0 + h * a - h * e) - f(x0 - h * a + h * e)
                        + f(x0 - h * a - h * e)) / (4 * h * h) for e in eye] for a in eye])
        return -(H + H.T) / 2

    def predictor(x):
        S, b, s = unpack(x)
        k = np.where(hum, 0, kk)
        eta = S[k, data.item_i] - S[k, data.item_j] + data.order * b[k]
        return np.where(hum, s[data.item_i] - s[data.item_j], eta)

    eye = np.eye(len(x0))
    X = np.array([(predictor(x0 + 1e-6 * e) - predictor(x0 - 1e-6 * e)) / 2e-6 for e in eye]).T
    p = 1 / (1 + np.exp(-predictor(x0)))
    n, y, y2 = data.count, data.wins, data.wins_sq

    def gram(weight, mask, total):
        return (X[mask] * weight[mask, None]).T @ X[mask] / total

    info_e = {"h": gram(n * p * (1 - p), hum, n_h), "l": gram(n * p * (1 - p), ~hum, n_l)}
    H_obs = hessian(total_ll) / n_h
    rho = n * p - y
    sq = y2 - 2 * p * y + n * p**2
    gbar = {"h": X[hum].T @ rho[hum] / n_h, "l": X[~hum].T @ rho[~hum] / n_l}
    per_verdict = {"h": gram(sq, hum, n_h) - np.outer(gbar["h"], gbar["h"]),
                   "l": gram(sq, ~hum, n_l) - np.outer(gbar["l"], gbar["l"])}

    def clustered(mask, part, codes, cell, count, wins, total):
        rows = (count * p[cell] - wins)[:, None] * X[cell] - count[:, None] * gbar[part]
        keep = mask[cell]
        codes, rows = codes[keep], rows[keep]
        tot = np.array([rows[codes == g].sum(axis=0) for g in np.unique(codes)])
        g = len(tot)
        return g / (g - 1) * tot.T @ tot / total

    if battle:
        args = (data.cluster_code, data.cluster_cell, data.cluster_count, data.cluster_wins)
        cl = {"h": clustered(hum, "h", *args, n_h), "l": clustered(~hum, "l", *args, n_l)}
    else:
        pair = data.judge * 10_000 + data.item_i * 100 + data.item_j
        cells = np.arange(data.n_cells)
        cl = {"h": per_verdict["h"],
              "l": clustered(~hum, "l", pair, cells, data.count, data.wins, n_l)}
    tau = n_h / n_l
    H_exp = info_e["h"] + lam * info_e["l"]
    model_based = info_e["h"] + lam**2 * tau * info_e["l"]
    kinds = {"expected": (H_exp, model_based),
             "observed": (H_obs, lam * tau * H_obs + (1 - lam * tau) * info_e["h"]),
             "sandwich": (H_obs, per_verdict["h"] + lam**2 * tau * per_verdict["l"]),
             "cluster": (H_obs, cl["h"] + lam**2 * tau * cl["l"])}

    def targets(x):
        S, b, s = unpack(x)
        return np.r_[s, S.ravel(), b]

    J = np.array([(targets(x0 + 1e-6 * e) - targets(x0 - 1e-6 * e)) / 2e-6 for e in eye]).T
    labels = ([f"human_ability[{i}]" for i in data.items]
              + [f"ability[{j}, {i}]" for j in llm_judges for i in data.items]
              + [f"order_effect[{j}]" for j in llm_judges])
    out = {}
    for kind, (bread, meat) in kinds.items():
        Hinv = np.linalg.inv(bread)
        cov = Hinv @ meat @ Hinv / n_h
        out[kind] = pd.Series(np.sqrt(np.diag(J @ cov @ J.T)), index=labels)
    return out


@pytest.fixture(scope="module")
def rough():
    """Judge–pair overdispersion (σ_L = 1) and s_h off the consensus: the kinds differ (the
    observed and expected SEs by up to ~10 %, the cluster meat from the per-verdict one); a
    battle key shared by ~3 verdicts of one sample."""
    par = sd.truth(6, 3, 1, random_seed=2)
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    llm = sd.llm(par, 3000, overdispersion=1.0, random_seed=3)
    human = sd.human(par, 400, random_seed=4)
    frames = []
    for part, who in ((llm, None), (human, "human")):
        f = part.to_frame()
        reps = part.count.astype(int)
        rows = f.loc[f.index.repeat(reps)].reset_index(drop=True)
        rows["outcome"] = np.concatenate([np.r_[np.ones(int(w)), np.zeros(int(n - w))]
                                          for n, w in zip(part.count, part.wins, strict=True)])
        if who is not None:
            rows["order"] = 1  # from_frame needs ±1 in a shared column; humans' is pooled
        rows["kind"] = "llm" if who is None else "human"
        frames.append(rows)
    frame = pd.concat(frames, ignore_index=True)
    frame["battle"] = np.random.default_rng(0).integers(0, len(frame) // 3, len(frame))
    frame["battle"] = frame["kind"] + frame["battle"].astype(str)  # within one sample
    return Comparisons.from_frame(frame.rename(columns={"item_i": "item_a",
                                                        "item_j": "item_b"}),
                                  humans=["human"], cluster="battle")


LAM = 5.0


@pytest.fixture(scope="module")
def rough_fits(rough):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", covariance.FewClustersWarning)
        fits = {kind: hc.fit(rough, llm_weight=LAM, information=kind)
                for kind in ("expected", "observed", "sandwich")}
        fits["cluster"] = hc.fit(rough, llm_weight=LAM, information="cluster",
                                 cluster="judge_pair")
        fits["battle"] = hc.fit(rough, llm_weight=LAM, information="cluster", cluster="battle")
    return fits


def test_finite_lambda_covariances_match_an_independent_computation(rough, rough_fits):
    """Through the public ``fit(data, llm_weight=λ)``: each kind's SEs of ŝ_h, S and b equal
    the independent rebuild of ``_reference`` to 0.5 %. Standard errors × 1.2, the expected
    information in place of the observed (SEs differ by > 2 % here, checked), a dropped λ²τ V_l
    meat, a meat on the wrong key: each fails here. (The human display order is recorded as +1
    in this frame; the calibration pools it away.)"""
    ref = _reference(rough, rough_fits["observed"], LAM)
    for kind in ("expected", "observed", "sandwich", "cluster"):
        se = rough_fits[kind].se.loc[ref[kind].index]
        np.testing.assert_allclose(se, ref[kind], rtol=5e-3, err_msg=kind)
        assert rough_fits[kind].info["information"] == kind
    assert (ref["observed"] / ref["expected"] - 1).abs().max() > 0.02
    assert (ref["cluster"] / ref["sandwich"] - 1).abs().max() > 0.1


def test_the_data_own_cluster_key_is_used(rough, rough_fits):
    """cluster='battle' clusters both samples by the battles (the named key is used, not DIAL's
    cells), CR1; CR0 reproduces the authors' factor; auto picks the data's key."""
    ref = _reference(rough, rough_fits["observed"], LAM, battle=True)
    se = rough_fits["battle"].se.loc[ref["cluster"].index]
    np.testing.assert_allclose(se, ref["cluster"], rtol=5e-3)
    assert rough_fits["battle"].info["cluster"] == "battle"
    assert not np.allclose(se, rough_fits["cluster"].se.loc[se.index], rtol=0.01)
    auto = hc.fit(rough, llm_weight=LAM)
    assert auto.info["information"] == "cluster" and auto.info["cluster"] == "battle"
    np.testing.assert_allclose(auto.cov, rough_fits["battle"].cov, rtol=1e-10, atol=1e-14)


def test_cr0_is_the_authors_judge_pair_meat(small):
    """correction='CR0' drops the LLM meat's G/(G − 1) only (the human part is per comparison):
    at λ = ∞ the judges' covariance scales by exactly G/(G − 1)."""
    *_, data = small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", covariance.FewClustersWarning)
        cr1 = hc.fit(data, llm_weight=np.inf, information="cluster", cluster="judge_pair")
        cr0 = hc.fit(data, llm_weight=np.inf, information="cluster", cluster="judge_pair",
                     correction="CR0")
    g = hc.problem(data).llm.cluster_records("judge_pair").n_clusters
    terms = [t for t in cr1.terms if t.startswith("ability")]
    np.testing.assert_allclose(cr1.se.loc[terms] ** 2, cr0.se.loc[terms] ** 2 * g / (g - 1),
                               rtol=1e-9)
    assert cr0.info["correction"] == "CR0"


def test_expected_is_not_replaced(small):
    """information='expected' gives the model-based covariance it names (not the cluster
    sandwich, as the CLI used to substitute): at λ = n_l/n_h it is the inverse Fisher
    information of the joint MLE, H⁻¹/n_h."""
    _, llm, hum, data = small
    lam0 = llm.n_rows / hum.n_rows
    est = hc.fit(data, llm_weight=lam0, information="expected")
    assert est.info["information"] == "expected" and "expected" in est.info["intervals"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", covariance.FewClustersWarning)
        clustered = hc.fit(data, llm_weight=lam0, information="cluster", cluster="judge_pair")
    assert not np.allclose(est.cov, clustered.cov, rtol=1e-3)


def test_finite_lambda_intervals_cover_in_monte_carlo():
    """Through the public ``fit(data, llm_weight=λ)``: sandwich SEs of three contrasts at
    λ = n_l/n_h (both samples random, n_l/n_h = 2, so the λ²τ V_l term matters) and the λ = ∞
    delta-method SEs against the spread of R = 200 refits. With R = 200 the relative error of
    an SD is ≈ 1/√(2R) = 5 %; mean SE / MC SD must lie in [0.85, 1.15] for each contrast (SEs
    × 1.2 fall outside). The fixed-M interval at λ = ∞ is narrow (< 0.85)."""
    par = sd.truth(5, 3, 1, random_seed=5)
    par["s_h"] = par["mu"] + 0.3 * par["V"][:, 0]
    items = [f"item_{i:02d}" for i in range(5)]
    pairs = [(0, 1), (2, 3), (1, 4)]
    est_fin, se_fin, est_inf, se_joint, se_fixed = [], [], [], [], []
    for rep in range(200):
        data = _joined(sd.llm(par, 1000, random_seed=1000 + 7 * rep),
                       sd.human(par, 500, random_seed=5000 + 7 * rep))
        fin = hc.fit(data, llm_weight=2.0, information="sandwich")
        joint = hc.fit(data, llm_weight=np.inf, information="sandwich")
        fixed = hc.fit(data, llm_weight=np.inf, information="sandwich", anchored="fixed")
        rows = {name: [_contrast(e, items[a], items[b]) for a, b in pairs]
                for name, e in (("fin", fin), ("joint", joint), ("fixed", fixed))}
        est_fin.append([r["estimate"] for r in rows["fin"]])
        se_fin.append([r["se"] for r in rows["fin"]])
        est_inf.append([r["estimate"] for r in rows["joint"]])
        se_joint.append([r["se"] for r in rows["joint"]])
        se_fixed.append([r["se"] for r in rows["fixed"]])
    ratio = np.mean(se_fin, axis=0) / np.std(est_fin, axis=0, ddof=1)
    assert np.all((ratio > 0.85) & (ratio < 1.15)), ratio
    sd_inf = np.std(est_inf, axis=0, ddof=1)
    ratio_inf = np.mean(se_joint, axis=0) / sd_inf
    assert np.all((ratio_inf > 0.85) & (ratio_inf < 1.15)), ratio_inf
    assert np.min(np.mean(se_fixed, axis=0) / sd_inf) < 0.85


def test_few_clusters_warn_on_a_prd_like_design():
    """PRD Vicuna80's design (5 models: 10 pairs per judge, both orders, 5 judges): the
    cell-clustered covariance rests on 10 clusters per judge for its 3 own parameters: warned,
    as in the judges' twins."""
    from bayescal import simulate

    truth = simulate.low_rank_judges_truth(5, 5, 1, random_seed=2)
    llm = simulate.low_rank_judges(truth, 4000, both_orders=True, random_seed=3)
    par = {"s_h": truth["consensus"].values}
    human = sd.human(par, 300, random_seed=4)
    data = _joined(llm, human)
    with pytest.warns(covariance.FewClustersWarning, match=r"10 clusters for 3 parameters"):
        hc.fit(data, llm_weight=2.0, information="cluster", cluster="judge_pair")


def test_covariance_requests_are_checked_before_fitting(small):
    *_, data = small
    with pytest.raises(ValueError, match="unknown cluster key 'battle'"):
        hc.fit(data, information="cluster", cluster="battle")
    with pytest.raises(ValueError, match="only apply to information='cluster'"):
        hc.gacv(data, information="sandwich", correction="CR0")
    with pytest.raises(ValueError, match="information must be one of"):
        hc.fit(data, information="fisher")


def test_loglik_is_the_weighted_objective(small):
    """loglik(params, data, llm_weight=λ) = −n_h q_λ at the fit (the twin's own objective) and
    refuses a human score vector outside the calibration space."""
    *_, data = small
    est = hc.fit(data, llm_weight=LAM)
    params = {k: est.params[k].values for k in ("human_ability", "ability", "order_effect")}
    p = hc.problem(data)
    f = hc_path.run_path(p, [LAM]).candidates[0].fit
    assert hc.loglik(params, data, llm_weight=LAM) == pytest.approx(
        -p.n_h * hc.derivatives(f.zeta, p, LAM).value, rel=1e-10)
    bad = dict(params, human_ability=params["human_ability"] + np.r_[1.0, -1.0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="calibration space"):
        hc.loglik(bad, data, llm_weight=LAM)
    with pytest.raises(ValueError, match="staged"):
        hc.loglik(params, data, llm_weight=np.inf)


def test_lr_test_matches_statsmodels(small):
    """Calibration LR statistic = 2 × (log-lik of the human BTL − log-lik of the logistic fit on
    μ) from statsmodels; df = N − 1 − d; AICs. Catches average instead of total NLLs."""
    _, llm, hum, data = small
    out = hc.calibration_lr_test(data)
    i, j, y = _human_rows(hum)
    N = llm.n_items
    X = np.zeros((y.size, N))
    X[np.arange(y.size), i] = 1
    X[np.arange(y.size), j] = -1
    full = sm.Logit(y, X[:, 1:]).fit(disp=0, tol=1e-12)
    mu = canonical(lr.fit(llm, rank=1).params["ability"].values, 1).consensus
    restricted = sm.Logit(y, (mu[i] - mu[j])[:, None]).fit(disp=0, tol=1e-12)
    assert out.statistic == pytest.approx(2 * (full.llf - restricted.llf), rel=1e-5)
    assert out.df == N - 2
    assert out.aic_human == pytest.approx(-2 * full.llf + 2 * (N - 1), rel=1e-6)


# ---------------------------------------------------------------------------- bad input
def test_items_only_humans_compared_are_named(small):
    _, llm, _, _ = small
    hum = Comparisons.from_codes(["item_00", "zzz"], ["human"], judge=[0, 0], item_a=[0, 0],
                                 item_b=[1, 1], outcome=[1, 0])
    with pytest.raises(DataError, match="zzz"):
        hc.fit(_joined(llm, hum))


def test_unmarked_humans_are_refused(small):
    _, llm, _, _ = small
    with pytest.raises(DataError, match="no judge is marked human"):
        hc.fit(llm)
    with pytest.raises(DataError, match="Comparisons"):
        hc.fit(None)


def test_several_human_judges_are_pooled(small):
    """Two human judges are one human score vector: the fit equals the one with them merged."""
    _, llm, hum, data = small
    i, j, y = _human_rows(hum)
    who = np.arange(y.size) % 2  # alternate verdicts between two raters
    h12 = Comparisons.from_codes(hum.items, ["h1", "h2"], judge=who, item_a=i, item_b=j,
                                 outcome=y)
    h1, h2 = h12.subset(["h1"]), h12.subset(["h2"])
    two = Comparisons.concat([llm, h1, h2], humans=["h1", "h2"])
    a = hc.fit(two, llm_weight=LAM, information="sandwich")
    b = hc.fit(data, llm_weight=LAM, information="sandwich")
    np.testing.assert_allclose(a.params["human_ability"], b.params["human_ability"], atol=1e-9)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-8, atol=1e-12)


def test_condition4_needs_d_pairs(small):
    """Full space (d = 2) with humans comparing a single pair: refused before fitting."""
    _, llm, _, _ = small
    hum = Comparisons.from_codes(list(llm.items), ["human"], judge=[0, 0, 0], item_a=[0, 0, 0],
                                 item_b=[1, 1, 1], outcome=[1, 0, 1])
    with pytest.raises(IdentificationError, match="Condition 4"):
        hc.fit(_joined(llm, hum), space="full")


def test_condition4_rank_check():
    """rank(D_h M) < d: a compared pair with equal consensus scores is invisible to c."""
    items = ("a", "b", "c")
    M = np.array([[1.0], [1.0], [-2.0]])
    with pytest.raises(IdentificationError, match="Condition 4"):
        condition4(items, np.array([0]), np.array([1]), M)
    condition4(items, np.array([0]), np.array([2]), M)


def test_human_mle_missing_excludes_lambda_zero(small):
    """An item that never loses to humans: the λ = 0 candidate is inadmissible with the reason
    named (Zermelo) and coded, the others are fitted; λ = 0 alone raises MLEBoundaryError."""
    _, llm, hum, _ = small
    i, j, y = _human_rows(hum)
    keep = ~(((i == 0) & (y == 0)) | ((j == 0) & (y == 1)))  # item 0 never loses
    h2 = Comparisons.from_codes(list(llm.items), ["human"], judge=np.zeros(keep.sum()),
                                item_a=i[keep], item_b=j[keep], outcome=y[keep])
    data = _joined(llm, h2)
    table, est = hc.gacv(data)
    last = table.iloc[-1]
    assert not last["admissible"] and "never lose" in last["reason"]
    assert last["reason_code"] == hc.Reason.HUMAN_MLE_MISSING.name
    assert est.info["llm_weight"] > 0
    with pytest.raises(MLEBoundaryError, match="never lose"):
        hc.fit(data, llm_weight=0)


def test_bad_weight(small):
    *_, data = small
    with pytest.raises(ValueError, match="llm_weight"):
        hc.fit(data, llm_weight=-1)
    assert isinstance(hc.gacv(data, grid_values=[np.inf, 0])[0], pd.DataFrame)


def test_zero_sum(small):
    """Estimates and covariances are centred (Σ_s 1 = 0)."""
    *_, data = small
    est = hc.fit(data, llm_weight=5.0)
    s = est.params["human_ability"].values
    assert abs(s.sum()) < 1e-8
    N = data.n_items
    assert np.abs(est.cov[:N, :N] @ np.ones(N)).max() < 1e-8


def test_baselines(small):
    """DIAL's Section 6 methods: Pooled is α̂ × (pooled BTL, checked by its score equation); AtC
    is monotone in the human order and centred; DIAL-Anc equals λ = ∞. Catches an AtC fitted in
    the wrong order or a Pooled scale that ignores the human data."""
    from bayescal.frequentist import dial_baselines as db

    _, llm, hum, data = small
    scores, info, ests = db.baselines(data)
    assert ests["DIAL-Ada"].info["llm_weight"] == info.loc["DIAL-Ada", "llm_weight"]
    assert list(scores.columns) == list(db.METHODS)
    assert scores.notna().all().all()
    c = llm.collapse(order=True, judges=True)
    pool = db.pooled_btl(data)
    r = c.count * (1 / (1 + np.exp(-(pool[c.item_i] - pool[c.item_j])))) - c.wins
    g = np.bincount(c.item_i, r, llm.n_items) - np.bincount(c.item_j, r, llm.n_items)
    assert np.abs(g).max() < 1e-6 * c.count.sum()
    alpha = scores["Pooled"].to_numpy() / pool
    assert np.allclose(alpha, alpha[0])
    i, j, y = _human_rows(hum)
    x = pool[i] - pool[j]
    assert abs(np.sum(x * (1 / (1 + np.exp(-alpha[0] * x)) - y))) < 1e-6 * len(y)
    order = np.argsort(scores["Human"].to_numpy(), kind="stable")
    atc = scores["AtC"].to_numpy()
    assert np.all(np.diff(atc[order]) >= -1e-12) and abs(atc.sum()) < 1e-10
    anc = hc.fit(data, llm_weight=np.inf).params["human_ability"].values
    assert np.allclose(scores["DIAL-Anc"], anc)
    assert info.loc["DIAL-Anc", "llm_weight"] == np.inf


def _csvs(tmp_path, llm, hum):
    lf = llm.to_frame()
    rows = lf.loc[lf.index.repeat(lf["count"].astype(int))].reset_index(drop=True)
    out = np.concatenate([np.r_[np.ones(int(w)), np.zeros(int(n - w))]
                          for n, w in zip(lf["count"], lf["wins"], strict=True)])
    pd.DataFrame({"judge": rows["judge"], "item_a": rows["item_i"], "item_b": rows["item_j"],
                  "order": rows["order"], "outcome": out}).to_csv(tmp_path / "llm.csv",
                                                                  index=False)
    i, j, y = _human_rows(hum)
    items = np.asarray(hum.items)
    pd.DataFrame({"item_a": items[i], "item_b": items[j], "outcome": y}).to_csv(
        tmp_path / "human.csv", index=False)
    return tmp_path / "llm.csv", tmp_path / "human.csv"


def test_cli_human_calibration(small, tmp_path, capsys):
    """``bayescal fit human-calibration`` prints the GACV table and the calibrated scores equal to
    the library's; a fixed λ, --information expected (used, not replaced) and bad input (no
    --human, negative λ) are handled."""
    from bayescal.cli import main

    _, llm, hum, data = small
    lpath, hpath = _csvs(tmp_path, llm, hum)
    assert main(["fit", "human-calibration", str(lpath), "--human", str(hpath), "--method",
                 "mle", "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "GACV over λ" in text and "Leaderboard of human_ability" in text
    assert all(x in text for x in llm.items)
    saved = pd.read_csv(tmp_path / "out" / "summary.csv", index_col=0)
    _, est = hc.gacv(data)
    assert np.allclose(saved.loc[[f"human_ability[{x}]" for x in llm.items], "estimate"],
                       est.params["human_ability"].values, atol=1e-8)
    assert main(["fit", "human-calibration", str(lpath), "--human", str(hpath), "--method",
                 "mle", "--llm-weight", "inf", "--space", "full"]) == 0
    assert "λ = inf" in capsys.readouterr().err   # notes go to stderr, tables to stdout
    assert main(["fit", "human-calibration", str(lpath), "--human", str(hpath), "--method",
                 "mle", "--llm-weight", "5", "--information", "expected"]) == 0
    assert "joint expected" in capsys.readouterr().err
    assert main(["fit", "human-calibration", str(lpath), "--method", "mle"]) == 2
    assert "--human" in capsys.readouterr().err
    assert main(["fit", "human-calibration", str(lpath), "--human", str(hpath),
                 "--llm-weight", "-1"]) == 2
    assert "λ ≥ 0" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_demo_dial(capsys):
    """``bayescal demo --dial`` runs end to end (NUTS included; ~1 min)."""
    from bayescal.cli import main

    assert main(["demo", "--dial", "--draws", "100", "--tune", "100", "--chains", "1"]) == 0
    out = capsys.readouterr().out
    assert "GACV path" in out and "Calibrated leaderboard" in out and "Kendall" in out


def test_separated_judge_is_reported_not_crashed():
    """n_l = 400 verdicts under judge-pair overdispersion (DIAL Fig. 2 bottom row, seed 6): one
    judge is separated, the LLM-only MLE runs off. λ = ∞ is inadmissible with the reason named
    and coded, the baselines report it instead of crashing, and fit(λ = ∞) raises
    MLEBoundaryError."""
    from bayescal.frequentist import dial_baselines as db

    par = sd.truth(10, 4, 1, random_seed=6)
    data = _joined(sd.llm(par, 400, overdispersion=1.0, random_seed=9),
                   sd.human(par, 800, random_seed=10))
    table, _ = hc.gacv(data)
    assert not table["admissible"].iloc[0] and "run off" in table["reason"].iloc[0]
    assert table["reason_code"].iloc[0] == hc.Reason.RUNAWAY.name
    _, info, ests = db.baselines(data)
    assert ests["DIAL-Anc"] is None and "run off" in info.loc["DIAL-Anc", "note"]
    with pytest.raises(MLEBoundaryError, match="run off"):
        hc.fit(data, llm_weight=np.inf)


# ---------------------------------------------------------------- data layer of the calibration
def test_concat_equals_one_frame_with_clusters_and_flips():
    """Comparisons.concat of two parts equals the data built from their joined frame: cells,
    humans and the cluster records, also where a part's canonical pair is reversed in the
    union's coding (labels that interleave: 'b' < 'c' in one part, 'a' joins from the other)."""
    left = pd.DataFrame({"judge": ["j1", "j1", "j2", "j2"], "item_a": ["c", "b", "c", "b"],
                         "item_b": ["b", "c", "b", "c"], "outcome": [1.0, 0.5, 0.0, 1.0],
                         "order": [1, -1, 1, 1], "battle": ["x", "x", "y", "z"]})
    right = pd.DataFrame({"judge": ["h", "h", "h"], "item_a": ["a", "c", "b"],
                          "item_b": ["c", "a", "a"], "outcome": [1.0, 0.0, 0.5],
                          "order": [1, 1, -1], "battle": ["x", "w", "w"]})
    whole = Comparisons.from_frame(pd.concat([left, right], ignore_index=True), humans=["h"],
                                   cluster="battle")
    parts = Comparisons.concat([Comparisons.from_frame(left, cluster="battle"),
                                Comparisons.from_frame(right, cluster="battle")], humans=["h"])
    pd.testing.assert_frame_equal(parts.to_frame(), whole.to_frame())
    assert parts.humans == whole.humans == ("h",) and parts.cluster_key == "battle"
    a, b = parts.cluster_records(), whole.cluster_records()
    assert a.labels == b.labels
    order_a = np.lexsort((a.cell, a.code))
    order_b = np.lexsort((b.cell, b.code))
    for field in ("code", "cell", "count", "wins"):
        np.testing.assert_array_equal(getattr(a, field)[order_a], getattr(b, field)[order_b])
    with pytest.raises(DataError, match="different cluster keys"):
        Comparisons.concat([Comparisons.from_frame(left, cluster="battle"),
                            Comparisons.from_frame(right)])


def test_outcome_counts_and_verdicts_read_ties_from_the_cells():
    """wins/ties/losses per cell from (n, Σy, Σy²), and one row per verdict; soft outcomes are
    refused (they are not whole verdicts)."""
    c = Comparisons.from_codes(["a", "b"], ["h"], judge=[0] * 5, item_a=[0, 0, 0, 1, 1],
                               item_b=[1, 1, 1, 0, 0], outcome=[1, 0.5, 0, 1, 0.5])
    wins, ties, losses = c.outcome_counts()
    assert (wins[0], ties[0], losses[0]) == (1, 2, 2)
    cell, y = c.verdicts()
    assert sorted(y.tolist()) == [0.0, 0.0, 0.5, 0.5, 1.0] and (cell == 0).all()
    soft = Comparisons.from_codes(["a", "b"], ["h"], judge=[0], item_a=[0], item_b=[1],
                                  outcome=[0.3], fractional=True)
    with pytest.raises(DataError, match="soft outcomes"):
        soft.outcome_counts()


def _separated(small):
    """``small`` with judge_00's verdicts replaced by a strict order (the lower item index
    always wins): its own BTL MLE does not exist, and its scores run off in every fit."""
    _, llm, hum, _ = small
    f = llm.to_frame()
    sep = f["judge"] == "judge_00"
    f.loc[sep, "wins"] = np.where(f.loc[sep, "item_i"] < f.loc[sep, "item_j"], 1.0, 0.0) * f.loc[
        sep, "count"]
    rows = f.loc[f.index.repeat(f["count"].astype(int))].reset_index(drop=True)
    wins = np.concatenate([np.r_[np.ones(int(w)), np.zeros(int(n - w))]
                           for n, w in zip(f["count"], f["wins"], strict=True)])
    llm2 = Comparisons.from_frame(pd.DataFrame({
        "judge": rows["judge"], "item_a": rows["item_i"], "item_b": rows["item_j"],
        "order": rows["order"], "outcome": wins}))
    return _joined(llm2, hum)


def test_gacv_refuses_when_no_lambda_is_admissible(small):
    """No admissible λ (a judge's verdicts separate) is refused with the reasons and the judge,
    not reported as λ = ∞ with scores near 1000 and standard errors near 6e4 behind a
    RuntimeWarning (the old behaviour). Catches: a fallback estimate printed anyway, and a
    refusal that does not name the separated judge."""
    data = _separated(small)
    table, est = hc.gacv(data)  # λ = 0 (human only) is the one admissible candidate
    assert est.info["llm_weight"] == 0.0 and table["admissible"].sum() == 1
    assert table["reason"].iloc[:-1].str.contains("judge 'judge_00'").all()
    with pytest.raises(MLEBoundaryError) as err:
        hc.gacv(data, grid_values=[np.inf, 5.0, 1.0])
    text = str(err.value)
    assert "no λ on the GACV grid" in text and "'judge_00'" in text and "never lose" in text


def test_gacv_infinity_needs_the_llm_information(small, monkeypatch):
    """λ = ∞ is admissible only where the LLM data identify θ̂_∞ (the check fit(llm_weight=inf)
    makes). Catches: GACV choosing λ = ∞ although θ̂_∞'s information is singular (a judge with
    two cells reached |S| = 16, GACV 0.636, marked admissible)."""
    from bayescal.frequentist.human_calibration import inference

    *_, data = small
    table, _ = hc.gacv(data, grid_values=[np.inf, 0.0])
    assert table.loc[table["llm_weight"] == np.inf, "admissible"].item()
    monkeypatch.setattr(inference, "llm_identified", lambda zeta, p: "singular (simulated)")
    table, est = hc.gacv(data, grid_values=[np.inf, 0.0])
    row = table[table["llm_weight"] == np.inf].iloc[0]
    assert not row["admissible"] and row["reason_code"] == "LLM_NOT_IDENTIFIED"
    assert est.info["llm_weight"] == 0.0


def test_one_blas_thread_limits_every_pool_and_reuses_its_controller():
    """Catches the per-fit BLAS limit not applied (a controller made but its limit never
    entered, or the pools restored too early), and the library rescan on every fit that cost a
    quarter of a human-calibration fit's CPU (a new controller per call)."""
    from threadpoolctl import ThreadpoolController

    from bayescal.frequentist.human_calibration import path

    with path.one_blas_thread():
        inside = [pool["num_threads"] for pool in ThreadpoolController().info()]
    first = path._CONTROLLER[0]
    with path.one_blas_thread():
        pass
    assert inside and all(n == 1 for n in inside), inside
    assert path._CONTROLLER == [first]
