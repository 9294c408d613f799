"""DIAL synthetic data (seed 000 §6.1; SPEC §1.14): truth, LLM verdicts and human comparisons.

Self-contained (numpy only) so that the calibration's tests and validation do not depend on
another module's simulator; the design follows SPEC §1.14 steps 1–6.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from bayescal.data import Comparisons

__all__ = ["human", "llm", "truth"]


def truth(n_items: int = 10, n_judges: int = 4, rank: int = 1, *, random_seed: int = 0,
          misspecified: float = 0.0) -> dict[str, NDArray[np.float64]]:
    """Parameters of SPEC §1.14 steps 1–4 (seeds s, s + 1, s + 2).

    μ ~ N(0, I) centred, ‖μ‖² = N; γ_k = 1 + 0.3ξ_k rescaled to Σγ = K; V Gaussian projected off
    span{1, μ}, orthonormalised, × √N; U Gaussian column-centred; first non-zero entry of each
    column of U and V positive. b_k = β_kσ_k, β ~ U(0.3, 1.2), σ = ±1 (P(+) = 0.8), b_K = 0.05.
    s_h = μ + V c_V with c_V ~ N(0, misspecified²) (0: s_h = μ, exact specification).

    Returns
    -------
    dict
        ``S`` (K, N), ``b`` (K), ``mu``, ``gamma``, ``U``, ``V``, ``s_h`` (N).
    """
    rng = np.random.default_rng(random_seed)
    N, K, r = n_items, n_judges, rank
    mu = rng.normal(size=N)
    mu -= mu.mean()
    mu *= np.sqrt(N) / np.linalg.norm(mu)
    gamma = 1 + 0.3 * rng.normal(size=K)
    gamma *= K / gamma.sum()
    V = rng.normal(size=(N, r))
    basis = np.linalg.qr(np.column_stack([np.ones(N), mu]))[0]
    V -= basis @ (basis.T @ V)
    V = np.sqrt(N) * np.linalg.qr(V)[0]
    U = rng.normal(size=(K, r))
    U -= U.mean(axis=0)
    for M in (U, V):
        for q in range(r):
            if M[np.flatnonzero(M[:, q])[0], q] < 0:
                M[:, q] *= -1
    rb = np.random.default_rng(random_seed + 1)
    b = rb.uniform(0.3, 1.2, K) * np.where(rb.random(K) < 0.8, 1.0, -1.0)
    b[-1] = 0.05
    c_v = np.random.default_rng(random_seed + 2).normal(0, misspecified, r) if misspecified else 0
    s_h = mu + V @ np.broadcast_to(c_v, (r,))
    return {"S": np.outer(gamma, mu) + U @ V.T, "b": b, "mu": mu, "gamma": gamma, "U": U,
            "V": V, "s_h": s_h}


def _labels(n: int, prefix: str) -> list[str]:
    return [f"{prefix}_{i:02d}" for i in range(n)]


def llm(par: dict, n_comparisons: int, *, first_prob: float = 0.75, overdispersion: float = 0.0,
        random_seed: int = 3) -> Comparisons:
    """n_l verdicts: judge and pair uniform, a = +1 w.p. ``first_prob``, judge–pair noise ε."""
    S, b = par["S"], par["b"]
    K, N = S.shape
    ii, jj = np.triu_indices(N, 1)
    eps = np.random.default_rng(random_seed + 100).normal(0.0, overdispersion, (K, len(ii)))
    rng = np.random.default_rng(random_seed)
    k = rng.integers(0, K, n_comparisons)
    pair = rng.integers(0, len(ii), n_comparisons)
    a = np.where(rng.random(n_comparisons) < first_prob, 1, -1)
    eta = S[k, ii[pair]] - S[k, jj[pair]] + a * b[k] + eps[k, pair]
    y = (rng.random(n_comparisons) < 1 / (1 + np.exp(-eta))).astype(np.float64)
    return Comparisons.from_codes(_labels(N, "item"), _labels(K, "judge"), judge=k,
                                  item_a=ii[pair], item_b=jj[pair], outcome=y, order=a)


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
