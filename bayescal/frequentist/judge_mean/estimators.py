r"""The user-facing judge-mean estimators (Chen et al. 2026, arXiv:2601.05420) on Labels.

Each function takes :class:`~bayescal.data.Labels`, builds the per-level statistics of one
judge (:class:`~bayescal.frequentist.judge_mean.cores.LevelStats`), runs the vectorised core of
:mod:`~bayescal.frequentist.judge_mean.cores` and turns a reason code into
:class:`EstimatorUndefined` with a message that says what is missing and what to do. The one
exception is :func:`mle`, which fits the misclassification twin numerically.

Nothing here imports PyMC.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike
from scipy.special import chdtrc  # chi2.sf, without importing scipy.stats

from bayescal.data import DataError, Labels
from bayescal.frequentist import covariance, misclassification
from bayescal.frequentist._core import Estimate
from bayescal.frequentist.judge_mean.cores import (
    Array,
    LevelStats,
    Reason,
    _cell_fit,
    _chosen,
    _class_rules,
    _eif_core,
    _interval_kind,
    _is_01,
    _moments,
    _naive_core,
    _ppi_core,
    _ppi_lambda,
    _reason,
    _rogan_gladen_core,
    _sparse_cells,
    rare_outcome_rule,
)
from bayescal.schema import (
    COLUMNS,
    check_prob,
    resolve_prob,
    wald_interval,
    z_value,
)

__all__ = [
    "METHODS",
    "EstimatorUndefined",
    "eif",
    "estimate",
    "mle",
    "naive",
    "natural_spline_basis",
    "posterior",
    "ppi",
    "ppi_plus_plus",
    "rare_outcome",
    "rogan_gladen",
    "target",
]

#: Row order of :func:`estimate`.
METHODS = ("naive", "rogan_gladen", "ppi", "ppi_plus_plus", "mle", "eif", "bayes")


class EstimatorUndefined(ValueError):
    """The estimator is not defined on these data; the message says why."""


# ============================================================================= Labels helpers
def _is_binary(*arrays: Array) -> bool:
    return all(_is_01(a) for a in arrays)


def target(data: Labels) -> tuple[str, str]:
    """Parameter name and interval kind for the mean of the human label.

    Returns ``("prevalence", "wald-logit")`` when every calibration human label is 0 or 1
    (θ is a probability; logit-scale Wald interval, the paper's Sec. 5.2) and ``("mean", "wald")``
    otherwise (plain Wald, as the authors' code does for non-binary outcomes). This is the one
    place where that rule lives. (:func:`_interval_kind` falls back to plain Wald for a
    prevalence estimate outside [0, 1], whose logit interval would exclude it.)

    Raises
    ------
    DataError
        Human labels with exactly two distinct values other than 0 and 1 (1/2, ±1, ...): a
        binary label coded otherwise, whose mean is not the prevalence. Map it with
        ``Labels.from_arrays(..., positive=...)`` / ``from_frame(..., positive=...)``.
    """
    values = np.unique(data.y_cal)
    if _is_binary(values):
        return "prevalence", "wald-logit"
    if len(values) == 2:
        lo, hi = (float(v) for v in values)
        raise DataError(
            f"the human labels take two values [{lo:g}, {hi:g}], not 0 and 1: a binary label "
            f"coded this way would make the target the mean of the codes, not a prevalence. "
            f"Say which value is the positive class, e.g. Labels.from_frame(..., "
            f"positive={hi:g}) or Labels.from_arrays(..., positive={hi:g}) (CLI: --positive "
            f"{hi:g}). If they are two points of a numeric scale, the mean is {lo:g} + "
            f"{hi - lo:g} x the prevalence of {hi:g}."
        )
    return "mean", "wald"


_PLAIN_WALD_NOTE = ("estimate outside [0, 1]: plain Wald interval (the logit interval would "
                    "exclude the estimate)")


def _one_judge(data: Labels, judge: str | None) -> Labels:
    """The labels of one judge as a single-judge :class:`Labels` (row labels kept)."""
    yc, yt = data.judge(judge)
    name = judge if judge is not None else data.judges[0]
    lab = Labels(data.y_cal, yc[:, None], yt[:, None], (name,), data.cal_index,
                 data.test_index)
    target(lab)  # refuses a two-valued human label not coded 0/1, before any computation
    return lab


def _arrays(lab: Labels) -> tuple[Array, Array, Array]:
    return lab.y_cal, lab.yhat_cal[:, 0], lab.yhat_test[:, 0]


def _stats(lab: Labels) -> LevelStats:
    return LevelStats.from_arrays(*_arrays(lab))


def _few(what: str, ddof: int, got: int) -> str:
    return f"the sample variance of {what} needs more than {ddof} value(s), got {got}"


def _class_message(code: int, m: int, consequence: str) -> str:
    value, word = (1, "positive") if code == Reason.NO_POSITIVE else (0, "negative")
    return (f"no {word} human label (Y={value}) in the calibration set (all {m} are "
            f"Y={1 - value}): {consequence.format(value=value)}. Label more items, or use "
            "ppi / ppi_plus_plus / naive.")


def _raise_if(reason: ArrayLike, messages: Mapping[int, str | Callable[[], str]]) -> None:
    """Raise :class:`EstimatorUndefined` with the message of a non-zero reason code."""
    code = int(np.asarray(reason))
    if code == Reason.DEFINED:
        return
    msg = messages.get(code, Reason(code).text)
    raise EstimatorUndefined(msg() if callable(msg) else msg)


def _result(method: str, lab: Labels, value: float, var: float, info: dict[str, Any]) -> Estimate:
    name, kind = target(lab)
    info = {"judge": lab.judges[0], "m": lab.m, "n": lab.n, **info}
    if kind == "wald-logit" and not _interval_kind(name, value):
        kind = "wald"
        info["interval_note"] = "; ".join(n for n in (info.get("interval_note"), _PLAIN_WALD_NOTE)
                                          if n)
    return Estimate(
        method=method,
        params=xr.Dataset({name: ((), float(value))}),
        cov=np.array([[float(var)]]),
        terms=(name,),
        interval={name: kind},
        info=info,
    )


def _counts(stats: LevelStats) -> dict[str, int]:
    """The six binary counts N_ab = #{Y=a, Ŷ=b} (calibration), T_b = #{Ŷ=b} (test)."""
    return {name: int(value) for name, value in stats.binary_counts().items()}


# ----------------------------------------------------------------------------- naive
def naive(data: Labels, judge: str | None = None) -> Estimate:
    r"""Naive estimator: the mean judge label on the test set (Chen et al. 2026, eq. 3).

    :math:`\hat\theta_{naive} = n^{-1}\sum_{test}\hat Y_i`. It estimates :math:`p = E[\hat Y]`, not
    θ: its bias is :math:`p - \theta = (1-q_0) + \theta(q_0+q_1-2)` for a binary judge
    (:func:`~bayescal.frequentist.judge_mean.theory.naive_bias`), so its interval covers θ only
    by accident. Shown as the baseline every correction is measured against.

    It estimates a quantity on the human scale only when the judge reports on that scale: a
    binary human label needs a 0/1 judge (the mean of a 1–5 rating is not a prevalence), and a
    0/1 judge's mean is a proportion, not the mean of a non-binary human label. Otherwise
    :class:`EstimatorUndefined`. (For two non-binary scales the match cannot be checked; the
    judge is taken to report on the human scale.)

    Parameters
    ----------
    data : Labels
    judge : str, optional
        Judge name; required when ``data`` holds several judges.

    Returns
    -------
    Estimate
        Variance :math:`\hat p(1-\hat p)/n` for binary judge labels, else the sample variance
        (ddof=1) over n. The calibration set is not used.
    """
    lab = _one_judge(data, judge)
    human_binary = target(lab)[0] == "prevalence"
    stats = _stats(lab)
    judge_values = stats.levels  # the distinct judge values, sorted
    binary = _is_binary(judge_values)
    if human_binary != binary:
        shown = ", ".join(f"{v:g}" for v in judge_values[:8]) + (
            ", ..." if len(judge_values) > 8 else "")
        raise EstimatorUndefined(
            f"the judge labels take the values [{shown}] and the human labels are "
            + ("0/1: the judge's mean estimates E[Ŷ] on the judge's own scale, not a prevalence"
               if human_binary else
               "not 0/1: the judge's mean is a proportion, not a mean on the human scale")
            + ". The naive estimate is defined only when the judge reports on the human scale; "
            "use ppi, ppi_plus_plus or eif, which are valid for any judge scale."
        )
    core = _naive_core(stats, binary)
    _raise_if(core.reason, {Reason.FEW_TEST: _few("the test-set judge labels", 1, lab.n)})
    rule = "p̂(1-p̂)/n" if binary else "Var(Ŷ_test, ddof=1)/n"
    return _result("naive", lab, float(core.estimate), float(core.variance), {"variance": rule})


# ----------------------------------------------------------------------------- Rogan–Gladen
def rogan_gladen(
    data: Labels, judge: str | None = None, *, smoothed: bool = False,
    prob: float | None = None, ci_prob: float | None = None
) -> Estimate:
    r"""Rogan–Gladen misclassification correction (Chen et al. 2026, eq. 6, Prop. 1).

    :math:`\hat\theta_{RG} = (\hat p + \hat q_0 - 1)/(\hat q_0 + \hat q_1 - 1)`, with
    :math:`\hat q_0, \hat q_1` from the calibration set and :math:`\hat p` the **test-set** judge
    mean (the calibration items' judge labels enter only through :math:`\hat q`), clipped to
    [0, 1] (as the authors' code does). Delta-method variance

    .. math:: \hat V = [\hat p(1-\hat p)/n + (1-\hat\theta)^2\hat q_0(1-\hat q_0)/m_0
              + \hat\theta^2\hat q_1(1-\hat q_1)/m_1] / \hat\kappa^2

    evaluated at the clipped :math:`\hat\theta`.

    ``smoothed=True`` is the Lang–Reiczigel (2014) / Agresti–Coull-type variant of the authors' R
    package, whose *point estimate is the smoothed* :math:`\tilde\theta`: with z the
    ``prob``-level normal quantile, :math:`\tilde p = (n\hat p + z^2/2)/(n + z^2)`,
    :math:`\tilde n = n + z^2`, :math:`\tilde q_c = (m_c\hat q_c + 1)/(m_c + 2)`,
    :math:`\tilde m_c = m_c + 2`, :math:`\tilde\theta = \mathrm{clip}((\tilde p + \tilde q_0 - 1)
    / (\tilde q_0 + \tilde q_1 - 1))` and the same variance with tildes. Because z enters the
    point estimate, summarise a smoothed fit at the same ``prob``.

    Parameters
    ----------
    data : Labels
        Binary human and judge labels.
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
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
        no data), or :math:`\hat\kappa = 0` (the judge's labels carry no information: the
        correction divides by :math:`\hat\kappa`). For ``smoothed=True`` the test is on
        :math:`\tilde\kappa`. An inverted judge (:math:`\hat\kappa < 0`) is corrected, with a
        note; so is a :math:`\hat\kappa` within noise of 0 (|κ̂|/se < 1.96), whose note says
        the delta-method interval is not reliable there.
    """
    lab = _one_judge(data, judge)
    lab.require_binary()
    z = float("nan")
    if smoothed:
        prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
        z = z_value(prob)
    stats = _stats(lab)
    core = _rogan_gladen_core(stats, smoothed, z)
    x = {k: float(v) for k, v in core.extra.items()}
    sym = "q̃0 + q̃1" if smoothed else "q̂0 + q̂1"
    consequence = ("Rogan–Gladen cannot estimate the judge's error rate on Y={value} items "
                   "(q̂0 or q̂1 is 0/0)")
    _raise_if(core.reason, {
        Reason.NO_POSITIVE: _class_message(Reason.NO_POSITIVE, lab.m, consequence),
        Reason.NO_NEGATIVE: _class_message(Reason.NO_NEGATIVE, lab.m, consequence),
        Reason.UNINFORMATIVE_JUDGE: lambda: (
            f"the judge's labels carry no information about Y on the calibration set: {sym} = "
            f"{x['q0'] + x['q1']:.4f} = 1 (specificity {x['q0']:.4f}, sensitivity "
            f"{x['q1']:.4f}), so the Rogan–Gladen correction divides by q0 + q1 - 1 = 0. Use "
            "ppi / ppi_plus_plus / eif, which do not."),
    })
    theta, raw = float(core.estimate), x["theta_unclipped"]
    info: dict[str, Any] = {**_counts(stats), "m0": int(x["m0"]), "m1": int(x["m1"]),
                            "q0_hat": x["q0_hat"], "q1_hat": x["q1_hat"], "p_hat": x["p_hat"],
                            "kappa_hat": x["kappa_hat"], "smoothed": smoothed,
                            "p_hat_source": "test set"}
    if smoothed:
        info.update(z=z, prob=prob, p_tilde=x["p_tilde"], q0_tilde=x["q0_tilde"],
                    q1_tilde=x["q1_tilde"])
    info.update(theta_unclipped=raw, clipped=bool(raw != theta),
                variance="delta method at the clipped estimate")
    kappa, se_kappa = x["kappa"], _kappa_se(x, smoothed)
    info.update(kappa_se=se_kappa)
    if abs(kappa) < _KAPPA_Z * se_kappa:
        info["interval_note"] = (
            f"κ̂ = {kappa:.3f} is within noise of 0 (|κ̂|/se = {abs(kappa) / se_kappa:.2f} < "
            f"{_KAPPA_Z:.2f}): the correction divides by a quantity that may be 0, so its "
            "delta-method interval is not reliable; use ppi_plus_plus or eif")
    elif kappa < 0:
        info["interval_note"] = (
            f"κ̂ = {kappa:.3f} < 0: the judge's labels are inverted relative to Y on the "
            "calibration set; Rogan–Gladen corrects for it (it needs κ ≠ 0 only), but check "
            "the label coding")
    name = "rogan_gladen_smoothed" if smoothed else "rogan_gladen"
    return _result(name, lab, theta, float(core.variance), info)


#: z of the check that κ̂ is distinguishable from 0 (two-sided 95 %, whatever ``prob``: it is a
#: check of the method's assumption, not the interval the user asked for).
_KAPPA_Z = 1.959963984540054


def _kappa_se(x: dict[str, float], smoothed: bool) -> float:
    """Binomial standard error of κ̂ = q̂0 + q̂1 − 1 (q̂0 on the m0 Y=0 items, q̂1 on the m1
    Y=1 items, independent given the calibration classes)."""
    m0, m1 = (x["m0"] + 2.0, x["m1"] + 2.0) if smoothed else (x["m0"], x["m1"])
    q0, q1 = x["q0"], x["q1"]
    return float(np.sqrt(q0 * (1 - q0) / m0 + q1 * (1 - q1) / m1))


# ----------------------------------------------------------------------------- PPI
def ppi(data: Labels, judge: str | None = None, *, ddof: int = 1) -> Estimate:
    r"""Prediction-powered inference (Chen et al. 2026, eq. 8, Prop. 2).

    :math:`\hat\theta_{PPI} = \bar{\hat Y}_{test} - m^{-1}\sum_{cal}(\hat Y_j - Y_j)`, unbiased;
    :math:`\hat V = \mathrm{Var}(Y - \hat Y)_{cal}/m + \mathrm{Var}(\hat Y_{test})/n` with sample
    variances. Equals :func:`ppi_plus_plus` with ``lam=1``.

    Parameters
    ----------
    data : Labels
        Binary or continuous labels.
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
    ddof : int
        Delta degrees of freedom of both sample variances: 1 (default) as the authors' R package;
        0 reproduces ``ppi_py.ppi_mean_ci(..., lam=1)`` exactly (with a plain Wald interval).

    Returns
    -------
    Estimate
        Logit-scale interval for binary human labels, plain Wald otherwise. The point estimate
        is not clamped to [0, 1].
    """
    lab = _one_judge(data, judge)
    core = _ppi_core(_moments(_stats(lab)), 1.0, ddof)
    _raise_if(core.reason, {
        Reason.FEW_CALIBRATION: _few("the calibration residuals Y - Ŷ", ddof, lab.m),
        Reason.FEW_TEST: _few("the test-set judge labels", ddof, lab.n),
    })
    return _result("ppi", lab, float(core.estimate), float(core.variance),
                   {"ddof": ddof, "variance": "Var(Y-Ŷ)_cal/m + Var(Ŷ_test)/n"})


# ----------------------------------------------------------------------------- PPI++
def ppi_plus_plus(
    data: Labels, judge: str | None = None, *, lam: float | None = None, clip: bool = False
) -> Estimate:
    r"""Power-tuned PPI (Chen et al. 2026, eq. 10, Prop. 3).

    :math:`\hat\theta(\lambda) = \bar Y_{cal} + \lambda(\bar{\hat Y}_{test} - \bar{\hat Y}_{cal})`,
    unbiased for every fixed λ, with

    .. math:: \hat V = \mathrm{Var}(Y - \lambda\hat Y)_{cal}/m
              + \lambda^2\mathrm{Var}(\hat Y_{test})/n

    (sample variances, ddof=1). The weight (``info["llm_weight"]``):

    * default — the closed form of the authors' R package,
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
    data : Labels
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
    lam : float, optional
        Fixed weight λ.
    clip : bool
        Clip the estimated λ̂ to [0, 1].

    Returns
    -------
    Estimate
        The point estimate is not clamped to [0, 1].
    """
    lab = _one_judge(data, judge)
    mo = _moments(_stats(lab))
    info: dict[str, Any] = {"lambda_fallback": False, "clip": clip}
    if lam is None:
        tuned = _ppi_lambda(mo, clip)
        _raise_if(tuned.reason, {
            Reason.FEW_CALIBRATION: _few("the calibration judge labels", 1, lab.m),
            Reason.FEW_TEST: _few("the test-set judge labels", 1, lab.n),
        })
        weight = float(tuned.estimate)
        info["lambda_fallback"] = bool(tuned.extra["fallback"])
        info["lambda_unclipped"] = float(tuned.extra["unclipped"])
        info["lambda_rule"] = ("Cov(Y,Ŷ)_cal / (Var(Ŷ_cal) + (m/n) Var(Ŷ_test)), ddof=1"
                               + (", clipped to [0, 1]" if clip else ", unclipped"))
    else:
        weight = float(lam)
        info["lambda_rule"] = "given"
    core = _ppi_core(mo, weight, 1)
    _raise_if(core.reason, {
        Reason.FEW_CALIBRATION: _few("the calibration residuals Y - λŶ", 1, lab.m),
        Reason.FEW_TEST: _few("the test-set judge labels", 1, lab.n),
    })
    info["llm_weight"] = weight
    # variants get their own method name so that tables and compare() can tell them apart
    name = "ppi_plus_plus" if lam is not None or not clip else "ppi_plus_plus_clipped"
    return _result(name, lab, float(core.estimate), float(core.variance), info)


# ----------------------------------------------------------------------------- MLE
def mle(
    data: Labels,
    judge: str | None = None,
    *,
    algorithm: Literal["newton", "em"] = "newton",
    information: covariance.Information = "observed",
    kappa: Literal["nonzero", "positive"] = "nonzero",
) -> Estimate:
    r"""Three-parameter misclassification MLE of θ (Chen et al. 2026, eq. 13, Prop. 4).

    Maximises :math:`\ell = N_{11}\log(\theta q_1) + N_{10}\log(\theta(1-q_1))
    + N_{01}\log((1-\theta)(1-q_0)) + N_{00}\log((1-\theta)q_0) + T_1\log p + T_0\log(1-p)`
    over :math:`(\theta, q_0, q_1)` with :math:`\kappa \ne 0` (the calibration labels fix its
    sign; ``kappa="positive"`` restricts to κ > 0), by calling
    :func:`bayescal.frequentist.misclassification.fit` on this judge alone (the one-judge case
    of the multi-judge twin). Only ``prevalence`` is returned; its variance is the
    (θ, θ) entry of the full (θ, q0, q1) covariance, so the uncertainty in q0 and q1 is
    propagated. ``info`` keeps q̂0, q̂1 and the full fit.

    The model is saturated for binary data, so wherever the maximum is interior it equals
    :func:`eif` with ``p_hat="all"`` (and its observed-information variance equals that
    estimator's cell plug-in variance).

    Parameters
    ----------
    data : Labels
        Binary labels.
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
    algorithm : {"newton", "em"}
    information : {"observed", "expected", "sandwich", "auto"}
        Passed to :func:`bayescal.frequentist.misclassification.fit`. Default ``"observed"``,
        the authors' R package's choice (the twin's own default, ``"auto"``, is the expected
        information). Method names ``mle``, ``mle_expected``, ``mle_sandwich``.
    kappa : {"nonzero", "positive"}
        See :func:`bayescal.frequentist.misclassification.fit`. The authors' R package enforces
        κ > 0 (``"positive"``), which refuses a flipped judge.

    Raises
    ------
    DataError
        Labels that are not 0/1.
    """
    lab = _one_judge(data, judge)
    fit = misclassification.fit(lab, algorithm=algorithm, information=information,
                                kappa=kappa)
    k = fit.terms.index("prevalence")
    theta = float(np.asarray(fit.params["prevalence"].values))
    kind = str(fit.info["information"])
    info: dict[str, Any] = {
        "algorithm": algorithm,
        "information": kind,
        "kappa_constraint": kappa,
        "specificity": float(np.asarray(fit.params["specificity"].values).ravel()[0]),
        "sensitivity": float(np.asarray(fit.params["sensitivity"].values).ravel()[0]),
        "full_fit": fit,
        **_counts(_stats(lab)),
    }
    name = "mle" if kind == "observed" else f"mle_{kind}"
    est = _result(name, lab, theta, float(fit.cov[k, k]), info)
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


def _least_squares(y: Array, design: Callable[[Array], Array], yc: Array) -> Array:
    coef: Array = np.linalg.lstsq(design(yc), y, rcond=None)[0]
    return coef


def eif(
    data: Labels,
    judge: str | None = None,
    *,
    regression: Literal["cells", "linear", "spline"] = "cells",
    df: int | None = None,
    p_hat: Literal["all", "test"] = "all",
) -> Estimate:
    r"""Efficient-influence-function estimator (Chen et al. 2026, eqs. 15, 19; Props. 5–6).

    .. math:: \hat\theta_{EIF} = N^{-1}\sum_{i=1}^N \Bigl[\hat\mu(\hat Y_i)
              + \frac{R_i}{\hat\pi}(Y_i - \hat\mu(\hat Y_i))\Bigr],\quad \hat\pi = m/N,

    i.e. the mean of :math:`\hat\mu(\hat Y)` over all N items plus the mean calibration residual
    (zero for all three regressions below, which are least squares with an intercept).

    ``p_hat`` — where :math:`\hat\mu(\hat Y)` is averaged: ``"all"`` (default) over all N items,
    the paper's eq. 19, efficient; ``"test"`` over the n test items only, the convention of the
    authors' R package (its published numbers use it). For binary data this is the choice of
    :math:`\hat p` in :math:`\hat\theta = (1-\hat p)\hat\mu_0 + \hat p\hat\mu_1`; ``"test"`` has the
    larger asymptotic variance :math:`V_{EIF} + p(1-p)(\mu_1-\mu_0)^2/\gamma_1`
    (:func:`~bayescal.frequentist.judge_mean.theory.v_eif`).

    ``regression`` — the estimate :math:`\hat\mu(\hat y)` of :math:`E[Y\mid\hat Y=\hat y]`, fitted
    on the calibration set:

    * ``"cells"`` — mean of Y within each judge level (eq. 14; binary or discrete Ŷ). Defined
      only where every judge value at which μ̂ is averaged (test values; with ``p_hat="all"``
      calibration values too) has at least two calibration items. A value with none has no
      cell mean (the authors' code substitutes the calibration mean and treats it as known); a
      value with one is fitted exactly, its residual is 0 and the variance misses that cell
      mean's noise. Both made intervals overconfident for scores and ratings (90% intervals
      covering 0.11 for a continuous score). Use ``"spline"`` or ``"linear"`` there.
    * ``"linear"`` — OLS :math:`a + b\hat y`. With ``p_hat="test"`` this is exactly PPI++ with
      λ = b (the OLS slope), variance included; with ``p_hat="all"`` the point is PPI++ with
      λ = (n/N) b, the plug-in of λ*.
    * ``"spline"`` — OLS on a natural cubic spline basis (:func:`natural_spline_basis`) with
      ``df`` columns: boundary knots at the calibration range, df - 1 interior knots at the
      calibration quantiles k/df (R's ``ns`` rule). Default ``df = min(#levels - 1, 4)``, #levels
      the distinct calibration judge values (the authors' code; for 3 levels the fit is saturated
      and equals ``"cells"``). Duplicate knots are dropped (``info["df"]`` is the effective df).
    * ``"linear"`` and ``"spline"`` are never extrapolated: μ̂ is held at its boundary values for
      judge scores outside the calibration range (``info["test_outside_range"]``, a note), which
      keeps the estimator valid for any distribution of the judge's scores.

    A ``"linear"`` or ``"spline"`` fit with as many coefficients as distinct calibration judge
    values is saturated — it *is* the cell-mean fit — and gets the ``"cells"`` rule above.

    Variance: for binary Y and Ŷ with ``"cells"`` the delta-method plug-in
    :math:`(\hat\mu_1-\hat\mu_0)^2\hat p(1-\hat p)/n_p + (1-\hat p)^2\hat\mu_0(1-\hat\mu_0)/m'_0
    + \hat p^2\hat\mu_1(1-\hat\mu_1)/m'_1` (:math:`m'_b` = calibration items with Ŷ=b; n_p = N for
    ``"all"``, n for ``"test"``); otherwise
    :math:`\mathrm{Var}(\hat\mu(\hat Y))/n_p + \mathrm{Var}(Y - \hat\mu(\hat Y_{cal}))/m`
    (ddof=1, over the items where μ̂ is averaged). The fitted μ̂ is treated as fixed.

    Parameters
    ----------
    data : Labels
        Binary, discrete or continuous labels.
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
    regression : {"cells", "linear", "spline"}
    df : int, optional
        Spline basis dimension (``"spline"`` only).
    p_hat : {"all", "test"}

    Raises
    ------
    EstimatorUndefined
        Binary human labels that are all 0 or all 1 (μ̂ ≡ 0 or 1 with zero variance: no
        interval), a judge value with fewer than two calibration items for the cell means (or
        a saturated fit), or constant calibration judge labels with ``"spline"``.
    """
    if regression not in ("cells", "linear", "spline"):
        raise ValueError(f"regression must be 'cells', 'linear' or 'spline', got {regression!r}")
    if p_hat not in ("all", "test"):
        raise ValueError(f"p_hat must be 'all' or 'test', got {p_hat!r}")
    lab = _one_judge(data, judge)
    y, yc, yt = _arrays(lab)
    m, n = lab.m, lab.n
    stats = LevelStats.from_arrays(y, yc, yt)
    binary_y, binary_judge = _is_binary(y), _is_binary(yc, yt)
    if binary_y:
        consequence = ("the EIF regression μ̂(Ŷ) is identically {value} and its plug-in "
                       "variance is 0, so there is no interval")
        _raise_if(_reason(*_class_rules(stats)),
                  {code: _class_message(code, m, consequence)
                   for code in (Reason.NO_POSITIVE, Reason.NO_NEGATIVE)})
    info: dict[str, Any] = {"regression": regression, "p_hat": p_hat, "pi_hat": m / (m + n)}
    levels = stats.levels
    if regression == "cells":
        _raise_if_sparse(stats, p_hat, "the cell-mean EIF")
        fit = _cell_fit(stats)
        info["mu_hat"] = dict(zip(levels.tolist(), fit.tolist(), strict=True))
    elif regression == "linear":
        def line(x: Array) -> Array:
            return np.column_stack([np.ones_like(x), x])

        coef = _least_squares(y, line, yc)
        fit = line(_held(levels, yc, yt, info)) @ coef
        info["coef"] = coef.tolist()
        _raise_if_saturated(stats, p_hat, "linear", len(coef))
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
        # a knot within rounding of an end knot divides the basis by ~0 (0/0 for labels like
        # 0 and 1e-300 next to -1e9): keep interior knots a relative 1e-8 of the range inside
        gap = 1e-8 * (hi - lo)
        interior = np.unique(interior[(interior > lo + gap) & (interior < hi - gap)])
        knots = np.concatenate([[lo], interior, [hi]])

        def design(x: Array) -> Array:
            return np.column_stack([np.ones_like(x), natural_spline_basis(x, knots)])

        coef = _least_squares(y, design, yc)
        fit = design(_held(levels, yc, yt, info)) @ coef
        info.update(df=len(knots) - 1, df_requested=want, knots=knots.tolist(), coef=coef.tolist())
        _raise_if_saturated(stats, p_hat, "spline", len(coef))
        if len(knots) - 1 < want:
            warnings.warn(
                f"spline EIF fitted with df={len(knots) - 1} instead of {want}: quantile knots "
                f"coincide with the calibration range [{lo:g}, {hi:g}] because most calibration "
                "judge labels sit at one end",
                UserWarning,
                stacklevel=2,
            )
    binary_variance = binary_y and binary_judge and regression == "cells"
    core = _eif_core(stats, fit, p_hat=p_hat, binary_y=binary_y, binary_variance=binary_variance,
                     sparse_cells_undefined=False)
    _raise_if(core.reason, {
        Reason.FEW_TEST: _few("the fitted values μ̂(Ŷ)", 1, int(m + n if p_hat == "all" else n)),
        Reason.FEW_CALIBRATION: _few("the calibration residuals Y - μ̂(Ŷ)", 1, m),
    })
    if binary_variance:
        info.update(p_hat_value=float(core.extra["p"]), variance="binary cell plug-in")
    else:
        info["variance"] = "Var(μ̂(Ŷ))/n_p + Var(Y - μ̂(Ŷ_cal))/m, ddof=1"
    name = "eif" + ("" if regression == "cells" else f"_{regression}") + (
        "_test" if p_hat == "test" else "")
    return _result(name, lab, float(core.estimate), float(core.variance), info)


def _held(levels: Array, yc: Array, yt: Array, info: dict[str, Any]) -> Array:
    """The judge values at which the regression μ̂ is evaluated: held inside the calibration
    range [min Ŷ_cal, max Ŷ_cal], where it was fitted.

    A linear or spline fit extrapolated to test scores beyond that range is unbounded (one
    heavy-tailed score moved the spline EIF to −8.5; its interval covered 0.79). Held at the
    boundary values μ̂ stays a fixed bounded function of Ŷ, and the estimator stays unbiased
    whatever μ̂ is (the calibration residuals correct it), so nothing is assumed about the
    tails of the judge's scores. How many test scores were held is in ``info`` and the note.
    """
    lo, hi = float(yc.min()), float(yc.max())
    outside = int(np.sum((yt < lo) | (yt > hi)))
    info.update(calibration_range=[lo, hi], test_outside_range=outside)
    if outside:
        info["interval_note"] = (
            f"{outside} of {yt.size} test judge scores lie outside the calibration range "
            f"[{lo:.4g}, {hi:.4g}]; μ̂ is held at its boundary values there (no extrapolation)")
    return np.clip(levels, lo, hi)


def _raise_if_sparse(stats: LevelStats, p_hat: Literal["all", "test"], what: str) -> None:
    """EstimatorUndefined naming the first judge value with fewer than two calibration items."""
    sparse = _sparse_cells(stats, p_hat)
    if not sparse.any():
        return
    j = int(np.flatnonzero(sparse)[0])
    level, n_cal, n_test = stats.levels[j], int(stats.cal_n[j]), int(stats.test_n[j])
    where = "test" if p_hat == "test" else "all"
    raise EstimatorUndefined(
        f"{what} needs at least 2 calibration items at every judge value it averages over "
        f"({where} items); Ŷ={level:g} has {n_cal} calibration item(s) and {n_test} test "
        f"item(s), and {int(sparse.sum())} of the {len(stats.levels)} judge values are short "
        "of 2. Its cell mean would be missing or a single label with no variance, and the "
        "interval overconfident. Use regression='spline' or 'linear' (a smooth E[Y | Ŷ]), "
        "ppi or ppi_plus_plus."
    )


def _raise_if_saturated(stats: LevelStats, p_hat: Literal["all", "test"], regression: str,
                        n_coef: int) -> None:
    """A regression with one coefficient per calibration judge value is the cell-mean fit."""
    n_values = int(np.sum(stats.cal_n > 0))
    if n_coef >= n_values:
        _raise_if_sparse(stats, p_hat, f"the {regression} EIF ({n_coef} coefficients on "
                                       f"{n_values} calibration judge values: the cell means)")


# ----------------------------------------------------------------------------- all at once
_BINARY_ONLY = ("rogan_gladen", "mle")


def _zero_se_note(est: Estimate) -> str:
    if est.cov[0, 0] == 0:
        return ("standard error is 0 (the labels it uses are constant), so the interval is a "
                "point; do not read it as certainty")
    return ""


#: Significance level of the label-shift check (1 %: a flag on valid data once in a hundred).
SHIFT_ALPHA = 0.01
#: Rows that assume the calibration items are a random sample of the test population.
_RANDOM_SAMPLE_METHODS = ("ppi", "ppi_plus_plus", "mle", "eif")
# Rows whose Wald interval under-covers with few calibration items of the rarer human class:
# Rogan–Gladen too (0.884 at θ = 0.05, q = 0.9, m = 50 in validation/coverage_battery.py), though it
# stays valid under label shift
_RARE_NOTE_METHODS = (*_RANDOM_SAMPLE_METHODS, "rogan_gladen")
#: A judge with at most this many distinct values is compared level by level (χ²); more
#: values are compared as scores (two-sample Kolmogorov–Smirnov).
_SHIFT_LEVELS = 10


def label_shift(data: Labels, judge: str | None = None) -> dict[str, Any]:
    r"""Test whether the judge's labels have the same distribution on the calibration and test
    sets, as they must when the calibration items are a random sample of the test items.

    The judge's label Ŷ is seen on both sets, so a shift in the distribution of Y between them
    (label or prior shift) shows in Ŷ: with constant error rates
    :math:`E[\hat Y] = (1-q_0) + \theta\kappa` moves with θ. A judge with at most ten distinct
    values is compared by Pearson's χ² on the 2 × L table of counts (df L − 1; for a 0/1 judge
    the squared two-proportion score test); a score judge by the two-sample
    Kolmogorov–Smirnov test.

    Returns
    -------
    dict
        ``test``, ``statistic``, ``df`` (χ² only), ``p_value``, ``calibration_mean``,
        ``test_mean``, ``shifted`` (p < :data:`SHIFT_ALPHA`).
    """
    lab = _one_judge(data, judge)
    cal = np.asarray(lab.yhat_cal[:, 0], dtype=float)
    test = np.asarray(lab.yhat_test[:, 0], dtype=float)
    if cal.size < 2 or test.size < 2:  # nothing to compare: never a flag
        return {"calibration_mean": float(cal.mean()) if cal.size else float("nan"),
                "test_mean": float(test.mean()) if test.size else float("nan"),
                "test": "none (fewer than 2 items in a set)", "statistic": float("nan"),
                "p_value": float("nan"), "shifted": False}
    out: dict[str, Any] = {"calibration_mean": float(cal.mean()), "test_mean": float(test.mean())}
    levels = np.unique(np.concatenate([cal, test]))
    if levels.size <= 1:
        return {**out, "test": "none (constant judge)", "statistic": 0.0, "p_value": 1.0,
                "shifted": False}
    if levels.size <= _SHIFT_LEVELS:
        table = np.stack([(cal[:, None] == levels).sum(0), (test[:, None] == levels).sum(0)])
        expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
        stat = float(((table - expected) ** 2 / expected).sum())
        df = int(levels.size - 1)
        p = float(chdtrc(df, stat))
        out.update(test="chi-square", statistic=stat, df=df, p_value=p)
    else:
        from scipy.stats import ks_2samp  # scipy.stats costs ~1 s to import: only here

        res = ks_2samp(cal, test)
        out.update(test="Kolmogorov-Smirnov", statistic=float(res.statistic),
                   p_value=float(res.pvalue))
    out["shifted"] = bool(out["p_value"] < SHIFT_ALPHA)
    return out


def _shift_note(shift: dict[str, Any]) -> str:
    df = f", df {shift['df']}" if "df" in shift else ""
    return (f"label shift: the judge's labels differ between the calibration and test sets "
            f"(mean {shift['calibration_mean']:.3g} vs {shift['test_mean']:.3g}; "
            f"{shift['test']} {shift['statistic']:.3g}{df}, p = {shift['p_value']:.2g}), so the "
            "calibration items are not a random sample of the test items, which this row "
            "assumes; rogan_gladen stays valid if the judge's error rates are the same on both "
            "sets (a shift in θ only). If the calibration items were chosen by their judge "
            "label on purpose (a stratified design, e.g. bayescal.design.choose_labels), the "
            "selection is ignorable for the likelihood: use the bayes row (the mle's Wald interval "
            "under-covers there when a stratum's human mean is near 0 or 1)")


def estimate(
    data: Labels,
    prob: float | None = None,
    judge: str | None = None,
    *,
    ci_prob: float | None = None,
    methods: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every estimator of Chen et al. (2026) for the human-label mean in one table.

    Runs :func:`naive`, :func:`rogan_gladen` (raw), :func:`ppi`, :func:`ppi_plus_plus`
    (unclipped λ̂), :func:`mle` (Newton, observed information) and :func:`eif` with their
    defaults. A method that is undefined on these data still gets its row, with NaN numbers,
    interval ``none`` and the reason in ``note``; the other methods run. Rogan–Gladen and the
    MLE are defined for binary labels only. The ``naive`` row is the judge's mean, an estimate
    of E[Ŷ] rather than θ: it has no interval (``se``, ``lower``, ``upper`` NaN, interval
    ``none``, the reason in ``note``); :func:`naive` gives the interval for E[Ŷ]. The ``bayes``
    row is :func:`posterior` (binary judge and labels): where :func:`rare_outcome` flags the
    calibration set (too few items for the calibration mean of the human labels to be close to
    normal) the Wald rows say they under-cover, and this row is the one whose interval keeps
    its level.

    The ``eif`` row is the cell-mean EIF (``p_hat="all"``) for a binary judge, and the spline
    EIF (``regression="spline"``, default df; method ``eif_spline``) for any other judge: cell
    means need at least two calibration items at every judge value, which scores and
    many-level ratings rarely give, and a spline with at most five coefficients is the cell
    means for a judge with up to five values anyway (when its knots are distinct).

    Parameters
    ----------
    data : Labels
    prob : float
        Interval probability (the paper reports 0.90).
    judge : str, optional
        Judge name; required when ``data`` holds several judges.
    methods : iterable of str, optional
        Subset of :data:`METHODS` (default all, in that order).

    Returns
    -------
    DataFrame
        Indexed by method name; the shared summary columns ``parameter, method, estimate, se,
        lower, upper, prob, interval`` plus ``note`` (empty when the method ran normally).
    """
    prob = resolve_prob(prob, ci_prob)
    chosen = _chosen(methods, METHODS, prob)
    lab = _one_judge(data, judge)
    name, _ = target(lab)
    binary_judge = _is_binary(lab.yhat_cal, lab.yhat_test)
    funcs: dict[str, Callable[[Labels], Estimate]] = {
        "naive": naive, "rogan_gladen": rogan_gladen, "ppi": ppi,
        "ppi_plus_plus": ppi_plus_plus, "mle": mle,
        "eif": eif if binary_judge else lambda x: eif(x, regression="spline"),
    }
    shift = label_shift(lab)
    rare = _rare_class_note(lab) if _is_binary(lab.y_cal, lab.yhat_cal, lab.yhat_test) else ""
    rows = []
    for method in chosen:
        if method == "bayes":
            if binary_judge and _is_binary(lab.y_cal):
                row = _posterior_row(lab, prob)
                if shift["shifted"]:  # it assumes a random calibration sample too
                    row["note"] = f"{row['note']}; {_shift_note(shift)}"
                rows.append(row)
            else:
                rows.append(_undefined_row(name, method, "the exact posterior is for a binary "
                                           "judge and binary human labels"))
            continue
        try:
            if method in _BINARY_ONLY:
                try:
                    lab.require_binary()
                except DataError as err:
                    raise EstimatorUndefined(f"defined for binary labels only: {err}") from err
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                est = funcs[method](lab)
        except EstimatorUndefined as err:
            rows.append(_undefined_row(name, method, str(err)))
            continue
        except (ValueError, ImportError) as err:
            rows.append(_undefined_row(name, method, f"{type(err).__name__}: {err}"))
            continue
        notes = [_zero_se_note(est), est.info.get("interval_note", ""),
                 *(str(w.message) for w in caught if issubclass(w.category, UserWarning))]
        if method == "eif" and not binary_judge:
            notes.append(f"spline EIF (df={est.info['df']}), the default for a non-binary "
                         "judge: the cell-mean EIF needs >= 2 calibration items per judge value")
        if not est.converged:
            notes.append("the optimizer did not report convergence")
        if shift["shifted"] and method in _RANDOM_SAMPLE_METHODS:
            notes.append(_shift_note(shift))
        if rare and method in _RARE_NOTE_METHODS:
            notes.append(rare)
        row = _row(est, prob, "; ".join(n for n in notes if n))
        if method == "naive":
            row = _naive_row(row)
        rows.append(row)
    table = pd.DataFrame(rows, index=list(chosen))
    return table[[*COLUMNS, "note"]]


# ----------------------------------------------------------------------------- posterior
def posterior(
    data: Labels,
    judge: str | None = None,
    *,
    draws: int = 20_000,
    random_seed: int | None = 0,
) -> xr.DataTree:
    r"""Exact posterior of θ for one binary judge under Jeffreys priors (no sampler needed).

    With the calibration items a random subset of all N items (the assumption PPI, the MLE and
    the EIF make too), the likelihood of the judge labels of all N items and the human labels
    of the m calibration items factorises over the saturated parameters
    :math:`\pi = P(\hat Y = 1)` and :math:`\mu_b = P(Y = 1 \mid \hat Y = b)`:
    :math:`\pi^{K_1}(1-\pi)^{K_0}\prod_b \mu_b^{N_{1b}}(1-\mu_b)^{N_{0b}}`, with
    :math:`K_b` the judge-label counts over all N items and :math:`N_{ab}` the calibration
    counts. Under independent Jeffreys Beta(½, ½) priors the posterior is three independent
    Beta distributions, and :math:`\theta = \pi\mu_1 + (1 - \pi)\mu_0` (the paper's target,
    Chen et al. 2026, eq. 1, in the cell-mean parametrisation of its eq. 19). Its
    equal-tailed interval keeps its level where the Wald intervals do not: with few
    calibration items of the rarer human class (the sets :func:`rare_outcome` flags).

    Returns
    -------
    xarray.DataTree
        A ``posterior`` group (1 chain × ``draws``) with ``prevalence`` (θ),
        ``judge_rate`` (π), ``rate_given_judge_1`` (μ₁) and ``rate_given_judge_0`` (μ₀):
        ``bayescal.summarize`` and ``az.summary`` read it like any posterior.
    """
    lab = _one_judge(data, judge)
    lab.require_binary()
    if draws < 100:
        raise ValueError(f"draws must be at least 100, got {draws}")
    c = _counts(_stats(lab))
    rng = np.random.default_rng(random_seed)
    k1 = c["N11"] + c["N01"] + c["T1"]
    k0 = c["N10"] + c["N00"] + c["T0"]
    pi = rng.beta(k1 + 0.5, k0 + 0.5, draws)
    mu1 = rng.beta(c["N11"] + 0.5, c["N01"] + 0.5, draws)
    mu0 = rng.beta(c["N10"] + 0.5, c["N00"] + 0.5, draws)
    theta = pi * mu1 + (1 - pi) * mu0
    name, _ = target(lab)
    post = xr.Dataset({k: (("chain", "draw"), v[None, :]) for k, v in (
        (name, theta), ("judge_rate", pi), ("rate_given_judge_1", mu1),
        ("rate_given_judge_0", mu0))}, coords={"chain": [0], "draw": np.arange(draws)})
    post.attrs.update({"method": "bayes", "prior": "Jeffreys Beta(1/2, 1/2) on π, μ1, μ0",
                       "judge": lab.judges[0], **c})
    return xr.DataTree.from_dict({"posterior": post})


def _posterior_row(lab: Labels, prob: float) -> dict[str, Any]:
    tree = posterior(lab)
    name = target(lab)[0]
    theta = tree["posterior"][name].values.ravel()
    lower, upper = np.quantile(theta, [(1 - prob) / 2, (1 + prob) / 2])
    return {"parameter": name, "method": "bayes", "estimate": float(theta.mean()),
            "se": float(theta.std(ddof=1)), "lower": float(lower), "upper": float(upper),
            "prob": prob, "interval": "eti",
            "note": "posterior mean, sd and equal-tailed interval under Jeffreys priors "
                    "(posterior(); exact, 20,000 draws)"}


def rare_outcome(data: Labels, judge: str | None = None) -> dict[str, Any]:
    r"""Whether the calibration set is too small for its human-label mean to be close to normal.

    The Wald rows of :func:`estimate` (Rogan–Gladen, PPI, PPI++, the MLE, the EIF) all rest on
    the normal approximation of the calibration mean of the binary human labels. With
    :math:`m_1` of m labels equal to 1 the flag is
    :math:`m < 28 + 25\hat G_1^2`, :math:`\hat G_1 = (1 - 2\hat p)/\sqrt{\hat p(1 - \hat p)}`,
    :math:`\hat p = m_1/m` (Sugden, Smith and Jones 2000's form of Cochran's rule;
    :func:`~bayescal.frequentist.judge_mean.cores.rare_outcome_rule`): about fewer than 25
    items of the rarer class. The rule was chosen over a count threshold by
    ``validation/rare_class_rule.py``, which measures it against the rows' coverage.

    Returns
    -------
    dict
        ``m``, ``m1``, ``m0``, ``rare_class`` (``"Y=1"`` or ``"Y=0"``), ``rare_count``,
        ``skewness`` (:math:`\hat G_1`), ``m_required`` (:math:`28 + 25\hat G_1^2`) and
        ``flagged`` (m below it).
    """
    lab = _one_judge(data, judge)
    lab.require_binary()
    c = _counts(_stats(lab))
    m1, m0 = c["N11"] + c["N10"], c["N01"] + c["N00"]
    rule = rare_outcome_rule(m1, m1 + m0)
    return {"m": m1 + m0, "m1": m1, "m0": m0, "rare_class": "Y=1" if m1 <= m0 else "Y=0",
            "rare_count": min(m1, m0), "skewness": float(rule["skewness"]),
            "m_required": float(rule["m_required"]), "flagged": bool(rule["flagged"])}


#: The Wald rows' coverage of 95 % intervals over the cells of ``validation/rare_class_rule.py``
#: that the rule flags in at least 90 % of replicates (209 row-cells, R = 5000 each; the lowest
#: is PPI++ at θ = 0.05, q = 0.9, m = 20).
RARE_COVERAGE = "0.93 at the median and as little as 0.54"


def _rare_class_note(lab: Labels) -> str:
    """The note of a Wald row when :func:`rare_outcome` flags the calibration set."""
    r = rare_outcome(lab)
    if not r["flagged"]:
        return ""
    if r["rare_count"] == 0:
        need = "which no m gives with one class absent"
    else:
        need = (f"which needs m > 28 + 25·G1² = {r['m_required']:.0f} with G1 = "
                f"{r['skewness']:.2f} the labels' skewness (Sugden, Smith and Jones 2000's form "
                "of Cochran's rule)")
    return (f"small calibration set or rare outcome: {r['rare_count']} of {r['m']} calibration "
            f"items have {r['rare_class']}, and the Wald interval assumes their human-label mean "
            f"is close to normal, {need}. Such sets gave 95 % Wald intervals covering "
            f"{RARE_COVERAGE} in simulation: use the bayes row")


def _row(est: Estimate, prob: float, note: str) -> dict[str, Any]:
    """The summary row of a one-term Estimate (what ``est.summary(prob)`` holds, without
    building a frame per method: a table costs ~10 ms, an estimator less)."""
    name = est.terms[0]
    value = float(np.asarray(est.params[name].values))
    se = float(np.sqrt(max(est.cov[0, 0], 0.0)))
    kind = est.interval[name]
    lower, upper = wald_interval(value, se, prob, kind)
    return {"parameter": name, "method": est.method, "estimate": value, "se": se,
            "lower": float(lower), "upper": float(upper), "prob": prob, "interval": kind,
            "note": note}


#: Why the table's naive row has no interval (its Wald interval covers θ in 0–0.2 % of
#: replicates of a judge with 10–20 % error rates: it is an interval for E[Ŷ], not for θ).
NAIVE_NOTE = ("the judge's mean label on the test set: it estimates E[Ŷ], not θ (bias "
              "(1 - q0) + θ(q0 + q1 - 2)), so no interval for θ is given; naive() returns the "
              "interval for E[Ŷ]. Shown as the baseline the corrections are measured against")


def _naive_row(row: dict[str, Any]) -> dict[str, Any]:
    """The naive row of :func:`estimate`: the judge's mean, without an interval for θ."""
    note = "; ".join(n for n in (NAIVE_NOTE, row["note"]) if n)
    return {**row, "se": np.nan, "lower": np.nan, "upper": np.nan, "interval": "none",
            "note": note}


def _undefined_row(parameter: str, method: str, note: str) -> dict[str, Any]:
    return {"parameter": parameter, "method": method, "estimate": np.nan, "se": np.nan,
            "lower": np.nan, "upper": np.nan, "prob": np.nan, "interval": "none", "note": note}
