r"""Judge-discrimination Bradley–Terry–Luce model in PyMC (Xu, Tan, Wu, Zhou 2026,
arXiv:2601.21817).

Judge k prefers item i over item j with probability :math:`\sigma(\gamma_k(s_i - s_j))`
(eq. 1 of the paper). Scores are identified by :math:`\sum_i s_i = 0` and
:math:`\sum_k \log\gamma_k = 0` (eq. 3), written into the priors as zero-sum distributions.

============================  =======  =====================================================
name                          dims     meaning (paper symbol)
============================  =======  =====================================================
``ability``                   item     latent quality, sum zero (s)
``log_discrimination``        judge    log judge discrimination, sum zero (log γ)
``discrimination``            judge    judge discrimination, geometric mean one (γ)
``feature_effect``            judge,   effect of the comparison features' differences
                              feature  (β_k; only with features)
``outcome``                   cell     wins of item i in each (judge, i, j) cell (observed)
============================  =======  =====================================================

With comparison features (``Comparisons.from_frame(features=...)``) the logit is
:math:`\gamma_k(s_i - s_j) + \beta_k^\top(x_i - x_j)`, the feature term not scaled by
:math:`\gamma_k` (the card says why), and a cell is a distinct (judge, i, j, x).

The likelihood is evaluated on cells (judge, i, j), both display orders pooled, with the
Bernoulli kernel :math:`y\log\sigma(\eta) + (n-y)\log\sigma(-\eta) = y\eta - n\,
\mathrm{softplus}(\eta)` of :mod:`bayescal.models._btl`, which equals the sum over raw verdicts
(ties are y = 1/2, as in the paper). The ``cell`` coordinate holds
:meth:`~bayescal.data.Comparisons.cell_labels` of those cells. See
``models/judge_discrimination_btl.md``.
"""

from __future__ import annotations

import dataclasses

import warnings
from dataclasses import dataclass

import pymc as pm
import pytensor.tensor as pt

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.identify import (
    IdentificationWarning,
    discrimination_not_identified,
    require_features_identified,
    require_tie_parameters,
    warn_if_unidentified,
)
from bayescal.models._btl import davidson_outcome, draw_wins, feature_term, kernel_logp
from bayescal.priors import check_feature_pooling, check_prior_sd

__all__ = ["Priors", "build"]


@dataclass(frozen=True)
class Priors:
    """Prior scales of the judge-discrimination BTL.

    Attributes
    ----------
    ability_sd : float or None
        σ of ``ability ~ ZeroSumNormal(σ)`` on the logit scale (2: a 95% prior range of about
        ±4 logits between an item and the average). ``None`` is a flat prior on the sum-zero
        subspace (improper: for MAP = MLE, not for NUTS).
    ability_scale_sd : float or None
        Learn the abilities' scale instead of fixing it: ``ability_scale ~ HalfNormal(this)`` and
        ``ability ~ ZeroSumNormal(ability_scale)``, with ``ability_sd=None`` (refused
        otherwise: two scales for one prior). For NUTS: the joint density grows without
        bound as the scale and the abilities shrink to 0 together, so a MAP is at best a local
        mode. After comparisons chosen adaptively from a first fit
        (:func:`bayescal.design.next_comparisons`) this posterior's intervals kept their level
        where a fixed scale's did not (``models/design.md``). ``None`` (default): the fixed
        ``ability_sd``.
    discrimination_sd : float or None
        σ of ``log_discrimination ~ ZeroSumNormal(σ)`` (1: discriminations within a factor of
        about 7 of the geometric mean a priori). ``None`` is flat.
    tie_sd : float or None
        σ of ``log_tie ~ Normal(0, σ)`` per judge (``ties="davidson"`` only; 1.5: a tie
        parameter ν within a factor of about 20 of 1 a priori, ν = 1 giving one verdict in
        three tied between equal items). ``None`` is flat.
    feature_effect_sd : float or None
        σ of ``feature_effect ~ Normal(0, σ)`` per judge and feature, in logits of the judge's
        verdicts per unit of the feature's difference (1, as in the order-effect BTL). Used
        only with features; ``None`` is flat.
    feature_pooling : {"none", "shared", "partial"}
        How the judges' feature effects are pooled (:func:`bayescal.models._btl.feature_term`):
        ``"none"`` (default) independent ``Normal(0, feature_effect_sd)`` per judge,
        ``"shared"`` one effect for all judges, ``"partial"`` the hierarchical
        ``β_kf ~ Normal(β̄_f, τ_f)`` with ``β̄_f ~ Normal(0, feature_effect_sd)`` and
        ``τ_f ~ HalfNormal(feature_pooling_sd)`` (for NUTS; its MAP is degenerate). The twin's
        penalty takes ``"none"`` only.
    feature_pooling_sd : float
        Scale of the half-normal prior on τ_f (0.5: judges' length effects within about ±1
        logit of their mean a priori). Never flat.
    """

    ability_sd: float | None = 2.0
    discrimination_sd: float | None = 1.0
    tie_sd: float | None = 1.5
    feature_effect_sd: float | None = 1.0
    feature_pooling: str = "none"
    feature_pooling_sd: float = 0.5
    ability_scale_sd: float | None = None

    def __post_init__(self) -> None:
        # checked here, not inside PyMC or by the twin (which squares the sd)
        check_prior_sd("ability_sd", self.ability_sd)
        check_prior_sd("ability_scale_sd", self.ability_scale_sd)
        if self.ability_scale_sd is not None and self.ability_sd is not None:
            raise ValueError(
                f"ability_scale_sd={self.ability_scale_sd} learns the abilities' scale, "
                f"ability_sd={self.ability_sd} fixes it: give ability_sd=None with "
                "ability_scale_sd")
        check_prior_sd("discrimination_sd", self.discrimination_sd)
        check_prior_sd("tie_sd", self.tie_sd)
        check_prior_sd("feature_effect_sd", self.feature_effect_sd)
        check_feature_pooling(self.feature_pooling, self.feature_pooling_sd)

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on every block: the MAP is the maximum-likelihood estimate."""
        return cls(ability_sd=None, discrimination_sd=None, tie_sd=None, feature_effect_sd=None)


def _zero_sum(name: str, sd: float | None, dim: str, size: int) -> pt.TensorVariable:
    """A sum-zero vector: ZeroSumNormal(sd), or a flat prior on Helmert coordinates."""
    if sd is not None:
        return pm.ZeroSumNormal(name, sigma=sd, dims=dim)
    free = pm.Flat(f"{name}_free", shape=size - 1)
    return pm.Deterministic(name, pt.as_tensor(zero_sum_basis(size)) @ free, dims=dim)


def _warn_prior_only_judges(data: Comparisons, priors: Priors) -> None:
    unbounded = discrimination_not_identified(data)
    if not unbounded:
        return
    consequence = (
        "the prior on log discrimination alone sets it (all of its posterior for a judge "
        "without verdicts, its tail toward 0 or infinity otherwise)"
        if priors.discrimination_sd is not None
        else "with the flat prior (discrimination_sd=None) the posterior is improper; give "
        "discrimination_sd a value"
    )
    reasons = "; ".join(f"judge {k!r} {why}" for k, why in unbounded.items())
    warnings.warn(
        f"a discrimination is not identified from the judge's own data ({reasons}): "
        f"{consequence}. Refit without such judges (Comparisons.subset) to see how much they "
        "matter.",
        IdentificationWarning,
        stacklevel=3,
    )


def build(
    data: Comparisons, *, priors: Priors | None = None, discrimination: bool = True,
    ties: str = "half", ability_scale_sd: float | None = None,
) -> pm.Model:
    """Build the judge-discrimination BTL as a PyMC model.

    Parameters
    ----------
    data : Comparisons
        Verdicts; the two display orders of a cell are pooled (order does not enter).
    priors : Priors, optional
        Prior scales (default ``Priors()``).
    discrimination : bool
        Estimate γ_k per judge. False gives the unweighted BTL (γ ≡ 1; the paper's baseline,
        Sec. 4.2). With a single judge γ ≡ 1 by the normalization.
    ties : {"half", "davidson"}
        ``"half"`` (the paper's): a tie is half a win each way, a quasi-likelihood when the
        data hold ties. ``"davidson"``: Davidson's (1970) trinomial model with a tie parameter
        ν_k per judge (``log_tie``, ``tie``), observed ``outcome`` over (``cell``,
        ``verdict``) = (wins, ties, losses) of item i. Refused on data without ties, or with a
        judge who never or only tied (that ν is not identified:
        :func:`bayescal.identify.require_tie_parameters`).
    ability_scale_sd : float, optional
        Learn the abilities' scale: shorthand for ``priors`` with ``ability_sd=None,
        ability_scale_sd=ability_scale_sd`` (the other scales as ``priors`` gives them), the
        command line's ``--ability-scale-sd``. The posterior to read after an adaptive choice
        of comparisons (:func:`bayescal.design.next_comparisons`), fitted by NUTS.

    Returns
    -------
    pymc.Model
        Free variables ``ability`` (and ``log_discrimination``), deterministic
        ``discrimination``, with features ``feature_effect`` (judge x feature), observed
        ``outcome`` over ``cell`` (labelled ``judge: item_i vs item_j``, with the feature
        differences in brackets).

    Raises
    ------
    DataError
        Comparison features with ``ties="davidson"`` (that tie model has no feature effects).
    IdentificationError
        A comparison feature whose effect the item contrasts absorb for some judge (named;
        :func:`bayescal.identify.require_features_identified` without display order).

    Warns
    -----
    IdentificationWarning
        A disconnected comparison graph or a non-existent MLE: the prior then bounds the
        scores that the data leave free. Also, naming the judge, when a judge's discrimination
        is set by the prior alone: no verdicts, only ties, or verdicts on one pair all the same
        way (a single verdict included); see
        :func:`bayescal.identify.discrimination_not_identified`.
    """
    priors = priors if priors is not None else Priors()
    if not isinstance(priors, Priors):
        raise TypeError(f"priors must be a judge_discrimination_btl.Priors, got {priors!r}")
    if ability_scale_sd is not None:
        if priors.ability_scale_sd not in (None, ability_scale_sd):
            # two values for one prior: neither may be ignored
            raise ValueError(f"ability_scale_sd={ability_scale_sd} and priors.ability_scale_sd="
                             f"{priors.ability_scale_sd} disagree: give one of them")
        priors = dataclasses.replace(priors, ability_sd=None, ability_scale_sd=ability_scale_sd)
    if ties not in ("half", "davidson"):
        raise ValueError(f"ties must be 'half' or 'davidson', got {ties!r}")
    if ties == "davidson" and data.n_features:
        raise DataError(
            f"ties='davidson' has no feature effects, but the comparisons carry features "
            f"{list(data.feature_names)}: use ties='half' with the features, or build the "
            "Comparisons without features=", argument="features")
    # a prior would only hide a feature confounded with the item contrasts
    require_features_identified(data, order=False)
    weighted = discrimination and data.n_judges > 1
    warn_if_unidentified(data)
    if weighted:
        _warn_prior_only_judges(data, priors)
    # cells stay per judge in both variants: the unweighted kernel summed over judges equals the
    # pooled one, and the two models then share their observations, which az.compare of their
    # leave-one-cell-out log-likelihoods needs
    cells = data.collapse(order=True, features=True)
    if ties == "davidson":
        require_tie_parameters(cells)
        outcomes = cells.outcome_counts()
    coords = {"item": list(cells.items), "judge": list(cells.judges),
              "cell": cells.cell_labels()}
    if cells.n_features:
        coords["feature"] = list(cells.feature_names)
    with pm.Model(coords=coords) as model:
        item_i = pm.Data("item_i", cells.item_i, dims="cell")
        item_j = pm.Data("item_j", cells.item_j, dims="cell")
        count = pm.Data("count", cells.count, dims="cell")
        judge = pm.Data("judge_code", cells.judge, dims="cell")
        if priors.ability_scale_sd is not None:
            scale = pm.HalfNormal("ability_scale", sigma=priors.ability_scale_sd)
            ability = pm.ZeroSumNormal("ability", sigma=scale, dims="item")
        else:
            ability = _zero_sum("ability", priors.ability_sd, "item", cells.n_items)
        eta = ability[item_i] - ability[item_j]
        if weighted:
            log_disc = _zero_sum("log_discrimination", priors.discrimination_sd, "judge",
                                 cells.n_judges)
            disc = pm.Deterministic("discrimination", pt.exp(log_disc), dims="judge")
            eta = disc[judge] * eta  # eq. (1)
        if cells.n_features:
            # not scaled by γ_k: β_k is in logits of judge k's verdicts
            eta = eta + feature_term(cells.features, judge, priors.feature_effect_sd,
                                     priors.feature_pooling, priors.feature_pooling_sd)
        if ties == "half":
            pm.CustomDist(
                "outcome", eta, count, logp=kernel_logp, random=draw_wins,
                observed=cells.wins, dims="cell",
            )
            return model
        davidson_outcome(eta, judge, count, outcomes, priors.tie_sd)
    return model
