"""DIAL on real data: PRD Vicuna80 (analogues of DIAL 2026, Fig. 4 and Fig. 3).

LLM side: the five PRD reviewers (bard, claude, gpt35, gpt4, vicuna-13b) judging the five models
in both display orders (8,000 verdicts). Human side: the human votes on pairs of those five
models (1,760 of the 7,040; the others involve models no LLM judged and are dropped, counted in
the output). Each repeat splits the human votes at random into disjoint halves: a calibration pool
and a test set; the target is the human BTL ranking of the test set.

* Budget study (Fig. 4 analogue): Kendall τ between each method's ranking (fitted on n_h votes
  drawn from the calibration pool) and the held-out human ranking, as n_h grows.
* One-sided display stress test (Fig. 3 analogue): keep only the verdicts where the alphabetically
  first model is displayed first, and add a pure-position judge (prefers whatever is shown first
  with probability 0.9, whatever the models). Pooled and noPos absorb the position judge's
  preference into the scores; DIAL estimates b_k and does not.

Run::

    python validation/dial_real.py --quick                  # CI size (2 repeats, 2 budgets)
    python validation/dial_real.py --repeats 50             # the study
    python validation/dial_real.py --data PATH              # data root (default $BAYESCAL_DATA)
    python validation/dial_real.py --repeats 50 --scheduler tcp://host:8786 --parts parts/

The splits run through :mod:`bayescal.studies` (study ``seed000_dial_real``, one split per
replicate): split r permutes the human votes with the runner's seed of (study, budgets, r), so the
tables do not depend on ``--jobs`` or a Dask cluster (``--scheduler``); ``--parts DIR`` keeps
partial results for a resumed rerun. Every worker must be able to read the data (``--data`` or
``BAYESCAL_DATA`` there).

Prints the tables and writes ``dial_real_budget.csv``, ``dial_real_stress.csv`` to --out.
"""

from __future__ import annotations

import argparse
import functools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayescal import datasets, studies
from bayescal.data import Comparisons
from bayescal.frequentist import dial_baselines as db

BUDGETS = (25, 50, 100, 200, 400, 800)
METHODS = ("Human", "Pooled", "DIAL-Anc", "DIAL-Ada", "DIAL-Ada(W)", "DIAL-noPos", "AtC")


def load(path: str | None) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    df = datasets.prd_vicuna80(path)
    llm = df[df["judge"] != "human"].reset_index(drop=True)
    items = set(llm["item_a"]) | set(llm["item_b"])
    human = df[df["judge"] == "human"]
    keep = human["item_a"].isin(items) & human["item_b"].isin(items)
    return llm, human[keep].reset_index(drop=True), int((~keep).sum())


def _tau(s: np.ndarray, target: np.ndarray) -> float:
    if not np.isfinite(s).all():
        return np.nan
    i, j = np.triu_indices(s.size, 1)
    return float(2 * np.mean(np.sign(s[i] - s[j]) == np.sign(target[i] - target[j])) - 1)


def _target(test: pd.DataFrame, items: tuple[str, ...]) -> np.ndarray:
    c = Comparisons.from_frame(test[["item_a", "item_b", "outcome"]], judge=None, order=None)
    code = np.array([items.index(x) for x in c.items])
    return db._btl(len(items), code[c.item_i], code[c.item_j], c.count, c.wins)


def _fit_all(llm: Comparisons, calib: pd.DataFrame) -> pd.DataFrame:
    human = Comparisons.from_frame(calib[["item_a", "item_b", "outcome"]].assign(judge="human"),
                                   order=None, humans=["human"])
    scores, _, _ = db.baselines(Comparisons.concat([llm, human]), rank=1)
    return scores


# a plain dict, not functools.lru_cache: Dask pickles this script's functions by value, and an
# lru_cache wrapper would be pickled by reference to a __main__ the workers do not have
_DESIGNS: dict[str | None, tuple[pd.DataFrame, Comparisons, Comparisons, int]] = {}


def _designs(path: str | None) -> tuple[pd.DataFrame, Comparisons, Comparisons, int]:
    """The human votes, the LLM comparisons and the stressed design (cached per process)."""
    if path not in _DESIGNS:
        _DESIGNS[path] = _build_designs(path)
    return _DESIGNS[path]


def _build_designs(path: str | None) -> tuple[pd.DataFrame, Comparisons, Comparisons, int]:
    llm_frame, human_frame, dropped = load(path)
    llm = Comparisons.from_frame(llm_frame[["item_a", "item_b", "outcome", "judge", "order"]])
    # one-sided display + a pure-position judge (prefers the first shown w.p. 0.9); a fixed
    # design shared by every split, so its seed is a constant, not the runner's
    one = llm_frame[llm_frame["item_a"] < llm_frame["item_b"]]
    rng = np.random.default_rng(2026)
    pos = one[one["judge"] == one["judge"].iloc[0]].copy()
    pos["judge"] = "position-only"
    pos["outcome"] = (rng.random(len(pos)) < 0.9).astype(float)
    stressed = Comparisons.from_frame(pd.concat([one, pos])[["item_a", "item_b", "outcome",
                                                             "judge", "order"]])
    return human_frame, llm, stressed, dropped


def split(cell: dict, seed: int, data: str | None = None) -> pd.DataFrame:
    """One random split of the human votes (from the runner's seed): τ per budget and design."""
    human_frame, llm, stressed, _ = _designs(data)
    items = llm.items
    perm = np.random.default_rng(seed).permutation(len(human_frame))
    half = len(perm) // 2
    test, pool = human_frame.iloc[perm[:half]], human_frame.iloc[perm[half:]]
    target = _target(test, items)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for n_h in (int(v) for v in cell["budgets"].split(",")):
            scores = _fit_all(llm, pool.iloc[:n_h])
            rows += [{"part": "budget", "n_h": n_h, "design": "", "method": m,
                      "kendall_tau": _tau(scores[m].to_numpy(), target)} for m in METHODS]
        n_h = 200
        for name, design in (("both orders", llm), ("one-sided + position judge", stressed)):
            scores = _fit_all(design, pool.iloc[:n_h])
            rows += [{"part": "stress", "n_h": n_h, "design": name, "method": m,
                      "kendall_tau": _tau(scores[m].to_numpy(), target)} for m in METHODS]
    return pd.DataFrame(rows)


def run(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--data", default=None)
    ap.add_argument("--out", default="validation_out")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--scheduler", type=str, default=None,
                    help="Dask scheduler address (tcp://host:8786): run the splits there")
    ap.add_argument("--parts", type=Path, default=None,
                    help="folder for partial results; a rerun resumes from them")
    args = ap.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    budgets = (50, 200) if args.quick else BUDGETS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    human_frame, llm, _, dropped = _designs(args.data)
    print(f"PRD Vicuna80: {llm}; {len(human_frame)} human votes on these models "
          f"({dropped} votes on other models dropped)")
    study = studies.Study("seed000_dial_real", [{"budgets": ",".join(map(str, budgets))}],
                          repeats, functools.partial(split, data=args.data))
    table = studies.run(study, workers=args.jobs, scheduler=args.scheduler, out=args.parts,
                        chunk=1)
    for _, bad in table[table["error"] != ""].iterrows():  # recorded by the runner, not dropped
        print(f"split {bad['replicate']} (seed {bad['seed']}) raised: {bad['error']}")
    table = table[table["error"] == ""].rename(columns={"replicate": "repeat"})
    rows = table[table["part"] == "budget"][["repeat", "n_h", "method", "kendall_tau"]]
    stress_rows = table[table["part"] == "stress"][["repeat", "design", "method", "kendall_tau"]]
    budget = rows.reset_index(drop=True)
    stress = stress_rows.reset_index(drop=True)
    budget.to_csv(out / "dial_real_budget.csv", index=False)
    stress.to_csv(out / "dial_real_stress.csv", index=False)
    t1 = budget.pivot_table(index="n_h", columns="method", values="kendall_tau",
                            aggfunc="mean")[list(METHODS)]
    undefined = budget.assign(nan=budget["kendall_tau"].isna()).pivot_table(
        index="n_h", columns="method", values="nan", aggfunc="mean")[["Human", "AtC"]]
    t2 = stress.pivot_table(index="design", columns="method", values="kendall_tau",
                            aggfunc="mean")[list(METHODS)]
    pd.set_option("display.width", 200)
    print(f"\nKendall τ against the held-out human ranking, mean over {repeats} splits "
          "(Human and AtC: over splits where the human MLE exists):")
    print(t1.to_string(float_format=lambda v: f"{v:.3f}"))
    print("\nshare of splits without a human MLE:")
    print(undefined.to_string(float_format=lambda v: f"{v:.2f}"))
    print(f"\nOne-sided display stress test at n_h = 200 ({repeats} splits):")
    print(t2.to_string(float_format=lambda v: f"{v:.3f}"))
    return {"budget": budget, "stress": stress, "table": t1, "stress_table": t2}


if __name__ == "__main__":
    run()
