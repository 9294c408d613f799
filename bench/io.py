"""Benchmark of reading a verdict file as text : a million CSV rows, before and after.

Reading every label column as text (so that ``007`` and ``7`` stay two items) must not make
large files slow. This script writes a tidy CSV of Xu et al.'s in-house size (a million verdicts
on 45 items by 18 judges, fixed seed; writing it is not timed) with a display-order column and
times, as the median of ``--repeat`` calls:

* ``before``: ``pandas.read_csv`` with its type guessing, then ``Comparisons.from_frame`` (what
  the command line did before it read text);
* ``read_table``: :func:`bayescal.io.read_table` alone (every column text, header checked);
* ``from_frame``: ``Comparisons.from_frame`` on that text frame (labels, outcome and order
  parsed from text once per distinct value);
* ``after``: :func:`bayescal.io.read_comparisons`, the two together;
* ``jsonl``: :func:`bayescal.io.read_comparisons` on the same verdicts as JSON Lines.

Each line prints wall and CPU time and the machine's load average; the rows scale linearly
(``--rows``). On a shared 2-core machine expect ±30 % between runs.

Run::

    python bench/io.py            # 1,000,000 rows
    python bench/io.py --quick    # 100,000 rows
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import bayescal as bc
from bayescal import simulate
from bayescal.io import read_comparisons, read_table


def write_files(folder: Path, n_rows: int, seed: int) -> tuple[Path, Path]:
    truth = simulate.judge_discrimination_truth(45, 18, random_seed=seed)
    df = simulate.judge_discrimination_btl(truth, n_rows, random_seed=seed + 1, as_frame=True)
    df = df.assign(order=np.random.default_rng(seed + 2).choice([-1, 1], n_rows))
    csv_path, jsonl_path = folder / "verdicts.csv", folder / "verdicts.jsonl"
    df.to_csv(csv_path, index=False)
    df.to_json(jsonl_path, orient="records", lines=True)
    return csv_path, jsonl_path


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a normalisation warning here would be a bench bug
            call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 rows")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    n_rows = 100_000 if args.quick else args.rows
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, jsonl_path = write_files(Path(tmp), n_rows, args.seed)
        text, _ = read_table(csv_path)
        bc.Comparisons.from_frame(text.head(1000))  # imports out of the figures
        cases = {
            "before": lambda: bc.Comparisons.from_frame(pd.read_csv(csv_path)),
            "read_table": lambda: read_table(csv_path),
            "from_frame": lambda: bc.Comparisons.from_frame(text),
            "after": lambda: read_comparisons(csv_path),
            "jsonl": lambda: read_comparisons(jsonl_path),
        }
        size = csv_path.stat().st_size / 2**20
        print(f"{n_rows:,} verdicts (45 items, 18 judges, order), CSV {size:.0f} MiB; median of "
              f"{args.repeat}")
        results = {}
        for name, call in cases.items():
            results[name] = timed(call, 1 if name == "jsonl" else args.repeat)
            wall, cpu = results[name]
            print(f"  {name:10s} wall {wall:6.3f} s  cpu {cpu:6.3f} s")
    ratio = results["after"][0] / results["before"][0]
    print(f"after / before (wall): {ratio:.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
