"""Contrasts, win probabilities and ranks against independent computations."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.special import expit
from scipy.stats import binom, norm

import bayescal as bc
from bayescal import simulate
from bayescal.contrasts import RANK_COLUMNS, _Abilities, _rank_draws, _wald_draws
from bayescal.frequentist import judge_discrimination_btl as jd_f
from bayescal.frequentist._core import Estimate
from bayescal.schema import COLUMNS

ITEMS = ["a", "b", "c"]


def make_estimate(theta, cov, items=ITEMS, method="mle") -> Estimate:
    ds = xr.Dataset({"ability": xr.DataArray(np.asarray(theta, float), dims="item",
                                             coords={"item": list(items)})})
    return Estimate(method=method, params=ds, cov=np.asarray(cov, float),
                    terms=tuple(f"ability[{i}]" for i in items), interval={"ability": "wald"})


# strongly positively correlated a and b: var(a - b) is far below var(a) + var(b)
THETA = np.array([0.8, 0.5, -1.3])
COV = np.array([[0.30, 0.25, -0.05],
                [0.25, 0.28, -0.02],
                [-0.05, -0.02, 0.20]])


def fake_posterior(draws: np.ndarray, items=ITEMS, method="nuts") -> xr.DataTree:
    draws = np.asarray(draws).reshape(2, -1, len(items))
    post = xr.Dataset({"ability": (("chain", "draw", "item"), draws)},
                      coords={"chain": [0, 1], "draw": np.arange(draws.shape[1]),
                              "item": list(items)})
    tree = xr.DataTree.from_dict({"posterior": post})
    tree.attrs["bayescal_method"] = method
    return tree


def test_wald_se_of_a_difference_from_the_covariance_by_hand():
    """Catches a dropped covariance term: with cov(a, b) = 0.25, sqrt(var a + var b) = 0.76
    against the right sqrt(0.30 + 0.28 - 2·0.25) = 0.28."""
    table = bc.contrasts(make_estimate(THETA, COV), prob=0.9)
    assert list(table.columns) == COLUMNS
    assert list(table.index) == ["ability[a] - ability[b]", "ability[a] - ability[c]",
                                 "ability[b] - ability[c]"]
    row = table.loc["ability[a] - ability[b]"]
    se = np.sqrt(COV[0, 0] + COV[1, 1] - 2 * COV[0, 1])
    assert row["estimate"] == pytest.approx(0.3)
    assert row["se"] == pytest.approx(se, rel=1e-12)
    assert row["se"] < 0.5 * np.sqrt(COV[0, 0] + COV[1, 1])
    z = norm.ppf(0.95)
    assert (row["lower"], row["upper"]) == pytest.approx((0.3 - z * se, 0.3 + z * se))
    assert (row["interval"], row["method"], row["prob"]) == ("wald", "mle", 0.9)
    se_bc = np.sqrt(COV[1, 1] + COV[2, 2] - 2 * COV[1, 2])
    assert table.loc["ability[b] - ability[c]", "se"] == pytest.approx(se_bc)


def test_custom_matrix_frame_and_array():
    """A named contrast (a vs the mean of b and c) equals L θ and sqrt(L Σ Lᵀ) by hand; an array
    gets a readable name; items left out of a frame get coefficient 0."""
    est = make_estimate(THETA, COV)
    frame = pd.DataFrame({"a": [1.0, 1.0], "b": [-0.5, -1.0], "c": [-0.5, 0.0]},
                         index=["a vs rest", "a vs b"])
    table = bc.contrasts(est, frame)
    L = frame.to_numpy()
    assert table["estimate"].to_numpy() == pytest.approx(L @ THETA)
    assert table["se"].to_numpy() == pytest.approx(np.sqrt(np.diag(L @ COV @ L.T)))
    only_ab = bc.contrasts(est, pd.DataFrame({"b": [-1.0], "a": [1.0]}, index=["x"]))
    assert only_ab.loc["x", "se"] == pytest.approx(table.loc["a vs b", "se"])
    arr = bc.contrasts(est, np.array([[0.0, 1.0, -1.0]]))
    assert list(arr.index) == ["ability[b] - ability[c]"]
    with pytest.raises(KeyError, match="not items"):
        bc.contrasts(est, pd.DataFrame({"zz": [1.0]}))
    with pytest.raises(ValueError, match="3 columns"):
        bc.contrasts(est, np.ones((1, 2)))
    with pytest.warns(UserWarning, match="do not sum to zero"):
        bc.contrasts(est, np.array([[1.0, 0.0, 0.0]]))


def test_posterior_interval_is_numpy_quantiles_of_draw_differences(rng):
    """Catches intervals built from the marginal draws (or a normal approximation) instead of the
    draws of the difference."""
    draws = rng.multivariate_normal(THETA, COV, size=2000)
    draws[:, 0] += rng.exponential(0.3, size=2000)  # skewed: a normal approximation is off
    table = bc.contrasts(fake_posterior(draws), prob=0.8)
    d = draws[:, 0] - draws[:, 1]
    row = table.loc["ability[a] - ability[b]"]
    assert row["lower"] == pytest.approx(np.quantile(d, 0.1))
    assert row["upper"] == pytest.approx(np.quantile(d, 0.9))
    assert row["estimate"] == pytest.approx(d.mean())
    assert row["se"] == pytest.approx(d.std(ddof=1))
    assert (row["interval"], row["method"]) == ("eti", "nuts")


def test_map_gives_points_without_intervals():
    tree = fake_posterior(np.tile(THETA, (2, 1)))
    tree["posterior"] = tree["posterior"].to_dataset().isel(chain=[0])
    tree.attrs["bayescal_method"] = "map"
    table = bc.contrasts(tree)
    assert table.loc["ability[a] - ability[c]", "estimate"] == pytest.approx(2.1)
    assert (table["interval"] == "none").all()
    assert table[["se", "lower", "upper", "prob"]].isna().all().all()
    r = bc.ranks(tree)
    assert list(r.index) == ["a", "b", "c"] and (r["source"] == "none").all()
    assert r[["rank_lower", "rank_upper", "prob"]].isna().all().all()
    wp = bc.win_probabilities(tree)
    assert wp.loc["a", "c"] == pytest.approx(expit(2.1))


def test_judge_specific_scores_need_and_use_judge():
    """ability[judge, item]: judge= selects the judge's row, and the Estimate's covariance block of
    that row (not another judge's) is used."""
    judges, items = ["j1", "j2"], ["x", "y"]
    values = np.array([[1.0, -1.0], [0.2, -0.2]])
    ds = xr.Dataset({"ability": xr.DataArray(values, dims=("judge", "item"),
                                             coords={"judge": judges, "item": items})})
    terms = tuple(f"ability[{j}, {i}]" for j in judges for i in items)
    cov = np.diag([0.1, 0.1, 0.4, 0.4])
    est = Estimate("mle", ds, cov, terms, {"ability": "wald"})
    with pytest.raises(ValueError, match="judge="):
        bc.contrasts(est)
    table = bc.contrasts(est, judge="j2")
    assert list(table.index) == ["ability[j2, x] - ability[j2, y]"]
    assert table["estimate"].iloc[0] == pytest.approx(0.4)
    assert table["se"].iloc[0] == pytest.approx(np.sqrt(0.8))
    with pytest.raises(KeyError, match="j3"):
        bc.contrasts(est, judge="j3")
    with pytest.raises(ValueError, match="no judge dim"):
        bc.contrasts(make_estimate(THETA, COV), judge="j1")


def test_win_probabilities_plug_in_and_posterior_mean(rng):
    """Posterior entry = mean of σ(s_i - s_j) over draws (not σ of the mean difference, which is
    larger in magnitude); plug-in for an Estimate; rows and columns are labels."""
    est = make_estimate(THETA, COV)
    wp = bc.win_probabilities(est)
    assert list(wp.index) == ITEMS and list(wp.columns) == ITEMS
    assert wp.loc["a", "c"] == pytest.approx(expit(2.1))
    assert np.allclose(wp.to_numpy() + wp.to_numpy().T, 1.0)
    draws = rng.multivariate_normal(THETA, 4 * COV, size=1000)
    wpd = bc.win_probabilities(fake_posterior(draws))
    direct = expit(draws[:, 0] - draws[:, 2]).mean()
    assert wpd.loc["a", "c"] == pytest.approx(direct)
    assert abs(wpd.loc["a", "c"] - expit(draws[:, 0].mean() - draws[:, 2].mean())) > 0.01
    assert np.diag(wpd.to_numpy()) == pytest.approx(0.5)


def test_two_item_rank_probability_is_normal_cdf():
    """With two items P(rank of a = 1) = P(s_a > s_b) = Φ(Δ/se_Δ); the Wald-draw frequency must sit
    in the binomial band. Catches draws from the diagonal of Σ only (Φ(0.3/0.76) = 0.65
    instead of Φ(0.3/0.28) = 0.86) and reversed ranks."""
    theta, cov = THETA[:2], COV[:2, :2]
    est = make_estimate(theta, cov, items=["a", "b"])
    n = 4000
    sample = _wald_draws(_Abilities(est, "ability", None), n, 0)
    p_first = (_rank_draws(sample)[:, 0] == 1).mean()
    p = norm.cdf(0.3 / np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
    lo, hi = binom.ppf([0.0005, 0.9995], n, p) / n
    assert lo <= p_first <= hi
    assert not (binom.ppf(0.0005, n, 0.65) / n <= p_first <= binom.ppf(0.9995, n, 0.65) / n)


@pytest.mark.parametrize(("delta", "interval_a"), [(0.3, (1, 2)), (0.9, (1, 1))])
def test_two_item_rank_interval_analytic(delta, interval_a):
    """Rank interval of a at 95%: [1, 1] iff P(rank 2) = Φ(-Δ/se) < 2.5%. se_Δ = 0.28, so Δ = 0.9
    gives Φ(-3.2) = 0.0007 ([1, 1]) and Δ = 0.3 gives Φ(-1.07) = 0.14 ([1, 2])."""
    cov = COV[:2, :2]
    est = make_estimate([delta / 2, -delta / 2], cov, items=["a", "b"])
    table = bc.ranks(est, prob=0.95)
    assert list(table.columns) == RANK_COLUMNS and list(table.index) == ["a", "b"]
    assert tuple(table.loc["a", ["rank_lower", "rank_upper"]]) == interval_a
    assert table.loc["a", "rank"] == 1 and table.loc["b", "rank"] == 2
    assert (table["source"] == "wald-normal draws").all()
    # without the covariance term var(Δ) = 0.58: Δ = 0.9 gives P(rank 2) = 12 %, interval [1, 2]
    no_cov = make_estimate([delta / 2, -delta / 2], np.diag(np.diag(cov)), items=["a", "b"])
    assert tuple(bc.ranks(no_cov).loc["a", ["rank_lower", "rank_upper"]]) == (1, 2)


def test_posterior_ranks_and_sorting(rng):
    """Posterior ranks: quantiles of per-draw ranks, the table sorted by the rank of the mean."""
    draws = rng.multivariate_normal([-1.0, 0.0, 2.0], 0.01 * np.eye(3), size=1000)
    table = bc.ranks(fake_posterior(draws, items=["low", "mid", "top"]))
    assert list(table.index) == ["top", "mid", "low"]
    assert list(table["rank"]) == [1, 2, 3]
    assert list(table["rank_lower"]) == [1, 2, 3] and list(table["rank_upper"]) == [1, 2, 3]
    assert (table["source"] == "posterior").all()
    assert table.loc["top", "estimate"] == pytest.approx(draws[:, 2].mean())


def test_elo_scale():
    """400 points = 10:1 odds: σ(s_a - s_b) = 1 / (1 + 10^(-(R_a - R_b)/400))."""
    s = np.array([0.7, -0.7])
    r = bc.elo_scale(s)
    assert 1 / (1 + 10 ** (-(r[0] - r[1]) / 400)) == pytest.approx(expit(1.4))
    assert bc.elo_scale(0.0) == pytest.approx(1000.0)
    est = make_estimate(THETA, COV)
    logit_t, elo_t = bc.contrasts(est), bc.contrasts(est, scale="elo")
    factor = 400 / np.log(10)
    assert elo_t["se"].to_numpy() == pytest.approx(factor * logit_t["se"].to_numpy())
    assert elo_t.attrs["scale"] == "elo"
    assert bc.ranks(est, scale="elo")["estimate"].to_numpy() == pytest.approx(
        1000 + factor * np.sort(THETA)[::-1])
    with pytest.raises(ValueError, match="base"):
        bc.elo_scale(1.0, base=1.0)


def test_contrasts_of_a_real_twin_fit():
    """On a fitted judge-aware BTL the contrast SEs are sqrt(e Σ eᵀ) of the Estimate's covariance,
    which is rank-deficient (sum-zero scores)."""
    truth = simulate.judge_discrimination_truth(4, 2, random_seed=3)
    data = simulate.judge_discrimination_btl(truth, 1500, random_seed=4)
    est = jd_f.fit(data)
    table = bc.contrasts(est)
    cov = pd.DataFrame(est.cov, index=list(est.terms), columns=list(est.terms))
    a, b = est.params["item"].values[:2]
    ta, tb = f"ability[{a}]", f"ability[{b}]"
    se = np.sqrt(cov.loc[ta, ta] + cov.loc[tb, tb] - 2 * cov.loc[ta, tb])
    assert table.loc[f"{ta} - {tb}", "se"] == pytest.approx(se)
    r = bc.ranks(est, draws=500)
    assert set(r.index) == set(data.items) and (r["rank_lower"] <= r["rank"]).all()
    assert (r["rank"] <= r["rank_upper"]).all()


def test_bad_inputs_are_refused():
    est = make_estimate(THETA, COV)
    with pytest.raises(KeyError, match="no parameter"):
        bc.contrasts(est, parameter="consensus")
    with pytest.raises(ValueError, match="prob"):
        bc.contrasts(est, prob=95)
    with pytest.raises(ValueError, match="draws"):
        bc.ranks(est, draws=1)
    with pytest.raises(TypeError, match="DataTree"):
        bc.contrasts(THETA)


def test_posterior_with_judge_specific_scores(rng):
    """ability[judge, item] draws: judge= picks that judge's draws, not a pooled or other row."""
    draws = rng.normal(size=(2, 200, 2, 3))
    draws[:, :, 1, 0] += 5.0  # judge j2 puts item a far ahead
    post = xr.Dataset({"ability": (("chain", "draw", "judge", "item"), draws)},
                      coords={"judge": ["j1", "j2"], "item": ITEMS})
    tree = xr.DataTree.from_dict({"posterior": post})
    table = bc.contrasts(tree, judge="j2")
    d = (draws[:, :, 1, 0] - draws[:, :, 1, 1]).ravel()
    assert table.loc["ability[j2, a] - ability[j2, b]", "estimate"] == pytest.approx(d.mean())
    assert bc.ranks(tree, judge="j2").index[0] == "a"
    with pytest.raises(ValueError, match="judge="):
        bc.win_probabilities(tree)


def test_blocked_posterior_contrasts_equal_one_pass(rng, monkeypatch):
    """The draws x contrasts product is evaluated in blocks; blocks must not change a number."""
    # bc.contrasts is the function; the module is reached through importlib
    module = importlib.import_module("bayescal.contrasts")
    tree = fake_posterior(rng.normal(size=(400, 3)))
    whole = bc.contrasts(tree)
    monkeypatch.setattr(module, "_BLOCK", 401)  # one contrast per block
    pd.testing.assert_frame_equal(bc.contrasts(tree), whole)
