"""λ chosen by GACV (twin) and by PSIS-LOO over human comparisons (power posteriors), side by side.

DIAL's GACV (Section 5.3) and its Bayesian analogue on one simulated data set (N = 6, K = 3,
r = 1, s_h off the consensus): the twin's GACV path and, per candidate, PSIS-LOO of the tempered
posterior (w = λ n_h/n_l; λ = ∞ by the cut posterior, λ = 0 the human-only model). Both
estimate the same thing, the expected log-loss of a new human comparison (LOO's elpd is −n_h ×
that).

Run::

    python validation/dial_loo_choice.py --quick     # 3 candidates, 2 x 200 draws (a few minutes)
    python validation/dial_loo_choice.py             # the 9-candidate grid, 4 x 1000 draws
    python validation/dial_loo_choice.py --datasets 20 --scheduler tcp://host:8786 --parts parts/

The data sets run through :mod:`bayescal.studies` (study ``seed000_dial_loo_choice``, one data
set per replicate): data set r draws its truth, its comparisons and its NUTS seed from the
runner's seed of (study, cell, r), so the tables do not depend on ``--jobs`` or a Dask cluster
(``--scheduler``); ``--parts DIR`` keeps partial results for a resumed rerun.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayescal import simulate_dial as sd
from bayescal import studies
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc
from bayescal.models import human_calibration as hm


def dataset(cell: dict, seed: int) -> pd.DataFrame:
    """One simulated data set (from the runner's seed): GACV and PSIS-LOO per candidate λ."""
    truth_seed, llm_seed, human_seed, nuts_seed = np.random.SeedSequence(seed).generate_state(4)
    par = sd.truth(cell["N"], cell["K"], 1, random_seed=int(truth_seed))
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    llm = sd.llm(par, cell["n_l"], random_seed=int(llm_seed))
    human = sd.human(par, cell["n_h"], random_seed=int(human_seed))
    data = Comparisons.concat([llm, human], humans=["human"])
    lam0 = llm.n_rows / human.n_rows
    grid = [np.inf, lam0, 0.0] if cell["quick"] else None
    table, est = hc.gacv(data, grid_values=grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo, _ = hm.choose_by_loo(data, grid_values=list(table["llm_weight"]),
                                  draws=cell["draws"], tune=cell["draws"],
                                  chains=cell["chains"], random_seed=int(nuts_seed))
    return pd.DataFrame({
        "llm_weight": table["llm_weight"].to_numpy(),
        "GACV": table["gacv"].to_numpy(),
        "GACV selected": table["selected"].to_numpy(),
        "-elpd_loo/n_h": -loo["elpd_loo"].to_numpy() / human.n_rows,
        "se/n_h": loo["se"].to_numpy() / human.n_rows,
        "pareto_k_max": loo["pareto_k_max"].to_numpy(),
        "LOO selected": loo["selected"].to_numpy(),
        "lambda0": lam0,
        "gacv_choice": float(est.info["llm_weight"]),
    })


def run(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", type=int, default=1,
                    help="simulated data sets (replicates), each printed (default 1)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--scheduler", type=str, default=None,
                    help="Dask scheduler address (tcp://host:8786): run the data sets there")
    ap.add_argument("--parts", type=Path, default=None,
                    help="folder for partial results; a rerun resumes from them")
    args = ap.parse_args(argv)
    draws, chains = (200, 2) if args.quick else (1000, 4)
    cell = {"N": 6, "K": 3, "n_l": 3000, "n_h": 200, "quick": bool(args.quick),
            "draws": draws, "chains": chains}
    table = studies.run(studies.Study("seed000_dial_loo_choice", [cell], args.datasets, dataset),
                        workers=args.jobs, scheduler=args.scheduler, out=args.parts, chunk=1)
    pd.set_option("display.width", 160)
    sides = []
    for rep, side in table.groupby("replicate", sort=True):
        seed = side["seed"].iloc[0]
        if side["error"].iloc[0]:  # recorded by the runner, not dropped
            print(f"data set {rep} (seed {seed}) raised: {side['error'].iloc[0]}")
            continue
        side = side.drop(columns=[*cell, "error"]).reset_index(drop=True)
        print(f"\ndata set {rep} (seed {seed}): n_l = {cell['n_l']:g}, n_h = {cell['n_h']:g}, "
              f"λ₀ = {side['lambda0'].iloc[0]:g}; NUTS {chains} x {draws}")
        shown = side.drop(columns=["replicate", "seed", "lambda0", "gacv_choice"])
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.5f}"))
        print(f"\nGACV chooses λ = {side['gacv_choice'].iloc[0]:g}; PSIS-LOO chooses λ = "
              f"{side.loc[side['LOO selected'].astype(bool), 'llm_weight'].iloc[0]:g}")
        sides.append(side)
    return pd.concat(sides, ignore_index=True) if sides else pd.DataFrame()


if __name__ == "__main__":
    run()
