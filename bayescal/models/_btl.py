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

With ``ties="davidson"`` the models use instead the Davidson (1970) trinomial kernel
(:func:`davidson_logp`): with :math:`w, t, l` the wins, ties and losses of item i and a tie
parameter :math:`\nu > 0`,
:math:`P(\text{win}) = e^{\eta/2}/D`, :math:`P(\text{tie}) = \nu/D`,
:math:`P(\text{loss}) = e^{-\eta/2}/D`, :math:`D = e^{\eta/2} + e^{-\eta/2} + \nu`,
which is Davidson's :math:`\pi_i/(\pi_i + \pi_j + \nu\sqrt{\pi_i\pi_j})` divided through
by :math:`\sqrt{\pi_i\pi_j}` with :math:`\eta = \log\pi_i - \log\pi_j`.

With comparison features the pairwise models add judge k's feature effect to the predictor,
:math:`\eta \mathrel{+}= \beta_k^\top(x_i - x_j)` (:func:`feature_term`, one prior and one
variable ``feature_effect`` (judge, feature) for all of them).

Used by :mod:`~bayescal.models.judge_discrimination_btl` (Xu, Tan, Wu, Zhou 2026,
arXiv:2601.21817), :mod:`~bayescal.models.order_effect_btl` and the DIAL models (2026).
Models import the kernel from here, never from one another or from a frequentist twin.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from numpy.typing import NDArray
from scipy.special import expit

from bayescal.priors import check_feature_pooling

__all__ = ["davidson_logp", "draw_wins", "feature_term", "kernel_logp"]


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


def davidson_logp(
    wins: pt.TensorVariable,
    ties: pt.TensorVariable,
    losses: pt.TensorVariable,
    eta: pt.TensorVariable,
    log_nu: pt.TensorVariable,
) -> pt.TensorVariable:
    r"""Per-cell Davidson (1970) log density (no multinomial coefficient).

    :math:`(w - l)\eta/2 + t\log\nu - (w + t + l)\log(e^{\eta/2} + e^{-\eta/2} + \nu)`,
    the sum over the cell's verdicts of their trinomial log-probabilities.

    Parameters
    ----------
    wins, ties, losses : tensor
        Verdicts won, tied and lost by item i per cell (:math:`w, t, l`).
    eta : tensor
        Linear predictor per cell, :math:`\eta = \log\pi_i - \log\pi_j`.
    log_nu : tensor
        Log tie parameter per cell, :math:`\log\nu`.
    """
    half = eta / 2
    log_d = pt.logsumexp(pt.stack([half, -half, log_nu + pt.zeros_like(half)]), axis=0)
    return (wins - losses) * half + ties * log_nu - (wins + ties + losses) * log_d


def feature_term(features: NDArray[np.float64], judge: pt.TensorVariable,
                 sd: float | None, pooling: str = "none",
                 pooling_sd: float = 0.5) -> pt.TensorVariable:
    r"""Judge k's feature effect per cell, :math:`\beta_k^\top(x_i - x_j)`, inside a model.

    Adds ``features`` (data, dims cell x feature) and ``feature_effect`` (dims judge x feature,
    :math:`\beta`), with one of three priors across judges (``pooling``, the same for every
    pairwise model):

    * ``"none"``: :math:`\beta_{kf} \sim N(0, \sigma^2)` independently (flat with
      ``sd=None``, for MAP = MLE);
    * ``"shared"``: one effect for every judge, :math:`\beta_{kf} = \bar\beta_f \sim N(0,
      \sigma^2)` (``feature_effect_shared``, dims feature; flat with ``sd=None``): the style
      control of a single leaderboard;
    * ``"partial"``: :math:`\beta_{kf} \sim N(\bar\beta_f, \tau_f^2)`,
      :math:`\bar\beta_f \sim N(0, \sigma^2)` (``feature_effect_mean``; flat with
      ``sd=None``), :math:`\tau_f \sim \text{HalfNormal}(\text{pooling\_sd})`
      (``feature_effect_scale``), written non-centred (``feature_effect_free`` standard
      normal, :math:`\beta = \bar\beta + \tau z`) so NUTS does not meet the funnel of a
      small τ. Its MAP is degenerate (τ → 0 has no finite mode in general): fit it by NUTS.

    The model must have the ``judge``, ``feature`` and ``cell`` coordinates.

    Parameters
    ----------
    features : array (cells x features)
        Each cell's feature differences :math:`x_i - x_j` (``Comparisons.features``).
    judge : tensor
        Judge code of each cell.
    sd : float or None
        Prior scale of each :math:`\beta_{kf}` (or of the shared / mean effect) in logits per
        unit of the difference.
    pooling : {"none", "shared", "partial"}
        See above (:data:`bayescal.priors.FEATURE_POOLING`).
    pooling_sd : float
        Scale of the half-normal prior on :math:`\tau_f` (``"partial"`` only).
    """
    check_feature_pooling(pooling, pooling_sd)
    x = pm.Data("features", features, dims=("cell", "feature"))

    def normal_or_flat(name: str, dims: str | tuple[str, ...]) -> pt.TensorVariable:
        if sd is None:
            return pm.Flat(name, dims=dims)
        return pm.Normal(name, 0.0, sd, dims=dims)

    if pooling == "none":
        beta = normal_or_flat("feature_effect", ("judge", "feature"))
    elif pooling == "shared":
        common = normal_or_flat("feature_effect_shared", "feature")
        n_judges = pm.modelcontext(None).dim_lengths["judge"]
        beta = pm.Deterministic("feature_effect", pt.ones((n_judges, 1)) * common,
                                dims=("judge", "feature"))
    else:
        mean = normal_or_flat("feature_effect_mean", "feature")
        scale = pm.HalfNormal("feature_effect_scale", pooling_sd, dims="feature")
        z = pm.Normal("feature_effect_free", 0.0, 1.0, dims=("judge", "feature"))
        beta = pm.Deterministic("feature_effect", mean + scale * z, dims=("judge", "feature"))
    return (x * beta[judge]).sum(axis=1)
