r"""Covariances of the calibrated scores, one per ``information`` kind, at λ = 0, finite λ, ∞.

Finite λ (DIAL Theorem 4). ζ̂ solves :math:`\nabla\ell_h + \lambda\nabla\ell_l = 0`; linearising,
:math:`\hat\zeta - \zeta^* \approx -H^{-1}(\nabla\ell_h + \lambda\nabla\ell_l)(\zeta^*)` with
:math:`H = A_h + \lambda A_l` the Hessian of :math:`q_\lambda` (per-observation scale). The two
samples are independent, :math:`\mathrm{Var}\,\nabla\ell_h = V_h/n_h` and
:math:`\mathrm{Var}\,\lambda\nabla\ell_l = \lambda^2 V_l/n_l`, so

.. math:: \mathrm{Cov}(\hat\zeta) = H^- \big(V_h + \lambda^2 \tfrac{n_h}{n_l} V_l\big) H^- / n_h,

pseudo-inverses on the complement of the chart's gauge directions (every quantity reported is
gauge-invariant). The kinds fill in H, V_h and V_l:

``expected``
    H = I_h + λ I_l and V_b = I_b with the Fisher informations per observation,
    :math:`I_l = n_l^{-1}\sum_c n_c p_c(1-p_c) x_c x_c^\top` (and the same per human comparison):
    the model-based covariance, correct when both likelihoods are; at λ = n_l/n_h it is the
    inverse Fisher information of the joint MLE, H⁻¹/n_h. With τ = n_h/n_l the meat is
    :math:`I_h + \lambda^2\tau I_l = \lambda\tau H + (1 - \lambda\tau) I_h`, so
    :math:`\mathrm{Cov} = [\lambda\tau H^- + (1 - \lambda\tau) H^- I_h H^-]/n_h`.
``observed``
    The same formula with H the observed Hessian of :math:`q_\lambda`. Not the blocks' own
    observed informations: on this curved chart ∇²ℓ_h and ∇²ℓ_l change with the
    parameterisation wherever their gradients do not vanish (at a finite λ,
    :math:`\nabla\ell_h = -\lambda\nabla\ell_l \ne 0`), and the only combination of them that
    does not is H itself (its gradient vanishes at ζ̂). The form above is chart-free, has the
    model-based meat's expectation, and is the inverse observed information of the joint
    likelihood at λ = n_l/n_h, of the LLM likelihood as λ → ∞ and of the human one at λ = 0.
``sandwich``
    Observed H; V_h, V_l the centred covariances of the per-verdict scores.
``cluster``
    Observed H; V_l the centred cluster meat of the key over the LLM verdicts; V_h per human
    comparison for the built-in keys (the pooled human "judge" is a population of raters: its
    repeated comparisons of a pair come from different people, as DIAL assumes), or the key's
    cluster meat over the human verdicts for the data's own key. CR1 (default) multiplies each
    sample's cluster meat by G/(G−1); ``correction="CR0"`` with ``"judge_pair"`` is the authors'
    post-selection cell-clustered interval.

λ = 0 is the human BTL: ``expected`` and ``observed`` are both the Fisher covariance
:math:`B(B^\top L B)^{-1}B^\top` (the same for this logit model); ``sandwich`` the per-comparison
sandwich; ``cluster`` equals it for a built-in key and is the key's cluster sandwich otherwise.
λ = ∞ is the staged fit: the calibration c of the kind with M held fixed (its human part as at
λ = 0, on the design rows :math:`M_i - M_j`), plus — unless ``anchored="fixed"``, the authors'
convention — the LLM estimation error of M carried through ŝ(θ) = M_θ ĉ(θ) by the delta method
with the LLM-only covariance of the kind (so S and b get exactly the low-rank twin's intervals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from bayescal.basis import zero_sum_basis
from bayescal.data.comparisons import BUILTIN_CLUSTER_KEYS, ClusterRecords
from bayescal.frequentist import covariance
from bayescal.frequentist.human_calibration.objective import (
    derivatives,
    human_block,
    human_jacobian,
    llm_block,
)
from bayescal.frequentist.human_calibration.optimize import Fit
from bayescal.frequentist.human_calibration.path import NULL_REL, human_design, human_moments
from bayescal.frequentist.human_calibration.problem import Point, Problem
from bayescal.frequentist.low_rank_judges import cluster_groups
from bayescal.identify import IdentificationError

__all__ = ["Clusters", "Result", "covariance_at", "llm_identified", "prepare_clusters"]


@dataclass(frozen=True)
class Clusters:
    """The cluster records of each sample for ``information="cluster"`` (human: None when the
    human comparisons are their own clusters, the built-in keys)."""

    key: str
    correction: str
    llm: ClusterRecords
    human: ClusterRecords | None


@dataclass(frozen=True)
class Result:
    """Covariance of (ŝ_h, β̂_h, vec S, b, vec β) in the Estimate's order (the parts the fit
    has), and what it is."""

    cov: NDArray[np.float64]
    description: str


def prepare_clusters(p: Problem, req: covariance.Request, lam: float | None, *,
                     check: bool = True) -> Clusters | None:
    """The records of ``req``'s key, with the few-clusters rule applied (``check``) before
    fitting.

    ``lam`` is the λ of the fit (None for GACV: the human block is then checked at d).
    """
    if req.kind != "cluster":
        return None
    assert req.cluster is not None and req.correction is not None
    llm = p.llm.cluster_records(req.cluster)
    human = None if req.cluster in BUILTIN_CLUSTER_KEYS else p.human.cluster_records(req.cluster)
    groups = []
    if lam is None or lam > 0:
        # each judge's own parameters gain its F feature effects
        groups = [(name, n, size + p.n_feat)
                  for name, n, size in cluster_groups(p.llm, llm, p.rank, p.order)
                  if name != "all"]
        groups.append(("all LLM", llm.n_clusters, p.n_free_judges + p.n_own))
    if human is not None:
        groups.append(("human", human.n_clusters,
                       (p.N - 1 if lam == 0 else p.d) + p.n_feat))
    if check:
        covariance.check_cluster_counts(groups, key=req.cluster)
    return Clusters(req.cluster, req.correction, llm, human)


# ---------------------------------------------------------------------------- pieces
def _llm_design(pt: Point, p: Problem) -> NDArray[np.float64]:
    """x_c = ∂η_c/∂raw, one row per LLM cell."""
    nG, nF, nb, nu = p.sizes
    nc = p.k.size
    r1 = p.r1
    X = np.zeros((nc, nG + nF + nb + nu))
    rows = np.arange(nc)[:, None]
    X[rows, p.k[:, None] * r1 + np.arange(r1)] = pt.F[p.i] - pt.F[p.j]
    X[rows, nG + p.i[:, None] * r1 + np.arange(r1)] = pt.G[p.k]
    X[rows, nG + p.j[:, None] * r1 + np.arange(r1)] -= pt.G[p.k]
    if p.m:
        X[rows, nG + nF + p.k[:, None] * p.m + np.arange(p.m)] = p.z
    return X


def _centred_cluster_meat(X: NDArray[np.float64], prob: NDArray[np.float64],
                          records: ClusterRecords, gbar: NDArray[np.float64], n_total: float,
                          correction: str) -> NDArray[np.float64]:
    """c n⁻¹ Σ_g G_g G_gᵀ, G_g = Σ_{r ∈ g} (ρ_r x_c − n_r ḡ) over (cluster, cell) records."""
    rho = records.count * prob[records.cell] - records.wins
    scores = rho[:, None] * X[records.cell] - records.count[:, None] * gbar[None, :]
    return covariance.cluster_meat(scores, records.code, correction=correction) / n_total


def llm_meat(zeta: NDArray[np.float64], p: Problem, kind: str,
             clusters: Clusters | None) -> NDArray[np.float64]:
    """V_l per LLM verdict (ζ coordinates) for ``kind`` (expected/observed: the information)."""
    pt = p.point(zeta)
    T = p.chart
    if kind in ("expected", "observed"):
        block = llm_block(pt, p, expected=kind == "expected")
        assert block.hessian is not None
        return T.T @ block.hessian @ T / p.n_l
    pr = expit(p.llm_eta(pt))
    X = _llm_design(pt, p) @ T
    gbar = X.T @ (p.n * pr - p.y) / p.n_l
    if kind == "sandwich":
        sq = p.y2 - 2 * pr * p.y + p.n * pr**2
        return (X.T * sq) @ X / p.n_l - np.outer(gbar, gbar)
    assert clusters is not None
    return _centred_cluster_meat(X, pr, clusters.llm, gbar, p.n_l, clusters.correction)


def human_meat(zeta: NDArray[np.float64], p: Problem, kind: str,
               clusters: Clusters | None) -> NDArray[np.float64]:
    """V_h per human comparison (ζ coordinates) for ``kind``."""
    if kind in ("expected", "observed"):
        block = human_block(p.point(zeta), p, expected=kind == "expected")
        assert block.hessian is not None
        return p.chart.T @ block.hessian @ p.chart / p.n_h
    if kind == "sandwich" or clusters is None or clusters.human is None:
        return human_moments(zeta, p)[1]
    gbar, _ = human_moments(zeta, p)
    pt = p.point(zeta)
    s = p.human_scores(pt.G, pt.F, pt.u)
    return _centred_cluster_meat(human_design(zeta, p), expit(p.human_logit(s, pt.beta_h)),
                                 clusters.human, gbar, p.n_h, clusters.correction)


def _fixed_design_cov(X: NDArray[np.float64], d: NDArray[np.float64], p: Problem, kind: str,
                      clusters: Clusters | None) -> NDArray[np.float64]:
    """Cov of a logistic coefficient with design rows X per human cell (logits d), for
    ``kind``."""
    pr = expit(d)
    inv = np.linalg.inv((X.T * (p.hn * pr * (1 - pr))) @ X)
    if kind in ("expected", "observed"):
        return inv  # the logit model's observed and expected informations coincide
    if kind == "sandwich" or clusters is None or clusters.human is None:
        sq = p.hy2 - 2 * pr * p.hy + p.hn * pr**2
        meat = (X.T * sq) @ X
    else:
        meat = _centred_cluster_meat(X, pr, clusters.human, np.zeros(X.shape[1]), 1.0,
                                     clusters.correction)
    out = inv @ meat @ inv
    return (out + out.T) / 2


# ---------------------------------------------------------------------------- per λ
def finite(f: Fit, p: Problem, kind: str, clusters: Clusters | None) -> NDArray[np.float64]:
    """Cov(ζ̂) = H⁻ (V_h + λ² (n_h/n_l) V_l) H⁻ / n_h at a finite λ > 0."""
    _, free = p.gauge(f.zeta)
    tau = p.n_h / p.n_l
    if kind in ("expected", "observed"):
        I_h = human_meat(f.zeta, p, "expected", None)
        if kind == "expected":
            H = I_h + f.lam * llm_meat(f.zeta, p, "expected", None)
        else:
            H = derivatives(f.zeta, p, f.lam).hessian
        # V_h + λ²τ V_l with V_b = I_b, written through H (chart-free; module docstring)
        J = f.lam * tau * H + (1 - f.lam * tau) * I_h
    else:
        H = derivatives(f.zeta, p, f.lam).hessian
        J = human_meat(f.zeta, p, kind, clusters) + f.lam**2 * tau * llm_meat(
            f.zeta, p, kind, clusters)
    Hinv = free @ np.linalg.inv(free.T @ H @ free) @ free.T
    return Hinv @ J @ Hinv / p.n_h


def zero(f: Fit, p: Problem, kind: str, clusters: Clusters | None) -> NDArray[np.float64]:
    """Cov(ŝ_0, β̂_h) of the human BTL: T Cov Tᵀ from the Helmert coordinates, T = diag(B, I)."""
    B = zero_sum_basis(p.N)
    X = np.column_stack([B[p.hi] - B[p.hj], p.hx])
    T = np.zeros((p.N + p.n_feat, p.N - 1 + p.n_feat))
    T[: p.N, : p.N - 1] = B
    T[p.N:, p.N - 1:] = np.eye(p.n_feat)
    return T @ _fixed_design_cov(X, p.human_logit(f.s, f.beta_h), p, kind, clusters) @ T.T


def _llm_free(zeta: NDArray[np.float64], p: Problem) -> NDArray[np.float64]:
    """Orthonormal basis of the θ coordinates ((β_h, u) excluded) transversal to the judges'
    gauge."""
    null, _ = p.gauge(zeta)
    nz, own = p.n_zeta, p.n_own
    theta = np.zeros((nz, nz - own))
    theta[: nz - own] = np.eye(nz - own)
    g, _ = np.linalg.qr(theta.T @ null)  # gauge directions restricted to θ (own rows dropped)
    full, _ = np.linalg.qr(np.concatenate([g, np.eye(nz - own)], axis=1))
    return theta @ full[:, p.r1**2:]


def llm_information_singular(H: NDArray[np.float64]) -> str:
    """The LLM-only information H at θ̂_∞ (free coordinates) in words if it is singular, else
    '' (the one rule of :func:`infinity` and of GACV's λ = ∞ candidate)."""
    ev = np.linalg.eigvalsh((H + H.T) / 2)
    if ev.min() <= NULL_REL * np.abs(ev).max():
        return (f"the LLM information is singular at θ̂_∞ (smallest eigenvalue {ev.min():.3g}, "
                f"largest {ev.max():.3g})")
    return ""


def llm_identified(zeta: NDArray[np.float64], p: Problem) -> str:
    """'' when the expected LLM information at θ̂_∞ (ζ) is non-singular, else why not."""
    free = _llm_free(zeta, p)
    return llm_information_singular(free.T @ llm_meat(zeta, p, "expected", None) @ free)


def infinity(f: Fit, p: Problem, kind: str, clusters: Clusters | None, anchored: str
             ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """λ = ∞: Cov of the human outputs h = (ŝ_h, β̂_h), Cov(h, ζ̂_θ) (N + F x ζ) and Cov(θ̂)
    (ζ coordinates).

    h: the fixed-M covariance of the calibration (design rows (M_i − M_j, x_t)) plus, unless
    ``anchored="fixed"``, the LLM estimation error carried through h(θ) = (M_θ ĉ(θ),
    β̂_h(θ)) (d(β_h, c)/dθ = −H_oo⁻¹ H_oθ over the human part's own coordinates o; the samples
    are independent). θ̂: the LLM-only covariance of ``kind``.
    """
    pt = p.point(f.zeta)
    M = p.basis(pt.G, pt.F)
    nf, N = p.n_feat, p.N
    # (c, β_h) -> (s_h, β_h) = (M c, β_h)
    A = np.zeros((N + nf, M.shape[1] + nf))
    A[:N, : M.shape[1]] = M
    A[N:, M.shape[1]:] = np.eye(nf)
    X = np.column_stack([M[p.hi] - M[p.hj], p.hx])
    cov_h = A @ _fixed_design_cov(X, p.human_logit(f.s, f.beta_h), p, kind, clusters) @ A.T
    free = _llm_free(f.zeta, p)
    bread_kind = "expected" if kind == "expected" else "observed"
    H = free.T @ llm_meat(f.zeta, p, bread_kind, None) @ free
    problem_found = llm_information_singular(H)
    if problem_found:
        raise IdentificationError(
            f"{problem_found}: the LLM data do not identify every judge score. Add LLM "
            "comparisons, lower the rank, or use a finite llm_weight.")
    Hinv = free @ np.linalg.inv(H) @ free.T
    if kind in ("expected", "observed"):
        cov_l = Hinv / p.n_l
    else:
        cov_l = Hinv @ llm_meat(f.zeta, p, kind, clusters) @ Hinv / p.n_l
    cross = np.zeros((N + nf, p.n_zeta))
    if anchored == "joint":
        T = p.chart
        J_h = np.concatenate([human_jacobian(pt, p) @ T, _own_rows(p, nf)])
        block = human_block(pt, p)
        assert block.hessian is not None
        Hh = T.T @ block.hessian @ T
        own = p.n_own
        dc = -np.linalg.solve(Hh[-own:, -own:], Hh[-own:, :-own])
        D = np.zeros_like(J_h)
        D[:, :-own] = J_h[:, :-own] + J_h[:, -own:] @ dc
        cov_h = cov_h + D @ cov_l @ D.T
        cross = D @ cov_l
    return cov_h, cross, cov_l


def _own_rows(p: Problem, count: int) -> NDArray[np.float64]:
    """∂β_h/∂ζ (F x ζ): β_h is the first block of the human part's own coordinates."""
    rows = np.zeros((count, p.n_zeta))
    rows[:, p.n_zeta - p.n_own: p.n_zeta - p.n_own + count] = np.eye(count)
    return rows


def ability_jacobian(pt: Point, p: Problem) -> NDArray[np.float64]:
    """∂ vec S/∂raw (K·N x raw size)."""
    G, F = pt.G, pt.F
    K, N, r1 = p.K, p.N, p.r1
    nG, nF, nb, nu = p.sizes
    J = np.zeros((K, N, nG + nF + nb + nu))
    JG = np.zeros((K, N, K, r1))
    JG[np.arange(K), :, np.arange(K), :] = F
    JF = np.zeros((K, N, N, r1))
    JF[:, np.arange(N), np.arange(N), :] = G[:, None, :]
    J[:, :, :nG] = JG.reshape(K, N, nG)
    J[:, :, nG: nG + nF] = JF.reshape(K, N, nF)
    return J.reshape(K * N, -1)


def covariance_at(f: Fit, p: Problem, kind: str, clusters: Clusters | None,
                  anchored: str) -> Result:
    """Covariance of (ŝ_h, β̂_h, vec S, b, vec β) at the fit's λ ((ŝ_h, β̂_h) at λ = 0)."""
    label = kind if clusters is None else f"cluster ({clusters.key}, {clusters.correction})"
    if f.lam == 0:
        own = clusters is not None and clusters.human is not None
        what = ("human Fisher" if kind in ("expected", "observed") else
                "human per-comparison sandwich" if not own else f"human {label}")
        return Result(zero(f, p, kind, clusters), f"{what} (λ = 0)")
    pt = p.point(f.zeta)
    T = p.chart
    K, m, nf = p.K, p.m, p.n_feat
    start = p.sizes[0] + (p.N - 1) * p.r1  # ζ index of coef[0, 0]
    coef_rows = np.zeros((K, m, p.n_zeta))
    coef_rows[np.arange(K)[:, None], np.arange(m), start + np.arange(K)[:, None] * m
              + np.arange(m)] = 1.0
    blocks = [human_jacobian(pt, p) @ T, _own_rows(p, nf), ability_jacobian(pt, p) @ T]
    if p.order:
        blocks.append(coef_rows[:, 0])
    blocks.append(coef_rows[:, int(p.order):].reshape(K * nf, p.n_zeta))
    Jall = np.concatenate(blocks)
    if f.lam < np.inf:
        return Result(Jall @ finite(f, p, kind, clusters) @ Jall.T,
                      f"joint {label} at λ = {f.lam:g} (DIAL Theorem 4)")
    cov_h, cross, cov_l = infinity(f, p, kind, clusters, anchored)
    nh = p.N + nf
    Jl = Jall[nh:]
    cov = np.zeros((Jall.shape[0], Jall.shape[0]))
    cov[:nh, :nh] = cov_h
    cov[nh:, nh:] = Jl @ cov_l @ Jl.T
    cov[:nh, nh:] = cross @ Jl.T
    cov[nh:, :nh] = (cross @ Jl.T).T
    human = ("fixed-M calibration plus the LLM estimation error of M (delta method)"
             if anchored == "joint" else
             "fixed-M calibration (ignores the LLM estimation error, the authors' convention)")
    judges = "ability/order_effect" + ("/feature_effect" if nf else "")
    return Result(cov, f"human_ability: {human}, {label}; {judges}: LLM-only {label}")
