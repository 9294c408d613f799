"""Davidson (1970) tie model of the judge-discrimination BTL: PyMC logp, twin loglik, refusal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multinomial

from bayescal.data import Comparisons
from bayescal.frequentist import judge_discrimination_btl as twin
from bayescal.models import judge_discrimination_btl as jd

ITEMS = np.array(list("abcd"))
S = np.array([0.8, 0.2, -0.3, -0.7])
GAMMA = {"j1": 1.5, "j2": 0.7}
NU = {"j1": 0.5, "j2": 1.2}


def _davidson_rows(n: int, seed: int) -> list[tuple[str, str, str, float]]:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        i, j = rng.choice(4, 2, replace=False)
        k = str(rng.choice(["j1", "j2"]))
        eta = GAMMA[k] * (S[i] - S[j])
        p = np.exp([eta / 2, np.log(NU[k]), -eta / 2])
        rows.append((ITEMS[i], ITEMS[j], k, [1.0, 0.5, 0.0][rng.choice(3, p=p / p.sum())]))
    return rows


def _davidson_data(n: int, seed: int) -> Comparisons:
    rows = _davidson_rows(n, seed)
    return Comparisons.from_frame(pd.DataFrame(rows, columns=["item_a", "item_b", "judge",
                                                               "outcome"]))


def _direct(data: Comparisons, s, gamma, nu) -> float:
    """Davidson's formula on π = e^s, verdict by verdict, through scipy's multinomial."""
    cells = data.collapse(order=True)
    w, t, l = cells.outcome_counts()
    total = 0.0
    for c in range(cells.n_cells):
        k = cells.judge[c]
        pi_i = np.exp(gamma[k] * s[cells.item_i[c]])
        pi_j = np.exp(gamma[k] * s[cells.item_j[c]])
        tie = nu[k] * np.sqrt(pi_i * pi_j)
        p = np.array([pi_i, tie, pi_j]) / (pi_i + pi_j + tie)
        # one verdict at a time: a product of trinomials without the coefficient
        for x, m in zip(np.eye(3), (w[c], t[c], l[c]), strict=True):
            total += m * multinomial.logpmf(x, 1, p)
    return total


def _random_point(rng, data):
    s = rng.normal(size=data.n_items)
    s -= s.mean()
    lg = rng.normal(scale=0.5, size=data.n_judges)
    lg -= lg.mean()
    return s, np.exp(lg), np.exp(rng.normal(size=data.n_judges))


def test_twin_davidson_loglik_equals_scipy_multinomial():
    """Catches a wrong Davidson kernel in the twin (ν on the wrong side, √(π_i π_j) left out,
    the per-judge γ not applied inside π, ties counted as half wins)."""
    data = _davidson_data(300, 0)
    rng = np.random.default_rng(5)
    for _ in range(3):
        s, gamma, nu = _random_point(rng, data)
        got = twin.loglik({"ability": s, "discrimination": gamma, "tie": nu}, data,
                          ties="davidson")
        assert got == pytest.approx(_direct(data, s, gamma, nu), rel=1e-10)


def test_pymc_davidson_logp_equals_twin_loglik():
    """Catches a PyMC Davidson likelihood that differs from the twin's (the verdict axis in the
    wrong order, ν indexed by the wrong judge, a logsumexp missing a term)."""
    data = _davidson_data(300, 1)
    model = jd.build(data, ties="davidson")
    fn = model.compile_logp(vars=model.observed_RVs, sum=True)
    rng = np.random.default_rng(7)
    for _ in range(3):
        s, gamma, nu = _random_point(rng, data)
        point = model.initial_point()
        point["ability_zerosum__"] = s
        point["log_discrimination_zerosum__"] = np.log(gamma)
        point["log_tie"] = np.log(nu)
        want = twin.loglik({"ability": s, "discrimination": gamma, "tie": nu}, data,
                           ties="davidson")
        assert float(fn(point)) == pytest.approx(want, rel=1e-9)


def test_davidson_refused_without_ties():
    """Catches a Davidson fit on tie-free data, where ν's MLE is at the boundary 0."""
    df = pd.DataFrame({"item_a": ["a", "b", "a", "c"], "item_b": ["b", "c", "c", "a"],
                       "outcome": [1.0, 0.0, 1.0, 0.0]})
    with pytest.warns(Warning), pytest.raises(ValueError, match="not identified"):
        jd.build(Comparisons.from_frame(df), ties="davidson")


def test_davidson_refused_when_one_judge_never_tied():
    """Catches a per-judge ν left at its boundary: ties overall, but judge j2 never tied (a
    flat-prior MAP of its log ν would run to -inf; a prior alone would set it)."""
    rows = []
    rng = np.random.default_rng(5)
    for _ in range(300):
        i, j = rng.choice(4, 2, replace=False)
        k = str(rng.choice(["j1", "j2"]))
        outcome = float(rng.choice([1.0, 0.5, 0.0])) if k == "j1" else float(rng.integers(2))
        rows.append((ITEMS[i], ITEMS[j], k, outcome))
    df = pd.DataFrame(rows, columns=["item_a", "item_b", "judge", "outcome"])
    with pytest.raises(ValueError, match=r"\['j2'\] gave no tie"):
        jd.build(Comparisons.from_frame(df), ties="davidson")


def test_half_default_unchanged():
    """Catches the new option changing today's default model (half-win kernel, cell dims)."""
    data = _davidson_data(200, 2)
    model = jd.build(data)
    assert "log_tie" not in model.named_vars
    assert model["outcome"].ndim == 1
    s, gamma, _ = _random_point(np.random.default_rng(3), data)
    params = {"ability": s, "discrimination": gamma}
    assert twin.loglik(params, data) == twin.loglik(params, data, ties="half")


def test_flat_map_equals_direct_mle():
    """Catches a PyMC Davidson model whose flat-prior MAP is not the Davidson MLE (a prior left
    on log ν under Priors.flat(), a transform of log_tie that shifts the mode); the MLE is found
    by scipy on the independent formula, so the twin's code is not used."""
    from scipy.optimize import minimize

    from bayescal.fitting import fit

    data = _davidson_data(400, 3)

    def nll(x):
        s = np.append(x[:3], -x[:3].sum())
        lg = np.array([x[3], -x[3]])
        return -_direct(data, s, np.exp(lg), np.exp(x[4:6]))

    mle = minimize(nll, np.zeros(6), method="BFGS").x
    res = fit(jd.build(data, priors=jd.Priors.flat(), ties="davidson"), "map")
    post = res["posterior"]
    np.testing.assert_allclose(post["ability"].values.ravel(), np.append(mle[:3], -mle[:3].sum()),
                               atol=2e-4)
    np.testing.assert_allclose(post["log_tie"].values.ravel(), mle[4:6], atol=2e-4)
    # the twin's MLE is the same optimum (so flat MAP = twin MLE, each against scipy)
    est = twin.fit(data, ties="davidson")
    np.testing.assert_allclose(est.params["ability"].values, np.append(mle[:3], -mle[:3].sum()),
                               atol=2e-4)
    np.testing.assert_allclose(np.log(est.params["discrimination"].values), [mle[3], -mle[3]],
                               atol=2e-4)
    np.testing.assert_allclose(np.log(est.params["tie"].values), mle[4:6], atol=2e-4)
    assert est.loglik == pytest.approx(-nll(mle), abs=1e-6)


def _raw_loglik(data: Comparisons, raw: np.ndarray) -> float:
    """The twin's public loglik at raw (s, log γ, log ν), s and log γ taken as given."""
    n, k = data.n_items, data.n_judges
    return twin.loglik({"ability": raw[:n], "discrimination": np.exp(raw[n:n + k]),
                        "tie": np.exp(raw[n + k:])}, data, ties="davidson")


def _expected_loglik(data: Comparisons, raw: np.ndarray, at: np.ndarray) -> float:
    """Σ_c n_c Σ_o p_o(at) log p_o(raw), written from Davidson's formula (not the twin's
    code): its Hessian in ``raw`` at ``raw = at`` is minus the expected information."""
    n, k = data.n_items, data.n_judges
    cells = data.collapse(order=True)
    count = cells.count

    def probs(x):
        s, lg, lnu = x[:n], x[n:n + k], x[n + k:]
        pi_i = np.exp(np.exp(lg)[cells.judge] * s[cells.item_i])
        pi_j = np.exp(np.exp(lg)[cells.judge] * s[cells.item_j])
        tie = np.exp(lnu)[cells.judge] * np.sqrt(pi_i * pi_j)
        return np.stack([pi_i, tie, pi_j]) / (pi_i + pi_j + tie)

    return float(np.sum(count * probs(at) * np.log(probs(raw))))


def _fd_hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    m = len(x)
    out = np.zeros((m, m))
    for a in range(m):
        for b in range(m):
            ea, eb = np.eye(m)[a] * h, np.eye(m)[b] * h
            out[a, b] = (f(x + ea + eb) - f(x + ea - eb) - f(x - ea + eb)
                         + f(x - ea - eb)) / (4 * h * h)
    return out


def test_davidson_gradient_and_information_match_finite_differences():
    """Catches a wrong Davidson score or information in the twin: the tie score t - n p_t or the
    η score's ½ factors, the η-λ cross term of the trinomial information (sign or ½ left out),
    the ∂²η/∂s∂log γ curvature missing from the observed information. Gradient and observed
    information are checked against finite differences of the public ``loglik``, the expected
    information against finite differences of an independently written expected loglik."""
    data = _davidson_data(300, 4)
    d = twin._trinomial(data, True)
    rng = np.random.default_rng(11)
    s, gamma, nu = _random_point(rng, data)
    raw = np.concatenate([s, np.log(gamma), np.log(nu)])
    ll, grad, parts = twin._davidson_derivatives(raw, d, hessian=True)
    assert ll == pytest.approx(_raw_loglik(data, raw), rel=1e-12)
    h = 1e-6
    fd = np.array([(_raw_loglik(data, raw + h * e) - _raw_loglik(data, raw - h * e)) / (2 * h)
                   for e in np.eye(len(raw))])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(parts["observed"],
                               -_fd_hessian(lambda x: _raw_loglik(data, x), raw),
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(parts["expected"],
                               -_fd_hessian(lambda x: _expected_loglik(data, x, raw), raw),
                               rtol=1e-4, atol=1e-3)


def test_davidson_sandwich_meat_equals_sum_of_verdict_scores():
    """Catches a wrong sandwich meat (an outcome's score with the wrong sign of p_w - p_l, a
    tie scored as a half win): the meat must be Σ over verdicts of the outer product of the
    verdict's own score, computed here by finite differences of a one-verdict loglik."""
    data = _davidson_data(40, 6)
    d = twin._trinomial(data, True)
    s, gamma, nu = _random_point(np.random.default_rng(2), data)
    raw = np.concatenate([s, np.log(gamma), np.log(nu)])
    _, _, parts = twin._davidson_derivatives(raw, d, hessian=True)
    index = {x: a for a, x in enumerate(data.items)}
    judge = {x: a for a, x in enumerate(data.judges)}
    n, k = data.n_items, data.n_judges

    def one(x, row):
        # one verdict's log-probability from Davidson's formula on π = exp(γ s)
        a, b, kk, y = index[row[0]], index[row[1]], judge[row[2]], row[3]
        g = np.exp(x[n + kk])
        pi = np.exp(g * x[[a, b]])
        tie = np.exp(x[n + k + kk]) * np.sqrt(pi[0] * pi[1])
        top = {1.0: pi[0], 0.5: tie, 0.0: pi[1]}[y]
        return np.log(top / (pi.sum() + tie))

    meat = np.zeros_like(parts["expected"])
    h = 1e-6
    for row in _davidson_rows(40, 6):
        score = np.array([(one(raw + h * e, row) - one(raw - h * e, row)) / (2 * h)
                          for e in np.eye(len(raw))])
        meat += np.outer(score, score)
    np.testing.assert_allclose(twin._davidson_meat(d, parts), meat, rtol=1e-5, atol=1e-6)


def test_davidson_fit_covariance_kinds():
    """Catches the Davidson fit resolving "auto" to the half-win sandwich (its likelihood is
    full, so the default is its expected information), a cluster kind accepted although the
    records carry no ties, and the kinds not reaching the covariance (all equal)."""
    data = _davidson_data(400, 3)
    fits = {kind: twin.fit(data, ties="davidson", information=kind)
            for kind in ("auto", "expected", "observed", "sandwich")}
    assert fits["auto"].info["information"] == "expected"
    np.testing.assert_array_equal(fits["auto"].cov, fits["expected"].cov)
    assert not np.allclose(fits["expected"].cov, fits["observed"].cov)
    assert not np.allclose(fits["observed"].cov, fits["sandwich"].cov)
    assert set(fits["auto"].params.data_vars) == {"ability", "discrimination", "tie"}
    with pytest.raises(ValueError, match="no cluster-robust covariance"):
        twin.fit(data, ties="davidson", information="cluster", cluster="judge_pair")


@pytest.mark.slow
def test_davidson_standard_errors_match_replicate_spread():
    """Catches a Davidson SE 20 % off (information mis-scaled, the delta method for ν left out,
    a covariance in the wrong chart): over R = 400 fixed-seed replicates, (R-1) SD² / mean(SE)²
    of ŝ_a and of ν̂_j1 must lie in the central 99.9 % of χ²_{R-1} (under a correct SE the
    ratio SD/SE is within about ±12 % of 1 at R = 400, so an SE 20 % too large or too small
    leaves the band; at R = 200 the band, ±17 %, let an SE 20 % too large pass)."""
    from scipy.stats import chi2

    reps = 400
    est_s, est_nu, se = [], [], {"expected": [[], []], "sandwich": [[], []]}
    for r in range(reps):
        data = _davidson_data(600, 10_000 + r)
        for kind in se:
            e = twin.fit(data, ties="davidson", information=kind)
            sd = np.sqrt(np.diag(e.cov))
            se[kind][0].append(sd[0])
            se[kind][1].append(sd[data.n_items + data.n_judges])  # ν of judge j1
        est_s.append(e.params["ability"].values[0])
        est_nu.append(e.params["tie"].values[0])
    lo, hi = chi2.ppf([0.0005, 0.9995], reps - 1)
    for values, which in ((est_s, 0), (est_nu, 1)):
        var = np.var(values, ddof=1)
        for kind in se:
            stat = (reps - 1) * var / np.mean(se[kind][which]) ** 2
            assert lo < stat < hi, (kind, which, np.sqrt(var), np.mean(se[kind][which]))
