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
from scipy.special import expit, softmax

from bayescal.priors import check_feature_pooling

__all__ = ["davidson_logp", "davidson_outcome", "draw_wins", "feature_term", "kernel_logp"]


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


def _draw_trinomial(
    eta: NDArray[np.float64], log_nu: NDArray[np.float64], count: NDArray[np.float64],
    rng: np.random.Generator | None = None, size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """Predictive (wins, ties, losses) per cell under Davidson's model."""
    rng = rng if rng is not None else np.random.default_rng()
    eta, log_nu = np.broadcast_arrays(np.asarray(eta, float), np.asarray(log_nu, float))
    p = softmax(np.stack([eta / 2, log_nu, -eta / 2], axis=-1), axis=-1)
    n = np.broadcast_to(np.asarray(count).astype(np.int64), p.shape[:-1])
    return rng.multinomial(n, p, size=size).astype(np.float64)


def _davidson_value(
    value: pt.TensorVariable, eta: pt.TensorVariable, log_nu: pt.TensorVariable,
    count: pt.TensorVariable,
) -> pt.TensorVariable:
    # value holds (wins, ties, losses) in its last axis; count is implied by them
    return davidson_logp(value[..., 0], value[..., 1], value[..., 2], eta, log_nu)


def davidson_outcome(
    eta: pt.TensorVariable, judge: pt.TensorVariable, count: pt.TensorVariable,
    outcomes: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    tie_sd: float | None,
) -> pt.TensorVariable:
    r"""Davidson's tie model inside a pairwise model: ``log_tie``, ``tie`` and ``outcome``.

    Adds the coordinate ``verdict`` = (win, tie, loss), ``log_tie`` (dims judge,
    :math:`\log\nu_k \sim N(0, \text{tie\_sd}^2)`, flat with ``tie_sd=None``), the
    deterministic ``tie`` (:math:`\nu_k`) and the observed ``outcome`` (dims cell x verdict)
    with the per-cell log density :func:`davidson_logp`. The model must have the ``judge`` and
    ``cell`` coordinates.

    Parameters
    ----------
    eta : tensor
        Linear predictor per cell, :math:`\eta`.
    judge : tensor
        Judge code of each cell.
    count : tensor
        Verdicts per cell (for predictive draws).
    outcomes : (wins, ties, losses)
        Per cell (``Comparisons.outcome_counts``).
    tie_sd : float or None
        Prior scale of :math:`\log\nu_k`.
    """
    model = pm.modelcontext(None)
    model.add_coord("verdict", ["win", "tie", "loss"])
    if tie_sd is not None:
        log_tie = pm.Normal("log_tie", 0.0, tie_sd, dims="judge")
    else:
        log_tie = pm.Flat("log_tie", dims="judge")
    pm.Deterministic("tie", pt.exp(log_tie), dims="judge")
    return pm.CustomDist(
        "outcome", eta, log_tie[judge], count, logp=_davidson_value, random=_draw_trinomial,
        observed=np.stack(outcomes, axis=1), dims=("cell", "verdict"),
        signature="(),(),()->(3)",
    )


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
