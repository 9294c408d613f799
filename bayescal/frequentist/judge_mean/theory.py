r"""Closed-form asymptotic variances of the judge-mean estimators (Chen et al. 2026).

The paper: Chen, Lu, Li, Guo and Li (2026), arXiv:2601.05420.

Setting (the paper's Sec. 2.1): human label :math:`Y \sim \mathrm{Bern}(\theta)`, judge label
:math:`\hat Y \in \{0, 1\}` with specificity :math:`q_0 = P(\hat Y = 0 \mid Y = 0)` and sensitivity
:math:`q_1 = P(\hat Y = 1 \mid Y = 1)`; :math:`p = P(\hat Y = 1) = (1-\theta)(1-q_0) + \theta q_1`,
:math:`\kappa = q_0 + q_1 - 1`. A test set of n items (judge label only) and a calibration set of
m items (both labels), :math:`n/m \to \gamma_1`, labelled fraction :math:`\pi = 1/(1+\gamma_1)`.

Every variance here is on the :math:`\sqrt N` scale, :math:`N = n + m`:
:math:`\sqrt N(\hat\theta - \theta) \to \mathcal N(0, V)`, so a finite-sample standard error is
about :math:`\sqrt{V/N}`. All functions broadcast over numpy arrays.

Identities (the paper's Props. 5–7, App. B.7–B.8; checked in the test suite):
:math:`V_{EIF} = V_{MLE} = V_{PPI++}(\lambda^*) \le V_{PPI} \le V_{RG}`.

Nothing here imports PyMC.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "gamma1_from_fraction",
    "information_cal",
    "information_test",
    "judge_positive_rate",
    "lambda_star",
    "naive_bias",
    "v_eif",
    "v_mle",
    "v_mle_information",
    "v_ppi",
    "v_ppi_plus_plus",
    "v_rogan_gladen",
]

Array = NDArray[np.float64]


def _f(*args: ArrayLike) -> tuple[Array, ...]:
    return tuple(np.asarray(a, dtype=np.float64) for a in args)


def gamma1_from_fraction(fraction: ArrayLike) -> Array:
    r"""Test-to-calibration ratio :math:`\gamma_1 = n/m = (1-f)/f` for a labelled fraction f = m/N.

    The paper's labelling budgets 1%, 5%, 10% give :math:`\gamma_1` = 99, 19, 9.
    """
    (f,) = _f(fraction)
    return (1.0 - f) / f


def judge_positive_rate(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike) -> Array:
    r""":math:`p = P(\hat Y = 1) = (1-\theta)(1-q_0) + \theta q_1` (eq. 4)."""
    t, a, b = _f(theta, q0, q1)
    return (1 - t) * (1 - a) + t * b


def naive_bias(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike) -> Array:
    r"""Bias of the naive judge mean (Sec. 5.3).

    :math:`p - \theta = (1-q_0) + \theta(q_0+q_1-2)`.
    """
    t, a, b = _f(theta, q0, q1)
    return (1 - a) + t * (a + b - 2)


def _v123(theta: Array, q0: Array, q1: Array) -> tuple[Array, Array, Array, Array]:
    """p and the paper's V1 = Var(Ŷ), V2 = Var(Y - Ŷ), V3 = E Var(Ŷ | Y) (App. B.8)."""
    p = judge_positive_rate(theta, q0, q1)
    v1 = p * (1 - p)
    v2 = (1 - theta) * (1 - q0) + theta * (1 - q1) - (theta - p) ** 2
    v3 = (1 - theta) * q0 * (1 - q0) + theta * q1 * (1 - q1)
    return p, v1, v2, v3


def v_rogan_gladen(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike) -> Array:
    r"""Rogan–Gladen (Prop. 1, eq. 6).

    :math:`V_{RG} = \frac{1+\gamma_1}{\gamma_1}\kappa^{-2}\{p(1-p) + \gamma_1[(1-\theta) q_0(1-q_0)
    + \theta q_1(1-q_1)]\}`.
    """
    t, a, b, g = _f(theta, q0, q1, gamma1)
    _, v1, _, v3 = _v123(t, a, b)
    kappa = a + b - 1
    return (1 + g) / g * (v1 + g * v3) / kappa**2


def v_ppi(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike) -> Array:
    r"""PPI (Prop. 2, eq. 8).

    :math:`V_{PPI} = \frac{1+\gamma_1}{\gamma_1}(V_1 + \gamma_1 V_2)` with
    :math:`V_1 = p(1-p)`, :math:`V_2 = \mathrm{Var}(Y - \hat Y) = (1-\theta)(1-q_0) + \theta(1-q_1)
    - (\theta - p)^2`. (The paper's App. B.8 display drops the common factor
    :math:`(1+\gamma_1)/\gamma_1` from both V_PPI and V_RG.)
    """
    t, a, b, g = _f(theta, q0, q1, gamma1)
    _, v1, v2, _ = _v123(t, a, b)
    return (1 + g) / g * (v1 + g * v2)


def v_ppi_plus_plus(
    theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike, lam: ArrayLike
) -> Array:
    r"""PPI++ at a fixed weight λ (Prop. 3, eq. 10).

    :math:`V(\lambda) = (1+\gamma_1)\mathrm{Var}(Y - \lambda\hat Y)
    + \lambda^2 \frac{1+\gamma_1}{\gamma_1}\mathrm{Var}(\hat Y)`, with
    :math:`\mathrm{Var}(Y-\lambda\hat Y) = \theta(1-\theta) - 2\lambda\theta(1-\theta)\kappa
    + \lambda^2 p(1-p)`. λ = 1 is PPI, λ = 0 the calibration-only mean.
    """
    t, a, b, g, lam_ = _f(theta, q0, q1, gamma1, lam)
    p = judge_positive_rate(t, a, b)
    var_y = t * (1 - t)
    cov = var_y * (a + b - 1)
    var_yhat = p * (1 - p)
    resid = var_y - 2 * lam_ * cov + lam_**2 * var_yhat
    return (1 + g) * resid + lam_**2 * (1 + g) / g * var_yhat


def lambda_star(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike) -> Array:
    r"""Variance-minimising PPI++ weight (Prop. 3 (4), eq. 16).

    :math:`\lambda^* = \frac{\gamma_1 \mathrm{Cov}(Y,\hat Y)}{(1+\gamma_1)\mathrm{Var}(\hat Y)}
    = \frac{\gamma_1\theta(1-\theta)\kappa}{(1+\gamma_1)p(1-p)}` (negative for an
    anti-correlated judge: the minimisation is over all of ℝ).
    """
    t, a, b, g = _f(theta, q0, q1, gamma1)
    p = judge_positive_rate(t, a, b)
    return g * t * (1 - t) * (a + b - 1) / ((1 + g) * p * (1 - p))


def v_eif(
    theta: ArrayLike,
    q0: ArrayLike,
    q1: ArrayLike,
    gamma1: ArrayLike,
    p_hat: Literal["all", "test"] = "all",
) -> Array:
    r"""Cell-mean EIF estimator (Prop. 6, eq. 17).

    ``p_hat="all"`` (the paper's eq. 19, μ̂(Ŷ) averaged over all N items) attains the
    efficiency bound :math:`V_{EIF} = \mathrm{Var}(\mu(\hat Y))
    + \pi^{-1} E[\mathrm{Var}(Y\mid\hat Y)] = \frac{\theta(1-\theta)}{p(1-p)}
    [\theta(1-\theta)\kappa^2 + (1+\gamma_1)(q_0(1-q_0)(1-\theta) + q_1(1-q_1)\theta)]`.

    ``p_hat="test"`` is the convention of the authors' R package (μ̂(Ŷ) averaged over the test set
    only). It discards the calibration items' judge labels when estimating p, which adds
    :math:`p(1-p)(\mu_1-\mu_0)^2/\gamma_1` with
    :math:`\mu_1 - \mu_0 = \theta(1-\theta)\kappa/(p(1-p))`
    (derived here by the delta method; it vanishes only as :math:`\gamma_1 \to \infty`).
    """
    t, a, b, g = _f(theta, q0, q1, gamma1)
    p = judge_positive_rate(t, a, b)
    kappa = a + b - 1
    var_y = t * (1 - t)
    v = var_y / (p * (1 - p)) * (var_y * kappa**2
                                 + (1 + g) * (a * (1 - a) * (1 - t) + b * (1 - b) * t))
    if p_hat == "all":
        return v
    if p_hat == "test":
        return v + (var_y * kappa) ** 2 / (p * (1 - p)) / g
    raise ValueError(f"p_hat must be 'all' or 'test', got {p_hat!r}")


def v_mle(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike) -> Array:
    r"""Misclassification MLE, closed form (App. B.7).

    :math:`V_{MLE} = (1+\gamma_1)\theta(1-\theta)
    \frac{p(1-p) + \gamma_1 B}{p(1-p) + \gamma_1(C+B)}`,
    :math:`C = \kappa^2\theta(1-\theta)`, :math:`B = (1-\theta)q_0(1-q_0) + \theta q_1(1-q_1)`
    (so :math:`C + B = p(1-p)`). :func:`v_mle_information` computes the same number as
    :math:`[I_{\gamma_1}^{-1}]_{11}`.
    """
    t, a, b, g = _f(theta, q0, q1, gamma1)
    p = judge_positive_rate(t, a, b)
    c = (a + b - 1) ** 2 * t * (1 - t)
    bb = (1 - t) * a * (1 - a) + t * b * (1 - b)
    v1 = p * (1 - p)
    return (1 + g) * t * (1 - t) * (v1 + g * bb) / (v1 + g * (c + bb))


def information_cal(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike) -> Array:
    r"""Per-item Fisher information of a calibration item (Y, Ŷ) in η = (θ, q0, q1).

    Shape (..., 3, 3): :math:`I_{cal} = \mathrm{diag}(1/(\theta(1-\theta)),
    (1-\theta)/(q_0(1-q_0)), \theta/(q_1(1-q_1)))`
    (App. B.4, Step 1).
    """
    t, a, b = np.broadcast_arrays(*_f(theta, q0, q1))
    out = np.zeros((*t.shape, 3, 3))
    out[..., 0, 0] = 1 / (t * (1 - t))
    out[..., 1, 1] = (1 - t) / (a * (1 - a))
    out[..., 2, 2] = t / (b * (1 - b))
    return out


def information_test(theta: ArrayLike, q0: ArrayLike, q1: ArrayLike) -> Array:
    r"""Per-item Fisher information of a test item (Ŷ only) in η = (θ, q0, q1).

    A test item is Bernoulli(p(η)), so :math:`I_{test} = \nabla p \nabla p^\top / (p(1-p))` with
    :math:`\nabla p = (\kappa, -(1-\theta), \theta)` — equivalently :math:`E[s s^\top]` with the
    scores :math:`s_1 = \nabla p / p`, :math:`s_0 = -\nabla p/(1-p)`, the gradient taken in
    (θ, q0, q1).
    """
    t, a, b = np.broadcast_arrays(*_f(theta, q0, q1))
    p = judge_positive_rate(t, a, b)
    grad = np.stack([a + b - 1, -(1 - t), t], axis=-1)
    return grad[..., :, None] * grad[..., None, :] / (p * (1 - p))[..., None, None]


def v_mle_information(
    theta: ArrayLike, q0: ArrayLike, q1: ArrayLike, gamma1: ArrayLike
) -> Array:
    r"""Misclassification MLE as :math:`V_{MLE} = [I_{\gamma_1}^{-1}]_{11}` (App. B.4).

    :math:`I_{\gamma_1} = \frac{\gamma_1}{1+\gamma_1} I_{test} + \frac{1}{1+\gamma_1} I_{cal}`,
    the per-item information averaged over the N items (shape (..., 3, 3), inverted per point).
    """
    t, a, b, g = np.broadcast_arrays(*_f(theta, q0, q1, gamma1))
    w = (g / (1 + g))[..., None, None]
    info = w * information_test(t, a, b) + (1 - w) * information_cal(t, a, b)
    return np.linalg.inv(info)[..., 0, 0]
