"""Judge-specific feature effects in the order-effect BTL: recovery, coverage, and the cost of
ignoring a length bias (a generalisation of DIAL's model (1)).

Simulation: 4 items, 3 judges; every judge judges every question once, each question a random
pair shown in a random order, with per-answer log lengths (item means +0.4, +0.1, −0.1, −0.4:
better items write longer answers, as on real leaderboards; SD 0.7 within item) and 0/1
markdown flags. Verdicts from logit = s_ki − s_kj + a b_k + β_k,len Δloglen + β_k,md Δmd.

* Recovery: per b_k and β_kf, the mean estimate against the truth (bias in Monte Carlo SEs),
  the mean Wald SE against the SD of the estimates, and the 95 % coverage.
* Ignoring the features: the same data fitted without them; each judge's ability gap
  s_A − s_D then absorbs about β_k,len times the items' mean log-length gap (0.8), less the
  attenuation that an omitted covariate causes in a logit model.
* The leaderboard: each judge's abilities s_ki (sum zero) with the features are its
  leaderboard at equal features (x_i = x_j, "equal length"); per judge and item, the mean
  estimate, the 95 % Wald coverage of the true s_ki and the mean rank, with and without the
  features.

Run::

    python validation/order_effect_features.py            # 400 replications, 300 questions
    python validation/order_effect_features.py --quick    # 40 replications (CI size)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.special import expit

from bayescal.data import Comparisons
from bayescal.frequentist import order_effect_btl as oef

ITEMS = ("A", "B", "C", "D")
JUDGES = ("h", "k1", "k2")
ABILITY = np.array([[0.6, 0.2, -0.3, -0.5], [0.9, -0.1, -0.2, -0.6], [0.4, 0.4, -0.4, -0.4]])
ORDER = np.array([0.0, 0.5, -0.3])
BETA = np.array([[0.3, 0.0], [0.8, 0.4], [-0.4, 0.2]])  # (judge, [loglen, md])
LENGTH_MEAN = np.array([0.4, 0.1, -0.1, -0.4])  # mean log length of each item's answers
FEATURES = [("loglen_a", "loglen_b"), ("md_a", "md_b")]


def simulate_frame(n_questions: int, seed: int) -> pd.DataFrame:
    """One verdict per (question, judge): columns of ``Comparisons.from_frame`` plus the
    answers' ``loglen_a/_b``, ``md_a/_b`` and the ``question`` id."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_questions), len(JUDGES))
    k = np.tile(np.arange(len(JUDGES)), n_questions)
    a = rng.integers(0, len(ITEMS), n_questions)
    b = (a + rng.integers(1, len(ITEMS), n_questions)) % len(ITEMS)
    loglen = LENGTH_MEAN[np.column_stack([a, b])] + rng.normal(0.0, 0.7, (n_questions, 2))
    md = rng.integers(0, 2, (n_questions, 2)).astype(float)
    order = rng.choice([-1, 1], len(q))
    ia, ib = a[q], b[q]
    eta = (ABILITY[k, ia] - ABILITY[k, ib] + order * ORDER[k]
           + BETA[k, 0] * (loglen[q, 0] - loglen[q, 1]) + BETA[k, 1] * (md[q, 0] - md[q, 1]))
    return pd.DataFrame({
        "judge": np.asarray(JUDGES)[k], "item_a": np.asarray(ITEMS)[ia],
        "item_b": np.asarray(ITEMS)[ib], "order": order,
        "outcome": (rng.random(len(q)) < expit(eta)).astype(float),
        "loglen_a": loglen[q, 0], "loglen_b": loglen[q, 1], "md_a": md[q, 0], "md_b": md[q, 1],
        "question": q.astype(str)})


def study(reps: int, n_questions: int = 300, seed: int = 1000, *, gaps: bool = True
          ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(recovery table, ability-gap table) over ``reps`` fixed-seed replications; ``gaps=False``
    skips the fits without features (and returns None for their table)."""
    recovery, gap_table, _ = _study(reps, n_questions, seed, gaps=gaps)
    return recovery, gap_table


def leaderboard_study(reps: int, n_questions: int = 300, seed: int = 1000) -> pd.DataFrame:
    """Per judge and item over ``reps`` replications (the seeds of :func:`study`): the true
    ability s_ki, and with / without the features the mean estimate, the share of 95 % Wald
    intervals covering s_ki and the mean rank (1 = best; ties in the truth share a rank)."""
    return _study(reps, n_questions, seed, gaps=True)[2]


def _study(reps: int, n_questions: int, seed: int, *, gaps: bool
           ) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    est, se, gap_with, gap_without = [], [], [], []
    board: dict[str, list[np.ndarray]] = {"est_with": [], "cover_with": [], "rank_with": [],
                                          "est_without": [], "cover_without": [],
                                          "rank_without": []}
    for r in range(reps):
        frame = simulate_frame(n_questions, seed=seed + r)
        e = oef.fit(Comparisons.from_frame(frame, features=FEATURES), information="expected")
        est.append(np.c_[e.params["order_effect"].values, e.params["feature_effect"].values])
        se.append(np.array([[e.se[f"order_effect[{j}]"], e.se[f"feature_effect[{j}, loglen]"],
                             e.se[f"feature_effect[{j}, md]"]] for j in JUDGES]))
        if not gaps:
            continue
        plain = oef.fit(Comparisons.from_frame(frame), information="expected")
        for fit, out, tag in ((e, gap_with, "with"), (plain, gap_without, "without")):
            s = fit.params["ability"]
            out.append((s.sel(item="A") - s.sel(item="D")).values)
            values = s.values
            ses = np.array([[fit.se[f"ability[{j}, {i}]"] for i in ITEMS] for j in JUDGES])
            board[f"est_{tag}"].append(values)
            board[f"cover_{tag}"].append(np.abs(values - ABILITY) < 1.959963984540054 * ses)
            # rank 1 = best: one plus the number of items scored higher
            board[f"rank_{tag}"].append(1 + (values[:, None, :] > values[:, :, None]).sum(-1))
    est, se = np.array(est), np.array(se)
    truth = np.c_[ORDER, BETA]
    sd = est.std(axis=0, ddof=1)
    rows = []
    for k, judge in enumerate(JUDGES):
        for c, name in enumerate(("b", "beta_loglen", "beta_md")):
            rows.append({"judge": judge, "parameter": name, "truth": truth[k, c],
                         "mean": est[:, k, c].mean(),
                         "bias_in_mc_se": (est[:, k, c].mean() - truth[k, c])
                         / (sd[k, c] / np.sqrt(reps)),
                         "sd": sd[k, c], "mean_se": se[:, k, c].mean(),
                         "coverage_95": float(np.mean(np.abs(est[:, k, c] - truth[k, c])
                                                      < 1.959963984540054 * se[:, k, c]))})
    if not gaps:
        return pd.DataFrame(rows), None, None
    true_gap = ABILITY[:, 0] - ABILITY[:, 3]
    gap_table = pd.DataFrame({"judge": JUDGES, "true_gap_A_minus_D": true_gap,
                         "with_features": np.mean(gap_with, axis=0),
                         "mc_se_with": np.std(gap_with, axis=0, ddof=1) / np.sqrt(reps),
                         "without_features": np.mean(gap_without, axis=0),
                         "mc_se_without": np.std(gap_without, axis=0, ddof=1) / np.sqrt(reps)})
    mean = {name: np.mean(v, axis=0) for name, v in board.items()}
    mc_se = {tag: np.std(board[f"est_{tag}"], axis=0, ddof=1) / np.sqrt(reps)
             for tag in ("with", "without")}
    true_rank = 1 + (ABILITY[:, None, :] > ABILITY[:, :, None]).sum(-1)
    leaderboard = pd.DataFrame([
        {"judge": judge, "item": item, "truth": ABILITY[k, i], "true_rank": true_rank[k, i],
         **{name: mean[name][k, i] for name in board},
         "mc_se_with": mc_se["with"][k, i], "mc_se_without": mc_se["without"][k, i]}
        for k, judge in enumerate(JUDGES) for i, item in enumerate(ITEMS)])
    return pd.DataFrame(rows), gap_table, leaderboard


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 replications (CI size)")
    ap.add_argument("--reps", type=int, default=400)
    args = ap.parse_args(argv)
    reps = 40 if args.quick else args.reps
    recovery, gaps, board = _study(reps, 300, 1000, gaps=True)
    assert gaps is not None and board is not None
    fmt = "{:.3f}".format
    print(f"Recovery over {reps} replications of 300 questions x 3 judges (MLE, expected "
          "information):")
    print(recovery.to_string(index=False, float_format=fmt))
    print("\nAbility gap s_A - s_D (mean over replications), fitted with and without the "
          "features:")
    print(gaps.to_string(index=False, float_format=fmt))
    print("\nLeaderboard per judge at equal features (the fit with them) and without the "
          "features: mean estimate of s_ki, 95 % Wald coverage of the true s_ki, mean rank:")
    print(board.to_string(index=False, float_format=fmt))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
