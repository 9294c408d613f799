r"""The weighted objective :math:`q_\lambda = \ell_h(M_\theta c) + \lambda\,\ell_l(\theta)` and its
derivatives, analytic in the raw coordinates (vec G, vec F, b, u).

:math:`\ell_h, \ell_l` are average negative log-likelihoods (per human comparison, per LLM
verdict). For an LLM cell c with linear predictor :math:`\eta_c = S_{ki} - S_{kj} + z_c^\top
\mathrm{coef}_k` (:math:`z_c = (a_c, x_c)`, :math:`\mathrm{coef}_k = (b_k, \beta_k)`),
residual :math:`\rho_c = n_c\sigma(\eta_c) - y_c` and weight :math:`w_c = n_c\sigma(1-\sigma)`,
the Hessian of the total NLL is :math:`\sum_c [w_c x_c x_c^\top + \rho_c \nabla^2\eta_c]`
(:math:`x_c = \nabla\eta_c`); the first sum alone is the expected (Fisher) information. The
human block is the same with :math:`d = s_i - s_j + \beta_h^\top x` and :math:`s = M_\theta c`,
whose second
derivatives (the products c·F·G of the consensus map, F·u of the full one) give its
:math:`\rho\nabla^2 d` terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from bayescal.frequentist.human_calibration.problem import Point, Problem

__all__ = ["Block", "derivatives", "human_block", "human_design_raw", "human_nll", "llm_block",
           "llm_nll"]


@dataclass(frozen=True)
class Block:
    """One sample's total NLL with its raw gradient and Hessian (or expected information).

    ``prob`` is σ of each cell's linear predictor; ``jacobian`` (human block only) is ∂s_h/∂raw.
    """

    nll: float
    gradient: NDArray[np.float64]
    hessian: NDArray[np.float64] | None
    prob: NDArray[np.float64]
    jacobian: NDArray[np.float64] | None = None


def llm_nll(pt: Point, p: Problem) -> float:
    """Σ_c [n_c log(1 + e^{η_c}) − y_c η_c] (total scale)."""
    eta = p.llm_eta(pt)
    return float(np.sum(p.n * np.logaddexp(0.0, eta) - p.y * eta))


def human_nll(s: NDArray[np.float64], p: Problem,
              beta_h: NDArray[np.float64] | None = None) -> float:
    """Σ_t [n_t log(1 + e^{d_t}) − y_t d_t], d_t = s_i − s_j + β_hᵀ x_t (total scale)."""
    d = p.human_logit(s, beta_h)
    return float(np.sum(p.hn * np.logaddexp(0.0, d) - p.hy * d))


def llm_block(pt: Point, p: Problem, *, hessian: bool = True, expected: bool = False) -> Block:
    """LLM NLL (total scale), raw gradient and Hessian (``expected``: Fisher information)."""
    G, F = pt.G, pt.F
    K, N, r1, m = p.K, p.N, p.r1, p.m
    eta = p.llm_eta(pt)
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
    z = p.z
    if m:
        grad[nG + nF: nG + nF + K * m] = np.stack(
            [np.bincount(p.k, rho * z[:, q], K) for q in range(m)], axis=1).ravel()
    if not hessian:
        return Block(nll, grad, None, pr)
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
    if not expected:
        # curvature: ∂²S_kn/∂G_kq∂F_nq = 1, weighted by ∂L/∂S_kn
        curv = np.zeros((K, r1, N, r1))
        curv[:, np.arange(r1), :, np.arange(r1)] = gS[None]
        HGF += curv.reshape(nG, nF)
    H[sl_G, sl_F] = HGF
    H[sl_F, sl_G] = HGF.T
    if m:
        # the judges' linear coefficients (b_k, β_k): rows nG + nF + k m + q
        sl_c = slice(nG + nF, nG + nF + K * m)
        HcG = np.zeros((K, m, K, r1))
        HcF = np.zeros((K, m, nF))
        for q in range(m):
            wz = w * z[:, q]
            cross = (np.bincount(ki, wz, K * N) - np.bincount(kj, wz, K * N)).reshape(K, N)
            HcG[np.arange(K), q, np.arange(K)] = cross @ F
            HcF[:, q] = np.einsum("kn,kq->knq", cross, G).reshape(K, nF)
        H[sl_c, sl_G] = HcG.reshape(K * m, nG)
        H[sl_G, sl_c] = H[sl_c, sl_G].T
        H[sl_c, sl_F] = HcF.reshape(K * m, nF)
        H[sl_F, sl_c] = H[sl_c, sl_F].T
        Hcc = np.zeros((K, m, K, m))
        Hcc[np.arange(K), :, np.arange(K), :] = np.stack(
            [np.einsum("c,cq,cr->qr", w[p.k == k], z[p.k == k], z[p.k == k])
             for k in range(K)])
        H[sl_c, sl_c] = Hcc.reshape(K * m, K * m)
    return Block(nll, grad, H, pr)


def _block_diag(blocks: NDArray[np.float64]) -> NDArray[np.float64]:
    K, r1, _ = blocks.shape
    out = np.zeros((K, r1, K, r1))
    out[np.arange(K), :, np.arange(K), :] = blocks
    return out.reshape(K * r1, K * r1)


def human_jacobian(pt: Point, p: Problem) -> NDArray[np.float64]:
    """∂s_h/∂raw (N x raw size)."""
    G, F, u = pt.G, pt.F, pt.u
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


def human_design_raw(pt: Point, p: Problem,
                     J: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Per human cell, ∂d_t/∂raw = J_i − J_j (+ x_t in the β_h columns)."""
    J = human_jacobian(pt, p) if J is None else J
    X = J[p.hi] - J[p.hj]
    if p.n_feat:
        nG, nF, nb, _ = p.sizes
        X[:, nG + nF + nb - p.n_feat: nG + nF + nb] = p.hx
    return X


def human_block(pt: Point, p: Problem, *, hessian: bool = True,
                expected: bool = False) -> Block:
    """Human NLL (total scale), raw gradient, Hessian (``expected``: Fisher information)."""
    G, F, u = pt.G, pt.F, pt.u
    K, N, r1 = p.K, p.N, p.r1
    nG, nF, _, nu = p.sizes
    s = p.human_scores(G, F, u)
    d = p.human_logit(s, pt.beta_h)
    pr = expit(d)
    rho = p.hn * pr - p.hy
    nll = float(np.sum(p.hn * np.logaddexp(0.0, d) - p.hy * d))
    gs = np.bincount(p.hi, rho, N) - np.bincount(p.hj, rho, N)
    J = human_jacobian(pt, p)
    X = human_design_raw(pt, p, J)
    grad = X.T @ rho
    if not hessian:
        return Block(nll, grad, None, pr, J)
    w = p.hn * pr * (1 - pr)
    H = (X.T * w) @ X  # β_h enters d linearly: its second derivatives are zero
    if expected:
        return Block(nll, grad, H, pr, J)
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
    return Block(nll, grad, H, pr, J)


@dataclass(frozen=True)
class Derivatives:
    """:math:`q_\\lambda`, its gradient and Hessian in chart coordinates ζ (averaged scale)."""

    value: float
    gradient: NDArray[np.float64]
    hessian: NDArray[np.float64]


def derivatives(zeta: NDArray[np.float64], p: Problem, lam: float) -> Derivatives:
    """Value, gradient and Hessian of q_λ in the chart ζ (analytic).

    Parameters
    ----------
    zeta : ndarray
        Chart coordinates (vec G, vec F̃, b, u).
    p : Problem
    lam : float
        λ ≥ 0, finite.
    """
    T = p.chart
    pt = p.point(zeta)
    h = human_block(pt, p)
    assert h.hessian is not None
    val, grad, H = h.nll / p.n_h, h.gradient / p.n_h, h.hessian / p.n_h
    if lam > 0:
        ll = llm_block(pt, p)
        assert ll.hessian is not None
        val += lam * ll.nll / p.n_l
        grad = grad + lam * ll.gradient / p.n_l
        H = H + lam * ll.hessian / p.n_l
    return Derivatives(val, T.T @ grad, T.T @ H @ T)
