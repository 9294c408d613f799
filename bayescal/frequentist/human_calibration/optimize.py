"""Fits of the weighted estimator (11) at one λ, its endpoints, and the human-only BTL.

Damped Newton in the gauge-free coordinates (eigenvalues floored to stay a descent direction),
rebalancing along the gauge orbit after each step; the λ = ∞ fit is the LLM-only low-rank MLE
θ̂_∞ followed by the calibration with M fixed (12); c is re-initialised at argmin_c ℓ_h(M c)
for every carried M, and only (γ, μ, U, V, b) are warm-started along the path (the authors'
convention).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from bayescal import identify
from bayescal.basis import zero_sum_basis
from bayescal.frequentist.human_calibration.objective import (
    human_block,
    human_nll,
    llm_block,
    llm_nll,
)
from bayescal.frequentist.human_calibration.problem import Problem

__all__ = ["Fit", "Newton", "fit_finite", "fit_infinity", "human_btl", "newton"]

GRAD_TOL = 1e-9  # max |projected gradient| of q_λ (averaged scale) accepted as converged
ADMISSIBLE_GRAD = 1e-5  # the authors' admissibility bound on the projected gradient
_MAX_NEWTON = 200


@dataclass(frozen=True)
class Newton:
    """Result of :func:`newton`."""

    zeta: NDArray[np.float64]
    converged: bool
    max_grad: float
    iterations: int


@dataclass(frozen=True)
class Fit:
    """One candidate's fit: λ, chart point, convergence, the human scores ŝ_h and the humans'
    feature effects β̂_h (empty without features)."""

    lam: float
    zeta: NDArray[np.float64]
    converged: bool
    max_grad: float
    s: NDArray[np.float64]
    beta_h: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


def newton(zeta: NDArray[np.float64], p: Problem, lam: float, *, llm_only: bool = False,
           fixed_theta: bool = False, max_iter: int = _MAX_NEWTON) -> Newton:
    """Minimise q_λ from ζ; ``llm_only`` minimises ℓ_l alone (the λ = ∞ judge fit),
    ``fixed_theta`` moves the human part's own coordinates (β_h, u) only."""
    T = p.chart
    nu = p.n_own

    def parts(z: NDArray[np.float64]) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        pt = p.point(z)
        if llm_only:
            ll = llm_block(pt, p)
            assert ll.hessian is not None
            return ll.nll / p.n_l, T.T @ ll.gradient / p.n_l, T.T @ ll.hessian @ T / p.n_l
        h = human_block(pt, p)
        assert h.hessian is not None
        val, g, H = h.nll / p.n_h, h.gradient / p.n_h, h.hessian / p.n_h
        if lam > 0 and not fixed_theta:
            ll = llm_block(pt, p)
            assert ll.hessian is not None
            val += lam * ll.nll / p.n_l
            g = g + lam * ll.gradient / p.n_l
            H = H + lam * ll.hessian / p.n_l
        return val, T.T @ g, T.T @ H @ T

    def value(z: NDArray[np.float64]) -> float:
        pt = p.point(z)
        if llm_only:
            return llm_nll(pt, p) / p.n_l
        v = human_nll(p.human_scores(pt.G, pt.F, pt.u), p, pt.beta_h) / p.n_h
        if lam > 0 and not fixed_theta:
            v += lam * llm_nll(pt, p) / p.n_l
        return v

    gmax, it = np.inf, 0
    free = np.zeros((zeta.size, nu))
    free[-nu:] = np.eye(nu)
    for it in range(1, max_iter + 1):
        val, g, H = parts(zeta)
        if not fixed_theta and it == 1:
            # one complement of the gauge per call: rebalancing keeps the orbit close, and any
            # complement transversal to it gives the same Newton iterates up to the gauge
            _, free = p.gauge(zeta)
        gf = free.T @ g
        gmax = float(np.max(np.abs(gf)))
        if gmax < GRAD_TOL:
            return Newton(zeta, True, gmax, it)
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
            # the authors' admissibility bound
            return Newton(zeta, gmax < ADMISSIBLE_GRAD, gmax, it)
        zeta = rebalance(new, p)
    return Newton(zeta, gmax < GRAD_TOL, gmax, it)


def rebalance(zeta: NDArray[np.float64], p: Problem) -> NDArray[np.float64]:
    """Move along the gauge orbit to G = PΣ^{1/2}, F = QΣ^{1/2} (q_λ unchanged)."""
    pt = p.point(zeta)
    P, sv, Qt = np.linalg.svd(pt.S, full_matrices=False)
    r1 = p.r1
    root = np.sqrt(np.maximum(sv[:r1], 1e-12))
    G2, F2 = P[:, :r1] * root, Qt[:r1].T * root
    u = np.linalg.lstsq(F2, pt.F @ pt.u, rcond=None)[0] if p.space == "full" else pt.u
    return p.zeta_of(G2, F2, pt.coef, pt.beta_h, u)


def llm_start(p: Problem) -> NDArray[np.float64]:
    """Per-judge ridge BTL with its linear coefficients (b_k, β_k) (batched Newton), then a
    rank-(r+1) SVD (ζ)."""
    K, N, m = p.K, p.N, p.m
    ridge = 1e-3
    s = np.zeros((K, N))
    coef = np.zeros((K, m))
    z = p.z
    ki, kj = p.k * N + p.i, p.k * N + p.j
    base = p.k * N * N
    flat = np.concatenate([base + p.i * N + p.i, base + p.j * N + p.j,
                           base + p.i * N + p.j, base + p.j * N + p.i])
    for _ in range(25):
        eta = s[p.k, p.i] - s[p.k, p.j] + np.einsum("cq,cq->c", z, coef[p.k])
        pr = expit(eta)
        rho = p.n * pr - p.y
        w = p.n * pr * (1 - pr)
        g = np.zeros((K, N + m))
        g[:, :N] = (np.bincount(ki, rho, K * N) - np.bincount(kj, rho, K * N)).reshape(K, N)
        Hk = np.zeros((K, N + m, N + m))
        Hk[:, :N, :N] = np.bincount(flat, np.concatenate([w, w, -w, -w]),
                                    K * N * N).reshape(K, N, N)
        for q in range(m):
            g[:, N + q] = np.bincount(p.k, rho * z[:, q], K)
            wz = w * z[:, q]
            cross = (np.bincount(ki, wz, K * N) - np.bincount(kj, wz, K * N)).reshape(K, N)
            Hk[:, :N, N + q] = Hk[:, N + q, :N] = cross
            for q2 in range(m):
                Hk[:, N + q, N + q2] = np.bincount(p.k, wz * z[:, q2], K)
        g += ridge * np.column_stack([s, coef])
        Hk += ridge * np.eye(N + m)
        step = np.linalg.solve(Hk, g[..., None])[..., 0]
        s, coef = s - step[:, :N], coef - step[:, N:]
        if np.abs(step).max() < 1e-8:
            break
    s -= s.mean(axis=1, keepdims=True)
    P, sv, Qt = np.linalg.svd(s, full_matrices=False)
    r1 = p.r1
    root = np.sqrt(sv[:r1])
    G, F = P[:, :r1] * root, Qt[:r1].T * root
    if G.sum(axis=0)[0] < 0:
        G[:, 0], F[:, 0] = -G[:, 0], -F[:, 0]
    return p.zeta_of(G, F, coef, np.zeros(p.n_feat), np.zeros(p.n_u))


def init_calibration(zeta: NDArray[np.float64], p: Problem) -> Newton:
    """(β_h, c) re-initialised at argmin ℓ_h for the carried M (θ fixed)."""
    pt = p.point(zeta)
    u = np.full(p.n_u, 1.0 / max(1, p.n_u)) if p.space == "consensus" else np.zeros(p.n_u)
    return newton(p.zeta_of(pt.G, pt.F, pt.coef, np.zeros(p.n_feat), u), p, 0.0,
                  fixed_theta=True)


def scores_at(zeta: NDArray[np.float64], p: Problem) -> NDArray[np.float64]:
    pt = p.point(zeta)
    return p.human_scores(pt.G, pt.F, pt.u)


def _fit(lam: float, zeta: NDArray[np.float64], converged: bool, max_grad: float,
         p: Problem) -> Fit:
    return Fit(lam, zeta, converged, max_grad, scores_at(zeta, p), p.point(zeta).beta_h)


def fit_infinity(p: Problem) -> tuple[Fit, Fit]:
    """θ̂_∞ (LLM-only low-rank MLE) and the staged calibration (12) on its M.

    Raises
    ------
    IdentificationError
        Condition 4 fails at θ̂_∞ (rank(D_h M) < d).
    """
    llm = newton(llm_start(p), p, np.inf, llm_only=True)
    llm_fit = Fit(np.inf, llm.zeta, llm.converged, llm.max_grad, np.zeros(p.N))
    pt = p.point(llm.zeta)
    identify.calibration(p.items, p.hi, p.hj, p.basis(pt.G, pt.F), space=p.space)
    cal = init_calibration(llm.zeta, p)
    return llm_fit, _fit(np.inf, cal.zeta, llm.converged and cal.converged, llm.max_grad, p)


def fit_finite(p: Problem, lam: float, warm: NDArray[np.float64]) -> Fit:
    """The weighted estimator (11) at a finite λ > 0, from the carried θ."""
    start = init_calibration(warm, p)
    res = newton(start.zeta, p, lam)
    return _fit(lam, res.zeta, res.converged, res.max_grad, p)


def human_btl(p: Problem, start: NDArray[np.float64] | None = None,
              start_beta: NDArray[np.float64] | None = None
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    """Centred human BTL (λ = 0), with the humans' feature effects β_h, by Newton in Helmert
    coordinates: (ŝ_0, β̂_h, converged)."""
    N, nf = p.N, p.n_feat
    hn, hy = p.hn, p.hy
    B = zero_sum_basis(N)
    X = np.column_stack([B[p.hi] - B[p.hj], p.hx])
    beta = np.zeros(N - 1 + nf)
    if start is not None:
        beta[: N - 1] = B.T @ start
    if start_beta is not None and nf:
        beta[N - 1:] = start_beta

    def out(ok: bool) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
        return B @ beta[: N - 1], beta[N - 1:].copy(), ok

    for _ in range(100):
        d = X @ beta
        pr = expit(d)
        g = X.T @ (hn * pr - hy)
        if np.abs(g).max() / max(hn.sum(), 1) < GRAD_TOL:
            return out(True)
        H = X.T @ ((hn * pr * (1 - pr))[:, None] * X)
        try:
            step = np.linalg.solve(H + 1e-12 * np.eye(N - 1 + nf), g)
        except np.linalg.LinAlgError:
            return out(False)
        val = np.sum(hn * np.logaddexp(0, d) - hy * d)
        t = 1.0
        for _ in range(40):
            nd = X @ (beta - t * step)
            if np.sum(hn * np.logaddexp(0, nd) - hy * nd) <= val:
                break
            t /= 2
        beta = beta - t * step
        if np.abs(beta).max() > 50:
            return out(False)
    return out(False)
