"""Which human labels to buy: stratified (Neyman) allocation against random labelling.

Design (Chen, Lu, Li, Guo, Li 2026, arXiv:2601.05420, Section 5 grid): N = 2000 items, binary
truth Y with prevalence θ, one judge with specificity q0 and sensitivity q1. A random first
batch of m0 items is human-labelled; B more labels are then bought either at random among the
unlabelled items or by :func:`bayescal.design.allocate_labels` (Neyman allocation over the
judge's two labels, from the first batch; the same greedy steps, vectorised over replicates
through :func:`bayescal.design.greedy_allocation`), drawn at random within each stratum.

Rows: the MLE (observed information, logit-Wald; :func:`binary_from_counts`), the Jeffreys
posterior (equal-tailed; the ``bayes`` row) and PPI, at the 95 % level. Under random labelling
all are valid; under the stratified design the MLE and the posterior remain valid (selection on
the judge's label is ignorable for their likelihood) and PPI does not — it assumes a random
calibration sample. Verdicts: coverage within the ±3 sd binomial band of 0.95 for R
replicates is "holds", below "under", above "over". ``labels_saved`` is the analytic
saving at the same standard error: with true (p_s, σ_s), random labelling of M items gives
variance W/M + c with W = Σ p_s σ_s² and Neyman's (Σ p_s σ_s)²/M + c, so random needs
M·W/(Σ p_s σ_s)² labels for what the allocation gets with M = m0 + B.

Run::

    python validation/design_labels.py            # 4,000 replicates per cell
    python validation/design_labels.py --quick    # 1,000 replicates, 3 cells (CI)
"""

from __future__ import annotations

import argparse
import sys

import bands
import numpy as np
import pandas as pd

from bayescal.design import greedy_allocation
from bayescal.frequentist.judge_mean import binary_from_counts

LEVEL = 0.95


def simulate(theta: float, q0: float, q1: float, n_items: int, m0: int, budget: int,
             design: str, reps: int, seed: int, draws: int = 2000) -> dict[str, dict]:
    """One cell: per method, coverage, mean width and the replicates' estimates."""
    rng = np.random.default_rng(seed)
    p1 = theta * q1 + (1 - theta) * (1 - q0)  # P(judge says 1)
    mu = np.array([theta * (1 - q1) / (1 - p1), theta * q1 / p1])  # P(Y=1 | judge 0, 1)
    k1 = rng.binomial(n_items, p1, reps)
    size = np.stack([n_items - k1, k1], axis=-1)  # items per judge stratum
    first1 = rng.hypergeometric(k1, n_items - k1, m0)
    first = np.stack([m0 - first1, first1], axis=-1)
    pos_first = rng.binomial(first, mu)
    free = size - first
    if design == "random":
        new1 = rng.hypergeometric(free[:, 1], free[:, 0], budget)
        new = np.stack([budget - new1, new1], axis=-1)
    else:  # the allocation of bayescal.design, from what the first batch shows
        a, b = pos_first + 0.5, first - pos_first + 0.5
        sigma2 = a * b / ((a + b) * (a + b + 1))
        weight = (size / n_items) ** 2 * sigma2
        new = greedy_allocation(weight, first, free, budget)
    labelled = first + new
    pos = pos_first + rng.binomial(new, mu)
    counts = {"N11": pos[:, 1], "N01": labelled[:, 1] - pos[:, 1],
              "N10": pos[:, 0], "N00": labelled[:, 0] - pos[:, 0],
              "T1": size[:, 1] - labelled[:, 1], "T0": size[:, 0] - labelled[:, 0]}
    out = {}
    for method, row in binary_from_counts(counts, LEVEL, methods=["mle", "ppi"]).items():
        out[method] = {"covered": (row["lower"] <= theta) & (theta <= row["upper"]),
                       "width": row["upper"] - row["lower"], "estimate": row["estimate"]}
    # the Jeffreys posterior of the saturated model (the bayes row), by exact Beta draws
    shape = (reps, draws)
    pi = rng.beta(size[:, 1, None] + 0.5, size[:, 0, None] + 0.5, shape)
    m1 = rng.beta(counts["N11"][:, None] + 0.5, counts["N01"][:, None] + 0.5, shape)
    m0_ = rng.beta(counts["N10"][:, None] + 0.5, counts["N00"][:, None] + 0.5, shape)
    th = pi * m1 + (1 - pi) * m0_
    lo, hi = np.quantile(th, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=1)
    out["bayes"] = {"covered": (lo <= theta) & (theta <= hi), "width": hi - lo,
                    "estimate": th.mean(axis=1)}
    return out


def labels_saved(theta: float, q0: float, q1: float, m_total: int) -> float:
    p1 = theta * q1 + (1 - theta) * (1 - q0)
    p = np.array([1 - p1, p1])
    mu = np.array([theta * (1 - q1) / (1 - p1), theta * q1 / p1])
    sigma = np.sqrt(mu * (1 - mu))
    return float(m_total * (p * sigma**2).sum() / (p * sigma).sum() ** 2 - m_total)


def verdict(covered: np.ndarray) -> str:
    return bands.verdict(float(covered.mean()), covered.size, LEVEL)


def run(cells: list[tuple[float, float, float]], reps: int, n_items: int, m0: int,
        budget: int) -> pd.DataFrame:
    rows = []
    for c, (theta, q0, q1) in enumerate(cells):
        res = {d: simulate(theta, q0, q1, n_items, m0, budget, d, reps, seed=1000 + c)
               for d in ("random", "neyman")}
        saved = labels_saved(theta, q0, q1, m0 + budget)
        for method in ("mle", "bayes", "ppi"):
            for d in ("random", "neyman"):
                r = res[d][method]
                rows.append({"theta": theta, "q0": q0, "q1": q1, "design": d,
                             "method": method, "coverage": r["covered"].mean(),
                             "width": np.nanmean(r["width"]),
                             "bias": np.nanmean(r["estimate"]) - theta,
                             "verdict": verdict(r["covered"]),
                             "width_ratio": np.nanmean(r["width"])
                             / np.nanmean(res["random"][method]["width"]),
                             "labels_saved": saved})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 replicates, 3 cells")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--m0", type=int, default=40, help="first, random batch of labels")
    ap.add_argument("--budget", type=int, default=160, help="labels bought next")
    args = ap.parse_args(argv)
    grid = [(t, q, q) for t in (0.1, 0.3, 0.5) for q in (0.6, 0.7, 0.8)]
    grid += [(0.1, 0.9, 0.6), (0.05, 0.9, 0.7), (0.2, 0.95, 0.6)]
    cells = [(0.1, 0.9, 0.6), (0.3, 0.7, 0.7), (0.05, 0.9, 0.7)] if args.quick else grid
    reps = args.reps or (1000 if args.quick else 4000)
    table = run(cells, reps, 2000, args.m0, args.budget)
    print(f"N = 2000, first batch m0 = {args.m0} random, then B = {args.budget} labels; "
          f"{reps} replicates per cell; 95 % intervals; band ±3 sd "
          f"({bands.band(reps, LEVEL):.4f})")
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(table.round({"coverage": 3, "width": 4, "bias": 4, "width_ratio": 3,
                           "labels_saved": 1}).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
