"""DIAL (2026) Section 6.1: the synthetic study, rows 1 and 2 of Fig. 2.

Config ``main10`` (N = 10, K = 4, r = 1; canonical item first w.p. 0.75; s_h = μ).

* Row 1 (exact specification): n_l = 20,000, σ_L = 0, n_h ∈ {100, 200, 400, 800, 1600}; theory
  lines (N − 1)/(2n_h) (Human) and d/(2n_h) (anchored, d = 1 consensus, r + 1 full space).
* Row 2 (judge-pair overdispersion σ_L = 1): n_h = 800, n_l ∈ {400, …, 12,800}.

Methods (DIAL Section 6): Human, Pooled, DIAL-Anc, DIAL-Ada, DIAL-Ada(W), DIAL-noPos, AtC.
Metrics per cell, mean over seeds: excess human risk R_h(ŝ) − R_h(s_h) (uniform pair law; AtC
has no scale, so none), Kendall τ = 2·(pairwise sign accuracy) − 1, coverage of all 95 % pairwise
contrast intervals (the authors' cell-clustered intervals, information="cluster" by
``judge_pair`` with CR0: the joint sandwich at λ̂, the per-comparison sandwich for Human, the
staged one with the LLM error of M for DIAL-Anc), RMSE of
b̂ (Pooled and noPos: b̂ = 0), and the mean selected λ̂/λ₀.

Run::

    python validation/dial_synthetic.py --quick          # CI size (1 seed, 2 + 2 cells)
    python validation/dial_synthetic.py --seeds 50       # the paper's study (≈ 15–20 min)
    python validation/dial_synthetic.py --seeds 50 --scheduler tcp://host:8786 --parts parts/

The seeds run through :mod:`bayescal.studies` (study ``seed000_s61_dial_synthetic``; a cell is a
row of the figure, a replicate one seed): replicate s of a row draws its truth and its datasets
from the runner's seed of (study, row, s), so the tables do not depend on ``--jobs`` or a Dask
cluster (``--scheduler``); ``--parts DIR`` keeps partial results for a resumed rerun. The truth
is shared along a row (paired curves), no longer across the two rows.

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
from bayescal import studies
from bayescal.data import Comparisons
from bayescal.frequentist import dial_baselines as db
from bayescal.frequentist.covariance import FewClustersWarning

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


def one(par: dict, seed: int, n_l: int, n_h: int, sigma_l: float) -> list[dict]:
    """Every method's metrics on one (LLM, human) dataset of size (n_l, n_h) drawn from ``par``."""
    llm_seed, human_seed = np.random.SeedSequence(seed).generate_state(2)
    llm = sd.llm(par, n_l, overdispersion=sigma_l, random_seed=int(llm_seed))
    human = sd.human(par, n_h, random_seed=int(human_seed))
    data = Comparisons.concat([llm, human], humans=["human"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewClustersWarning)  # 45 pairs per judge
        scores, info, ests = db.baselines(data, rank=R, information="cluster",
                                          cluster="judge_pair", correction="CR0")
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
            "n_l": n_l, "n_h": n_h, "method": m,
            "excess_risk": risk(s, par["s_h"]) - risk(par["s_h"], par["s_h"])
            if ok and m != "AtC" else np.nan,
            "kendall_tau": kendall(s, par["s_h"]) if ok else np.nan,
            "coverage": coverage(est, par["s_h"]),
            "b_rmse": b_rmse,
            "lambda_ratio": info.loc[m, "llm_weight"] / lam0,
        })
    return rows


def replicate(cell: dict, seed: int) -> pd.DataFrame:
    """One truth (from the runner's seed) and one dataset per point of the row's grid.

    The truth is shared along the row (common random truths across n_h or n_l, so the curves
    are paired), each dataset with its own child seed."""
    grid = [int(v) for v in cell["grid"].split(",")]
    truth_seed, *data_seeds = np.random.SeedSequence(seed).generate_state(1 + len(grid))
    par = sd.truth(N, K, R, random_seed=int(truth_seed))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x, child in zip(grid, data_seeds, strict=True):
            n_l, n_h = (20_000, x) if cell["row"] == 1 else (x, 800)
            rows += one(par, int(child), n_l, n_h, cell["sigma_L"])
    return pd.DataFrame(rows)


def _table(df: pd.DataFrame, by: str) -> pd.DataFrame:
    return df.groupby([by, "method"], sort=False)[
        ["excess_risk", "kendall_tau", "coverage", "b_rmse"]].mean().unstack("method")


def run(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--out", default="validation_out")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--scheduler", type=str, default=None,
                    help="Dask scheduler address (tcp://host:8786): run the seeds there")
    ap.add_argument("--parts", type=Path, default=None,
                    help="folder for partial results; a rerun resumes from them")
    args = ap.parse_args(argv)
    n_seeds = 1 if args.quick else args.seeds
    nh_grid = (200, 800) if args.quick else ROW1_NH
    nl_grid = (800, 6400) if args.quick else ROW2_NL
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cells = [{"row": 1, "sigma_L": 0.0, "grid": ",".join(map(str, nh_grid))},
             {"row": 2, "sigma_L": 1.0, "grid": ",".join(map(str, nl_grid))}]
    table = studies.run(studies.Study("seed000_s61_dial_synthetic", cells, n_seeds, replicate),
                        workers=args.jobs, scheduler=args.scheduler, out=args.parts, chunk=1)
    for _, bad in table[table["error"] != ""].iterrows():  # recorded by the runner, not dropped
        print(f"row {bad['row']} replicate {bad['replicate']} (seed {bad['seed']}) raised: "
              f"{bad['error']}")
    table = table[table["error"] == ""]
    raw1 = table[table["row"] == 1].drop(columns=["row", "grid", "error"]).reset_index(drop=True)
    raw2 = table[table["row"] == 2].drop(columns=["row", "grid", "error"]).reset_index(drop=True)
    raw1.to_csv(out / "dial_synthetic_row1.csv", index=False)
    raw2.to_csv(out / "dial_synthetic_row2.csv", index=False)
    t1, t2 = _table(raw1, "n_h"), _table(raw2, "n_l")
    theory = pd.DataFrame({"(N-1)/(2n_h)": [(N - 1) / (2 * n) for n in nh_grid],
                           "1/(2n_h)": [1 / (2 * n) for n in nh_grid],
                           "(r+1)/(2n_h)": [(R + 1) / (2 * n) for n in nh_grid]},
                          index=pd.Index(nh_grid, name="n_h"))
    pd.set_option("display.width", 220)
    pd.set_option("display.max_columns", 40)
    print(f"Row 1: exact specification, n_l = 20,000, {n_seeds} seeds")
    for metric in ("excess_risk", "kendall_tau", "coverage", "b_rmse"):
        print(f"\n{metric}:")
        view = t1[metric]
        if metric == "excess_risk":
            view = view.join(theory)
        print(view.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"\nRow 2: judge-pair overdispersion σ_L = 1, n_h = 800, {n_seeds} seeds")
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
