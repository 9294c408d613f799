r"""Pure pieces of DIAL's low-rank judges and human calibration, shared by models and twins.

DIAL ("Position-Debiased LLM Judges with Adaptive Human Preference Calibration", 2026) writes the
judges' position-debiased scores in the consensus–disagreement form of Yu et al. (2026,
arXiv:2605.05073, Condition 3)

.. math:: S = \gamma\mu^\top + UV^\top,\quad W = [\mu, V],\ W^\top 1_N = 0,\
          W^\top W/N = I_{r+1},\ 1_K^\top U = 0,\ 1_K^\top\gamma > 0,

and calibrates a human score vector :math:`s_h = M c` in the span of :math:`M = \mu` or
:math:`M = W`, weighting the LLM likelihood by λ. Both the PyMC models
(:mod:`bayescal.models.low_rank_judges`, :mod:`bayescal.models.human_calibration`) and their
twins need the rank bounds, the parameter count, the closed-form canonicalisation of S, a quick
per-judge start and the λ grid; they live here so that a model never imports a twin. No PyMC, no twin imports.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayescal.identify import IdentificationError

__all__ = ["SPACES", "Factors", "canonical", "check_rank", "check_space", "check_weight",
           "n_free_parameters", "ridge_scores", "weight_grid"]

#: Calibration bases: ``consensus`` M = μ (d = 1), ``full`` M = W = [μ, V] (d = r + 1).
SPACES = ("consensus", "full")


def check_rank(rank: object, n_judges: int, n_items: int) -> int:
    """Validate the disagreement rank r: 1 ≤ r ≤ min(K − 1, N − 2) (Condition 3).

    Raises
    ------
    ValueError
        r is not a positive integer.
    IdentificationError
        r exceeds min(K − 1, N − 2): judge-centred loadings have rank at most K − 1 and
        W = [μ, V] needs r + 1 ≤ N − 1 centred directions.
    """
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"rank must be an integer ≥ 1, got {rank!r}")
    bound = min(n_judges - 1, n_items - 2)
    if rank > bound:
        raise IdentificationError(
            f"rank r = {rank} is not identified with K = {n_judges} judges and N = {n_items} "
            f"items: Condition 3 needs 1 ≤ r ≤ min(K − 1, N − 2) = {bound}"
            + (" (no r is possible: at least 2 judges and 3 items are needed)" if bound < 1
               else "")
            + "."
        )
    return int(rank)


def n_free_parameters(rank: int, n_judges: int, n_items: int, order_effects: bool) -> int:
    """dim (S, b) = (r + 1)(K + N − r − 2) + K: rank-(r+1) K x (N−1) matrices plus b."""
    return (rank + 1) * (n_judges + n_items - rank - 2) + (n_judges if order_effects else 0)


def check_space(space: object) -> str:
    """``consensus`` or ``full`` (ValueError otherwise)."""
    if space not in SPACES:
        raise ValueError(f"space must be one of {SPACES}, got {space!r}")
    return str(space)


def check_weight(llm_weight: object) -> float:
    """λ ≥ 0 as a float (``inf`` allowed: the anchored endpoint)."""
    try:
        lam = float(llm_weight)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"llm_weight must be a number ≥ 0 or inf, got {llm_weight!r}") from None
    if np.isnan(lam) or lam < 0:
        raise ValueError(f"llm_weight must be ≥ 0 (0 = human only, inf = anchored), got {lam}")
    return lam


def weight_grid(n_llm: float, n_human: float) -> list[float]:
    """DIAL's candidate λ in scan order: [∞, λ₀·geomspace(10, 0.1, 7), 0], λ₀ = n_l/n_h.

    λ₀ is the joint maximum-likelihood weight (both averages weighted by their sizes).
    """
    lam0 = n_llm / n_human
    return [np.inf, *(lam0 * np.geomspace(10, 0.1, 7)).tolist(), 0.0]


@dataclass(frozen=True)
class Factors:
    """Condition 3's representative of a score matrix S (see :func:`canonical`).

    Attributes
    ----------
    consensus : ndarray (N,)
        μ = √N Sᵀ1/‖Sᵀ1‖.
    consensus_loading : ndarray (K,)
        γ = Sμ/N.
    disagreement_matrix : ndarray (K, N)
        UVᵀ = S − γμᵀ.
    disagreement_loading : ndarray (K, r)
        U = P_rΣ_r/√N from the SVD UVᵀ = PΣQᵀ.
    disagreement : ndarray (N, r)
        V = √N Q_r.
    singular_values : ndarray (r,)
        The leading singular values of UVᵀ.
    """

    consensus: NDArray[np.float64]
    consensus_loading: NDArray[np.float64]
    disagreement_matrix: NDArray[np.float64]
    disagreement_loading: NDArray[np.float64]
    disagreement: NDArray[np.float64]
    singular_values: NDArray[np.float64]

    def basis(self, space: str) -> NDArray[np.float64]:
        """The calibration basis M: μ as one column (``consensus``) or W = [μ, V] (``full``)."""
        if check_space(space) == "consensus":
            return self.consensus[:, None]
        return np.column_stack([self.consensus, self.disagreement])


def canonical(S: ArrayLike, rank: int) -> Factors:
    r"""Condition 3's representative of a score matrix S (DIAL's closed forms).

    Every S with centred rows and rank ≤ r + 1 (and :math:`S^\top 1_K \ne 0`) has exactly one:
    :math:`\mu = \sqrt N S^\top 1_K/\lVert S^\top 1_K\rVert`, :math:`\gamma = S\mu/N`,
    :math:`UV^\top = S - \gamma\mu^\top`. U and V are identified only through UVᵀ; the SVD axes
    :math:`UV^\top = P\Sigma Q^\top`, :math:`U = P_r\Sigma_r/\sqrt N`, :math:`V = \sqrt N Q_r`,
    with each factor's sign set so that the first non-zero entry of each column of U is
    positive (the ReAnchor rule of Yu et al. 2026), are one choice.

    Parameters
    ----------
    S : array (K, N)
        Position-debiased scores with centred rows (``ability[judge, item]``).
    rank : int
        r, the number of disagreement factors.

    Raises
    ------
    IdentificationError
        :math:`S^\top 1_K = 0`: no consensus direction (the judges' scores cancel).
    """
    S = np.asarray(S, dtype=np.float64)
    N = S.shape[1]
    m = S.sum(axis=0)
    norm = np.linalg.norm(m)
    if norm <= 1e-12 * max(np.abs(S).max(), 1e-300):
        raise IdentificationError(
            "the judges' summed scores Sᵀ1 are zero: the consensus direction μ is undefined"
        )
    mu = np.sqrt(N) * m / norm
    gamma = S @ mu / N
    R = S - np.outer(gamma, mu)
    P, sv, Qt = np.linalg.svd(R, full_matrices=False)
    U = P[:, :rank] * sv[:rank] / np.sqrt(N)
    V = np.sqrt(N) * Qt[:rank].T
    for q in range(rank):
        col = U[:, q]
        nz = np.flatnonzero(np.abs(col) > 1e-12 * max(np.abs(col).max(), 1e-300))
        if nz.size and col[nz[0]] < 0:
            U[:, q], V[:, q] = -U[:, q], -V[:, q]
    return Factors(mu, gamma, R, U, V, sv[:rank])


def ridge_scores(cells, *, order_effects: bool) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-judge ridge BTL (prior N(0, 1) on each judge's scores s_k and order effect b_k).

    Five Newton steps per judge on its own cells, no shared structure: a cheap start near the
    MLE of S (the twin truncates it to rank r + 1; the PyMC model pivots its chart on it).

    Parameters
    ----------
    cells : Comparisons
        Aggregated cells (:meth:`bayescal.data.Comparisons.order_cells`).
    order_effects : bool
        Estimate b_k (False: the cells pool both orders and b = 0).

    Returns
    -------
    S : ndarray (K, N)
        Row-centred scores.
    b : ndarray (K,)
        Order effects (zeros without order effects).
    """
    K, N = cells.n_judges, cells.n_items
    k, i, j = cells.judge, cells.item_i, cells.item_j
    n, y = cells.count, cells.wins
    size = N + 1 if order_effects else N
    th = np.zeros((K, size))
    idx = np.stack([i, j] + ([np.full_like(i, N)] if order_effects else []), axis=1)
    val = np.stack([np.ones(len(i)), -np.ones(len(i))]
                   + ([cells.order.astype(np.float64)] if order_effects else []), axis=1)
    full = k[:, None] * size + idx
    for _ in range(5):
        eta = np.einsum("cm,cm->c", th.reshape(-1)[full], val)
        p = 1.0 / (1.0 + np.exp(-eta))
        g = np.bincount(full.ravel(), ((y - n * p)[:, None] * val).ravel(), K * size)
        g = g.reshape(K, size) - th
        w = n * p * (1 - p)
        flat = (k[:, None, None] * size * size + idx[:, :, None] * size + idx[:, None, :]).ravel()
        H = np.bincount(flat, (w[:, None, None] * val[:, :, None] * val[:, None, :]).ravel(),
                        K * size * size).reshape(K, size, size) + np.eye(size)
        th = th + np.linalg.solve(H, g[..., None])[..., 0]
    S = th[:, :N] - th[:, :N].mean(axis=1, keepdims=True)
    return S, (th[:, N] if order_effects else np.zeros(K))
