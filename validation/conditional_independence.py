"""Size and power of the judges' conditional-independence test, and its verdict on TriviaQA.

The test is :func:`bayescal.independence.labelled_test`: G² of the labelled items' judge-label
patterns within each human class against mutual independence, with a parametric-bootstrap
p-value. This script prints two tables:

1. its rejection rate at the 5 % and 1 % levels over simulated data sets. The judges of an item
   share a logit effect sigma * z with z ~ N(0, 1) (sigma = 0 is the null), m labelled items,
   K judges, and each rate comes with its 99 % binomial band around the level;
2. on TriviaQA (Judging the Judges; answers of ``llama2-7b-chat``, four judges), the test on
   all labels and the share of random 50-label splits that reject at 1 %.

Run: ``python validation/conditional_independence.py`` (about a minute) or ``--quick``. TriviaQA
needs ``BAYESCAL_DATA``, and is skipped without it.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import pandas as pd
from scipy.stats import binom

from bayescal.independence import labelled_test

JUDGES = ["GPT-4", "Llama-13B", "Llama-7B", "Llama3-70B"]


def _simulate(rng: np.random.Generator, m: int, k: int, sigma: float
              ) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.uniform(size=m) < 0.4).astype(int)
    logit = np.where(y[:, None] == 1, 1.5, -1.5) + sigma * rng.normal(size=(m, 1))
    return (rng.uniform(size=(m, k)) < 1 / (1 + np.exp(-logit))).astype(int), y


def size_power(reps: int, seed: int = 20261203) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for k, m in ((2, 50), (4, 50), (4, 200)):
        for sigma in (0.0, 1.0, 2.0):
            p = np.array([labelled_test(*_simulate(rng, m, k, sigma), np.ones(m),
                                        bootstrap=199).p_value for _ in range(reps)])
            row = {"K": k, "m": m, "sigma": sigma}
            for alpha in (0.05, 0.01):
                row[f"reject@{alpha}"] = float(np.mean(p < alpha))
                if sigma == 0:
                    lo, hi = binom.ppf([0.005, 0.995], reps, alpha) / reps
                    row[f"band@{alpha}"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
    return pd.DataFrame(rows)


def triviaqa(splits: int, seed: int = 0) -> pd.DataFrame | None:
    if not os.environ.get("BAYESCAL_DATA"):
        return None
    import bayescal as bc

    answers = bc.datasets.triviaqa_judges()
    answers = answers[answers["model"] == "llama2-7b-chat"]
    x = answers[JUDGES].to_numpy().astype(int)
    y = answers["human"].to_numpy().astype(int)
    full = labelled_test(x, y, np.ones(len(y)))
    assert full is not None
    rng = np.random.default_rng(seed)
    rejects = [labelled_test(x[i], y[i], np.ones(50)).rejects  # type: ignore[union-attr]
               for i in (rng.choice(len(y), 50, replace=False) for _ in range(splits))]
    return pd.DataFrame([{"items": len(y), "G2 (all labels)": full.g2, "df": full.df,
                          "p bootstrap": full.p_value, "p chi2": full.p_value_chi2,
                          "50-label splits": splits,
                          "reject@0.01": float(np.mean(rejects))}])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few replicates (seconds)")
    args = parser.parse_args(argv)
    reps, splits = (20, 10) if args.quick else (400, 300)
    pd.set_option("display.width", 200)
    print("size and power (parametric-bootstrap p, 199 draws):")
    print(size_power(reps).fillna("").to_string(index=False, float_format="%.3f"))
    table = triviaqa(splits)
    if table is None:
        print("TriviaQA: set BAYESCAL_DATA to run it")
    else:
        print("TriviaQA, llama2-7b-chat answers, judges " + ", ".join(JUDGES) + ":")
        print(table.to_string(index=False, float_format="%.4g"))


if __name__ == "__main__":
    main()
