"""Simulation-based calibration (SBC) of bayescal's PyMC models, through bayescal.studies.

Talts et al. (2018): draw θ̃ from the prior, data ỹ from the simulator given θ̃, L posterior draws
θ⁽¹⁾..θ⁽ᴸ⁾ given ỹ; the rank #{l : θ⁽ˡ⁾ < θ̃} of each identified scalar is uniform on 0..L when the
fitted model's prior and likelihood match the simulator. Each prior draw is one replicate of a
:mod:`bayescal.studies` study (cell = model × mutation), so the seeds, resume (``--parts``) and a
Dask cluster (``--scheduler``) come from the runner.

Uniformity: ranks of each quantity (L + 1 = 100 rank values) are binned, by default into the
tails and the middle (0–10 %, 10–90 %, 90–100 %; ``--bins 10`` for equal bins), and tested with
Pearson's χ² on (bins − 1) degrees of freedom; a model fails when any quantity's statistic exceeds
the χ² quantile at α / (number of quantities) (Bonferroni: the quantities share prior draws).
The thresholds are χ² quantiles, not tuned.

Why not ``simuk``: simuk 0.3.0 runs with PyMC 6.4 / ArviZ 1.3 (checked on a toy model), but it
ranks only the free random variables (not identified deterministics such as ``discrimination``),
draws every prior sample from one generator in sequence (a replicate's data depend on its
position, so it cannot be split over workers) and refits by ``pm.sample`` with a fresh
compilation per draw (seconds each). Here the model is compiled once per process by nutpie with
the observed counts as a data container and refitted per draw by swapping the data.

Mutations (the checks must catch them): ``loglik_x2`` fits with every count and win doubled,
i.e. the fitted model's log-likelihood is twice the simulator's (the cell kernel is linear in
(y, n)); ``prior_sd_x2`` draws θ̃ with twice the prior scale the fitted model uses.

Entries: judge-discrimination BTL (4 items, 2 judges), order-effect BTL (4 items, 1 judge, both
display orders), score calibration (4-point scale, 6 anchors per judge level; ``loglik_x2`` is not
expressible there because the multinomial totals are graph constants), misclassification (2
judges, 60 items, a third labelled, simulated by :func:`bayescal.simulate.misclassification`;
the design lists every label pattern so a draw only swaps counts), low-rank judges (r = 1, 4
items, 2 judges, both display orders; ranks of the identified S, b, μ, γ only, not U, V), and
human calibration at λ = 0 only (``human_calibration_lambda0``: the human-only branch, 4 items,
3 comparisons per pair). Human calibration at λ > 0 is not an entry: its LLM block is a
Potential over graph constants (tempered) or a second observed node with constant data
(w = 1), so a prior draw cannot swap its data without changing the model's build.

Adding a model is one entry in ``ENTRIES``: a design, the identified quantities, a prior draw and
a simulator (numpy, independent of the model's log-density).

Run::

    python validation/sbc.py --quick            # CI-sized: BTL, 50 prior draws, with mutations
    python validation/sbc.py --draws 200        # more prior draws
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
from scipy.special import expit
from scipy.stats import chi2

from bayescal import studies

POSTERIOR_DRAWS = 99  # L: ranks take L + 1 = 100 values, so 5 or 10 bins split them evenly
THIN = 2
TUNE = 300


@dataclass(frozen=True)
class Entry:
    """One model under SBC.

    ``design()`` builds the PyMC model on a fixed design and returns it with the names of its
    observed-outcome and count data; ``prior(rng, scale)`` draws the identified quantities
    (``scale`` multiplies the prior sd: 1 for the right model); ``simulate(model_data, truth,
    rng)`` returns the outcome array in the model's cell order.
    """

    design: Callable[[], Any]
    prior: Callable[[np.random.Generator, float], dict[str, NDArray[np.float64]]]
    simulate: Callable[[dict[str, NDArray], dict[str, NDArray[np.float64]], np.random.Generator],
                       NDArray[np.float64]]
    # data scaled with the outcome in ``loglik_x2``; None: that mutation is not expressible
    scaled: tuple[str, ...] | None = ("count",)


# ---------------------------------------------------------------------------- judge BTL
BTL_ITEMS, BTL_JUDGES, BTL_COUNT = 4, 2, 4


def _btl_design() -> Any:
    from bayescal.data import Comparisons
    from bayescal.models import judge_discrimination_btl as jd

    i, j = np.triu_indices(BTL_ITEMS, 1)
    k = np.repeat(np.arange(BTL_JUDGES), len(i))
    i, j = np.tile(i, BTL_JUDGES), np.tile(j, BTL_JUDGES)
    design = Comparisons.from_codes(
        [f"item{v}" for v in range(BTL_ITEMS)], [f"judge{v}" for v in range(BTL_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        count=np.full(len(i), float(BTL_COUNT)))
    from bayescal.identify import IdentificationWarning

    with warnings.catch_warnings():
        # the design's outcomes (all ties) are placeholders: each prior draw swaps in its own
        warnings.simplefilter("ignore", IdentificationWarning)
        return jd.build(design, priors=jd.Priors())


def _zero_sum(rng: np.random.Generator, sd: float, n: int) -> NDArray[np.float64]:
    """PyMC's ZeroSumNormal(σ): iid N(0, σ²) projected onto the sum-zero subspace."""
    z = rng.normal(0.0, sd, n)
    return z - z.mean()


def _btl_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    from bayescal.models import judge_discrimination_btl as jd

    p = jd.Priors()
    assert p.ability_sd is not None and p.discrimination_sd is not None
    ability = _zero_sum(rng, scale * p.ability_sd, BTL_ITEMS)
    log_disc = _zero_sum(rng, scale * p.discrimination_sd, BTL_JUDGES)
    return {"ability": ability, "discrimination": np.exp(log_disc)}


def _btl_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                  rng: np.random.Generator) -> NDArray[np.float64]:
    """Wins of item i per cell: Binomial(n, σ(γ_k (s_i − s_j))), Xu et al. eq. (1)."""
    s, g = truth["ability"], truth["discrimination"]
    eta = g[data["judge_code"]] * (s[data["item_i"]] - s[data["item_j"]])
    return rng.binomial(data["count"].astype(np.int64), expit(eta)).astype(np.float64)


# ---------------------------------------------------------------------------- order-effect BTL
ORDER_ITEMS, ORDER_JUDGES, ORDER_COUNT = 4, 1, 4


def _order_design() -> Any:
    from bayescal.data import Comparisons
    from bayescal.identify import IdentificationWarning
    from bayescal.models import order_effect_btl as ob

    i, j = np.triu_indices(ORDER_ITEMS, 1)
    i, j = np.concatenate([i, j]), np.concatenate([j, i])  # each pair in both display orders
    k = np.repeat(np.arange(ORDER_JUDGES), len(i))
    i, j = np.tile(i, ORDER_JUDGES), np.tile(j, ORDER_JUDGES)
    design = Comparisons.from_codes(
        [f"item{v}" for v in range(ORDER_ITEMS)], [f"judge{v}" for v in range(ORDER_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        order=np.ones(len(i)), count=np.full(len(i), float(ORDER_COUNT)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentificationWarning)  # placeholder outcomes
        return ob.build(design, priors=ob.Priors())


def _order_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    from bayescal.models import order_effect_btl as ob

    p = ob.Priors()
    assert p.ability_sd is not None and p.order_effect_sd is not None
    z = rng.normal(0.0, scale * p.ability_sd, (ORDER_JUDGES, ORDER_ITEMS))
    return {"ability": z - z.mean(axis=1, keepdims=True),  # ZeroSumNormal over items
            "order_effect": rng.normal(0.0, scale * p.order_effect_sd, ORDER_JUDGES)}


def _order_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                    rng: np.random.Generator) -> NDArray[np.float64]:
    """Wins of item i per cell: Binomial(n, σ(s_ki − s_kj + a b_k)), DIAL model (1)."""
    s, b, k = truth["ability"], truth["order_effect"], data["judge_code"]
    eta = s[k, data["item_i"]] - s[k, data["item_j"]] + data["order"] * b[k]
    return rng.binomial(data["count"].astype(np.int64), expit(eta)).astype(np.float64)


# ---------------------------------------------------------------------------- score calibration
SCALE, ANCHORS_PER_LEVEL = (1, 4), 6
LEVELS = SCALE[1] - SCALE[0] + 1


def _score_design() -> Any:
    from bayescal.data import Ratings
    from bayescal.models import score_calibration as sc

    judge = np.repeat(np.arange(SCALE[0], SCALE[1] + 1), ANCHORS_PER_LEVEL)
    design = Ratings.from_frame(pd.DataFrame({"judge": judge, "human": judge}), scale=SCALE)
    return sc.build(design, priors=sc.Priors())


def _score_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    from bayescal.models import score_calibration as sc

    p = sc.Priors()
    assert p.cutpoint_sd and p.gap_log_sd and p.increment_log_sd
    return {"cutpoint_first": rng.normal(0.0, scale * p.cutpoint_sd, 1),
            "cutpoint_log_gap": rng.normal(0.0, scale * p.gap_log_sd, LEVELS - 2),
            "log_increment": rng.normal(p.increment_log_mean, scale * p.increment_log_sd,
                                        LEVELS - 1)}


def _score_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                    rng: np.random.Generator) -> NDArray[np.float64]:
    """Human-score counts per judge level: Multinomial(n_j, P(H = · | J = j)), cumulative logit."""
    cut = truth["cutpoint_first"][0] + np.concatenate([[0.0],
                                                       np.cumsum(np.exp(truth["cutpoint_log_gap"]))])
    effect = np.concatenate([[0.0], np.cumsum(np.exp(truth["log_increment"]))])
    cdf = expit(cut[None, :] - effect[:, None])
    prob = np.diff(np.concatenate([np.zeros((LEVELS, 1)), cdf, np.ones((LEVELS, 1))], axis=1))
    prob = np.clip(prob, 0.0, None)
    return np.stack([rng.multinomial(ANCHORS_PER_LEVEL, row / row.sum()) for row in prob]
                    ).astype(np.float64)


# ---------------------------------------------------------------------------- misclassification
MIS_JUDGES, MIS_ITEMS, MIS_LABELLED = 2, 60, 1 / 3


def _mis_design() -> Any:
    from bayescal.data import Labels
    from bayescal.models import misclassification as mis

    # every (Y, Ŷ) calibration pattern and every Ŷ test pattern once, so that the model lists
    # all patterns (its observed counts are per listed pattern) and a draw only swaps counts
    yhat = np.array(np.meshgrid(*[[0, 1]] * MIS_JUDGES, indexing="ij")).reshape(MIS_JUDGES, -1).T
    labels = Labels.from_arrays(np.repeat([0, 1], len(yhat)), np.tile(yhat, (2, 1)), yhat)
    return mis.build(labels, priors=mis.Priors())


def _mis_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    """θ ~ Beta(1, 1), q0, q1 ~ Beta(2, 2) (kappa='nonzero'); ``scale`` > 1 widens each Beta
    to the same mean with a variance about ``scale``² times larger (Beta(a, b)/scale², floor
    0.3), the analogue of a prior sd ``scale`` times too large."""
    from bayescal.models import misclassification as mis

    p = mis.Priors()

    def beta(ab: tuple[float, float], size: int) -> NDArray[np.float64]:
        a, b = (max(v / scale**2, 0.3) for v in ab)
        return rng.beta(a, b, size)

    return {"prevalence": beta(p.prevalence, 1), "specificity": beta(p.specificity, MIS_JUDGES),
            "sensitivity": beta(p.sensitivity, MIS_JUDGES)}


def _mis_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                  rng: np.random.Generator) -> NDArray[np.float64]:
    """Counts per listed pattern from :func:`bayescal.simulate.misclassification` (Chen et al.'s
    design: Y ~ Bern(θ), judges independent given Y, labelled set MCAR)."""
    from bayescal.simulate import misclassification

    labels, _ = misclassification(
        MIS_ITEMS, prevalence=float(truth["prevalence"][0]),
        specificity=truth["specificity"].tolist(), sensitivity=truth["sensitivity"].tolist(),
        labelled_fraction=MIS_LABELLED, random_seed=int(rng.integers(2**31)))
    weights = 2 ** np.arange(MIS_JUDGES)
    cal = np.bincount(labels.y_cal.astype(int) * 2**MIS_JUDGES
                      + labels.yhat_cal.astype(int) @ weights, minlength=2 ** (MIS_JUDGES + 1))
    test = np.bincount(labels.yhat_test.astype(int) @ weights, minlength=2**MIS_JUDGES)
    code = data["yhat"].astype(int) @ weights
    return np.where(data["test"] == 1, test[code],
                    cal[data["human"].astype(int) * 2**MIS_JUDGES + code]).astype(np.float64)


# ---------------------------------------------------------------------------- low-rank judges
LR_ITEMS, LR_JUDGES, LR_COUNT, LR_RANK = 4, 2, 4, 1


def _lr_design() -> Any:
    from bayescal.data import Comparisons
    from bayescal.identify import IdentificationWarning
    from bayescal.models import low_rank_judges as lr

    i, j = np.triu_indices(LR_ITEMS, 1)
    i, j = np.concatenate([i, j]), np.concatenate([j, i])  # both display orders
    k = np.repeat(np.arange(LR_JUDGES), len(i))
    i, j = np.tile(i, LR_JUDGES), np.tile(j, LR_JUDGES)
    design = Comparisons.from_codes(
        [f"item{v}" for v in range(LR_ITEMS)], [f"judge{v}" for v in range(LR_JUDGES)],
        judge=k, item_a=i, item_b=j, outcome=np.full(len(i), 0.5),
        order=np.ones(len(i)), count=np.full(len(i), float(LR_COUNT)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentificationWarning)  # placeholder outcomes
        return lr.build(design, rank=LR_RANK, priors=lr.Priors())


def _lr_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    """The model's prior, drawn directly: A (N−1 × r+1) has density ∝ N(0, σ_A²) ×
    det(AᵀA)^{(N−1)/2}, which factorises over A = Q Lᵀ (Cholesky of AᵀA), so the frame Q is
    Haar on the Stiefel manifold as for a Gaussian A: Q of a Gaussian's QR with diag(R) > 0.
    W = √N H_N Q = [μ, V]; γ = ḡ + H_K δ, ḡ ~ LogNormal; U = H_K u; S = γμᵀ + UVᵀ."""
    from bayescal.basis import zero_sum_basis
    from bayescal.models import low_rank_judges as lr

    p = lr.Priors()
    assert p.loading_mean_sd and p.loading_sd and p.disagreement_sd and p.order_effect_sd
    q, r = np.linalg.qr(rng.normal(0.0, p.basis_sd, (LR_ITEMS - 1, LR_RANK + 1)))
    q = q * np.sign(np.diag(r))
    w = np.sqrt(LR_ITEMS) * zero_sum_basis(LR_ITEMS) @ q
    mu, v = w[:, 0], w[:, 1:]
    hk = zero_sum_basis(LR_JUDGES)
    gamma = (np.exp(rng.normal(0.0, scale * p.loading_mean_sd))
             + hk @ rng.normal(0.0, scale * p.loading_sd, LR_JUDGES - 1))
    u = hk @ rng.normal(0.0, scale * p.disagreement_sd, (LR_JUDGES - 1, LR_RANK))
    return {"ability": np.outer(gamma, mu) + u @ v.T,
            "order_effect": rng.normal(0.0, scale * p.order_effect_sd, LR_JUDGES),
            "consensus": mu, "consensus_loading": gamma}


def _lr_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                 rng: np.random.Generator) -> NDArray[np.float64]:
    """Wins of item i per cell: Binomial(n, σ(S_ki − S_kj + a b_k)), DIAL model (1)."""
    s, b, k = truth["ability"], truth["order_effect"], data["judge_code"]
    eta = s[k, data["item_i"]] - s[k, data["item_j"]] + data["order"] * b[k]
    return rng.binomial(data["count"].astype(np.int64), expit(eta)).astype(np.float64)


# ---------------------------------------------------------------------------- human calibration
HC_REPEATS = 3  # human comparisons per pair of the low-rank design's items
_HC_ROWS: dict[str, NDArray[np.int64]] = {}  # (i, j) per human comparison, set by the design


def _hc_design() -> Any:
    """λ = 0, the human-only branch of the power posterior: the LLM block has weight 0 and the
    human comparisons are the one observed node (one row per comparison, in ``design``
    order, which is recorded here for the simulator)."""
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
    data = Comparisons.concat([llm, human], humans=["human"])
    des = hc.design(data)
    _HC_ROWS["i"], _HC_ROWS["j"] = des.human_i, des.human_j
    return hc.build(data, llm_weight=0.0, priors=hc.Priors())


def _hc_prior(rng: np.random.Generator, scale: float) -> dict[str, NDArray[np.float64]]:
    """s_h = H_N β, β ~ N(0, human_sd²) in Helmert coordinates."""
    from bayescal.basis import zero_sum_basis
    from bayescal.models import human_calibration as hc

    sd = hc.Priors().human_sd
    assert sd is not None
    return {"human_ability": zero_sum_basis(LR_ITEMS) @ rng.normal(0.0, scale * sd,
                                                                   LR_ITEMS - 1)}


def _hc_simulate(data: dict[str, NDArray], truth: dict[str, NDArray[np.float64]],
                 rng: np.random.Generator) -> NDArray[np.float64]:
    """One human verdict per row: Bernoulli(σ(s_i − s_j))."""
    s = truth["human_ability"]
    return rng.binomial(1, expit(s[_HC_ROWS["i"]] - s[_HC_ROWS["j"]])).astype(np.float64)


ENTRIES: dict[str, Entry] = {
    "judge_discrimination_btl": Entry(_btl_design, _btl_prior, _btl_simulate),
    "order_effect_btl": Entry(_order_design, _order_prior, _order_simulate),
    # the multinomial totals are constants of the graph, not data: no loglik_x2 here
    "score_calibration": Entry(_score_design, _score_prior, _score_simulate, scaled=None),
    # the pattern kernel is linear in the counts, which are the only scaled data
    "misclassification": Entry(_mis_design, _mis_prior, _mis_simulate, scaled=()),
    "low_rank_judges": Entry(_lr_design, _lr_prior, _lr_simulate),
    # per-comparison Bernoulli rows: doubling y is not a doubled likelihood, no loglik_x2
    "human_calibration_lambda0": Entry(_hc_design, _hc_prior, _hc_simulate, scaled=None),
}


# ---------------------------------------------------------------------------- one prior draw
_COMPILED: dict[str, tuple[Any, dict[str, NDArray]]] = {}


def _compiled(name: str) -> tuple[Any, dict[str, NDArray]]:
    """nutpie-compiled model with the observed outcome as data ``sbc_outcome`` (once/process)."""
    if name not in _COMPILED:
        import nutpie
        import pymc as pm

        model = ENTRIES[name].design()
        (obs,) = model.observed_RVs
        with model:
            swapped = pm.Data("sbc_outcome", np.asarray(model.rvs_to_values[obs].data),
                              dims=model.named_vars_to_dims.get(obs.name))
        # the observed value becomes a data container, so each prior draw is a data swap, not
        # a new compilation of the model
        model.rvs_to_values[obs] = swapped
        data = {v.name: np.asarray(v.get_value()) for v in model.data_vars}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # numba object mode for CustomDist
            _COMPILED[name] = (nutpie.compile_pymc_model(model, backend="numba"), data)
    return _COMPILED[name]


def prior_draw(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """Ranks of every identified scalar for one prior draw of ``cell['model']``."""
    import nutpie

    entry = ENTRIES[cell["model"]]
    compiled, data = _compiled(cell["model"])
    rng = np.random.default_rng(seed)
    truth = entry.prior(rng, 2.0 if cell["mutation"] == "prior_sd_x2" else 1.0)
    outcome = entry.simulate(data, truth, rng)
    factor = 2.0 if cell["mutation"] == "loglik_x2" else 1.0
    if entry.scaled is None and factor != 1.0:
        raise ValueError(f"{cell['model']}: the loglik_x2 mutation needs the counts as data")
    fitted = compiled.with_data(sbc_outcome=factor * outcome,
                                **{name: factor * data[name] for name in entry.scaled or ()})
    trace = nutpie.sample(fitted, draws=POSTERIOR_DRAWS * THIN, tune=TUNE, chains=1,
                          seed=seed, progress_bar=False)
    rows = []
    divergences = int(np.asarray(trace.sample_stats["diverging"]).sum())
    for name, value in truth.items():
        value = np.ravel(value)  # C order, as the posterior's trailing dimensions
        draws = np.asarray(trace.posterior[name]).reshape(-1, value.size)[::THIN]
        for index, v in enumerate(value):
            rows.append({"quantity": f"{name}[{index}]", "truth": float(v),
                         "rank": int((draws[:, index] < v).sum()), "divergences": divergences})
    return pd.DataFrame(rows)


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
    """One line per (model, mutation): calibrated or not, failed draws, divergences."""
    rows = []
    for (model, mutation), g in tests.groupby(["model", "mutation"], sort=False):
        cell = table[(table["model"] == model) & (table["mutation"] == mutation)]
        per_draw = cell.drop_duplicates("replicate")
        rows.append({"model": model, "mutation": mutation, "prior_draws": len(per_draw),
                     "failed_draws": int((per_draw["error"] != "").sum()),
                     "divergent_draws": int((per_draw["divergences"].fillna(0) > 0).sum()),
                     "min_p": float(g["p"].min()), "rejected": int(g["rejected"].sum()),
                     "quantities": len(g),
                     "verdict": "NOT calibrated" if g["rejected"].any() else "calibrated"})
    return pd.DataFrame(rows)


def run(models: list[str], mutations: list[str], draws: int, workers: int,
        scheduler: str | None = None, parts: Path | None = None) -> pd.DataFrame:
    cells = [{"model": m, "mutation": mu} for m in models for mu in mutations
             if mu != "loglik_x2" or ENTRIES[m].scaled is not None]
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
                        help="comma-separated entries (default all; quick: the BTL only)")
    parser.add_argument("--mutations", type=str, default="none,loglik_x2,prior_sd_x2")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--scheduler", type=str, default=None, help="Dask scheduler address")
    parser.add_argument("--parts", type=Path, default=None, help="partial results (resume)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the right models pass and every mutation is caught")
    args = parser.parse_args(argv)
    draws = args.draws or (50 if args.quick else 200)
    bins = args.bins
    models = (args.models.split(",") if args.models else
              ["judge_discrimination_btl"] if args.quick else list(ENTRIES))
    mutations = args.mutations.split(",")
    print(f"SBC: models {models}, mutations {mutations}, {draws} prior draws, L = "
          f"{POSTERIOR_DRAWS} posterior draws (nutpie, 1 chain, thin {THIN}), {bins} bins, "
          f"α = {args.alpha} per cell (Bonferroni over quantities)")
    sys.stdout.flush()
    table = run(models, mutations, draws, args.jobs, args.scheduler, args.parts)
    tests = uniformity(table, bins, args.alpha)
    print("\nRank histograms and χ² per quantity:")
    print(tests.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    summary = verdicts(tests, table)
    print("\nVerdicts:")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if args.check:
        wrong = summary[(summary["mutation"] == "none") == (summary["verdict"] != "calibrated")]
        for r in wrong.itertuples():
            print(f"CHECK FAILED: {r.model} with mutation {r.mutation!r}: {r.verdict}")
        return 1 if len(wrong) else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
