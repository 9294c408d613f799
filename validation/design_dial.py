"""Which human comparisons to add to DIAL: adaptive (bayescal.design.next_comparisons) vs random.

Design: DIAL's synthetic study (Section 6.1, configuration ``main10``: N = 10 items, K = 4 LLM
judges, rank r = 1, n_l = 20,000 LLM verdicts with the canonical item first w.p. 0.75, human
target s_h = μ; :mod:`bayescal.simulate_dial`, seeds s … s + 4 as in the paper). A first batch
of n0 human comparisons on uniformly random pairs is collected; then B more, either on random
pairs or in ``rounds`` rounds of "fit → :func:`~bayescal.design.next_comparisons` (target: every
contrast of s_h) → collect". The fit is DIAL-Anc (λ = ∞, consensus space, the LLM estimation
error of M included), the estimator the design's Σ describes; the final interval is the
paper's: the cell-clustered sandwich (judge × pair, CR0).

Reported per design: ``mean_se`` (mean standard error of the 45 contrasts s_hi − s_hj),
``rmse`` (of those contrasts against the truth), ``coverage`` of their 95 % intervals (mean over
the contrasts; verdict "holds" within ±3 standard errors of 0.95, the standard error from the
spread of the replicates' coverages, since the contrasts of one replicate share its data) and
``humans_saved``: the random human comparisons needed for the same mean SE, by SE ∝ 1/√n_h
(with 20,000 LLM verdicts the LLM part of the variance is small), minus those collected.

Run::

    python validation/design_dial.py            # 200 replicates
    python validation/design_dial.py --quick    # 3 replicates (CI)
"""

from __future__ import annotations

import argparse
import sys
import warnings

import bands
import numpy as np
import pandas as pd
from scipy.special import expit

from bayescal import simulate_dial as sd
from bayescal.data import Comparisons
from bayescal.design import next_comparisons
from bayescal.frequentist import human_calibration as hc

LEVEL = 0.95
Z = 1.959963984540054
N, K, R = 10, 4, 1


def _humans(items: list[str], i: np.ndarray, j: np.ndarray, y: np.ndarray) -> Comparisons:
    return Comparisons.from_codes(items, ["human"], judge=np.zeros(i.size), item_a=i, item_b=j,
                                  outcome=y, humans=["human"])


def one(seed: int, design: str, n0: int, budget: int, rounds: int, n_l: int) -> dict[str, float]:
    par = sd.truth(N, K, R, random_seed=seed)
    s_h = par["s_h"]
    llm = sd.llm(par, n_l, random_seed=seed + 3)
    items = list(llm.items)
    first = sd.human(par, n0, random_seed=seed + 4)
    rng = np.random.default_rng(seed + 5)
    parts = [llm, first]

    def fit(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return hc.fit(Comparisons.concat(parts, humans=["human"]), rank=R, **kw)

    if design == "random":
        ii, jj = np.triu_indices(N, 1)
        pair = rng.integers(0, ii.size, budget)
        i, j = ii[pair], jj[pair]
        parts.append(_humans(items, i, j, (rng.random(budget) < expit(s_h[i] - s_h[j])) * 1.0))
    else:
        per = budget // rounds
        for r in range(rounds):
            size = per if r < rounds - 1 else budget - per * (rounds - 1)
            ask = next_comparisons(fit(information="expected"), size, random_seed=rng,
                                   explore=0.0 if design == "greedy" else 0.25)
            i = np.array([items.index(a) for a in ask["item_a"]])
            j = np.array([items.index(a) for a in ask["item_b"]])
            parts.append(_humans(items, i, j, (rng.random(size) < expit(s_h[i] - s_h[j])) * 1.0))
    est = fit(information="cluster", cluster="judge_pair", correction="CR0")
    s = est.params["human_ability"].values
    rows = [est.terms.index(f"human_ability[{t}]") for t in items]
    cov = est.cov[np.ix_(rows, rows)]
    a, b = np.triu_indices(N, 1)
    se = np.sqrt(np.clip(cov[a, a] + cov[b, b] - 2 * cov[a, b], 0, None))
    err = s[a] - s[b] - (s_h[a] - s_h[b])
    return {"mean_se": float(se.mean()), "sq_error": float(np.mean(err**2)),
            "coverage": float(np.mean(np.abs(err) <= Z * se))}


def run(reps: int, n0: int = 100, budget: int = 100, rounds: int = 2, n_l: int = 20_000
        ) -> pd.DataFrame:
    out = []
    for design in ("random", "greedy", "explore 0.25 (default)"):
        res = pd.DataFrame([one(seed, design, n0, budget, rounds, n_l) for seed in range(reps)])
        out.append({"design": design, "mean_se": res["mean_se"].mean(),
                    "rmse": float(np.sqrt(res["sq_error"].mean())),
                    "coverage": res["coverage"].mean(),
                    # contrasts of one replicate share its data: the band comes from the
                    # spread of the replicates' coverages
                    "coverage_sd": float(res["coverage"].std(ddof=1) / np.sqrt(reps))})
    table = pd.DataFrame(out).set_index("design")
    n_total = n0 + budget
    table["humans_saved"] = n_total * (table.loc["random", "mean_se"]
                                       / table["mean_se"]) ** 2 - n_total
    table["verdict"] = [bands.verdict(c, reps, LEVEL, half=3 * sd)
                        for c, sd in zip(table["coverage"], table["coverage_sd"], strict=True)]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 replicates")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args(argv)
    reps = args.reps or (3 if args.quick else 200)
    table = run(reps)
    print(f"DIAL main10 (N = 10, K = 4, r = 1, n_l = 20,000, s_h = μ); 100 random human "
          f"comparisons, then 100 more (adaptive: 2 rounds of 50); DIAL-Anc; {reps} replicates; "
          "95 % cell-clustered intervals of the 45 contrasts of s_h")
    with pd.option_context("display.width", 160):
        print(table.round(4).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
