r"""The λ path: fits from ∞ down to 0 with warm starts, GACV per candidate, admissibility.

GACV (DIAL Section 5.3, Theorem 5):

.. math:: \mathrm{GACV}(\lambda) = \ell_h(\hat s_\lambda)
          + \frac{1}{n_h - 1}\mathrm{tr}(\hat H_\lambda^-\hat J_\lambda),\qquad
          \hat J_\lambda = \frac1{n_h}\sum_t (\hat g_t - \bar g)(\hat g_t - \bar g)^\top,

Ĥ the Hessian of the whole weighted objective in all free coordinates, :math:`\hat g_t` the
chart gradient of one human comparison's loss. It is one Newton step of leave-one-human-
comparison-out (all LLM verdicts kept in every fit): deleting t moves ζ̂ by
:math:`\hat H^-(\hat g_t - \bar g)/(n_h - 1)`, and averaging :math:`h_t` at the moved points gives
the formula; :math:`|\mathrm{GACV} - \mathrm{CV}_{LOO}| = O_p(n_h^{-2})`. The endpoints use the
fixed-design logistic form (λ = 0: design rows :math:`B^\top(e_i - e_j)`; λ = ∞: :math:`M_i - M_j`
with M from θ̂_∞ held fixed, exact because deleting a human comparison does not move θ̂_∞).

A candidate is inadmissible for a :class:`Reason` (the authors' guards): no convergence, more
null directions of Ĥ than the chart's (r+1)² invariances, runaway judge scores, near-separation
of ŝ, a human MLE that does not exist (λ = 0), a singular calibration Hessian.
"""

from __future__ import annotations

import contextlib
import enum
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from bayescal import identify
from bayescal.basis import zero_sum_basis
from bayescal.frequentist.human_calibration import optimize as opt
from bayescal.frequentist.human_calibration.objective import (
    derivatives,
    human_design_raw,
    human_nll,
)
from bayescal.frequentist.human_calibration.problem import Problem

__all__ = ["Candidate", "Path", "Reason", "run_path"]

NULL_REL = 1e-8  # eigenvalue ≤ this × max counts as null (the authors' rule)
SEPARATION = 10.0  # max |ŝ_i| beyond which a candidate is near-separated
RUNAWAY = 25.0  # max |S_ki| or |b_k| beyond which the judge model has no interior MLE


class Reason(enum.Enum):
    """Why a candidate λ is inadmissible (the table's ``reason`` column says it in words)."""

    LLM_NOT_CONVERGED = "the LLM-only fit did not converge"
    CALIBRATION_NOT_CONVERGED = "the calibration fit did not converge"
    CALIBRATION_SINGULAR = "the calibration Hessian is singular (Condition 4 fails numerically)"
    HUMAN_MLE_MISSING = "human-only MLE does not exist"
    HUMAN_NOT_CONVERGED = "the human BTL fit did not converge"
    HUMAN_SINGULAR = "the human information is singular"
    NOT_CONVERGED = "did not converge"
    NULL_DIRECTIONS = "the Hessian has more null directions than the chart's invariances"
    RUNAWAY = "the judge scores run off"
    LLM_NOT_IDENTIFIED = "θ̂_∞ is not identified by the LLM data"
    SEPARATION = "near-separation"

    @property
    def no_interior_estimate(self) -> bool:
        """The likelihood has no interior optimum here (MLEBoundaryError, not identification)."""
        return self not in (Reason.NULL_DIRECTIONS, Reason.LLM_NOT_IDENTIFIED)


@dataclass(frozen=True)
class Candidate:
    """One λ of the path: its fit, GACV, why it is inadmissible (None if it is; ``detail``
    appends the figures to the reason's words), wall time."""

    fit: opt.Fit
    gacv: float
    reason: Reason | None
    detail: str
    seconds: float

    @property
    def admissible(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class Path:
    """The candidates in scan order and the LLM-only fit θ̂_∞ they start from."""

    candidates: tuple[Candidate, ...]
    llm_fit: opt.Fit


_CONTROLLER: list[Any] = []  # one threadpoolctl controller per process, made on first use


def one_blas_thread() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread: the matrices here are ~(K + N)(r + 1) square, where threads
    only add contention (measured 10x slower with 2 threads on a loaded 2-core machine).

    The controller is made once: ``threadpool_limits`` rescans every loaded shared library on
    each call (about 12 ms once PyMC's and numba's libraries are loaded, a quarter of a
    human-calibration fit), while the libraries' thread pools do not change between fits."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
            return contextlib.nullcontext()
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)


def null_count(H: NDArray[np.float64]) -> int:
    """Eigenvalues of H at or below NULL_REL × the largest |eigenvalue| (negatives included)."""
    ev = np.linalg.eigvalsh((H + H.T) / 2)
    return int(np.sum(ev <= NULL_REL * np.abs(ev).max()))


def human_moments(zeta: NDArray[np.float64], p: Problem) -> tuple[NDArray[np.float64],
                                                                  NDArray[np.float64]]:
    """ḡ and V̂_h = n_h⁻¹ Σ_t (g_t − ḡ)(g_t − ḡ)ᵀ per human comparison (ζ coordinates)."""
    pt = p.point(zeta)
    s = p.human_scores(pt.G, pt.F, pt.u)
    pr = expit(p.human_logit(s, pt.beta_h))
    X = human_design(zeta, p)
    gbar = X.T @ (p.hn * pr - p.hy) / p.n_h
    sq = p.hy2 - 2 * pr * p.hy + p.hn * pr**2  # Σ_t (p − y_t)² within a cell
    return gbar, (X.T * sq) @ X / p.n_h - np.outer(gbar, gbar)


def human_design(zeta: NDArray[np.float64], p: Problem) -> NDArray[np.float64]:
    """Per human cell, ∂d_t/∂ζ (d_t = s_i − s_j + β_hᵀ x_t)."""
    return human_design_raw(p.point(zeta), p) @ p.chart


def fixed_design_gacv(f: opt.Fit, X: NDArray[np.float64], p: Problem
                      ) -> tuple[float, NDArray[np.float64]]:
    """Fixed-design logistic GACV with per-cell design rows X (the humans' feature columns
    included), and the eigenvalues of H."""
    s = f.s
    pr = expit(p.human_logit(s, f.beta_h))
    n_h = p.n_h
    H = (X.T * (p.hn * pr * (1 - pr))) @ X / n_h
    gbar = X.T @ (p.hn * pr - p.hy) / n_h
    sq = p.hy2 - 2 * pr * p.hy + p.hn * pr**2
    J = (X.T * sq) @ X / n_h - np.outer(gbar, gbar)
    ev = np.linalg.eigvalsh(H)
    tr = float(np.trace(np.linalg.pinv(H) @ J))
    return human_nll(s, p, f.beta_h) / n_h + tr / (n_h - 1), ev


def finite_gacv(f: opt.Fit, p: Problem) -> tuple[float, int]:
    """GACV at a finite λ and the number of null directions of Ĥ (NaN where too many)."""
    H = derivatives(f.zeta, p, f.lam).hessian
    _, free = p.gauge(f.zeta)
    _, V = human_moments(f.zeta, p)
    nulls = null_count(H)
    if nulls > p.r1**2:
        # the candidate is inadmissible for its singular Hessian; the trace is undefined there
        return np.nan, nulls
    Hf = free.T @ H @ free
    tr = float(np.trace(np.linalg.solve(Hf, free.T @ V @ free)))
    return human_nll(f.s, p, f.beta_h) / p.n_h + tr / (p.n_h - 1), nulls


def _infinity(p: Problem, llm_fit: opt.Fit, f: opt.Fit) -> tuple[float, Reason | None, str]:
    pt = p.point(f.zeta)
    M = p.basis(pt.G, pt.F)
    value, ev = fixed_design_gacv(f, np.column_stack([M[p.hi] - M[p.hj], p.hx]), p)
    if not llm_fit.converged or llm_fit.max_grad > opt.ADMISSIBLE_GRAD:
        return value, Reason.LLM_NOT_CONVERGED, f" (gradient {llm_fit.max_grad:.2g})"
    if not f.converged:
        return value, Reason.CALIBRATION_NOT_CONVERGED, ""
    if ev.min() <= NULL_REL * ev.max():
        return value, Reason.CALIBRATION_SINGULAR, ""
    return value, None, ""


def _zero(p: Problem) -> tuple[opt.Fit, float, Reason | None, str]:
    ident = identify.check(p.human)
    # the graph test of the MLE's existence (Zermelo/Ford) is for the BTL without features;
    # with the humans' β_h a separated fit shows as Newton running off (not converged)
    if not ident.connected or (not ident.mle_exists and not p.n_feat):
        f = opt.Fit(0.0, np.zeros(0), False, np.inf, np.full(p.N, np.nan),
                    np.full(p.n_feat, np.nan))
        why = ident.no_mle_message() if ident.connected else ident.disconnected_message()
        return f, np.nan, Reason.HUMAN_MLE_MISSING, ": " + why
    s, beta_h, ok = opt.human_btl(p)
    f = opt.Fit(0.0, np.zeros(0), ok, 0.0, s, beta_h)
    B = zero_sum_basis(p.N)
    value, ev = fixed_design_gacv(f, np.column_stack([B[p.hi] - B[p.hj], p.hx]), p)
    if not ok:
        return f, value, Reason.HUMAN_NOT_CONVERGED, ""
    if ev.min() <= NULL_REL * ev.max():
        return f, value, Reason.HUMAN_SINGULAR, ""
    return f, value, None, ""


def run_path(p: Problem, lams: list[float]) -> Path:
    """Fit every λ in ``lams`` (scan order: ∞, finite descending, 0) with warm starts."""
    with one_blas_thread():
        return _run_path(p, lams)


def _run_path(p: Problem, lams: list[float]) -> Path:
    out = []
    llm_fit, anchored = opt.fit_infinity(p)
    warm = llm_fit.zeta
    for lam in lams:
        t0 = time.perf_counter()
        if lam == np.inf:
            f = anchored
            value, reason, detail = _infinity(p, llm_fit, f)
        elif lam == 0:
            f, value, reason, detail = _zero(p)
        else:
            f = opt.fit_finite(p, lam, warm)
            value, nulls = finite_gacv(f, p)
            reason, detail = None, ""
            if not f.converged or f.max_grad > opt.ADMISSIBLE_GRAD:
                reason, detail = Reason.NOT_CONVERGED, f" (projected gradient {f.max_grad:.2g})"
            elif nulls > p.r1**2:
                reason, detail = Reason.NULL_DIRECTIONS, (f" ({nulls} null directions, "
                                                          f"{p.r1**2} invariances)")
            if f.converged:
                warm = f.zeta
        if f.zeta.size:  # the most informative reason wins
            pt = p.point(f.zeta)
            per_judge = np.abs(pt.S).max(axis=1)
            if pt.b.size:
                per_judge = np.maximum(per_judge, np.abs(pt.b))
            big = float(per_judge.max())
            if big > RUNAWAY:
                judge = p.llm.judges[int(per_judge.argmax())]
                reason, detail = Reason.RUNAWAY, (
                    f" (max |S_ki|, |b_k| = {big:.3g}, judge {judge!r}): its verdicts are "
                    "separated, no interior MLE")
        if reason is None and np.abs(f.s).max() > SEPARATION:
            reason, detail = Reason.SEPARATION, (f" (max |ŝ| = {np.abs(f.s).max():.3g} > "
                                                 f"{SEPARATION:g})")
        out.append(Candidate(f, value, reason, detail, time.perf_counter() - t0))
    return Path(tuple(out), llm_fit)


def describe(c: Candidate) -> str:
    """The candidate's reason in words ('' when admissible)."""
    return "" if c.reason is None else c.reason.value + c.detail
