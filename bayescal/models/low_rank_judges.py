r"""DIAL's low-rank judge model (model (1) under Condition 3) in PyMC.

Judge k prefers item i over item j, with item i displayed in position ``a`` (+1 first, −1
second), with probability :math:`\sigma(S_{ki} - S_{kj} + a\,b_k)`, and the position-debiased
scores have the consensus–disagreement form :math:`S = \gamma\mu^\top + UV^\top` (DIAL,
"Position-Debiased LLM Judges with Adaptive Human Preference Calibration", 2026; Condition 3
of Yu et al. 2026, arXiv:2605.05073). Condition 3 is written into the parameterization
exactly:

* :math:`W = [\mu, V] = \sqrt N\,H_N A L^{-\top}`, :math:`H_N` the fixed N x (N−1) Helmert
  basis, :math:`A` an unconstrained (N−1) x (r+1) matrix and :math:`L = \mathrm{chol}(A^\top A)`,
  so :math:`W^\top 1_N = 0` and :math:`W^\top W/N = I_{r+1}` in every draw; the direction of A is
  uniform (Haar) on the Stiefel manifold, its radial part is prior-only;
* :math:`\gamma = \bar\gamma 1_K + B_K\delta` with :math:`\bar\gamma > 0`, which pins the sign
  of μ (:math:`S^\top 1_K = K\bar\gamma\mu`);
* :math:`U = B_K\tilde U` (judge-centred loadings, :math:`1_K^\top U = 0`).

============================================  ==============  ====================================
name                                          dims            meaning (paper symbol)
============================================  ==============  ====================================
``ability``                                   judge, item     position-debiased scores (S)
``order_effect``                              judge           order effect (b; absent for noPos)
``consensus``                                 item            consensus direction (μ, ‖μ‖² = N)
``consensus_loading``                         judge           loading on the consensus (γ)
``consensus_loading_mean``                    —               mean loading (γ̄ > 0)
``disagreement_matrix``                       judge, item     UVᵀ = S − γμᵀ
``disagreement_projector``                    item, item2     projector onto col(V), VVᵀ/N
``space_projector``                           item, item2     projector onto col(W), WWᵀ/N
``disagreement_unrotated_free``               item, factor    V in the sampled rotation
``disagreement_loading_unrotated_free``       judge, factor   U in the sampled rotation
``outcome``                                   cell            wins of item i per cell (observed;
                                                                the ``cell`` coordinate holds
                                                                :meth:`Comparisons.cell_labels`)
============================================  ==============  ====================================

Names ending in ``_free`` are not identified (A, δ, Ũ, and U, V in whatever rotation the sampler
visits: the likelihood and the prior are invariant under :math:`(U, V) \to (UQ, VQ)`,
:math:`Q \in O(r)`). :func:`bayescal.summarize` and :func:`bayescal.diagnose` skip them; every
other variable is an identified invariant. :func:`canonical_factors` adds the canonical
(SVD-axis) ``disagreement`` and ``disagreement_loading`` to a fitted result. See
``models/low_rank_judges.md``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.dial import canonical, check_rank, n_free_parameters
from bayescal.identify import IdentificationWarning, refuse_features
from bayescal.models._btl import draw_wins, kernel_logp
from bayescal.priors import check_prior_sd

__all__ = ["IDENTIFIED", "Priors", "build", "canonical_factors"]

#: The model's identified (gauge-invariant) variables: the ones diagnosed and compared.
IDENTIFIED = ("ability", "order_effect", "consensus", "consensus_loading",
              "consensus_loading_mean", "disagreement_matrix", "disagreement_projector",
              "space_projector")


@dataclass(frozen=True)
class Priors:
    """Prior scales of the low-rank judge model (logit scale, ‖μ‖² = N).

    Attributes
    ----------
    basis_sd : float
        σ of ``A ~ Normal(0, σ)``. Only A's direction enters the likelihood (uniform on the
        Stiefel manifold whatever σ); a term :math:`\\tfrac{N-1}{2}\\log\\det(A^\\top A)` keeps
        the prior-only radial part away from 0, so the MAP is well defined. Never flat.
    loading_mean_sd : float or None
        σ of ``log γ̄ ~ Normal(0, σ)`` (γ̄ LogNormal; 0.5: mean loading within ×e^{±1} of 1,
        i.e. judges' score spreads around one logit). ``None``: flat on log γ̄.
    loading_sd : float or None
        σ of the Helmert coordinates δ of γ − γ̄ (0.5). ``None``: flat.
    disagreement_sd : float or None
        σ of the Helmert coordinates Ũ of U (1). ``None``: flat.
    order_effect_sd : float or None
        σ of ``b ~ Normal(0, σ)`` (1: order effects within ±2 logits). ``None``: flat.
    """

    basis_sd: float = 1.0
    loading_mean_sd: float | None = 0.5
    loading_sd: float | None = 0.5
    disagreement_sd: float | None = 1.0
    order_effect_sd: float | None = 1.0

    def __post_init__(self) -> None:
        if self.basis_sd is None:
            raise ValueError("basis_sd cannot be None: A's prior keeps its radial part proper "
                             "(only A's direction enters the likelihood)")
        for name in ("basis_sd", "loading_mean_sd", "loading_sd", "disagreement_sd",
                     "order_effect_sd"):
            check_prior_sd(name, getattr(self, name))

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on every identified block: the MAP of (S, b) is the twin's MLE."""
        return cls(loading_mean_sd=None, loading_sd=None, disagreement_sd=None,
                   order_effect_sd=None)


def _normal_or_flat(name: str, sd: float | None, **kwargs) -> pt.TensorVariable:
    if sd is None:
        return pm.Flat(name, **kwargs)
    return pm.Normal(name, 0.0, sd, **kwargs)


def build(
    data: Comparisons,
    *,
    priors: Priors | None = None,
    rank: int = 1,
    order_effects: bool = True,
) -> pm.Model:
    """Build DIAL's low-rank judge model (LLM-only part, θ of (12)) as a PyMC model.

    Parameters
    ----------
    data : Comparisons
        Verdicts with display order on every verdict when ``order_effects``.
    rank : int
        r, the number of disagreement factors: 1 ≤ r ≤ min(K − 1, N − 2).
    priors : Priors, optional
        Prior scales (default ``Priors()``; ``Priors.flat()`` for MAP = MLE).
    order_effects : bool
        Include b_k. False pools the display orders (DIAL-noPos).

    Returns
    -------
    pymc.Model
        Deterministics for the invariants listed in :data:`IDENTIFIED`; free variables and the
        rotation-dependent factors end in ``_free``.

    Raises
    ------
    ValueError, IdentificationError
        r out of range.
    DataError
        ``order_effects`` with verdicts whose display order is not recorded.

    Warns
    -----
    IdentificationWarning
        Fewer comparison cells than free parameters: the prior sets part of the answer.
    """
    refuse_features(data, "low-rank judges model")
    priors = priors if priors is not None else Priors()
    K, N = data.n_judges, data.n_items
    r = check_rank(rank, K, N)
    c = data.order_cells(order_effects)
    n_free = n_free_parameters(r, K, N, order_effects)
    if c.n_cells < n_free:
        warnings.warn(
            f"{c.n_cells} comparison cells for {n_free} free parameters at r = {r}: the data do "
            "not identify every score (DIAL Prop. B.2); the prior sets the rest",
            IdentificationWarning, stacklevel=2)
    coords = {"judge": list(data.judges), "item": list(data.items),
              "item2": list(data.items), "factor": list(range(1, r + 1)),
              "cell": c.cell_labels()}
    helmert_n = pt.as_tensor(zero_sum_basis(N))
    helmert_k = pt.as_tensor(zero_sum_basis(K))
    start = np.zeros((N - 1, r + 1))
    start[np.arange(r + 1), np.arange(r + 1)] = np.sqrt(N - 1)
    with pm.Model(coords=coords) as model:
        judge = pm.Data("judge_code", c.judge, dims="cell")
        item_i = pm.Data("item_i", c.item_i, dims="cell")
        item_j = pm.Data("item_j", c.item_j, dims="cell")
        count = pm.Data("count", c.count, dims="cell")
        # A ~ Normal(0, basis_sd), written as a shift of a flat coordinate so that the model's
        # default initial point (zeros) is a full-rank A (A = 0 has no Cholesky factor) without
        # a custom initial value, which PyMC's log-likelihood and model conversion refuse
        A = pm.Flat("item_basis_free", shape=(N - 1, r + 1)) + start
        chol = pt.linalg.cholesky(A.T @ A)
        # (N-1)/2 log det(AᵀA): a radial term that leaves A's direction uniform and gives the
        # prior-only radial part a mode away from 0 (otherwise MAP would shrink A to 0)
        pm.Potential("item_basis_prior",
                     pt.sum(pm.logp(pm.Normal.dist(0.0, priors.basis_sd), A))
                     + (N - 1) * pt.sum(pt.log(pt.diagonal(chol))))
        Q = pt.linalg.solve_triangular(chol, A.T, lower=True).T  # A L^{-T}: QᵀQ = I
        W = np.sqrt(N) * (helmert_n @ Q)
        mu = pm.Deterministic("consensus", W[:, 0], dims="item")
        V = pm.Deterministic("disagreement_unrotated_free", W[:, 1:], dims=("item", "factor"))
        if priors.loading_mean_sd is None:
            log_mean = pm.Flat("consensus_loading_mean_log_free")
            gbar = pm.Deterministic("consensus_loading_mean", pt.exp(log_mean))
        else:
            gbar = pm.LogNormal("consensus_loading_mean", 0.0, priors.loading_mean_sd)
        delta = _normal_or_flat("consensus_loading_free", priors.loading_sd, shape=K - 1)
        gamma = pm.Deterministic("consensus_loading", gbar + helmert_k @ delta, dims="judge")
        u_free = _normal_or_flat("disagreement_loading_free", priors.disagreement_sd,
                                 shape=(K - 1, r))
        U = pm.Deterministic("disagreement_loading_unrotated_free", helmert_k @ u_free,
                             dims=("judge", "factor"))
        R = pm.Deterministic("disagreement_matrix", U @ V.T, dims=("judge", "item"))
        S = pm.Deterministic("ability", gamma[:, None] * mu[None, :] + R, dims=("judge", "item"))
        pm.Deterministic("disagreement_projector", V @ V.T / N, dims=("item", "item2"))
        pm.Deterministic("space_projector", W @ W.T / N, dims=("item", "item2"))
        eta = S[judge, item_i] - S[judge, item_j]
        if order_effects:
            order = pm.Data("order", c.order.astype(np.float64), dims="cell")
            b = _normal_or_flat("order_effect", priors.order_effect_sd, dims="judge")
            eta = eta + order * b[judge]  # model (1)
        pm.CustomDist("outcome", eta, count, logp=kernel_logp, random=draw_wins,
                      observed=c.wins, dims="cell")
    return model


def canonical_factors(result: xr.DataTree, *, rank: int | None = None) -> xr.DataTree:
    """Add the canonical factors ``disagreement`` (V) and ``disagreement_loading`` (U) per draw.

    Each draw's S (``ability``) is factored by :func:`bayescal.dial.canonical` (as the twin
    does): SVD axes, U = PΣ/√N, V = √N Q,
    the first non-zero loading of each factor positive. For r = 1 this removes the sign
    ambiguity, so the factors can be summarised; for r ≥ 2 the axes are identified only where
    the singular values are well separated in every draw (check before reading them).

    Parameters
    ----------
    result : xarray.DataTree
        From :func:`bayescal.fit` on a :func:`build` model.
    rank : int, optional
        r (default: the size of the ``factor`` dim).

    Returns
    -------
    xarray.DataTree
        The same tree with the two variables added to ``posterior``.
    """
    post = result["posterior"].to_dataset()
    r = int(rank if rank is not None else post.sizes["factor"])
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    K, N = post.sizes["judge"], post.sizes["item"]
    S = post["ability"].transpose("chain", "draw", "judge", "item").values.reshape(-1, K, N)
    Us, Vs = [], []
    for s in S:
        can = canonical(s, r)
        Us.append(can.disagreement_loading)
        Vs.append(can.disagreement)
    coords = {"chain": post["chain"], "draw": post["draw"], "judge": post["judge"],
              "item": post["item"], "factor": list(range(1, r + 1))}
    post["disagreement"] = xr.DataArray(
        np.array(Vs).reshape(n_chain, n_draw, N, r), dims=("chain", "draw", "item", "factor"),
        coords={k: coords[k] for k in ("chain", "draw", "item", "factor")})
    post["disagreement_loading"] = xr.DataArray(
        np.array(Us).reshape(n_chain, n_draw, K, r), dims=("chain", "draw", "judge", "factor"),
        coords={k: coords[k] for k in ("chain", "draw", "judge", "factor")})
    out = result.copy()
    out["posterior"] = xr.DataTree(post)
    return out
