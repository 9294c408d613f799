"""Active sampling of human labels against uniform sampling, with the same estimator.

Design: N = 2000 items, binary truth Y with prevalence θ, a continuous judge score
X = δ·Y + N(0, 1). A random first batch of m0 = 50 items is labelled; then
:func:`bayescal.design.active_labels` draws about B = 150 more by Poisson sampling with
probabilities ∝ √(f(1 − f)) (f the isotonic fit on the first batch, 20 % of the budget spread
uniformly), or uniformly (``floor = 1``, every π = B / n). Both are estimated by
:func:`bayescal.design.active_mean` (unbiased for any f; Horvitz–Thompson variance), 95 %
intervals. Verdict: coverage within ±3 sd of the binomial band for R replicates.

Run::

    python validation/design_active.py            # 2,000 replicates per cell
    python validation/design_active.py --quick    # 400 replicates, 2 cells (CI)
"""

from __future__ import annotations

import argparse
import sys

import bands
import numpy as np
import pandas as pd

from bayescal.data import Labels
from bayescal.design import active_labels, active_mean

LEVEL = 0.95


def one(theta: float, delta: float, seed: int, floor: float, n_items: int = 2000,
        m0: int = 50, budget: int = 150) -> tuple[bool, float]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n_items) < theta).astype(float)
    x = delta * y + rng.normal(size=n_items)
    data = Labels.from_arrays(y[:m0], x[:m0], x[m0:])
    draw = active_labels(data, budget, floor=floor, random_seed=rng)
    est = active_mean(data, draw, y[m0:][draw["selected"].to_numpy()])
    row = est.summary(LEVEL).iloc[0]
    return bool(row["lower"] <= theta <= row["upper"]), float(row["upper"] - row["lower"])


def run(cells: list[tuple[float, float]], reps: int) -> pd.DataFrame:
    rows = []
    for c, (theta, delta) in enumerate(cells):
        res = {}
        for name, floor in (("uniform", 1.0), ("active", 0.2)):
            out = np.array([one(theta, delta, 10_000 * c + r, floor) for r in range(reps)])
            res[name] = out
        for name, out in res.items():
            cover, width = out[:, 0].mean(), out[:, 1].mean()
            ratio = width / res["uniform"][:, 1].mean()
            rows.append({"theta": theta, "delta": delta, "design": name, "coverage": cover,
                         "width": width, "width_ratio": ratio,
                         "verdict": bands.verdict(cover, reps, LEVEL)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args(argv)
    cells = ([(0.3, 2.0), (0.1, 3.0)] if args.quick
             else [(t, d) for t in (0.1, 0.3, 0.5) for d in (1.0, 2.0, 3.0)])
    reps = args.reps or (400 if args.quick else 2000)
    table = run(cells, reps)
    print(f"N = 2000, m0 = 50 random labels, then about 150 by design; {reps} replicates per "
          f"cell; 95 % intervals; band ±{bands.band(reps, LEVEL):.4f}")
    print(table.round({"coverage": 3, "width": 4, "width_ratio": 3}).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
