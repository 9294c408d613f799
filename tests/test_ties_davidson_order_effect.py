"""Davidson (1970) ties in the order-effect BTL (DIAL model (1)): twin and PyMC model.

Every expected value here is computed from Davidson's formula on π = exp(score), written
afresh (scipy's multinomial, finite differences, scipy's optimizer), never from the twin's code.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import chi2, multinomial

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.frequentist import judge_discrimination_btl as jd_twin
from bayescal.frequentist import order_effect_btl as twin
from bayescal.identify import IdentificationError
from bayescal.models import judge_discrimination_btl as jd
from bayescal.models import order_effect_btl as oe

ITEMS = np.array(list("abcd"))
JUDGES = np.array(["j1", "j2"])
S = np.array([[0.8, 0.2, -0.3, -0.7], [0.5, -0.5, 0.3, -0.3]])
B = np.array([0.6, -0.3])
NU = np.array([0.5, 1.2])
BETA = np.array([0.4, -0.2])
C = zero_sum_basis(4)


def _frame(n: int, seed: int, feature: bool = False) -> pd.DataFrame:
    """n verdicts of Davidson's model with the order effect inside η (two judges)."""
    rng = np.random.default_rng(seed)
    i = rng.integers(0, 4, n)
    j = (i + rng.integers(1, 4, n)) % 4
    k = rng.integers(0, 2, n)
    a = rng.choice([1, -1], n)
    eta = S[k, i] - S[k, j] + a * B[k]
    frame = pd.DataFrame({"item_a": ITEMS[i], "item_b": ITEMS[j], "judge": JUDGES[k],
                          "order": a})
    if feature:
        # one length per answer, so the feature varies within a pair
        frame["len_a"], frame["len_b"] = rng.normal(size=n), rng.normal(size=n)
        eta = eta + BETA[k] * (frame["len_a"].to_numpy() - frame["len_b"].to_numpy())
    p = np.exp(np.stack([eta / 2, np.log(NU[k]), -eta / 2], axis=1))
    u = rng.random(n)[:, None]
    outcome = (u > np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    frame["outcome"] = np.array([1.0, 0.5, 0.0])[outcome]
    return frame


def _data(n: int, seed: int, feature: bool = False) -> Comparisons:
    frame = _frame(n, seed, feature)
    if feature:
        return Comparisons.from_frame(frame, features={"length": ("len_a", "len_b")})
    return Comparisons.from_frame(frame)


def _verdict_logp(s_i, s_j, order, b, nu, y, x=0.0, beta=0.0):
    """Verdicts' log-probabilities from Davidson's formula with π_i = exp(s_i + (a b + βx)/2),
    π_j = exp(s_j - (a b + βx)/2), through scipy's multinomial (elementwise over arrays)."""
    shift = (np.asarray(order) * b + beta * x) / 2
    pi_i, pi_j = np.exp(s_i + shift), np.exp(s_j - shift)
    tie = nu * np.sqrt(pi_i * pi_j)
    p = np.stack(np.broadcast_arrays(pi_i, tie, pi_j), axis=-1)
    p = p / p.sum(axis=-1, keepdims=True)
    # outcome 1 -> win of item_a, 0.5 -> tie, 0 -> loss
    one_hot = (np.asarray(y)[..., None] == np.array([1.0, 0.5, 0.0])).astype(int)
    return multinomial.logpmf(one_hot, 1, p)


def _direct(frame: pd.DataFrame, s, b, nu, beta=None) -> float:
    """Σ over raw verdicts of :func:`_verdict_logp` (no cells, no twin code)."""
    kk = (frame.judge.to_numpy() == "j2").astype(int)
    ii = np.searchsorted(ITEMS, frame.item_a.to_numpy())
    jj = np.searchsorted(ITEMS, frame.item_b.to_numpy())
    x = (frame.len_a - frame.len_b).to_numpy() if beta is not None else 0.0
    return float(np.sum(_verdict_logp(s[kk, ii], s[kk, jj], frame.order.to_numpy(), b[kk],
                                      nu[kk], frame.outcome.to_numpy(), x,
                                      0.0 if beta is None else beta[kk])))


def _random_point(rng):
    s = rng.normal(size=(2, 4))
    s -= s.mean(axis=1, keepdims=True)
    return s, rng.normal(scale=0.7, size=2), np.exp(rng.normal(size=2))


def test_twin_loglik_equals_scipy_multinomial():
    """Catches a wrong Davidson kernel in the order-effect twin: the order effect left out of η
    (or given the sign of the canonical orientation instead of the display order), ν taken from
    the wrong judge, √(π_i π_j) left out, ties counted as half wins."""
    frame = _frame(300, 0)
    data = Comparisons.from_frame(frame)
    rng = np.random.default_rng(5)
    for _ in range(3):
        s, b, nu = _random_point(rng)
        got = twin.loglik({"ability": s, "order_effect": b, "tie": nu}, data, ties="davidson")
        assert got == pytest.approx(_direct(frame, s, b, nu), rel=1e-10)


def test_twin_loglik_with_features_equals_scipy_multinomial():
    """Catches the feature term dropped from η under Davidson ties (or applied with the wrong
    judge's effect)."""
    frame = _frame(200, 1, feature=True)
    data = Comparisons.from_frame(frame, features={"length": ("len_a", "len_b")})
    s, b, nu = _random_point(np.random.default_rng(2))
    beta = np.array([0.7, -0.4])
    got = twin.loglik({"ability": s, "order_effect": b, "tie": nu,
                       "feature_effect": beta[:, None]}, data, ties="davidson")
    assert got == pytest.approx(_direct(frame, s, b, nu, beta), rel=1e-10)


def _free_loglik(data: Comparisons, theta: np.ndarray) -> float:
    """Public loglik in the free chart (u_k, b_k, log ν_k) per judge, s_k = C u_k."""
    t = theta.reshape(2, 5)
    return twin.loglik({"ability": t[:, :3] @ C.T, "order_effect": t[:, 3],
                        "tie": np.exp(t[:, 4])}, data, ties="davidson")


def _fd_hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    m = len(x)
    out = np.zeros((m, m))
    eye = np.eye(m) * h
    for a in range(m):
        for c in range(a, m):
            out[a, c] = out[c, a] = (f(x + eye[a] + eye[c]) - f(x + eye[a] - eye[c])
                                     - f(x - eye[a] + eye[c])
                                     + f(x - eye[a] - eye[c])) / (4 * h * h)
    return out


def _theta_hat(est) -> np.ndarray:
    s = est.params["ability"].values
    return np.column_stack([s @ C, est.params["order_effect"].values,
                            np.log(est.params["tie"].values)]).ravel()


def _to_raw(est, cov_free: np.ndarray) -> np.ndarray:
    """Carry a free-chart covariance to the estimate's terms: s = C u, ν = exp(log ν)."""
    nu = est.params["tie"].values
    jac = np.zeros((len(est.terms), 10))
    for k, judge in enumerate(JUDGES):
        for i, item in enumerate(ITEMS):
            jac[est.terms.index(f"ability[{judge}, {item}]"), 5 * k:5 * k + 3] = C[i]
        jac[est.terms.index(f"order_effect[{judge}]"), 5 * k + 3] = 1.0
        jac[est.terms.index(f"tie[{judge}]"), 5 * k + 4] = nu[k]
    return jac @ cov_free @ jac.T


def test_information_at_a_random_point_matches_finite_differences():
    """Catches a wrong Davidson information block in the twin: the η-λ cross term (sign, the
    ½ of the η logits), I_ηη written as the Bernoulli p(1-p), I_λλ without the 1 - p_t."""
    data = _data(300, 3)
    theta = np.random.default_rng(4).normal(scale=0.5, size=10)
    for k in range(2):
        mask = data.judge == k
        x = twin._design(data, mask)
        t = theta.reshape(2, 5)[k]
        eta = x @ t[:4]
        logits = np.stack([eta / 2, np.full_like(eta, t[4]), -eta / 2], axis=1)
        p = tuple((np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)).T)
        got = twin._davidson_information(x, data.count[mask], p)
        fd = -_fd_hessian(lambda v: _free_loglik(data, v), theta)[5 * k:5 * k + 5,
                                                                   5 * k:5 * k + 5]
        np.testing.assert_allclose(got, fd, rtol=1e-4, atol=1e-3)


def test_mle_is_stationary_and_expected_covariance_is_inverse_fd_hessian():
    """Catches a wrong Davidson score (the MLE not a zero of the public loglik's gradient), the
    covariance in the wrong chart, the delta method dν/dlog ν = ν left out, and the expected
    and observed kinds not the same matrix (they are, the logits being linear)."""
    data = _data(600, 5)
    est = twin.fit(data, ties="davidson", information="expected")
    theta = _theta_hat(est)
    h = 1e-6
    grad = np.array([(_free_loglik(data, theta + h * e) - _free_loglik(data, theta - h * e))
                     / (2 * h) for e in np.eye(10)])
    np.testing.assert_allclose(grad, 0.0, atol=1e-5)
    hess = -_fd_hessian(lambda v: _free_loglik(data, v), theta)
    np.testing.assert_allclose(est.cov, _to_raw(est, np.linalg.inv(hess)), rtol=1e-4,
                               atol=1e-7)
    np.testing.assert_allclose(twin.fit(data, ties="davidson", information="observed").cov,
                               est.cov, rtol=1e-10)
    assert est.loglik == pytest.approx(_free_loglik(data, theta), rel=1e-12)


def test_sandwich_equals_bread_and_per_verdict_score_meat():
    """Catches a wrong Davidson sandwich meat (an outcome's score with the wrong sign of
    p_w - p_l, a tie scored as a half win, the score rows put in another judge's block): the
    meat must be Σ over verdicts of the outer product of the verdict's own score, here by
    finite differences of one verdict's formula."""
    frame = _frame(300, 6)
    data = Comparisons.from_frame(frame)
    est = twin.fit(data, ties="davidson", information="sandwich")
    theta = _theta_hat(est)
    item = {x: a for a, x in enumerate(ITEMS)}
    meat = np.zeros((10, 10))
    h = 1e-6
    for row in frame.itertuples():
        k = int(row.judge == "j2")

        def one(v, row=row, k=k):
            t = v.reshape(2, 5)[k]
            s = C @ t[:3]
            return _verdict_logp(s[item[row.item_a]], s[item[row.item_b]], row.order, t[3],
                                 np.exp(t[4]), row.outcome)

        score = np.array([(one(theta + h * e) - one(theta - h * e)) / (2 * h)
                          for e in np.eye(10)])
        meat += np.outer(score, score)
    bread = np.linalg.inv(-_fd_hessian(lambda v: _free_loglik(data, v), theta))
    np.testing.assert_allclose(est.cov, _to_raw(est, bread @ meat @ bread), rtol=1e-4,
                               atol=1e-7)
    expected = twin.fit(data, ties="davidson", information="expected").cov
    assert not np.allclose(est.cov, expected, rtol=1e-3)


def test_pymc_logp_equals_twin_loglik():
    """Catches a PyMC Davidson likelihood that differs from the twin's: the order effect not
    inside η, the verdict axis (win, tie, loss) in another order, ν indexed by the wrong judge;
    with features too (the feature term kept under ties)."""
    # one graph (a compile costs seconds): order effect, feature term and ties together
    data = _data(300, 8, feature=True)
    model = oe.build(data, ties="davidson", priors=oe.Priors.flat())
    fn = model.compile_logp(vars=model.observed_RVs, sum=True)
    rng = np.random.default_rng(9)
    for _ in range(3):
        s, b, nu = _random_point(rng)
        beta = rng.normal(size=(2, 1))
        point = {"ability_free": s @ C, "order_effect": b, "log_tie": np.log(nu),
                 "feature_effect": beta}
        params = {"ability": s, "order_effect": b, "tie": nu, "feature_effect": beta}
        want = twin.loglik(params, data, ties="davidson")
        assert float(fn(point)) == pytest.approx(want, rel=1e-9)


def test_flat_map_equals_twin_mle_equals_scipy():
    """Catches a PyMC model whose flat-prior MAP is not the Davidson MLE (a prior left on
    log ν by Priors.flat(), a transform of log_tie shifting the mode) and a twin MLE that is
    not the optimum of Davidson's formula (found here by scipy's BFGS on the raw verdicts)."""
    from bayescal.fitting import fit

    frame = _frame(400, 10)
    data = Comparisons.from_frame(frame)

    def nll(v):
        t = v.reshape(2, 5)
        return -_direct(frame, t[:, :3] @ C.T, t[:, 3], np.exp(t[:, 4]))

    mle = minimize(nll, np.zeros(10), method="BFGS").x.reshape(2, 5)
    est = twin.fit(data, ties="davidson")
    np.testing.assert_allclose(est.params["ability"].values, mle[:, :3] @ C.T, atol=2e-4)
    np.testing.assert_allclose(est.params["order_effect"].values, mle[:, 3], atol=2e-4)
    np.testing.assert_allclose(np.log(est.params["tie"].values), mle[:, 4], atol=2e-4)
    post = fit(oe.build(data, priors=oe.Priors.flat(), ties="davidson"), "map")["posterior"]
    np.testing.assert_allclose(post["ability"].values.reshape(2, 4),
                               est.params["ability"].values, atol=2e-4)
    np.testing.assert_allclose(post["order_effect"].values.ravel(),
                               est.params["order_effect"].values, atol=2e-4)
    np.testing.assert_allclose(post["log_tie"].values.ravel(),
                               np.log(est.params["tie"].values), atol=2e-4)


def test_penalty_adds_the_tie_prior():
    """Catches ``penalty=Priors()`` ignoring ``tie_sd`` (or applying it to ν instead of log ν):
    the penalised optimum must maximise loglik + the Gaussian log priors, found by scipy."""
    frame = _frame(150, 11)
    data = Comparisons.from_frame(frame)
    pri = oe.Priors(ability_sd=2.0, order_effect_sd=1.0, tie_sd=0.3)

    def objective(v):
        t = v.reshape(2, 5)
        # ZeroSumNormal on the Helmert coordinates is N(0, σ²) each (C orthonormal)
        prior = (np.sum(t[:, :3]**2) / pri.ability_sd**2 + np.sum(t[:, 3]**2)
                 / pri.order_effect_sd**2 + np.sum(t[:, 4]**2) / pri.tie_sd**2)
        return -_free_loglik(data, v) + prior / 2

    want = minimize(objective, np.zeros(10), method="BFGS").x.reshape(2, 5)
    est = twin.fit(data, ties="davidson", penalty=pri)
    np.testing.assert_allclose(np.log(est.params["tie"].values), want[:, 4], atol=2e-4)
    np.testing.assert_allclose(est.params["ability"].values, want[:, :3] @ C.T, atol=2e-4)


def _only_tied() -> Comparisons:
    frame = _frame(200, 12)
    frame.loc[frame.judge == "j2", "outcome"] = 0.5
    return Comparisons.from_frame(frame)


def _never_tied() -> Comparisons:
    frame = _frame(200, 12)
    sel = (frame.judge == "j2") & (frame.outcome == 0.5)
    frame.loc[sel, "outcome"] = np.resize([1.0, 0.0], int(sel.sum()))
    return Comparisons.from_frame(frame)


def _no_ties() -> Comparisons:
    frame = _frame(200, 12)
    sel = frame.outcome == 0.5
    frame.loc[sel, "outcome"] = np.resize([1.0, 0.0], int(sel.sum()))
    return Comparisons.from_frame(frame)


_FITTERS = {
    "order-effect twin": lambda d: twin.fit(d, ties="davidson"),
    "order-effect model": lambda d: oe.build(d, ties="davidson"),
    "judge-discrimination twin": lambda d: jd_twin.fit(d, ties="davidson",
                                                      discrimination=False),
    "judge-discrimination model": lambda d: jd.build(d, ties="davidson",
                                                     discrimination=False),
}


@pytest.mark.parametrize("fitter", list(_FITTERS))
@pytest.mark.parametrize("data, match", [
    (_no_ties, "hold none"),
    (_never_tied, r"\['j2'\] gave no tie"),
    (_only_tied, r"\['j2'\] gave only ties"),
])
def test_tie_parameters_refused_the_same_way_everywhere(fitter, data, match):
    """Catches a model or twin that fits a ν at its boundary: no tie at all (every ν → 0),
    a judge who never tied (its ν → 0), a judge who only tied (its ν → ∞, which the
    judge-discrimination checks did not see); the one check names the judge in all four."""
    with pytest.raises(IdentificationError, match=match):
        _FITTERS[fitter](data())


def test_refusals():
    """Catches an unknown tie model accepted (or silently read as half), and a cluster kind
    accepted for Davidson ties although the cluster records carry no ties (asked for, or
    implied by the data's own key under "auto")."""
    data = _data(200, 13)
    with pytest.raises(ValueError, match="ties must be"):
        twin.fit(data, ties="trinomial")
    with pytest.raises(ValueError, match="ties must be"):
        twin.loglik({"ability": S, "order_effect": B}, data, ties="Davidson")
    with pytest.raises(ValueError, match="ties must be"):
        oe.build(data, ties="davidsons")
    with pytest.raises(ValueError, match="no cluster-robust covariance"):
        twin.fit(data, ties="davidson", information="cluster", cluster="judge_pair")
    frame = _frame(200, 13)
    frame["battle"] = np.arange(len(frame)) // 2
    keyed = Comparisons.from_frame(frame, cluster="battle")
    with pytest.raises(ValueError, match="carry the cluster key 'battle'"):
        twin.fit(keyed, ties="davidson")
    with pytest.raises(ValueError, match="positive"):
        twin.loglik({"ability": S, "order_effect": B, "tie": -NU}, data, ties="davidson")


def test_half_default_unchanged():
    """Catches the new option changing today's default (half-win kernel, cell dims, no tie
    parameter in the estimate, "auto" still the sandwich on tied data)."""
    data = _data(200, 14)
    model = oe.build(data)
    assert "log_tie" not in model.named_vars and model["outcome"].ndim == 1
    est = twin.fit(data)
    assert "tie" not in est.params and est.info["information"] == "sandwich"
    assert twin.fit(data, ties="davidson").info["information"] == "expected"


def _spread_check(reps: int, n: int, seed: int) -> None:
    est = {"s": [], "b": [], "nu": []}
    se = {kind: {"s": [], "b": [], "nu": []} for kind in ("expected", "sandwich")}
    for r in range(reps):
        data = _data(n, seed + r)
        for kind in se:
            e = twin.fit(data, ties="davidson", information=kind)
            sd = np.sqrt(np.diag(e.cov))
            for name, term in (("s", "ability[j1, a]"), ("b", "order_effect[j1]"),
                               ("nu", "tie[j1]")):
                se[kind][name].append(sd[e.terms.index(term)])
        est["s"].append(e.params["ability"].values[0, 0])
        est["b"].append(e.params["order_effect"].values[0])
        est["nu"].append(e.params["tie"].values[0])
    lo, hi = chi2.ppf([0.0005, 0.9995], reps - 1)
    for name, values in est.items():
        var = np.var(values, ddof=1)
        for kind in se:
            stat = (reps - 1) * var / np.mean(se[kind][name]) ** 2
            assert lo < stat < hi, (kind, name, np.sqrt(var), np.mean(se[kind][name]))


def test_standard_errors_match_replicate_spread_quick():
    """Catches a Davidson SE off by a factor (ν's delta method left out: its SE would be
    ν̂ = 0.5 times too small; the information counted per cell instead of per verdict): over
    R = 60 fixed-seed replicates, (R-1) SD² / mean(SE)² of ŝ_{j1,a}, b̂_{j1} and ν̂_{j1} lies in
    the central 99.9 % of χ²_{R-1} (SD/SE within about -30 %..+40 % of 1 at R = 60; the slow
    version narrows this to ±12 %)."""
    _spread_check(60, 400, 20_000)


@pytest.mark.slow
def test_standard_errors_match_replicate_spread():
    """Catches a Davidson SE 20 % off (information mis-scaled, a covariance in the wrong
    chart): R = 400 replicates, so the 99.9 % χ² band on SD/SE is about ±12 % and an SE 20 %
    too large or too small leaves it."""
    _spread_check(400, 600, 30_000)


def test_command_line_ties_reach_the_twin(tmp_path, capsys):
    """Catches ``--ties davidson`` on ``fit order-effect-btl`` not reaching the twin (the
    half-win fit run instead, no ``tie`` rows) or a cluster kind accepted there."""
    from bayescal.cli import main
    from bayescal.runs import load_run

    frame = _frame(300, 15)
    csv = tmp_path / "verdicts.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "run"
    assert main(["fit", "order-effect-btl", str(csv), "--ties", "davidson", "--method", "mle",
                 "--out", str(out)]) == 0
    run = load_run(out)
    assert run.meta["options"] == {"ties": "davidson"}
    want = twin.fit(Comparisons.from_frame(frame), ties="davidson").summary()
    pd.testing.assert_series_equal(run.summary["upper"], want["upper"], check_names=False)
    assert main(["fit", "order-effect-btl", str(csv), "--ties", "davidson", "--method", "mle",
                 "--information", "cluster", "--cluster", "judge_pair"]) == 2
    assert "no cluster-robust covariance" in capsys.readouterr().err


def test_features_with_ties_fit_is_the_optimum_with_its_information():
    """Catches the feature columns dropped from (or mis-placed in) the Davidson design of the
    twin: with a comparison feature the MLE must be a zero of the public loglik's gradient and
    the feature effect's SE the inverse finite-difference Hessian's."""
    data = _data(600, 16, feature=True)
    est = twin.fit(data, ties="davidson")
    beta = est.params["feature_effect"].values

    def f(v):
        t = v.reshape(2, 6)
        return twin.loglik({"ability": t[:, :3] @ C.T, "order_effect": t[:, 3],
                            "feature_effect": t[:, 4:5], "tie": np.exp(t[:, 5])}, data,
                           ties="davidson")

    s = est.params["ability"].values
    theta = np.column_stack([s @ C, est.params["order_effect"].values, beta[:, 0],
                             np.log(est.params["tie"].values)]).ravel()
    h = 1e-6
    grad = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(12)])
    np.testing.assert_allclose(grad, 0.0, atol=1e-5)
    cov = np.linalg.inv(-_fd_hessian(f, theta))
    for k, judge in enumerate(JUDGES):
        row = est.terms.index(f"feature_effect[{judge}, length]")
        se = np.sqrt(est.cov[row, row])
        assert se == pytest.approx(np.sqrt(cov[6 * k + 4, 6 * k + 4]), rel=1e-4)
