r"""Misclassification model of LLM-judge labels (Chen et al. 2026, arXiv:2601.05420; K judges).

A human label :math:`Y \sim \mathrm{Bern}(\theta)`; judge k reports :math:`\hat Y_k` with
specificity :math:`q_{0k} = P(\hat Y_k = 0 \mid Y = 0)` and sensitivity
:math:`q_{1k} = P(\hat Y_k = 1 \mid Y = 1)`, conditionally independently given Y (Dawid–Skene;
with one judge, exactly the paper's three-parameter model, its eq. 13). Calibration items (Y
seen) contribute :math:`\log P(Y, \hat Y_{1..K})`, test items
:math:`\log\sum_y P(y)\prod_k P(\hat Y_k\mid y)`, through the counts of their distinct label
patterns.

============================  =======  =====================================================
name                          dims     meaning (paper symbol)
============================  =======  =====================================================
``prevalence``                         P(Y = 1), the mean the paper estimates (θ)
``specificity``               judge    P(Ŷ_k = 0 | Y = 0) (q0)
``sensitivity``               judge    P(Ŷ_k = 1 | Y = 1) (q1)
``outcome``                   pattern  items per distinct label pattern (observed)
============================  =======  =====================================================

**The sign of κ (``kappa=``).** The paper asks only :math:`\kappa_k = q_{0k} + q_{1k} - 1 \ne 0`.
Swapping Y and 1 - Y maps :math:`(\theta, q_0, q_1)` to :math:`(1-\theta, 1-q_1, 1-q_0)` and
leaves the test items' likelihood unchanged, but calibration items of both human classes tell
the two orientations apart: they fix the sign of every κ.

* ``kappa="nonzero"`` (default): independent Beta priors on every q0 and q1 (log-odds
  transforms), κ of either sign; a flipped judge (κ < 0) is estimated like any other. Without a
  calibration item of each class the prior is symmetric enough that the posterior can be
  bimodal (label switching, one mode per orientation); ``build`` warns
  (:class:`~bayescal.identify.IdentificationWarning`).
* ``kappa="positive"``: every judge better than chance, for judges known to be. The sensitivity is
  free in (0, 1) (log-odds transform); the specificity lives on :math:`(1 - q_{1k}, 1)` through an
  interval transform whose lower bound is :math:`1 - q_{1k}`: an unconstrained :math:`z` maps to
  :math:`q_{0k} = 1 - q_{1k}\sigma(-z)`, so :math:`\kappa_k = q_{1k}\sigma(z) > 0` at every point
  the sampler or optimizer can reach. ``build`` warns when a judge's calibration labels give
  :math:`\hat\kappa < 0` (the posterior then piles up at κ = 0).

**Induced prior under ``kappa="positive"``.** The log density of ``sensitivity`` is the
Beta(a1, b1) kernel and that of ``specificity`` the Beta(a0, b0) kernel on its interval, so the
joint prior density of
:math:`(q_{0k}, q_{1k})` is the product of the two Betas truncated to the triangle
:math:`q_0 + q_1 > 1` (up to one constant), and PyMC adds the transforms' Jacobians for NUTS
only. MAP (``bayescal.fit(model, "map")``, which optimises without the Jacobians) is therefore
the mode in :math:`(\theta, q_0, q_1)` and equals the twin's penalized MLE with the same Beta log
densities. Each Beta holds on the reported parameter, restricted to κ > 0; the marginal prior of
one q is its Beta reweighted by the other's mass above :math:`1 - q` (see :class:`Priors`).
Forward draws (prior predictive) follow the same joint law exactly: q1 from that reweighted
marginal (by rejection), then q0 | q1 from Beta(a0, b0) truncated to (1 - q1, 1). Only the sum
of the two log densities is meaningful, as the truncated product up to log P(κ > 0).

**Where the mode is not interior.** Under ``kappa="positive"`` the truncated product has
positive density at κ = 0, so for a judge the data place at or below chance the MAP runs to
κ → 0 (the twin then raises ``MLEBoundaryError`` for its penalized fit too). Under both settings,
with the uniform prevalence prior, the mode can sit at θ = 0 or 1 when a class is absent.

The likelihood is the sum over items of log-probabilities (no multinomial coefficient), the
convention of :func:`bayescal.frequentist.misclassification.loglik` (tested equal). The label
patterns come from :meth:`bayescal.data.Labels.patterns`; this module imports no twin. See
``models/misclassification.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from numpy.typing import NDArray
from pymc.distributions.transforms import Interval, logodds
from scipy.stats import beta as beta_dist

from bayescal.data import Labels
from bayescal.data.labels import LabelPatterns
from bayescal.identify import IdentificationWarning
from bayescal.independence import (
    ConditionalDependenceWarning,
    dependence_message,
    labelled_test,
    pattern_test,
)
from bayescal.priors import check_beta_prior

__all__ = ["Priors", "build"]


@dataclass(frozen=True)
class Priors:
    """Beta (a, b) priors on the prevalence, specificities and sensitivities.

    Attributes
    ----------
    prevalence : tuple of float
        Beta(a, b) for θ. Default Beta(1, 1): the prevalence is what the analysis is for, so
        the prior leaves it uniform.
    specificity, sensitivity : tuple of float
        Beta(a, b) for every judge's q0 and q1: independent under ``kappa="nonzero"``,
        truncated jointly to q0 + q1 > 1 under ``kappa="positive"``. Default Beta(2, 2): one
        pseudo-success and one pseudo-failure per parameter, the add-one smoothing the authors'
        Rogan–Gladen interval applies to q (q̃ = (m q̂ + 1)/(m + 2)). It keeps the mode off 0
        and 1 when a judge makes no error on the calibration set (where the MLE runs to the
        boundary), is symmetric about chance so it claims nothing about judge quality (nor,
        untruncated, about the sign of κ: prior mean κ = 0), and moves a mode by two
        pseudo-items only. After the κ > 0 truncation each q has prior mean 22/35 ≈ 0.629 and
        κ prior mean 9/35 ≈ 0.257, with P(κ < 0.1) ≈ 0.236.
    """

    prevalence: tuple[float, float] = (1.0, 1.0)
    specificity: tuple[float, float] = (2.0, 2.0)
    sensitivity: tuple[float, float] = (2.0, 2.0)

    def __post_init__(self) -> None:
        for name in ("prevalence", "specificity", "sensitivity"):
            check_beta_prior(name, getattr(self, name))

    @classmethod
    def flat(cls) -> Priors:
        """Uniform priors (all Beta(1, 1)): the MAP is the maximum-likelihood estimate."""
        return cls(prevalence=(1.0, 1.0), specificity=(1.0, 1.0), sensitivity=(1.0, 1.0))


# ------------------------------------------------------------------ judge accuracies
def _beta_kernel(value: pt.TensorVariable, a: pt.TensorVariable, b: pt.TensorVariable
                 ) -> pt.TensorVariable:
    return pm.logp(pm.Beta.dist(alpha=a, beta=b), value)


def _sensitivity_logp(
    value: pt.TensorVariable,
    a1: pt.TensorVariable,
    b1: pt.TensorVariable,
    a0: pt.TensorVariable,
    b0: pt.TensorVariable,
) -> pt.TensorVariable:
    # a0, b0 only shape the forward draws (the truncation's weight on q1)
    return _beta_kernel(value, a1, b1)


def _specificity_logp(
    value: pt.TensorVariable,
    sensitivity: pt.TensorVariable,
    a0: pt.TensorVariable,
    b0: pt.TensorVariable,
) -> pt.TensorVariable:
    return pt.switch(value + sensitivity > 1, _beta_kernel(value, a0, b0), -np.inf)


def _specificity_bounds(
    rng: object,
    size: object,
    sensitivity: pt.TensorVariable,
    a0: pt.TensorVariable,
    b0: pt.TensorVariable,
) -> tuple[pt.TensorVariable, float]:
    # the interval transform's bounds: q0 ∈ (1 - q1, 1), i.e. κ = q0 + q1 - 1 > 0
    return 1 - sensitivity, 1.0


def _draw_sensitivity(
    a1: NDArray[np.float64],
    b1: NDArray[np.float64],
    a0: NDArray[np.float64],
    b0: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """q1 from its marginal under the truncated product, ∝ Beta(q1; a1, b1) P(q0 > 1 - q1).

    Rejection: a Beta(a1, b1) proposal is kept with probability P(q0 > 1 - q1) ≤ 1.
    """
    rng = rng if rng is not None else np.random.default_rng()
    out = rng.beta(a1, b1, size=size)
    kept = rng.uniform(size=np.shape(out)) < beta_dist.sf(1 - out, a0, b0)
    while not np.all(kept):
        new = rng.beta(a1, b1, size=size)
        take = ~kept & (rng.uniform(size=np.shape(out)) < beta_dist.sf(1 - new, a0, b0))
        out = np.where(take, new, out)
        kept |= take
    return np.asarray(out, dtype=np.float64)


def _draw_specificity(
    sensitivity: NDArray[np.float64],
    a0: NDArray[np.float64],
    b0: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """q0 | q1 from Beta(a0, b0) truncated to (1 - q1, 1), by the inverse survival function."""
    rng = rng if rng is not None else np.random.default_rng()
    tail = beta_dist.sf(1 - np.asarray(sensitivity), a0, b0)
    return np.asarray(beta_dist.isf(rng.uniform(size=size) * tail, a0, b0), dtype=np.float64)


# ------------------------------------------------------------------ label patterns
def _pattern_logprob(
    prevalence: pt.TensorVariable,
    specificity: pt.TensorVariable,
    sensitivity: pt.TensorVariable,
    yhat: pt.TensorVariable,
    human: pt.TensorVariable,
    test: pt.TensorVariable,
) -> pt.TensorVariable:
    """log P(pattern): log P(Y, ŷ) for calibration patterns, log Σ_y P(y, ŷ) for test ones."""
    log_a1 = (pt.log(prevalence) + pt.dot(yhat, pt.log(sensitivity))
              + pt.dot(1 - yhat, pt.log1p(-sensitivity)))
    log_a0 = (pt.log1p(-prevalence) + pt.dot(yhat, pt.log1p(-specificity))
              + pt.dot(1 - yhat, pt.log(specificity)))
    calibration = pt.switch(pt.eq(human, 1), log_a1, log_a0)
    return pt.switch(test, pt.logaddexp(log_a1, log_a0), calibration)


def _labels_logp(
    value: pt.TensorVariable,
    prevalence: pt.TensorVariable,
    specificity: pt.TensorVariable,
    sensitivity: pt.TensorVariable,
    yhat: pt.TensorVariable,
    human: pt.TensorVariable,
    test: pt.TensorVariable,
    m: pt.TensorVariable,
    n: pt.TensorVariable,
) -> pt.TensorVariable:
    # counts x log-probabilities: the sum over items, no multinomial coefficient (m, n are
    # the set sizes, used only by the predictive draws)
    return value * _pattern_logprob(prevalence, specificity, sensitivity, yhat, human, test)


def _draw_labels(
    prevalence: NDArray[np.float64],
    specificity: NDArray[np.float64],
    sensitivity: NDArray[np.float64],
    yhat: NDArray[np.float64],
    human: NDArray[np.float64],
    test: NDArray[np.bool_],
    m: NDArray[np.float64],
    n: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    """Counts of the listed patterns among m new calibration and n new test items.

    Items falling in a pattern that is not listed (not observed in the data) are drawn into a
    remainder cell and dropped, so every listed count has its exact predictive distribution.
    """
    rng = rng if rng is not None else np.random.default_rng()
    theta = float(np.asarray(prevalence))
    q0, q1 = np.asarray(specificity, float), np.asarray(sensitivity, float)
    yhat = np.asarray(yhat, float)
    a1 = theta * np.prod(np.where(yhat == 1, q1, 1 - q1), axis=1)
    a0 = (1 - theta) * np.prod(np.where(yhat == 1, 1 - q0, q0), axis=1)
    test = np.asarray(test, bool)
    prob = np.where(test, a1 + a0, np.where(np.asarray(human) == 1, a1, a0))
    out = np.zeros(len(prob))
    for mask, total in ((~test, m), (test, n)):
        p = prob[mask]
        rest = max(1.0 - p.sum(), 0.0)
        draw = rng.multinomial(int(np.asarray(total)), np.append(p, rest) / (p.sum() + rest))
        out[mask] = draw[:-1]
    return out


# ------------------------------------------------------------------ model
def build(
    data: Labels,
    *,
    priors: Priors | None = None,
    judges: Sequence[str] | None = None,
    kappa: str = "nonzero",
) -> pm.Model:
    """Build the misclassification model as a PyMC model.

    Parameters
    ----------
    data : Labels
        Binary human labels (calibration set) and judge labels (every item).
    priors : Priors, optional
        Beta priors (default ``Priors()``; ``Priors.flat()`` makes the MAP the MLE).
    judges : sequence of str, optional
        Judges to use (default: all).
    kappa : {"nonzero", "positive"}
        ``"nonzero"`` (default, the paper's κ ≠ 0): independent Beta priors, the calibration
        labels fix the sign of each κ. ``"positive"``: κ_k > 0 by parameterization, for judges
        known to beat chance.

    Returns
    -------
    pymc.Model
        Free ``prevalence``, ``sensitivity`` (log-odds) and ``specificity`` (log-odds; under
        ``"positive"`` the interval (1 - sensitivity, 1)); observed ``outcome`` (counts per
        pattern). Data: ``yhat`` (pattern, judge), ``human`` and ``test`` (pattern).

    Raises
    ------
    DataError
        Labels that are not 0/1.

    Warns
    -----
    IdentificationWarning
        One judge and no calibration item with Y = 1 (or Y = 0): the sensitivity (specificity)
        is then informed by its prior only. Under ``"nonzero"``, any number of judges and a
        human class absent from calibration: the sign of κ rests on the prior (label
        switching; the posterior can be bimodal).
    UserWarning
        Under ``"positive"``, a judge whose calibration labels give κ̂ < 0.
    ConditionalDependenceWarning
        K ≥ 2 judges whose labels are dependent given the human label on the labelled items
        (:func:`bayescal.independence.labelled_test`) or, K ≥ 4, on all items' patterns
        (:func:`bayescal.independence.pattern_test`, its EM started at the calibration
        proportions): the twin's tests.
    """
    if kappa not in ("nonzero", "positive"):
        raise ValueError(f"kappa must be 'nonzero' or 'positive', got {kappa!r}")
    priors = priors if priors is not None else Priors()
    if not isinstance(priors, Priors):
        raise TypeError(f"priors must be misclassification.Priors, got {type(priors).__name__}")
    pat = data.patterns(judges)
    reason = pat.unidentified()
    if reason is not None:
        warnings.warn(
            reason + "; the Bayesian fit proceeds, but that parameter is informed by its "
            "prior only (through the prevalence and P(Ŷ = 1)).",
            IdentificationWarning,
            stacklevel=2,
        )
    # one judge without a class already warned above; the sign warning is for K >= 2
    sign = pat.sign_unidentified() if kappa == "nonzero" and reason is None else None
    if sign is not None:
        warnings.warn(
            sign + "; the posterior can be bimodal (label switching) and NUTS chains can "
            "disagree. Label items of both classes, or build with kappa='positive' if every "
            "judge is known to beat chance.",
            IdentificationWarning,
            stacklevel=2,
        )
    if kappa == "positive" and (conflict := pat.negative_kappa()) is not None:
        warnings.warn(conflict, UserWarning, stacklevel=2)
    # the K-judge likelihood assumes conditional independence given Y; the labelled items
    # test it without any fitted parameter, all items' patterns with an EM started at the
    # calibration proportions, so the model warns as the twin does
    cal = ~pat.test
    start = _initial_values(pat)
    tests = [labelled_test(pat.yhat[cal], pat.y[cal], pat.count[cal]),
             pattern_test(pat.yhat, pat.count, float(start["prevalence"]),
                          start["specificity"], start["sensitivity"])]
    if any(test is not None and test.rejects for test in tests):
        warnings.warn(dependence_message(tests), ConditionalDependenceWarning, stacklevel=2)
    coords = {"judge": list(pat.judges), "pattern": pat.names}
    a0, b0 = (float(v) for v in priors.specificity)
    a1, b1 = (float(v) for v in priors.sensitivity)
    with pm.Model(coords=coords) as model:
        yhat = pm.Data("yhat", pat.yhat, dims=("pattern", "judge"))
        human = pm.Data("human", pat.y, dims="pattern")
        test = pm.Data("test", pat.test.astype(np.int8), dims="pattern")
        if kappa == "nonzero":
            # start where the calibration labels put each accuracy: with several judges the
            # mirrored orientation (Y and 1 - Y swapped) is a local mode that chains started
            # near q = 0.5 can fall into and never leave. The start is the support point of a
            # Beta CustomDist, not an initval, so the model stays convertible
            # (pm.compute_log_likelihood refuses models with non-default initial values).
            prevalence = _started_beta("prevalence", *priors.prevalence, start["prevalence"])
            sensitivity = _started_beta("sensitivity", a1, b1, start["sensitivity"],
                                        dims="judge")
            specificity = _started_beta("specificity", a0, b0, start["specificity"],
                                        dims="judge")
        else:
            prevalence = pm.Beta("prevalence", alpha=priors.prevalence[0],
                                 beta=priors.prevalence[1])
            sensitivity, specificity = _positive_accuracies(a0, b0, a1, b1)
        pm.CustomDist(
            "outcome", prevalence, specificity, sensitivity, yhat, human, test,
            float(pat.m), float(pat.n),
            logp=_labels_logp,
            random=_draw_labels,
            signature="(),(k),(k),(p,k),(p),(p),(),()->(p)",
            observed=pat.count,
            dims="pattern",
        )
    return model


def _initial_values(pat: LabelPatterns) -> dict[str, NDArray[np.float64]]:
    """The calibration proportions, add-a-half: the prevalence (m1 + 1/2)/(m + 1) and every
    judge's specificity and sensitivity, in the orientation the human labels support (always
    inside (0, 1), whatever the counts)."""
    q0, q1 = pat.calibration_accuracy(smoothing=0.5)
    theta = (pat.n_calibration_positive + 0.5) / (pat.m + 1)
    return {"prevalence": np.asarray(theta), "specificity": q0, "sensitivity": q1}


def _beta_logp(
    value: pt.TensorVariable, a: pt.TensorVariable, b: pt.TensorVariable,
    start: pt.TensorVariable,
) -> pt.TensorVariable:
    return _beta_kernel(value, a, b)


def _beta_draw(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    start: NDArray[np.float64],
    rng: np.random.Generator | None = None,
    size: tuple[int, ...] | None = None,
) -> NDArray[np.float64]:
    rng = rng if rng is not None else np.random.default_rng()
    return np.asarray(rng.beta(a, b, size=size), dtype=np.float64)


def _started_beta(
    name: str, a: float, b: float, start: NDArray[np.float64], dims: str | None = None
) -> pt.TensorVariable:
    """A Beta(a, b) variable (log-odds transform) whose initial point is ``start``."""
    start = np.asarray(start, dtype=np.float64)
    return pm.CustomDist(
        name, float(a), float(b), start,
        logp=_beta_logp,
        random=_beta_draw,
        support_point=lambda rv, size, a, b, s: pt.zeros_like(rv) + s,
        transform=logodds,
        dims=dims,
    )


def _positive_accuracies(
    a0: float, b0: float, a1: float, b1: float
) -> tuple[pt.TensorVariable, pt.TensorVariable]:
    """Sensitivity and specificity with κ > 0 by parameterization (inside a model context)."""
    sensitivity = pm.CustomDist(
        "sensitivity", a1, b1, a0, b0,
        logp=_sensitivity_logp,
        random=_draw_sensitivity,
        support_point=lambda rv, size, *_: pt.full_like(rv, 0.8),
        transform=logodds,
        dims="judge",
    )
    specificity = pm.CustomDist(
        "specificity", sensitivity, a0, b0,
        logp=_specificity_logp,
        random=_draw_specificity,
        # the middle of (1 - q1, 1): 0.6 at the starting q1 = 0.8
        support_point=lambda rv, size, q1, *_: pt.zeros_like(rv) + 1 - q1 / 2,
        transform=Interval(bounds_fn=_specificity_bounds),
        dims="judge",
    )
    return sensitivity, specificity
