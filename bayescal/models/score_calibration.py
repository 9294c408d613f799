r"""Monotone ordinal calibration map in PyMC: a posterior over the map from judge to human scores.

The Bayesian counterpart of streaming quantile matching (Subasic, Rabinovich and Chen 2026,
arXiv:2611.00447): a posterior over the calibration map from judge levels to human scores, so
that a user sees how far to trust it after a few dozen anchors (where SQM's empirical map is
noisy). The human score
of an item with judge level j follows a cumulative logit
:math:`P(H \le k \mid J = j) = \sigma(c_k - \beta_j)`, with ordered cutpoints and a
non-decreasing level effect :math:`\beta_1 = 0,\ \beta_j = \sum_{l<j} e^{\delta_l}`.

==========================  ========================  ============================================
name                        dims                      meaning (symbol)
==========================  ========================  ============================================
``cutpoint_first``          —                         first cutpoint (c_1), free
``cutpoint_log_gap``        gap                       log(c_{k+1} − c_k), free
``log_increment``           step                      δ_l, log increment of the level effect, free
``cutpoint``                threshold                 ordered cutpoints c_k
``level_effect``            judge_level               β_j, non-decreasing, β at the lowest = 0
``calibrated_probability``  judge_level, human_level  P(H = v | J = j): the calibrated distribution
``calibrated_mean``         judge_level               E[H | J = j]: the calibrated score
``outcome``                 anchor_level, human_level anchors' human scores per judge level (obs.)
==========================  ========================  ============================================

The likelihood is multinomial over cells (judge level, human level) of
:meth:`bayescal.data.Ratings.rating_counts`, the same as the twin
``bayescal.frequentist.score_calibration`` (tested equal; this module imports no twin). See
``models/score_calibration.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayescal.data import Ratings
from bayescal.predictive import central_set
from bayescal.priors import check_prior_sd
from bayescal.schema import resolve_prob

__all__ = ["Priors", "build", "calibration_table", "predictive_sets"]


@dataclass(frozen=True)
class Priors:
    """Priors of the monotone ordinal calibration model.

    Attributes
    ----------
    cutpoint_sd : float or None
        σ of ``cutpoint_first ~ Normal(0, σ)`` (3: the lowest judge level's P(H ≤ lowest)
        anywhere between ~0.003 and ~0.997 a priori). None = flat.
    gap_log_sd : float or None
        σ of ``cutpoint_log_gap ~ Normal(0, σ)``: adjacent cutpoints about 1 logit apart,
        within a factor e^{2σ} (1). None = flat.
    increment_log_mean, increment_log_sd : float, float or None
        ``log_increment ~ Normal(mean, sd)`` (−0.5, 1.5): one judge level moves the human score
        by ~0.6 logit a priori, anywhere from 0.03 to 12 logits (95 %). None = flat.
    """

    cutpoint_sd: float | None = 3.0
    gap_log_sd: float | None = 1.0
    increment_log_mean: float = -0.5
    increment_log_sd: float | None = 1.5

    def __post_init__(self) -> None:
        for name in ("cutpoint_sd", "gap_log_sd", "increment_log_sd"):
            check_prior_sd(name, getattr(self, name))
        mean = self.increment_log_mean
        if (not isinstance(mean, (int, float, np.integer, np.floating)) or isinstance(mean, bool)
                or not np.isfinite(mean)):
            raise ValueError(f"increment_log_mean must be a finite number, got {mean!r}")

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on the free chart: the MAP is the twin's MLE."""
        return cls(cutpoint_sd=None, gap_log_sd=None, increment_log_sd=None)


def _normal(name: str, mu: float, sd: float | None, dims: str | None = None,
            shape: int | None = None) -> pt.TensorVariable:
    if sd is None:
        return pm.Flat(name, dims=dims, shape=shape if dims is None else None)
    return pm.Normal(name, mu, sd, dims=dims, shape=shape if dims is None else None)


def build(data: Ratings, *, priors: Priors | None = None) -> pm.Model:
    """Build the monotone ordinal calibration model from the human-rated items.

    Parameters
    ----------
    data : Ratings
        Anchors (judge point score and human score); items without a human score are ignored.
        At least a 3-point scale.
    priors : Priors, optional
        Default ``Priors()``; ``Priors.flat()`` makes the MAP the twin's MLE.

    Returns
    -------
    pymc.Model
        Free ``cutpoint_first``, ``cutpoint_log_gap``, ``log_increment``; deterministic
        ``cutpoint``, ``level_effect``, ``calibrated_probability``, ``calibrated_mean``;
        observed ``outcome`` (human-score counts, rows = judge levels that have anchors).

    Raises
    ------
    DataError
        A scale of fewer than 3 points, or no anchor.
    """
    priors = priors if priors is not None else Priors()
    if not isinstance(priors, Priors):
        raise TypeError(f"priors must be score_calibration.Priors, got {type(priors).__name__}")
    counts = data.rating_counts(min_points=3)
    k = counts.shape[0]
    levels = data.levels
    seen = counts.sum(axis=1) > 0
    lv = [str(v) for v in levels]
    coords = {"threshold": [f"{a}|{a + 1}" for a in levels[:-1]], "gap": np.arange(k - 2),
              "step": np.arange(k - 1), "judge_level": lv, "human_level": lv,
              "anchor_level": [v for v, s in zip(lv, seen, strict=True) if s]}
    with pm.Model(coords=coords) as model:
        first = _normal("cutpoint_first", 0.0, priors.cutpoint_sd)
        log_gap = _normal("cutpoint_log_gap", 0.0, priors.gap_log_sd, dims="gap")
        log_inc = _normal("log_increment", priors.increment_log_mean, priors.increment_log_sd,
                          dims="step")
        cut = pm.Deterministic(
            "cutpoint", first + pt.concatenate([pt.zeros(1), pt.cumsum(pt.exp(log_gap))]),
            dims="threshold")
        effect = pm.Deterministic(
            "level_effect", pt.concatenate([pt.zeros(1), pt.cumsum(pt.exp(log_inc))]),
            dims="judge_level")
        cdf = pm.math.sigmoid(cut[None, :] - effect[:, None])
        prob = pt.concatenate([cdf[:, :1], cdf[:, 1:] - cdf[:, :-1], 1 - cdf[:, -1:]], axis=1)
        prob = pm.Deterministic("calibrated_probability", prob,
                                dims=("judge_level", "human_level"))
        pm.Deterministic("calibrated_mean", prob @ pt.as_tensor(levels.astype(np.float64)),
                         dims="judge_level")
        pm.Multinomial("outcome", n=counts[seen].sum(axis=1), p=prob[np.flatnonzero(seen)],
                       observed=counts[seen], dims=("anchor_level", "human_level"))
    return model


def calibration_table(result: xr.DataTree, prob: float | None = None, *,
                      ci_prob: float | None = None) -> pd.DataFrame:
    """Per judge level: the posterior predictive calibrated distribution and the calibrated mean.

    Columns ``P(H=v)`` for every scale point (posterior mean of ``calibrated_probability``, i.e.
    the predictive distribution of a new item's human score at that judge level), ``mean``
    (posterior mean of ``calibrated_mean``) and its equal-tailed ``lower`` / ``upper`` interval
    at ``prob``.
    """
    prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
    post = result["posterior"]
    p = post["calibrated_probability"].mean(("chain", "draw"))
    m = post["calibrated_mean"]
    q = m.quantile([(1 - prob) / 2, (1 + prob) / 2], dim=("chain", "draw"))
    out = pd.DataFrame(p.values, index=pd.Index(p["judge_level"].values, name="judge_level"),
                       columns=[f"P(H={v})" for v in p["human_level"].values])
    out["mean"] = m.mean(("chain", "draw")).values
    out["lower"], out["upper"] = q.values[0], q.values[1]
    out["prob"] = prob
    return out


def predictive_sets(result: xr.DataTree, prob: float | None = None, *,
                    ci_prob: float | None = None) -> pd.DataFrame:
    r"""Per judge level: the central predictive set of a new item's human score at ``prob``.

    From the posterior predictive :math:`\bar p_j = E[P(H = \cdot \mid J = j) \mid
    \text{anchors}]` (posterior mean of ``calibrated_probability``), never a plug-in of point
    estimates, which is too narrow on few anchors (card, coverage table). Columns ``lower``,
    ``upper`` (the conservative set, scale values), ``mass`` (its predictive mass, ≥ prob),
    ``lower_weight`` / ``upper_weight`` (the randomised set keeps those boundary levels with
    these probabilities; its mass is exactly prob: :mod:`bayescal.predictive`), ``prob``.
    """
    prob = resolve_prob(prob, ci_prob)  # ci_prob: ArviZ's name; default 0.95
    p = result["posterior"]["calibrated_probability"].mean(("chain", "draw"))
    levels = np.asarray(p["human_level"].values).astype(np.int64)
    sets = central_set(p.values, prob)
    return pd.DataFrame({"lower": levels[sets.lower], "upper": levels[sets.upper],
                         "mass": sets.mass, "lower_weight": sets.lower_weight,
                         "upper_weight": sets.upper_weight, "prob": prob},
                        index=pd.Index(p["judge_level"].values, name="judge_level"))
