"""Benchmark of DIAL's GACV path (human calibration twin) at the paper's real-data scale.

N = 20 models, K = 21 judges, r = 1, 410,000 LLM verdicts (DIAL's Section 6.1 design: canonical
item first with probability 0.75) and 3,200 human comparisons, fixed seeds. Times (best of
``--repeat``):

* the full GACV path (9 candidates: ∞, 7 finite, 0) from aggregated cells
  (:func:`bayescal.frequentist.human_calibration.gacv` on one ``Comparisons`` with the human
  judge marked), per space;
* the same from the raw frames (``Comparisons.from_frame`` of 410,000 + 3,200 rows included);
* ``--loo``: exact leave-one-human-comparison-out refits over the same 9 candidates
  (:func:`bayescal.frequentist.human_calibration.exact_loo`), the slow cross-check, and the largest
  |GACV − LOO| gap.

Targets: path ≤ 0.5 s from cells, ≤ 1.5 s from the raw frame.

Run::

    python bench/human_calibration.py --quick        # smoke run (N = 8, K = 4, 20,000 verdicts)
    python bench/human_calibration.py                # DIAL scale
    python bench/human_calibration.py --loo          # also exact LOO (minutes)

Wall-clock on whatever machine runs this; on a shared 2-core machine expect ±30 %.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bayescal import simulate_dial as sd
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc


def _frame(data: Comparisons, human: bool) -> pd.DataFrame:
    """Raw verdict rows (one per verdict) re-expanded from the cells."""
    f = data.to_frame()
    reps = f["count"].astype(int).to_numpy()
    rows = f.loc[f.index.repeat(reps)].reset_index(drop=True)
    wins = f["wins"].to_numpy()
    out = np.concatenate([np.r_[np.ones(int(w)), np.zeros(int(n - w))]
                          for n, w in zip(reps, wins, strict=True)])
    frame = pd.DataFrame({"judge": rows["judge"], "item_a": rows["item_i"],
                          "item_b": rows["item_j"], "outcome": out})
    if not human:
        frame["order"] = rows["order"]
    return frame.sample(frac=1.0, random_state=0).reset_index(drop=True)


def _best(fn, repeat):
    """Best wall-clock time of ``repeat`` runs, and the CPU time of that run (a loaded shared
    machine inflates wall-clock, not CPU)."""
    best, cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = time.perf_counter() - t0
        if wall < best:
            best, cpu = wall, time.process_time() - c0
    _best.cpu = cpu
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--loo", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    N, K, n_l, n_h = (8, 4, 20_000, 400) if args.quick else (20, 21, 410_000, 3_200)
    par = sd.truth(N, K, 1, random_seed=0)
    par["s_h"] = par["mu"] + 0.3 * par["V"][:, 0]
    llm = sd.llm(par, n_l, random_seed=3)
    human = sd.human(par, n_h, random_seed=4)
    data = Comparisons.concat([llm, human], humans=["human"])
    llm_frame, human_frame = _frame(llm, False), _frame(human, True)
    human_frame["order"] = 1  # one frame for both samples; the humans' order is pooled away
    raw_frame = pd.concat([llm_frame, human_frame], ignore_index=True)
    print(f"N = {N}, K = {K}, r = 1, n_l = {n_l:,} ({llm.n_cells} cells), n_h = {n_h:,} "
          f"({human.n_cells} cells)")
    try:
        from threadpoolctl import threadpool_info
        print("BLAS (the fits limit themselves to 1 thread):", ", ".join(
            f"{i['internal_api']}={i['num_threads']}" for i in threadpool_info()) or "-")
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    for space in ("consensus", "full"):
        t_cells, (table, est) = _best(lambda s=space: hc.gacv(data, space=s), args.repeat)
        c_cells = _best.cpu

        def from_raw(s=space):
            return hc.gacv(Comparisons.from_frame(raw_frame, humans=["human"]), space=s)

        t_raw, _ = _best(from_raw, args.repeat)
        c_raw = _best.cpu
        print(f"\nspace = {space}: λ̂ = {est.info['llm_weight']:.4g}")
        print(table[["llm_weight", "gacv", "admissible", "selected", "seconds"]]
              .to_string(index=False))
        print(f"GACV path, 9 candidates, from cells:     {t_cells:.3f} s wall, {c_cells:.3f} s "
              f"CPU  (target ≤ 0.5 s; ratio {t_cells / 0.5:.2f})")
        print(f"GACV path, 9 candidates, from raw frame: {t_raw:.3f} s wall, {c_raw:.3f} s CPU  "
              f"(target ≤ 1.5 s; ratio {t_raw / 1.5:.2f})")
        if args.loo:
            t0 = time.perf_counter()
            loo = hc.exact_loo(data, space=space)
            t_loo = time.perf_counter() - t0
            print(f"exact LOO, 9 candidates: {t_loo:.1f} s ({int(loo['refits'].sum())} refits), "
                  f"{t_loo / t_cells:.0f}x the GACV path; max |GACV − LOO| = "
                  f"{loo['gap'].abs().max():.2e}")


if __name__ == "__main__":
    main()
