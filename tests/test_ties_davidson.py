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


def _davidson_data(n: int, seed: int) -> Comparisons:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        i, j = rng.choice(4, 2, replace=False)
        k = str(rng.choice(["j1", "j2"]))
        eta = GAMMA[k] * (S[i] - S[j])
        p = np.exp([eta / 2, np.log(NU[k]), -eta / 2])
        rows.append((ITEMS[i], ITEMS[j], k, [1.0, 0.5, 0.0][rng.choice(3, p=p / p.sum())]))
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
