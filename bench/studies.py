"""Scale figures of the study runner on Xu et al.'s Sec. 4.2 coverage grid.

The study is the one ``validation/judge_discrimination_btl.py`` runs: cells (N, K, T) of the
judge-discrimination BTL, each replicate one simulated dataset fitted by the judge-aware and the
unweighted frequentist twin. The same (cell, replicate) work is timed four ways:

* ``plain loop``: the replicate function called in a for loop, seeds from
  :func:`bayescal.studies.replicate_seed` (what the scripts did before the runner);
* ``runner, 1 worker``: :func:`bayescal.studies.run` in this process; its excess over the plain
  loop, per replicate, is the runner's own overhead (target ≤ 5 % of a replicate's time). The two
  are alternated ``--repeat`` times and the best of each kept; the runner's time outside ``fn``
  (wall minus the time it measured inside ``fn``) is printed too, a figure less exposed to noise;
* ``runner, 2 processes``: the default local mode on 2 cores;
* ``runner, LocalCluster``: a 2-worker ``distributed.LocalCluster`` (processes, 1 thread each).

The tables of the three runner modes are checked bit-identical. BLAS is pinned to one thread (the
linear algebra is tiny; see the validation script).

Run::

    python bench/studies.py                 # small grid: (N, K) = (10, 5), 5 T values, B = 40
    python bench/studies.py --datasets 200 --configs 10:5,20:10
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bayescal import studies  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _validation_module():
    # on sys.path (inherited by spawned workers) so that the replicate function pickles by name
    sys.path.insert(0, str(ROOT / "validation"))
    return importlib.import_module("judge_discrimination_btl")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=40, help="B per cell (default 40)")
    parser.add_argument("--points", type=int, default=5, help="T values, 500..8000 (default 5)")
    parser.add_argument("--configs", type=str, default="10:5", help="(N, K) list 'N:K,N:K'")
    parser.add_argument("--chunk", type=int, default=10, help="replicates per runner task")
    parser.add_argument("--repeat", type=int, default=3,
                        help="plain loop and 1-worker runner alternated this often; best kept")
    parser.add_argument("--no-cluster", action="store_true", help="skip the LocalCluster run")
    args = parser.parse_args(argv)

    val = _validation_module()
    configs = [tuple(int(v) for v in c.split(":")) for c in args.configs.split(",")]
    grid = val.t_grid(500, 8000, args.points)
    cells = [{"N": n, "K": m, "T": int(t), "base_seed": 2026} for n, m in configs for t in grid]
    study = studies.Study("seed002_s4_coverage", cells, args.datasets, val.replicate)
    n_total = len(cells) * args.datasets
    print(f"Xu et al. Sec. 4.2 grid: configs {configs}, T = {grid.tolist()}, B = {args.datasets}: "
          f"{n_total} replicates; chunk {args.chunk}; {os.cpu_count()} CPU(s) visible")

    val.replicate(cells[0], 0)  # imports and first-call costs out of every clock
    plain, info1 = np.inf, studies.RunInfo(wall_seconds=np.inf)
    tables = {}
    for _ in range(args.repeat):  # alternated, best of each: the machine is shared and noisy
        start = time.perf_counter()
        for cell in cells:
            for r in range(args.datasets):
                val.replicate(cell, studies.replicate_seed(study.name, cell, r))
        plain = min(plain, time.perf_counter() - start)
        info = studies.RunInfo()
        tables["1 worker"] = studies.run(study, workers=1, chunk=args.chunk, progress=False,
                                         info=info)
        info1 = min(info1, info, key=lambda i: i.wall_seconds)
    rows = [{"mode": "plain loop", "wall_s": plain},
            {"mode": "runner, 1 worker", "wall_s": info1.wall_seconds}]
    info2 = studies.RunInfo()
    tables["2 processes"] = studies.run(study, workers=2, chunk=args.chunk, progress=False,
                                        info=info2)
    rows.append({"mode": "runner, 2 processes", "wall_s": info2.wall_seconds})
    if not args.no_cluster:
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: None)  # workers up before the clock starts
            info3 = studies.RunInfo()
            tables["LocalCluster"] = studies.run(study, scheduler=client, chunk=args.chunk,
                                                 progress=False, info=info3)
        rows.append({"mode": "runner, 2-worker LocalCluster", "wall_s": info3.wall_seconds})

    table = pd.DataFrame(rows)
    table["per_replicate_ms"] = 1e3 * table["wall_s"] / n_total
    table["speedup_vs_plain"] = plain / table["wall_s"]
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    per_rep = plain / n_total
    overhead = (info1.wall_seconds - plain) / n_total
    inside = info1.fn_seconds / n_total
    print(f"\nRunner overhead per replicate (1 worker − plain loop): {1e3 * overhead:.3f} ms = "
          f"{100 * overhead / per_rep:.2f} % of a replicate's own {1e3 * per_rep:.2f} ms "
          f"(target ≤ 5 %: {'met' if overhead <= 0.05 * per_rep else 'NOT met'}).")
    print(f"Runner bookkeeping outside fn (wall − time inside fn, 1 worker): "
          f"{1e3 * (info1.wall_seconds - info1.fn_seconds) / n_total:.3f} ms per replicate "
          f"({100 * (info1.wall_seconds - info1.fn_seconds) / info1.fn_seconds:.2f} % of "
          f"{1e3 * inside:.2f} ms inside fn).")
    ref = tables["1 worker"]
    same = {k: ref.equals(v) for k, v in tables.items()}
    print("Tables bit-identical to the 1-worker run: "
          + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in same.items()))
    errors = int((ref["error"] != "").sum())
    print(f"Replicates with a runner-recorded error: {errors}")
    return 0 if all(same.values()) and np.isfinite(plain) else 1


if __name__ == "__main__":
    raise SystemExit(main())
