"""Coverage battery: every default row of ``judge_mean.estimate`` across designs, with verdicts.

The rows are those of :func:`bayescal.frequentist.judge_mean.estimate` (Chen, Lu, Li, Guo and
Li 2026, "Efficient Inference for Noisy LLM-as-a-Judge Evaluation", arXiv:2601.05420): naive,
rogan_gladen, ppi, ppi_plus_plus, mle, eif and bayes (the exact Jeffreys posterior of the
saturated one-judge model), each at its defaults with 95 % intervals. For every design and row
the table gives the coverage of the interval, its mean width, the bias of the point estimate,
the fraction of replicates where the row was defined, the fraction where it was **flagged**
(refused, or carrying a warning note beyond the row's standing description), and a verdict:
``holds`` when the coverage is within ±3 binomial standard deviations sqrt(0.95·0.05/R) of
0.95 (R = replicates where the row gave an interval), ``under`` / ``over`` outside, ``refused``
when it never gave one. A row ``under`` with ``flagged`` well below 1 is a silent failure.

Designs (binary human labels Y ~ Bern(θ), judge Ŷ | Y with specificity q0 and sensitivity q1):

``grid``  The paper's Sec. 5.2 grid: N = 2000, θ ∈ {0.1, …, 0.9}, q0, q1 ∈ {0.6, 0.7, 0.8},
          each item labelled with probability f ∈ {1, 5, 10} % (Bernoulli MCAR; m random with
          mean fN = 20, 100, 200). The paper reports 90 % intervals; the battery uses 95 %.
``rare``  A small calibration set of fixed size m with a rare outcome (n = 2000 − m test
          items): (θ, q, m) = (0.1, 0.6, 20) — the grid's hardest cell — (0.05, 0.9, 50) and
          (0.3, 0.8, 30), q0 = q1 = q.
``shift`` Label shift: calibration θ = 0.5, test θ = 0.2 (the target), q0 = q1 = 0.8, m = 200,
          n = 1800; the judge's error rates are the same on both sets, so Rogan–Gladen is the
          row that stays valid.
``heavy`` A continuous judge score Ŷ = Y + 0.3·t₁ (Cauchy noise), θ = 0.3, m = 150, n = 1500.
``two_judges`` The multi-judge row: :func:`bayescal.frequentist.misclassification.fit` at its
          defaults on two judges of accuracy 0.8 (θ = 0.3, m = 100, n = 1900) whose errors
          given Y have correlation 0 (the model's conditional independence holds) or 0.6
          (:func:`two_judge_labels`); flagged when the fit warns or refuses.

Vectorisation. A binary replicate enters every estimator only through its six counts
(calibration N_ab = #{Y=a, Ŷ=b}, test T_b), so the binary designs draw the counts directly
(``judge_mean.py``'s multinomial draws for the grid; for a fixed m, the calibration counts
~ Multinomial(m, joint cell probabilities at the calibration θ) and T1 ~ Bin(n, P(Ŷ=1) at the
test θ) — exactly the per-item law), and the Wald rows run through
:func:`~bayescal.frequentist.judge_mean.binary_from_counts`, the cores ``estimate`` itself calls.
The bayes row's equal-tailed interval is computed from the same three Beta posteriors
(π ~ Beta(K1 + ½, K0 + ½) over all N judge labels, μ_b ~ Beta(N1b + ½, N0b + ½),
θ = πμ1 + (1 − π)μ0) with ``--bayes-draws`` draws per replicate. Notes are not vectorised:
on the first ``flag_reps`` replicates of every cell the battery runs ``estimate`` itself on
item-level ``Labels``, reads each row's flag there, and compares its numbers with the
vectorised ones (``api_diff``: max |Δ| of the interval ends; ~1e-10 for the Wald rows, the
Monte Carlo error of the quantiles for bayes). The heavy-tailed design runs ``estimate`` on every
replicate (the spline EIF has no vectorised core), the two-judge design the twin's ``fit``.

Every design runs through :mod:`bayescal.studies` (one task per cell, its replicates vectorised
inside, seeds from the runner's rule), so the table does not depend on ``--jobs``.

Run::

    python validation/coverage_battery.py --quick         # CI size (~10 s), every design
    python validation/coverage_battery.py                 # full battery (~12 min on one core)
    python validation/coverage_battery.py --part two_judges  # one design (binary, heavy, two_judges)
    python validation/coverage_battery.py --out results/  # also write coverage.csv (every grid cell)
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from bayescal.data import Labels
from bayescal.frequentist import judge_mean as jm
from bayescal.frequentist import misclassification as mf


def _sibling(name: str) -> ModuleType:
    """A script of this folder as a module, loaded by path, so that importing it never
    depends on the folder being on sys.path. (This file is not named ``coverage.py``: run as a
    script, every file here sees this folder first on sys.path, and numba, which PyMC imports,
    would have taken such a file for the ``coverage`` package.)"""
    key = f"validation_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


jmv = _sibling("judge_mean")  # the count draws, Labels from counts and the study runner
labels_from_counts = jmv.labels_from_counts

PROB = 0.95
#: Half-width of the verdict band in binomial standard deviations: a valid row is called
#: ``under`` or ``over`` with probability 0.0027 (normal approximation).
BAND_SD = 3.0
ROWS = jm.METHODS
WALD_ROWS = ("rogan_gladen", "ppi", "ppi_plus_plus", "mle", "eif")
N_TOTAL = 2000
RARE_CELLS = ((0.1, 0.6, 20), (0.05, 0.9, 50), (0.3, 0.8, 30))
#: Within-class correlations of two judges' errors: 0 (the model holds) and a strong one.
TWO_JUDGE_CORR = (0.0, 0.6)
COLUMNS = ("design", "theta", "theta_test", "q0", "q1", "corr", "m", "n", "method", "reps",
           "defined", "coverage", "band", "verdict", "width", "bias", "flagged", "flag_reps",
           "api_diff")


# ============================================================================= verdicts
_bands = _sibling("bands")  # the one binomial band of the validation studies
band, verdict = _bands.band, _bands.verdict


def _metrics(est: np.ndarray, lower: np.ndarray, upper: np.ndarray, truth: float
             ) -> dict[str, Any]:
    """Coverage, width, bias over the replicates where the row gave an interval (bias: where it
    gave an estimate)."""
    has_est = np.isfinite(est)
    ok = np.isfinite(lower) & np.isfinite(upper)
    k = int(ok.sum())
    coverage = float(((lower <= truth) & (truth <= upper))[ok].mean()) if k else float("nan")
    return {"reps": len(est), "defined": float(ok.mean()), "coverage": coverage,
            "band": float(band(k)) if k else float("nan"), "verdict": verdict(coverage, k),
            "width": float((upper - lower)[ok].mean()) if k else float("nan"),
            "bias": float((est[has_est] - truth).mean()) if has_est.any() else float("nan")}


# ============================================================================= flags
@functools.cache
def _standing_notes() -> dict[str, frozenset[str]]:
    """The note parts each row carries on clean data, its description rather than a warning:
    a binary judge (θ = 0.5, q0 = q1 = 0.8, 1000 calibration items, no shift) and a score judge
    whose test scores repeat the calibration scores (no shift, nothing to extrapolate).
    Everything else in a row's note is a flag."""
    binary = jm.estimate(labels_from_counts([400, 100, 100, 400, 800, 800]), PROB)
    y = np.tile([0.0, 1.0], 500)
    score = y + np.linspace(-0.5, 0.5, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = jm.estimate(Labels.from_arrays(y, score, score.copy()), PROB)
    return {k: frozenset(_parts(binary.loc[k, "note"])) | frozenset(_parts(scores.loc[k, "note"]))
            for k in ROWS}


def _parts(note: str) -> list[str]:
    return [p for p in str(note).split("; ") if p]


def flag_rows(table: pd.DataFrame) -> dict[str, bool]:
    """Per row of an ``estimate`` table: refused (no interval) or a note beyond its standing
    description. The naive row never has an interval for θ, so it is always flagged."""
    standing = _standing_notes()
    out = {}
    for method, row in table.iterrows():
        extra = set(_parts(row["note"])) - standing.get(str(method), frozenset())
        out[str(method)] = bool(row["interval"] == "none" or extra)
    return out


# ============================================================================= binary designs
def _joint(theta: float, q0: float, q1: float) -> np.ndarray:
    return np.array([theta * q1, theta * (1 - q1), (1 - theta) * (1 - q0), (1 - theta) * q0])


def draw_counts(rng: np.random.Generator, cell: dict[str, Any], reps: int) -> np.ndarray:
    """Six counts per replicate, shape (reps, 6), for one binary cell."""
    theta, q0, q1 = float(cell["theta"]), float(cell["q0"]), float(cell["q1"])
    if cell["labelling"] == "bernoulli":
        cells = pd.DataFrame({"theta": [theta], "q0": [q0], "q1": [q1],
                              "fraction": [cell["m"] / N_TOTAL]})
        return jmv.draw_binary_counts(rng, cells, reps, N_TOTAL, "bernoulli")[0]
    m, n, theta_test = int(cell["m"]), int(cell["n"]), float(cell["theta_test"])
    cal = rng.multinomial(m, _joint(theta, q0, q1), size=reps)
    p_test = _joint(theta_test, q0, q1)[[0, 2]].sum()
    t1 = rng.binomial(n, p_test, size=reps)
    return np.concatenate([cal, t1[:, None], (n - t1)[:, None]], axis=1)


def jeffreys_interval(counts: np.ndarray, rng: np.random.Generator, draws: int,
                      prob: float = PROB, chunk: int = 500) -> dict[str, np.ndarray]:
    """Posterior mean and equal-tailed interval of θ = πμ1 + (1 − π)μ0 under Jeffreys priors,
    per replicate (the ``bayes`` row of ``estimate``, by Monte Carlo with ``draws`` draws)."""
    c = np.asarray(counts, dtype=float)
    k1 = c[:, 0] + c[:, 2] + c[:, 4]
    k0 = c[:, 1] + c[:, 3] + c[:, 5]
    out = {k: np.empty(len(c)) for k in ("estimate", "lower", "upper")}
    for s in range(0, len(c), chunk):
        sl = slice(s, s + chunk)
        size = (len(c[sl]), draws)
        pi = rng.beta(k1[sl, None] + 0.5, k0[sl, None] + 0.5, size)
        mu1 = rng.beta(c[sl, 0, None] + 0.5, c[sl, 2, None] + 0.5, size)
        mu0 = rng.beta(c[sl, 1, None] + 0.5, c[sl, 3, None] + 0.5, size)
        theta = pi * mu1 + (1 - pi) * mu0
        out["estimate"][sl] = theta.mean(1)
        out["lower"][sl], out["upper"][sl] = np.quantile(
            theta, [(1 - prob) / 2, (1 + prob) / 2], axis=1)
    return out


def binary_task(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """One binary cell: R replicates, vectorised rows, flags from ``estimate`` on the first
    ``flag_reps``."""
    rng = np.random.default_rng(seed)
    reps, flag_reps = int(cell["R"]), int(cell["flag_R"])
    counts = draw_counts(rng, cell, reps)
    truth = float(cell["theta_test"])
    res = jm.binary_from_counts(counts, PROB, methods=WALD_ROWS)
    res["bayes"] = jeffreys_interval(counts, rng, int(cell["bayes_draws"]))
    # naive: estimate() gives the judge's mean and no interval for θ
    naive = jm.binary_from_counts(counts, PROB, methods=["naive"])["naive"]["estimate"]
    res["naive"] = {"estimate": naive, "lower": np.full(reps, np.nan),
                    "upper": np.full(reps, np.nan)}
    flags = {k: [] for k in ROWS}
    diff = dict.fromkeys(ROWS, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # estimate() turns warnings into notes; read those
        for j in range(min(flag_reps, reps)):
            table = jm.estimate(labels_from_counts(counts[j]), PROB)
            for k, v in flag_rows(table).items():
                flags[k].append(v)
            for k in ROWS:
                for end in ("lower", "upper"):
                    a, b = float(table.loc[k, end]), float(res[k][end][j])
                    if np.isfinite(a) != np.isfinite(b):
                        diff[k] = float("inf")
                    elif np.isfinite(a):
                        diff[k] = max(diff[k], abs(a - b))
    rows = []
    for k in ROWS:
        r = res[k]
        rows.append({"method": k, **_metrics(r["estimate"], r["lower"], r["upper"], truth),
                     "flagged": float(np.mean(flags[k])) if flags[k] else float("nan"),
                     "flag_reps": len(flags[k]), "api_diff": diff[k]})
    return pd.DataFrame(rows)


# ============================================================================= heavy tails
def heavy_task(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """Continuous judge score Y + 0.3·t₁: ``estimate`` on every replicate."""
    rng = np.random.default_rng(seed)
    reps, m, n, theta = int(cell["R"]), int(cell["m"]), int(cell["n"]), float(cell["theta"])
    est = {k: np.full(reps, np.nan) for k in ROWS}
    lower = {k: np.full(reps, np.nan) for k in ROWS}
    upper = {k: np.full(reps, np.nan) for k in ROWS}
    flags = {k: np.zeros(reps, bool) for k in ROWS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j in range(reps):
            y = (rng.random(m + n) < theta).astype(float)
            score = y + 0.3 * rng.standard_t(1, m + n)
            table = jm.estimate(Labels.from_arrays(y[:m], score[:m], score[m:]), PROB)
            for k, v in flag_rows(table).items():
                flags[k][j] = v
            for k in ROWS:
                est[k][j], lower[k][j], upper[k][j] = table.loc[k, ["estimate", "lower",
                                                                    "upper"]]
    return pd.DataFrame([{"method": k, **_metrics(est[k], lower[k], upper[k], theta),
                          "flagged": float(flags[k].mean()), "flag_reps": reps,
                          "api_diff": 0.0} for k in ROWS])


# ============================================================================= two judges
def two_judge_labels(rng: np.random.Generator, theta: float, q: float, corr: float, m: int,
                     n: int) -> Labels:
    """Two judges of accuracy q on both classes whose correctness, given Y, has correlation
    ``corr``: with probability corr an item's two judges share one uniform draw U (both correct
    iff U < q), else each has its own, so Cov(correct₁, correct₂ | Y) = corr·q(1 − q)."""
    y = rng.random(m + n) < theta
    shared = rng.random((m + n, 1)) < corr
    u = np.where(shared, rng.random((m + n, 1)), rng.random((m + n, 2)))
    yhat = np.where(u < q, y[:, None], ~y[:, None]).astype(float)
    return Labels.from_arrays(y[:m].astype(float), yhat[:m], yhat[m:])


def two_judge_task(cell: dict[str, Any], seed: int) -> pd.DataFrame:
    """The multi-judge misclassification MLE (``misclassification.fit``, its defaults) on two
    judges; flagged when it warns or refuses."""
    rng = np.random.default_rng(seed)
    reps, theta = int(cell["R"]), float(cell["theta"])
    est, lower, upper = (np.full(reps, np.nan) for _ in range(3))
    flagged = np.zeros(reps, bool)
    for j in range(reps):
        lab = two_judge_labels(rng, theta, float(cell["q0"]), float(cell["corr"]),
                               int(cell["m"]), int(cell["n"]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fit = mf.fit(lab)
            except ValueError:  # a refusal (boundary, identification) is a flag
                flagged[j] = True
                continue
        row = fit.summary(PROB).loc["prevalence"]
        est[j], lower[j], upper[j] = row["estimate"], row["lower"], row["upper"]
        flagged[j] = bool(caught) or not fit.converged
    return pd.DataFrame([{"method": "mle_two_judges", **_metrics(est, lower, upper, theta),
                          "flagged": float(flagged.mean()), "flag_reps": reps,
                          "api_diff": 0.0}])


# ============================================================================= cells, run
def binary_cells(quick: bool, reps: int, grid_reps: int, flag_reps: int, grid_flag_reps: int,
                 bayes_draws: int) -> list[dict[str, Any]]:
    """The binary designs' cells (JSON scalars, as the study runner needs)."""
    common = {"bayes_draws": bayes_draws}
    cells = []
    for theta, q, m in RARE_CELLS:
        cells.append({"design": "rare", "theta": theta, "theta_test": theta, "q0": q, "q1": q,
                      "m": m, "n": N_TOTAL - m, "labelling": "fixed", "R": reps,
                      "flag_R": flag_reps, **common})
    cells.append({"design": "shift", "theta": 0.5, "theta_test": 0.2, "q0": 0.8, "q1": 0.8,
                  "m": 200, "n": N_TOTAL - 200, "labelling": "fixed", "R": reps,
                  "flag_R": flag_reps, **common})
    grid = jmv.grid_cells()
    if quick:  # one easy and one hard cell of the grid
        grid = pd.DataFrame({"theta": [0.5, 0.1], "q0": [0.8, 0.6], "q1": [0.8, 0.6],
                             "fraction": [0.05, 0.01]})
    for g in grid.itertuples(index=False):
        m = round(g.fraction * N_TOTAL)
        cells.append({"design": "grid", "theta": float(g.theta), "theta_test": float(g.theta),
                      "q0": float(g.q0), "q1": float(g.q1), "m": m, "n": N_TOTAL - m,
                      "labelling": "bernoulli", "R": grid_reps, "flag_R": grid_flag_reps,
                      **common})
    return cells


def battery(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse arguments, run every design, print and (``--out``) write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="CI size: R = 2000 (rare, shift), 2 grid cells of R = 1000, "
                             "heavy R = 40, two judges R = 60")
    parser.add_argument("--reps", type=int, default=None,
                        help="R of the rare and shift cells (default 10,000; quick 2000)")
    parser.add_argument("--grid-reps", type=int, default=None,
                        help="R per grid cell (default 400; quick 1000)")
    parser.add_argument("--heavy-reps", type=int, default=None,
                        help="R of the heavy-tailed design (default 1000; quick 40)")
    parser.add_argument("--two-judge-reps", type=int, default=None,
                        help="R of the two-judge design (default 1000; quick 60)")
    parser.add_argument("--flag-reps", type=int, default=None,
                        help="replicates per rare/shift cell run through estimate() for flags "
                             "(default 300; quick 20); grid cells use a fifteenth (at least 5)")
    parser.add_argument("--bayes-draws", type=int, default=None,
                        help="posterior draws per replicate for the bayes row (default 4000; "
                             "quick 1000)")
    parser.add_argument("--part", choices=("all", "binary", "heavy", "two_judges"),
                        default="all", help="designs to run (default all)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="folder for coverage.csv")
    args = parser.parse_args(argv)
    reps = args.reps or (2000 if args.quick else 10_000)
    grid_reps = args.grid_reps or (1000 if args.quick else 400)
    heavy_reps = args.heavy_reps or (40 if args.quick else 1000)
    two_reps = args.two_judge_reps or (60 if args.quick else 1000)
    flag_reps = args.flag_reps or (20 if args.quick else 300)
    grid_flag = max(5, flag_reps // 15)
    draws = args.bayes_draws or (1000 if args.quick else 4000)
    runner = {"workers": args.jobs, "chunk": 1}
    t0 = time.perf_counter()
    frames, n_cells = [], 0
    if args.part in ("all", "binary"):
        cells = binary_cells(args.quick, reps, grid_reps, flag_reps, grid_flag, draws)
        frames.append(jmv.run_study("coverage_battery_binary", cells, binary_task, runner))
        n_cells += len(cells)
    if args.part in ("all", "heavy"):
        heavy_cell = {"design": "heavy", "theta": 0.3, "theta_test": 0.3, "m": 150, "n": 1500,
                      "R": heavy_reps}
        frames.append(jmv.run_study("coverage_battery_heavy", [heavy_cell], heavy_task, runner))
        n_cells += 1
    if args.part in ("all", "two_judges"):
        two = [{"design": "two_judges", "theta": 0.3, "theta_test": 0.3, "q0": 0.8, "q1": 0.8,
                "corr": corr, "m": 100, "n": 1900, "R": two_reps} for corr in TWO_JUDGE_CORR]
        frames.append(jmv.run_study("coverage_battery_two_judges", two, two_judge_task, runner))
        n_cells += len(two)
    # columns a design lacks ((q0, q1) of the heavy design, corr of the one-judge ones): NaN
    table = pd.concat(frames, ignore_index=True).reindex(columns=list(COLUMNS))
    seconds = time.perf_counter() - t0
    print(f"Coverage battery (95 % intervals; verdict band ±{BAND_SD:g} binomial sd): "
          f"{n_cells} cells in {seconds:.1f} s")
    report(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "coverage.csv", index=False)
    return {"table": table, "seconds": seconds}


def report(table: pd.DataFrame) -> None:
    """Print the non-grid designs in full and the grid as counts of verdicts per row."""
    fmt = {"coverage": "{:.3f}", "band": "{:.3f}", "width": "{:.3f}", "bias": "{:+.3f}",
           "defined": "{:.2f}", "flagged": "{:.2f}", "api_diff": "{:.1e}"}
    show = table[table["design"] != "grid"].copy()
    for c, f in fmt.items():
        show[c] = show[c].map(lambda v, f=f: "—" if pd.isna(v) else f.format(v))
    print(show[list(COLUMNS)].to_string(index=False))
    grid = table[table["design"] == "grid"]
    if len(grid):
        print("\nSec. 5.2 grid: verdicts per row (cells), median coverage and flagged, and the "
              "failing cells' worst coverage")
        summary = grid.groupby("method", sort=False).agg(
            cells=("verdict", "size"), holds=("verdict", lambda v: int((v == "holds").sum())),
            under=("verdict", lambda v: int((v == "under").sum())),
            over=("verdict", lambda v: int((v == "over").sum())),
            refused=("verdict", lambda v: int((v == "refused").sum())),
            median_coverage=("coverage", "median"), min_coverage=("coverage", "min"),
            median_flagged=("flagged", "median"))
        print(summary.round(3).to_string())
        under = grid[grid["verdict"] == "under"]
        if len(under):
            silent = under[under["flagged"] < 0.5]
            print(f"\n'under' grid cells with flagged < 0.5 (silent): {len(silent)} of "
                  f"{len(under)}")
            if len(silent):
                print(silent[["theta", "q0", "q1", "m", "method", "coverage", "flagged"]]
                      .sort_values("coverage").head(20).to_string(index=False))


def main(argv: list[str] | None = None) -> int:
    battery(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
