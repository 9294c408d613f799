"""DIAL's power posterior at a fixed λ: coverage of raw, sandwich-adjusted and Wald intervals.

The power posterior π L_h L_l^w (w = λ n_h/n_l) of :mod:`bayescal.models.human_calibration`
has spread ≈ H⁻¹/n_h, the inverse curvature of the tempered objective; the fixed-λ estimator's
sampling covariance is the sandwich H⁻¹(V_h + λ²τV_l)H⁻¹/n_h (DIAL Theorem 4). This study
puts three 95 % intervals for the calibrated human contrasts s_h,i − s_h,j side by side:

* ``laplace``: the power posterior's normal (Laplace) approximation with flat priors,
  N(ζ̂_λ, (−∇² log L_h L_l^w)⁻¹) — its mode is the twin's estimate and its covariance the inverse
  curvature, computed here by finite differences of the twin's public ``loglik`` (the power
  log-likelihood) in the gauge-free chart of :mod:`bayescal.charts`, carried to s_h by the delta
  method. Adjusting it to the sandwich gives the Wald interval exactly (same centre, A maps its
  covariance to Σ_S), so under Laplace the ``adjusted`` row is the ``wald`` row;
* ``posterior`` and ``adjusted`` (with ``--nuts``): equal-tailed intervals of the raw power
  posterior (NUTS, default priors) and of the same draws after
  :func:`bayescal.adjust_to_sandwich` to the twin's cluster sandwich at the same λ (Müller
  2013; Ribatet, Cooley and Davison 2012), which keeps the posterior's centre and skewness;
* ``wald``: the twin's Wald interval, ``information="cluster"`` on the data's own key.

The Laplace rows answer the question of the spread (curvature vs sandwich) at the cost of a
few seconds per replicate; NUTS on this model costs about 20 s per fit of 2 x 200 draws on
two shared cores, so ``--nuts`` is for a handful of replicates.

Design (DIAL-like, small enough for NUTS on two shared cores): N = 6 items, K = 3 LLM judges,
r = 1, consensus space, s_h = μ (exact specification); every (judge, pair) cell gets
``--llm-per-cell`` verdicts (display order +1 w.p. 0.75), human raters each compare
``--per-rater`` random pairs. Dependence within a cluster (a judge's verdicts on one pair; one
rater's comparisons) comes from a Gaussian copula: y = 1{Φ(√ρ g_c + √(1−ρ) e) < p} with g_c
shared by the cluster, so every verdict keeps its Bernoulli(p) marginal and the minimiser of
the population objective is the truth at every λ (the coverage target is s_h itself), while
the verdicts of a cluster are positively correlated (ρ = ``--rho``). λ is fixed at w
(``--power``, default 0.1: the tempering of DIAL's λ̂ = 20 on PRD). NUTS: 2 chains of
``--draws`` after as many tuning steps.

Coverage is the mean over the 15 contrasts of each replicate; its variance is at most
p(1 − p)/R (a mean of correlated indicators), so the binomial band 0.95 ± 2.58·√(0.95·0.05/R)
(99 %, three methods compared) is conservative: a coverage below it is a failure.

Run::

    python validation/dial_power_posterior.py --quick            # CI size: Laplace, 4 replicates
    python validation/dial_power_posterior.py --reps 200         # the Laplace table in the card
    python validation/dial_power_posterior.py --reps 12 --nuts   # NUTS draws too (~5 min)
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr

import bayescal as bc
from bayescal import charts
from bayescal import simulate_dial as sd
from bayescal.frequentist import human_calibration as hc
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.identify import IdentificationError

N, K, R = 6, 3, 1
PROB = 0.95
METHODS = ("laplace", "posterior", "adjusted", "wald")


def _copula(p: np.ndarray, cluster: np.ndarray, rho: float, rng: np.random.Generator
            ) -> np.ndarray:
    """Bernoulli(p) outcomes, correlated within clusters through a shared normal g_c."""
    g = rng.standard_normal(cluster.max() + 1)[cluster]
    z = np.sqrt(rho) * g + np.sqrt(1 - rho) * rng.standard_normal(p.size)
    return (ndtr(z) < p).astype(float)


def dataset(par: dict, *, llm_per_cell: int, raters: int, per_rater: int, rho: float,
            seed: int) -> bc.Comparisons:
    """LLM verdicts clustered by (judge, pair), human comparisons clustered by rater."""
    rng = np.random.default_rng(seed)
    items = [f"item_{i:02d}" for i in range(N)]
    ii, jj = np.triu_indices(N, 1)
    S, b, s_h = par["S"], par["b"], par["s_h"]
    k, pair = np.divmod(np.arange(K * ii.size), ii.size)
    cell = np.repeat(np.arange(k.size), llm_per_cell)
    judge, pi, pj = k[cell], ii[pair[cell]], jj[pair[cell]]
    order = np.where(rng.random(cell.size) < 0.75, 1, -1)
    eta = S[judge, pi] - S[judge, pj] + order * b[judge]
    y = _copula(expit(eta), cell, rho, rng)
    llm = pd.DataFrame({"item_a": np.asarray(items)[pi], "item_b": np.asarray(items)[pj],
                        "outcome": y, "judge": [f"judge_{j}" for j in judge], "order": order,
                        "cluster": [f"judge_{j}:{a}-{c}" for j, a, c in zip(judge, pi, pj,
                                                                            strict=True)]})
    rater = np.repeat(np.arange(raters), per_rater)
    hp = rng.integers(0, ii.size, rater.size)
    yh = _copula(expit(s_h[ii[hp]] - s_h[jj[hp]]), rater, rho, rng)
    human = pd.DataFrame({"item_a": np.asarray(items)[ii[hp]],
                          "item_b": np.asarray(items)[jj[hp]], "outcome": yh,
                          "judge": "human", "cluster": [f"rater_{r}" for r in rater]})
    return bc.Comparisons.concat([
        bc.Comparisons.from_frame(llm, cluster="cluster"),
        bc.Comparisons.from_frame(human, order=None, cluster="cluster", humans=["human"])])


def _contrasts(x: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(N, 1)
    return x[..., i] - x[..., j]


def replicate(rep: int, args: argparse.Namespace) -> dict:
    par = sd.truth(N, K, R, random_seed=1000 + rep)
    data = dataset(par, llm_per_cell=args.llm_per_cell, raters=args.raters,
                   per_rater=args.per_rater, rho=args.rho, seed=2000 + rep)
    n_l, n_h = data.subset([j for j in data.judges if j != "human"]).count.sum(), \
        args.raters * args.per_rater
    lam = args.power * n_l / n_h
    truth = _contrasts(par["s_h"])
    i, j = np.triu_indices(N, 1)
    z = 1.959963984540054
    row = {"replicate": rep, "lambda": lam}
    with warnings.catch_warnings():
        # few clusters by design (15 per judge): that warning is another finding, not this one
        warnings.simplefilter("ignore")
        try:
            est = hc.fit(data, rank=R, llm_weight=lam, information="cluster")
        except (MLEBoundaryError, IdentificationError) as err:
            # a judge's clustered verdicts can be separated: no estimate, counted, not covered
            return {**row, "refused": str(err)}
    row["refused"] = ""
    s = est.params["human_ability"].values
    C = est.cov[:N, :N]

    def wald_like(name: str, cov: np.ndarray) -> None:
        se = np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
        lo, hi = _contrasts(s) - z * se, _contrasts(s) + z * se
        row[f"{name}_coverage"] = float(np.mean((lo <= truth) & (truth <= hi)))
        row[f"{name}_width"] = float(np.mean(hi - lo))

    wald_like("wald", C)
    L = laplace_cov(est, data, lam)
    wald_like("laplace", L)
    row["sd_ratio_median"] = float(np.median(np.sqrt(np.diag(L) / np.diag(C))))
    if not args.nuts:
        return row
    from bayescal.models import human_calibration as hm  # PyMC: seconds to import

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = hm.build(data, rank=R, llm_weight=lam)
        post = bc.fit(model, "nuts", draws=args.draws, tune=args.draws, chains=2, cores=1,
                      random_seed=3000 + rep, check=False, log_likelihood=False,
                      nuts_sampler="pymc", initvals=hm.initvals(model))
    adj = bc.adjust_to_sandwich(post, est, var_names=["human_ability"])
    q = [(1 - PROB) / 2, (1 + PROB) / 2]
    for name, tree in (("posterior", post), ("adjusted", adj)):
        d = _contrasts(tree["posterior"]["human_ability"].values.reshape(-1, N))
        lo, hi = np.quantile(d, q, axis=0)
        row[f"{name}_coverage"] = float(np.mean((lo <= truth) & (truth <= hi)))
        row[f"{name}_width"] = float(np.mean(hi - lo))
    sd_post = post["posterior"]["human_ability"].std(("chain", "draw"), ddof=1).values
    row["nuts_sd_ratio_median"] = float(np.median(sd_post / np.sqrt(np.diag(C))))
    # the adjustment's defining property, on this fit: the adjusted SDs are the Wald SEs
    sd_adj = adj["posterior"]["human_ability"].std(("chain", "draw"), ddof=1).values
    row["adjusted_sd_error"] = float(np.max(np.abs(sd_adj - np.sqrt(np.diag(C)))))
    return row


def laplace_cov(est: Estimate, data: bc.Comparisons, lam: float, h: float = 1e-4) -> np.ndarray:
    """Cov of s_h under the flat-prior Laplace approximation of the power posterior: minus the
    inverse Hessian of the twin's power log-likelihood in a gauge-free chart, by the delta
    method (central differences: independent of the twin's analytic derivatives)."""
    chart = charts.human_calibration(est, data, {"rank": R})

    def f(x: np.ndarray) -> float:
        return hc.loglik(chart.params(x), data, llm_weight=lam, rank=R)

    x0, n = chart.x, chart.x.size
    step = np.eye(n) * h
    H = np.empty((n, n))
    for a in range(n):
        for b in range(a, n):
            H[a, b] = H[b, a] = (f(x0 + step[a] + step[b]) - f(x0 + step[a] - step[b])
                                 - f(x0 - step[a] + step[b]) + f(x0 - step[a] - step[b])) / (
                4 * h * h)
    J = np.column_stack([(chart.params(x0 + e * 1e-6)["human_ability"]
                          - chart.params(x0 - e * 1e-6)["human_ability"]) / 2e-6
                         for e in np.eye(n)])
    return J @ np.linalg.inv(-H) @ J.T


def band(reps: int, p: float = PROB, z: float = 2.5758293035489) -> tuple[float, float]:
    half = z * np.sqrt(p * (1 - p) / reps)
    return p - half, p + half


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    lo, hi = band(len(rows))
    out = []
    for m in METHODS:
        if f"{m}_coverage" not in rows:
            continue
        cov = rows[f"{m}_coverage"].mean()
        out.append({"interval": m, "coverage": cov, "band_low": lo, "band_high": hi,
                    "verdict": "below" if cov < lo else "above" if cov > hi else "within",
                    "mean_width": rows[f"{m}_width"].mean()})
    return pd.DataFrame(out)


def run(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="CI size: 4 replicates, Laplace only")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--nuts", action="store_true", help="also NUTS draws, raw and adjusted")
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--power", type=float, default=0.1, help="w = λ n_h/n_l (default 0.1)")
    ap.add_argument("--rho", type=float, default=0.3, help="within-cluster copula correlation")
    ap.add_argument("--llm-per-cell", type=int, default=12)
    ap.add_argument("--raters", type=int, default=30)
    ap.add_argument("--per-rater", type=int, default=5)
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.nuts = 4, False
    t0 = time.perf_counter()
    rows = pd.DataFrame([replicate(r, args) for r in range(args.reps)])
    refused = int((rows["refused"] != "").sum())
    rows = rows[rows["refused"] == ""]
    table = summarise(rows)
    pd.set_option("display.width", 140)
    nuts = f", NUTS 2 x {args.draws}" if args.nuts else ", Laplace"
    print(f"DIAL power posterior, w = {args.power:g}, ρ = {args.rho:g}: N = {N}, K = {K}, "
          f"{args.llm_per_cell} verdicts per (judge, pair), {args.raters} raters x "
          f"{args.per_rater}; {args.reps} replicates{nuts} ({time.perf_counter() - t0:.0f} s; "
          f"{refused} refused by the twin, separation, left out)")
    r = rows["sd_ratio_median"]
    print(f"Laplace sd / cluster-sandwich SE of s_h (median over items): median over "
          f"replicates {r.median():.2f} (range {r.min():.2f}–{r.max():.2f})")
    if args.nuts:
        r = rows["nuts_sd_ratio_median"]
        print(f"NUTS posterior sd / SE: median {r.median():.2f} (range {r.min():.2f}–"
              f"{r.max():.2f}); adjusted sd − SE at most {rows['adjusted_sd_error'].max():.1e}")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return {"rows": rows, "table": table, "refused": refused}


if __name__ == "__main__":
    run()
