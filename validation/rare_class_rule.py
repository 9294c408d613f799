"""Small calibration sets with a rare outcome: which statistic should flag the Wald rows?

The rows are the Wald rows of :func:`bayescal.frequentist.judge_mean.estimate` (Chen, Lu, Li,
Guo and Li 2026, "Efficient Inference for Noisy LLM-as-a-Judge Evaluation", arXiv:2601.05420):
rogan_gladen, ppi, ppi_plus_plus, mle and eif, 95 % logit-Wald intervals, computed from each
replicate's six counts by :func:`~bayescal.frequentist.judge_mean.binary_from_counts` (the cores
``estimate`` calls). The design is the coverage battery's ``rare`` design on a grid around its
failing cells: Y ~ Bern(θ), a judge of accuracy q on both classes (q0 = q1 = q), a random
calibration set of fixed size m and n = 2000 − m test items, θ ∈ {0.05, 0.1, 0.2, 0.3},
q ∈ {0.6, 0.8, 0.9}, m ∈ {20, 30, 50, 100, 200}.

Per replicate the study records statistics that a user sees on the data, and the candidate flag
rules built on them:

``count<K``  the rare-class count min(m0, m1) below K (K = 10 was the table's former rule; 15,
             20, 25);
``edge<3``   the row's estimate within 3 standard errors of 0 or 1, min(θ̂, 1 − θ̂)/SE < 3;
``lopsided>2`` the row's logit-Wald interval reaching more than twice as far on one side of θ̂
             as on the other (the interval's own skewness);
``ssj-resid`` Sugden, Smith and Jones (2000)'s form of Cochran's rule, m < 28 + 25·G1², on the
             calibration residual Y − Ŷ (PPI's calibration term);
``ssj``      the same rule on the calibration human labels (G1 = (1 − 2p̂)/sqrt(p̂(1 − p̂)),
             p̂ = m1/m): :func:`bayescal.frequentist.judge_mean.rare_outcome_rule`, the rule the
             table uses. Its reason: every Wald row rests on the normal approximation of the
             calibration mean of the human labels, and the rule is the textbook condition for
             that approximation to give a 95 % interval of about its level.

Two tables. The rule summary: per row and rule, the number of cells where the row fails (its
coverage below the binomial band of 0.95, ±3 sd, ``validation/bands.py``), the lowest flag rate
in a failing cell and the number of failing cells flagged in less than 90 % of replicates, and
the mean flag rate over the holding cells. The cell table (rule ``ssj``): coverage and verdict of
every row, the flag rate, the coverage among the unflagged replicates with its verdict (a
conditional coverage: the unflagged replicates of a cell flagged 90 % of the time are those
with the most rare-class items, a selected subset), and two reference rows without flags:
``ppi_plain_wald``, PPI's natural-scale Wald interval θ̂ ± z·SE (the table prints the logit
one), and, with ``--bayes-draws``, the ``bayes`` row (the exact Jeffreys posterior).

Every cell runs through :mod:`bayescal.studies` (one task per cell, its replicates vectorised
inside, seeds from the runner's rule).

Run::

    python validation/rare_class_rule.py --quick   # CI size: 3 cells, R = 2000 (a few seconds)
    python validation/rare_class_rule.py           # 60 cells, R = 5000, bayes (2-3 min)
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtri

from bayescal.frequentist import judge_mean as jm


def _sibling(name: str) -> ModuleType:
    """A script of this folder as a module, loaded by path (as coverage_battery.py does)."""
    key = f"validation_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


_battery = _sibling("coverage_battery")  # the rare design's count draws and bayes interval
_bands = _sibling("bands")
band, verdict = _bands.band, _bands.verdict

PROB = 0.95
N_TOTAL = 2000
ROWS = ("rogan_gladen", "ppi", "ppi_plus_plus", "mle", "eif")
THETAS = (0.05, 0.1, 0.2, 0.3)
QS = (0.6, 0.8, 0.9)
MS = (20, 30, 50, 100, 200)
#: The quick run: a cell where PPI fails with about 10 rare-class items (the battery's grid
#: found it silent under the count rule), one where every row holds, and the battery's
#: θ = 0.05, q = 0.9, m = 50 cell.
QUICK_CELLS = ((0.1, 0.6, 100), (0.3, 0.8, 200), (0.05, 0.9, 50))
RULES = ("count<10", "count<15", "count<20", "count<25", "edge<3", "lopsided>2", "ssj-resid",
         "ssj")
CHOSEN = "ssj"
#: A failing cell should be flagged in at least this fraction of its replicates.
FLAG_TARGET = 0.9


def _residual_skewness(c: np.ndarray) -> np.ndarray:
    """Plug-in skewness of the calibration residual Y − Ŷ (+1: N10, −1: N01, 0 otherwise)."""
    m = c[:, :4].sum(1)
    up, down = c[:, 1] / m, c[:, 2] / m
    mu = up - down
    var = up + down - mu**2
    third = up * (1 - mu) ** 3 + down * (-1 - mu) ** 3 + (1 - up - down) * (-mu) ** 3
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, third / var**1.5, np.inf)


def flags(counts: np.ndarray, row: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every candidate rule's flag per replicate, for one row's estimates and intervals."""
    c = np.asarray(counts, dtype=float)
    m1 = c[:, 0] + c[:, 1]
    m = c[:, :4].sum(1)
    few = np.minimum(m1, m - m1)
    est, se, lower, upper = (row[k] for k in ("estimate", "se", "lower", "upper"))
    with np.errstate(divide="ignore", invalid="ignore"):
        edge = np.minimum(est, 1 - est) / se
        lopsided = np.maximum((upper - est) / (est - lower), (est - lower) / (upper - est))
    out = {f"count<{k}": few < k for k in (10, 15, 20, 25)}
    out["edge<3"] = ~(edge >= 3)  # NaN (no SE) counts as flagged
    out["lopsided>2"] = ~(lopsided <= 2)
    resid = _residual_skewness(c)
    out["ssj-resid"] = m < jm.cores.NORMAL_MEAN_BASE + jm.cores.NORMAL_MEAN_SLOPE * resid**2
    out["ssj"] = np.asarray(jm.rare_outcome_rule(m1, m)["flagged"])
    return out


def cell_task(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """One cell: R replicates of the six counts, every row's interval and every rule's flag."""
    rng = np.random.default_rng(seed)
    reps, theta = int(cell["R"]), float(cell["theta"])
    counts = _battery.draw_counts(rng, {**cell, "theta_test": theta, "labelling": "fixed"},
                                  reps)
    res = jm.binary_from_counts(counts, PROB, methods=ROWS)
    records = []
    for method in ROWS:
        r = res[method]
        shown = np.isfinite(r["lower"]) & np.isfinite(r["upper"])
        cover = (r["lower"] <= theta) & (theta <= r["upper"])
        for rule, flagged in flags(counts, r).items():
            kept = shown & ~flagged
            records.append({"method": method, "rule": rule, "reps": int(shown.sum()),
                            "coverage": float(cover[shown].mean()) if shown.any() else np.nan,
                            "flagged": float(flagged[shown].mean()) if shown.any() else np.nan,
                            "unflagged_reps": int(kept.sum()),
                            "unflagged_coverage": float(cover[kept].mean()) if kept.any()
                            else np.nan})
    # reference: PPI's plain (natural-scale) Wald interval, which the table does not print
    ppi = res["ppi"]
    half = float(ndtri(0.5 + PROB / 2)) * ppi["se"]
    cover = (ppi["estimate"] - half <= theta) & (theta <= ppi["estimate"] + half)
    shown = np.isfinite(ppi["se"])
    records.append({"method": "ppi_plain_wald", "rule": "", "reps": int(shown.sum()),
                    "coverage": float(cover[shown].mean()), "flagged": np.nan,
                    "unflagged_reps": 0, "unflagged_coverage": np.nan})
    if int(cell["bayes_draws"]):
        b = _battery.jeffreys_interval(counts, rng, int(cell["bayes_draws"]), PROB)
        cover = (b["lower"] <= theta) & (theta <= b["upper"])
        records.append({"method": "bayes", "rule": "", "reps": reps,
                        "coverage": float(cover.mean()), "flagged": np.nan,
                        "unflagged_reps": 0, "unflagged_coverage": np.nan})
    return pd.DataFrame(records)


def cells(quick: bool, reps: int, bayes_draws: int) -> list[dict[str, Any]]:
    grid = QUICK_CELLS if quick else tuple(itertools.product(THETAS, QS, MS))
    return [{"theta": t, "q0": q, "q1": q, "m": m, "n": N_TOTAL - m, "R": reps,
             "bayes_draws": bayes_draws} for t, q, m in grid]


def add_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Binomial-band verdicts of the coverage and of the coverage among unflagged replicates."""
    out = table.copy()
    out["verdict"] = [verdict(c, int(r))
                      for c, r in zip(out["coverage"], out["reps"], strict=True)]
    out["unflagged_verdict"] = [
        "" if rule == "" else verdict(c, int(r)) if r >= 1 else "all flagged"  # "": reference
        for c, r, rule in zip(out["unflagged_coverage"], out["unflagged_reps"], out["rule"],
                              strict=True)]
    out["fails"] = out["verdict"] == "under"
    return out


def rule_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per row and rule: failing cells, how well they are flagged, how often holding cells are."""
    rows = []
    wald = table[table["method"].isin(ROWS)]
    for (method, rule), d in wald.groupby(["method", "rule"], sort=False):
        fail, hold = d[d["fails"]], d[~d["fails"]]
        rows.append({"method": method, "rule": rule, "cells": len(d), "failing": len(fail),
                     "min_flag_failing": fail["flagged"].min() if len(fail) else np.nan,
                     "failing_under_target": int((fail["flagged"] < FLAG_TARGET).sum()),
                     "mean_flag_holding": hold["flagged"].mean() if len(hold) else np.nan,
                     "unflagged_under": int((d["unflagged_verdict"] == "under").sum())})
    return pd.DataFrame(rows)


def cell_table(table: pd.DataFrame, rule: str = CHOSEN) -> pd.DataFrame:
    """One line per cell and row under ``rule`` (and the bayes row's coverage)."""
    d = table[table["rule"].isin([rule, ""])]
    cols = ["theta", "q0", "m", "method", "reps", "coverage", "verdict", "flagged",
            "unflagged_reps", "unflagged_coverage", "unflagged_verdict"]
    return d[cols].reset_index(drop=True)


def run(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"CI size: the {len(QUICK_CELLS)} cells QUICK_CELLS, R = 2000, "
                             "no bayes reference")
    parser.add_argument("--reps", type=int, default=None,
                        help="replicates per cell (default 5000; quick 2000)")
    parser.add_argument("--bayes-draws", type=int, default=None,
                        help="posterior draws per replicate for the bayes reference row "
                             "(default 1000; quick 0 = skipped)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="folder for rare_class_rule.csv")
    args = parser.parse_args(argv)
    reps = args.reps or (2000 if args.quick else 5000)
    draws = args.bayes_draws if args.bayes_draws is not None else (0 if args.quick else 1000)
    if reps < 100:
        parser.error("--reps must be at least 100")
    t0 = time.perf_counter()
    grid = cells(args.quick, reps, draws)
    table = _battery.jmv.run_study("rare_class_rule", grid, cell_task,
                                   {"workers": args.jobs, "chunk": 1})
    table = add_verdicts(table)
    seconds = time.perf_counter() - t0
    summary = rule_summary(table)
    report(table, summary, seconds, len(grid), draws)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "rare_class_rule.csv", index=False)
    return {"table": table, "summary": summary, "seconds": seconds}


def report(table: pd.DataFrame, summary: pd.DataFrame, seconds: float, n_cells: int,
           draws: int) -> None:
    print(f"Rare-class flag rules (95 % intervals, verdict band ±3 binomial sd): {n_cells} cells "
          f"in {seconds:.1f} s")
    print(f"\nRules per row: failing cells, the lowest flag rate among them, how many are flagged "
          f"in < {FLAG_TARGET:.0%} of replicates, the mean flag rate of holding cells, and the "
          "cells whose unflagged replicates cover below the band")
    print(summary.round(3).to_string(index=False))
    show = cell_table(table)
    for c, f in {"coverage": "{:.3f}", "flagged": "{:.2f}", "unflagged_coverage": "{:.3f}"}.items():
        show[c] = show[c].map(lambda v, f=f: "—" if pd.isna(v) else f.format(v))
    print(f"\nPer cell, rule {CHOSEN!r} (q0 = q1 = q; n = {N_TOTAL} − m)"
          + ("" if draws else "; bayes reference skipped (--bayes-draws 0)"))
    print(show.to_string(index=False))


def main(argv: list[str] | None = None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
