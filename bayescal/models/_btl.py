r"""The Bradley–Terry–Luce cell likelihood shared by the pairwise PyMC models.

A cell holds :math:`n` verdicts on one pair with linear predictor :math:`\eta` (the log odds
that item i is preferred) and :math:`y` wins of item i, a tie counting one half. The cell's
log density is the sum of its verdicts' Bernoulli log-likelihoods (no binomial coefficient):

.. math::

    y \log\sigma(\eta) + (n - y)\log\sigma(-\eta)
    = -y\,\mathrm{softplus}(-\eta) - (n - y)\,\mathrm{softplus}(\eta)
    = y\,\eta - n\,\mathrm{softplus}(\eta),

using :math:`\mathrm{softplus}(-\eta) = \mathrm{softplus}(\eta) - \eta`. The last form costs
one softplus per cell instead of two, in the log density and in its gradient
:math:`y - n\sigma(\eta)`. With ties :math:`y` is not an integer and the kernel is a
quasi-likelihood; predictive draws are tie-free binomial counts, since the models have no tie
mechanism.

Used by :mod:`~bayescal.models.judge_discrimination_btl` (Xu, Tan, Wu, Zhou 2026,
arXiv:2601.21817), :mod:`~bayescal.models.order_effect_btl` and the DIAL models (2026).
Models import the kernel from here, never from one another or from a frequentist twin.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from numpy.typing import NDArray
from scipy.special import expit

__all__ = ["draw_wins", "kernel_logp"]


def kernel_logp(
    value: pt.TensorVariable, eta: pt.TensorVariable, count: pt.TensorVariable
) -> pt.TensorVariable:
    r"""Per-cell log density :math:`y\eta - n\,\mathrm{softplus}(\eta)` (``logp`` of a CustomDist).

    Parameters
    ----------
    value : tensor
        Wins of item i per cell, :math:`y` (ties are halves).
    eta : tensor
        Linear predictor per cell, :math:`\eta`.
    count : tensor
        Verdicts per cell, :math:`n`.
    """
    return value * eta - count * pt.softplus(eta)


def draw_wins(
    eta: NDArray[np.float64],
    count: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """Predictive wins per cell: Binomial(n, σ(η)) counts (``random`` of a CustomDist)."""
    rng = rng if rng is not None else np.random.default_rng()
    p = expit(np.asarray(eta, dtype=np.float64))
    return rng.binomial(np.asarray(count).astype(np.int64), p, size=size).astype(np.float64)
