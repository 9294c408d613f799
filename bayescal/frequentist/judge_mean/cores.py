r"""Vectorised cores of the judge-mean estimators (Chen et al. 2026, arXiv:2601.05420).

Every formula of :mod:`bayescal.frequentist.judge_mean` lives once, here, in a private *core*
that takes the per-judge-level sufficient statistics (:class:`LevelStats`: for each distinct
judge value ℓ the calibration count, sum and within-level sum of squares of Y, and the test
count) and broadcasts over any leading axes (replicates, grid cells, random splits). A core
returns arrays of estimates and variances with a :class:`Reason` code (``DEFINED`` = 0; the
numbers are not to be read otherwise) instead of raising. The user-facing wrappers
(:mod:`bayescal.frequentist.judge_mean.estimators`) build the statistics of one data set, call
the same cores and turn a non-zero code into ``EstimatorUndefined`` with a full message;
:func:`binary_from_counts` (the six binary counts :data:`COUNT_NAMES`) and
:func:`discrete_from_stats` run the cores on whole arrays of data sets at once, for simulation
studies.

Nothing here imports PyMC or the data containers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri

from bayescal.frequentist.judge_mean import theory
from bayescal.schema import check_prob, resolve_prob, wald_interval

__all__ = [
    "BINARY_METHODS",
    "COUNT_NAMES",
    "DISCRETE_METHODS",
    "LevelStats",
    "Reason",
    "binary_from_counts",
    "discrete_from_stats",
    "rare_outcome_rule",
]

Array = NDArray[np.float64]


class Reason(IntEnum):
    """Why a core's estimate is undefined (``DEFINED``: it is not). The vectorised functions
    return these as int8 arrays; ``Reason(code).text`` says it in words."""

    DEFINED = 0
    NO_POSITIVE = 1
    NO_NEGATIVE = 2
    UNINFORMATIVE_JUDGE = 3
    FEW_CALIBRATION = 4
    FEW_TEST = 5
    SPARSE_JUDGE_CELL = 6
    MLE_BOUNDARY = 7

    @property
    def text(self) -> str:
        """The reason in words."""
        return _REASON_TEXT[self]


_REASON_TEXT = {
    Reason.DEFINED: "defined",
    Reason.NO_POSITIVE: "no Y=1 item in the calibration set",
    Reason.NO_NEGATIVE: "no Y=0 item in the calibration set",
    Reason.UNINFORMATIVE_JUDGE: ("judge labels carry no information about Y on the calibration "
                                 "set (κ̂ = q̂0 + q̂1 - 1 = 0)"),
    Reason.FEW_CALIBRATION: "too few calibration items for a sample variance",
    Reason.FEW_TEST: "too few test items for a sample variance",
    Reason.SPARSE_JUDGE_CELL: ("a judge value where the cell means are averaged has fewer than "
                               "2 calibration items (its cell mean is missing or has no "
                               "variance)"),
    Reason.MLE_BOUNDARY: ("MLE on the boundary: an empty calibration cell puts q̂0, q̂1 or θ̂ "
                          "at 0 or 1"),
}

#: The six binary counts, in this order on the last axis of an array given to
#: :func:`binary_from_counts`: calibration N_ab = #{Y=a, Ŷ=b}, test T_b = #{Ŷ=b}.
COUNT_NAMES = ("N11", "N10", "N01", "N00", "T1", "T0")

#: Methods of :func:`binary_from_counts`.
BINARY_METHODS = ("naive", "rogan_gladen", "rogan_gladen_smoothed", "ppi", "ppi_plus_plus",
                  "eif", "eif_test", "mle", "mle_expected")

#: Methods of :func:`discrete_from_stats`.
DISCRETE_METHODS = ("naive", "ppi", "ppi_plus_plus", "ppi_plus_plus_clipped", "eif",
                    "eif_test", "eif_linear")

# PPI++: below this denominator of λ̂ the judge labels are (numerically) constant and λ̂ = 0/0;
# the authors' R package then falls back to λ = 1 (plain PPI), and so do we.
_LAMBDA_DENOMINATOR_MIN = 1e-10


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
        if _is_01(yc) and _is_01(yt):
            # a 0/1 judge: its labels are their own level codes (sorting a million test
            # labels for np.unique costs ~20 ms, this ~2 ms)
            t1 = float(np.count_nonzero(yt))
            ic = yc.astype(np.intp)
            test_n = np.array([len(yt) - t1, t1])
            present = (np.bincount(ic, minlength=2) + test_n) > 0
            levels = np.flatnonzero(present).astype(np.float64)
            test_n = test_n[present]
            if not present[0]:
                ic = ic - 1
        else:
            levels = np.unique(np.concatenate([yc, yt]))
            ic, it = np.searchsorted(levels, yc), np.searchsorted(levels, yt)
            test_n = np.bincount(it, minlength=len(levels)).astype(np.float64)
        n_levels = len(levels)
        cal_n = np.bincount(ic, minlength=n_levels).astype(np.float64)
        cal_sum = np.bincount(ic, weights=y, minlength=n_levels)
        mean = np.divide(cal_sum, cal_n, out=np.zeros(n_levels), where=cal_n > 0)
        cal_ss = np.bincount(ic, weights=(y - mean[ic]) ** 2, minlength=n_levels)
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


def _is_01(values: Array) -> bool:
    """Every value is 0 or 1 (an empty array is)."""
    return bool(((values == 0) | (values == 1)).all())


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
        ok = self.reason == Reason.DEFINED
        return np.where(ok, self.estimate, np.nan), np.where(ok, self.variance, np.nan)


def _reason(*rules: tuple[ArrayLike, int]) -> NDArray[np.int8]:
    """First matching (condition, code) wins, as the checks of the Labels functions run."""
    conds = [np.asarray(c, dtype=bool) for c, _ in rules]
    if not conds:
        return np.zeros((), dtype=np.int8)
    shape = np.broadcast_shapes(*(c.shape for c in conds))
    out = np.select([np.broadcast_to(c, shape) for c in conds], [code for _, code in rules],
                    default=Reason.DEFINED)
    return out.astype(np.int8)


def _either(first: NDArray[np.int8], then: NDArray[np.int8]) -> NDArray[np.int8]:
    """Reason codes of two steps run in order: the first step's code where it has one."""
    return np.where(first != Reason.DEFINED, first, then).astype(np.int8)


def _class_rules(stats: LevelStats) -> list[tuple[Array, int]]:
    """Binary Y: both human classes must appear in the calibration set."""
    m1 = stats.cal_sum.sum(-1)
    return [(m1 == 0, Reason.NO_POSITIVE), (m1 == stats.m, Reason.NO_NEGATIVE)]


def _naive_core(s: LevelStats, binary: bool) -> _Core:
    r"""Test-set judge mean; variance :math:`\hat p(1-\hat p)/n` (binary) or ddof=1 over n."""
    mo = _moments(s)
    n = mo.n
    with np.errstate(divide="ignore", invalid="ignore"):
        if binary:
            var = mo.t_bar * (1 - mo.t_bar) / n
            reason = _reason((n < 1, Reason.FEW_TEST))
        else:
            var = mo.s_tt / (n - 1) / n
            reason = _reason((n <= 1, Reason.FEW_TEST))
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
    reason = _reason((m <= ddof, Reason.FEW_CALIBRATION), (n <= ddof, Reason.FEW_TEST))
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
    reason = _reason((m <= 1, Reason.FEW_CALIBRATION), (n <= 1, Reason.FEW_TEST))
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
    reason = _reason((m1 == 0, Reason.NO_POSITIVE), (m0 == 0, Reason.NO_NEGATIVE),
                     # the correction needs κ ≠ 0 only (Chen et al. 2026, eq. 5): an
                     # inverted judge (κ < 0) is corrected like any other
                     (~(kappa != 0), Reason.UNINFORMATIVE_JUDGE))
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
    binary cell plug-in :math:`(\hat\mu_1-\hat\mu_0)^2\hat p(1-\hat p)/n_p +
    (1-\hat p)^2\hat\mu_0(1-\hat\mu_0)/m'_0 + \hat p^2\hat\mu_1(1-\hat\mu_1)/m'_1` or
    :math:`\mathrm{Var}(\hat\mu(\hat Y))/n_p + \mathrm{Var}(Y - \hat\mu(\hat Y_{cal}))/m`, ddof=1.
    ``sparse_cells_undefined`` (cell means): a level where μ̂ is averaged with fewer than two
    calibration items sets :data:`Reason.SPARSE_JUDGE_CELL`.
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
        rules.append((np.any(_sparse_cells(s, p_hat), axis=-1), Reason.SPARSE_JUDGE_CELL))
    if not binary_variance:
        rules += [(n_p <= 1, Reason.FEW_TEST), (m <= 1, Reason.FEW_CALIBRATION)]
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
    reason = _reason(*_class_rules(s), (empty, Reason.MLE_BOUNDARY))
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
    prob: float | None = None,
    *,
    methods: Iterable[str] | None = None,
    ci_prob: float | None = None,
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
        ``reason`` (int8 :class:`Reason` codes; 0 = defined).
    """
    prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
    chosen = _chosen(methods, BINARY_METHODS, prob)
    s = LevelStats.from_counts(counts)
    mo = _moments(s)
    z = float(ndtri(0.5 + prob / 2))
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


#: Sugden, Smith and Jones (2000)'s form of Cochran's rule: the mean of n independent draws is
#: close enough to normal for a 95 % interval when n > 28 + 25·G1², G1 the skewness of one draw
#: (Cochran 1977, *Sampling Techniques*, stated n > 25·G1²; Sugden et al. derived the rule, with
#: its constant, from the Edgeworth expansion of the sample mean's distribution).
NORMAL_MEAN_BASE = 28.0
NORMAL_MEAN_SLOPE = 25.0


def rare_outcome_rule(m1: ArrayLike, m: ArrayLike) -> dict[str, Array]:
    r"""The rare-outcome flag of the Wald rows, from the calibration human labels' counts.

    Every Wald row of a binary judge mean leans on the calibration mean of the human labels,
    :math:`\bar Y = m_1/m`, being close to normal. Its skewness is that of one label over
    :math:`\sqrt m`, and the plug-in skewness of m labels with :math:`m_1` ones is
    :math:`\hat G_1 = (1 - 2\hat p)/\sqrt{\hat p(1 - \hat p)}`, :math:`\hat p = m_1/m`
    (the biased sample skewness :math:`m_3/m_2^{3/2}` of 0/1 data). The flag is Sugden, Smith
    and Jones (2000)'s rule :math:`m < 28 + 25\hat G_1^2` (:data:`NORMAL_MEAN_BASE`,
    :data:`NORMAL_MEAN_SLOPE`): about :math:`\min(m_0, m_1) < 25` for a rare class, fewer for
    a balanced one, and it always fires below ten items of the rarer class. Vectorised over
    the inputs' broadcast shape.

    Returns
    -------
    dict
        ``skewness`` (:math:`\hat G_1`; ±inf with one class absent, NaN at m = 0),
        ``m_required`` (:math:`28 + 25\hat G_1^2`) and ``flagged`` (m below it).
    """
    ones = np.asarray(m1, dtype=np.float64)
    size = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ones / size
        skew = np.where(p <= 0, np.inf, np.where(p >= 1, -np.inf,
                                                 (1 - 2 * p) / np.sqrt(p * (1 - p))))
        skew = np.where(size > 0, skew, np.nan)
        required = NORMAL_MEAN_BASE + NORMAL_MEAN_SLOPE * skew**2
    return {"skewness": skew, "m_required": required, "flagged": size < required}


def discrete_from_stats(
    stats: LevelStats,
    prob: float | None = None,
    *,
    interval: Literal["wald", "wald-logit"] = "wald",
    ci_prob: float | None = None,
) -> dict[str, dict[str, Array]]:
    r"""Naive, PPI, PPI++ and EIF (cells, linear) on many data sets with a discrete judge.

    Vectorised over the leading axes of ``stats`` (:class:`LevelStats`); the same cores and
    conventions as :func:`naive`, :func:`ppi`, :func:`ppi_plus_plus` and :func:`eif` with
    non-binary labels (ddof=1 sample variances; the cell EIF is undefined, reason
    :data:`Reason.SPARSE_JUDGE_CELL`, where a judge level it averages has fewer than two calibration
    items). Methods (:data:`DISCRETE_METHODS`): ``ppi_plus_plus`` (unclipped λ̂) and
    ``ppi_plus_plus_clipped`` (λ̂ in [0, 1]); ``eif`` / ``eif_test`` (cell means, p̂ over all N /
    over the test set); ``eif_linear`` (OLS :math:`a + b\hat y`, b = Ĉov/V̂ar over calibration,
    b = 0 when the calibration judge labels are constant; μ̂ averaged over all N).

    Returns
    -------
    dict
        As :func:`binary_from_counts`, with ``interval``-kind intervals (plain Wald by default).
    """
    prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
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
                      Reason.SPARSE_JUDGE_CELL))
    out["eif_linear"] = _pack(_Core(core.estimate, core.variance, _either(core.reason, sparse)),
                              prob, interval)
    return out


def _interval_kind(name: str, value: ArrayLike) -> NDArray[np.bool_]:
    """Where the logit interval of a prevalence applies: the estimate inside [0, 1] (the logit
    interval of :func:`bayescal.schema.wald_interval` keeps an estimate of exactly 0 or 1,
    such as a Rogan–Gladen estimate clipped to 1). Outside it (a PPI estimate below 0) a
    logit interval would exclude the estimate, so the plain Wald interval is used there."""
    v = np.asarray(value, dtype=np.float64)
    out: NDArray[np.bool_] = (name == "prevalence") & (v >= 0) & (v <= 1)
    return out


