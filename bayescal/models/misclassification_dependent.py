r"""Misclassification model with an item effect shared by the judges (PyMC).

The K-judge misclassification model (Chen, Lu, Li, Guo and Li 2026, arXiv:2601.05420, extended
to K judges; :mod:`bayescal.models.misclassification`) with judges whose errors are correlated
given the human label: an item effect :math:`u_i \sim N(0, 1)` shared by the judges,

.. math:: \operatorname{logit} P(\hat Y_{ik} = 1 \mid Y_i = y, u_i) = \alpha_{ky} + \sigma_y u_i,
          \qquad \alpha_{k1} = \operatorname{logit} q_{1k},\
          \alpha_{k0} = -\operatorname{logit} q_{0k},

integrated out per label pattern by Gauss–Hermite quadrature. At σ = 0 the likelihood is the
independent model's.

============================  =======  =====================================================
name                          dims     meaning
============================  =======  =====================================================
``prevalence``                         P(Y = 1) (θ)
``specificity``               judge    P(Ŷ_k = 0 | Y = 0, u = 0): the median item's (q0)
``sensitivity``               judge    P(Ŷ_k = 1 | Y = 1, u = 0): the median item's (q1)
``item_sd``                   class    σ_y, the item effect's scale in class y (σ_0, σ_1)
``outcome``                   pattern  items per distinct label pattern (observed)
============================  =======  =====================================================

The names are the twin's (:mod:`bayescal.frequentist.misclassification_dependent`), and the
log-likelihood equals its ``loglik`` (tested). The twin optimises σ on the whole line (the
likelihood is even in σ); here ``item_sd`` is positive (log transform), the same law. The
prevalence, specificities and sensitivities start where the calibration labels put them (the
independent model's started Beta variables), since the mirrored orientation of Y is a local mode.
See ``models/misclassification.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from numpy.polynomial.hermite_e import hermegauss
from numpy.typing import NDArray

from bayescal.data import Labels
from bayescal.identify import IdentificationError
from bayescal.models.misclassification import _initial_values, _started_beta
from bayescal.priors import check_beta_prior, check_prior_sd

__all__ = ["NODES", "Priors", "build"]

#: Gauss–Hermite nodes (the twin's default).
NODES = 64


@dataclass(frozen=True)
class Priors:
    """Priors of the item-effect misclassification model.

    Attributes
    ----------
    prevalence, specificity, sensitivity : tuple of float
        Beta(a, b), as in :class:`bayescal.models.misclassification.Priors` (defaults
        Beta(1, 1), Beta(2, 2), Beta(2, 2)), on the median item's rates.
    item_sd : float or None
        Half-normal scale of each σ_y (default 1: an item effect of one logit is typical,
        three is implausible, which the quadrature also prefers). None: flat on (0, ∞).
    """

    prevalence: tuple[float, float] = (1.0, 1.0)
    specificity: tuple[float, float] = (2.0, 2.0)
    sensitivity: tuple[float, float] = (2.0, 2.0)
    item_sd: float | None = 1.0

    def __post_init__(self) -> None:
        for name in ("prevalence", "specificity", "sensitivity"):
            check_beta_prior(name, getattr(self, name))
        check_prior_sd("item_sd", self.item_sd)

    @classmethod
    def flat(cls) -> Priors:
        """Uniform rates and a flat item_sd: the MAP is the maximum-likelihood estimate."""
        return cls(prevalence=(1.0, 1.0), specificity=(1.0, 1.0), sensitivity=(1.0, 1.0),
                   item_sd=None)


def _class_logprob(alpha: pt.TensorVariable, sd: pt.TensorVariable, yhat: pt.TensorVariable,
                   z: NDArray[np.float64], log_w: NDArray[np.float64]) -> pt.TensorVariable:
    """log P(ŷ | y) per pattern: log Σ_j w_j Π_k π(α_k + σ z_j)^ŷ (1 - π)^(1 - ŷ)."""
    eta = alpha[None, :] + sd * z[:, None]  # (node, judge)
    # log σ(η) = -softplus(-η), log(1 - σ(η)) = -softplus(η)
    per_node = -pt.dot(yhat, pt.softplus(-eta).T) - pt.dot(1 - yhat, pt.softplus(eta).T)
    return pt.logsumexp(per_node + log_w[None, :], axis=1)


def _pattern_logprob(prevalence: pt.TensorVariable, specificity: pt.TensorVariable,
                     sensitivity: pt.TensorVariable, item_sd: pt.TensorVariable,
                     yhat: pt.TensorVariable, human: pt.TensorVariable, test: pt.TensorVariable,
                     *, z: NDArray[np.float64], log_w: NDArray[np.float64]) -> pt.TensorVariable:
    """log P(pattern): log θ_y P(ŷ | y) for calibration patterns, log Σ_y of it for test ones."""
    log_a1 = pt.log(prevalence) + _class_logprob(
        pt.log(sensitivity) - pt.log1p(-sensitivity), item_sd[1], yhat, z, log_w)
    log_a0 = pt.log1p(-prevalence) + _class_logprob(
        pt.log1p(-specificity) - pt.log(specificity), item_sd[0], yhat, z, log_w)
    calibration = pt.switch(pt.eq(human, 1), log_a1, log_a0)
    return pt.switch(test, pt.logaddexp(log_a1, log_a0), calibration)


def _labels_logp(value: pt.TensorVariable, prevalence: pt.TensorVariable,
                 specificity: pt.TensorVariable, sensitivity: pt.TensorVariable,
                 item_sd: pt.TensorVariable, yhat: pt.TensorVariable, human: pt.TensorVariable,
                 test: pt.TensorVariable, m: pt.TensorVariable, n: pt.TensorVariable, *,
                 z: NDArray[np.float64], log_w: NDArray[np.float64]) -> pt.TensorVariable:
    # counts x log-probabilities: the sum over items, no multinomial coefficient (m, n are
    # the set sizes, used only by the forward draws)
    return value * _pattern_logprob(prevalence, specificity, sensitivity, item_sd, yhat, human,
                                    test, z=z, log_w=log_w)


def _draw_labels(
    prevalence: NDArray[np.float64],
    specificity: NDArray[np.float64],
    sensitivity: NDArray[np.float64],
    item_sd: NDArray[np.float64],
    yhat: NDArray[np.float64],
    human: NDArray[np.float64],
    test: NDArray[np.bool_],
    m: NDArray[np.float64],
    n: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """Counts of the listed patterns among m new calibration and n new test items.

    Each item is drawn as the model reads it, not from the quadrature: Y ~ Bern(θ),
    u ~ N(0, 1), then the judges' labels independently given (Y, u) with
    logit P(Ŷ_k = 1) = α_kY + σ_Y u. Items falling in a pattern that is not listed (not
    observed in the data) are dropped, so every listed count has its exact predictive law.
    """
    rng = rng if rng is not None else np.random.default_rng()
    theta = float(np.asarray(prevalence))
    q0, q1 = np.asarray(specificity, float), np.asarray(sensitivity, float)
    sd = np.asarray(item_sd, float)
    yhat = np.asarray(yhat, float)
    k = yhat.shape[1]
    alpha = np.stack([np.log1p(-q0) - np.log(q0), np.log(q1) - np.log1p(-q1)])  # (class, k)
    bits = 2 ** np.arange(k)
    listed = (yhat @ bits).astype(np.int64)
    test = np.asarray(test, bool)
    human = np.asarray(human, float)
    out = np.zeros(len(listed))
    for in_test, total in ((False, m), (True, n)):
        size_ = int(np.asarray(total))
        y = (rng.random(size_) < theta).astype(np.int64)
        u = rng.standard_normal(size_)
        eta = alpha[y] + (sd[y] * u)[:, None]
        labels = (rng.random((size_, k)) < 1 / (1 + np.exp(-eta))).astype(np.int64)
        # a calibration item's pattern is (Y, Ŷ), a test item's Ŷ alone
        code = labels @ bits + (0 if in_test else y * 2**k)
        counts = np.bincount(code, minlength=2 ** (k + 1))
        rows = test == in_test
        out[rows] = counts[listed[rows] + (0 if in_test else human[rows].astype(np.int64) * 2**k)]
    return out


def build(
    data: Labels,
    *,
    priors: Priors | None = None,
    judges: Sequence[str] | None = None,
    nodes: int = NODES,
) -> pm.Model:
    """Build the item-effect misclassification model as a PyMC model.

    Parameters
    ----------
    data : Labels
        Binary human labels (calibration set) and judge labels (every item).
    priors : Priors, optional
        Default ``Priors()``; ``Priors.flat()`` makes the MAP the MLE.
    judges : sequence of str, optional
        Judges to use (default: all; at least two).
    nodes : int
        Gauss–Hermite nodes of the integral over the item effect.

    Returns
    -------
    pymc.Model
        Free ``prevalence``, ``specificity``, ``sensitivity`` (log-odds) and ``item_sd``
        (log); observed ``outcome`` (counts per pattern; its log-probability is the counts
        times the patterns' log-probabilities, with no multinomial coefficient; its forward
        draws are the counts among m calibration and n test items drawn item by item, with
        their item effects).

    Raises
    ------
    IdentificationError
        One judge (σ and the rates are one number then, whatever the prior).
    ValueError
        A bad ``nodes`` or ``priors``.
    """
    priors = priors if priors is not None else Priors()
    if not isinstance(priors, Priors):
        raise TypeError("priors must be misclassification_dependent.Priors, got "
                        f"{type(priors).__name__}")
    if not isinstance(nodes, (int, np.integer)) or nodes < 1:
        raise ValueError(f"nodes must be a positive integer, got {nodes!r}")
    pat = data.patterns(judges)
    if pat.n_judges < 2:
        raise IdentificationError(
            "the item effect is not identified with one judge (one binary label per item has "
            "one rate given Y); use bayescal.models.misclassification")
    z, w = hermegauss(int(nodes))
    log_w = np.log(w / w.sum())
    start = _initial_values(pat)
    coords = {"judge": list(pat.judges), "pattern": pat.names, "class": [0, 1]}
    with pm.Model(coords=coords) as model:
        yhat = pm.Data("yhat", pat.yhat, dims=("pattern", "judge"))
        human = pm.Data("human", pat.y, dims="pattern")
        test = pm.Data("test", pat.test.astype(np.int8), dims="pattern")
        prevalence = _started_beta("prevalence", *priors.prevalence, start["prevalence"])
        sensitivity = _started_beta("sensitivity", *priors.sensitivity, start["sensitivity"],
                                    dims="judge")
        specificity = _started_beta("specificity", *priors.specificity, start["specificity"],
                                    dims="judge")
        if priors.item_sd is None:
            item_sd = pm.HalfFlat("item_sd", dims="class")
        else:
            item_sd = pm.HalfNormal("item_sd", sigma=priors.item_sd, dims="class")
        pm.CustomDist(
            "outcome", prevalence, specificity, sensitivity, item_sd, yhat, human, test,
            float(pat.m), float(pat.n),
            logp=functools.partial(_labels_logp, z=z, log_w=log_w),
            random=_draw_labels,
            signature="(),(k),(k),(c),(p,k),(p),(p),(),()->(p)",
            observed=pat.count,
            dims="pattern",
        )
    return model
