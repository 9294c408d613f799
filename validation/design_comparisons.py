"""Which comparisons to collect next: adaptive (bayescal.design.next_comparisons) against random.

Design: a judge-aware BTL leaderboard (Xu, Tan, Wu & Zhou 2026, arXiv:2601.21817) of 20
models with abilities N(0, 1) (centred) and two judges with discriminations 1.5 and 1/1.5.
A first batch of n0 verdicts on uniformly random (pair, judge) triples is fitted by the twin;
then B more verdicts are collected either uniformly at random or in ``batches`` rounds of
"fit → :func:`~bayescal.design.next_comparisons` → collect", and the twin is refitted on all
verdicts. Targets: every pairwise contrast (A-optimal), and the top-3 set (``top=3``).

Reported per design: the mean standard error of the pairwise contrasts (the A-optimal target),
the coverage of their 95 % Wald intervals (averaged over the 190 contrasts; verdict "holds"
within ±3 standard errors of 0.95, the standard error from the spread of the replicates'
coverages, since the contrasts of one replicate share its data), and
``budget_saved``: the random verdicts needed for the same mean SE, by SE ∝ 1/√n, minus those
collected; for the top-3 target, the SE of the contrast between the true third and fourth items
(``boundary_se``, the pair that decides the set), its ``boundary_budget_saved``, and how often the
estimated top-3 set is the true one (``top3_correct``).
An adaptive design that depends only on verdicts already seen is ignorable for the likelihood,
but the coverage column shows that the Wald intervals of the refit still lose a point or two.
The last row makes the same greedy choices from the true abilities and discriminations (with
the fitted covariance): a design that concentrates just as much but does not depend on the
noise, which separates the two causes.

Run::

    python validation/design_comparisons.py            # 200 replicates
    python validation/design_comparisons.py --quick    # 40 replicates (CI)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings

import bands
import numpy as np
import pandas as pd
from scipy.special import expit

from bayescal.data import Comparisons
from bayescal.design import next_comparisons
from bayescal.frequentist import judge_discrimination_btl as jd

LEVEL = 0.95
Z = 1.959963984540054


def _collect(rng, s, gamma, i, j, k):
    return (rng.random(i.size) < expit(gamma[k] * (s[i] - s[j]))).astype(float)


def one(seed: int, n_items: int, n0: int, budget: int, batches: int, design: str,
        target: dict) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n_items)
    s -= s.mean()
    gamma = np.array([1.5, 1 / 1.5])
    items = [f"m{n:02d}" for n in range(n_items)]
    judges = ["j0", "j1"]
    i = rng.integers(0, n_items, n0)
    j = (i + rng.integers(1, n_items, n0)) % n_items
    k = rng.integers(0, 2, n0)
    y = _collect(rng, s, gamma, i, j, k)

    def fit():
        data = Comparisons.from_codes(items, judges, judge=k, item_a=i, item_b=j, outcome=y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return jd.fit(data, information="expected")

    if design == "random":
        ni = rng.integers(0, n_items, budget)
        nj = (ni + rng.integers(1, n_items, budget)) % n_items
        nk = rng.integers(0, 2, budget)
        i, j, k = np.r_[i, ni], np.r_[j, nj], np.r_[k, nk]
        y = np.r_[y, _collect(rng, s, gamma, ni, nj, nk)]
    else:
        per = budget // batches
        for b in range(batches):
            size = per if b < batches - 1 else budget - per * (batches - 1)
            est = fit()
            if design == "oracle":  # the same greedy steps at the true parameters
                est = dataclasses.replace(est, params=est.params.assign(
                    ability=("item", s), discrimination=("judge", gamma)))
            ask = next_comparisons(est, size, random_seed=rng, **target)
            ni = np.array([items.index(a) for a in ask["item_a"]])
            nj = np.array([items.index(a) for a in ask["item_b"]])
            nk = np.array([judges.index(a) for a in ask["judge"]])
            i, j, k = np.r_[i, ni], np.r_[j, nj], np.r_[k, nk]
            y = np.r_[y, _collect(rng, s, gamma, ni, nj, nk)]
    est = fit()
    ab = est.params["ability"].values
    rows = [est.terms.index(f"ability[{t}]") for t in items]
    cov = est.cov[np.ix_(rows, rows)]
    a, b = np.triu_indices(n_items, 1)
    se = np.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b])
    d_hat, d = ab[a] - ab[b], s[a] - s[b]
    covered = np.abs(d_hat - d) <= Z * se
    order = np.argsort(-s)
    third, fourth = order[2], order[3]  # the pair that decides the top-3 set
    boundary = np.sqrt(cov[third, third] + cov[fourth, fourth] - 2 * cov[third, fourth])
    return {"mean_se": float(se.mean()), "coverage": float(covered.mean()),
            "boundary_se": float(boundary),
            "top3_correct": float(set(np.argsort(-ab)[:3]) == set(order[:3]))}


def run(reps: int, n_items: int = 20, n0: int = 600, budget: int = 400, batches: int = 4
        ) -> pd.DataFrame:
    designs = {"random": ("random", {}),
               "greedy: all contrasts": ("adaptive", {"explore": 0.0}),
               "explore 0.25: all contrasts (default)": ("adaptive", {}),
               "explore 0.5: all contrasts": ("adaptive", {"explore": 0.5}),
               "greedy: top-3": ("adaptive", {"top": 3, "explore": 0.0}),
               "explore 0.25: top-3": ("adaptive", {"top": 3}),
               "greedy at the true abilities (check)": ("oracle", {"explore": 0.0})}
    out = []
    for name, (kind, target) in designs.items():
        res = pd.DataFrame([one(1000 + r, n_items, n0, budget, batches, kind, target)
                            for r in range(reps)])
        # contrasts of one replicate share its data: the band comes from the spread of the
        # replicates' coverages, not from 190 independent Bernoulli trials
        out.append({"design": name, **res.mean().to_dict(),
                    "coverage_sd": float(res["coverage"].std(ddof=1) / np.sqrt(reps))})
    table = pd.DataFrame(out).set_index("design")
    base = table.loc["random"]
    n_total = n0 + budget
    table["budget_saved"] = n_total * (base["mean_se"] / table["mean_se"]) ** 2 - n_total
    table["boundary_budget_saved"] = (n_total * (base["boundary_se"] / table["boundary_se"]) ** 2
                                      - n_total)
    table["verdict"] = [bands.verdict(c, reps, LEVEL, half=3 * sd)
                        for c, sd in zip(table["coverage"], table["coverage_sd"], strict=True)]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 replicates")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args(argv)
    reps = args.reps or (40 if args.quick else 200)
    table = run(reps)
    print(f"20 models, 2 judges (discrimination 1.5, 0.67); 600 random verdicts, then 400 more "
          f"(adaptive: 4 rounds of 100); {reps} replicates; 95 % Wald intervals of the 190 "
          "contrasts")
    with pd.option_context("display.width", 160):
        print(table.round(4).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
