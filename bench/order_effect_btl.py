"""Benchmark of the order-effect BTL twin at DIAL's real scale.

DIAL (DIAL Sec. 6.2) runs K = 21 judges over N = 20 models in both display orders, 410,000
verdicts. This script simulates that size under DIAL's Section 6.1 design (canonical item first with
probability 0.75; :func:`bayescal.simulate.order_effect_btl`, fixed seed) and times, each with its
own clock (best of ``--repeat`` runs):

* the identification criterion per judge (``identify.order_effect``, O(N + m) each) and the
  matrix-rank cross-check (``identify.order_effect_rank``);
* the separation check (``identify.order_separation``, one linear program per judge);
* the twin's fit (checks included) with each covariance option;
* ``--map``: the PyMC MAP with flat priors, including compilation, and its distance to the MLE.

Run::

    python bench/order_effect_btl.py --quick     # smoke run (K = 4, N = 6, 20,000 verdicts)
    python bench/order_effect_btl.py             # DIAL scale
    python bench/order_effect_btl.py --map       # also the PyMC MAP

Timings are wall-clock on whatever machine runs this; on a shared 2-core machine expect ±30%.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bayescal import identify, simulate
from bayescal.frequentist import order_effect_btl as oef


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--map", action="store_true", help="also time the PyMC MAP")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n_items, n_judges, n = (6, 4, 20_000) if args.quick else (20, 21, 410_000)
    truth = simulate.order_effect_truth(n_items, n_judges, random_seed=0)
    data = simulate.order_effect_btl(truth, n, random_seed=1)
    print(f"{data}")
    rows = []
    for name, fn in [
        ("identify.order_effect (O(N+m) per judge)", lambda: identify.order_effect(data)),
        ("identify.order_effect_rank (dense rank)", lambda: identify.order_effect_rank(data)),
        ("identify.order_separation (LP per judge)", lambda: identify.order_separation(data)),
        *[(f"fit, information={info!r}{', cluster=' + repr(key) if key else ''}",
           lambda info=info, key=key: oef.fit(data, information=info, cluster=key))
          for info, key in (("expected", None), ("sandwich", None), ("cluster", "judge_pair"))],
    ]:
        seconds, _ = _best(fn, args.repeat)
        rows.append((name, seconds))
    mle = oef.fit(data)
    err_b = np.abs(mle.params["order_effect"].values - truth["order_effect"].values).max()
    err_s = np.abs(mle.params["ability"].values - truth["ability"].values).max()
    if args.map:
        import bayescal as bc
        from bayescal.models import order_effect_btl as oe

        t0 = time.perf_counter()
        mode = bc.fit(oe.build(data, priors=oe.Priors.flat()), "map")
        rows.append(("PyMC MAP, flat priors (build + compile + optimise)",
                     time.perf_counter() - t0))
        gap = np.abs(mode["posterior"]["order_effect"].values[0, 0]
                     - mle.params["order_effect"].values).max()
        print(f"MAP vs MLE, max |Δb| = {gap:.2e}")
    width = max(len(r[0]) for r in rows)
    print(f"\n{'step':<{width}}  seconds (best of {args.repeat})")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:8.3f}")
    print(f"\nrecovery: max |b̂ - b| = {err_b:.3f}, max |ŝ - s| = {err_s:.3f}")


if __name__ == "__main__":
    main()
