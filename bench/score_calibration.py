"""Performance of the Subasic et al. (2026) protocol on llm-rubric, and SQM's per-anchor cost.

1. Protocol: every method of Table 3 that bayescal implements, in its paper mode, on llm-rubric's
   real part (8 questions, one group each), 1 %-checkpoints, data-limited full-batch fits, all
   stopping rules, 3 seeds — wall time against the 60 s target on 2 cores, and the time per
   method.
2. SQM update + predict: microseconds per anchor (one ``update`` and one ``predict`` of a single
   score) after n = 0, 1,000 and 100,000 anchors on K = 5, 11 and 101-point scales. The state is K
   counts, so the cost must not grow with n; building the map is a cumulative sum and one
   ``searchsorted`` over K levels.

Run::

    python bench/score_calibration.py            # full (3 seeds)
    python bench/score_calibration.py --quick    # 1 seed
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayescal import datasets
from bayescal.calibration import SQM
from bayescal.calibration import protocol as pr
from bayescal.data import Ratings


def protocol_time(data: Path | None, seeds: list[int]) -> tuple[float, pd.Series]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = datasets.llm_rubric(data)
    df = df[df["criterion"] != "Q8"]
    ratings = Ratings.from_frame(df, scale=(1, 4), judge="judge",
                                 judge_dist=datasets.RUBRIC_PROBS, groups=["criterion"],
                                 item="item")
    per_method = {}
    total = 0.0
    for name, factory in pr.default_methods(True).items():
        t0 = time.perf_counter()
        pr.run(ratings, {name: factory}, seeds=seeds)
        per_method[name] = time.perf_counter() - t0
        total += per_method[name]
    return total, pd.Series(per_method).sort_values(ascending=False)


def sqm_cost(k: int, n_before: int, reps: int = 2000) -> float:
    rng = np.random.default_rng(k)
    sqm = SQM((1, k), "mid")
    if n_before:
        sqm.fit(rng.integers(1, k + 1, n_before), rng.integers(1, k + 1, n_before))
    j = rng.integers(1, k + 1, reps)
    h = rng.integers(1, k + 1, reps)
    q = j[:, None]
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    for a, b, c in zip(j, h, q, strict=True):
        sqm.update(a, b)
        sqm.predict(c)
    return 1e6 * (time.perf_counter() - t0) / reps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one seed")
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else [0, 1, 2]
    load = os.getloadavg()[0]
    total, per = protocol_time(args.data, seeds)
    print(f"protocol on llm-rubric (8 questions, {len(per)} methods, seeds {seeds}): "
          f"{total:.1f} s (target 60 s for 3 seeds on 2 cores; load average {load:.1f})")
    print(per.to_frame("seconds").to_string(float_format=lambda v: f"{v:.2f}"))
    rows = [{"K": k, "n_before": n, "us_per_anchor": sqm_cost(k, n)}
            for k in (5, 11, 101) for n in (0, 1_000, 100_000)]
    table = pd.DataFrame(rows).pivot(index="K", columns="n_before", values="us_per_anchor")
    print("\nSQM update + predict, microseconds per anchor (rows K, columns anchors before):")
    print(table.to_string(float_format=lambda v: f"{v:.1f}"))
    ratio = table[100_000] / table[1_000]
    pairs = ", ".join(f"K={k}: {r:.2f}" for k, r in ratio.items())
    print(f"cost ratio n=100,000 / n=1,000: {pairs}")


if __name__ == "__main__":
    main(sys.argv[1:])
