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

This module is a leaf: numpy and scipy only, called by the twin
(:mod:`bayescal.frequentist.misclassification`) and anything else holding label patterns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import chdtrc  # chi2.sf, without importing scipy.stats (~1 s)

__all__ = ["ALPHA", "ConditionalDependenceWarning", "IndependenceTest", "labelled_test"]

#: Level of the test behind the warning: 1 % keeps false alarms rare on valid data.
ALPHA = 0.01
#: Bootstrap tables for the p-value (Monte Carlo sd of p near 0.01 about 0.003).
BOOTSTRAP = 999


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

    @property
    def rejects(self) -> bool:
        """The bootstrap p-value is below :data:`ALPHA`."""
        return self.p_value < self.alpha

    def as_info(self) -> dict[str, Any]:
        return {f"independence_{k}": v for k, v in asdict(self).items()}

    def message(self) -> str:
        return (f"the judges' labels are not conditionally independent given the human label "
                f"(the K-judge misclassification model's assumption): on the labelled items "
                f"G² = {self.g2:.3g} on {self.df} df, bootstrap p = {self.p_value:.3g} "
                f"(χ² p = {self.p_value_chi2:.2g}), so its intervals are too narrow and can miss "
                "the prevalence. Use one judge (judge_mean.ppi_plus_plus or the one-judge "
                "misclassification fit), which does not need this assumption")


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
