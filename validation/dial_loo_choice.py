"""λ chosen by GACV (twin) and by PSIS-LOO over human comparisons (power posteriors), side by side.

SPEC §1.9 and §1.16 on one simulated data set (N = 6, K = 3, r = 1, s_h off the consensus):
the twin's GACV path and, per candidate, PSIS-LOO of the tempered posterior
(w = λ n_h/n_l; λ = ∞ by the cut posterior, λ = 0 the human-only model). Both estimate the
same thing, the expected log-loss of a new human comparison (LOO's elpd is −n_h × that).

Run::

    python validation/dial_loo_choice.py --quick     # 3 candidates, 2 x 200 draws (a few minutes)
    python validation/dial_loo_choice.py             # the 9-candidate grid, 4 x 1000 draws
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from bayescal import simulate_dial as sd
from bayescal.frequentist import human_calibration as hc
from bayescal.models import human_calibration as hm


def run(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    par = sd.truth(6, 3, 1, random_seed=args.seed)
    par["s_h"] = par["mu"] + 0.4 * par["V"][:, 0]
    llm = sd.llm(par, 3000, random_seed=args.seed + 3)
    human = sd.human(par, 200, random_seed=args.seed + 4)
    lam0 = llm.n_rows / human.n_rows
    grid = [np.inf, lam0, 0.0] if args.quick else None
    table, est = hc.gacv(llm, human, grid_values=grid)
    draws, chains = (200, 2) if args.quick else (1000, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo, _ = hm.choose_by_loo(llm, human, grid_values=list(table["llm_weight"]),
                                  draws=draws, tune=draws, chains=chains)
    side = pd.DataFrame({
        "llm_weight": table["llm_weight"],
        "GACV": table["gacv"],
        "GACV selected": table["selected"],
        "-elpd_loo/n_h": -loo["elpd_loo"].to_numpy() / human.n_rows,
        "se/n_h": loo["se"].to_numpy() / human.n_rows,
        "pareto_k_max": loo["pareto_k_max"].to_numpy(),
        "LOO selected": loo["selected"].to_numpy(),
    })
    pd.set_option("display.width", 160)
    print(f"n_l = {llm.n_rows:g}, n_h = {human.n_rows:g}, λ₀ = {lam0:g}; NUTS {chains} x {draws}")
    print(side.to_string(index=False, float_format=lambda v: f"{v:.5f}"))
    print(f"\nGACV chooses λ = {est.info['llm_weight']:g}; PSIS-LOO chooses λ = "
          f"{loo.loc[loo['selected'], 'llm_weight'].iloc[0]:g}")
    return side


if __name__ == "__main__":
    run()
