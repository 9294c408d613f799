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
* :math:`U = B_K R_0 T` (judge-centred loadings, :math:`1_K^\top U = 0`), T lower-trapezoidal
  ((K−1) x r, :math:`T_{ij} = 0` for j > i) with positive diagonal: the pivoted chart below.

**The pivoted chart (no rotation or reflection of (U, V) left).** The old coordinates
:math:`U = B_K\tilde U`, :math:`\tilde U \sim N(0, \sigma^2)` iid, with V Haar, are invariant
under :math:`(U, V)\to(UQ, VQ)`, :math:`Q\in O(r)`, so NUTS travelled along the orbit. Every
:math:`\tilde U` of full column rank is uniquely :math:`R_0 T Q` (an LQ decomposition of
:math:`R_0^\top\tilde U`), with :math:`R_0` a fixed orthogonal (K−1) x (K−1) matrix; and
:math:`UV^\top = B_K R_0 T (VQ^\top)^\top`, where :math:`[\mu, VQ^\top]` is again Haar. So (T, W)
parameterises the quotient, one point per orbit. The implied prior on the invariants is kept
exactly by the Jacobian of :math:`X = TQ`: :math:`dX = \prod_{i=1}^r T_{ii}^{\,r-i}\,dT\,dQ`
(square rows by the LQ Jacobian; the rows below r are a rotation, Jacobian 1), and
:math:`\lVert\tilde U\rVert = \lVert T\rVert` with :math:`R_0` orthogonal, so T has density
:math:`\propto \exp(-\lVert T\rVert^2/2\sigma^2)\prod_i T_{ii}^{\,r-i}` (flat priors: just the
product). The diagonal is sampled as :math:`\log(T_{ii}/t_{0i})` (``disagreement_scale_free``), whose
transform carries the product and the log's Jacobian, :math:`\prod_i \rho_i^{\,r-i+1}`; the MAP,
which drops Jacobians, is then the MAP of the old model and, flat, the MLE.

The chart is singular only where a pivot loading :math:`T_{ii}` is 0, and a posterior near that
boundary is where chains can settle in mirror modes. :math:`R_0` (the pivot) is chosen from a
start :math:`S_0` (``start=``, else :func:`bayescal.dial.ridge_scores`) so that the start's
loadings are :math:`T = \mathrm{diag}(\sigma_i/\sqrt N)`: its first r columns are the Helmert
coordinates of the start's left singular vectors. The pivot loadings then sit at the size of the
singular values, far from 0 whenever rank r is supported, and every chain starts at the pivot
(nutpie jitters it). :func:`check_reflections` warns if chains still disagree on a factor's sign.

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
``disagreement_unrotated_free``               item, factor    V in the pivoted chart
``disagreement_loading_unrotated_free``       judge, factor   U in the pivoted chart
``outcome``                                   cell            wins of item i per cell (observed;
                                                                the ``cell`` coordinate holds
                                                                :meth:`Comparisons.cell_labels`)
============================================  ==============  ====================================

Names ending in ``_free`` are not read as results (A, δ, T, and U, V in the pivoted chart, whose
orientation depends on the pivot: the likelihood and the prior are invariant under
:math:`(U, V) \to (UQ, VQ)`, :math:`Q \in O(r)`). :func:`bayescal.summarize` and
:func:`bayescal.diagnose` skip them; every other variable is an identified invariant. :func:`canonical_factors` adds the canonical
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
from pymc.logprob.transforms import LogTransform

from bayescal.dial import canonical, check_rank, n_free_parameters, ridge_scores
from bayescal.identify import IdentificationWarning, require_features_identified
from bayescal.models._btl import draw_wins, feature_term, kernel_logp
from bayescal.priors import check_feature_pooling, check_prior_sd

__all__ = ["IDENTIFIED", "Priors", "build", "canonical_factors", "check_reflections"]

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
    feature_effect_sd : float or None
        σ of ``feature_effect ~ Normal(0, σ)`` per judge and feature (1, as in the order-effect
        BTL); used only with comparison features. ``None``: flat.
    feature_pooling : {"none", "shared", "partial"}
        How the judges' feature effects are pooled (:func:`bayescal.models._btl.feature_term`):
        ``"none"`` (default) independent ``Normal(0, feature_effect_sd)`` per judge,
        ``"shared"`` one effect for all judges, ``"partial"`` the hierarchical
        ``β_kf ~ Normal(β̄_f, τ_f)`` with ``β̄_f ~ Normal(0, feature_effect_sd)`` and
        ``τ_f ~ HalfNormal(feature_pooling_sd)`` (for NUTS; its MAP is degenerate). The twin has
        no penalty.
    feature_pooling_sd : float
        Scale of the half-normal prior on τ_f (0.5: judges' length effects within about ±1
        logit of their mean a priori). Never flat.
    """

    basis_sd: float = 1.0
    loading_mean_sd: float | None = 0.5
    loading_sd: float | None = 0.5
    disagreement_sd: float | None = 1.0
    order_effect_sd: float | None = 1.0
    feature_effect_sd: float | None = 1.0
    feature_pooling: str = "none"
    feature_pooling_sd: float = 0.5

    def __post_init__(self) -> None:
        if self.basis_sd is None:
            raise ValueError("basis_sd cannot be None: A's prior keeps its radial part proper "
                             "(only A's direction enters the likelihood)")
        for name in ("basis_sd", "loading_mean_sd", "loading_sd", "disagreement_sd",
                     "order_effect_sd", "feature_effect_sd"):
            check_prior_sd(name, getattr(self, name))
        check_feature_pooling(self.feature_pooling, self.feature_pooling_sd)

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on every identified block: the MAP of (S, b) is the twin's MLE."""
        return cls(loading_mean_sd=None, loading_sd=None, disagreement_sd=None,
                   order_effect_sd=None, feature_effect_sd=None)


def _normal_or_flat(name: str, sd: float | None, **kwargs) -> pt.TensorVariable:
    if sd is None:
        return pm.Flat(name, **kwargs)
    return pm.Normal(name, 0.0, sd, **kwargs)


class _PivotLog(LogTransform):
    """log ρ_i, with the chart's volume in the Jacobian: ρ_i^(r−i) · ρ_i (the module docstring).

    The MAP (no Jacobian) then maximises the density with respect to Lebesgue measure on Ũ,
    as before the chart, so the flat MAP is still the MLE; NUTS gets the full Jacobian.
    """

    name = "log"  # the value variable is named like a log transform's (tools strip "_log__")

    def __init__(self, rank: int) -> None:
        self.power = np.arange(rank, 0, -1).astype(np.float64)  # r − i + 1, i = 1..r

    def log_jac_det(self, value, *inputs):
        return self.power * value


def _pivot(cells: Comparisons, rank: int, order_effects: bool, start: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pivot: judge basis B_K R₀, loading scales t₀ and W₀ = [μ₀, V₀] of a start S₀."""
    K, N = cells.n_judges, cells.n_items
    if start is None:
        S0, _ = ridge_scores(cells, order_effects=order_effects)
    else:
        S0 = np.asarray(start, dtype=np.float64)
        if S0.shape != (K, N) or not np.isfinite(S0).all():
            raise ValueError(f"start must be a finite {K} x {N} score matrix (judge, item), "
                             f"got shape {S0.shape}")
    f = canonical(S0 - S0.mean(axis=1, keepdims=True), rank)
    helmert_k = zero_sum_basis(K)
    # Helmert coordinates of U₀ = PΣ/√N: orthogonal columns of norms σ_i/√N
    P = helmert_k.T @ f.disagreement_loading
    basis, tri = np.linalg.qr(P, mode="complete")
    basis[:, :rank] *= np.where(np.diag(tri) < 0, -1.0, 1.0)
    # a floor keeps ρ's scale finite if the start has a (numerically) zero singular value
    t0 = np.maximum(np.abs(np.diag(tri)), 1e-2)
    return helmert_k @ basis, t0, np.column_stack([f.consensus, f.disagreement])


def build(
    data: Comparisons,
    *,
    priors: Priors | None = None,
    rank: int = 1,
    order_effects: bool = True,
    start: np.ndarray | None = None,
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
    start : array (K, N), optional
        Scores S₀ the chart is pivoted on and the chains start from (jittered), e.g. the twin's
        MLE ``bayescal.frequentist.low_rank_judges.fit(data).params["ability"]``. Default: the
        per-judge ridge scores of :func:`bayescal.dial.ridge_scores`. The prior and the
        posterior of every invariant do not depend on it.

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
    ValueError
        ``start`` not a finite K x N matrix.
    IdentificationError
        A comparison feature whose effect the design cannot separate for some judge (named;
        :func:`bayescal.identify.require_features_identified`).

    Warns
    -----
    IdentificationWarning
        Fewer comparison cells than free parameters: the prior sets part of the answer.
    """
    # a prior would only hide a feature the design cannot separate (judge and feature named)
    require_features_identified(data, order=order_effects)
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
    if c.n_features:
        coords["feature"] = list(c.feature_names)
    helmert_n = zero_sum_basis(N)
    judge_basis, t0, W0 = _pivot(c, r, order_effects, start)
    # A = √(N−1) H_Nᵀ W₀/√N has AᵀA = (N−1)I and maps to W₀: the chains start at the pivot
    start_a = np.sqrt((N - 1) / N) * helmert_n.T @ W0
    low_rows, low_cols = np.tril_indices(K - 1, -1, r)
    with pm.Model(coords=coords) as model:
        judge = pm.Data("judge_code", c.judge, dims="cell")
        item_i = pm.Data("item_i", c.item_i, dims="cell")
        item_j = pm.Data("item_j", c.item_j, dims="cell")
        count = pm.Data("count", c.count, dims="cell")
        # A ~ Normal(0, basis_sd), written as a shift of a flat coordinate so that the model's
        # default initial point (zeros) is the pivot's full-rank A (A = 0 has no Cholesky
        # factor) without a custom initial value, which PyMC's log-likelihood and model
        # conversion refuse
        A = pm.Flat("item_basis_free", shape=(N - 1, r + 1)) + start_a
        chol = pt.linalg.cholesky(A.T @ A)
        # (N-1)/2 log det(AᵀA): a radial term that leaves A's direction uniform and gives the
        # prior-only radial part a mode away from 0 (otherwise MAP would shrink A to 0)
        pm.Potential("item_basis_prior",
                     pt.sum(pm.logp(pm.Normal.dist(0.0, priors.basis_sd), A))
                     + (N - 1) * pt.sum(pt.log(pt.diagonal(chol))))
        Q = pt.linalg.solve_triangular(chol, A.T, lower=True).T  # A L^{-T}: QᵀQ = I
        W = np.sqrt(N) * (pt.as_tensor(helmert_n) @ Q)
        mu = pm.Deterministic("consensus", W[:, 0], dims="item")
        V = pm.Deterministic("disagreement_unrotated_free", W[:, 1:], dims=("item", "factor"))
        if priors.loading_mean_sd is None:
            log_mean = pm.Flat("consensus_loading_mean_log_free")
            gbar = pm.Deterministic("consensus_loading_mean", pt.exp(log_mean))
        else:
            gbar = pm.LogNormal("consensus_loading_mean", 0.0, priors.loading_mean_sd)
        delta = _normal_or_flat("consensus_loading_free", priors.loading_sd, shape=K - 1)
        gamma = pm.Deterministic("consensus_loading", gbar + pt.as_tensor(zero_sum_basis(K))
                                 @ delta, dims="judge")
        # T: lower-trapezoidal loadings in the pivot basis, T_ii = t0_i ρ_i > 0 (the module
        # docstring); the below-diagonal entries start at the pivot's 0
        below = _normal_or_flat("disagreement_loading_free", priors.disagreement_sd,
                                shape=len(low_rows))
        ratio = pm.HalfFlat("disagreement_scale_free", shape=r,
                            default_transform=_PivotLog(r))
        diag = t0 * ratio
        if priors.disagreement_sd is not None:
            pm.Potential("disagreement_scale_prior",
                         pt.sum(pm.logp(pm.Normal.dist(0.0, priors.disagreement_sd), diag)))
        T = pt.zeros((K - 1, r))
        T = pt.set_subtensor(T[low_rows, low_cols], below)
        T = pt.set_subtensor(T[np.arange(r), np.arange(r)], diag)
        U = pm.Deterministic("disagreement_loading_unrotated_free",
                             pt.as_tensor(judge_basis) @ T, dims=("judge", "factor"))
        R = pm.Deterministic("disagreement_matrix", U @ V.T, dims=("judge", "item"))
        S = pm.Deterministic("ability", gamma[:, None] * mu[None, :] + R, dims=("judge", "item"))
        pm.Deterministic("disagreement_projector", V @ V.T / N, dims=("item", "item2"))
        pm.Deterministic("space_projector", W @ W.T / N, dims=("item", "item2"))
        eta = S[judge, item_i] - S[judge, item_j]
        if order_effects:
            order = pm.Data("order", c.order.astype(np.float64), dims="cell")
            b = _normal_or_flat("order_effect", priors.order_effect_sd, dims="judge")
            eta = eta + order * b[judge]  # model (1)
        if c.n_features:
            eta = eta + feature_term(c.features, judge, priors.feature_effect_sd,
                                     priors.feature_pooling, priors.feature_pooling_sd)
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


def check_reflections(result: xr.DataTree, *, warn: bool = True) -> xr.DataArray:
    """Whether every chain samples the same orientation of each disagreement factor.

    The pivoted chart has no reflection of (U, V) left, but a chain could still sit in a mirror
    image of another where a pivot loading's posterior reaches 0 (a factor the data barely
    identify). For each chain and factor: the share of draws whose V column points the way of
    chain 0's mean column.

    Parameters
    ----------
    result : xarray.DataTree
        From :func:`bayescal.fit` (NUTS) on a :func:`build` model.
    warn : bool
        Warn (``IdentificationWarning``) when a chain's majority orientation differs from chain
        0's, or any share is below 0.99.

    Returns
    -------
    xarray.DataArray
        Shares, dims ``chain, factor``.
    """
    V = result["posterior"]["disagreement_unrotated_free"].transpose(
        "chain", "draw", "item", "factor")
    ref = V.isel(chain=0).mean("draw")
    share = ((V * ref).sum("item") > 0).mean("draw")
    if warn and bool((share < 0.99).any()):
        c, q = np.unravel_index(int(share.values.argmin()), share.shape)
        c, q = share["chain"].values[c], share["factor"].values[q]
        warnings.warn(
            f"chains disagree on the sign of disagreement factor {q}: in chain {c} only "
            f"{float(share.min()):.0%} of draws point the way of chain 0 (a chain in a mirror "
            "mode, or a factor the data barely identify); its invariants mix modes — refit "
            "with start= the twin's MLE, or a lower rank",
            IdentificationWarning, stacklevel=2)
    return share
