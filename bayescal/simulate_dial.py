"""DIAL synthetic data (DIAL 2026, Section 6.1): truth, LLM verdicts and human comparisons.

Steps 1–5 are :func:`bayescal.simulate.low_rank_judges_truth` and
:func:`bayescal.simulate.low_rank_judges` (same seeds, same arrays); this module adds the human
target s_h and the human comparisons (step 6) and keeps the dict form the calibration's tests,
validation and bench use. The twins and models take one data set with the humans marked:
``Comparisons.concat([llm(...), human(...)])`` (``human`` marks its judge ``"human"``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from bayescal.data import Comparisons
from bayescal.simulate import low_rank_judges, low_rank_judges_truth

__all__ = ["human", "llm", "truth"]


def truth(n_items: int = 10, n_judges: int = 4, rank: int = 1, *, random_seed: int = 0,
          misspecified: float = 0.0) -> dict[str, NDArray[np.float64]]:
    """Parameters of DIAL's synthetic design, steps 1–4 (seeds s, s + 1, s + 2).

    μ ~ N(0, I) centred, ‖μ‖² = N; γ_k = 1 + 0.3ξ_k rescaled to Σγ = K; V Gaussian projected off
    span{1, μ}, orthonormalised, × √N; U Gaussian column-centred; first non-zero entry of each
    column of U and V positive. b_k = β_kσ_k, β ~ U(0.3, 1.2), σ = ±1 (P(+) = 0.8), b_K = 0.05.
    s_h = μ + V c_V with c_V ~ N(0, misspecified²) (0: s_h = μ, exact specification).

    Returns
    -------
    dict
        ``S`` (K, N), ``b`` (K), ``mu``, ``gamma``, ``U``, ``V``, ``s_h`` (N).
    """
    t = low_rank_judges_truth(n_items, n_judges, rank, random_seed=random_seed)
    mu, V = t["consensus"].values, t["disagreement"].values
    c_v = (np.random.default_rng(random_seed + 2).normal(0, misspecified, rank) if misspecified
           else 0)
    s_h = mu + V @ np.broadcast_to(c_v, (rank,))
    return {"S": t["ability"].values, "b": t["order_effect"].values, "mu": mu,
            "gamma": t["consensus_loading"].values, "U": t["disagreement_loading"].values,
            "V": V, "s_h": s_h}


def _labels(n: int, prefix: str) -> list[str]:
    return [f"{prefix}_{i:02d}" for i in range(n)]


def llm(par: dict, n_comparisons: int, *, first_prob: float = 0.75, overdispersion: float = 0.0,
        random_seed: int = 3) -> Comparisons:
    """n_l verdicts: judge and pair uniform, a = +1 w.p. ``first_prob``, judge–pair noise ε."""
    K, N = par["S"].shape
    t = xr.Dataset({"ability": (("judge", "item"), par["S"]), "order_effect": ("judge", par["b"])},
                   coords={"item": _labels(N, "item"), "judge": _labels(K, "judge")})
    return low_rank_judges(t, n_comparisons, first_prob=first_prob, overdispersion=overdispersion,
                           random_seed=random_seed)


def human(par: dict, n_comparisons: int, *, random_seed: int = 4) -> Comparisons:
    """n_h human comparisons: pair uniform, y ~ Bernoulli(σ(s_hi − s_hj))."""
    s = par["s_h"]
    N = s.size
    ii, jj = np.triu_indices(N, 1)
    rng = np.random.default_rng(random_seed)
    pair = rng.integers(0, len(ii), n_comparisons)
    y = (rng.random(n_comparisons) < 1 / (1 + np.exp(-(s[ii[pair]] - s[jj[pair]])))).astype(float)
    return Comparisons.from_codes(_labels(N, "item"), ["human"], judge=np.zeros(n_comparisons),
                                  item_a=ii[pair], item_b=jj[pair], outcome=y,
                                  humans=["human"])
