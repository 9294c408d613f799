r"""DIAL's judge-specific order-effect BTL (model (1)) in PyMC.

DIAL: "Position-Debiased LLM Judges with Adaptive Human Preference Calibration" (2026).

Judge k prefers the canonical item i over j, displayed in order a (+1: i shown first, -1: i
shown second), with probability :math:`\sigma(s_{ki} - s_{kj} + a\,b_k)`, each judge's scores
summing to zero (Condition 1). :math:`b_k > 0` favours the item shown first.

============================  ============  ================================================
name                          dims          meaning (paper symbol)
============================  ============  ================================================
``ability``                   judge, item   judge k's position-debiased score, sum zero (s_k)
``order_effect``              judge         order (position) effect (b_k)
``feature_effect``            judge,        effect of the comparison features' differences
                              feature       (beta_k; only with features)
``log_tie``, ``tie``          judge         log tie parameter and tie parameter (log ν_k,
                                            ν_k; only with ``ties="davidson"``)
``outcome``                   cell          wins of item i per (judge, i, j, order) cell
                                            (with Davidson ties: cell x verdict, the wins,
                                            ties and losses of item i)
============================  ============  ================================================

With comparison features (``Comparisons.from_frame(features=...)``) the logit is
:math:`s_{ki} - s_{kj} + a\,b_k + \beta_k^\top(x_i - x_j)` (a generalisation of
model (1)) and a cell is a distinct (judge, i, j, order, x).

The likelihood is evaluated on cells (judge, i, j, order) with the Bernoulli kernel
:math:`y\log\sigma(\eta) + (n-y)\log\sigma(-\eta) = y\eta - n\,\mathrm{softplus}(\eta)` of
:mod:`bayescal.models._btl` (a tie is half a win each way, as in DIAL). The ``cell`` coordinate
holds :meth:`~bayescal.data.Comparisons.cell_labels`. With ``ties="davidson"`` the kernel is
Davidson's (1970) trinomial (:func:`bayescal.models._btl.davidson_logp`) with the order effect
inside :math:`\eta`. Judges share no parameter here; the
shared structure across judges is ``low_rank_judges``.
See ``models/order_effect_btl.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pymc as pm
import pytensor.tensor as pt

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.identify import (
    require_features_identified,
    require_order,
    require_tie_parameters,
    warn_if_order_unidentified,
)
from bayescal.models._btl import davidson_outcome, draw_wins, feature_term, kernel_logp
from bayescal.priors import check_feature_pooling, check_prior_sd

__all__ = ["Priors", "build"]


@dataclass(frozen=True)
class Priors:
    """Prior scales of the order-effect BTL.

    Attributes
    ----------
    ability_sd : float or None
        σ of each judge's ``ability ~ ZeroSumNormal(σ)`` over items (2: a 95% prior range of
        about ±4 logits around the judge's average item). ``None`` is a flat prior on the
        sum-zero subspace (improper: for MAP = MLE, not for NUTS).
    order_effect_sd : float or None
        σ of ``order_effect ~ Normal(0, σ)`` (1: a first-position odds ratio within a factor of
        about 7 a priori; the real judges of DIAL and PRD lie well inside). ``None`` is flat.
    tie_sd : float or None
        σ of ``log_tie ~ Normal(0, σ)`` per judge (``ties="davidson"`` only; 1.5, as in the
        judge-discrimination BTL: ν within a factor of about 20 of 1 a priori, ν = 1 giving one
        verdict in three tied between equal items shown without order effect). ``None`` is flat.
    feature_effect_sd : float or None
        σ of ``feature_effect ~ Normal(0, σ)`` per judge and feature, in logits per unit of
        the feature's difference (1: for a log length ratio, doubling an answer's length moves
        the odds by a factor within about 4 a priori). Used only with features; ``None`` is flat.
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
    order_effect_sd: float | None = 1.0
    tie_sd: float | None = 1.5
    feature_effect_sd: float | None = 1.0
    feature_pooling: str = "none"
    feature_pooling_sd: float = 0.5

    def __post_init__(self) -> None:
        # checked here, not inside PyMC or by the twin (which squares the sd)
        check_prior_sd("ability_sd", self.ability_sd)
        check_prior_sd("order_effect_sd", self.order_effect_sd)
        check_prior_sd("tie_sd", self.tie_sd)
        check_prior_sd("feature_effect_sd", self.feature_effect_sd)
        check_feature_pooling(self.feature_pooling, self.feature_pooling_sd)

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on every block: the MAP is the maximum-likelihood estimate."""
        return cls(ability_sd=None, order_effect_sd=None, tie_sd=None, feature_effect_sd=None)


def build(data: Comparisons, *, priors: Priors | None = None, ties: str = "half") -> pm.Model:
    """Build DIAL's order-effect BTL (model (1)) as a PyMC model.

    Parameters
    ----------
    data : Comparisons
        Verdicts with display order recorded for every cell.
    priors : Priors, optional
        Prior scales (default ``Priors()``).
    ties : {"half", "davidson"}
        ``"half"`` (DIAL's): a tie is half a win each way, a quasi-likelihood when the data
        hold ties. ``"davidson"``: Davidson's (1970) trinomial model, a tie parameter ν_k per
        judge (``log_tie``, ``tie``), P(win, tie, loss) ∝ (e^{η/2}, ν_k, e^{-η/2}) with η as in
        model (1); observed ``outcome`` over (``cell``, ``verdict``).

    Returns
    -------
    pymc.Model
        Free ``ability`` (judge x item, sum zero per judge), ``order_effect`` (judge),
        with features ``feature_effect`` (judge x feature) and with Davidson ties ``log_tie``
        (judge; deterministic ``tie``); observed ``outcome`` over ``cell`` (labelled
        ``judge: item_i vs item_j (item first)``).

    Raises
    ------
    DataError
        Display order not recorded for some cells (named).
    IdentificationError
        A comparison feature whose effect the design cannot separate for some judge (named;
        :func:`bayescal.identify.require_features_identified`): a prior would only hide it.
        With ``ties="davidson"``: no tie in the data, or a judge that never or only tied
        (:func:`bayescal.identify.require_tie_parameters`; a prior alone would set its ν).

    Warns
    -----
    IdentificationWarning
        Per judge: a disconnected graph, an order effect confounded with the scores (DIAL
        Prop. 1) or an infinite MLE; the prior then sets what the data leave free.
    """
    priors = priors if priors is not None else Priors()
    if not isinstance(priors, Priors):
        raise TypeError(f"priors must be an order_effect_btl.Priors, got {priors!r}")
    if ties not in ("half", "davidson"):
        raise ValueError(f"ties must be 'half' or 'davidson', got {ties!r}")
    require_order(data)
    if ties == "davidson":
        require_tie_parameters(data)
    require_features_identified(data)
    warn_if_order_unidentified(data)
    coords = {"judge": list(data.judges), "item": list(data.items),
              "cell": data.cell_labels()}
    if data.n_features:
        coords["feature"] = list(data.feature_names)
    n_items, n_judges = data.n_items, data.n_judges
    with pm.Model(coords=coords) as model:
        judge = pm.Data("judge_code", data.judge, dims="cell")
        item_i = pm.Data("item_i", data.item_i, dims="cell")
        item_j = pm.Data("item_j", data.item_j, dims="cell")
        order = pm.Data("order", data.order, dims="cell")
        count = pm.Data("count", data.count, dims="cell")
        if priors.ability_sd is not None:
            ability = pm.ZeroSumNormal("ability", sigma=priors.ability_sd,
                                       dims=("judge", "item"))
        else:
            free = pm.Flat("ability_free", shape=(n_judges, n_items - 1))
            ability = pm.Deterministic(
                "ability", free @ pt.as_tensor(zero_sum_basis(n_items).T), dims=("judge", "item")
            )
        if priors.order_effect_sd is not None:
            b = pm.Normal("order_effect", 0.0, priors.order_effect_sd, dims="judge")
        else:
            b = pm.Flat("order_effect", dims="judge")
        eta = ability[judge, item_i] - ability[judge, item_j] + order * b[judge]  # model (1)
        if data.n_features:
            eta = eta + feature_term(data.features, judge, priors.feature_effect_sd,
                                     priors.feature_pooling, priors.feature_pooling_sd)
        if ties == "davidson":
            davidson_outcome(eta, judge, count, data.outcome_counts(), priors.tie_sd)
        else:
            pm.CustomDist("outcome", eta, count, logp=kernel_logp, random=draw_wins,
                          observed=data.wins, dims="cell")
    return model
