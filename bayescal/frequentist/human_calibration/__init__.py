r"""Frequentist twin of DIAL's human calibration ((11)–(12) of DIAL, "Position-Debiased LLM
Judges with Adaptive Human Preference Calibration", 2026).

The human scores are restricted to the LLM judges' calibration space,
:math:`s_h = M_\theta c` with :math:`M = \mu` (consensus, d = 1) or :math:`M = W = [\mu, V]`
(full space, d = r + 1), and fitted jointly with the low-rank judge model (1) by the weighted
estimator (11)

.. math:: (\hat c_\lambda, \hat\theta_\lambda) =
          \arg\min\ \ell_h(M_\theta c) + \lambda\,\ell_l(\theta),

where :math:`\ell_h` and :math:`\ell_l` are *average* negative log-likelihoods (per human, per LLM
verdict), so :math:`\lambda = n_l/n_h` is the joint MLE. The endpoints are defined as their
limits: λ = 0 is the unrestricted centred human BTL, λ = ∞ the staged (anchored) estimator (12):
the LLM-only low-rank MLE θ̂_∞, then c with M fixed. λ is chosen by :func:`gacv`.

With comparison features the judges' model gains β_k and the human one β_h (see
:mod:`.problem`); the judges' abilities, and so the calibration space, are their preferences
at equal features.

Every entry point takes ONE :class:`~bayescal.data.Comparisons` with the human judge(s) marked
``humans=[...]``: the LLM part is every other judge, several human judges are pooled into the
one human score vector s_h. Human ties count as one comparison with y = 1/2 (not the authors'
collapsed rows, which differ where real data have ties).

Modules: :mod:`.problem` (the two samples and the chart), :mod:`.objective` (q_λ and its
analytic derivatives), :mod:`.optimize` (Newton fits, endpoints), :mod:`.path` (the λ path,
GACV, admissibility :class:`Reason`), :mod:`.inference` (covariances by ``information`` kind),
:mod:`.fit` (``fit``, ``gacv``, ``loglik``, ``calibration_lr_test``, ``exact_loo``).
See ``models/human_calibration.md``.
"""

from bayescal.frequentist.human_calibration.fit import (
    KINDS,
    LRTest,
    calibration_lr_test,
    exact_loo,
    fit,
    gacv,
    grid,
    loglik,
)
from bayescal.frequentist.human_calibration.objective import derivatives
from bayescal.frequentist.human_calibration.path import Reason
from bayescal.frequentist.human_calibration.problem import Problem, problem

__all__ = ["KINDS", "LRTest", "Problem", "Reason", "calibration_lr_test", "derivatives",
           "exact_loo", "fit", "gacv", "grid", "loglik", "problem"]
