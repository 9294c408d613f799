"""Simulation-based calibration (SBC) of bayescal's PyMC models, through bayescal.studies.

Talts et al. (2018, arXiv:1804.06788): draw θ̃ from the prior, data ỹ from the model given θ̃,
L posterior draws θ⁽¹⁾..θ⁽ᴸ⁾ given ỹ; the rank #{l : θ⁽ˡ⁾ < θ̃} of each identified scalar is
uniform on 0..L when the fitted model's prior and likelihood match the simulator. Each prior draw
is one replicate of a :mod:`bayescal.studies` study (cell = model × mutation), so the seeds,
resume (``--parts``) and a Dask cluster (``--scheduler``) come from the runner.

Uniformity: ranks of each quantity (L + 1 = 100 rank values) are binned, by default into the
tails and the middle (0–10 %, 10–90 %, 90–100 %; ``--bins 10`` for equal bins), and tested with
Pearson's χ² on (bins − 1) degrees of freedom; a model fails when any quantity's statistic exceeds
the χ² quantile at α / (number of quantities) (Bonferroni: the quantities share prior draws).
The thresholds are χ² quantiles, not tuned. With 50 draws the tail bins expect 5 counts, where
the χ² tail is a little light: the exact multinomial chance that the right model fails is
0.016–0.023 for 4–16 quantities (nominal 0.01), 0.027 with 6 quantities at 30 draws.

Why not ``simuk``: simuk 0.3.0 runs with PyMC 6.4 / ArviZ 1.3 (checked on a toy model), but it
ranks only the free random variables (not identified deterministics such as ``discrimination``),
draws every prior sample from one generator in sequence (a replicate's data depend on its
position, so it cannot be split over workers) and refits by ``pm.sample`` with a fresh
compilation per draw (seconds each). Here the model is compiled once per process by nutpie with
the observed counts as a data container and refitted per draw by swapping the data.

Simulator: the model's own prior predictive. Each entry builds the PyMC model on a fixed design;
the identified quantities θ̃ and the outcome ỹ of a prior draw are one call of a function of
the model's graph (``pm.pytensorf.compile`` of its variables and its observed node, compiled once
per process, reseeded per draw with ``pm.pytensorf.reseed_rngs``), so the check covers the
model's ``random`` functions and its log-density together. An improper free variable has no
draw: the low-rank model's item basis A (a ``Flat`` weighted by a Potential, which
prior-predictive sampling ignores) is replaced by A ~ N(0, σ_A²), and its pivot loadings
(a ``HalfFlat`` ρ weighted by a Potential and the chart's Jacobian) by σ_U χ / t₀, which give
the identified quantities the same law (see ``_lr_substitutes``). No other entry has a
Potential in its prior.

Mutations (the check must catch each, for every model):

* ``loglik_x2``: the fitted model gets ``pm.Potential`` adding the observed node's
  log-likelihood once more (a data weight, 0 in the right model, 1 here): the posterior is
  prior × likelihood², too narrow by about 1/√2 where the data dominate.
* ``prior_sd_x2``: θ̃, ỹ come from the same model built with every prior sd doubled (for the
  Beta priors of both misclassification models, Beta(a, b)/4 with floor 0.3: the same mean,
  about four times the variance); the fit uses the shipped prior.

Sampler: nutpie, one chain, 300 tuning steps and L·2 draws thinned by 2; the draws and
divergences are read from nutpie's raw (Arrow) trace. In 8 right-model fits per model the
smallest bulk ESS of a quantity over the 198 draws was 23–68 for low-rank judges and score
calibration (48–139 for human calibration), so the 99 thinned draws are not all independent;
shorter chains (200 + 98) gave ESS down to 6–9 and were not used.

Divergences: fits use ``target_accept`` 0.9 (score calibration 0.99: at 0.9 its right model
diverged in 6 of 130 prior draws, at the rule's edge); every cell reports how many prior draws
had a divergent transition, and a right-model cell with more than 5 % such draws fails the
check (``verdict`` "divergent") whatever its ranks.

Power (how many prior draws). With the tails bins, a posterior too narrow by 1/√2 (``loglik_x2``
where the data dominate) puts the truth outside its central 80 % with probability
2Φ(−1.2816/√2) = 0.365 instead of 0.2: a χ² noncentrality of 0.17 per prior draw and quantity.
At 50 draws that is 8.5, power about 0.4 per quantity at the Bonferroni threshold (χ²₂ quantile
at 0.01/Q, 12–14); 130 draws give 22, power about 0.9. (Human calibration at λ = 0, 50 draws,
3 comparisons per pair: tail counts 13–18 of 50 for the predicted 18.3 at most, no quantity past
the threshold, p = 0.0099 against 0.0025; at 8 per pair p = 0.017.) ``prior_sd_x2``
moves the tails much further where the prior matters: from its 130-draw rank counts, the exact
multinomial power of a model's most shifted quantity alone is, at 50 draws, 0.87
(misclassification: tail shares 0.23 and 0.23 of 130) to 0.996 (low-rank judges), at 30 draws
0.61–0.93. Hence ``--quick`` (50 draws) checks the right models and ``prior_sd_x2``, and
``--draws 130`` or more is the size that checks ``loglik_x2``.

Entries: judge-discrimination BTL (4 items, 2 judges, 4 comparisons per pair), order-effect BTL
(4 items, 1 judge, both display orders), score calibration (4-point scale, 6 anchors per judge
level), misclassification (2 judges, m = 20 labelled and n = 40 unlabelled items, every label
pattern listed so that a draw only swaps counts), the item-effect misclassification model
(``misclassification_dependent``: the same design with 3 judges; its ``outcome`` draws each
item with its own item effect, so the Gauss–Hermite log-density is checked against the model's
generative process, not against its own quadrature), low-rank judges (r = 1, 4 items, 2 judges, both
display orders; ranks of the identified S, b, μ, γ only, not U, V), and human calibration at
λ = 0 only (``human_calibration_lambda0``: the human-only branch, 4 items, 8 comparisons per
pair). Human calibration at λ > 0 is not an entry: its LLM block is a Potential (tempered),
which prior-predictive sampling ignores, so its prior predictive is not the fitted model's.

Adding a model is one entry in ``ENTRIES``: ``build(prior_scale)`` on a fixed design and the
identified quantities.

Run::

    python validation/sbc.py --quick --mutations none,prior_sd_x2   # 50 prior draws (CI)
    python validation/sbc.py --draws 130 --check                    # every mutation powered
    python validation/sbc.py --draws 200                            # the full table
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import chi2

from bayescal import studies

POSTERIOR_DRAWS = 99  # L: ranks take L + 1 = 100 values, so 5 or 10 bins split them evenly
THIN = 2
TUNE = 300
TARGET_ACCEPT = 0.9
# a right-model cell fails when more than this share of its prior draws had a divergent
# transition: a divergence means the posterior draws may miss part of the posterior, so a rank
# from such a fit is not a draw from the uniform the test assumes
MAX_DIVERGENT_SHARE = 0.05
MUTATIONS = ("none", "loglik_x2", "prior_sd_x2")


@dataclass(frozen=True)
class Entry:
    """One model under SBC.

    ``build(prior_scale)`` builds the PyMC model on a fixed design with every prior scale
    multiplied by ``prior_scale`` (1: the model as shipped); ``quantities`` names its identified
    variables (free or deterministic), whose prior-predictive values are the truth θ̃;
    ``substitutes(model, prior_scale)`` maps each improper free variable (a ``Flat`` weighted
    by a Potential), which the prior predictive cannot draw, to a random variable giving the
    identified quantities the same prior law; ``target_accept`` is NUTS's, raised where the
    default diverges too often.
    """

    build: Callable[[float], Any]
    quantities: tuple[str, ...]
    substitutes: Callable[[Any, float], dict[Any, Any]] | None = None
    target_accept: float = TARGET_ACCEPT


def _quiet(build: Callable[[], Any]) -> Any:
    from bayescal.identify import IdentificationWarning

    with warnings.catch_warnings():
        # the design's outcomes are placeholders: each prior draw swaps in its own
        warnings.simplefilter("ignore", IdentificationWarning)
        return build()


def _pairs(items: int, judges: int, both_orders: bool) -> tuple[NDArray, NDArray, NDArray]:
    i, j = np.triu_indices(items, 1)
    if both_orders:
        i, j = np.concatenate([i, j]), np.concatenate([j, i])
    k = np.repeat(np.arange(judges), len(i))
    return k, np.tile(i, judges), np.tile(j, judges)


# ---------------------------------------------------------------------------- judge BTL
BTL_ITEMS, BTL_JUDGES, BTL_COUNT = 4, 2, 4


def _btl(prior_scale: float) -> Any:
    from bayescal.data import Comparisons
    from bayescal.models import judge_discrimination_btl as jd

    k, i, j = _pairs(BTL_ITEMS, BTL_JUDGES, both_orders=False)
    design = Comparisons.from_codes(
        [f"item{v}" for v in range(BTL_ITEMS)], [f"judge{v}" for v in range(BTL_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        count=np.full(len(i), float(BTL_COUNT)))
    p = jd.Priors()
    assert p.ability_sd is not None and p.discrimination_sd is not None
    priors = jd.Priors(ability_sd=prior_scale * p.ability_sd,
                       discrimination_sd=prior_scale * p.discrimination_sd)
    return _quiet(lambda: jd.build(design, priors=priors))


# ---------------------------------------------------------------------------- order-effect BTL
ORDER_ITEMS, ORDER_JUDGES, ORDER_COUNT = 4, 1, 4


def _order(prior_scale: float) -> Any:
    from bayescal.data import Comparisons
    from bayescal.models import order_effect_btl as ob

    k, i, j = _pairs(ORDER_ITEMS, ORDER_JUDGES, both_orders=True)
    design = Comparisons.from_codes(
        [f"item{v}" for v in range(ORDER_ITEMS)], [f"judge{v}" for v in range(ORDER_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        order=np.ones(len(i)), count=np.full(len(i), float(ORDER_COUNT)))
    p = ob.Priors()
    assert p.ability_sd is not None and p.order_effect_sd is not None
    priors = ob.Priors(ability_sd=prior_scale * p.ability_sd,
                       order_effect_sd=prior_scale * p.order_effect_sd)
    return _quiet(lambda: ob.build(design, priors=priors))


# ---------------------------------------------------------------------------- score calibration
SCALE, ANCHORS_PER_LEVEL = (1, 4), 6


def _score(prior_scale: float) -> Any:
    from bayescal.data import Ratings
    from bayescal.models import score_calibration as sc

    judge = np.repeat(np.arange(SCALE[0], SCALE[1] + 1), ANCHORS_PER_LEVEL)
    design = Ratings.from_frame(pd.DataFrame({"judge": judge, "human": judge}), scale=SCALE)
    p = sc.Priors()
    assert p.cutpoint_sd and p.gap_log_sd and p.increment_log_sd
    priors = sc.Priors(cutpoint_sd=prior_scale * p.cutpoint_sd,
                       gap_log_sd=prior_scale * p.gap_log_sd,
                       increment_log_mean=p.increment_log_mean,
                       increment_log_sd=prior_scale * p.increment_log_sd)
    return sc.build(design, priors=priors)


# ---------------------------------------------------------------------------- misclassification
MIS_JUDGES, MIS_CALIBRATION, MIS_TEST = 2, 20, 40
# the item-effect model: three judges (its 2K + 3 = 9 parameters), the same set sizes
DEP_JUDGES = 3


def _label_design(judges: int) -> Any:
    """m = 20 labelled and n = 40 unlabelled items; every (Y, Ŷ) and Ŷ pattern is listed, so
    a draw only swaps counts."""
    from bayescal.data import Labels

    yhat = np.array(np.meshgrid(*[[0, 1]] * judges, indexing="ij")).reshape(judges, -1).T
    # the set sizes m, n are the listed rows: every pattern once, then filler rows
    cal_y = np.resize(np.repeat([0, 1], len(yhat)), MIS_CALIBRATION)
    cal_yhat = np.resize(np.tile(yhat, (2, 1)), (MIS_CALIBRATION, judges))
    test_yhat = np.resize(yhat, (MIS_TEST, judges))
    return Labels.from_arrays(cal_y, cal_yhat, test_yhat)


def _widen(ab: tuple[float, float], prior_scale: float) -> tuple[float, float]:
    """Beta(a, b) -> Beta(a, b)/scale² (floor 0.3) for ``prior_scale`` > 1: the same mean, a
    variance about scale² times larger, the analogue of a prior sd scale times too large."""
    a, b = (max(v / prior_scale**2, 0.3) if prior_scale != 1 else v for v in ab)
    return a, b


def _mis(prior_scale: float) -> Any:
    """Chen et al.'s design (Y ~ Bern(θ), judges independent given Y) on the label design;
    ``prior_scale`` widens each Beta (``_widen``)."""
    from bayescal.models import misclassification as mis

    p = mis.Priors()
    return mis.build(_label_design(MIS_JUDGES), priors=mis.Priors(
        prevalence=_widen(p.prevalence, prior_scale),
        specificity=_widen(p.specificity, prior_scale),
        sensitivity=_widen(p.sensitivity, prior_scale)))


def _dep(prior_scale: float) -> Any:
    """The item-effect model (judges sharing u ~ N(0, 1), scale σ_y) on the label design of
    three judges: the Betas widened as for misclassification, the half-normal sd of σ_y times
    ``prior_scale``."""
    from bayescal.models import misclassification_dependent as dep

    p = dep.Priors()
    assert p.item_sd is not None
    return dep.build(_label_design(DEP_JUDGES), priors=dep.Priors(
        prevalence=_widen(p.prevalence, prior_scale),
        specificity=_widen(p.specificity, prior_scale),
        sensitivity=_widen(p.sensitivity, prior_scale), item_sd=prior_scale * p.item_sd))


# ---------------------------------------------------------------------------- low-rank judges
LR_ITEMS, LR_JUDGES, LR_COUNT, LR_RANK = 4, 2, 4, 1
# the chart's pivot: a fixed start S₀ (judge, item) with a consensus (Sᵀ1 ≠ 0) and a
# disagreement of rank 1; the placeholder outcomes (all ties) have neither, and the prior and
# posterior of every invariant do not depend on the pivot (the model's docstring)
LR_START = np.array([[-1.5, -0.5, 0.5, 1.5], [-1.5, 0.5, -0.5, 1.5]])


def _lr_design() -> Any:
    from bayescal.data import Comparisons

    k, i, j = _pairs(LR_ITEMS, LR_JUDGES, both_orders=True)
    return Comparisons.from_codes(
        [f"item{v}" for v in range(LR_ITEMS)], [f"judge{v}" for v in range(LR_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        order=np.ones(len(i)), count=np.full(len(i), float(LR_COUNT)))


def _lr_priors(prior_scale: float) -> Any:
    from bayescal.models import low_rank_judges as lr

    p = lr.Priors()
    assert p.loading_mean_sd and p.loading_sd and p.disagreement_sd and p.order_effect_sd
    return lr.Priors(basis_sd=p.basis_sd, loading_mean_sd=prior_scale * p.loading_mean_sd,
                     loading_sd=prior_scale * p.loading_sd,
                     disagreement_sd=prior_scale * p.disagreement_sd,
                     order_effect_sd=prior_scale * p.order_effect_sd)


def _lr(prior_scale: float) -> Any:
    from bayescal.models import low_rank_judges as lr

    return _quiet(lambda: lr.build(_lr_design(), rank=LR_RANK, priors=_lr_priors(prior_scale),
                                   start=LR_START))


def _lr_substitutes(model: Any, prior_scale: float) -> dict[Any, Any]:
    """Draws for the two improper free variables, with the prior law of the invariants.

    The item basis A is a ``Flat`` shifted by the pivot's A₀, weighted by the Potential
    N(A; 0, σ_A²) det(AᵀA)^{(N−1)/2}. Both that density and a plain Gaussian depend on A only
    through R in A = Q R (QR, diag R > 0), so under either Q is Haar on the Stiefel manifold,
    independent of R; the identified quantities (μ, V from W = √N H_N Q, then S, γ, b) depend
    on A only through Q. So A ~ N(0, σ_A²) replaces the Flat.

    The pivot loadings T_ii = t₀ᵢ ρᵢ (ρ a ``HalfFlat``) have, through the Potential
    N(T_ii; 0, σ_U²) and the chart's Jacobian T_ii^{r−i}, the density of σ_U χ_{r−i+1} (the
    Bartlett decomposition of the Gaussian Ũ the chart replaces), so ρᵢ = σ_U χ_{r−i+1} / t₀ᵢ.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from bayescal.basis import zero_sum_basis
    from bayescal.models import low_rank_judges as lr

    design = _lr_design()
    _, t0, W0 = lr._pivot(design.order_cells(True), LR_RANK, True, LR_START)
    # A₀ as build computes it from the pivot: A = (the Flat) + A₀
    start_a = np.sqrt((LR_ITEMS - 1) / LR_ITEMS) * zero_sum_basis(LR_ITEMS).T @ W0
    sd = _lr_priors(prior_scale).disagreement_sd
    chi = pt.sqrt(pm.ChiSquared.dist(nu=np.arange(LR_RANK, 0, -1).astype(float)))
    return {model["item_basis_free"]:
            pm.Normal.dist(0.0, lr.Priors().basis_sd, shape=start_a.shape) - start_a,
            model["disagreement_scale_free"]: sd * chi / t0}


# ---------------------------------------------------------------------------- human calibration
HC_REPEATS = 8  # human comparisons per pair: 8, as the BTL design (4 per judge, 2 judges)


def _hc(prior_scale: float) -> Any:
    """λ = 0, the human-only branch of the power posterior: one row per human comparison."""
    from bayescal.data import Comparisons
    from bayescal.models import human_calibration as hc

    items = [f"item{v}" for v in range(LR_ITEMS)]
    llm = Comparisons.from_codes(items, [f"judge{v}" for v in range(LR_JUDGES)],
                                 judge=[0, 1, 1], item_a=[0, 1, 2], item_b=[1, 2, 3],
                                 outcome=[0.5, 0.5, 0.5], order=[1, 1, 1])  # unused at λ = 0
    i, j = np.triu_indices(LR_ITEMS, 1)
    i, j = np.repeat(i, HC_REPEATS), np.repeat(j, HC_REPEATS)
    human = Comparisons.from_codes(items, ["human"], judge=np.zeros(len(i), int), item_a=i,
                                   item_b=j, outcome=np.full(len(i), 0.5))
    sd = hc.Priors().human_sd
    assert sd is not None
    return hc.build(Comparisons.concat([llm, human], humans=["human"]), llm_weight=0.0,
                    priors=hc.Priors(human_sd=prior_scale * sd))


ENTRIES: dict[str, Entry] = {
    "judge_discrimination_btl": Entry(_btl, ("ability", "discrimination")),
    "order_effect_btl": Entry(_order, ("ability", "order_effect")),
    # at target_accept 0.9, 6 of 130 right-model fits diverged (4.6 %, at the 5 % rule's edge;
    # 5 of 50 in one run, 1 of 50 in another); 0.99 gave none of 130 (0.95: 1)
    "score_calibration": Entry(_score, ("cutpoint_first", "cutpoint_log_gap", "log_increment"),
                               target_accept=0.99),
    "misclassification": Entry(_mis, ("prevalence", "specificity", "sensitivity")),
    "misclassification_dependent": Entry(_dep, ("prevalence", "specificity", "sensitivity",
                                                "item_sd")),
    "low_rank_judges": Entry(_lr, ("ability", "order_effect", "consensus", "consensus_loading"),
                             _lr_substitutes),
    "human_calibration_lambda0": Entry(_hc, ("human_ability",)),
}


# ---------------------------------------------------------------------------- one prior draw
@dataclass
class _Compiled:
    fit: Any  # nutpie-compiled right model, outcome and mutation weight as data
    simulators: dict[float, tuple[Any, list[Any]]]  # prior scale -> (draw function, its rngs)


_COMPILED: dict[str, _Compiled] = {}


def _simulator(entry: Entry, prior_scale: float) -> tuple[Any, list[Any]]:
    """The model's own prior predictive of (quantities..., outcome), compiled once."""
    import pymc as pm
    from pytensor.graph.replace import graph_replace

    model = entry.build(prior_scale)
    (obs,) = model.observed_RVs
    outputs = [model[q] for q in entry.quantities] + [obs]
    if entry.substitutes is not None:
        outputs = graph_replace(outputs, entry.substitutes(model, prior_scale), strict=True)
    rngs = pm.pytensorf.find_rng_nodes(outputs)
    # FAST_COMPILE: one call per prior draw, so compile time matters and run time does not
    return pm.pytensorf.compile([], outputs, random_seed=0, mode="FAST_COMPILE"), rngs


def _compiled(name: str) -> _Compiled:
    """The fitted model and its simulators, compiled once per process."""
    if name not in _COMPILED:
        import nutpie
        import pymc as pm
        import pytensor.tensor as pt

        entry = ENTRIES[name]
        model = entry.build(1.0)
        (obs,) = model.observed_RVs
        with model:
            swapped = pm.Data("sbc_outcome", np.asarray(model.rvs_to_values[obs].data),
                              dims=model.named_vars_to_dims.get(obs.name))
            # the observed value becomes a data container, so each prior draw is a data swap,
            # not a new compilation of the model
            model.rvs_to_values[obs] = swapped
            # loglik_x2: weight 1 adds the observed node's log-likelihood once more (the
            # posterior ∝ prior × likelihood², tempered at 2); weight 0 is the model as shipped
            again = pm.Data("sbc_loglik_again", 0.0)
            pm.Potential("sbc_loglik_x2", again * pt.sum(pm.logp(obs, swapped)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # numba object mode for CustomDist
            fit = nutpie.compile_pymc_model(model, backend="numba")
        _COMPILED[name] = _Compiled(fit, {s: _simulator(entry, s) for s in (1.0, 2.0)})
    return _COMPILED[name]


def prior_draw(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """Ranks of every identified scalar for one prior-predictive draw of ``cell['model']``."""
    import nutpie
    import pymc as pm

    entry, compiled = ENTRIES[cell["model"]], _compiled(cell["model"])
    mutation = cell["mutation"]
    if mutation not in MUTATIONS:
        raise ValueError(f"unknown mutation {mutation!r}; one of {MUTATIONS}")
    draw, rngs = compiled.simulators[2.0 if mutation == "prior_sd_x2" else 1.0]
    pm.pytensorf.reseed_rngs(rngs, seed)
    *truth, outcome = draw()
    fitted = compiled.fit.with_data(
        sbc_outcome=np.asarray(outcome, dtype=np.float64),
        sbc_loglik_again=np.asarray(1.0 if mutation == "loglik_x2" else 0.0))
    # the raw (Arrow) trace: its conversion to a DataTree costs about four times the sampling
    # of these small models (0.11 s against 0.02 s a fit, measured), and only the draws of the
    # quantities and the divergences are read
    raw = nutpie.sample(fitted, draws=POSTERIOR_DRAWS * THIN, tune=TUNE, chains=1, seed=seed,
                        progress_bar=False, target_accept=entry.target_accept,
                        return_raw_trace=True)
    posterior, divergences = _posterior(raw, entry.quantities)
    rows = []
    for name, value in zip(entry.quantities, truth, strict=True):
        value = np.ravel(value)  # C order, as the posterior's flattened draws
        draws = posterior[name].reshape(-1, value.size)[::THIN]
        for index, v in enumerate(value):
            rows.append({"quantity": f"{name}[{index}]", "truth": float(v),
                         "rank": int((draws[:, index] < v).sum()), "divergences": divergences})
    return pd.DataFrame(rows)


def _posterior(raw: Any, names: tuple[str, ...]) -> tuple[dict[str, NDArray], int]:
    """Post-warmup draws (draw, flattened value) of ``names`` and the number of divergent
    post-warmup transitions, from nutpie's raw trace of one chain (rows flagged ``tuning``
    are the warmup, as nutpie's own conversion splits them)."""
    import pyarrow as pa

    (draws,), (stats,) = raw.get_arrow_trace()

    def column(batch: Any, name: str) -> Any:
        return pa.array(batch.column(name))  # an Arrow column of nutpie's own arrow library

    keep = ~column(stats, "tuning").to_numpy(zero_copy_only=False).astype(bool)
    diverging = column(stats, "diverging").to_numpy(zero_copy_only=False).astype(bool)
    out = {}
    for name in names:
        values = column(draws, name)
        flat = values.flatten() if hasattr(values, "flatten") else values  # vector: list cells
        out[name] = flat.to_numpy(zero_copy_only=False).astype(np.float64).reshape(
            len(values), -1)[keep]
    return out, int(diverging[keep].sum())


# ---------------------------------------------------------------------------- uniformity
def bin_edges(bins: str) -> NDArray[np.int64]:
    """Rank-bin edges on 0..L+1: ``"tails"`` = [0, 10 %), [10 %, 90 %), [90 %, 100 %]; or B equal.

    The tails split puts the χ² test's power where a too narrow or too wide posterior moves
    the ranks (both ends at once), which equal bins dilute over B − 1 degrees of freedom.
    """
    n = POSTERIOR_DRAWS + 1
    if bins == "tails":
        return np.array([0, n // 10, n - n // 10, n])
    b = int(bins)
    if b < 2 or n % b:
        raise ValueError(f"{b} bins do not split {n} rank values evenly")
    return np.arange(0, n + 1, n // b)


def uniformity(table: pd.DataFrame, bins: str, alpha: float) -> pd.DataFrame:
    """χ² test of uniform ranks per (model, mutation, quantity), Bonferroni within a cell."""
    edges = bin_edges(bins)
    share = np.diff(edges) / edges[-1]
    ok = table[table["error"] == ""]
    rows = []
    for (model, mutation), cell in ok.groupby(["model", "mutation"], sort=False):
        n_q = cell["quantity"].nunique()
        for quantity, g in cell.groupby("quantity", sort=False):
            counts = np.histogram(g["rank"].to_numpy(), bins=edges)[0]
            expected = len(g) * share
            stat = float(((counts - expected) ** 2 / expected).sum())
            rows.append({"model": model, "mutation": mutation, "quantity": quantity,
                         "draws": len(g), "counts": " ".join(map(str, counts)),
                         "chi2": stat, "p": float(chi2.sf(stat, len(share) - 1)),
                         "threshold": float(chi2.isf(alpha / n_q, len(share) - 1))})
    out = pd.DataFrame(rows)
    out["rejected"] = out["chi2"] > out["threshold"]
    return out


def verdicts(tests: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """One line per (model, mutation) of ``table``: calibrated or not, failed draws, divergences.

    A cell any of whose prior draws raised is ``"draws failed"`` whatever its ranks (a check
    on the draws that happened to succeed is not the check), so a model whose every draw fails
    is a line of the table, not a missing one.
    """
    rows = []
    for (model, mutation), cell in table.groupby(["model", "mutation"], sort=False):
        g = tests[(tests["model"] == model) & (tests["mutation"] == mutation)]
        per_draw = cell.drop_duplicates("replicate")
        failed = int((per_draw["error"] != "").sum())
        divergent = int((per_draw["divergences"].fillna(0) > 0).sum())
        # a right model whose fits diverge too often is not shown calibrated, whatever the
        # ranks say (its posterior draws may miss part of the posterior)
        too_divergent = mutation == "none" and divergent > MAX_DIVERGENT_SHARE * len(per_draw)
        verdict = ("draws failed" if failed else
                   "NOT calibrated" if g["rejected"].any() else
                   "divergent" if too_divergent else "calibrated")
        rows.append({"model": model, "mutation": mutation, "prior_draws": len(per_draw),
                     "failed_draws": failed, "divergent_draws": divergent,
                     "min_p": float(g["p"].min()) if len(g) else np.nan,
                     "rejected": int(g["rejected"].sum()), "quantities": len(g),
                     "verdict": verdict})
    return pd.DataFrame(rows)


def failures(summary: pd.DataFrame) -> pd.DataFrame:
    """The lines of :func:`verdicts` that fail the check: a right model not "calibrated", a
    mutation not "NOT calibrated" (a failed or divergent mutated cell is not a mutation caught)."""
    expected = np.where(summary["mutation"] == "none", "calibrated", "NOT calibrated")
    return summary[summary["verdict"] != expected]


def run(models: list[str], mutations: list[str], draws: int, workers: int,
        scheduler: str | None = None, parts: Path | None = None) -> pd.DataFrame:
    cells = [{"model": m, "mutation": mu} for m in models for mu in mutations]
    return studies.run(studies.Study("sbc", cells, draws, prior_draw), workers=workers,
                       scheduler=scheduler, out=parts, chunk=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI size: 50 prior draws")
    parser.add_argument("--draws", type=int, default=None, help="prior draws (default 200)")
    parser.add_argument("--bins", type=str, default="tails",
                        help="'tails' (0-10-90-100 %%, default) or a number of equal bins")
    parser.add_argument("--alpha", type=float, default=0.01, help="family-wise level per cell")
    parser.add_argument("--models", type=str, default=None,
                        help="comma-separated entries (default all)")
    parser.add_argument("--mutations", type=str, default=",".join(MUTATIONS))
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--scheduler", type=str, default=None, help="Dask scheduler address")
    parser.add_argument("--parts", type=Path, default=None, help="partial results (resume)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the right models pass and every mutation is caught")
    args = parser.parse_args(argv)
    draws = args.draws or (50 if args.quick else 200)
    bins = args.bins
    models = args.models.split(",") if args.models else list(ENTRIES)
    mutations = args.mutations.split(",")
    unknown = sorted(set(models) - set(ENTRIES)) + sorted(set(mutations) - set(MUTATIONS))
    if unknown:
        parser.error(f"unknown models or mutations {unknown}; models {list(ENTRIES)}, "
                     f"mutations {list(MUTATIONS)}")
    print(f"SBC: models {models}, mutations {mutations}, {draws} prior draws, L = "
          f"{POSTERIOR_DRAWS} posterior draws (nutpie, 1 chain, thin {THIN}, target_accept "
          f"{TARGET_ACCEPT} unless the entry sets it), {bins} bins, α = {args.alpha} per cell "
          f"(Bonferroni over quantities); a right model fails with divergences in more than "
          f"{MAX_DIVERGENT_SHARE:.0%} of its prior draws")
    sys.stdout.flush()
    table = run(models, mutations, draws, args.jobs, args.scheduler, args.parts)
    if "rank" not in table or table["rank"].isna().all():
        # every prior draw raised: say why instead of failing on an empty rank table
        errors = table["error"].dropna().unique() if "error" in table else []
        print(f"CHECK FAILED: every prior draw failed; first error: "
              f"{errors[0] if len(errors) else 'unknown'}")
        return 1
    tests = uniformity(table, bins, args.alpha)
    print("\nRank histograms and χ² per quantity:")
    print(tests.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    summary = verdicts(tests, table)
    print("\nVerdicts:")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    for r in table[table["error"] != ""].drop_duplicates(["model", "mutation"]).itertuples():
        print(f"{r.model} with mutation {r.mutation!r}, first failed draw: {r.error}")
    if args.check:
        wrong = failures(summary)
        for r in wrong.itertuples():
            print(f"CHECK FAILED: {r.model} with mutation {r.mutation!r}: {r.verdict}")
        return 1 if len(wrong) else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
