r"""Frequentist twin of the misclassification model (Chen et al. 2026, arXiv:2601.05420; K judges).

Model. A human label :math:`Y \sim \mathrm{Bern}(\theta)` (``prevalence``); judge k reports
:math:`\hat Y_k` with specificity :math:`q_{0k} = P(\hat Y_k = 0 \mid Y = 0)` and sensitivity
:math:`q_{1k} = P(\hat Y_k = 1 \mid Y = 1)`; judges are conditionally independent given Y
(Dawid–Skene). With one judge this is exactly the paper's three-parameter model (its eq. 13).
Calibration items (human label seen) contribute :math:`\log P(Y, \hat Y_1..\hat Y_K)`, test items
:math:`\log \sum_y P(y) \prod_k P(\hat Y_k \mid y)`. Items enter through the counts of their
distinct label patterns (:meth:`bayescal.data.Labels.patterns`), and the log-likelihood is the sum
over items of log-probabilities (no multinomial coefficient).

The sign of :math:`\kappa_k = q_{0k} + q_{1k} - 1`. The paper asks only :math:`\kappa \ne 0`
(:math:`q_0 + q_1 \ne 1`). Relabelling Y -> 1 - Y maps :math:`(\theta, q_0, q_1)` to
:math:`(1 - \theta, 1 - q_1, 1 - q_0)` and leaves the test items' likelihood unchanged, but not
the calibration items': with both human classes in the calibration set the data fix the sign of
every κ, and a flipped judge (κ < 0, one that says 1 for Y = 0) is an interior point like any
other. Two settings (``kappa=``):

* ``"nonzero"`` (default, the paper): θ, q0, q1 free in (0, 1), optimised on their logits. κ = 0
  is not a boundary here: the judge's test labels then carry no information about θ, which the
  calibration labels still identify. Without a calibration item of each class the sign is not
  identified (label switching): :class:`~bayescal.identify.IdentificationError`.
* ``"positive"``: every judge better than chance, for judges known to be; the chart
  :math:`q_1 = \sigma(z_1)`, :math:`q_0 = 1 - q_1\sigma(-z_0)` (so
  :math:`\kappa = q_1\sigma(z_0) > 0`) and :math:`\theta = \sigma(c)`. A judge whose
  calibration labels give :math:`\hat\kappa < 0` draws a warning before the fit, and the
  estimate then runs to the boundary κ -> 0 (:class:`MLEBoundaryError`).

Algorithms: ``newton`` (BFGS on the chart with the analytic gradient, polished by Newton steps
with the analytic Hessian) or ``em`` (E-step: :math:`P(Y = 1 \mid \text{pattern})` for each test
pattern; M-step: weighted proportions, the paper's closed-form M-step generalised to K judges;
with a ``penalty`` the Beta priors add a - 1 and b - 1 pseudo-counts). They agree to ~1e-13.
``Estimate.converged`` is the optimizer's own verdict: the gradient of the (penalized)
log-likelihood at the returned point is below ``1e-8`` per item, or EM's last step below 1e-14.

Covariance (``information=``, resolved by :func:`bayescal.frequentist.covariance.request`
before any fitting; x = (θ, q0[K], q1[K])):

``expected``
    :math:`(m I_{cal} + n I_{test})^{-1}` at the estimate, with the per-item informations
    :math:`E[s s^\top]` (closed form for the calibration part; the test part sums over the
    :math:`2^K` judge patterns exactly, K ≤ 16; for K = 1 both are the paper's closed forms).
    The default: ``information="auto"`` resolves to it (binary labels, no cluster key).
``observed``
    Minus the analytic Hessian of the log-likelihood (Louis's identity for the test patterns).
    The authors' R package uses it, differentiating numerically on the logit scale and mapping
    back by the delta method; at a stationary point the two coincide.
``sandwich``
    :math:`H^{-1} J H^{-1}` with the observed bread H and the meat
    :math:`J = \sum_p n_p s_p s_p^\top` over the label patterns p (:math:`s_p` the score of one
    item with that pattern): the per-item (HC0) sandwich, valid when the conditional
    independence of the judges given Y, or their constant error rates, fail.
``cluster``
    Not offered: the items of :class:`~bayescal.data.Labels` carry no cluster key (each item is
    one unit, and label patterns pool items across any grouping), so a cluster-robust meat
    cannot be formed; :func:`~bayescal.frequentist.covariance.request` refuses it by name.

With a ``penalty`` the bread includes the prior's curvature (the meat only the likelihood's
scores). Intervals are logit-scale Wald (``wald-logit``) for every parameter, as in the paper.

Failure modes: labels that are not 0/1 (:class:`~bayescal.data.DataError`); one judge and no
calibration item with Y = 1 (or Y = 0), which leaves the sensitivity (specificity)
unidentified (:class:`~bayescal.identify.IdentificationError`, before fitting); and an estimate
on the boundary of the parameter space — a sensitivity or specificity at 0 or 1, a prevalence at
0 or 1, and with ``kappa="positive"`` a judge at κ → 0 — reported as :class:`MLEBoundaryError`
naming the judge and parameter. Beta priors with a, b > 1 (the model's defaults) keep the
MAP of :mod:`bayescal.models.misclassification` off q = 0 or 1; with ``kappa="positive"`` not off
κ = 0 (the truncated Beta product has positive density there). With a ``penalty`` the same
checks apply to the penalized estimate.

Nothing here imports PyMC. See ``models/misclassification.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal, Protocol

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import expit, logit

from bayescal.data import Labels
from bayescal.data.labels import LabelPatterns
from bayescal.frequentist import covariance
from bayescal.frequentist._core import ConvergenceWarning, Estimate, MLEBoundaryError
from bayescal.identify import IdentificationError
from bayescal.independence import (
    ConditionalDependenceWarning,
    dependence_message,
    labelled_test,
    pattern_test,
)
from bayescal.priors import check_beta_prior
from bayescal.schema import term_labels

__all__ = [
    "INFORMATION",
    "MLEBoundaryError",
    "fit",
    "gradient",
    "information",
    "loglik",
]

Algorithm = Literal["newton", "em"]
Kappa = Literal["nonzero", "positive"]
_KAPPA_SETTINGS = ("nonzero", "positive")

#: The covariance kinds :func:`fit` offers (``"auto"`` resolves to ``"expected"``).
INFORMATION = ("expected", "observed", "sandwich")

# An estimate whose chart coordinate (logits of θ, q0, q1; with κ > 0: logit θ, logit q1,
# log κ - log(1 - q0)) exceeds this in absolute value is on the boundary in practice: a
# probability within ~3e-7 of 0 or 1, or κ below ~3e-7·q1. An interior estimate that close
# needs millions of items per pattern.
_CHART_MAX = 15.0
# Beyond this (a probability within ~7e-3 of 0 or 1) a coordinate whose log-likelihood slope
# still points outwards by more than _SLOPE_TOL per item is running to the boundary.
_CHART_NEAR = 5.0
_SLOPE_TOL = 1e-7
# The expected information sums over all 2^K test patterns.
_MAX_JUDGES_EXPECTED = 16
# Optimizer budgets and the stationarity test behind Estimate.converged: Newton steps reach a
# gradient of ~1e-13 per item; a point whose gradient exceeds 1e-8 per item is not a maximum.
_BFGS_MAX_ITER = 10_000
_NEWTON_MAX_STEPS = 50
_GRADIENT_TOL = 1e-8


class PriorsLike(Protocol):
    """Anything with the Beta (a, b) fields of the model's ``Priors`` (no PyMC import here)."""

    prevalence: tuple[float, float]
    specificity: tuple[float, float]
    sensitivity: tuple[float, float]


class Boundary(Enum):
    """Which edge of the parameter space an estimate is on."""

    PREVALENCE = "prevalence"
    ACCURACY = "accuracy"  # a sensitivity or specificity at 0 or 1
    KAPPA_ZERO = "kappa_zero"  # κ → 0 under kappa="positive"


@dataclass(frozen=True)
class _Problem:
    kind: Boundary
    text: str


# ------------------------------------------------------------------ parameters
def _vector(params: Mapping[str, ArrayLike], k: int) -> NDArray[np.float64]:
    """(prevalence, specificity[K], sensitivity[K]) -> one vector x of length 1 + 2K."""
    theta = np.asarray(params["prevalence"], dtype=np.float64).reshape(-1)
    q0 = np.asarray(params["specificity"], dtype=np.float64).reshape(-1)
    q1 = np.asarray(params["sensitivity"], dtype=np.float64).reshape(-1)
    if theta.size != 1 or q0.size != k or q1.size != k:
        raise ValueError(
            f"params need a scalar prevalence and specificity/sensitivity of length {k} "
            f"(one per judge); got sizes {theta.size}, {q0.size}, {q1.size}"
        )
    return np.concatenate([theta, q0, q1])


def _split(
    x: NDArray[np.float64], k: int
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    return float(x[0]), x[1 : 1 + k], x[1 + k :]


def _parts(
    x: NDArray[np.float64], pat: LabelPatterns
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per pattern: log A1 = log P(Y=1, ŷ), log A0 = log P(Y=0, ŷ), and the log-probability."""
    theta, q0, q1 = _split(x, pat.n_judges)
    with np.errstate(divide="ignore"):
        la1 = np.log(theta) + pat.yhat @ np.log(q1) + (1 - pat.yhat) @ np.log1p(-q1)
        la0 = np.log1p(-theta) + pat.yhat @ np.log1p(-q0) + (1 - pat.yhat) @ np.log(q0)
    lp = np.where(pat.test, np.logaddexp(la1, la0), np.where(pat.y == 1, la1, la0))
    return la1, la0, lp


def _weights(la1: NDArray[np.float64], la0: NDArray[np.float64], pat: LabelPatterns
             ) -> NDArray[np.float64]:
    """P(Y = 1 | pattern): the human label on calibration patterns, the posterior on test ones."""
    return np.where(pat.test, expit(la1 - la0), pat.y)


def _scores(
    x: NDArray[np.float64], yhat: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Complete-data scores ∂ log A_y / ∂x for y = 1 and y = 0, rows per pattern."""
    k = yhat.shape[1]
    theta, q0, q1 = _split(x, k)
    s1 = np.zeros((len(yhat), 1 + 2 * k))
    s0 = np.zeros_like(s1)
    s1[:, 0] = 1 / theta
    s0[:, 0] = -1 / (1 - theta)
    s1[:, 1 + k :] = yhat / q1 - (1 - yhat) / (1 - q1)
    s0[:, 1 : 1 + k] = (1 - yhat) / q0 - yhat / (1 - q0)
    return s1, s0


def _derivatives(
    x: NDArray[np.float64], pat: LabelPatterns, hessian: bool
) -> tuple[float, NDArray[np.float64], NDArray[np.float64] | None, NDArray[np.float64]]:
    """Log-likelihood, gradient and (optionally) Hessian in x = (θ, q0, q1).

    Test patterns follow Fisher's and Louis's identities: the score is the posterior mean of
    the complete-data score, the Hessian the posterior mean of the complete-data Hessian plus
    the posterior variance of the complete-data score, w(1 - w)(s1 - s0)(s1 - s0)ᵀ.
    """
    k = pat.n_judges
    la1, la0, lp = _parts(x, pat)
    w = _weights(la1, la0, pat)
    c = pat.count
    s1, s0 = _scores(x, pat.yhat)
    grad = (c * w) @ s1 + (c * (1 - w)) @ s0
    if not hessian:
        return float(c @ lp), grad, None, w
    theta, q0, q1 = _split(x, k)
    cw, cv = c * w, c * (1 - w)
    diag = np.zeros(1 + 2 * k)
    diag[0] = -cw.sum() / theta**2 - cv.sum() / (1 - theta) ** 2
    diag[1 : 1 + k] = -(cv @ (1 - pat.yhat)) / q0**2 - (cv @ pat.yhat) / (1 - q0) ** 2
    diag[1 + k :] = -(cw @ pat.yhat) / q1**2 - (cw @ (1 - pat.yhat)) / (1 - q1) ** 2
    d = s1 - s0
    hess = np.diag(diag) + d.T @ ((c * w * (1 - w))[:, None] * d)
    return float(c @ lp), grad, hess, w


def _penalty_terms(
    x: NDArray[np.float64], k: int, penalty: PriorsLike | None
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Beta log densities of the priors, their gradient and (diagonal) Hessian in x."""
    if penalty is None:
        return 0.0, np.zeros_like(x), np.zeros_like(x)
    from scipy.stats import beta as beta_dist  # here: scipy.stats costs a second to import

    a, b = _beta_vectors(k, penalty)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(np.sum(beta_dist.logpdf(x, a, b)))
        grad = np.where(a != 1, (a - 1) / x, 0) - np.where(b != 1, (b - 1) / (1 - x), 0)
        hess = -np.where(a != 1, (a - 1) / x**2, 0) - np.where(b != 1, (b - 1) / (1 - x) ** 2, 0)
    return value, grad, hess


def _beta_vectors(k: int, penalty: PriorsLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    for name in ("prevalence", "specificity", "sensitivity"):
        check_beta_prior(f"penalty.{name}", getattr(penalty, name, None))
    pairs = [penalty.prevalence] + [penalty.specificity] * k + [penalty.sensitivity] * k
    ab = np.asarray(pairs, dtype=np.float64)
    return ab[:, 0], ab[:, 1]


# ------------------------------------------------------------------ public functions
def loglik(
    params: Mapping[str, ArrayLike], data: Labels, *, judges: Sequence[str] | None = None
) -> float:
    r"""Log-likelihood of the misclassification model at ``params``.

    Parameters
    ----------
    params : mapping
        ``prevalence`` (θ, scalar), ``specificity`` (q0) and ``sensitivity`` (q1), one per
        judge in the order of ``judges``.
    data : Labels
        Binary labels.
    judges : sequence of str, optional
        Judges used (default: all, in the order of ``data.judges``).

    Returns
    -------
    float
        :math:`\sum_{cal}\log[P(Y)\prod_k P(\hat Y_k\mid Y)] + \sum_{test}\log\sum_y
        P(y)\prod_k P(\hat Y_k\mid y)`; the sum over items, with no multinomial coefficient.
        For one judge, the paper's :math:`N_{11}\log(\theta q_1) + \dots + T_0\log(1-p)`.
    """
    pat = data.patterns(judges)
    x = _vector(params, pat.n_judges)
    return float(pat.count @ _parts(x, pat)[2])


def gradient(
    params: Mapping[str, ArrayLike], data: Labels, *, judges: Sequence[str] | None = None
) -> dict[str, NDArray[np.float64] | float]:
    """Analytic gradient of :func:`loglik` in (θ, q0, q1).

    Returns
    -------
    dict
        ``prevalence`` (float), ``specificity`` and ``sensitivity`` (arrays, one per judge).
    """
    pat = data.patterns(judges)
    k = pat.n_judges
    g = _derivatives(_vector(params, k), pat, hessian=False)[1]
    return {"prevalence": float(g[0]), "specificity": g[1 : 1 + k], "sensitivity": g[1 + k :]}


def information(
    params: Mapping[str, ArrayLike],
    data: Labels,
    kind: Literal["observed", "expected"] = "observed",
    *,
    judges: Sequence[str] | None = None,
) -> NDArray[np.float64]:
    """Fisher information of the likelihood in x = (θ, q0[K], q1[K]) (rows in that order).

    Parameters
    ----------
    kind : {"observed", "expected"}
        ``observed``: minus the Hessian of :func:`loglik`. ``expected``:
        :math:`m I_{cal} + n I_{test}`, per-item :math:`E[s s^\\top]` at ``params``.
    """
    pat = data.patterns(judges)
    x = _vector(params, pat.n_judges)
    if kind == "observed":
        hess = _derivatives(x, pat, hessian=True)[2]
        assert hess is not None
        return -hess
    if kind == "expected":
        return _expected(x, pat)
    raise ValueError(f"kind must be 'observed' or 'expected', got {kind!r}")


def _pattern_scores(x: NDArray[np.float64], pat: LabelPatterns) -> NDArray[np.float64]:
    """Score of one item of each pattern, ∂ log P(pattern)/∂x (rows per pattern).

    A calibration item's is its complete-data score; a test item's the posterior mean of the
    complete-data scores (Fisher's identity).
    """
    la1, la0, _ = _parts(x, pat)
    w = _weights(la1, la0, pat)
    s1, s0 = _scores(x, pat.yhat)
    out: NDArray[np.float64] = w[:, None] * s1 + (1 - w)[:, None] * s0
    return out


def _meat(x: NDArray[np.float64], pat: LabelPatterns) -> NDArray[np.float64]:
    """Σ_p n_p s_p s_pᵀ: the per-item outer products of the scores, pooled by pattern."""
    return covariance.weighted_gram(_pattern_scores(x, pat), pat.count)


def _expected(x: NDArray[np.float64], pat: LabelPatterns) -> NDArray[np.float64]:
    k = pat.n_judges
    if k > _MAX_JUDGES_EXPECTED:
        raise ValueError(
            f"the expected information sums over 2^K test patterns; K = {k} judges is more "
            f"than {_MAX_JUDGES_EXPECTED}. Use information='observed'."
        )
    theta, q0, q1 = _split(x, k)
    # calibration: the complete-data information, diagonal because Y is seen and judges are
    # conditionally independent (for K = 1 the paper's I_cal)
    cal = np.concatenate([[1 / (theta * (1 - theta))], (1 - theta) / (q0 * (1 - q0)),
                          theta / (q1 * (1 - q1))])
    # test: E[s sᵀ] over every judge pattern, s = w s1 + (1 - w) s0
    grid = ((np.arange(2**k)[:, None] >> np.arange(k)[::-1]) & 1).astype(np.float64)
    every = LabelPatterns(pat.judges, grid, np.zeros(2**k), np.ones(2**k, bool), np.ones(2**k),
                          0, 0)
    la1, la0, lp = _parts(x, every)
    w = expit(la1 - la0)
    s1, s0 = _scores(x, grid)
    s = w[:, None] * s1 + (1 - w)[:, None] * s0
    test = s.T @ (np.exp(lp)[:, None] * s)
    return pat.m * np.diag(cal) + pat.n * test


# ------------------------------------------------------------------ chart
def _to_chart(x: NDArray[np.float64], k: int, positive: bool) -> NDArray[np.float64]:
    """x = (θ, q0, q1) -> chart: logits of all three; with ``positive`` (logit θ, z0, z1),
    z1 = logit q1, z0 = log κ - log(1 - q0)."""
    if not positive:
        with np.errstate(divide="ignore"):
            out: NDArray[np.float64] = logit(x)
        return out
    theta, q0, q1 = _split(x, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = np.log(q0 + q1 - 1) - np.log1p(-q0)
    return np.concatenate([[logit(theta)], z0, logit(q1)])


def _from_chart(c: NDArray[np.float64], k: int, positive: bool) -> NDArray[np.float64]:
    if not positive:
        out: NDArray[np.float64] = expit(c)
        return out
    z0, z1 = c[1 : 1 + k], c[1 + k :]
    q1 = expit(z1)
    q0 = 1 - q1 * expit(-z0)
    return np.concatenate([[expit(c[0])], q0, q1])


def _chart_gradient(
    c: NDArray[np.float64], g: NDArray[np.float64], k: int, positive: bool
) -> NDArray[np.float64]:
    """Chain rule: ∂ℓ/∂chart from ∂ℓ/∂x."""
    if not positive:
        out: NDArray[np.float64] = g * expit(c) * expit(-c)
        return out
    z0, z1 = c[1 : 1 + k], c[1 + k :]
    q1 = expit(z1)
    out = np.empty_like(g)
    out[0] = g[0] * expit(c[0]) * expit(-c[0])
    out[1 : 1 + k] = g[1 : 1 + k] * q1 * expit(z0) * expit(-z0)
    out[1 + k :] = q1 * (1 - q1) * (g[1 + k :] - expit(-z0) * g[1 : 1 + k])
    return out


def _feasible(x: NDArray[np.float64], k: int, positive: bool) -> bool:
    theta, q0, q1 = _split(x, k)
    inside = np.concatenate([[theta], q0, q1])
    return bool(np.all((inside > 0) & (inside < 1)) and (not positive or np.all(q0 + q1 > 1)))


def _start(pat: LabelPatterns, positive: bool) -> NDArray[np.float64]:
    """Calibration proportions (add-a-half) and a pooled Rogan–Gladen prevalence."""
    m1 = pat.n_calibration_positive
    m0 = pat.m - m1
    q0, q1 = pat.calibration_accuracy(smoothing=0.5)
    kappa = q0 + q1 - 1
    if positive:
        # a judge that looks no better than chance starts at κ = 0.2 (same q0 - q1)
        shift = np.where(kappa < 0.2, (0.2 - kappa) / 2, 0.0)
        q0, q1 = np.clip(q0 + shift, 0.05, 0.99), np.clip(q1 + shift, 0.05, 0.99)
        kappa = q0 + q1 - 1
    test = pat.test
    p = (pat.count[test] @ pat.yhat[test]) / pat.count[test].sum()
    # Rogan–Gladen divides by κ: used only where every judge is far from chance, either sign
    with np.errstate(divide="ignore", invalid="ignore"):
        rg = np.clip((p + q0 - 1) / kappa, 0.05, 0.95)
    strong = np.all(np.abs(kappa) > 0.3)
    theta = float(np.mean(rg)) if strong else (m1 + 0.5) / (m1 + m0 + 1)
    return np.concatenate([[theta], q0, q1])


# ------------------------------------------------------------------ algorithms
def _newton(
    pat: LabelPatterns, penalty: PriorsLike | None, x0: NDArray[np.float64], positive: bool
) -> tuple[NDArray[np.float64], dict[str, object]]:
    k = pat.n_judges
    scale = 1.0 / (pat.m + pat.n)

    def objective(c: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        x = _from_chart(c, k, positive)
        if not _feasible(x, k, positive):
            return np.inf, np.zeros_like(c)
        ll, g, _, _ = _derivatives(x, pat, hessian=False)
        lp, gp, _ = _penalty_terms(x, k, penalty)
        return -(ll + lp) * scale, -_chart_gradient(c, g + gp, k, positive) * scale

    res = minimize(objective, _to_chart(x0, k, positive), jac=True, method="BFGS",
                   options={"gtol": 1e-11, "maxiter": _BFGS_MAX_ITER})
    c = res.x
    info: dict[str, object] = {"optimizer": "BFGS + Newton", "bfgs_iterations": int(res.nit),
                               "bfgs_message": str(res.message)}
    if np.max(np.abs(c)) > _CHART_MAX:
        return _from_chart(c, k, positive), {**info, "newton_steps": 0}
    # Newton polish in x: BFGS stops near 1e-7 relative accuracy, exact steps reach ~1e-14
    x = _from_chart(c, k, positive)
    steps = 0
    for _ in range(_NEWTON_MAX_STEPS):
        ll, g, hess, _ = _derivatives(x, pat, hessian=True)
        lp, gp, hp = _penalty_terms(x, k, penalty)
        assert hess is not None
        try:
            step = np.linalg.solve(hess + np.diag(hp), -(g + gp))
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(step)):
            break
        base = ll + lp
        t = 1.0
        while t > 1e-10:
            trial = x + t * step
            if _feasible(trial, k, positive):
                new = float(pat.count @ _parts(trial, pat)[2]) + _penalty_terms(trial, k,
                                                                               penalty)[0]
                if new >= base - 1e-12 * abs(base):
                    break
            t /= 2
        if t <= 1e-10:
            break
        x = x + t * step
        steps += 1
        if np.max(np.abs(t * step)) < 1e-15:
            break
    return x, {**info, "newton_steps": steps}


def _em(
    pat: LabelPatterns,
    penalty: PriorsLike | None,
    x0: NDArray[np.float64],
    positive: bool,
    tol: float = 1e-14,
    max_iter: int = 200_000,
) -> tuple[NDArray[np.float64], dict[str, object]]:
    """EM (with a penalty: MAP-EM, the Beta priors adding a - 1 and b - 1 pseudo-counts)."""
    k = pat.n_judges
    if penalty is None:
        a, b = np.ones(1 + 2 * k), np.ones(1 + 2 * k)
    else:
        a, b = _beta_vectors(k, penalty)
    c, yhat = pat.count, pat.yhat
    ak, bk = slice(1, 1 + k), slice(1 + k, None)  # specificity, sensitivity blocks
    x = x0.copy()
    iterations, change = 0, np.inf
    while iterations < max_iter and change >= tol and _feasible(x, k, positive):
        la1, la0, _ = _parts(x, pat)
        w = _weights(la1, la0, pat)  # E-step: P(Y = 1 | pattern)
        cw, cv = c * w, c * (1 - w)
        s1, s0 = cw.sum(), cv.sum()
        new = np.empty_like(x)  # M-step: weighted proportions (+ prior pseudo-counts)
        new[0] = (s1 + a[0] - 1) / (s1 + s0 + a[0] + b[0] - 2)
        new[ak] = (cv @ (1 - yhat) + a[ak] - 1) / (s0 + a[ak] + b[ak] - 2)
        new[bk] = (cw @ yhat + a[bk] - 1) / (s1 + a[bk] + b[bk] - 2)
        change = float(np.max(np.abs(new - x)))
        x = new
        iterations += 1
    converged = change < tol
    return x, {"optimizer": "EM", "em_iterations": iterations, "em_converged": converged}


# ------------------------------------------------------------------ boundary checks
def _boundary(
    x: NDArray[np.float64], pat: LabelPatterns, penalty: PriorsLike | None, positive: bool
) -> list[_Problem]:
    """Parameters at (or past) the boundary of θ, q ∈ (0, 1) (and κ > 0), naming the judge.

    A chart coordinate beyond ``_CHART_MAX`` is on the boundary; so is one beyond
    ``_CHART_NEAR`` whose log-likelihood slope still points outwards (the optimizer stopped
    on a ridge that rises toward the boundary, e.g. when two parameters run off together).
    """
    k = pat.n_judges
    theta, q0, q1 = _split(x, k)
    kappa = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        c = _to_chart(np.clip(x, 0.0, 1.0), k, positive)
    flagged = np.isinf(c) | (np.abs(c) > _CHART_MAX)
    if _feasible(x, k, positive):
        g = _derivatives(x, pat, hessian=False)[1] + _penalty_terms(x, k, penalty)[1]
        slope = np.sign(c) * _chart_gradient(c, g, k, positive)
        flagged |= (np.abs(c) > _CHART_NEAR) & (slope > _SLOPE_TOL * (pat.m + pat.n))
    problems = []
    if flagged[0] or not 0 < theta < 1:
        problems.append(_Problem(Boundary.PREVALENCE,
                                 f"prevalence → {0 if theta < 0.5 else 1} (θ̂ = {theta:.3g})"))
    for j, name in enumerate(pat.judges):
        i0, i1 = 1 + j, 1 + k + j
        if positive:
            # z0 → -∞ is κ → 0 at fixed q1, z0 → +∞ is q0 → 1; z1 → ∓∞ is q1 → 0 or 1, and
            # q1 → 0 forces κ = q1 σ(z0) → 0 too
            to_chance = (flagged[i0] and c[i0] < 0) or (flagged[i1] and c[i1] < 0)
            if not kappa[j] > 0 or to_chance:
                problems.append(_Problem(
                    Boundary.KAPPA_ZERO,
                    f"judge {name!r}: specificity + sensitivity → 1 (κ = q0 + q1 - 1 → 0; "
                    f"q̂0 = {q0[j]:.3g}, q̂1 = {q1[j]:.3g}) under kappa='positive': the data "
                    "place this judge at or below chance, and the constraint holds it at the "
                    "edge, where the Wald interval would be unbounded"))
                continue
            low0 = low1 = False
        else:
            low0, low1 = bool(flagged[i0] and c[i0] < 0), bool(flagged[i1] and c[i1] < 0)
        at = f" (κ̂ = q̂0 + q̂1 - 1 = {kappa[j]:.3g})"
        for what, value, low, index in (("sensitivity", q1[j], low1, i1),
                                        ("specificity", q0[j], low0, i0)):
            sym = "q̂1" if what == "sensitivity" else "q̂0"
            if low or not value > 0:
                edge = 0
            elif flagged[index] or not value < 1:
                edge = 1
            else:
                continue
            problems.append(_Problem(
                Boundary.ACCURACY,
                f"judge {name!r}: {what} → {edge} ({sym} = {value:.8g}){at}"))
    return problems


def _raise_boundary(problems: list[_Problem], what: str) -> None:
    kappa = any(p.kind is Boundary.KAPPA_ZERO for p in problems)
    advice = (
        " Fit with kappa='nonzero' (the paper's condition κ ≠ 0: the calibration labels fix the "
        "sign of κ), or drop the judge (fit(..., judges=[...])). Under kappa='positive' a judge "
        "at κ → 0 stays there under the Beta priors too (their truncated product has positive "
        "density at κ = 0, so the MAP is on the same boundary)."
        if kappa else
        " Use the MAP or NUTS fit of bayescal.models.misclassification (Beta priors with "
        "a, b > 1 keep the estimate interior), drop the judge (fit(..., judges=[...])), or "
        "label more items."
    )
    raise MLEBoundaryError(
        f"the {what} is on the boundary of the parameter space: "
        + "; ".join(p.text for p in problems)
        + ". No Wald interval is meaningful there." + advice
    )


# ------------------------------------------------------------------ fit
def fit(
    data: Labels,
    *,
    judges: Sequence[str] | None = None,
    algorithm: Algorithm = "newton",
    kappa: Kappa = "nonzero",
    information: covariance.Information = "auto",
    cluster: str | None = None,
    correction: str | None = None,
    penalty: PriorsLike | None = None,
) -> Estimate:
    """Maximum-likelihood fit of the misclassification model with logit-Wald intervals.

    Parameters
    ----------
    data : Labels
        Binary human labels on the calibration items and judge labels on every item.
    judges : sequence of str, optional
        Judges to use (default: all).
    algorithm : {"newton", "em"}
        BFGS + Newton on the chart of ``kappa``, or EM with closed-form M-steps.
    kappa : {"nonzero", "positive"}
        ``"nonzero"`` (default): κ_k = q0 + q1 - 1 of either sign, fixed by the calibration
        labels (the paper's κ ≠ 0). ``"positive"``: every judge better than chance (κ_k > 0),
        for judges known to be; warns when a judge's calibration labels give κ̂ < 0.
    information : {"auto", "expected", "observed", "sandwich"}
        Covariance kind (module docstring): ``"auto"`` (default) resolves to ``"expected"``,
        :math:`(m I_{cal} + n I_{test})^{-1}`; ``"observed"`` is the authors' R package's;
        ``"sandwich"`` the per-item sandwich with the observed bread. ``"cluster"`` is refused:
        items carry no cluster key. With more than 16 judges the expected information (a sum
        over 2^K patterns) is not offered and ``"auto"`` resolves to ``"observed"``.
    cluster, correction : None
        Only for ``information="cluster"``, which this model does not offer; naming either is
        an error, never ignored.
    penalty : Priors, optional
        Add the Beta log densities of the Bayesian model's priors; the optimum is then the MAP
        of :func:`bayescal.models.misclassification.build` with those priors, and the bread
        includes the prior's curvature. ``None`` gives the MLE.

    Returns
    -------
    Estimate
        ``prevalence`` (scalar), ``specificity`` and ``sensitivity`` (dim ``judge``), with
        ``wald-logit`` intervals; method ``"mle"`` (``"penalized-mle"`` with a penalty);
        ``converged`` from the optimizer; ``info`` holds the resolved covariance request.

    Raises
    ------
    ValueError
        An unknown or unavailable ``information``, or ``cluster``/``correction`` given (before
        any fitting).
    DataError
        Labels that are not 0/1 (from ``Labels.patterns``), or an unknown judge.
    IdentificationError
        One judge and no calibration item with Y = 1 (or Y = 0); with ``kappa="nonzero"`` and
        several judges, a human class absent from the calibration set (the sign of κ is then
        not identified); or a singular information matrix at the estimate.
    MLEBoundaryError
        The estimate is on the boundary (a sensitivity/specificity at 0 or 1, a prevalence at 0
        or 1, with ``kappa="positive"`` κ_k → 0); the message names the judge and parameter.

    Warns
    -----
    UserWarning
        ``kappa="positive"`` and a judge whose calibration labels give κ̂ < 0.
    ConvergenceWarning
        The optimizer stopped without reaching a stationary point (``converged`` is False).
    ConditionalDependenceWarning
        K ≥ 2 judges whose labels are dependent given the human label on the labelled items
        (:func:`bayescal.independence.labelled_test`) or, K ≥ 4, on all items' judge
        patterns (:func:`bayescal.independence.pattern_test`), bootstrap p below 0.01; one
        message names both statistics and points to
        :func:`bayescal.frequentist.misclassification_dependent.fit`. The statistics are in
        ``info`` (``independence_g2``, ``_df``, ``_p_value``; ``pattern_independence_*``)
        whenever testable.
    """
    if algorithm not in ("newton", "em"):
        raise ValueError(f"algorithm must be 'newton' or 'em', got {algorithm!r}")
    if kappa not in _KAPPA_SETTINGS:
        raise ValueError(f"kappa must be 'nonzero' or 'positive', got {kappa!r}")
    n_judges = len(data.judges if judges is None else tuple(judges))
    many = n_judges > _MAX_JUDGES_EXPECTED
    if many and information == "expected":
        raise ValueError(
            f"information='expected' sums over 2^K test patterns; K = {n_judges} judges is "
            f"more than {_MAX_JUDGES_EXPECTED}. Use information='observed' or 'sandwich'.")
    supported = tuple(kind for kind in INFORMATION if not (many and kind == "expected"))
    req = covariance.request(information, cluster=cluster, correction=correction,
                             supported=supported, model="the misclassification model")
    if many and information == "auto":
        req = replace(req, reason=f"{n_judges} judges: the expected information (2^K patterns) "
                                  "is not offered")
    positive = kappa == "positive"
    pat = data.patterns(judges)
    k = pat.n_judges
    if penalty is None:
        reason = pat.unidentified()
        if reason is None and not positive:
            reason = pat.sign_unidentified()
        if reason is not None:
            raise IdentificationError(
                reason + ". Label more items (of both human classes and both judge labels), "
                "or use the Bayesian model "
                "(bayescal.models.misclassification), whose Beta prior makes the posterior proper"
                + ("" if positive else
                   ", or fit with kappa='positive' if every judge is known to beat chance")
            )
    else:
        _beta_vectors(k, penalty)  # validate before fitting
    if positive and (conflict := pat.negative_kappa()) is not None:
        warnings.warn(conflict, UserWarning, stacklevel=2)
    x0 = _start(pat, positive)
    x, info = (_newton if algorithm == "newton" else _em)(pat, penalty, x0, positive)
    what = "maximum-likelihood estimate" if penalty is None else "penalized estimate"
    problems = _boundary(x, pat, penalty, positive)
    if problems:
        _raise_boundary(problems, what)
    ll, g, hess, _ = _derivatives(x, pat, hessian=True)
    _, gp, hp = _penalty_terms(x, k, penalty)
    assert hess is not None
    max_gradient = float(np.max(np.abs(g + gp)))
    stationary = max_gradient <= _GRADIENT_TOL * (pat.m + pat.n)
    converged = stationary and bool(info.get("em_converged", True))
    if not converged:
        warnings.warn(
            f"the {info['optimizer']} optimizer stopped without converging (largest gradient "
            f"{max_gradient:.3g}"
            + (f" after {info['em_iterations']} EM iterations" if "em_iterations" in info else "")
            + "); the estimate and its covariance are not trustworthy"
            + ("; use algorithm='newton'" if algorithm == "em" else ""),
            ConvergenceWarning, stacklevel=2,
        )
    observed = -(hess + np.diag(hp))
    eig = np.linalg.eigvalsh(observed)
    if eig[0] <= 1e-10 * max(eig[-1], 1e-300):
        raise IdentificationError(
            "the observed information is singular (or not positive definite) at the estimate "
            f"(eigenvalues {eig[0]:.3g} .. {eig[-1]:.3g}): the labels do not identify every "
            "prevalence, specificity and sensitivity; there is no interior maximum"
        )
    if req.kind == "expected":
        cov = np.linalg.inv(_expected(x, pat) - np.diag(hp))
        cov = (cov + cov.T) / 2
    elif req.kind == "observed":
        cov = np.linalg.inv(observed)
        cov = (cov + cov.T) / 2
    else:
        cov = covariance.sandwich(observed, _meat(x, pat))
    # K >= 2: the model's conditional independence is testable on the labelled items, and
    # from K = 4 on all items' judge patterns too (the latent-class fit started at x)
    cal = ~pat.test
    tests = [labelled_test(pat.yhat[cal], pat.y[cal], pat.count[cal]),
             pattern_test(pat.yhat, pat.count, x[0], x[1 : 1 + k], x[1 + k :])]
    for test in tests:
        if test is not None:
            info.update(test.as_info())
    if any(test is not None and test.rejects for test in tests):
        warnings.warn(dependence_message(tests), ConditionalDependenceWarning, stacklevel=2)
    info.update(
        req.as_info(),
        algorithm=algorithm,
        max_abs_gradient=max_gradient,
        kappa=dict(zip(pat.judges, (x[1 : 1 + k] + x[1 + k :] - 1).tolist(), strict=True)),
        kappa_constraint=kappa,
        m=pat.m,
        n=pat.n,
        n_patterns=len(pat.count),
    )
    return _estimate(pat, x, cov, ll, penalty, info, converged)


def _estimate(
    pat: LabelPatterns,
    x: NDArray[np.float64],
    cov: NDArray[np.float64],
    ll: float,
    penalty: PriorsLike | None,
    info: dict[str, object],
    converged: bool,
) -> Estimate:
    k = pat.n_judges
    coords = {"judge": list(pat.judges)}
    ds = xr.Dataset({
        "prevalence": xr.DataArray(x[0]),
        "specificity": xr.DataArray(x[1 : 1 + k], dims="judge", coords=coords),
        "sensitivity": xr.DataArray(x[1 + k :], dims="judge", coords=coords),
    })
    terms = tuple(label for name, da in ds.data_vars.items()
                  for label in term_labels(str(name), da))
    return Estimate(
        method="mle" if penalty is None else "penalized-mle",
        params=ds,
        cov=cov,
        terms=terms,
        interval={name: "wald-logit" for name in ds.data_vars},
        loglik=ll,
        converged=converged,
        info=info,
    )
