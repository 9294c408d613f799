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
Wald interval (``wald``). Both come from :func:`bayescal.schema.wald_interval`.

Sufficient statistics and vectorised cores. Every formula lives once, in a private *core* that
takes the per-judge-level sufficient statistics (:class:`LevelStats`: for each distinct judge
value ℓ the calibration count, sum and within-level sum of squares of Y, and the test count)
and broadcasts over any leading axes (replicates, grid cells, random splits). A core returns
arrays of estimates and variances with an integer *reason code* (:data:`REASONS`; 0 = defined,
NaN numbers otherwise) instead of raising. The ``Labels`` functions below build the statistics of
one data set, call the same cores and turn a non-zero code into :class:`EstimatorUndefined` with a
full message; :func:`binary_from_counts` (the six binary counts :data:`COUNT_NAMES`) and
:func:`discrete_from_stats` run the cores on whole arrays of data sets at once, for simulation
studies. The one exception is the MLE: :func:`mle` fits the misclassification model numerically
(the independent twin, any number of judges); its vectorised counterpart is the closed form of
the saturated one-judge model (:func:`binary_from_counts`, methods ``mle`` and
``mle_expected``), which the tests pin to :func:`~bayescal.frequentist.misclassification.fit` to
1e-10.

Implementations of these estimators differ in small conventions (which p̂, which λ formula,
ddof, clipping); each function's docstring states the one used here, and its ``info`` records it.
Nothing here imports PyMC.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from bayescal.data import DataError, Labels
from bayescal.frequentist import judge_mean_theory as theory
from bayescal.frequentist._core import Estimate
from bayescal.schema import COLUMNS, check_prob, wald_interval, z_value

__all__ = [
    "BINARY_METHODS",
    "COUNT_NAMES",
    "DISCRETE_METHODS",
    "METHODS",
    "REASONS",
    "EstimatorUndefined",
    "LevelStats",
    "binary_from_counts",
    "discrete_from_stats",
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

#: The six binary counts, in this order on the last axis of an array given to
#: :func:`binary_from_counts`: calibration N_ab = #{Y=a, Ŷ=b}, test T_b = #{Ŷ=b}.
COUNT_NAMES = ("N11", "N10", "N01", "N00", "T1", "T0")

#: Methods of :func:`binary_from_counts`.
BINARY_METHODS = ("naive", "rogan_gladen", "rogan_gladen_smoothed", "ppi", "ppi_plus_plus",
                  "eif", "eif_test", "mle", "mle_expected")

#: Methods of :func:`discrete_from_stats`.
DISCRETE_METHODS = ("naive", "ppi", "ppi_plus_plus", "ppi_plus_plus_clipped", "eif",
                    "eif_test", "eif_linear")

# Reason codes of the cores (the ``reason`` arrays of the vectorised functions).
DEFINED = 0
NO_POSITIVE = 1
NO_NEGATIVE = 2
NO_BETTER_THAN_CHANCE = 3
FEW_CALIBRATION = 4
FEW_TEST = 5
SPARSE_JUDGE_CELL = 6
MLE_BOUNDARY = 7

#: Why an estimate is undefined, by reason code (0 = defined).
REASONS = {
    DEFINED: "defined",
    NO_POSITIVE: "no Y=1 item in the calibration set",
    NO_NEGATIVE: "no Y=0 item in the calibration set",
    NO_BETTER_THAN_CHANCE: "judge no better than chance on the calibration set (κ̂ <= 0)",
    FEW_CALIBRATION: "too few calibration items for a sample variance",
    FEW_TEST: "too few test items for a sample variance",
    SPARSE_JUDGE_CELL: ("a judge value where the cell means are averaged has fewer than 2 "
                        "calibration items (its cell mean is missing or has no variance)"),
    MLE_BOUNDARY: "MLE on the boundary: an empty calibration cell puts q̂0, q̂1 or θ̂ at 0 or 1",
}

# PPI++: below this denominator of λ̂ the judge labels are (numerically) constant and λ̂ = 0/0;
# the seed's R package then falls back to λ = 1 (plain PPI), and so do we.
_LAMBDA_DENOMINATOR_MIN = 1e-10


class EstimatorUndefined(ValueError):
    """The estimator is not defined on these data; the message says why."""


# ============================================================================= statistics
@dataclass(frozen=True)
class LevelStats:
    r"""Sufficient statistics of every estimator here, per distinct judge value.

    For each judge level :math:`\ell` (sorted ``levels``, shape (L,)): ``cal_n`` calibration items
    with :math:`\hat Y = \ell`, ``cal_sum`` the sum of their Y, ``cal_ss`` the sum of squares of
    their Y about its level mean, ``test_n`` test items with :math:`\hat Y = \ell`. The four
    arrays have shape (..., L): leading axes index independent data sets (replicates, splits).
    Naive, PPI and PPI++ need only the first and second moments these imply; the EIF needs the
    per-level values; Rogan–Gladen and the MLE need the six binary counts (levels 0 and 1).
    """

    levels: Array
    cal_n: Array
    cal_sum: Array
    cal_ss: Array
    test_n: Array

    @property
    def m(self) -> Array:
        """Calibration items per data set."""
        out: Array = self.cal_n.sum(-1)
        return out

    @property
    def n(self) -> Array:
        """Test items per data set."""
        out: Array = self.test_n.sum(-1)
        return out

    @classmethod
    def from_arrays(cls, y_cal: ArrayLike, yhat_cal: ArrayLike, yhat_test: ArrayLike
                    ) -> LevelStats:
        """Statistics of one data set (one judge): levels are the distinct judge values."""
        y = np.asarray(y_cal, dtype=np.float64)
        yc = np.asarray(yhat_cal, dtype=np.float64)
        yt = np.asarray(yhat_test, dtype=np.float64)
        levels = np.unique(np.concatenate([yc, yt]))
        n_levels = len(levels)
        ic, it = np.searchsorted(levels, yc), np.searchsorted(levels, yt)
        cal_n = np.bincount(ic, minlength=n_levels).astype(np.float64)
        cal_sum = np.bincount(ic, weights=y, minlength=n_levels)
        mean = np.divide(cal_sum, cal_n, out=np.zeros(n_levels), where=cal_n > 0)
        cal_ss = np.bincount(ic, weights=(y - mean[ic]) ** 2, minlength=n_levels)
        test_n = np.bincount(it, minlength=n_levels).astype(np.float64)
        return cls(levels, cal_n, cal_sum, cal_ss, test_n)

    @classmethod
    def from_counts(cls, counts: Mapping[str, ArrayLike] | ArrayLike) -> LevelStats:
        """Statistics of binary data sets from their six counts (:data:`COUNT_NAMES`).

        ``counts`` is a mapping with those keys (broadcastable arrays) or an array whose last
        axis holds them in that order. They must be non-negative integers.
        """
        n11, n10, n01, n00, t1, t0 = _count_arrays(counts)
        cal_n = np.stack([n10 + n00, n11 + n01], axis=-1)
        cal_sum = np.stack([n10, n11], axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            # Y within a judge cell is binary: sum of squares about the mean = n1·n0/(n1 + n0)
            cal_ss = np.where(cal_n > 0, np.stack([n10 * n00, n11 * n01], axis=-1) / cal_n, 0.0)
        return cls(np.array([0.0, 1.0]), cal_n, cal_sum, cal_ss, np.stack([t0, t1], axis=-1))

    def binary_counts(self) -> dict[str, Array]:
        """The six counts of binary data (judge levels within {0, 1}, Y binary)."""
        n1 = _at_level(self, self.cal_n, 1.0)
        s1 = _at_level(self, self.cal_sum, 1.0)
        n0 = _at_level(self, self.cal_n, 0.0)
        s0 = _at_level(self, self.cal_sum, 0.0)
        return {"N11": s1, "N10": s0, "N01": n1 - s1, "N00": n0 - s0,
                "T1": _at_level(self, self.test_n, 1.0), "T0": _at_level(self, self.test_n, 0.0)}


def _count_arrays(counts: Mapping[str, ArrayLike] | ArrayLike) -> list[Array]:
    if isinstance(counts, Mapping):
        missing = [k for k in COUNT_NAMES if k not in counts]
        if missing:
            raise ValueError(f"counts need the keys {list(COUNT_NAMES)}; missing {missing}")
        arrays = [np.asarray(counts[k], dtype=np.float64) for k in COUNT_NAMES]
    else:
        a = np.asarray(counts, dtype=np.float64)
        if a.ndim == 0 or a.shape[-1] != len(COUNT_NAMES):
            raise ValueError(f"a counts array needs a last axis of length 6 {COUNT_NAMES}, got "
                             f"shape {a.shape}")
        arrays = [a[..., i] for i in range(len(COUNT_NAMES))]
    arrays = [np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(*arrays)]
    for name, x in zip(COUNT_NAMES, arrays, strict=True):
        if not np.all(np.isfinite(x)) or np.any(x < 0) or np.any(x != np.round(x)):
            raise ValueError(f"count {name} must hold non-negative integers")
    return arrays


def _at_level(stats: LevelStats, values: Array, level: float) -> Array:
    """``values[..., j]`` at the level equal to ``level``, or zeros when there is none."""
    hit = np.flatnonzero(stats.levels == level)
    if hit.size:
        out: Array = values[..., hit[0]]
        return out
    return np.zeros(values.shape[:-1])


@dataclass(frozen=True)
class _Moments:
    """Means and centred sums of squares/products implied by :class:`LevelStats`."""

    m: Array
    n: Array
    y_bar: Array  # mean of Y over calibration
    c_bar: Array  # mean of Ŷ over calibration
    t_bar: Array  # mean of Ŷ over test
    s_yy: Array  # Σ_cal (Y - ȳ)²
    s_cc: Array  # Σ_cal (Ŷ - ĉ)²
    s_yc: Array  # Σ_cal (Y - ȳ)(Ŷ - ĉ)
    s_tt: Array  # Σ_test (Ŷ - t̄)²


def _moments(s: LevelStats) -> _Moments:
    lv = s.levels
    m, n = s.m, s.n
    with np.errstate(divide="ignore", invalid="ignore"):
        y_bar = s.cal_sum.sum(-1) / m
        c_bar = (s.cal_n * lv).sum(-1) / m
        t_bar = (s.test_n * lv).sum(-1) / n
        level_mean = np.where(s.cal_n > 0, s.cal_sum / s.cal_n, 0.0)
    dc = lv - c_bar[..., None]
    s_yy = s.cal_ss.sum(-1) + (s.cal_n * (level_mean - y_bar[..., None]) ** 2).sum(-1)
    s_cc = (s.cal_n * dc**2).sum(-1)
    s_yc = (dc * (s.cal_sum - s.cal_n * y_bar[..., None])).sum(-1)
    s_tt = (s.test_n * (lv - t_bar[..., None]) ** 2).sum(-1)
    return _Moments(m, n, y_bar, c_bar, t_bar, s_yy, s_cc, s_yc, s_tt)


# ============================================================================= cores
@dataclass(frozen=True)
class _Core:
    """Estimates, variances and reason codes (0 = defined) of one method on many data sets.

    ``estimate`` and ``variance`` are the raw formula values (NaN where a code is set is not
    guaranteed); :meth:`masked` blanks undefined entries. ``extra`` holds plug-ins for ``info``
    and messages.
    """

    estimate: Array
    variance: Array
    reason: NDArray[np.int8]
    extra: dict[str, Any] = field(default_factory=dict)

    def masked(self) -> tuple[Array, Array]:
        ok = self.reason == DEFINED
        return np.where(ok, self.estimate, np.nan), np.where(ok, self.variance, np.nan)


def _reason(*rules: tuple[ArrayLike, int]) -> NDArray[np.int8]:
    """First matching (condition, code) wins, as the checks of the Labels functions run."""
    conds = [np.asarray(c, dtype=bool) for c, _ in rules]
    if not conds:
        return np.zeros((), dtype=np.int8)
    shape = np.broadcast_shapes(*(c.shape for c in conds))
    out = np.select([np.broadcast_to(c, shape) for c in conds], [code for _, code in rules],
                    default=DEFINED)
    return out.astype(np.int8)


def _either(first: NDArray[np.int8], then: NDArray[np.int8]) -> NDArray[np.int8]:
    """Reason codes of two steps run in order: the first step's code where it has one."""
    return np.where(first != DEFINED, first, then).astype(np.int8)


def _class_rules(stats: LevelStats) -> list[tuple[Array, int]]:
    """Binary Y: both human classes must appear in the calibration set."""
    m1 = stats.cal_sum.sum(-1)
    return [(m1 == 0, NO_POSITIVE), (m1 == stats.m, NO_NEGATIVE)]


def _naive_core(s: LevelStats, binary: bool) -> _Core:
    r"""Test-set judge mean; variance :math:`\hat p(1-\hat p)/n` (binary) or ddof=1 over n."""
    mo = _moments(s)
    n = mo.n
    with np.errstate(divide="ignore", invalid="ignore"):
        if binary:
            var = mo.t_bar * (1 - mo.t_bar) / n
            reason = _reason((n < 1, FEW_TEST))
        else:
            var = mo.s_tt / (n - 1) / n
            reason = _reason((n <= 1, FEW_TEST))
    return _Core(mo.t_bar, var, reason)


def _ppi_core(mo: _Moments, lam: ArrayLike, ddof: int) -> _Core:
    r"""PPI++ at weight λ (λ = 1: PPI): :math:`\bar Y_{cal} + \lambda(\bar{\hat Y}_{test} -
    \bar{\hat Y}_{cal})`, variance :math:`\mathrm{Var}(Y - \lambda\hat Y)_{cal}/m +
    \lambda^2\mathrm{Var}(\hat Y_{test})/n` with sample variances of the given ddof."""
    lam_ = np.asarray(lam, dtype=np.float64)
    m, n = mo.m, mo.n
    theta = mo.y_bar + lam_ * (mo.t_bar - mo.c_bar)
    resid_ss = np.maximum(mo.s_yy - 2 * lam_ * mo.s_yc + lam_**2 * mo.s_cc, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = resid_ss / (m - ddof) / m + lam_**2 * mo.s_tt / (n - ddof) / n
    reason = _reason((m <= ddof, FEW_CALIBRATION), (n <= ddof, FEW_TEST))
    return _Core(theta, var, reason)


def _ppi_lambda(mo: _Moments, clip: bool) -> _Core:
    r"""The R package's :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y,\hat Y)_{cal} /
    (\widehat{\mathrm{Var}}(\hat Y_{cal}) + (m/n)\widehat{\mathrm{Var}}(\hat Y_{test}))`, ddof=1,
    λ = 1 when the denominator is below 1e-10; optionally clipped to [0, 1]. Returned as the
    ``estimate`` of a core (``variance`` unused)."""
    m, n = mo.m, mo.n
    with np.errstate(divide="ignore", invalid="ignore"):
        var_cal = mo.s_cc / (m - 1)
        var_test = mo.s_tt / (n - 1)
        cov = mo.s_yc / (m - 1)
        denominator = var_cal + (m / n) * var_test
        fallback = denominator < _LAMBDA_DENOMINATOR_MIN
        lam = np.where(fallback, 1.0, cov / denominator)
    unclipped = lam
    if clip:
        lam = np.clip(lam, 0.0, 1.0)
    reason = _reason((m <= 1, FEW_CALIBRATION), (n <= 1, FEW_TEST))
    return _Core(lam, np.full(lam.shape, np.nan), reason,
                 {"unclipped": unclipped, "fallback": fallback})


def _rogan_gladen_core(s: LevelStats, smoothed: bool, z: float) -> _Core:
    r"""Rogan–Gladen from the binary counts (raw, or smoothed with z); see :func:`rogan_gladen`."""
    c = s.binary_counts()
    m1, m0, n = c["N11"] + c["N10"], c["N01"] + c["N00"], c["T1"] + c["T0"]
    with np.errstate(divide="ignore", invalid="ignore"):
        q1, q0, p = c["N11"] / m1, c["N00"] / m0, c["T1"] / n
        extra: dict[str, Any] = {"q0_hat": q0, "q1_hat": q1, "p_hat": p, "m0": m0, "m1": m1,
                                 "kappa_hat": q0 + q1 - 1}
        n_eff, m0_eff, m1_eff = n, m0, m1
        if smoothed:
            n_eff, m0_eff, m1_eff = n + z**2, m0 + 2.0, m1 + 2.0
            p = (n * p + z**2 / 2) / n_eff
            q0 = (m0 * q0 + 1) / m0_eff
            q1 = (m1 * q1 + 1) / m1_eff
            extra.update(p_tilde=p, q0_tilde=q0, q1_tilde=q1)
        kappa = q0 + q1 - 1
        raw = (p + q0 - 1) / kappa
        theta = np.clip(raw, 0.0, 1.0)
        var = (p * (1 - p) / n_eff + (1 - theta) ** 2 * q0 * (1 - q0) / m0_eff
               + theta**2 * q1 * (1 - q1) / m1_eff) / kappa**2
    extra.update(q0=q0, q1=q1, kappa=kappa, theta_unclipped=raw)
    reason = _reason((m1 == 0, NO_POSITIVE), (m0 == 0, NO_NEGATIVE),
                     (~(kappa > 0), NO_BETTER_THAN_CHANCE))
    return _Core(theta, var, reason, extra)


def _cell_fit(s: LevelStats) -> Array:
    """Cell means μ̂(ℓ). A level without calibration items gets the overall calibration mean,
    a placeholder only: wherever such a level is used the cores set a reason code."""
    with np.errstate(divide="ignore", invalid="ignore"):
        fallback = s.cal_sum.sum(-1) / s.m
        fit: Array = np.where(s.cal_n > 0, s.cal_sum / s.cal_n, fallback[..., None])
    return fit


def _sparse_cells(s: LevelStats, p_hat: Literal["all", "test"]) -> NDArray[np.bool_]:
    """Levels where μ̂ is averaged (test items; all items for ``"all"``) that have fewer than
    two calibration items: their cell mean is missing, or one label fitted exactly, whose
    residual is 0 and adds no variance although the cell mean is as noisy as that label."""
    w = s.test_n + s.cal_n if p_hat == "all" else s.test_n
    out: NDArray[np.bool_] = (w > 0) & (s.cal_n < 2)
    return out


def _eif_core(
    s: LevelStats,
    fit: Array,
    *,
    p_hat: Literal["all", "test"],
    binary_y: bool,
    binary_variance: bool,
    sparse_cells_undefined: bool,
) -> _Core:
    r"""EIF estimator for a regression with values ``fit[..., ℓ]`` = μ̂(ℓ) at the judge levels.

    :math:`\hat\theta = n_p^{-1}\sum_\ell w_\ell\hat\mu(\ell) + m^{-1}\sum_{cal}(Y - \hat\mu(\hat
    Y))`, :math:`w_\ell` the items at level ℓ where μ̂ is averaged (test, or all). Variance: the
    binary cell plug-in (SPEC §2.2) or
    :math:`\mathrm{Var}(\hat\mu(\hat Y))/n_p + \mathrm{Var}(Y - \hat\mu(\hat Y_{cal}))/m`, ddof=1.
    ``sparse_cells_undefined`` (cell means): a level where μ̂ is averaged with fewer than two
    calibration items sets :data:`SPARSE_JUDGE_CELL`.
    """
    m = s.m
    w = s.test_n + s.cal_n if p_hat == "all" else s.test_n
    n_p = w.sum(-1)
    rules = _class_rules(s) if binary_y else []
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (w * fit).sum(-1) / n_p
        resid_sum = (s.cal_sum - s.cal_n * fit).sum(-1)
        theta = pooled + resid_sum / m
        extra: dict[str, Any] = {}
        if binary_variance:
            p = _at_level(s, w, 1.0) / n_p
            mu0, mu1 = _at_level(s, fit, 0.0), _at_level(s, fit, 1.0)
            m0, m1 = _at_level(s, s.cal_n, 0.0), _at_level(s, s.cal_n, 1.0)
            var = ((mu1 - mu0) ** 2 * p * (1 - p) / n_p
                   + np.where(m0 > 0, (1 - p) ** 2 * mu0 * (1 - mu0) / m0, 0.0)
                   + np.where(m1 > 0, p**2 * mu1 * (1 - mu1) / m1, 0.0))
            extra.update(p=p, mu0=mu0, mu1=mu1)
        else:
            var_fit = (w * (fit - pooled[..., None]) ** 2).sum(-1) / (n_p - 1)
            level_mean = np.where(s.cal_n > 0, s.cal_sum / s.cal_n, 0.0)
            resid_ss = ((s.cal_ss + s.cal_n * (level_mean - fit) ** 2).sum(-1)
                        - m * (resid_sum / m) ** 2)
            var = var_fit / n_p + np.maximum(resid_ss, 0.0) / (m - 1) / m
    if sparse_cells_undefined:
        rules.append((np.any(_sparse_cells(s, p_hat), axis=-1), SPARSE_JUDGE_CELL))
    if not binary_variance:
        rules += [(n_p <= 1, FEW_TEST), (m <= 1, FEW_CALIBRATION)]
    return _Core(theta, var, _reason(*rules), extra)


def _mle_core(s: LevelStats) -> tuple[_Core, _Core]:
    r"""Closed-form MLE of the saturated one-judge misclassification model (binary counts).

    Reparameterised as (p = P(Ŷ=1), μ0, μ1) the likelihood factorises: every item gives
    :math:`\hat Y ~ \mathrm{Bern}(p)`, every calibration item :math:`Y \mid \hat Y ~
    \mathrm{Bern}(\mu_{\hat Y})`. So :math:`\hat p` is the judge mean over all N items,
    :math:`\hat\mu_b` the calibration cell means and :math:`\hat\theta = (1-\hat p)\hat\mu_0 +
    \hat p\hat\mu_1` — the all-items cell EIF, whose plug-in variance is the delta method on the
    observed information of (p, μ0, μ1), hence the observed-information variance of θ̂ (the MLE
    and its observed information are invariant under the reparameterisation at an interior
    maximum). :math:`\hat q_1 = \hat p\hat\mu_1/\hat\theta`,
    :math:`\hat q_0 = (1-\hat p)(1-\hat\mu_0)/(1-\hat\theta)`; the expected-information variance
    is :math:`V_{MLE}(\hat\theta, \hat q_0, \hat q_1, n/m)/N` (:func:`theory.v_mle`, the (θ, θ)
    entry of :math:`(m I_{cal} + n I_{test})^{-1}`).

    The reparameterisation is a bijection of (0, 1)³ whatever the sign of κ, so with κ free
    (``kappa="nonzero"``, the default of :func:`~bayescal.frequentist.misclassification.fit`)
    the maximum is interior iff every calibration cell is non-empty; otherwise it is on the
    boundary and both cores carry a reason code, as ``fit`` raises there.
    """
    core = _eif_core(s, _cell_fit(s), p_hat="all", binary_y=True, binary_variance=True,
                     sparse_cells_undefined=False)
    c = s.binary_counts()
    p, mu0, mu1 = core.extra["p"], core.extra["mu0"], core.extra["mu1"]
    theta = core.estimate
    m, n = s.m, s.n
    with np.errstate(divide="ignore", invalid="ignore"):
        q1 = p * mu1 / theta
        q0 = (1 - p) * (1 - mu0) / (1 - theta)
        expected = theory.v_mle(theta, q0, q1, n / m) / (m + n)
    empty = (c["N11"] == 0) | (c["N10"] == 0) | (c["N01"] == 0) | (c["N00"] == 0)
    reason = _reason(*_class_rules(s), (empty, MLE_BOUNDARY))
    extra = {"specificity": q0, "sensitivity": q1}
    return (_Core(theta, core.variance, reason, extra), _Core(theta, expected, reason, extra))


# ============================================================================= vectorised
def _pack(core: _Core, prob: float, kind: str) -> dict[str, Array]:
    est, var = core.masked()
    se = np.sqrt(var)
    lower, upper = wald_interval(est, se, prob, "wald")
    if kind == "wald-logit":
        logit_scale = _interval_kind("prevalence", est)
        lo, hi = wald_interval(est, se, prob, "wald-logit")
        lower, upper = np.where(logit_scale, lo, lower), np.where(logit_scale, hi, upper)
    return {"estimate": est, "variance": var, "se": se, "lower": lower, "upper": upper,
            "reason": core.reason}


def _chosen(
    methods: Iterable[str] | None, allowed: tuple[str, ...], prob: float
) -> tuple[str, ...]:
    check_prob(prob)
    chosen = allowed if methods is None else tuple(methods)
    unknown = [m for m in chosen if m not in allowed]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(allowed)}")
    return chosen


def binary_from_counts(
    counts: Mapping[str, ArrayLike] | ArrayLike,
    prob: float = 0.9,
    *,
    methods: Iterable[str] | None = None,
) -> dict[str, dict[str, Array]]:
    r"""Every binary estimator on many data sets at once, from their six counts.

    The same cores as the ``Labels`` functions (same numbers to rounding), broadcast over the
    leading axes of the counts: use it for simulation grids and repeated random splits.

    Parameters
    ----------
    counts : mapping or array
        :data:`COUNT_NAMES` ``N11, N10, N01, N00`` (calibration, N_ab = #{Y=a, Ŷ=b}) and
        ``T1, T0`` (test), as a mapping of broadcastable arrays or an array with a last axis
        of length 6 in that order.
    prob : float
        Interval probability; also fixes z inside the smoothed Rogan–Gladen estimate.
    methods : iterable of str, optional
        Subset of :data:`BINARY_METHODS` (default all): ``naive``; ``rogan_gladen`` (raw) and
        ``rogan_gladen_smoothed`` (the R package's); ``ppi``; ``ppi_plus_plus`` (unclipped λ̂);
        ``eif`` (cell means, p̂ over all N, eq. 19) and ``eif_test`` (p̂ over the test set, the R
        package's); ``mle`` (observed information, closed form — see :func:`_mle_core`) and
        ``mle_expected`` (expected information).

    Returns
    -------
    dict
        Per method a dict of arrays of the counts' broadcast shape: ``estimate``, ``variance``,
        ``se``, ``lower``, ``upper`` (logit-scale Wald at ``prob``; plain Wald where the estimate
        is outside [0, 1], as :func:`_interval_kind`) — NaN where undefined — and
        ``reason`` (int8 codes of :data:`REASONS`; 0 = defined).
    """
    chosen = _chosen(methods, BINARY_METHODS, prob)
    s = LevelStats.from_counts(counts)
    mo = _moments(s)
    z = z_value(prob)
    out: dict[str, dict[str, Array]] = {}
    mle_cores: tuple[_Core, _Core] | None = None
    for method in chosen:
        if method == "naive":
            core = _naive_core(s, binary=True)
        elif method in ("rogan_gladen", "rogan_gladen_smoothed"):
            core = _rogan_gladen_core(s, smoothed=method.endswith("smoothed"), z=z)
        elif method == "ppi":
            core = _ppi_core(mo, 1.0, 1)
        elif method == "ppi_plus_plus":
            lam = _ppi_lambda(mo, clip=False)
            core = _ppi_core(mo, lam.estimate, 1)
            core = _Core(core.estimate, core.variance, _either(lam.reason, core.reason))
        elif method in ("eif", "eif_test"):
            core = _eif_core(s, _cell_fit(s), p_hat="all" if method == "eif" else "test",
                             binary_y=True, binary_variance=True, sparse_cells_undefined=True)
        else:
            mle_cores = mle_cores or _mle_core(s)
            core = mle_cores[0] if method == "mle" else mle_cores[1]
        out[method] = _pack(core, prob, "wald-logit")
    return out


def discrete_from_stats(
    stats: LevelStats, prob: float = 0.9, *, interval: Literal["wald", "wald-logit"] = "wald"
) -> dict[str, dict[str, Array]]:
    r"""Naive, PPI, PPI++ and EIF (cells, linear) on many data sets with a discrete judge.

    Vectorised over the leading axes of ``stats`` (:class:`LevelStats`); the same cores and
    conventions as :func:`naive`, :func:`ppi`, :func:`ppi_plus_plus` and :func:`eif` with
    non-binary labels (ddof=1 sample variances; the cell EIF is undefined, reason
    :data:`SPARSE_JUDGE_CELL`, where a judge level it averages has fewer than two calibration
    items). Methods (:data:`DISCRETE_METHODS`): ``ppi_plus_plus`` (unclipped λ̂) and
    ``ppi_plus_plus_clipped`` (λ̂ in [0, 1]); ``eif`` / ``eif_test`` (cell means, p̂ over all N /
    over the test set); ``eif_linear`` (OLS :math:`a + b\hat y`, b = Ĉov/V̂ar over calibration,
    b = 0 when the calibration judge labels are constant; μ̂ averaged over all N).

    Returns
    -------
    dict
        As :func:`binary_from_counts`, with ``interval``-kind intervals (plain Wald by default).
    """
    check_prob(prob)
    mo = _moments(stats)
    out: dict[str, dict[str, Array]] = {"naive": _pack(_naive_core(stats, False), prob, interval),
                                        "ppi": _pack(_ppi_core(mo, 1.0, 1), prob, interval)}
    for name, clip in (("ppi_plus_plus", False), ("ppi_plus_plus_clipped", True)):
        lam = _ppi_lambda(mo, clip=clip)
        core = _ppi_core(mo, lam.estimate, 1)
        out[name] = _pack(_Core(core.estimate, core.variance,
                                _either(lam.reason, core.reason)), prob, interval)
    cells = _cell_fit(stats)
    for name, p_hat in (("eif", "all"), ("eif_test", "test")):
        out[name] = _pack(_eif_core(stats, cells, p_hat=p_hat, binary_y=False,
                                    binary_variance=False, sparse_cells_undefined=True),
                          prob, interval)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(mo.s_cc > 0, mo.s_yc / mo.s_cc, 0.0)
    linear = (mo.y_bar - slope * mo.c_bar)[..., None] + slope[..., None] * stats.levels
    core = _eif_core(stats, linear, p_hat="all", binary_y=False, binary_variance=False,
                     sparse_cells_undefined=False)
    # a line through at most two calibration judge values is their cell means (saturated)
    saturated = np.sum(stats.cal_n > 0, axis=-1) <= 2
    sparse = _reason((saturated & np.any(_sparse_cells(stats, "all"), axis=-1),
                      SPARSE_JUDGE_CELL))
    out["eif_linear"] = _pack(_Core(core.estimate, core.variance, _either(core.reason, sparse)),
                              prob, interval)
    return out


# ============================================================================= Labels helpers
def _is_binary(*arrays: Array) -> bool:
    return all(np.isin(a, (0.0, 1.0)).all() for a in arrays)


def target(labels: Labels) -> tuple[str, str]:
    """Parameter name and interval kind for the mean of the human label.

    Returns ``("prevalence", "wald-logit")`` when every calibration human label is 0 or 1
    (θ is a probability; logit-scale Wald interval, seed 001 §5.2) and ``("mean", "wald")``
    otherwise (plain Wald, as the seed's code does for non-binary outcomes). This is the one
    place where that rule lives. (:func:`_interval_kind` falls back to plain Wald for a
    prevalence estimate outside [0, 1], whose logit interval would exclude it.)

    Raises
    ------
    DataError
        Human labels with exactly two distinct values other than 0 and 1 (1/2, ±1, ...): a
        binary label coded otherwise, whose mean is not the prevalence. Map it with
        ``Labels.from_arrays(..., positive=...)`` / ``from_frame(..., positive=...)``.
    """
    values = np.unique(labels.y_cal)
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


def _interval_kind(name: str, value: ArrayLike) -> NDArray[np.bool_]:
    """Where the logit interval of a prevalence applies: the estimate inside [0, 1] (the logit
    interval of :func:`bayescal.schema.wald_interval` keeps an estimate of exactly 0 or 1,
    such as a Rogan–Gladen estimate clipped to 1). Outside it (a PPI estimate below 0) a
    logit interval would exclude the estimate, so the plain Wald interval is used there."""
    v = np.asarray(value, dtype=np.float64)
    out: NDArray[np.bool_] = (name == "prevalence") & (v >= 0) & (v <= 1)
    return out


_PLAIN_WALD_NOTE = ("estimate outside [0, 1]: plain Wald interval (the logit interval would "
                    "exclude the estimate)")


def _one_judge(labels: Labels, judge: str | None) -> Labels:
    """The labels of one judge as a single-judge :class:`Labels` (row labels kept)."""
    yc, yt = labels.judge(judge)
    name = judge if judge is not None else labels.judges[0]
    lab = Labels(labels.y_cal, yc[:, None], yt[:, None], (name,), labels.cal_index,
                 labels.test_index)
    target(lab)  # refuses a two-valued human label not coded 0/1, before any computation
    return lab


def _arrays(lab: Labels) -> tuple[Array, Array, Array]:
    return lab.y_cal, lab.yhat_cal[:, 0], lab.yhat_test[:, 0]


def _stats(lab: Labels) -> LevelStats:
    return LevelStats.from_arrays(*_arrays(lab))


def _few(what: str, ddof: int, got: int) -> str:
    return f"the sample variance of {what} needs more than {ddof} value(s), got {got}"


def _class_message(code: int, m: int, consequence: str) -> str:
    value, word = (1, "positive") if code == NO_POSITIVE else (0, "negative")
    return (f"no {word} human label (Y={value}) in the calibration set (all {m} are "
            f"Y={1 - value}): {consequence.format(value=value)}. Label more items, or use "
            "ppi / ppi_plus_plus / naive.")


def _raise_if(reason: ArrayLike, messages: Mapping[int, str | Callable[[], str]]) -> None:
    """Raise :class:`EstimatorUndefined` with the message of a non-zero reason code."""
    code = int(np.asarray(reason))
    if code == DEFINED:
        return
    msg = messages.get(code, REASONS[code])
    raise EstimatorUndefined(msg() if callable(msg) else msg)


def _result(method: str, lab: Labels, value: float, var: float, info: dict[str, Any]) -> Estimate:
    name, kind = target(lab)
    info = {"judge": lab.judges[0], "m": lab.m, "n": lab.n, **info}
    if kind == "wald-logit" and not _interval_kind(name, value):
        kind = "wald"
        info["interval_note"] = _PLAIN_WALD_NOTE
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


# ----------------------------------------------------------------------------- naive
def naive(labels: Labels, judge: str | None = None) -> Estimate:
    r"""Naive estimator: the mean judge label on the test set (seed 001 eq. 3).

    :math:`\hat\theta_{naive} = n^{-1}\sum_{test}\hat Y_i`. It estimates :math:`p = E[\hat Y]`, not
    θ: its bias is :math:`p - \theta = (1-q_0) + \theta(q_0+q_1-2)` for a binary judge
    (:func:`~bayescal.frequentist.judge_mean_theory.naive_bias`), so its interval covers θ only
    by accident. Shown as the baseline every correction is measured against.

    It estimates a quantity on the human scale only when the judge reports on that scale: a
    binary human label needs a 0/1 judge (the mean of a 1–5 rating is not a prevalence), and a
    0/1 judge's mean is a proportion, not the mean of a non-binary human label. Otherwise
    :class:`EstimatorUndefined`. (For two non-binary scales the match cannot be checked; the
    judge is taken to report on the human scale.)

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
    human_binary = target(lab)[0] == "prevalence"
    judge_values = np.unique(np.concatenate([lab.yhat_cal[:, 0], lab.yhat_test[:, 0]]))
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
    core = _naive_core(_stats(lab), binary)
    _raise_if(core.reason, {FEW_TEST: _few("the test-set judge labels", 1, lab.n)})
    rule = "p̂(1-p̂)/n" if binary else "Var(Ŷ_test, ddof=1)/n"
    return _result("naive", lab, float(core.estimate), float(core.variance), {"variance": rule})


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
    z = float("nan")
    if smoothed:
        z = z_value(prob)
    core = _rogan_gladen_core(_stats(lab), smoothed, z)
    x = {k: float(v) for k, v in core.extra.items()}
    sym = "q̃0 + q̃1" if smoothed else "q̂0 + q̂1"
    consequence = ("Rogan–Gladen cannot estimate the judge's error rate on Y={value} items "
                   "(q̂0 or q̂1 is 0/0)")
    _raise_if(core.reason, {
        NO_POSITIVE: _class_message(NO_POSITIVE, lab.m, consequence),
        NO_NEGATIVE: _class_message(NO_NEGATIVE, lab.m, consequence),
        NO_BETTER_THAN_CHANCE: lambda: (
            f"judge no better than chance on the calibration set: {sym} = "
            f"{x['q0'] + x['q1']:.4f} <= 1 (specificity {x['q0']:.4f}, sensitivity "
            f"{x['q1']:.4f}), so the Rogan–Gladen correction divides by q0 + q1 - 1 <= 0. Use "
            "ppi / ppi_plus_plus / eif, which do not."),
    })
    theta, raw = float(core.estimate), x["theta_unclipped"]
    info: dict[str, Any] = {**_counts(*_arrays(lab)), "m0": int(x["m0"]), "m1": int(x["m1"]),
                            "q0_hat": x["q0_hat"], "q1_hat": x["q1_hat"], "p_hat": x["p_hat"],
                            "kappa_hat": x["kappa_hat"], "smoothed": smoothed,
                            "p_hat_source": "test set"}
    if smoothed:
        info.update(z=z, prob=prob, p_tilde=x["p_tilde"], q0_tilde=x["q0_tilde"],
                    q1_tilde=x["q1_tilde"])
    info.update(theta_unclipped=raw, clipped=bool(raw != theta),
                variance="delta method at the clipped estimate")
    name = "rogan_gladen_smoothed" if smoothed else "rogan_gladen"
    return _result(name, lab, theta, float(core.variance), info)


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
    core = _ppi_core(_moments(_stats(lab)), 1.0, ddof)
    _raise_if(core.reason, {
        FEW_CALIBRATION: _few("the calibration residuals Y - Ŷ", ddof, lab.m),
        FEW_TEST: _few("the test-set judge labels", ddof, lab.n),
    })
    return _result("ppi", lab, float(core.estimate), float(core.variance),
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
    mo = _moments(_stats(lab))
    info: dict[str, Any] = {"lambda_fallback": False, "clip": clip}
    if lam is None:
        tuned = _ppi_lambda(mo, clip)
        _raise_if(tuned.reason, {
            FEW_CALIBRATION: _few("the calibration judge labels", 1, lab.m),
            FEW_TEST: _few("the test-set judge labels", 1, lab.n),
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
        FEW_CALIBRATION: _few("the calibration residuals Y - λŶ", 1, lab.m),
        FEW_TEST: _few("the test-set judge labels", 1, lab.n),
    })
    info["llm_weight"] = weight
    # variants get their own method name so that tables and compare() can tell them apart
    name = "ppi_plus_plus" if lam is not None or not clip else "ppi_plus_plus_clipped"
    return _result(name, lab, float(core.estimate), float(core.variance), info)


# ----------------------------------------------------------------------------- MLE
def mle(
    labels: Labels,
    judge: str | None = None,
    *,
    algorithm: Literal["newton", "em"] = "newton",
    information: Literal["observed", "expected"] = "observed",
    kappa: Literal["nonzero", "positive"] = "nonzero",
) -> Estimate:
    r"""Three-parameter misclassification MLE of θ (seed 001 eq. 13, Prop. 4).

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
    labels : Labels
        Binary labels.
    judge : str, optional
        Judge name; required when ``labels`` holds several judges.
    algorithm : {"newton", "em"}
    information : {"observed", "expected"}
        Observed information (the seed's R package reports this one) or expected information
        :math:`(m I_{cal} + n I_{test})` at the estimate.
    kappa : {"nonzero", "positive"}
        See :func:`bayescal.frequentist.misclassification.fit`. The seed's R package enforces
        κ > 0 (``"positive"``), which refuses a flipped judge.

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
    fit = misclassification.fit(lab, algorithm=algorithm, information=information,
                                kappa=kappa)
    k = fit.terms.index("prevalence")
    theta = float(np.asarray(fit.params["prevalence"].values))
    info: dict[str, Any] = {
        "algorithm": algorithm,
        "information": information,
        "kappa_constraint": kappa,
        "specificity": float(np.asarray(fit.params["specificity"].values).ravel()[0]),
        "sensitivity": float(np.asarray(fit.params["sensitivity"].values).ravel()[0]),
        "full_fit": fit,
        **_counts(*_arrays(lab)),
    }
    name = "mle" if information == "observed" else "mle_expected"
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

    * ``"cells"`` — mean of Y within each judge level (eq. 14; binary or discrete Ŷ). Defined
      only where every judge value at which μ̂ is averaged (test values; with ``p_hat="all"``
      calibration values too) has at least two calibration items. A value with none has no
      cell mean (the seed's code substitutes the calibration mean and treats it as known); a
      value with one is fitted exactly, its residual is 0 and the variance misses that cell
      mean's noise. Both made intervals overconfident for scores and ratings (90% intervals
      covering 0.11 for a continuous score). Use ``"spline"`` or ``"linear"`` there.
    * ``"linear"`` — OLS :math:`a + b\hat y`. With ``p_hat="test"`` this is exactly PPI++ with
      λ = b (the OLS slope), variance included; with ``p_hat="all"`` the point is PPI++ with
      λ = (n/N) b, the plug-in of λ*.
    * ``"spline"`` — OLS on a natural cubic spline basis (:func:`natural_spline_basis`) with
      ``df`` columns: boundary knots at the calibration range, df - 1 interior knots at the
      calibration quantiles k/df (R's ``ns`` rule). Default ``df = min(#levels - 1, 4)``, #levels
      the distinct calibration judge values (the seed's code; for 3 levels the fit is saturated
      and equals ``"cells"``). Duplicate knots are dropped (``info["df"]`` is the effective df).

    A ``"linear"`` or ``"spline"`` fit with as many coefficients as distinct calibration judge
    values is saturated — it *is* the cell-mean fit — and gets the ``"cells"`` rule above.

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
        interval), a judge value with fewer than two calibration items for the cell means (or
        a saturated fit), or constant calibration judge labels with ``"spline"``.
    """
    if regression not in ("cells", "linear", "spline"):
        raise ValueError(f"regression must be 'cells', 'linear' or 'spline', got {regression!r}")
    if p_hat not in ("all", "test"):
        raise ValueError(f"p_hat must be 'all' or 'test', got {p_hat!r}")
    lab = _one_judge(labels, judge)
    y, yc, yt = _arrays(lab)
    m, n = lab.m, lab.n
    stats = LevelStats.from_arrays(y, yc, yt)
    binary_y, binary_judge = _is_binary(y), _is_binary(yc, yt)
    if binary_y:
        consequence = ("the EIF regression μ̂(Ŷ) is identically {value} and its plug-in "
                       "variance is 0, so there is no interval")
        _raise_if(_reason(*_class_rules(stats)),
                  {code: _class_message(code, m, consequence)
                   for code in (NO_POSITIVE, NO_NEGATIVE)})
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
        fit = line(levels) @ coef
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
        fit = design(levels) @ coef
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
        FEW_TEST: _few("the fitted values μ̂(Ŷ)", 1, int(m + n if p_hat == "all" else n)),
        FEW_CALIBRATION: _few("the calibration residuals Y - μ̂(Ŷ)", 1, m),
    })
    if binary_variance:
        info.update(p_hat_value=float(core.extra["p"]), variance="binary cell plug-in (SPEC §2.2)")
    else:
        info["variance"] = "Var(μ̂(Ŷ))/n_p + Var(Y - μ̂(Ŷ_cal))/m, ddof=1"
    name = "eif" + ("" if regression == "cells" else f"_{regression}") + (
        "_test" if p_hat == "test" else "")
    return _result(name, lab, float(core.estimate), float(core.variance), info)


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


def estimate(
    labels: Labels,
    prob: float = 0.9,
    judge: str | None = None,
    *,
    methods: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every seed-001 estimator of the human-label mean in one table.

    Runs :func:`naive`, :func:`rogan_gladen` (raw), :func:`ppi`, :func:`ppi_plus_plus`
    (unclipped λ̂), :func:`mle` (Newton, observed information) and :func:`eif` with their
    defaults. A method that is undefined on these data still gets its row, with NaN numbers,
    interval ``none`` and the reason in ``note``; the other methods run. Rogan–Gladen and the
    MLE are defined for binary labels only.

    The ``eif`` row is the cell-mean EIF (``p_hat="all"``) for a binary judge, and the spline
    EIF (``regression="spline"``, default df; method ``eif_spline``) for any other judge: cell
    means need at least two calibration items at every judge value, which scores and
    many-level ratings rarely give, and a spline with at most five coefficients is the cell
    means for a judge with up to five values anyway (when its knots are distinct).

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
    chosen = _chosen(methods, METHODS, prob)
    lab = _one_judge(labels, judge)
    name, _ = target(lab)
    binary_judge = _is_binary(lab.yhat_cal, lab.yhat_test)
    funcs: dict[str, Callable[[Labels], Estimate]] = {
        "naive": naive, "rogan_gladen": rogan_gladen, "ppi": ppi,
        "ppi_plus_plus": ppi_plus_plus, "mle": mle,
        "eif": eif if binary_judge else lambda x: eif(x, regression="spline"),
    }
    rows = []
    for method in chosen:
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
        rows.append(_row(est, prob, "; ".join(n for n in notes if n)))
    table = pd.DataFrame(rows, index=list(chosen))
    return table[[*COLUMNS, "note"]]


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


def _undefined_row(parameter: str, method: str, note: str) -> dict[str, Any]:
    return {"parameter": parameter, "method": method, "estimate": np.nan, "se": np.nan,
            "lower": np.nan, "upper": np.nan, "prob": np.nan, "interval": "none", "note": note}
