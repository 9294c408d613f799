r"""Conditional independence of several judges given the human label: a likelihood-ratio test.

The multi-judge misclassification model (Chen, Lu, Li, Guo and Li 2026, arXiv:2601.05420,
extended to K judges) assumes :math:`P(\hat Y_1..\hat Y_K \mid Y) = \prod_k P(\hat Y_k \mid Y)`.
On the labelled items this is testable whenever K ≥ 2: within each human class y the
:math:`2^K` judge-label patterns form a multinomial table, and conditional independence is the
mutual-independence model of that table, whose MLE is the product of the judges' label rates
within the class. The statistic is

.. math:: G^2 = 2 \sum_y \sum_p n_{yp} \log\frac{n_{yp}}{\hat E_{yp}},\qquad
          \hat E_{yp} = m_y \prod_k \hat r_{yk}^{p_k}(1 - \hat r_{yk})^{1 - p_k},

with :math:`\hat r_{yk}` judge k's rate of label 1 among the :math:`m_y` items of class y, on
:math:`\sum_y (2^K - 1 - K)` degrees of freedom (a class with fewer than two items adds none).

Sparse tables. With K = 4 judges and 50 labelled items the table has 32 cells and most expected
counts are below one, where the χ² reference is unreliable. Pooling cells would change the
hypothesis tested and its degrees of freedom in ways that depend on the data, so the p-value
used for the decision is a parametric bootstrap instead: tables drawn from the fitted
independence model with the same class sizes, each refitted in closed form (exact up to Monte
Carlo error, whatever the sparsity; a fixed seed makes it reproducible). The χ² p-value is
reported beside it.

All items' patterns (:func:`pattern_test`). Summed over the human label, the model says
every item's judge pattern is drawn from the two-class latent-class distribution
:math:`P(p) = \theta\prod_k q_{1k}^{p_k}(1 - q_{1k})^{1 - p_k}
+ (1 - \theta)\prod_k (1 - q_{0k})^{p_k} q_{0k}^{1 - p_k}`, whatever the items' labelling. Its
goodness of fit to the :math:`2^K` pattern counts of all items (labelled and not) is the
likelihood ratio against the saturated multinomial, on :math:`2^K - 1 - (2K + 1)` df: 6 for
K = 4, none for K ≤ 3 (the model is then saturated on the patterns). This test sees the
unlabelled items, which the labelled test cannot. Its p-value is a parametric bootstrap too:
tables drawn from the fitted pattern distribution, each refitted by EM steps from the fit
(all tables at once). Rates at 0 or 1 (a judge that never errs, a degenerate replicate) would
make the log-probabilities -inf and the E-step 0/0: the EM clips every rate to
``[1e-9, 1 - 1e-9]``, so each replicate keeps a finite statistic.

This module is a leaf: numpy and scipy only, called by the twin
(:mod:`bayescal.frequentist.misclassification`) and anything else holding label patterns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import chdtrc  # chi2.sf, without importing scipy.stats (~1 s)

__all__ = ["ALPHA", "ConditionalDependenceWarning", "IndependenceTest", "dependence_message",
           "labelled_test", "pattern_test"]

#: Level of the test behind the warning: 1 % keeps false alarms rare on valid data.
ALPHA = 0.01
#: Bootstrap tables for the p-value (Monte Carlo sd of p near 0.01 about 0.003).
BOOTSTRAP = 999
#: EM steps refitting each bootstrap table from the fit (the all-items test).
BOOTSTRAP_EM_STEPS = 100
# EM on the observed pattern table: until the largest change is below this, or the budget.
_EM_TOL = 1e-10
_EM_MAX = 5000
# Rates are clipped here in the EM (module docstring: degenerate fits).
_RATE_CLIP = 1e-9
#: What the warning points to when the judges are dependent.
REMEDY = ("Fit bayescal.frequentist.misclassification_dependent.fit (an item effect shared by "
          "the judges, which allows this dependence; from the shell `bayescal fit "
          "misclassification-dependent`), or use one judge "
          "(judge_mean.ppi_plus_plus or the one-judge misclassification fit), which does not "
          "need this assumption")


class ConditionalDependenceWarning(UserWarning):
    """The judges' labels are dependent given the human label: the K-judge model's intervals
    (which assume conditional independence) do not hold."""


@dataclass(frozen=True)
class IndependenceTest:
    """Result of :func:`labelled_test` (its fields go into ``Estimate.info``)."""

    g2: float
    df: int
    p_value: float
    p_value_chi2: float
    bootstrap: int
    alpha: float
    items: str = "labelled"

    @property
    def rejects(self) -> bool:
        """The bootstrap p-value is below :data:`ALPHA`."""
        return self.p_value < self.alpha

    def as_info(self) -> dict[str, Any]:
        """Fields keyed ``independence_*`` (labelled items) or ``pattern_independence_*``."""
        prefix = "independence_" if self.items == "labelled" else "pattern_independence_"
        return {f"{prefix}{k}": v for k, v in asdict(self).items() if k != "items"}

    def statistic(self) -> str:
        """One phrase: where, G², df, both p-values."""
        where = ("on the labelled items (within each human class)" if self.items == "labelled"
                 else "on all items' judge-label patterns (latent-class fit)")
        return (f"{where}: G² = {self.g2:.3g} on {self.df} df, bootstrap p = {self.p_value:.3g} "
                f"(χ² p = {self.p_value_chi2:.2g})")

    def message(self) -> str:
        return dependence_message([self])


def dependence_message(tests: list[IndependenceTest | None]) -> str:
    """One warning text naming the assumption and every test's statistic (rejecting or not)."""
    shown = [t for t in tests if t is not None]
    return ("the judges' labels are not conditionally independent given the human label "
            "(the K-judge misclassification model's assumption): "
            + "; ".join(t.statistic() + (" rejects" if t.rejects else " does not reject")
                        for t in shown)
            + f" at level {ALPHA:g}, so its intervals are too narrow and can miss the "
            "prevalence. " + REMEDY)


def _g2(counts: NDArray[np.float64], expected: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log(counts / expected), 0.0)
    return np.asarray(2 * terms.sum(axis=(-2, -1)))


def _expected(counts: NDArray[np.float64], bits: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mutual-independence expected counts per class: counts (..., class, pattern)."""
    size = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = (counts @ bits) / size  # (..., class, judge)
    prob = np.prod(np.where(bits[None, :, :] == 1, rate[..., None, :], 1 - rate[..., None, :]),
                   axis=-1)
    return np.asarray(np.nan_to_num(size * prob))


def labelled_test(yhat: ArrayLike, y: ArrayLike, count: ArrayLike, *,
                  bootstrap: int = BOOTSTRAP, seed: int = 0) -> IndependenceTest | None:
    """G² test of conditional independence of the judges given Y on the labelled items.

    Parameters
    ----------
    yhat : array (pattern, judge)
        0/1 judge labels of each calibration pattern.
    y : array (pattern,)
        0/1 human label of each pattern.
    count : array (pattern,)
        Items with that pattern.
    bootstrap : int
        Tables drawn for the parametric-bootstrap p-value.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    IndependenceTest or None
        None when the hypothesis is not testable (one judge, or no class with two items).
    """
    yhat = np.asarray(yhat, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    count = np.asarray(count, dtype=np.float64)
    k = yhat.shape[1]
    if k < 2:
        return None
    bits = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(np.float64)
    code = (yhat.astype(np.int64) << np.arange(k)).sum(axis=1)
    table = np.zeros((2, 2**k))
    np.add.at(table, (y, code), count)
    sizes = table.sum(axis=1)
    df = int(sum(2**k - 1 - k for s in sizes if s >= 2))
    if df == 0:
        return None
    expected = _expected(table, bits)
    g2 = float(_g2(table, expected))
    rng = np.random.default_rng(seed)
    draws = np.stack([rng.multinomial(int(s), e / s if s > 0 else np.full(2**k, 2.0**-k),
                                      size=bootstrap)
                      for s, e in zip(sizes, expected, strict=True)], axis=1).astype(np.float64)
    g2_boot = _g2(draws, _expected(draws, bits))
    # the (b + 1)/(B + 1) rule: the observed table counts as one draw, so p is never 0
    p_boot = float((np.sum(g2_boot >= g2 - 1e-9) + 1) / (bootstrap + 1))
    return IndependenceTest(g2=g2, df=df, p_value=p_boot, p_value_chi2=float(chdtrc(df, g2)),
                            bootstrap=bootstrap, alpha=ALPHA)


# ------------------------------------------------------------------ all items' patterns
def _lc_logprob(theta: NDArray[np.float64], q0: NDArray[np.float64], q1: NDArray[np.float64],
                bits: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """log θ P(p | 1) and log (1 - θ) P(p | 0) per pattern: (..., pattern) from (...,), (..., K)."""
    q0 = np.clip(q0, _RATE_CLIP, 1 - _RATE_CLIP)
    q1 = np.clip(q1, _RATE_CLIP, 1 - _RATE_CLIP)
    theta = np.clip(theta, _RATE_CLIP, 1 - _RATE_CLIP)
    la1 = np.log(theta)[..., None] + np.log(q1) @ bits.T + np.log1p(-q1) @ (1 - bits).T
    la0 = np.log1p(-theta)[..., None] + np.log1p(-q0) @ bits.T + np.log(q0) @ (1 - bits).T
    return la1, la0


def _lc_em(counts: NDArray[np.float64], bits: NDArray[np.float64], theta: NDArray[np.float64],
           q0: NDArray[np.float64], q1: NDArray[np.float64], steps: int, tol: float
           ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """EM of the two-class latent-class model on pattern tables counts (..., pattern)."""
    total = counts.sum(axis=-1)
    for _ in range(steps):
        la1, la0 = _lc_logprob(theta, q0, q1, bits)
        w = 1 / (1 + np.exp(la0 - la1))  # P(Y = 1 | pattern)
        cw, cv = counts * w, counts * (1 - w)
        s1, s0 = cw.sum(axis=-1), cv.sum(axis=-1)
        new_theta = s1 / total
        with np.errstate(invalid="ignore", divide="ignore"):
            new_q1 = np.nan_to_num((cw @ bits) / s1[..., None], nan=0.5)
            new_q0 = np.nan_to_num((cv @ (1 - bits)) / s0[..., None], nan=0.5)
        change = max(float(np.max(np.abs(new_theta - theta))),
                     float(np.max(np.abs(new_q0 - q0))), float(np.max(np.abs(new_q1 - q1))))
        theta, q0, q1 = new_theta, new_q0, new_q1
        if change < tol:
            break
    return theta, q0, q1


def _lc_g2(counts: NDArray[np.float64], bits: NDArray[np.float64], theta: NDArray[np.float64],
           q0: NDArray[np.float64], q1: NDArray[np.float64]) -> NDArray[np.float64]:
    la1, la0 = _lc_logprob(theta, q0, q1, bits)
    log_p = np.logaddexp(la1, la0)
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * (np.log(counts / total) - log_p), 0.0)
    return np.asarray(2 * terms.sum(axis=-1))


def pattern_test(yhat: ArrayLike, count: ArrayLike, prevalence: float,
                 specificity: ArrayLike, sensitivity: ArrayLike, *,
                 bootstrap: int = BOOTSTRAP, em_steps: int = BOOTSTRAP_EM_STEPS, seed: int = 0
                 ) -> IndependenceTest | None:
    r"""Goodness of fit of the K-judge latent-class model to all items' judge-label patterns.

    Parameters
    ----------
    yhat : array (pattern, judge)
        0/1 judge labels of each pattern; every item counts (labelled or not, human label
        ignored). Repeated rows are added up.
    count : array (pattern,)
        Items with that pattern.
    prevalence, specificity, sensitivity : float, array (judge,), array (judge,)
        The fitted model (θ, q0, q1): the start of the EM that fits the pattern table, which
        picks the orientation of the two latent classes (the table alone cannot tell Y from
        1 - Y).
    bootstrap : int
        Tables drawn from the fitted pattern distribution for the p-value.
    em_steps : int
        EM steps refitting each bootstrap table, started at the fit of the observed table.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    IndependenceTest or None
        ``items="all"``: :math:`G^2 = 2\sum_p n_p \log(n_p / (N \hat P(p)))` at the EM fit,
        on :math:`2^K - 2K - 2` df; None when that is not positive (K ≤ 3).
    """
    yhat = np.asarray(yhat, dtype=np.int64)
    count = np.asarray(count, dtype=np.float64)
    k = yhat.shape[1]
    df = 2**k - 2 * k - 2
    if df <= 0:
        return None
    bits = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(np.float64)
    table = np.bincount((yhat << np.arange(k)).sum(axis=1), weights=count, minlength=2**k)
    theta, q0, q1 = _lc_em(table, bits, np.asarray(float(prevalence)),
                           np.asarray(specificity, dtype=np.float64),
                           np.asarray(sensitivity, dtype=np.float64), _EM_MAX, _EM_TOL)
    g2 = float(_lc_g2(table, bits, theta, q0, q1))
    la1, la0 = _lc_logprob(theta, q0, q1, bits)
    prob = np.exp(np.logaddexp(la1, la0))
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(round(table.sum()), prob / prob.sum(),
                            size=bootstrap).astype(np.float64)
    bt, b0, b1 = _lc_em(draws, bits, np.full(bootstrap, theta), np.tile(q0, (bootstrap, 1)),
                        np.tile(q1, (bootstrap, 1)), em_steps, _EM_TOL)
    g2_boot = _lc_g2(draws, bits, bt, b0, b1)
    p_boot = float((np.sum(g2_boot >= g2 - 1e-9) + 1) / (bootstrap + 1))
    return IndependenceTest(g2=g2, df=df, p_value=p_boot, p_value_chi2=float(chdtrc(df, g2)),
                            bootstrap=bootstrap, alpha=ALPHA, items="all")
