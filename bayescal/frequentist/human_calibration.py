r"""Frequentist twin of DIAL's human calibration (seed 000, (11)–(12); SPEC §1.4–§1.12).

The human scores are restricted to the LLM judges' calibration space,
:math:`s_h = M_\theta c` with :math:`M = \mu` (consensus, d = 1) or :math:`M = W = [\mu, V]`
(full space, d = r + 1), and fitted jointly with the low-rank judge model (1) by the weighted
estimator (11)

.. math:: (\hat c_\lambda, \hat\theta_\lambda) =
          \arg\min\ \ell_h(M_\theta c) + \lambda\,\ell_l(\theta),

where :math:`\ell_h` and :math:`\ell_l` are *average* negative log-likelihoods (per human, per LLM
verdict), so :math:`\lambda = n_l/n_h` is the joint MLE. The endpoints are defined as their
limits: λ = 0 is the unrestricted centred human BTL, λ = ∞ the staged (anchored) estimator (12):
the LLM-only low-rank MLE θ̂_∞, then c with M fixed.

Chart. The judge model is optimised over :math:`S = GF^\top` (G: K x (r+1), F: N x (r+1) with
centred columns, :math:`F = B_N\tilde F`), as the low-rank twin does. col(W) = col(F), so the
full-space human scores are :math:`s_h = F u` (u ∈ R^{r+1}) and the consensus ones
:math:`s_h = c\,F G^\top 1_K / K = c\,\mu_{code}` (μ_code = Sᵀ1_K/K, the authors' chart, SPEC
§1.17.1). The chart has exactly (r+1)² invariance directions
:math:`(G, F, u) \to (GA, FA^{-\top}, A^\top u)`; pseudo-inverses are taken on its complement.
Gradient and Hessian are analytic (SPEC §1.7 in this chart).

λ is chosen by :func:`gacv` (SPEC §1.9): :math:`\ell_h(\hat s_\lambda) + \mathrm{tr}(\hat H^-\hat J)
/(n_h - 1)` over the grid {0, ∞} ∪ λ₀·geomspace(0.1, 10, 7), λ₀ = n_l/n_h, with the
admissibility guards of SPEC §1.9.4/§1.17.4–6. Human ties count as one comparison with y = 1/2
(SPEC §1.1; not the authors' collapsed rows, §1.17.2).

Intervals (SPEC §1.8): :math:`\mathrm{Cov}(\hat\zeta) = \hat H^-\hat J\hat H^-/n_h`,
:math:`\hat J = \hat V_h + \lambda^2 (n_h/n_l)\hat V_l`, with :math:`\hat V_l` cell-clustered
(judge x unordered pair, both orders pooled; ``information="cluster"``, the default) or the
independent-verdict one (``"sandwich"``). At λ = 0 the human Fisher intervals, at λ = ∞ the
fixed-M Fisher intervals of the calibration (they ignore the LLM estimation error; §1.17.7).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import NDArray
from scipy.special import expit

from bayescal import identify
from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.frequentist.covariance import cluster_meat
from bayescal.frequentist.low_rank_judges import _cells, check_rank
from bayescal.schema import term_labels

__all__ = ["Problem", "calibration_lr_test", "fit", "gacv", "grid", "problem"]

Space = Literal["consensus", "full"]
Information = Literal["cluster", "sandwich"]
Anchored = Literal["joint", "fixed"]

_GRAD_TOL = 1e-9  # max |projected gradient| of q_λ (averaged scale) accepted as converged
_ADMISSIBLE_GRAD = 1e-5  # SPEC §1.17.5
_NULL_REL = 1e-8  # eigenvalue ≤ this × max counts as null (SPEC §1.17.4)
_SEPARATION = 10.0  # max |ŝ_i| beyond which a candidate is near-separated (SPEC §1.9.4)
_RUNAWAY = 25.0  # max |S_ki| or |b_k| beyond which the judge model has no interior MLE
_MAX_NEWTON = 200


# ---------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Problem:
    """LLM cells, human cells (coded to the LLM items) and the chart's layout."""

    items: tuple[str, ...]
    judges: tuple[str, ...]
    k: NDArray[np.int64]
    i: NDArray[np.int64]
    j: NDArray[np.int64]
    a: NDArray[np.float64]
    n: NDArray[np.float64]
    y: NDArray[np.float64]
    y2: NDArray[np.float64]
    cluster: NDArray[np.int64]
    hi: NDArray[np.int64]
    hj: NDArray[np.int64]
    hn: NDArray[np.float64]
    hy: NDArray[np.float64]
    hy2: NDArray[np.float64]
    rank: int
    space: str
    order: bool
    n_l: float = field(init=False)
    n_h: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_l", float(self.n.sum()))
        object.__setattr__(self, "n_h", float(self.hn.sum()))

    @property
    def K(self) -> int:
        return len(self.judges)

    @property
    def N(self) -> int:
        return len(self.items)

    @property
    def r1(self) -> int:
        return self.rank + 1

    @property
    def d(self) -> int:
        """Dimension of the calibration coefficient (1 consensus, r + 1 full)."""
        return 1 if self.space == "consensus" else self.r1

    @property
    def n_u(self) -> int:
        """Calibration coordinates in the chart (c for consensus, u ∈ R^{r+1} for full)."""
        return self.d

    # raw layout: vec G (K r1), vec F (N r1), b (K if order), u (n_u)
    @property
    def sizes(self) -> tuple[int, int, int, int]:
        return self.K * self.r1, self.N * self.r1, self.K if self.order else 0, self.n_u

    def human(self, hn=None, hy=None, hy2=None) -> Problem:
        """The same problem with other human cell statistics (LOO refits)."""
        return Problem(self.items, self.judges, self.k, self.i, self.j, self.a, self.n, self.y,
                       self.y2, self.cluster, self.hi, self.hj,
                       self.hn if hn is None else hn, self.hy if hy is None else hy,
                       self.hy2 if hy2 is None else hy2, self.rank, self.space, self.order)


def problem(llm: Comparisons, human: Comparisons, *, rank: int = 1, space: Space = "consensus",
            order_effects: bool = True) -> Problem:
    """Validate and code the two data sets (human items mapped onto the LLM items).

    Raises
    ------
    DataError
        No human comparisons; human items the LLM data do not contain; LLM verdicts without a
        display order (with ``order_effects``); an unknown ``space``.
    IdentificationError
        r out of range, or fewer distinct human pairs than the calibration dimension d
        (Condition 4's necessary m_h ≥ d).
    """
    if space not in ("consensus", "full"):
        raise DataError(f"space must be 'consensus' or 'full', got {space!r}")
    if not isinstance(llm, Comparisons) or not isinstance(human, Comparisons):
        raise DataError("llm and human must both be Comparisons (Comparisons.from_frame)")
    if human.n_cells == 0 or human.count.sum() <= 0:
        raise DataError("there are no human comparisons: the calibration needs some")
    unknown = [x for x in human.items if x not in llm.items]
    if unknown:
        raise DataError(
            f"human data name item(s) {unknown[:8]} that the LLM data do not contain (LLM items: "
            f"{list(llm.items)[:8]}{' ...' if llm.n_items > 8 else ''}); the calibration space "
            "is spanned by LLM scores, so every human item must be judged by the LLMs. Check the "
            "labels, or drop those human comparisons."
        )
    rank = check_rank(rank, llm.n_judges, llm.n_items)
    c = _cells(llm, order_effects)  # the judges' model's own cells (same check, same clusters)
    N = llm.n_items
    h = human.collapse(order=True, judges=True)
    code = np.array([llm.items.index(x) for x in h.items], np.int64)
    hi, hj = code[h.item_i], code[h.item_j]
    flip = hi > hj
    hy = np.where(flip, h.count - h.wins, h.wins)
    # Σ (1 - y_t)² = n - 2 Σ y + Σ y²
    hy2 = np.where(flip, h.count - 2 * h.wins + h.wins_sq, h.wins_sq)
    p = Problem(tuple(llm.items), tuple(llm.judges), c.k, c.i, c.j, c.a, c.n, c.y, c.y2,
                c.cluster,
                np.minimum(hi, hj), np.maximum(hi, hj), h.count.astype(np.float64),
                hy.astype(np.float64), hy2.astype(np.float64), rank, space, order_effects)
    d = p.d
    pairs = np.unique(p.hi * N + p.hj).size
    if pairs < d:
        raise identify.IdentificationError(
            f"the human data compare {pairs} distinct pair(s) of items, fewer than the "
            f"calibration dimension d = {d} (space={space!r}): Condition 4 (rank(D_h M) = d) "
            "cannot hold. Add human comparisons of other pairs, or use space='consensus'."
        )
    return p


# ---------------------------------------------------------------------------- chart
def _split(raw: NDArray[np.float64], p: Problem):
    nG, nF, nb, _ = p.sizes
    G = raw[:nG].reshape(p.K, p.r1)
    F = raw[nG: nG + nF].reshape(p.N, p.r1)
    b = raw[nG + nF: nG + nF + nb] if p.order else np.zeros(p.K)
    u = raw[nG + nF + nb:]
    return G, F, b, u


def _chart(p: Problem) -> NDArray[np.float64]:
    """T with raw = T ζ, ζ = (vec G, vec F̃, b, u) and F = B_N F̃."""
    nG, nF, nb, nu = p.sizes
    n_z = nG + (p.N - 1) * p.r1 + nb + nu
    T = np.zeros((nG + nF + nb + nu, n_z))
    T[:nG, :nG] = np.eye(nG)
    T[nG: nG + nF, nG: nG + (p.N - 1) * p.r1] = np.kron(zero_sum_basis(p.N), np.eye(p.r1))
    T[nG + nF:, nG + (p.N - 1) * p.r1:] = np.eye(nb + nu)
    return T


def _zeta_of(raw: NDArray[np.float64], p: Problem) -> NDArray[np.float64]:
    G, F, b, u = _split(raw, p)
    parts = [G.ravel(), (zero_sum_basis(p.N).T @ F).ravel()]
    if p.order:
        parts.append(b)
    parts.append(u)
    return np.concatenate(parts)


def _human_scores(G, F, u, p: Problem) -> NDArray[np.float64]:
    """s_h = M c: c F Gᵀ1/K (consensus) or F u (full)."""
    if p.space == "consensus":
        return u[0] * (F @ G.sum(axis=0)) / p.K
    return F @ u


def _gauge(raw: NDArray[np.float64], p: Problem, T: NDArray[np.float64]):
    """Orthonormal bases (ζ coords) of the gauge directions and of their complement."""
    G, F, _, u = _split(raw, p)
    r1 = p.r1
    B = zero_sum_basis(p.N)
    nG, _, nb, _ = p.sizes
    nFt = (p.N - 1) * r1
    dirs = []
    for e in np.eye(r1 * r1):
        E = e.reshape(r1, r1)
        v = np.zeros(T.shape[1])
        v[:nG] = (G @ E).ravel()
        v[nG: nG + nFt] = (-(B.T @ F) @ E.T).ravel()
        if p.space == "full":
            v[nG + nFt + nb:] = E.T @ u
        dirs.append(v)
    null, _ = np.linalg.qr(np.array(dirs).T)
    full, _ = np.linalg.qr(np.concatenate([null, np.eye(T.shape[1])], axis=1))
    return null, full[:, r1 * r1:]


# ---------------------------------------------------------------------------- derivatives
def _llm_nll(raw, p: Problem) -> float:
    G, F, b, _ = _split(raw, p)
    S = G @ F.T
    eta = S[p.k, p.i] - S[p.k, p.j] + p.a * b[p.k]
    return float(np.sum(p.n * np.logaddexp(0.0, eta) - p.y * eta))


def _human_nll_s(s, p: Problem, hn=None, hy=None) -> float:
    hn = p.hn if hn is None else hn
    hy = p.hy if hy is None else hy
    d = s[p.hi] - s[p.hj]
    return float(np.sum(hn * np.logaddexp(0.0, d) - hy * d))


def objective(raw, p: Problem, lam: float) -> float:
    """q_λ = ℓ_h(M_θ c) + λ ℓ_l(θ) (average NLLs; λ = ∞ is not a finite objective)."""
    G, F, _, u = _split(raw, p)
    val = _human_nll_s(_human_scores(G, F, u, p), p) / p.n_h
    if lam > 0:
        val += lam * _llm_nll(raw, p) / p.n_l
    return val


def _llm_derivatives(raw, p: Problem, hessian: bool = True):
    """Σ-scale LLM NLL, its raw gradient, Hessian, and (p_c, x-building pieces)."""
    G, F, b, _ = _split(raw, p)
    K, N, r1 = p.K, p.N, p.r1
    S = G @ F.T
    eta = S[p.k, p.i] - S[p.k, p.j] + p.a * b[p.k]
    pr = expit(eta)
    rho = p.n * pr - p.y
    nll = float(np.sum(p.n * np.logaddexp(0.0, eta) - p.y * eta))
    ki, kj = p.k * N + p.i, p.k * N + p.j
    gS = (np.bincount(ki, rho, K * N) - np.bincount(kj, rho, K * N)).reshape(K, N)
    size = sum(p.sizes)
    nG, nF, nb, _ = p.sizes
    grad = np.zeros(size)
    grad[:nG] = (gS @ F).ravel()
    grad[nG: nG + nF] = (gS.T @ G).ravel()
    if p.order:
        grad[nG + nF: nG + nF + nb] = np.bincount(p.k, rho * p.a, K)
    if not hessian:
        return nll, grad, None, pr
    w = p.n * pr * (1 - pr)
    H = np.zeros((size, size))
    base = p.k * N * N
    flat = np.concatenate([base + p.i * N + p.i, base + p.j * N + p.j,
                           base + p.i * N + p.j, base + p.j * N + p.i])
    L = np.bincount(flat, np.concatenate([w, w, -w, -w]), K * N * N).reshape(K, N, N)
    LF = np.einsum("knm,mq->knq", L, F)  # L_k F
    HGG = np.einsum("np,knq->kpq", F, LF)
    sl_G, sl_F = slice(0, nG), slice(nG, nG + nF)
    H[sl_G, sl_G] = _block_diag(HGG)
    H[sl_F, sl_F] = np.einsum("kp,knm,kq->npmq", G, L, G).reshape(nF, nF)
    HGF = np.einsum("knp,kq->kpnq", LF, G).reshape(nG, nF)
    # curvature: ∂²S_kn/∂G_kq∂F_nq = 1, weighted by ∂L/∂S_kn
    curv = np.zeros((K, r1, N, r1))
    curv[:, np.arange(r1), :, np.arange(r1)] = gS[None]
    HGF += curv.reshape(nG, nF)
    H[sl_G, sl_F] = HGF
    H[sl_F, sl_G] = HGF.T
    if p.order:
        sl_b = slice(nG + nF, nG + nF + nb)
        wa = w * p.a
        cross = (np.bincount(ki, wa, K * N) - np.bincount(kj, wa, K * N)).reshape(K, N)
        HbG = np.zeros((K, K, r1))
        HbG[np.arange(K), np.arange(K)] = cross @ F
        HbF = np.einsum("kn,kq->knq", cross, G)
        H[sl_b, sl_G] = HbG.reshape(K, nG)
        H[sl_G, sl_b] = H[sl_b, sl_G].T
        H[sl_b, sl_F] = HbF.reshape(K, nF)
        H[sl_F, sl_b] = H[sl_b, sl_F].T
        H[sl_b, sl_b] = np.diag(np.bincount(p.k, w * p.a**2, K))
    return nll, grad, H, pr


def _block_diag(blocks: NDArray[np.float64]) -> NDArray[np.float64]:
    K, r1, _ = blocks.shape
    out = np.zeros((K, r1, K, r1))
    out[np.arange(K), :, np.arange(K), :] = blocks
    return out.reshape(K * r1, K * r1)


def _human_jacobian(raw, p: Problem) -> NDArray[np.float64]:
    """∂s_h/∂raw (N x raw size)."""
    G, F, _, u = _split(raw, p)
    K, N, r1 = p.K, p.N, p.r1
    nG, nF, nb, nu = p.sizes
    J = np.zeros((N, nG + nF + nb + nu))
    if p.space == "consensus":
        c, m = u[0], G.sum(axis=0) / K
        J[:, :nG] = np.tile(c * F / K, (1, K))  # column k r1 + q → c F[:, q] / K
        JF = np.zeros((N, N, r1))
        JF[np.arange(N), np.arange(N)] = c * m
        J[:, nG: nG + nF] = JF.reshape(N, nF)
        J[:, -1] = F @ m
    else:
        JF = np.zeros((N, N, r1))
        JF[np.arange(N), np.arange(N)] = u
        J[:, nG: nG + nF] = JF.reshape(N, nF)
        J[:, -nu:] = F
    return J


def _human_derivatives(raw, p: Problem, hessian: bool = True):
    """Σ-scale human NLL, raw gradient, raw Hessian, p_t per cell, ∂s/∂raw."""
    G, F, _, u = _split(raw, p)
    K, N, r1 = p.K, p.N, p.r1
    nG, nF, _, nu = p.sizes
    s = _human_scores(G, F, u, p)
    d = s[p.hi] - s[p.hj]
    pr = expit(d)
    rho = p.hn * pr - p.hy
    nll = float(np.sum(p.hn * np.logaddexp(0.0, d) - p.hy * d))
    gs = np.bincount(p.hi, rho, N) - np.bincount(p.hj, rho, N)
    J = _human_jacobian(raw, p)
    grad = J.T @ gs
    if not hessian:
        return nll, grad, None, pr, J
    w = p.hn * pr * (1 - pr)
    L = np.zeros((N, N))
    np.add.at(L, (p.hi, p.hi), w)
    np.add.at(L, (p.hj, p.hj), w)
    np.add.at(L, (p.hi, p.hj), -w)
    np.add.at(L, (p.hj, p.hi), -w)
    H = J.T @ L @ J
    sl_F = slice(nG, nG + nF)
    if p.space == "consensus":
        c, m = u[0], G.sum(axis=0) / K
        # ∂²s_n/∂G_kq∂F_nq = c/K, ∂²s_n/∂F_nq∂c = m_q, ∂²s_n/∂G_kq∂c = F_nq/K
        GF = np.tile(np.einsum("n,pq->pnq", gs, np.eye(r1)).reshape(r1, nF) * c / K, (K, 1))
        H[:nG, sl_F] += GF
        H[sl_F, :nG] += GF.T
        Fc = np.outer(gs, m).ravel()
        H[sl_F, -1] += Fc
        H[-1, sl_F] += Fc
        Gc = np.tile(gs @ F / K, K)
        H[:nG, -1] += Gc
        H[-1, :nG] += Gc
    else:
        # ∂²s_n/∂F_nq∂u_q = 1
        Fu = np.einsum("n,qp->nqp", gs, np.eye(r1)).reshape(nF, nu)
        H[sl_F, -nu:] += Fu
        H[-nu:, sl_F] += Fu.T
    return nll, grad, H, pr, J


def derivatives(zeta: NDArray[np.float64], p: Problem, lam: float):
    """Value, gradient and Hessian of q_λ in the chart ζ (analytic; SPEC §1.7).

    Parameters
    ----------
    zeta : ndarray
        Chart coordinates (vec G, vec F̃, b, u).
    p : Problem
    lam : float
        λ ≥ 0, finite.
    """
    T = _chart(p)
    raw = T @ zeta
    nh, gh, Hh, _, _ = _human_derivatives(raw, p)
    val, grad, H = nh / p.n_h, gh / p.n_h, Hh / p.n_h
    if lam > 0:
        nl, gl, Hl, _ = _llm_derivatives(raw, p)
        val += lam * nl / p.n_l
        grad = grad + lam * gl / p.n_l
        H = H + lam * Hl / p.n_l
    return val, T.T @ grad, T.T @ H @ T


# ---------------------------------------------------------------------------- optimisation
def _newton(zeta, p: Problem, lam: float, T, *, llm_only: bool = False, fixed_theta: bool = False,
            max_iter: int = _MAX_NEWTON):
    """Damped Newton in the gauge-free coordinates; eigenvalues floored to stay a descent.

    ``llm_only`` minimises ℓ_l alone (the λ = ∞ judge fit); ``fixed_theta`` moves u only.
    Returns (ζ, converged, max |projected gradient|, iterations).
    """
    nu = p.n_u

    def parts(z, hess=True):
        raw = T @ z
        if llm_only:
            nl, gl, Hl, _ = _llm_derivatives(raw, p, hess)
            return nl / p.n_l, T.T @ gl / p.n_l, (T.T @ Hl @ T / p.n_l if hess else None)
        nh, gh, Hh, _, _ = _human_derivatives(raw, p, hess)
        val, g = nh / p.n_h, gh / p.n_h
        H = Hh / p.n_h if hess else None
        if lam > 0 and not fixed_theta:
            nl, gl, Hl, _ = _llm_derivatives(raw, p, hess)
            val += lam * nl / p.n_l
            g = g + lam * gl / p.n_l
            if hess:
                H = H + lam * Hl / p.n_l
        return val, T.T @ g, (T.T @ H @ T if hess else None)

    def value(z):
        raw = T @ z
        if llm_only:
            return _llm_nll(raw, p) / p.n_l
        G, F, _, u = _split(raw, p)
        v = _human_nll_s(_human_scores(G, F, u, p), p) / p.n_h
        if lam > 0 and not fixed_theta:
            v += lam * _llm_nll(raw, p) / p.n_l
        return v

    gmax, it = np.inf, 0
    for it in range(1, max_iter + 1):
        val, g, H = parts(zeta)
        if fixed_theta:
            free = np.zeros((zeta.size, nu))
            free[-nu:] = np.eye(nu)
        elif it == 1:
            # one complement of the gauge per call: rebalancing keeps the orbit close, and any
            # complement transversal to it gives the same Newton iterates up to the gauge
            _, free = _gauge(T @ zeta, p, T)
        gf = free.T @ g
        gmax = float(np.max(np.abs(gf)))
        if gmax < _GRAD_TOL:
            return zeta, True, gmax, it
        Hf = free.T @ H @ free
        Hf = (Hf + Hf.T) / 2
        try:
            chol = np.linalg.cholesky(Hf)
            step = -free @ np.linalg.solve(chol.T, np.linalg.solve(chol, gf))
        except np.linalg.LinAlgError:  # not convex here: floor the eigenvalues (descent)
            ev, vec = np.linalg.eigh(Hf)
            floor = max(ev.max(), 1e-12) * 1e-10
            ev = np.where(ev > floor, ev, np.maximum(np.abs(ev), floor))
            step = -free @ (vec @ ((vec.T @ gf) / ev))
        t = 1.0
        for _ in range(40):
            new = zeta + t * step
            nv = value(new)
            if np.isfinite(nv) and nv <= val + 1e-4 * t * (g @ step):
                break
            t /= 2
        else:
            # no decrease left to find in floating point: stationary if the gradient is below
            # the admissibility bound of SPEC §1.17.5
            return zeta, gmax < _ADMISSIBLE_GRAD, gmax, it
        zeta = _rebalance(new, p, T)
    return zeta, gmax < _GRAD_TOL, gmax, it


def _rebalance(zeta, p: Problem, T):
    """Move along the gauge orbit to G = PΣ^{1/2}, F = QΣ^{1/2} (q_λ unchanged)."""
    raw = T @ zeta
    G, F, b, u = _split(raw, p)
    P, sv, Qt = np.linalg.svd(G @ F.T, full_matrices=False)
    r1 = p.r1
    root = np.sqrt(np.maximum(sv[:r1], 1e-12))
    G2, F2 = P[:, :r1] * root, Qt[:r1].T * root
    if p.space == "full":
        u = np.linalg.lstsq(F2, F @ u, rcond=None)[0]
    return _zeta_of(np.concatenate([G2.ravel(), F2.ravel(), b if p.order else [], u]), p)


def _llm_start(p: Problem) -> NDArray[np.float64]:
    """Per-judge ridge BTL with order effect (batched Newton), then a rank-(r+1) SVD."""
    K, N = p.K, p.N
    ridge = 1e-3
    s = np.zeros((K, N))
    b = np.zeros(K)
    ki, kj = p.k * N + p.i, p.k * N + p.j
    base = p.k * N * N
    flat = np.concatenate([base + p.i * N + p.i, base + p.j * N + p.j,
                           base + p.i * N + p.j, base + p.j * N + p.i])
    a = p.a if p.order else np.zeros_like(p.a)
    for _ in range(25):
        eta = s[p.k, p.i] - s[p.k, p.j] + a * b[p.k]
        pr = expit(eta)
        rho = p.n * pr - p.y
        w = p.n * pr * (1 - pr)
        g = np.zeros((K, N + 1))
        g[:, :N] = (np.bincount(ki, rho, K * N) - np.bincount(kj, rho, K * N)).reshape(K, N)
        g[:, N] = np.bincount(p.k, rho * a, K)
        g += ridge * np.column_stack([s, b])
        Hk = np.zeros((K, N + 1, N + 1))
        Hk[:, :N, :N] = np.bincount(flat, np.concatenate([w, w, -w, -w]),
                                    K * N * N).reshape(K, N, N)
        wa = w * a
        cross = (np.bincount(ki, wa, K * N) - np.bincount(kj, wa, K * N)).reshape(K, N)
        Hk[:, :N, N] = Hk[:, N, :N] = cross
        Hk[:, N, N] = np.bincount(p.k, w * a**2, K) + (0.0 if p.order else 1.0)
        Hk += ridge * np.eye(N + 1)
        step = np.linalg.solve(Hk, g[..., None])[..., 0]
        s, b = s - step[:, :N], b - step[:, N]
        if np.abs(step).max() < 1e-8:
            break
    s -= s.mean(axis=1, keepdims=True)
    P, sv, Qt = np.linalg.svd(s, full_matrices=False)
    r1 = p.r1
    root = np.sqrt(sv[:r1])
    G, F = P[:, :r1] * root, Qt[:r1].T * root
    if G.sum(axis=0)[0] < 0:
        G[:, 0], F[:, 0] = -G[:, 0], -F[:, 0]
    return np.concatenate([G.ravel(), F.ravel(), b if p.order else [], np.zeros(p.n_u)])


def _init_u(raw, p: Problem, T):
    """c re-initialised at argmin_c ℓ_h(M c) for the carried M (SPEC §1.17.8)."""
    raw = raw.copy()
    nu = p.n_u
    raw[-nu:] = 1.0 / max(1, nu) if p.space == "consensus" else 0.0
    z, ok, _, _ = _newton(_zeta_of(raw, p), p, 0.0, T, fixed_theta=True)
    return z, ok


@dataclass
class _Fit:
    lam: float
    zeta: NDArray[np.float64]
    converged: bool
    max_grad: float
    s: NDArray[np.float64]
    reason: str = ""


def _fit_infinity(p: Problem, T, start=None) -> tuple[_Fit, _Fit]:
    """θ̂_∞ (LLM-only low-rank MLE) and the staged calibration (12) on its M."""
    raw0 = _llm_start(p) if start is None else start
    z, ok, gmax, _ = _newton(_zeta_of(raw0, p), p, np.inf, T, llm_only=True)
    llm = _Fit(np.inf, z, ok, gmax, np.zeros(p.N))
    identify_calibration(p, T @ z)
    zc, okc = _init_u(T @ z, p, T)
    raw = T @ zc
    G, F, _, u = _split(raw, p)
    return llm, _Fit(np.inf, zc, ok and okc, gmax, _human_scores(G, F, u, p))


def _fit_finite(p: Problem, lam: float, T, warm: NDArray[np.float64]) -> _Fit:
    zc, _ = _init_u(T @ warm, p, T)
    z, ok, gmax, _ = _newton(zc, p, lam, T)
    G, F, _, u = _split(T @ z, p)
    return _Fit(lam, z, ok, gmax, _human_scores(G, F, u, p))


def _human_btl(p: Problem, hn=None, hy=None, start=None):
    """Centred human BTL (λ = 0) by Newton in Helmert coordinates: (s, converged)."""
    N = p.N
    hn = p.hn if hn is None else hn
    hy = p.hy if hy is None else hy
    B = zero_sum_basis(N)
    X = B[p.hi] - B[p.hj]
    beta = np.zeros(N - 1) if start is None else B.T @ start
    for _ in range(100):
        d = X @ beta
        pr = expit(d)
        g = X.T @ (hn * pr - hy)
        if np.abs(g).max() / max(hn.sum(), 1) < _GRAD_TOL:
            return B @ beta, True
        H = X.T @ ((hn * pr * (1 - pr))[:, None] * X)
        try:
            step = np.linalg.solve(H + 1e-12 * np.eye(N - 1), g)
        except np.linalg.LinAlgError:
            return B @ beta, False
        val = np.sum(hn * np.logaddexp(0, d) - hy * d)
        t = 1.0
        for _ in range(40):
            nd = X @ (beta - t * step)
            if np.sum(hn * np.logaddexp(0, nd) - hy * nd) <= val:
                break
            t /= 2
        beta = beta - t * step
        if np.abs(beta).max() > 50:
            return B @ beta, False
    return B @ beta, False


def _human_identification(p: Problem) -> identify.Identification:
    h = Comparisons(items=p.items, judges=("human",), judge=np.zeros(p.hi.size, np.int64),
                    item_i=p.hi, item_j=p.hj, order=np.zeros(p.hi.size, np.int64), count=p.hn,
                    wins=p.hy, wins_sq=p.hy2, n_rows=p.n_h)
    return identify.check(h)


def identify_calibration(p: Problem, raw: NDArray[np.float64]) -> None:
    """Condition 4 at the LLM-only fit: rank(D_h M) = d (see :func:`identify.calibration`)."""
    G, F, _, _ = _split(raw, p)
    M = (F @ G.sum(axis=0) / p.K)[:, None] if p.space == "consensus" else F
    identify.calibration(p.items, p.hi, p.hj, M, space=p.space)


# ---------------------------------------------------------------------------- GACV pieces
def _free_hessian(zeta, p: Problem, lam: float, T):
    _, _, H = derivatives(zeta, p, lam)
    _, free = _gauge(T @ zeta, p, T)
    return H, free


def _human_score_moments(raw, p: Problem, T, hn=None, hy=None, hy2=None):
    """ḡ and V̂_h = n_h⁻¹ Σ_t (g_t − ḡ)(g_t − ḡ)ᵀ from the human cells (ζ coordinates)."""
    hn = p.hn if hn is None else hn
    hy = p.hy if hy is None else hy
    hy2 = p.hy2 if hy2 is None else hy2
    G, F, _, u = _split(raw, p)
    s = _human_scores(G, F, u, p)
    pr = expit(s[p.hi] - s[p.hj])
    X = (_human_jacobian(raw, p) @ T)
    X = X[p.hi] - X[p.hj]
    n_h = hn.sum()
    gbar = X.T @ (hn * pr - hy) / n_h
    sq = hy2 - 2 * pr * hy + hn * pr**2  # Σ_t (p − y_t)² within a cell
    V = (X.T * sq) @ X / n_h - np.outer(gbar, gbar)
    return gbar, V


def _null_count(H):
    ev = np.linalg.eigvalsh((H + H.T) / 2)
    return int(np.sum(ev <= _NULL_REL * np.abs(ev).max())), ev


def _gacv_finite(f: _Fit, p: Problem, T):
    H, free = _free_hessian(f.zeta, p, f.lam, T)
    _, V = _human_score_moments(T @ f.zeta, p, T)
    Hf = free.T @ H @ free
    nulls, _ = _null_count(H)
    if nulls > p.r1**2:
        # the candidate is inadmissible for its singular Hessian (the caller's reason); the
        # trace is undefined there
        return np.nan, nulls
    tr = float(np.trace(np.linalg.solve(Hf, free.T @ V @ free)))
    return _human_nll_s(f.s, p) / p.n_h + tr / (p.n_h - 1), nulls


def _fixed_design_gacv(s, X, p: Problem):
    """Fixed-design logistic GACV (SPEC §1.9.2) with per-cell design rows X."""
    pr = expit(s[p.hi] - s[p.hj])
    n_h = p.n_h
    H = (X.T * (p.hn * pr * (1 - pr))) @ X / n_h
    gbar = X.T @ (p.hn * pr - p.hy) / n_h
    sq = p.hy2 - 2 * pr * p.hy + p.hn * pr**2
    J = (X.T * sq) @ X / n_h - np.outer(gbar, gbar)
    ev = np.linalg.eigvalsh(H)
    tr = float(np.trace(np.linalg.pinv(H) @ J))
    return _human_nll_s(s, p) / n_h + tr / (n_h - 1), ev


def _calibration_design(raw, p: Problem):
    G, F, _, _ = _split(raw, p)
    M = (F @ G.sum(axis=0) / p.K)[:, None] if p.space == "consensus" else F
    return M[p.hi] - M[p.hj], M


def _require_llm_cells(p: Problem) -> None:
    """The maximum-likelihood paths need n_h > 1 and θ̂_∞: as in the LLM-only twin, fewer LLM
    cells than the judges' model's free parameters cannot identify it (the Bayesian build lets
    the prior set the rest instead)."""
    if p.n_h <= 1:
        # GACV (SPEC §1.9) divides by n_h − 1
        raise DataError(
            f"the human data hold {p.n_h:g} verdict(s): the maximum-likelihood calibration "
            "needs more than one (GACV's variance term divides by n_h − 1). Add human "
            "comparisons.")
    n_free = p.r1 * (p.K + p.N - p.rank - 2) + (p.K if p.order else 0)
    if p.k.size < n_free:
        raise identify.IdentificationError(
            f"{p.k.size} LLM comparison cells for {n_free} free parameters of the judges' model "
            f"(r = {p.rank}): it is not identified (DIAL Prop. B.2); lower the rank or add LLM "
            "comparisons")


def grid(p: Problem) -> list[float]:
    """Candidate λ: [∞, λ₀·geomspace(10, 0.1, 7), 0] with λ₀ = n_l/n_h (SPEC §1.9.3), scan order."""
    lam0 = p.n_l / p.n_h
    return [np.inf, *(lam0 * np.geomspace(10, 0.1, 7)).tolist(), 0.0]


# ---------------------------------------------------------------------------- public API
def _check_weight(llm_weight) -> float:
    try:
        lam = float(llm_weight)
    except (TypeError, ValueError):
        raise ValueError(f"llm_weight must be a number ≥ 0 or inf, got {llm_weight!r}") from None
    if np.isnan(lam) or lam < 0:
        raise ValueError(f"llm_weight must be ≥ 0 (0 = human only, inf = anchored), got {lam}")
    return lam


def fit(llm: Comparisons, human: Comparisons, *, rank: int = 1, space: Space = "consensus",
        llm_weight: float = np.inf, information: Information = "cluster",
        order_effects: bool = True, anchored: Anchored = "joint") -> Estimate:
    r"""DIAL's calibrated human scores at a fixed LLM weight λ ((11); endpoints (12) and λ = 0).

    Parameters
    ----------
    llm, human : Comparisons
        LLM verdicts with display order (judges = LLM judges) and human comparisons (all human
        judges pooled into one; display order ignored). Human items must be LLM items.
    rank : int
        r, the disagreement rank of the judge model (1 ≤ r ≤ min(K − 1, N − 2)).
    space : {"consensus", "full"}
        Calibration basis M = μ (d = 1) or M = W = [μ, V] (d = r + 1).
    llm_weight : float
        λ ≥ 0 multiplying the average LLM NLL; 0 = human-only BTL, ``inf`` = anchored (12),
        n_l/n_h = joint MLE.
    information : {"cluster", "sandwich"}
        LLM part of the sandwich at finite λ: cell-clustered (judge x pair) or
        independent-verdict V̂_l (SPEC §1.8).
    order_effects : bool
        False sets b ≡ 0 (orders pooled): the DIAL-noPos ablation.
    anchored : {"joint", "fixed"}
        Intervals of ŝ_h at λ = ∞: ``joint`` adds the LLM estimation error of M (delta method
        through ĉ(θ)); ``fixed`` treats M as known — the authors' convention (SPEC §1.17.7),
        which under-covers where n_l is not large against n_h.

    Returns
    -------
    Estimate
        ``human_ability[item]`` (ŝ_h) with Wald intervals; at λ > 0 also ``ability[judge, item]``
        (S) and ``order_effect[judge]`` (b) from the same fit. ``info["llm_weight"]`` = λ,
        ``info["gacv"]``, ``info["calibration"]`` (c in the paper's chart for consensus).

    Raises
    ------
    DataError, IdentificationError
        Bad input (see :func:`problem`), Condition 4 failing at the LLM fit.
    MLEBoundaryError
        λ = 0 and the human BTL MLE does not exist, or the fit did not converge / ran off.
    """
    lam = _check_weight(llm_weight)
    if information not in ("cluster", "sandwich"):
        raise ValueError(f"information must be 'cluster' or 'sandwich', got {information!r}")
    if anchored not in ("joint", "fixed"):
        raise ValueError(f"anchored must be 'joint' or 'fixed', got {anchored!r}")
    p = problem(llm, human, rank=rank, space=space, order_effects=order_effects)
    _require_llm_cells(p)
    path = _path(p, [lam])
    cand = path["candidates"][0]
    if not cand["fit"].converged or (lam == 0 and not cand["admissible"]) \
            or "run off" in cand["reason"]:
        raise MLEBoundaryError(f"no estimate at λ = {lam:g}: {cand['reason']}")
    if "null directions" in cand["reason"]:
        raise identify.IdentificationError(
            f"no estimate at λ = {lam:g}: {cand['reason']}: the LLM and human data together do "
            "not identify every judge score. Add LLM comparisons or lower the rank.")
    if np.abs(cand["fit"].s).max() > _SEPARATION:
        raise MLEBoundaryError(
            f"no interior estimate at λ = {lam:g}: {cand['reason']}; the human comparisons are "
            "(nearly) separated in the calibration space. Use a larger λ or more human data.")
    with _one_blas_thread():
        return _estimate(p, cand, path, information, anchored)


def _one_blas_thread():
    """Limit BLAS to one thread: the matrices here are ~(K + N)(r + 1) square, where threads
    only add contention (measured 10x slower with 2 threads on a loaded 2-core machine)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1)


def _path(p: Problem, lams: list[float]) -> dict:
    """Fit every λ in ``lams`` (scan order: ∞, finite descending, 0) with warm starts."""
    with _one_blas_thread():
        return _path_unlimited(p, lams)


def _path_unlimited(p: Problem, lams: list[float]) -> dict:
    T = _chart(p)
    out = []
    llm_fit, anchored = _fit_infinity(p, T)
    warm = llm_fit.zeta
    ident = None
    for lam in lams:
        t0 = time.perf_counter()
        if lam == np.inf:
            f = anchored
            X, _ = _calibration_design(T @ f.zeta, p)
            value, ev = _fixed_design_gacv(f.s, X, p)
            reason = ""
            if not llm_fit.converged or llm_fit.max_grad > _ADMISSIBLE_GRAD:
                reason = f"the LLM-only fit did not converge (gradient {llm_fit.max_grad:.2g})"
            elif not f.converged:
                reason = "the calibration fit did not converge"
            elif ev.min() <= _NULL_REL * ev.max():
                reason = "the calibration Hessian is singular (Condition 4 fails numerically)"
        elif lam == 0:
            ident = ident or _human_identification(p)
            if not ident.mle_exists or not ident.connected:
                s = np.full(p.N, np.nan)
                f = _Fit(0.0, np.zeros(0), False, np.inf, s,
                         reason=(ident.no_mle_message() if ident.connected
                                 else ident.disconnected_message()))
                value, reason = np.nan, "human-only MLE does not exist: " + f.reason
            else:
                s, ok = _human_btl(p)
                f = _Fit(0.0, np.zeros(0), ok, 0.0, s)
                B = zero_sum_basis(p.N)
                value, ev = _fixed_design_gacv(s, B[p.hi] - B[p.hj], p)
                reason = "" if ok else "the human BTL fit did not converge"
                if not reason and ev.min() <= _NULL_REL * ev.max():
                    reason = "the human information is singular"
        else:
            f = _fit_finite(p, lam, T, warm)
            value, nulls = _gacv_finite(f, p, T)
            reason = ""
            if not f.converged or f.max_grad > _ADMISSIBLE_GRAD:
                reason = f"did not converge (projected gradient {f.max_grad:.2g})"
            elif nulls > p.r1**2:
                reason = (f"the Hessian has {nulls} null directions, more than the chart's "
                          f"{p.r1**2} invariances")
            if f.converged:
                warm = f.zeta
        if f.zeta.size:  # the most informative reason wins
            G, F, b, _ = _split(T @ f.zeta, p)
            big = max(np.abs(G @ F.T).max(), np.abs(b).max())
            if big > _RUNAWAY:
                reason = (f"the judge scores run off (max |S_ki|, |b_k| = {big:.3g}): some "
                          "judge's verdicts are separated, no interior MLE")
        if not reason and np.abs(f.s).max() > _SEPARATION:
            reason = f"near-separation (max |ŝ| = {np.abs(f.s).max():.3g} > {_SEPARATION:g})"
        out.append({"fit": f, "gacv": value, "admissible": not reason, "reason": reason,
                    "seconds": time.perf_counter() - t0})
    return {"candidates": out, "llm_fit": llm_fit, "chart": T}


def gacv(llm: Comparisons, human: Comparisons, *, rank: int = 1, space: Space = "consensus",
         grid_values: list[float] | None = None, information: Information = "cluster",
         order_effects: bool = True, anchored: Anchored = "joint"
         ) -> tuple[pd.DataFrame, Estimate]:
    r"""Choose λ by GACV (SPEC §1.9) and return the candidate table and the selected fit.

    :math:`\mathrm{GACV}(\lambda) = \ell_h(\hat s_\lambda)
    + \mathrm{tr}(\hat H_\lambda^-\hat J_\lambda)/(n_h-1)`,
    Ĥ the Hessian of the whole weighted objective in all free coordinates, Ĵ the centred
    covariance of the per-human-comparison scores. Endpoints by the fixed-design formula
    (§1.9.2). Grid {∞, λ₀·geomspace(10, 0.1, 7), 0} unless ``grid_values``; the minimiser over
    admissible candidates wins, exact ties to the larger λ; if none is admissible, λ = ∞.

    The other parameters are those of :func:`fit` (``anchored`` applies when λ̂ = ∞).

    Returns
    -------
    table : DataFrame
        One row per candidate: ``llm_weight``, ``gacv``, ``admissible``, ``reason``,
        ``human_nll``, ``selected``, ``seconds``.
    estimate : Estimate
        :func:`fit`'s output at λ̂ (post-selection intervals, SPEC §1.8).
    """
    if information not in ("cluster", "sandwich"):
        raise ValueError(f"information must be 'cluster' or 'sandwich', got {information!r}")
    p = problem(llm, human, rank=rank, space=space, order_effects=order_effects)
    _require_llm_cells(p)
    lams = grid(p) if grid_values is None else sorted(
        {_check_weight(v) for v in grid_values}, key=lambda v: -v)
    path = _path(p, lams)
    cands = path["candidates"]
    best = None
    for idx, cnd in enumerate(cands):
        if cnd["admissible"] and (best is None or cnd["gacv"] < cands[best]["gacv"]):
            best = idx
    if best is None:
        warnings.warn("no GACV candidate is admissible; λ = ∞ (anchored) is reported "
                      "(SPEC §1.9.4)", RuntimeWarning, stacklevel=2)
        best = 0 if lams[0] == np.inf else None
        if best is None:
            raise MLEBoundaryError("no GACV candidate is admissible and ∞ is not in the grid")
    table = pd.DataFrame({
        "llm_weight": lams,
        "gacv": [c["gacv"] for c in cands],
        "admissible": [c["admissible"] for c in cands],
        "reason": [c["reason"] for c in cands],
        "human_nll": [(_human_nll_s(c["fit"].s, p) / p.n_h) if c["fit"].s.size
                      and np.isfinite(c["fit"].s).all() else np.nan for c in cands],
        "selected": [i == best for i in range(len(cands))],
        "seconds": [c["seconds"] for c in cands],
    })
    with _one_blas_thread():
        est = _estimate(p, cands[best], path, information, anchored)
    est.info["gacv_table"] = table
    return table, est


# ---------------------------------------------------------------------------- inference
def _llm_score_moments(raw, p: Problem, T, information: str):
    """V̂_l (ζ coordinates): independent-verdict or cell-clustered (SPEC §1.8)."""
    G, F, b, _ = _split(raw, p)
    S = G @ F.T
    eta = S[p.k, p.i] - S[p.k, p.j] + p.a * b[p.k]
    pr = expit(eta)
    rho = p.n * pr - p.y
    X = _llm_design(raw, p) @ T
    gbar = X.T @ rho / p.n_l
    if information == "sandwich":
        sq = p.y2 - 2 * pr * p.y + p.n * pr**2
        V = (X.T * sq) @ X / p.n_l - np.outer(gbar, gbar)
    else:
        scores = rho[:, None] * X - p.n[:, None] * gbar[None, :]
        V = cluster_meat(scores, p.cluster, correction="CR0") / p.n_l
    return V


def _llm_design(raw, p: Problem) -> NDArray[np.float64]:
    """x_c = ∂η_c/∂raw, one row per LLM cell."""
    G, F, _, _ = _split(raw, p)
    nG, nF, nb, nu = p.sizes
    nc = p.k.size
    r1 = p.r1
    X = np.zeros((nc, nG + nF + nb + nu))
    cols = p.k[:, None] * r1 + np.arange(r1)
    X[np.arange(nc)[:, None], cols] = F[p.i] - F[p.j]
    X[np.arange(nc)[:, None], nG + p.i[:, None] * r1 + np.arange(r1)] = G[p.k]
    X[np.arange(nc)[:, None], nG + p.j[:, None] * r1 + np.arange(r1)] -= G[p.k]
    if p.order:
        X[np.arange(nc), nG + nF + p.k] = p.a
    return X


def _joint_covariance(f: _Fit, p: Problem, T, information: str):
    """Cov(ζ̂) = Ĥ⁻ Ĵ Ĥ⁻ / n_h with Ĵ = V̂_h + λ² (n_h/n_l) V̂_l."""
    raw = T @ f.zeta
    H, free = _free_hessian(f.zeta, p, f.lam, T)
    _, Vh = _human_score_moments(raw, p, T)
    Vl = _llm_score_moments(raw, p, T, information)
    J = Vh + f.lam**2 * (p.n_h / p.n_l) * Vl
    Hinv = free @ np.linalg.inv(free.T @ H @ free) @ free.T
    return Hinv @ J @ Hinv / p.n_h


def _estimate(p: Problem, cand: dict, path: dict, information: str,
              anchored: str = "joint") -> Estimate:
    f: _Fit = cand["fit"]
    T = path["chart"]
    items, judges = list(p.items), list(p.judges)
    lam = f.lam
    params = {"human_ability": xr.DataArray(f.s, dims="item", coords={"item": items})}
    notes = {}
    info: dict = {"llm_weight": lam, "rank": p.rank, "space": p.space, "gacv": cand["gacv"],
                  "n_human": p.n_h, "n_llm": p.n_l, "converged": f.converged,
                  "order_effects": p.order}
    if lam == 0:
        B = zero_sum_basis(p.N)
        X = B[p.hi] - B[p.hj]
        pr = expit(f.s[p.hi] - f.s[p.hj])
        L = (X.T * (p.hn * pr * (1 - pr))) @ X
        cov = B @ np.linalg.inv(L) @ B.T
        info["intervals"] = "human Fisher (λ = 0)"
        ds = xr.Dataset(params)
    else:
        raw = T @ f.zeta
        G, F, b, u = _split(raw, p)
        S = G @ F.T
        params["ability"] = xr.DataArray(S, dims=("judge", "item"),
                                         coords={"judge": judges, "item": items})
        if p.order:
            params["order_effect"] = xr.DataArray(b, dims="judge", coords={"judge": judges})
        J_s = _human_jacobian(raw, p) @ T
        J_S = _ability_jacobian(raw, p) @ T
        blocks = [J_s, J_S]
        if p.order:
            Jb = np.zeros((p.K, T.shape[1]))
            nG, _, _, _ = p.sizes
            Jb[:, nG + (p.N - 1) * p.r1: nG + (p.N - 1) * p.r1 + p.K] = np.eye(p.K)
            blocks.append(Jb)
        Jall = np.concatenate(blocks)
        if lam < np.inf:
            cov_z = _joint_covariance(f, p, T, information)
            cov = Jall @ cov_z @ Jall.T
            info["intervals"] = f"joint sandwich, {information} LLM part (SPEC §1.8)"
        else:
            cov_s, cross, cov_l = _anchored_covariance(f, p, T, information, anchored)
            Jl = Jall[p.N:]
            cov = np.zeros((Jall.shape[0], Jall.shape[0]))
            cov[: p.N, : p.N] = cov_s
            cov[p.N:, p.N:] = Jl @ cov_l @ Jl.T
            cov[: p.N, p.N:] = cross @ Jl.T
            cov[p.N:, : p.N] = (cross @ Jl.T).T
            if anchored == "joint":
                info["intervals"] = ("human_ability: fixed-M Fisher plus the LLM estimation "
                                     f"error of M (delta method, {information} LLM sandwich); "
                                     f"ability/order_effect: LLM-only {information} sandwich")
            else:
                info["intervals"] = ("human_ability: fixed-M Fisher (ignores LLM estimation "
                                     "error, the authors' convention, SPEC §1.17.7); "
                                     f"ability/order_effect: LLM-only {information} sandwich")
        c_paper = (u[0] * np.linalg.norm(F @ G.sum(axis=0) / p.K) / np.sqrt(p.N)
                   if p.space == "consensus" else None)
        info["calibration"] = c_paper
        ds = xr.Dataset(params)
    terms = tuple(lbl for name, da in ds.data_vars.items() for lbl in term_labels(str(name), da))
    info["notes"] = notes
    method = {0.0: "human", np.inf: "dial-anchored"}.get(lam, "dial")
    return Estimate(method=method, params=ds, cov=cov, terms=terms,
                    interval={name: "wald" for name in ds.data_vars},
                    loglik=-_human_nll_s(f.s, p), converged=f.converged, info=info)


def _anchored_covariance(f: _Fit, p: Problem, T, information: str, anchored: str):
    """λ = ∞: Cov(ŝ_h), Cov(ŝ_h, θ̂) (N x ζ) and Cov(θ̂) (ζ coordinates).

    ŝ_h: the fixed-M Fisher part (the authors' interval, §1.17.7) plus, unless
    ``anchored="fixed"``, the LLM estimation error carried through ŝ(θ) = M_θ ĉ(θ) by the delta
    method (dĉ/dθ = −H_uu⁻¹ H_uθ; the two samples are independent). θ̂: LLM-only sandwich.
    """
    raw = T @ f.zeta
    X, M = _calibration_design(raw, p)
    pr = expit(f.s[p.hi] - f.s[p.hj])
    cov_c = np.linalg.inv((X.T * (p.hn * pr * (1 - pr))) @ X)
    cov_s = M @ cov_c @ M.T
    H, free = _llm_hessian_free(f.zeta, p, T)
    ev = np.linalg.eigvalsh((H + H.T) / 2)
    if ev.min() <= _NULL_REL * np.abs(ev).max():
        raise identify.IdentificationError(
            "the LLM information is singular at θ̂_∞ (smallest eigenvalue "
            f"{ev.min():.3g}, largest {ev.max():.3g}): the LLM data do not identify every judge "
            "score. Add LLM comparisons, lower the rank, or use a finite llm_weight.")
    Hinv = free @ np.linalg.inv(H) @ free.T
    Vl = _llm_score_moments(raw, p, T, information)
    cov_l = Hinv @ Vl @ Hinv / p.n_l
    cross = np.zeros((p.N, T.shape[1]))
    if anchored == "joint":
        J_s = _human_jacobian(raw, p) @ T
        Hh = T.T @ _human_derivatives(raw, p)[2] @ T
        nu = p.n_u
        dc = -np.linalg.solve(Hh[-nu:, -nu:], Hh[-nu:, :-nu])
        D = np.zeros_like(J_s)
        D[:, :-nu] = J_s[:, :-nu] + J_s[:, -nu:] @ dc
        cov_s = cov_s + D @ cov_l @ D.T
        cross = D @ cov_l
    return cov_s, cross, cov_l


def _llm_hessian_free(zeta, p: Problem, T):
    """Hessian of ℓ_l on the θ coordinates orthogonal to the judge-model gauge (u excluded)."""
    raw = T @ zeta
    _, _, Hl, _ = _llm_derivatives(raw, p)
    H = T.T @ Hl @ T / p.n_l
    null, _ = _gauge(raw, p, T)
    nz = T.shape[1]
    theta = np.zeros((nz, nz - p.n_u))
    theta[: nz - p.n_u] = np.eye(nz - p.n_u)
    g = theta.T @ null  # gauge directions restricted to θ (u rows dropped)
    g, _ = np.linalg.qr(g)
    full, _ = np.linalg.qr(np.concatenate([g, np.eye(nz - p.n_u)], axis=1))
    free = theta @ full[:, p.r1**2:]
    return free.T @ H @ free, free


def _ability_jacobian(raw, p: Problem) -> NDArray[np.float64]:
    """∂ vec S/∂raw (K·N x raw size)."""
    G, F, _, _ = _split(raw, p)
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


def calibration_lr_test(llm: Comparisons, human: Comparisons, *, rank: int = 1,
                        space: Space = "consensus", order_effects: bool = True) -> dict:
    r"""Calibration-restriction LR test and AIC (SPEC §1.11, Prop. D.10).

    :math:`T = 2\{L_h(\hat c; M) - L_h(\hat s_0)\}` (total NLLs), df N − 1 − d, M from θ̂_∞ treated
    as known; ``aic_anchored`` = 2 L_h(ĉ) + 2d vs ``aic_human`` = 2 L_h(ŝ_0) + 2(N − 1).

    Raises
    ------
    MLEBoundaryError
        The human-only MLE does not exist (the Firth-penalised variant is not implemented).
    """
    from scipy.stats import chi2

    p = problem(llm, human, rank=rank, space=space, order_effects=order_effects)
    _require_llm_cells(p)
    path = _path(p, [np.inf, 0.0])
    anc, hum = path["candidates"]
    if not hum["fit"].converged:
        raise MLEBoundaryError("the LR test needs the human-only MLE: " + hum["reason"])
    L_anc = _human_nll_s(anc["fit"].s, p)
    L_hum = _human_nll_s(hum["fit"].s, p)
    stat = 2 * (L_anc - L_hum)
    df = p.N - 1 - p.d
    return {"statistic": stat, "df": df, "p_value": float(chi2.sf(stat, df)) if df > 0 else np.nan,
            "aic_anchored": 2 * L_anc + 2 * p.d, "aic_human": 2 * L_hum + 2 * (p.N - 1)}
