r"""Every estimator of Chen et al. (2026) for the mean of the human label under a noisy judge.

The paper: Chen, Lu, Li, Guo and Li (2026), *Efficient inference for noisy LLM-as-a-judge
evaluation*, arXiv:2601.05420.

Data (:class:`~bayescal.data.Labels`, the paper's Sec. 2.1): a calibration set of m items with the
human label :math:`Y_j` and the judge label :math:`\hat Y_j`, and a test set of n items with
:math:`\hat Y_i` only; :math:`N = n + m`. The target is :math:`\theta = E[Y]`, called
``prevalence`` when the human labels are binary and ``mean`` otherwise (:func:`target`).

Binary notation (calibration counts :math:`N_{ab}` = #{Y=a, Ŷ=b}, test counts :math:`T_b`):
:math:`m_1 = N_{11} + N_{10}`, :math:`m_0 = N_{01} + N_{00}` (human classes),
:math:`\hat q_1 = N_{11}/m_1` (sensitivity), :math:`\hat q_0 = N_{00}/m_0` (specificity),
:math:`\hat p = T_1/n` (test-set judge mean), :math:`\hat\kappa = \hat q_0 + \hat q_1 - 1`.

Estimators (the paper's equation numbers):

* :func:`naive` — test-set judge mean (eq. 3), biased by :math:`(1-q_0) + \theta(q_0+q_1-2)`;
* :func:`rogan_gladen` — misclassification correction (eq. 6), optionally the smoothed variant
  of the authors' R package;
* :func:`ppi` — prediction-powered inference (eq. 8);
* :func:`ppi_plus_plus` — power-tuned PPI (eq. 10);
* :func:`mle` — three-parameter misclassification MLE (eq. 13), by
  :mod:`bayescal.frequentist.misclassification`;
* :func:`eif` — efficient-influence-function estimator (eqs. 15, 19) with a cell-mean, linear or
  natural-spline regression :math:`\hat\mu(\hat y) \approx E[Y \mid \hat Y = \hat y]`;
* :func:`posterior` — the exact posterior of θ for one binary judge under Jeffreys priors
  (the table's ``bayes`` row), which keeps its level with few calibration items of a rare class;
* :func:`estimate` — all of them in one table; a method undefined on the data reports why;
* :func:`rare_outcome` — the table's flag of a calibration set too small for its human-label
  mean to be close to normal (the Wald rows' assumption), vectorised as
  :func:`~bayescal.frequentist.judge_mean.cores.rare_outcome_rule`.

Intervals (the paper's Sec. 5.2): binary human labels get the logit-transformed Wald interval
:math:`\mathrm{expit}(\mathrm{logit}\,\hat\theta \pm z\sqrt{\hat V}/(\hat\theta(1-\hat\theta)))`
with :math:`\hat\theta` clamped to [1e-6, 1 - 1e-6] (``wald-logit``); continuous labels the plain
Wald interval (``wald``). Both come from :func:`bayescal.schema.wald_interval`.

Layout. :mod:`~bayescal.frequentist.judge_mean.cores` holds every formula once, as vectorised
cores on the per-level sufficient statistics (:class:`LevelStats`) with :class:`Reason` codes
instead of exceptions, and the array entry points :func:`binary_from_counts` (the six binary
counts :data:`COUNT_NAMES`) and :func:`discrete_from_stats` for simulation studies;
:mod:`~bayescal.frequentist.judge_mean.estimators` holds the user-facing functions on
``Labels``, which call the same cores; :mod:`~bayescal.frequentist.judge_mean.theory` the
closed-form asymptotic variances. The one exception to "one core per formula" is the MLE:
:func:`mle` fits the misclassification twin numerically (any number of judges); its vectorised
counterpart is the closed form of the saturated one-judge model (:func:`binary_from_counts`,
methods ``mle`` and ``mle_expected``), which the tests pin to
:func:`~bayescal.frequentist.misclassification.fit` to 1e-10.

Implementations of these estimators differ in small conventions (which p̂, which λ formula,
ddof, clipping); each function's docstring states the one used here, and its ``info`` records it.
Nothing here imports PyMC.
"""

from bayescal.frequentist.judge_mean import theory
from bayescal.frequentist.judge_mean.cores import (
    BINARY_METHODS,
    COUNT_NAMES,
    DISCRETE_METHODS,
    LevelStats,
    Reason,
    binary_from_counts,
    discrete_from_stats,
    rare_outcome_rule,
)
from bayescal.frequentist.judge_mean.estimators import (
    METHODS,
    EstimatorUndefined,
    eif,
    estimate,
    label_shift,
    mle,
    naive,
    natural_spline_basis,
    posterior,
    ppi,
    ppi_plus_plus,
    rare_outcome,
    rogan_gladen,
    target,
)

__all__ = [
    "BINARY_METHODS",
    "COUNT_NAMES",
    "DISCRETE_METHODS",
    "METHODS",
    "EstimatorUndefined",
    "LevelStats",
    "Reason",
    "binary_from_counts",
    "discrete_from_stats",
    "eif",
    "estimate",
    "label_shift",
    "mle",
    "naive",
    "natural_spline_basis",
    "posterior",
    "ppi",
    "ppi_plus_plus",
    "rare_outcome",
    "rare_outcome_rule",
    "rogan_gladen",
    "target",
    "theory",
]
