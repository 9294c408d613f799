"""The sandwich adjustment of posterior draws (bayescal.adjust, Müller 2013; Ribatet, Cooley and
Davison 2012), on synthetic draws and Estimates whose covariances are known exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from scipy.linalg import sqrtm

import bayescal as bc
from bayescal.basis import zero_sum_basis
from bayescal.frequentist._core import Estimate

ITEMS = ["a", "b", "c", "d"]
JUDGES = ["j1", "j2"]


def _posterior(seed: int = 0, chains: int = 2, draws: int = 400) -> xr.DataTree:
    """Correlated draws of sum-zero scores (4 items, rank 3) and two free order effects."""
    rng = np.random.default_rng(seed)
    B = zero_sum_basis(4)
    L = np.array([[0.5, 0.0, 0.0], [0.3, 0.2, 0.0], [-0.1, 0.4, 0.3]])
    z = rng.standard_normal((chains, draws, 3)) @ L.T
    s = np.array([0.6, 0.1, -0.2, -0.5]) + z @ B.T  # every draw sums to zero
    b = rng.standard_normal((chains, draws, 2)) * [0.2, 0.05] + [0.3, -0.1]
    post = xr.Dataset({"human_ability": (("chain", "draw", "item"), s),
                       "order_effect": (("chain", "draw", "judge"), b),
                       "item_basis_free": (("chain", "draw", "k"), z)},
                      coords={"item": ITEMS, "judge": JUDGES})
    llik = xr.Dataset({"outcome": (("chain", "draw", "comparison"), np.zeros((chains, draws, 3)))})
    tree = xr.DataTree.from_dict({"posterior": post, "log_likelihood": llik})
    tree.attrs = {"bayescal_method": "nuts"}
    return tree


def _sandwich(seed: int = 1) -> np.ndarray:
    """A sum-zero covariance for the scores (null along 1) beside a full one for b, correlated."""
    rng = np.random.default_rng(seed)
    B = zero_sum_basis(4)
    G = rng.standard_normal((5, 5))
    core = G @ G.T * 0.01 + np.eye(5) * 0.002
    T = np.zeros((6, 5))
    T[:4, :3] = B
    T[4:, 3:] = np.eye(2)
    return T @ core @ T.T


def _estimate(cov: np.ndarray, items=ITEMS, interval: str = "wald") -> Estimate:
    params = xr.Dataset({"human_ability": ("item", np.array([0.5, 0.2, -0.2, -0.5])),
                         "order_effect": ("judge", np.array([0.3, -0.1]))},
                        coords={"item": items, "judge": JUDGES})
    terms = tuple([f"human_ability[{i}]" for i in items] + [f"order_effect[{j}]" for j in JUDGES])
    return Estimate("dial", params, cov, terms,
                    {"human_ability": interval, "order_effect": "wald"},
                    info={"llm_weight": 20.0, "intervals": "joint cluster (judge_pair, CR1)"})


def _flat(tree: xr.DataTree) -> np.ndarray:
    post = tree["posterior"]
    parts = [post[v].values.reshape(-1, post[v].shape[-1]) for v in ("human_ability",
                                                                      "order_effect")]
    return np.concatenate(parts, axis=1)


def _flat_b(tree: xr.DataTree) -> np.ndarray:
    return tree["posterior"]["order_effect"].values.reshape(-1, 2)


def test_adjusted_draws_have_the_sandwich_covariance_and_the_posterior_mean():
    """The adjusted draws' covariance equals Σ_S to float error and their mean is the raw mean.

    Catches: A applied inverted (Σ_P^{1/2} Σ_S^{-1/2}), Σ_P squared (Σ_S^{1/2} Σ_P^{-1}), a
    population instead of the sample covariance (ddof), recentring on the Estimate instead of
    the posterior mean, or the blocks adjusted separately (the score–b correlation lost)."""
    post, cov = _posterior(), _sandwich()
    adj = bc.adjust_to_sandwich(post, _estimate(cov))
    X, Y = _flat(post), _flat(adj)
    np.testing.assert_allclose(np.cov(Y, rowvar=False), cov, rtol=0, atol=1e-13)
    np.testing.assert_allclose(Y.mean(axis=0), X.mean(axis=0), rtol=0, atol=1e-13)
    assert np.abs(Y[:, :4].sum(axis=1)).max() < 1e-12  # the sum-zero constraint kept per draw
    assert not np.allclose(np.cov(X, rowvar=False), cov, atol=1e-3)  # the test is not trivial


def test_adjustment_is_the_symmetric_root_map_of_an_independent_computation():
    """Σ_S^{-1/2}(θ̃ − θ̄) = Σ_P^{-1/2}(θ − θ̄) in the scores' Helmert coordinates, with the roots
    from scipy's sqrtm; in one dimension θ̃ − θ̄ = (se/sd)(θ − θ̄).

    Catches: A inverted (factor sd/se), Σ_P squared (se/sd²), a Cholesky factor in place of a
    symmetric root (the same covariance, other draws)."""
    post, cov = _posterior(seed=3), _sandwich(seed=4)
    adj = bc.adjust_to_sandwich(post, _estimate(cov))
    X, Y = _flat(post), _flat(adj)
    T = np.zeros((6, 5))
    T[:4, :3] = zero_sum_basis(4)
    T[4:, 3:] = np.eye(2)
    x, y = (X - X.mean(0)) @ T, (Y - Y.mean(0)) @ T  # the 5 free coordinates
    root_p = np.real(sqrtm(np.cov(x, rowvar=False)))
    root_s = np.real(sqrtm(T.T @ cov @ T))
    np.testing.assert_allclose(np.linalg.solve(root_s, y.T), np.linalg.solve(root_p, x.T),
                               atol=1e-9)
    # one quantity: the scale factor is se/sd exactly
    b = post["posterior"]["order_effect"].sel(judge="j2").values.ravel()
    one = bc.adjust_to_sandwich(post, _estimate(cov), var_names=["order_effect"])
    np.testing.assert_allclose(np.cov(_flat_b(one), rowvar=False), cov[4:, 4:], atol=1e-13)
    post1 = post.copy()
    post1["posterior"] = xr.DataTree(post["posterior"].to_dataset()[["order_effect"]]
                                     .isel(judge=[1]))
    est1 = Estimate("dial", _estimate(cov).params[["order_effect"]].isel(judge=[1]),
                    np.array([[0.04]]), ("order_effect[j2]",), {"order_effect": "wald"})
    y1 = bc.adjust_to_sandwich(post1, est1)["posterior"]["order_effect"].values.ravel()
    np.testing.assert_allclose(y1 - b.mean(), 0.2 / b.std(ddof=1) * (b - b.mean()), atol=1e-12)


def test_adjusted_tree_says_it_is_adjusted_and_drops_what_belongs_to_the_raw_draws():
    """summarize's method column names the adjustment; the raw draws' log-likelihood (LOO of the
    raw posterior) and the unadjusted *_free variables are not carried into it.

    Catches: an adjusted posterior that reads as a plain NUTS posterior in tables and reports,
    or az.loo silently run on pointwise log-likelihoods of other draws."""
    post, cov = _posterior(), _sandwich()
    adj = bc.adjust_to_sandwich(post, _estimate(cov))
    table = bc.summarize(adj)
    assert set(table["method"]) == {"nuts (sandwich-adjusted)"}
    assert adj.attrs["bayescal_adjusted"] == "sandwich"
    assert "λ = 20" in adj.attrs["bayescal_adjusted_to"]
    assert "log_likelihood" not in adj.children
    assert set(adj["posterior"].data_vars) == {"human_ability", "order_effect"}
    ratio = json.loads(adj.attrs["bayescal_sd_ratio"])
    sd = post["posterior"]["order_effect"].sel(judge="j1").std(ddof=1).item()
    assert ratio["order_effect[j1]"] == pytest.approx(sd / np.sqrt(cov[4, 4]), rel=1e-12)
    np.testing.assert_allclose(table.loc["order_effect[j1]", "se"], np.sqrt(cov[4, 4]),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="already sandwich-adjusted"):
        bc.adjust_to_sandwich(adj, _estimate(cov))


def test_refuses_a_covariance_that_is_not_positive_semidefinite():
    """An indefinite or non-finite Σ_S has no square root: refused, never clipped silently.

    Catches: negative eigenvalues clipped to zero (draws with a smaller spread than claimed)."""
    cov = _sandwich()
    vals, vecs = np.linalg.eigh(cov[4:, 4:])
    bad = cov.copy()
    bad[4:, 4:] = (vecs * [-0.01, vals[1]]) @ vecs.T
    with pytest.raises(ValueError, match="not positive semi-definite"):
        bc.adjust_to_sandwich(_posterior(), _estimate(bad))
    nan = cov.copy()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        bc.adjust_to_sandwich(_posterior(), _estimate(nan))


def test_refuses_variance_where_the_draws_have_none():
    """A Σ_S with variance along 1 (scores not centred, another chart's covariance) cannot be the
    sum-zero draws' spread: refused, naming the mismatch.

    Catches: the pseudo-inverse silently dropping that direction (adjusted covariance ≠ Σ_S)."""
    cov = _sandwich()
    one = np.zeros(6)
    one[:4] = 0.5
    with pytest.raises(ValueError, match="every draw is the same"):
        bc.adjust_to_sandwich(_posterior(), _estimate(cov + 0.01 * np.outer(one, one)))


def test_refuses_mismatched_coordinates_scales_and_too_few_draws():
    """Elements are matched by label, never by position; a logit/log-scale interval is not the
    draws' scale; fewer draws than elements cannot estimate Σ_P.

    Catches: adjusting item 'b' with item 'c''s variance after a relabelling or reordering."""
    cov = _sandwich()
    with pytest.raises(ValueError, match="elements differ"):
        bc.adjust_to_sandwich(_posterior(), _estimate(cov, items=["a", "c", "b", "d"]))
    with pytest.raises(ValueError, match="not on the scale"):
        bc.adjust_to_sandwich(_posterior(), _estimate(cov, interval="wald-log"))
    with pytest.raises(ValueError, match="draws cannot estimate"):
        bc.adjust_to_sandwich(_posterior(chains=1, draws=5), _estimate(cov))
    with pytest.raises(ValueError, match="not in both"):
        bc.adjust_to_sandwich(_posterior(), _estimate(cov), var_names=["ability"])
    with pytest.raises(ValueError, match="not identified"):
        bc.adjust_to_sandwich(_posterior(), _estimate(cov), var_names=["item_basis_free"])
    view = _estimate(cov).to_datatree(draws=50, chains=2)
    with pytest.raises(ValueError, match="Wald view"):
        bc.adjust_to_sandwich(view, _estimate(cov))
