"""Benchmark: the Chen et al. (2026) binary grid (validation/judge_mean.py) at B = 1000, the cost
per replicate of the Labels API versus the vectorised count cores, and the whole
``judge_mean.estimate`` table on a million test items against ppi-python's PPI++.

Prints:

* the wall time of ``binary_grid(B)`` — 243 cells × B replicates, drawing the counts, every
  binary method of ``judge_mean.binary_from_counts`` and the per-cell metrics — against the
  target of 120 s (PASS/FAIL);
* the cost of one replicate (all methods) through the Labels API, split into the moment/count
  estimators (naive, Rogan–Gladen raw and smoothed, PPI, PPI++, EIF two ways) and the numerical
  misclassification MLE (``judge_mean.mle``, BFGS + Newton), measured on R replicates of one
  cell; and the cost per replicate of the vectorised path (grid time / (cells × B)); the ratio;
* at scale: the whole ``judge_mean.estimate`` table (six methods, the MLE included) on 10⁶ test
  items and 10⁴ calibration items against ppi-python's ``ppi_mean_ci`` (PPI++ with its tuned
  λ) on the same arrays, best of alternated repeats, against the target ratio of 3 (PASS/FAIL);
  and the label-pattern reduction of those items by bit-packing (``Labels.patterns``) against
  ``np.unique(axis=0)`` over the rows, the method it replaced.

The vectorised path is plain numpy (element-wise, one thread); the machine's core count is
printed for context.

Run::

    python bench/judge_mean.py            # B = 1000, 200 Labels-API replicates
    python bench/judge_mean.py --quick    # B = 100, 30 replicates
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from bayescal.frequentist import judge_mean as jm

TARGET_SECONDS = 120.0
TARGET_SCALE_RATIO = 3.0


def scale_seconds(n_test: int = 1_000_000, m: int = 10_000, repeats: int = 5,
                  seed: int = 3) -> dict[str, float]:
    """Best-of-``repeats`` seconds, alternated: the estimate table vs ppi-python's PPI++, and
    the label-pattern reduction by bit-packing vs np.unique over the rows."""
    from ppi_py import ppi_mean_ci

    from bayescal.data import Labels

    rng = np.random.default_rng(seed)

    def draw(k: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.binomial(1, 0.3, k)
        yhat = np.where(y == 1, rng.uniform(size=k) < 0.8, rng.uniform(size=k) >= 0.85)
        return y.astype(float), yhat.astype(float)

    y_cal, yhat_cal = draw(m)
    _, yhat_test = draw(n_test)
    labels = Labels.from_arrays(y_cal, yhat_cal, yhat_test)
    rows = np.column_stack([labels.y_cal, labels.yhat_cal]).astype(np.int8)
    tasks = {
        "estimate": lambda: jm.estimate(labels),
        "ppi_py": lambda: ppi_mean_ci(y_cal, yhat_cal, yhat_test, alpha=0.05),
        "patterns": lambda: labels.patterns(),
        "unique_rows": lambda: (np.unique(rows, axis=0, return_counts=True),
                                np.unique(labels.yhat_test.astype(np.int8), axis=0,
                                          return_counts=True)),
    }
    best = {name: np.inf for name in tasks}
    for task in tasks.values():  # warm: imports, first-call costs
        task()
    for _ in range(repeats):
        for name, task in tasks.items():
            t0 = time.perf_counter()
            task()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _validation() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "validation" / "judge_mean.py"
    spec = importlib.util.spec_from_file_location("validation_judge_mean", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def labels_api_seconds(val: ModuleType, reps: int, seed: int = 1) -> dict[str, float]:
    """Seconds per replicate of the Labels API on one mid-grid cell (θ=0.3, q0=q1=0.7, 5%)."""
    cells = val.grid_cells(thetas=(0.3,), qs=(0.7,), fractions=(0.05,))
    counts = val.draw_binary_counts(np.random.default_rng(seed), cells, reps)[0]
    moment = {
        "naive": jm.naive, "rogan_gladen": jm.rogan_gladen,
        "rogan_gladen_smoothed": lambda lab: jm.rogan_gladen(lab, smoothed=True, prob=0.9),
        "ppi": jm.ppi, "ppi_plus_plus": jm.ppi_plus_plus, "eif": jm.eif,
        "eif_test": lambda lab: jm.eif(lab, p_hat="test"),
    }
    build = cores = fits = 0.0
    for c in counts:
        t0 = time.perf_counter()
        lab = val.labels_from_counts(c)
        t1 = time.perf_counter()
        for f in moment.values():
            try:
                f(lab)
            except jm.EstimatorUndefined:
                pass
        t2 = time.perf_counter()
        try:
            jm.mle(lab)
        except ValueError:  # boundary / identification errors are ValueErrors
            pass
        t3 = time.perf_counter()
        build, cores, fits = build + t1 - t0, cores + t2 - t1, fits + t3 - t2
    return {"build": build / reps, "moment_methods": cores / reps, "mle_fit": fits / reps}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="B = 100 and 30 API replicates")
    parser.add_argument("--reps", type=int, default=None, help="grid B (default 1000)")
    parser.add_argument("--api-reps", type=int, default=None,
                        help="replicates timed through the Labels API (default 200)")
    args = parser.parse_args(argv)
    reps = args.reps or (100 if args.quick else 1000)
    api_reps = args.api_reps or (30 if args.quick else 200)
    val = _validation()
    print(f"bench judge_mean: Python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPU(s) visible; vectorised path is single-threaded numpy")
    t0 = time.perf_counter()
    grid = val.binary_grid(reps)
    seconds = time.perf_counter() - t0
    n_cells = len(val.grid_cells())
    verdict = "PASS" if seconds <= TARGET_SECONDS else "FAIL"
    print(f"binary grid: {n_cells} cells × B = {reps} = {n_cells * reps} replicates, "
          f"{len(val.GRID_METHODS)} methods, {len(grid)} table rows: {seconds:.2f} s "
          f"(target <= {TARGET_SECONDS:.0f} s at B = 1000: {verdict})")
    per_vec = seconds / (n_cells * reps)
    api = labels_api_seconds(val, api_reps)
    per_api = sum(api.values())
    print(f"per replicate, all {len(val.GRID_METHODS)} methods, vectorised: "
          f"{1e6 * per_vec:.2f} µs")
    print(f"per replicate through the Labels API ({api_reps} replicates of θ=0.3, q=0.7, 5%): "
          f"{1e3 * per_api:.2f} ms = Labels construction {1e3 * api['build']:.2f} ms + "
          f"7 moment/count methods {1e3 * api['moment_methods']:.2f} ms + numerical MLE "
          f"{1e3 * api['mle_fit']:.2f} ms")
    print(f"ratio Labels API / vectorised: {per_api / per_vec:,.0f}× "
          f"(without the MLE fit: {(per_api - api['mle_fit']) / per_vec:,.0f}×); "
          f"the full grid through the Labels API would take ~"
          f"{per_api * n_cells * 1000 / 3600:.1f} h at B = 1000")
    scale = scale_seconds(repeats=3 if args.quick else 5)
    ratio = scale["estimate"] / scale["ppi_py"]
    scale_verdict = "PASS" if ratio <= TARGET_SCALE_RATIO else "FAIL"
    print(f"at scale (10^6 test + 10^4 calibration items, best of alternated repeats): "
          f"judge_mean.estimate {1e3 * scale['estimate']:.1f} ms, ppi-python PPI++ "
          f"{1e3 * scale['ppi_py']:.1f} ms, ratio {ratio:.2f} (target <= "
          f"{TARGET_SCALE_RATIO:g}: {scale_verdict})")
    print(f"label patterns of those items: bit-packed {1e3 * scale['patterns']:.1f} ms, "
          f"np.unique(axis=0) over the rows {1e3 * scale['unique_rows']:.1f} ms")
    ok = (verdict == "PASS" or reps != 1000) and scale_verdict == "PASS"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
