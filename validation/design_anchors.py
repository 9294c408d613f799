"""Where to put the next anchors: adaptive (bayescal.design.next_anchors) against random.

Design: the monotone ordinal calibration map of judge scores to human scores on a 1–5 scale
(the Bayesian counterpart of Subasic, Rabinovich & Chen 2026, arXiv:2611.00447), with the
truth of :func:`bayescal.simulate.score_calibration` (cutpoints spread ±3, level step 1.2).
A pool of 5,000 items has judge scores only, their levels drawn with the shares of ``POOLS``
(a uniform judge, and a lenient one whose scores are mostly 4 and 5); a first batch of n0
random items gets human scores (anchors) and the twin is fitted. Then B more anchors are
bought either at random from the pool or in ``rounds`` rounds of "fit →
:func:`~bayescal.design.next_anchors` → draw that many unrated items at each judge level, at
random within the level → human scores", and the twin is refitted on all anchors. Both designs
start from the same first batch (same seed).

The target is the one next_anchors lowers: the mean variance of the calibrated means
m_j = E[H | J = j], weighted by the share of each level among the items still to calibrate.
Reported per design: ``target_se`` (the root of that mean variance, from the
final fit), ``rmse`` (root mean squared error of the five calibrated means, against the truth)
and ``anchors_saved`` (the random anchors needed for the same target SE, by variance ∝ 1/n,
minus those bought). Coverage of the 95 % Wald interval of each calibrated mean is counted per
judge level over the replicates (independent Bernoulli trials, so the binomial band of
``bands.py`` applies: "holds" within ±3 sd of 0.95), and averaged over the five levels
(``coverage``; its band from the spread of the replicates' averages). A replicate whose first
batch has no MLE (adjacent levels out of order; the twin refuses it) is skipped for both
designs; a design whose round or final fit is refused is counted in its ``refused``.

Run::

    python validation/design_anchors.py            # 500 replicates per pool
    python validation/design_anchors.py --reps 300 --pools "lenient judge"
    python validation/design_anchors.py --quick    # 10 replicates of the lenient pool (CI)
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

import bands
import numpy as np
import pandas as pd
from scipy.special import expit

from bayescal import simulate
from bayescal.data import Ratings
from bayescal.design import next_anchors
from bayescal.frequentist import score_calibration as sc
from bayescal.frequentist._core import MLEBoundaryError

LEVEL = 0.95
SCALE = (1, 5)
#: the judge's levels among the items: uniform, and a judge that mostly gives high scores
POOLS = {"uniform judge": (0.2, 0.2, 0.2, 0.2, 0.2),
         "lenient judge": (0.05, 0.1, 0.15, 0.3, 0.4)}


def _fit(judge: np.ndarray, human: np.ndarray):
    data = Ratings.from_arrays(judge, human, scale=SCALE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return data, sc.fit(data, information="expected")


def one(seed: int, n0: int, budget: int, rounds: int, pool: int, shares: np.ndarray
        ) -> dict[str, dict] | None:
    """Both designs from one first batch: per design the final fit's summaries (None: the
    first batch has no MLE)."""
    _, truth = simulate.score_calibration(1, random_seed=seed)  # the map's truth only
    cut, beta = truth["cutpoint"].values, truth["level_effect"].values
    below = expit(cut[None, :] - beta[:, None])  # P(H <= level k | judge level j)
    probs = np.diff(np.c_[np.zeros(beta.size), below, np.ones(beta.size)], axis=1)
    values = np.arange(SCALE[0], SCALE[1] + 1, dtype=float)
    true_mean = probs @ values
    rng = np.random.default_rng([seed, 0])
    judge = rng.choice(values, n0 + pool, p=shares)
    human0 = np.full(judge.size, np.nan)
    lvl0 = (judge[:n0] - SCALE[0]).astype(int)
    human0[:n0] = SCALE[0] + (rng.random(n0)[:, None] > below[lvl0]).sum(axis=1)
    try:
        _fit(judge, human0)
    except MLEBoundaryError:
        return None
    out = {}
    for design in ("random", "adaptive"):
        rng = np.random.default_rng([seed, 1])  # the same human draws' stream for both

        def rate(where: np.ndarray, human: np.ndarray) -> None:
            lvl = (judge[where] - SCALE[0]).astype(int)
            human[where] = SCALE[0] + (rng.random(where.size)[:, None] > below[lvl]).sum(axis=1)

        human = human0.copy()
        try:
            if design == "random":
                rate(rng.choice(np.flatnonzero(np.isnan(human)), budget, replace=False), human)
            else:
                per = budget // rounds
                for r in range(rounds):
                    size = per if r < rounds - 1 else budget - per * (rounds - 1)
                    data, est = _fit(judge, human)
                    table = next_anchors(data, est, size)
                    for lvl, k in zip(table["judge_level"], table["new_anchors"], strict=True):
                        free = np.flatnonzero(np.isnan(human) & (judge == lvl))
                        rate(rng.choice(free, int(k), replace=False), human)
            data, est = _fit(judge, human)
        except MLEBoundaryError:  # a round's or the final fit refused: counted in refused
            out[design] = None
            continue
        summ = est.summary(LEVEL).filter(like="calibrated_mean", axis=0)
        unrated = np.array([np.sum(np.isnan(human) & (judge == v)) for v in values])
        w = unrated / unrated.sum()
        out[design] = {"target_se": float(np.sqrt(w @ summ["se"].to_numpy() ** 2)),
                       "sq_error": (summ["estimate"].to_numpy() - true_mean) ** 2,
                       "covered": ((summ["lower"].to_numpy() <= true_mean)
                                   & (true_mean <= summ["upper"].to_numpy()))}
    return out


def run(reps: int, shares: Sequence[float], n0: int = 200, budget: int = 200, rounds: int = 2,
        pool: int = 5000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per design, coverage per design and judge level) for one pool of judge
    levels (``shares``: the probability of each level 1–5)."""
    shares = np.asarray(shares, float)
    results = [r for r in (one(seed, n0, budget, rounds, pool, shares) for seed in range(reps))
               if r is not None]
    summary, coverage = [], []
    for design in ("random", "adaptive"):
        ok = [r[design] for r in results if r[design] is not None]
        covered = np.array([r["covered"] for r in ok])
        per_rep = covered.mean(axis=1)
        mean_cov = float(per_rep.mean())
        summary.append({"design": design, "replicates": len(ok),
                        "refused": len(results) - len(ok),
                        "target_se": float(np.mean([r["target_se"] for r in ok])),
                        "rmse": float(np.sqrt(np.mean([r["sq_error"].mean() for r in ok]))),
                        "coverage": mean_cov,
                        # the five means of one replicate share its anchors: the band of
                        # their average comes from the spread of the replicates' averages
                        "verdict": bands.verdict(mean_cov, len(ok), LEVEL, half=3 * float(
                            per_rep.std(ddof=1) / np.sqrt(len(ok))))})
        for j in range(covered.shape[1]):
            c = float(covered[:, j].mean())
            coverage.append({"design": design, "judge_level": SCALE[0] + j, "coverage": c,
                             "verdict": bands.verdict(c, covered.shape[0], LEVEL)})
    table = pd.DataFrame(summary).set_index("design")
    n_total = n0 + budget
    table["anchors_saved"] = (n_total * (table.loc["random", "target_se"]
                                         / table["target_se"]) ** 2 - n_total)
    return table, pd.DataFrame(coverage).pivot(index="judge_level", columns="design")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 replicates, the lenient pool")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--pools", nargs="+", choices=list(POOLS), default=None,
                    help="run only these pools")
    args = ap.parse_args(argv)
    reps = args.reps or (10 if args.quick else 500)
    ap_pools = args.pools or list(POOLS)
    pools = {"lenient judge": POOLS["lenient judge"]} if args.quick else {
        name: POOLS[name] for name in ap_pools}
    print(f"1–5 scale, 5,000 items to calibrate; 200 random anchors, then 200 more (adaptive: "
          f"2 rounds of 100); {reps} replicates; 95 % Wald intervals of the 5 calibrated means")
    for name, shares in pools.items():
        table, coverage = run(reps, shares)
        print(f"\n{name}: judge levels 1–5 with shares {list(shares)} "
              f"(band ±{bands.band(int(table['replicates'].min()), LEVEL):.4f})")
        with pd.option_context("display.width", 160):
            print(table.round(4).to_string())
            print(coverage.round(4).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
