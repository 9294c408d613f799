"""Seed 000 §6.1 (SPEC §1.14): DIAL's synthetic study, rows 1 and 2 of Fig. 2.

Config ``main10`` (N = 10, K = 4, r = 1; canonical item first w.p. 0.75; s_h = μ).

* Row 1 (exact specification): n_l = 20,000, σ_L = 0, n_h ∈ {100, 200, 400, 800, 1600}; theory
  lines (N − 1)/(2n_h) (Human) and d/(2n_h) (anchored, d = 1 consensus, r + 1 full space).
* Row 2 (judge-pair overdispersion σ_L = 1): n_h = 800, n_l ∈ {400, …, 12,800}.

Methods (SPEC §1.12): Human, Pooled, DIAL-Anc, DIAL-Ada, DIAL-Ada(W), DIAL-noPos, AtC.
Metrics per cell, mean over seeds: excess human risk R_h(ŝ) − R_h(s_h) (uniform pair law; AtC
has no scale, so none), Kendall τ = 2·(pairwise sign accuracy) − 1, coverage of all 95 % pairwise
contrast intervals (joint cell-clustered sandwich at λ̂; Human Fisher; DIAL-Anc fixed-M), RMSE of
b̂ (Pooled and noPos: b̂ = 0), and the mean selected λ̂/λ₀.

Run::

    python validation/dial_synthetic.py --quick          # CI size (1 seed, 2 + 2 cells)
    python validation/dial_synthetic.py --seeds 50       # the paper's study (≈ 15–20 min)

Prints the tables, writes ``dial_synthetic_row{1,2}.csv`` and ``dial_synthetic.png`` to --out.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from bayescal import simulate_dial as sd
from bayescal.frequentist import dial_baselines as db

N, K, R = 10, 4, 1
ROW1_NH = (100, 200, 400, 800, 1600)
ROW2_NL = (400, 800, 1600, 3200, 6400, 12800)


def risk(s: np.ndarray, s_h: np.ndarray) -> float:
    """R_h(s) with the uniform pair law: mean over pairs of log(1 + e^d) − p_h d."""
    i, j = np.triu_indices(s.size, 1)
    d = s[i] - s[j]
    return float(np.mean(np.logaddexp(0, d) - expit(s_h[i] - s_h[j]) * d))


def kendall(s: np.ndarray, s_h: np.ndarray) -> float:
    i, j = np.triu_indices(s.size, 1)
    return float(2 * np.mean(np.sign(s[i] - s[j]) == np.sign(s_h[i] - s_h[j])) - 1)


def coverage(est, s_h: np.ndarray, prob: float = 0.95) -> float:
    if est is None:
        return np.nan
    s = est.params["human_ability"].values
    C = est.cov[: s.size, : s.size]
    i, j = np.triu_indices(s.size, 1)
    se = np.sqrt(np.clip(C[i, i] + C[j, j] - 2 * C[i, j], 0, None))
    z = norm.ppf(0.5 + prob / 2)
    return float(np.mean(np.abs(s[i] - s[j] - (s_h[i] - s_h[j])) <= z * se))


def one(seed: int, n_l: int, n_h: int, sigma_l: float) -> list[dict]:
    par = sd.truth(N, K, R, random_seed=seed)
    llm = sd.llm(par, n_l, overdispersion=sigma_l, random_seed=seed + 3)
    human = sd.human(par, n_h, random_seed=seed + 4)
    scores, info, ests = db.baselines(llm, human, rank=R)
    lam0 = n_l / n_h
    rows = []
    for m in db.METHODS:
        s = scores[m].to_numpy()
        est = ests.get(m)
        if m in ("Pooled", "DIAL-noPos"):
            b_rmse = float(np.sqrt(np.mean(par["b"] ** 2)))
        elif est is not None and "order_effect" in est.params:
            b_rmse = float(np.sqrt(np.mean((est.params["order_effect"].values - par["b"]) ** 2)))
        else:
            b_rmse = np.nan
        ok = np.isfinite(s).all()
        rows.append({
            "seed": seed, "n_l": n_l, "n_h": n_h, "method": m,
            "excess_risk": risk(s, par["s_h"]) - risk(par["s_h"], par["s_h"])
            if ok and m != "AtC" else np.nan,
            "kendall_tau": kendall(s, par["s_h"]) if ok else np.nan,
            "coverage": coverage(est, par["s_h"]),
            "b_rmse": b_rmse,
            "lambda_ratio": info.loc[m, "llm_weight"] / lam0,
        })
    return rows


def _table(rows: list[dict], by: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    return df.groupby([by, "method"], sort=False)[
        ["excess_risk", "kendall_tau", "coverage", "b_rmse"]].mean().unstack("method")


def run(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--out", default="validation_out")
    args = ap.parse_args(argv)
    seeds = range(1) if args.quick else range(args.seeds)
    nh_grid = (200, 800) if args.quick else ROW1_NH
    nl_grid = (800, 6400) if args.quick else ROW2_NL
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows1, rows2 = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for seed in seeds:
            for n_h in nh_grid:
                rows1 += one(seed, 20_000, n_h, 0.0)
            for n_l in nl_grid:
                rows2 += one(seed, n_l, 800, 1.0)
    raw1, raw2 = pd.DataFrame(rows1), pd.DataFrame(rows2)
    raw1.to_csv(out / "dial_synthetic_row1.csv", index=False)
    raw2.to_csv(out / "dial_synthetic_row2.csv", index=False)
    t1, t2 = _table(rows1, "n_h"), _table(rows2, "n_l")
    theory = pd.DataFrame({"(N-1)/(2n_h)": [(N - 1) / (2 * n) for n in nh_grid],
                           "1/(2n_h)": [1 / (2 * n) for n in nh_grid],
                           "(r+1)/(2n_h)": [(R + 1) / (2 * n) for n in nh_grid]},
                          index=pd.Index(nh_grid, name="n_h"))
    pd.set_option("display.width", 220)
    pd.set_option("display.max_columns", 40)
    print(f"Row 1: exact specification, n_l = 20,000, {len(seeds)} seeds")
    for metric in ("excess_risk", "kendall_tau", "coverage", "b_rmse"):
        print(f"\n{metric}:")
        view = t1[metric]
        if metric == "excess_risk":
            view = view.join(theory)
        print(view.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"\nRow 2: judge-pair overdispersion σ_L = 1, n_h = 800, {len(seeds)} seeds")
    for metric in ("excess_risk", "kendall_tau", "coverage", "b_rmse"):
        print(f"\n{metric}:")
        print(t2[metric].to_string(float_format=lambda v: f"{v:.4f}"))
    _figure(t1, t2, theory, out / "dial_synthetic.png")
    return {"row1": raw1, "row2": raw2, "table1": t1, "table2": t2, "theory": theory}


def _figure(t1, t2, theory, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    for row, (t, x) in enumerate(((t1, "n_h"), (t2, "n_l"))):
        for col, metric in enumerate(("excess_risk", "kendall_tau", "b_rmse")):
            ax = axes[row, col]
            for m in t[metric].columns:
                vals = t[metric][m]
                if vals.notna().any():
                    ax.plot(vals.index, vals.values, marker="o", label=m)
            if row == 0 and metric == "excess_risk":
                for c in theory.columns[:2]:
                    ax.plot(theory.index, theory[c], "k--" if "N-1" in c else "k:", label=c)
                ax.set_yscale("log")
            ax.set_xscale("log")
            ax.set_xlabel(x)
            ax.set_title(f"row {row + 1}: {metric}")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    run()
