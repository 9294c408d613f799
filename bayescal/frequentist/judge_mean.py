r"""Every estimator of seed 001 (Chen et al.) for the mean of the human label.

Data (:class:`~bayescal.data.Labels`, seed 001 §2.1): a calibration set of m items with the
human label :math:`Y_j` and the judge label :math:`\hat Y_j`, and a test set of n items with
:math:`\hat Y_i` only; :math:`N = n + m`. The target is :math:`\theta = E[Y]`, called
``prevalence`` when the human labels are binary and ``mean`` otherwise (:func:`target`).

Binary notation (calibration counts :math:`N_{ab}` = #{Y=a, Ŷ=b}, test counts :math:`T_b`):
:math:`m_1 = N_{11} + N_{10}`, :math:`m_0 = N_{01} + N_{00}` (human classes),
:math:`\hat q_1 = N_{11}/m_1` (sensitivity), :math:`\hat q_0 = N_{00}/m_0` (specificity),
:math:`\hat p = T_1/n` (test-set judge mean), :math:`\hat\kappa = \hat q_0 + \hat q_1 - 1`.

Estimators (seed 001 equation numbers; SPEC §2.2):

* :func:`naive` — test-set judge mean (eq. 3), biased by :math:`(1-q_0) + \theta(q_0+q_1-2)`;
* :func:`rogan_gladen` — misclassification correction (eq. 6), optionally the smoothed variant
  of the seed's R package;
* :func:`ppi` — prediction-powered inference (eq. 8);
* :func:`ppi_plus_plus` — power-tuned PPI (eq. 10);
* :func:`mle` — three-parameter misclassification MLE (eq. 13), by
  :mod:`bayescal.frequentist.misclassification`;
* :func:`eif` — efficient-influence-function estimator (eqs. 15, 19) with a cell-mean, linear or
  natural-spline regression :math:`\hat\mu(\hat y) \approx E[Y \mid \hat Y = \hat y]`;
* :func:`estimate` — all of them in one table; a method undefined on the data reports why.

Intervals (seed 001 §5.2, SPEC §2.3): binary human labels get the logit-transformed Wald interval
:math:`\mathrm{expit}(\mathrm{logit}\,\hat\theta \pm z\sqrt{\hat V}/(\hat\theta(1-\hat\theta)))`
with :math:`\hat\theta` clamped to [1e-6, 1 - 1e-6] (``wald-logit``); continuous labels the plain
Wald interval (``wald``). Both come from :func:`bayescal.summary.wald_interval`.

Implementations of these estimators differ in small conventions (which p̂, which λ formula,
ddof, clipping); each function's docstring states the one used here, and its ``info`` records it.
Nothing here imports PyMC.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import NDArray
from scipy.stats import norm

from bayescal.data import DataError, Labels
from bayescal.frequentist._core import Estimate
from bayescal.summary import COLUMNS

__all__ = [
    "METHODS",
    "EstimatorUndefined",
    "eif",
    "estimate",
    "mle",
    "naive",
    "natural_spline_basis",
    "ppi",
    "ppi_plus_plus",
    "rogan_gladen",
    "target",
]

Array = NDArray[np.float64]

#: Row order of :func:`estimate`.
METHODS = ("naive", "rogan_gladen", "ppi", "ppi_plus_plus", "mle", "eif")

# PPI++: below this denominator of λ̂ the judge labels are (numerically) constant and λ̂ = 0/0;
# the seed's R package then falls back to λ = 1 (plain PPI), and so do we.
_LAMBDA_DENOMINATOR_MIN = 1e-10


class EstimatorUndefined(ValueError):
    """The estimator is not defined on these data; the message says why."""


# ----------------------------------------------------------------------------- helpers
def _is_binary(*arrays: Array) -> bool:
    return all(np.isin(a, (0.0, 1.0)).all() for a in arrays)


def target(labels: Labels) -> tuple[str, str]:
    """Parameter name and interval kind for the mean of the human label.

    Returns ``("prevalence", "wald-logit")`` when every calibration human label is 0 or 1
    (θ is a probability; logit-scale Wald interval, seed 001 §5.2) and ``("mean", "wald")``
    otherwise (plain Wald, as the seed's code does for non-binary outcomes). This is the one
    place where that rule lives.
    """
    return ("prevalence", "wald-logit") if _is_binary(labels.y_cal) else ("mean", "wald")


def _one_judge(labels: Labels, judge: str | None) -> Labels:
    """The labels of one judge as a single-judge :class:`Labels` (row labels kept)."""
    yc, yt = labels.judge(judge)
    name = judge if judge is not None else labels.judges[0]
    return Labels(labels.y_cal, yc[:, None], yt[:, None], (name,), labels.cal_index,
                  labels.test_index)


def _arrays(lab: Labels) -> tuple[Array, Array, Array]:
    return lab.y_cal, lab.yhat_cal[:, 0], lab.yhat_test[:, 0]


def _var(x: Array, what: str, ddof: int = 1) -> float:
    if len(x) <= ddof:
        raise EstimatorUndefined(
            f"the sample variance of {what} needs more than {ddof} value(s), got {len(x)}"
        )
    return float(np.var(x, ddof=ddof))


def _result(method: str, lab: Labels, value: float, var: float, info: dict[str, Any]) -> Estimate:
    name, kind = target(lab)
    info = {"judge": lab.judges[0], "m": lab.m, "n": lab.n, **info}
    return Estimate(
        method=method,
        params=xr.Dataset({name: ((), float(value))}),
        cov=np.array([[float(var)]]),
        terms=(name,),
        interval={name: kind},
        info=info,
    )


def _counts(y: Array, yc: Array, yt: Array) -> dict[str, int]:
    return {
        "N11": int(np.sum((y == 1) & (yc == 1))),
        "N10": int(np.sum((y == 1) & (yc == 0))),
        "N01": int(np.sum((y == 0) & (yc == 1))),
        "N00": int(np.sum((y == 0) & (yc == 0))),
        "T1": int(np.sum(yt == 1)),
        "T0": int(np.sum(yt == 0)),
    }


def _require_both_classes(y: Array, consequence: str) -> None:
    for value, word in ((1, "positive"), (0, "negative")):
        if not np.any(y == value):
            raise EstimatorUndefined(
                f"no {word} human label (Y={value}) in the calibration set (all {len(y)} are "
                f"Y={1 - value}): {consequence.format(value=value)}. Label more items, or use "
                "ppi / ppi_plus_plus / naive."
            )


# ----------------------------------------------------------------------------- naive
def naive(labels: Labels, judge: str | None = None) -> Estimate:
    r"""Naive estimator: the mean judge label on the test set (seed 001 eq. 3).

    :math:`\hat\theta_{naive} = n^{-1}\sum_{test}\hat Y_i`. It estimates :math:`p = E[\hat Y]`, not
    θ: its bias is :math:`p - \theta = (1-q_0) + \theta(q_0+q_1-2)` for a binary judge
    (:func:`~bayescal.frequentist.judge_mean_theory.naive_bias`), so its interval covers θ only
    by accident. Shown as the baseline every correction is measured against.

    Parameters
    ----------
    labels : Labels
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.

    Returns
    -------
    Estimate
        Variance :math:`\hat p(1-\hat p)/n` for binary judge labels, else the sample variance
        (ddof=1) over n. The calibration set is not used.
    """
    lab = _one_judge(labels, judge)
    _, _, yt = _arrays(lab)
    p = float(yt.mean())
    if _is_binary(yt):
        var, rule = p * (1 - p) / lab.n, "p̂(1-p̂)/n"
    else:
        var, rule = _var(yt, "the test-set judge labels") / lab.n, "Var(Ŷ_test, ddof=1)/n"
    return _result("naive", lab, p, var, {"variance": rule})


# ----------------------------------------------------------------------------- Rogan–Gladen
def rogan_gladen(
    labels: Labels, judge: str | None = None, *, smoothed: bool = False, prob: float = 0.9
) -> Estimate:
    r"""Rogan–Gladen misclassification correction (seed 001 eq. 6, Prop. 1).

    :math:`\hat\theta_{RG} = (\hat p + \hat q_0 - 1)/(\hat q_0 + \hat q_1 - 1)`, with
    :math:`\hat q_0, \hat q_1` from the calibration set and :math:`\hat p` the **test-set** judge
    mean (the calibration items' judge labels enter only through :math:`\hat q`), clipped to
    [0, 1] (as the seed's code does). Delta-method variance (SPEC §2.2)

    .. math:: \hat V = [\hat p(1-\hat p)/n + (1-\hat\theta)^2\hat q_0(1-\hat q_0)/m_0
              + \hat\theta^2\hat q_1(1-\hat q_1)/m_1] / \hat\kappa^2

    evaluated at the clipped :math:`\hat\theta`.

    ``smoothed=True`` is the Lang–Reiczigel (2014) / Agresti–Coull-type variant of the seed's R
    package, whose *point estimate is the smoothed* :math:`\tilde\theta`: with z the
    ``prob``-level normal quantile, :math:`\tilde p = (n\hat p + z^2/2)/(n + z^2)`,
    :math:`\tilde n = n + z^2`, :math:`\tilde q_c = (m_c\hat q_c + 1)/(m_c + 2)`,
    :math:`\tilde m_c = m_c + 2`, :math:`\tilde\theta = \mathrm{clip}((\tilde p + \tilde q_0 - 1)
    / (\tilde q_0 + \tilde q_1 - 1))` and the same variance with tildes. Because z enters the
    point estimate, summarise a smoothed fit at the same ``prob``.

    Parameters
    ----------
    labels : Labels
        Binary human and judge labels.
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    smoothed : bool
        Use the smoothed variant (default: the paper's raw estimator).
    prob : float
        Interval probability that fixes z for ``smoothed=True`` (unused otherwise).

    Returns
    -------
    Estimate
        ``info`` holds the counts, :math:`\hat q_0, \hat q_1, \hat p, \hat\kappa`, the unclipped
        value and whether clipping happened.

    Raises
    ------
    DataError
        Labels that are not 0/1.
    EstimatorUndefined
        No Y=1 or no Y=0 item in the calibration set (:math:`\hat q_1` or :math:`\hat q_0` has
        no data), or :math:`\hat\kappa \le 0` (judge no better than chance: the correction
        divides by :math:`\hat\kappa`). For ``smoothed=True`` the test is on
        :math:`\tilde\kappa`.
    """
    lab = _one_judge(labels, judge)
    lab.require_binary()
    y, yc, yt = _arrays(lab)
    _require_both_classes(y, "Rogan–Gladen cannot estimate the judge's error rate on Y={value} "
                             "items (q̂0 or q̂1 is 0/0)")
    c = _counts(y, yc, yt)
    n = lab.n
    m1, m0 = c["N11"] + c["N10"], c["N01"] + c["N00"]
    q1, q0, p = c["N11"] / m1, c["N00"] / m0, c["T1"] / n
    info: dict[str, Any] = {**c, "m0": m0, "m1": m1, "q0_hat": q0, "q1_hat": q1, "p_hat": p,
                            "kappa_hat": q0 + q1 - 1, "smoothed": smoothed,
                            "p_hat_source": "test set"}
    n_eff, m0_eff, m1_eff = float(n), float(m0), float(m1)
    if smoothed:
        if not 0 < prob < 1:
            raise ValueError(f"prob must lie strictly between 0 and 1, got {prob!r}")
        z = float(norm.ppf(0.5 + prob / 2))
        n_eff, m0_eff, m1_eff = n + z**2, m0 + 2.0, m1 + 2.0
        p = (n * p + z**2 / 2) / n_eff
        q0 = (m0 * q0 + 1) / m0_eff
        q1 = (m1 * q1 + 1) / m1_eff
        info.update(z=z, prob=prob, p_tilde=p, q0_tilde=q0, q1_tilde=q1)
    kappa = q0 + q1 - 1
    if kappa <= 0:
        sym = "q̃0 + q̃1" if smoothed else "q̂0 + q̂1"
        raise EstimatorUndefined(
            f"judge no better than chance on the calibration set: {sym} = {q0 + q1:.4f} <= 1 "
            f"(specificity {q0:.4f}, sensitivity {q1:.4f}), so the Rogan–Gladen correction "
            "divides by q0 + q1 - 1 <= 0. Use ppi / ppi_plus_plus / eif, which do not."
        )
    raw = (p + q0 - 1) / kappa
    theta = float(np.clip(raw, 0.0, 1.0))
    var = (p * (1 - p) / n_eff + (1 - theta) ** 2 * q0 * (1 - q0) / m0_eff
           + theta**2 * q1 * (1 - q1) / m1_eff) / kappa**2
    info.update(theta_unclipped=raw, clipped=bool(raw != theta),
                variance="delta method at the clipped estimate")
    return _result("rogan_gladen", lab, theta, var, info)


# ----------------------------------------------------------------------------- PPI
def ppi(labels: Labels, judge: str | None = None, *, ddof: int = 1) -> Estimate:
    r"""Prediction-powered inference (seed 001 eq. 8, Prop. 2).

    :math:`\hat\theta_{PPI} = \bar{\hat Y}_{test} - m^{-1}\sum_{cal}(\hat Y_j - Y_j)`, unbiased;
    :math:`\hat V = \mathrm{Var}(Y - \hat Y)_{cal}/m + \mathrm{Var}(\hat Y_{test})/n` with sample
    variances. Equals :func:`ppi_plus_plus` with ``lam=1``.

    Parameters
    ----------
    labels : Labels
        Binary or continuous labels.
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    ddof : int
        Delta degrees of freedom of both sample variances: 1 (default) as the seed's R package;
        0 reproduces ``ppi_py.ppi_mean_ci(..., lam=1)`` exactly (with a plain Wald interval).

    Returns
    -------
    Estimate
        Logit-scale interval for binary human labels, plain Wald otherwise. The point estimate
        is not clamped to [0, 1].
    """
    lab = _one_judge(labels, judge)
    y, yc, yt = _arrays(lab)
    theta = float(yt.mean() - (yc - y).mean())
    var = (_var(y - yc, "the calibration residuals Y - Ŷ", ddof) / lab.m
           + _var(yt, "the test-set judge labels", ddof) / lab.n)
    return _result("ppi", lab, theta, var,
                   {"ddof": ddof, "variance": "Var(Y-Ŷ)_cal/m + Var(Ŷ_test)/n"})


# ----------------------------------------------------------------------------- PPI++
def ppi_plus_plus(
    labels: Labels, judge: str | None = None, *, lam: float | None = None, clip: bool = False
) -> Estimate:
    r"""Power-tuned PPI (seed 001 eq. 10, Prop. 3).

    :math:`\hat\theta(\lambda) = \bar Y_{cal} + \lambda(\bar{\hat Y}_{test} - \bar{\hat Y}_{cal})`,
    unbiased for every fixed λ, with

    .. math:: \hat V = \mathrm{Var}(Y - \lambda\hat Y)_{cal}/m
              + \lambda^2\mathrm{Var}(\hat Y_{test})/n

    (sample variances, ddof=1). The weight (``info["llm_weight"]``):

    * default — the closed form of the seed's R package,
      :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y_{cal}, \hat Y_{cal}) /
      (\widehat{\mathrm{Var}}(\hat Y_{cal}) + (m/n)\widehat{\mathrm{Var}}(\hat Y_{test}))`
      (ddof=1 throughout), **unclipped** (an anti-correlated judge gets λ̂ < 0). It is the exact
      minimiser of :math:`\hat V(\lambda)` above and estimates
      :math:`\lambda^* = \gamma_1\mathrm{Cov}(Y,\hat Y)/((1+\gamma_1)\mathrm{Var}(\hat Y))`. When
      the denominator is below 1e-10 (constant judge labels) λ = 1 (plain PPI), as in the R code;
      ``info["lambda_fallback"]`` says so.
    * ``clip=True`` — λ̂ clipped to [0, 1]. Because :math:`\hat V(\lambda)` is a convex quadratic,
      this equals minimising it over [0, 1], the R package's continuous-outcome convention.
      (``ppi_py`` uses yet another formula, with pooled ddof=0 moments, also clipped.)
    * ``lam`` — a given weight (``clip`` is then ignored); ``lam=1`` is PPI, ``lam=0`` the
      calibration-only mean.

    λ̂ is estimated from the same data and treated as fixed in the variance (first-order valid).

    Parameters
    ----------
    labels : Labels
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    lam : float, optional
        Fixed weight λ.
    clip : bool
        Clip the estimated λ̂ to [0, 1].

    Returns
    -------
    Estimate
        The point estimate is not clamped to [0, 1].
    """
    lab = _one_judge(labels, judge)
    y, yc, yt = _arrays(lab)
    m, n = lab.m, lab.n
    info: dict[str, Any] = {"lambda_fallback": False, "clip": clip}
    if lam is None:
        var_cal = _var(yc, "the calibration judge labels")
        var_test = _var(yt, "the test-set judge labels")
        cov = float(np.cov(y, yc, ddof=1)[0, 1])
        denominator = var_cal + (m / n) * var_test
        if denominator < _LAMBDA_DENOMINATOR_MIN:
            weight, info["lambda_fallback"] = 1.0, True
        else:
            weight = cov / denominator
        info["lambda_unclipped"] = weight
        if clip:
            weight = float(np.clip(weight, 0.0, 1.0))
        info["lambda_rule"] = ("Cov(Y,Ŷ)_cal / (Var(Ŷ_cal) + (m/n) Var(Ŷ_test)), ddof=1"
                               + (", clipped to [0, 1]" if clip else ", unclipped"))
    else:
        weight = float(lam)
        info["lambda_rule"] = "given"
    theta = float(y.mean() + weight * (yt.mean() - yc.mean()))
    var = (_var(y - weight * yc, "the calibration residuals Y - λŶ") / m
           + weight**2 * _var(yt, "the test-set judge labels") / n)
    info["llm_weight"] = weight
    return _result("ppi_plus_plus", lab, theta, var, info)


# ----------------------------------------------------------------------------- MLE
def mle(
    labels: Labels,
    judge: str | None = None,
    *,
    algorithm: Literal["newton", "em"] = "newton",
    information: Literal["observed", "expected"] = "observed",
) -> Estimate:
    r"""Three-parameter misclassification MLE of θ (seed 001 eq. 13, Prop. 4).

    Maximises :math:`\ell = N_{11}\log(\theta q_1) + N_{10}\log(\theta(1-q_1))
    + N_{01}\log((1-\theta)(1-q_0)) + N_{00}\log((1-\theta)q_0) + T_1\log p + T_0\log(1-p)`
    over :math:`(\theta, q_0, q_1)` with :math:`\kappa > 0`, by calling
    :func:`bayescal.frequentist.misclassification.fit` on this judge alone (the one-judge case
    of the multi-judge twin). Only ``prevalence`` is returned; its variance is the
    (θ, θ) entry of the full (θ, q0, q1) covariance, so the uncertainty in q0 and q1 is
    propagated. ``info`` keeps q̂0, q̂1 and the full fit.

    The model is saturated for binary data, so wherever the maximum is interior it equals
    :func:`eif` with ``p_hat="all"`` (and its observed-information variance equals that
    estimator's cell plug-in variance).

    Parameters
    ----------
    labels : Labels
        Binary labels.
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    algorithm : {"newton", "em"}
    information : {"observed", "expected"}
        Observed information (the seed's R package reports this one) or expected information
        :math:`(m I_{cal} + n I_{test})` at the estimate.

    Raises
    ------
    DataError
        Labels that are not 0/1.
    ImportError
        :mod:`bayescal.frequentist.misclassification` is not installed.
    """
    lab = _one_judge(labels, judge)
    lab.require_binary()
    try:
        from bayescal.frequentist import misclassification
    except ImportError as err:  # pragma: no cover - depends on the checkout
        raise ImportError(
            "the misclassification MLE needs bayescal.frequentist.misclassification, which is "
            "not available in this installation"
        ) from err
    fit = misclassification.fit(lab, algorithm=algorithm, information=information)
    k = fit.terms.index("prevalence")
    theta = float(np.asarray(fit.params["prevalence"].values))
    info: dict[str, Any] = {
        "algorithm": algorithm,
        "information": information,
        "specificity": float(np.asarray(fit.params["specificity"].values).ravel()[0]),
        "sensitivity": float(np.asarray(fit.params["sensitivity"].values).ravel()[0]),
        "full_fit": fit,
        **_counts(*_arrays(lab)),
    }
    est = _result("mle", lab, theta, float(fit.cov[k, k]), info)
    return Estimate(method=est.method, params=est.params, cov=est.cov, terms=est.terms,
                    interval=est.interval, loglik=fit.loglik, converged=fit.converged,
                    info=est.info)


# ----------------------------------------------------------------------------- EIF
def natural_spline_basis(x: Array, knots: Array) -> Array:
    r"""Natural cubic spline basis without intercept, truncated-power form (ESL eq. 5.4–5.5).

    For sorted knots :math:`\xi_1 < \dots < \xi_K` the K - 1 columns are :math:`x` and
    :math:`d_k(x) - d_{K-1}(x)`, k = 1..K-2, with
    :math:`d_k(x) = [(x-\xi_k)_+^3 - (x-\xi_K)_+^3]/(\xi_K - \xi_k)`: cubic between the knots,
    linear beyond the boundary knots. Same function space as R's ``splines::ns`` with these
    knots, so the same least-squares fit. x is rescaled to the knot range for conditioning.
    """
    knots = np.asarray(knots, dtype=np.float64)
    lo, hi = knots[0], knots[-1]
    u = (np.asarray(x, dtype=np.float64) - lo) / (hi - lo)
    k = (knots - lo) / (hi - lo)

    def d(j: int) -> Array:
        out: Array = (np.maximum(u - k[j], 0) ** 3 - np.maximum(u - k[-1], 0) ** 3) / (k[-1] - k[j])
        return out

    columns = [u] + [d(j) - d(len(k) - 2) for j in range(len(k) - 2)]
    return np.column_stack(columns)


def _cell_means(
    y: Array, yc: Array, yt: Array, binary_judge: bool
) -> tuple[Callable[[Array], Array], dict[str, Any]]:
    levels, inverse = np.unique(yc, return_inverse=True)
    means = np.bincount(inverse, weights=y) / np.bincount(inverse)
    unseen = np.setdiff1d(np.unique(yt), levels)
    if binary_judge and unseen.size:
        level = unseen[0]
        raise EstimatorUndefined(
            f"no calibration item has judge label Ŷ={level:g} but {int(np.sum(yt == level))} "
            f"test items do: the cell mean μ̂({level:g}) = E[Y | Ŷ={level:g}] has no data "
            "(seed 001 eq. 14). Use regression='linear', ppi or ppi_plus_plus."
        )
    fallback = float(y.mean())

    def mu(x: Array) -> Array:
        pos = np.clip(np.searchsorted(levels, x), 0, len(levels) - 1)
        hit = levels[pos] == x
        return np.where(hit, means[pos], fallback)

    info = {"mu_hat": dict(zip(levels.tolist(), means.tolist(), strict=True)),
            "unseen_levels": unseen.tolist(),
            "n_fallback": int(np.isin(yt, unseen).sum()),
            "fallback": "overall calibration mean for judge levels unseen in calibration"}
    return mu, info


def _least_squares(
    y: Array, design: Callable[[Array], Array], yc: Array
) -> tuple[Callable[[Array], Array], Array]:
    coef = np.linalg.lstsq(design(yc), y, rcond=None)[0]

    def mu(x: Array) -> Array:
        out: Array = design(x) @ coef
        return out

    return mu, coef


def eif(
    labels: Labels,
    judge: str | None = None,
    *,
    regression: Literal["cells", "linear", "spline"] = "cells",
    df: int | None = None,
    p_hat: Literal["all", "test"] = "all",
) -> Estimate:
    r"""Efficient-influence-function estimator (seed 001 eqs. 15, 19; Props. 5–6).

    .. math:: \hat\theta_{EIF} = N^{-1}\sum_{i=1}^N \Bigl[\hat\mu(\hat Y_i)
              + \frac{R_i}{\hat\pi}(Y_i - \hat\mu(\hat Y_i))\Bigr],\quad \hat\pi = m/N,

    i.e. the mean of :math:`\hat\mu(\hat Y)` over all N items plus the mean calibration residual
    (zero for all three regressions below, which are least squares with an intercept).

    ``p_hat`` — where :math:`\hat\mu(\hat Y)` is averaged: ``"all"`` (default) over all N items,
    the paper's eq. 19, efficient; ``"test"`` over the n test items only, the convention of the
    seed's R package (its published numbers use it). For binary data this is the choice of
    :math:`\hat p` in :math:`\hat\theta = (1-\hat p)\hat\mu_0 + \hat p\hat\mu_1`; ``"test"`` has the
    larger asymptotic variance :math:`V_{EIF} + p(1-p)(\mu_1-\mu_0)^2/\gamma_1`
    (:func:`~bayescal.frequentist.judge_mean_theory.v_eif`).

    ``regression`` — the estimate :math:`\hat\mu(\hat y)` of :math:`E[Y\mid\hat Y=\hat y]`, fitted
    on the calibration set:

    * ``"cells"`` — mean of Y within each judge level (eq. 14; binary or discrete Ŷ). A level
      seen in the test set but not in calibration makes the estimator undefined for a binary
      judge; for a discrete judge its items get the overall calibration mean (the seed's code
      does the same; ``info["n_fallback"]`` counts them).
    * ``"linear"`` — OLS :math:`a + b\hat y`. With ``p_hat="test"`` this is exactly PPI++ with
      λ = b (the OLS slope), variance included; with ``p_hat="all"`` the point is PPI++ with
      λ = (n/N) b, the plug-in of λ*.
    * ``"spline"`` — OLS on a natural cubic spline basis (:func:`natural_spline_basis`) with
      ``df`` columns: boundary knots at the calibration range, df - 1 interior knots at the
      calibration quantiles k/df (R's ``ns`` rule). Default ``df = min(#levels - 1, 4)``, #levels
      the distinct calibration judge values (the seed's code; for 3 levels the fit is saturated
      and equals ``"cells"``). Duplicate knots are dropped (``info["df"]`` is the effective df).

    Variance: for binary Y and Ŷ with ``"cells"`` the plug-in of SPEC §2.2,
    :math:`(\hat\mu_1-\hat\mu_0)^2\hat p(1-\hat p)/n_p + (1-\hat p)^2\hat\mu_0(1-\hat\mu_0)/m'_0
    + \hat p^2\hat\mu_1(1-\hat\mu_1)/m'_1` (:math:`m'_b` = calibration items with Ŷ=b; n_p = N for
    ``"all"``, n for ``"test"``); otherwise
    :math:`\mathrm{Var}(\hat\mu(\hat Y))/n_p + \mathrm{Var}(Y - \hat\mu(\hat Y_{cal}))/m`
    (ddof=1, over the items where μ̂ is averaged). The fitted μ̂ is treated as fixed.

    Parameters
    ----------
    labels : Labels
        Binary, discrete or continuous labels.
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    regression : {"cells", "linear", "spline"}
    df : int, optional
        Spline basis dimension (``"spline"`` only).
    p_hat : {"all", "test"}

    Raises
    ------
    EstimatorUndefined
        Binary human labels that are all 0 or all 1 (μ̂ ≡ 0 or 1 with zero variance: no
        interval), an empty judge cell for a binary judge with ``"cells"``, or constant
        calibration judge labels with ``"spline"``.
    """
    if regression not in ("cells", "linear", "spline"):
        raise ValueError(f"regression must be 'cells', 'linear' or 'spline', got {regression!r}")
    if p_hat not in ("all", "test"):
        raise ValueError(f"p_hat must be 'all' or 'test', got {p_hat!r}")
    lab = _one_judge(labels, judge)
    y, yc, yt = _arrays(lab)
    m, n = lab.m, lab.n
    big_n = m + n
    binary_y, binary_judge = _is_binary(y), _is_binary(yc, yt)
    if binary_y:
        _require_both_classes(y, "the EIF regression μ̂(Ŷ) is identically {value} and its "
                                 "plug-in variance is 0, so there is no interval")
    info: dict[str, Any] = {"regression": regression, "p_hat": p_hat, "pi_hat": m / big_n}
    if regression == "cells":
        mu, extra = _cell_means(y, yc, yt, binary_judge)
        info.update(extra)
    elif regression == "linear":
        mu, coef = _least_squares(y, lambda x: np.column_stack([np.ones_like(x), x]), yc)
        info["coef"] = coef.tolist()
    else:
        n_levels = len(np.unique(yc))
        if n_levels < 2:
            raise EstimatorUndefined(
                f"every calibration judge label equals {yc[0]:g}: a spline in Ŷ cannot be "
                "fitted. Use regression='cells' or 'linear'."
            )
        want = min(n_levels - 1, 4) if df is None else int(df)
        if want < 1:
            raise ValueError(f"df must be at least 1, got {want}")
        lo, hi = float(yc.min()), float(yc.max())
        interior = np.quantile(yc, np.arange(1, want) / want) if want > 1 else np.empty(0)
        interior = np.unique(interior[(interior > lo) & (interior < hi)])
        knots = np.concatenate([[lo], interior, [hi]])

        def design(x: Array) -> Array:
            return np.column_stack([np.ones_like(x), natural_spline_basis(x, knots)])

        mu, coef = _least_squares(y, design, yc)
        info.update(df=len(knots) - 1, df_requested=want, knots=knots.tolist(), coef=coef.tolist())
    mu_cal, mu_test = mu(yc), mu(yt)
    pooled = np.concatenate([mu_test, mu_cal]) if p_hat == "all" else mu_test
    n_p = big_n if p_hat == "all" else n
    residual = y - mu_cal
    theta = float(pooled.mean() + residual.mean())
    if binary_y and binary_judge and regression == "cells":
        judged = np.concatenate([yt, yc]) if p_hat == "all" else yt
        p = float(judged.mean())
        mu1 = info["mu_hat"].get(1.0, 0.0)
        mu0 = info["mu_hat"].get(0.0, 0.0)
        m1, m0 = int(np.sum(yc == 1)), int(np.sum(yc == 0))
        var = (mu1 - mu0) ** 2 * p * (1 - p) / n_p
        if m0:
            var += (1 - p) ** 2 * mu0 * (1 - mu0) / m0
        if m1:
            var += p**2 * mu1 * (1 - mu1) / m1
        info.update(p_hat_value=p, variance="binary cell plug-in (SPEC §2.2)")
    else:
        var = (_var(pooled, "the fitted values μ̂(Ŷ)") / n_p
               + _var(residual, "the calibration residuals Y - μ̂(Ŷ)") / m)
        info["variance"] = "Var(μ̂(Ŷ))/n_p + Var(Y - μ̂(Ŷ_cal))/m, ddof=1"
    return _result("eif", lab, theta, var, info)


# ----------------------------------------------------------------------------- all at once
_BINARY_ONLY = ("rogan_gladen", "mle")


def _zero_se_note(est: Estimate) -> str:
    if est.cov[0, 0] == 0:
        return ("standard error is 0 (the labels it uses are constant), so the interval is a "
                "point; do not read it as certainty")
    return ""


def estimate(
    labels: Labels,
    prob: float = 0.9,
    judge: str | None = None,
    *,
    methods: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every seed-001 estimator of the human-label mean in one table.

    Runs :func:`naive`, :func:`rogan_gladen` (raw), :func:`ppi`, :func:`ppi_plus_plus`
    (unclipped λ̂), :func:`mle` (Newton, observed information) and :func:`eif` (cell means,
    ``p_hat="all"``) with their defaults. A method that is undefined on these data still gets its
    row, with NaN numbers, interval ``none`` and the reason in ``note``; the other methods run.
    Rogan–Gladen and the MLE are defined for binary labels only.

    Parameters
    ----------
    labels : Labels
    prob : float
        Interval probability (the seed uses 0.90).
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    methods : iterable of str, optional
        Subset of :data:`METHODS` (default all, in that order).

    Returns
    -------
    DataFrame
        Indexed by method name; the shared summary columns ``parameter, method, estimate, se,
        lower, upper, prob, interval`` plus ``note`` (empty when the method ran normally).
    """
    if not 0 < prob < 1:
        raise ValueError(f"prob must lie strictly between 0 and 1, got {prob!r}")
    chosen = METHODS if methods is None else tuple(methods)
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    lab = _one_judge(labels, judge)
    name, _ = target(lab)
    funcs: dict[str, Callable[[Labels], Estimate]] = {
        "naive": naive, "rogan_gladen": rogan_gladen, "ppi": ppi,
        "ppi_plus_plus": ppi_plus_plus, "mle": mle, "eif": eif,
    }
    rows = []
    for method in chosen:
        try:
            if method in _BINARY_ONLY:
                try:
                    lab.require_binary()
                except DataError as err:
                    raise EstimatorUndefined(f"defined for binary labels only: {err}") from err
            est = funcs[method](lab)
        except EstimatorUndefined as err:
            rows.append(_undefined_row(name, method, str(err)))
            continue
        except (ValueError, ImportError) as err:
            rows.append(_undefined_row(name, method, f"{type(err).__name__}: {err}"))
            continue
        row = est.summary(prob).iloc[0].to_dict()
        notes = [_zero_se_note(est)]
        if not est.converged:
            notes.append("the optimizer did not report convergence")
        row["note"] = "; ".join(n for n in notes if n)
        rows.append(row)
    table = pd.DataFrame(rows, index=list(chosen))
    return table[[*COLUMNS, "note"]]


def _undefined_row(parameter: str, method: str, note: str) -> dict[str, Any]:
    return {"parameter": parameter, "method": method, "estimate": np.nan, "se": np.nan,
            "lower": np.nan, "upper": np.nan, "prob": np.nan, "interval": "none", "note": note}
