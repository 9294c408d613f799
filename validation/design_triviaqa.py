"""Which TriviaQA answers to send to humans: random, stratified allocation, active sampling.

Real data: Judging the Judges (TriviaQA), 3,200 answers with a human correct/incorrect label
and several LLM judges' labels (``bayescal.datasets.triviaqa_judges``; set ``BAYESCAL_DATA``).
The target is the human accuracy of all 3,200 answers. Each split labels 10 % of them (320):

* ``random``: 320 answers at random; the Jeffreys posterior (``judge_mean.posterior``);
* ``allocation``: 80 at random, then 240 by :func:`bayescal.design.choose_labels` (Neyman
  allocation over the judge's label); the same posterior, which the selection leaves valid;
* ``active``: 80 at random, then about 240 by :func:`bayescal.design.active_labels`, estimated
  by :func:`bayescal.design.active_mean`.

The intervals are for the population mean θ. Against the finite set's own accuracy they are
slightly conservative, because their θ(1 − θ)/N term covers drawing the 3,200 answers.
Coverage is of 95 % intervals over R splits, with a ±3 sd binomial band.

Run::

    python validation/design_triviaqa.py            # 500 splits, three judges
    python validation/design_triviaqa.py --quick    # 100 splits, one judge
"""

from __future__ import annotations

import argparse
import sys

import bands
import numpy as np
import pandas as pd

from bayescal import datasets, design
from bayescal.data import Labels
from bayescal.frequentist import judge_mean

LEVEL = 0.95


def split(y: np.ndarray, yhat: np.ndarray, how: str, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n = y.size
    order = rng.permutation(n)
    first = order[: 80 if how != "random" else 320]
    rest = order[first.size:]
    data = Labels.from_arrays(y[first], yhat[first], yhat[rest])
    if how == "active":
        draw = design.active_labels(data, 240, random_seed=rng)
        sel = draw["selected"].to_numpy()
        row = design.active_mean(data, draw, y[rest][sel]).summary(LEVEL).iloc[0]
        return float(row["lower"]), float(row["upper"])
    if how == "allocation":
        ask = design.choose_labels(data, 240, random_seed=rng)
        chosen = rest[ask.index.to_numpy()]  # test_index holds positions in the test set
        labelled = np.r_[first, chosen]
        others = np.setdiff1d(rest, chosen)
        data = Labels.from_arrays(y[labelled], yhat[labelled], yhat[others])
    post = judge_mean.posterior(data, draws=4000, random_seed=seed)
    theta = post["posterior"]["prevalence"].values.ravel()
    lo, hi = np.quantile(theta, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def run(judges: list[str], reps: int) -> pd.DataFrame:
    frame = datasets.triviaqa_judges()
    y = frame["human"].to_numpy(float)
    truth = y.mean()
    rows = []
    for judge in judges:
        yhat = frame[judge].to_numpy(float)
        widths = {}
        for how in ("random", "allocation", "active"):
            ci = np.array([split(y, yhat, how, 7000 + r) for r in range(reps)])
            cover = float(np.mean((ci[:, 0] <= truth) & (truth <= ci[:, 1])))
            widths[how] = float(np.mean(ci[:, 1] - ci[:, 0]))
            rows.append({"judge": judge, "design": how, "coverage": cover,
                         "width": widths[how], "width_ratio": widths[how] / widths["random"],
                         "verdict": bands.verdict(cover, reps, LEVEL)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args(argv)
    judges = ["GPT-4"] if args.quick else ["GPT-4", "Llama3-8B", "Mistral-7B"]
    reps = args.reps or (100 if args.quick else 500)
    table = run(judges, reps)
    print(f"TriviaQA, 3,200 answers, 10 % labelled per split; {reps} splits; 95 % intervals for "
          f"the all-human accuracy; band ±{bands.band(reps, LEVEL):.4f}")
    print(table.round({"coverage": 3, "width": 4, "width_ratio": 3}).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
