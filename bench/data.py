"""Benchmark of :meth:`bayescal.Comparisons.from_frame` on a million string rows.

Xu et al.'s in-house size is about a million verdicts on 45 items by 18 judges. This script builds
tidy frames of that size (fixed seed; building them is not timed) and times ``from_frame`` on:

* ``numeric``: string labels for items and judges, outcome 1.0 / 0.0 (what
  ``simulate.judge_discrimination_btl(..., as_frame=True)`` returns);
* ``words``: the same verdicts with the outcome as verdict words (``model_a`` / ``model_b`` /
  ``tie``, mixed case) and a display-order column, as a Chatbot Arena export has them;
* ``csv``: the ``numeric`` frame written to CSV and read back with ``pandas.read_csv`` (so the
  columns have the dtypes a user's file gets).

Each line prints the median wall-clock and CPU time of ``--repeat`` calls and their ratios to the
0.3 s target (≤ 1 passes; printed at 1M rows only), and the machine's load average. On an idle
machine the wall time is at most about the CPU time (the call does no I/O).
Timings are wall-clock on whatever machine runs this; on a shared 2-core machine expect ±30%.

Run::

    python bench/data.py            # 1,000,000 rows
    python bench/data.py --quick    # 100,000 rows (smoke run; the target is for 1M rows)
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import bayescal as bc
from bayescal import simulate

TARGET_S = 0.3
TARGET_ROWS = 1_000_000


def frames(n_rows: int, seed: int) -> dict[str, pd.DataFrame]:
    truth = simulate.judge_discrimination_truth(45, 18, random_seed=seed)
    numeric = simulate.judge_discrimination_btl(truth, n_rows, random_seed=seed + 1, as_frame=True)
    rng = np.random.default_rng(seed + 2)
    words = np.where(numeric["outcome"].to_numpy() == 1.0, "model_a", "Model_B").astype(object)
    words[rng.random(n_rows) < 0.1] = "tie"
    worded = numeric.assign(outcome=words, order=rng.choice([-1, 1], n_rows))
    buffer = io.StringIO()
    numeric.to_csv(buffer, index=False)
    buffer.seek(0)
    return {"numeric": numeric, "words": worded, "csv": pd.read_csv(buffer)}


def timed(df: pd.DataFrame, repeat: int) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds of this process (the CPU figure is what the call
    costs when other processes compete for the cores)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a normalisation warning here would be a bench bug
            bc.Comparisons.from_frame(df)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=TARGET_ROWS)
    parser.add_argument("--quick", action="store_true", help="100,000 rows")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    n_rows = 100_000 if args.quick else args.rows
    print(f"Comparisons.from_frame on {n_rows:,} rows (45 items, 18 judges), "
          f"median of {args.repeat}; target {TARGET_S} s for {TARGET_ROWS:,} rows")
    for name, df in frames(n_rows, args.seed).items():
        wall, cpu = timed(df, args.repeat)
        dtypes = ", ".join(f"{c}:{t}" for c, t in df.dtypes.items())
        if n_rows == TARGET_ROWS:
            ratios = (f" (ratio to target {wall / TARGET_S:5.2f})",
                      f" (ratio {cpu / TARGET_S:5.2f})")
        else:
            ratios = ("", "")
        print(f"  {name:8s} wall {wall:6.3f} s{ratios[0]}  cpu {cpu:6.3f} s{ratios[1]}  "
              f"[{dtypes}]")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a loaded machine "
          "inflates wall time; the CPU time is less affected)")


if __name__ == "__main__":
    main()
