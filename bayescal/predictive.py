r"""Central predictive sets of an ordinal score from its predictive distribution (a leaf).

A predictive distribution :math:`\hat p` over the K points of an ordinal scale, with CDF
:math:`\hat F`, gives the observed level h the randomised probability integral transform
:math:`U = \hat F(h-1) + V \hat p(h)`, :math:`V \sim U(0, 1)` (Brockwell 2007; Czado, Gneiting and
Held 2009). The **randomised central set** at level 1 − α keeps h when
:math:`U \in [\alpha/2, 1 - \alpha/2]`: the levels strictly inside are kept, the two boundary
levels with the probabilities

.. math::
    w(h) = \frac{|[\hat F(h-1), \hat F(h)] \cap [\alpha/2, 1-\alpha/2]|}{\hat p(h)},

so that its mass under :math:`\hat p` is exactly 1 − α, and if :math:`\hat p` is the true
distribution then U is uniform and the set covers a new score with probability exactly 1 − α
(a deterministic set on K points can only reach some masses). The **conservative set** keeps
every level with w > 0 (mass ≥ 1 − α). Both are only as good as :math:`\hat p`: a plug-in of
estimated parameters is too narrow on few anchors (see ``models/score_calibration.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["CentralSet", "central_set", "inclusion"]


def _check(pmf: ArrayLike, prob: float) -> NDArray[np.float64]:
    p = np.asarray(pmf, dtype=np.float64)
    if p.ndim < 1 or p.shape[-1] < 2:
        raise ValueError(f"pmf needs a last axis of at least 2 levels, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any() or not np.allclose(p.sum(-1), 1, atol=1e-8):
        raise ValueError("pmf rows must be finite, non-negative and sum to 1")
    if isinstance(prob, bool) or not 0 < float(prob) < 1:
        raise ValueError(f"prob must be in (0, 1), got {prob!r}")
    return p


def inclusion(pmf: ArrayLike, prob: float) -> NDArray[np.float64]:
    r"""Inclusion probability :math:`w(h)` of every level in the randomised central set.

    Parameters
    ----------
    pmf : array (..., K)
        Predictive distribution(s) :math:`\hat p` over the K scale points.
    prob : float
        The set's level 1 − α.

    Returns
    -------
    array (..., K)
        :math:`w(h) \in [0, 1]`; :math:`\sum_h \hat p(h) w(h) = 1 - \alpha`. Given an observed
        level h, ``w[h]`` is the probability that the randomised set covers it.
    """
    p = _check(pmf, prob)
    alpha = 1.0 - float(prob)
    upper_cdf = np.cumsum(p, axis=-1)
    lower_cdf = upper_cdf - p
    overlap = np.clip(np.minimum(upper_cdf, 1 - alpha / 2) - np.maximum(lower_cdf, alpha / 2),
                      0.0, None)
    # a level of zero predictive mass has an empty PIT band: it is never in the set
    return np.where(p > 0, overlap / np.where(p > 0, p, 1.0), 0.0)


@dataclass(frozen=True)
class CentralSet:
    """Central predictive sets, one per leading index of the pmf (level indices 0..K−1).

    ``lower``, ``upper``: the conservative set ``lower..upper`` (mass ``mass`` ≥ prob);
    ``lower_weight``, ``upper_weight``: the randomised set's inclusion probabilities of those
    two boundary levels (the levels between are always kept; its mass is exactly prob).
    """

    lower: NDArray[np.int64]
    upper: NDArray[np.int64]
    lower_weight: NDArray[np.float64]
    upper_weight: NDArray[np.float64]
    mass: NDArray[np.float64]
    prob: float


def central_set(pmf: ArrayLike, prob: float) -> CentralSet:
    """The central predictive set at level ``prob`` of each predictive distribution (module
    docstring): the conservative set and the randomised set's boundary weights."""
    p = _check(pmf, prob)
    w = inclusion(p, prob)
    kept = w > 0
    lower = np.argmax(kept, axis=-1)
    upper = p.shape[-1] - 1 - np.argmax(kept[..., ::-1], axis=-1)
    take = np.take_along_axis
    return CentralSet(lower=lower, upper=upper,
                      lower_weight=take(w, lower[..., None], -1)[..., 0],
                      upper_weight=take(w, upper[..., None], -1)[..., 0],
                      mass=np.sum(np.where(kept, p, 0.0), axis=-1), prob=float(prob))
