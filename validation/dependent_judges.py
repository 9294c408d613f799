"""Judges whose errors are correlated given Y: coverage of the independent and item-effect models.

Two tables of 95 % prevalence intervals (Chen, Lu, Li, Guo and Li 2026, arXiv:2601.05420,
extended to K judges):

1. **Simulation from the item-effect model** (``simulate.misclassification(..., item_sd=σ)``):
   four judges, θ = 0.4, N items of which a share f is labelled, σ = 0 (the independent model
   holds) and σ = 1.5 (errors shared). Rows: the conditionally independent MLE
   (``misclassification.fit``), the item-effect MLE (``misclassification_dependent.fit``), the
   MAP of each (the twins' ``penalty=`` with the PyMC models' default priors: the same point
   as ``bayescal.fit(build(...), "map")``, with the Wald interval of the penalized fit) and
   PPI++ on the best judge alone (``judge_mean.ppi_plus_plus``, which needs no model of the
   judges). ``coverage`` is of the population θ, with the ±3 sd binomial band of
   ``validation/bands.py``; ``defined`` is the share of replicates that gave an interval (the
   rest were refused: boundary or identification errors); ``flagged`` the share in which the
   independent fit warned that the judges are dependent.
2. **TriviaQA** (Judging the Judges; judges GPT-4, Llama-13B, Llama-7B and Llama3-70B), twice:
   the 400 answers of ``llama2-7b-chat``, and the 3,200 answers of all eight exam takers.
   Random splits with 50 human labels, coverage of the all-human accuracy by the same rows and
   PPI++ on each judge; before each, the two conditional-independence statistics on all items.
   The splits share most of their unlabelled items, so this coverage is over the choice of the
   labelled items of one fixed set, not over new data sets.

Run: ``python validation/dependent_judges.py`` (about 10 minutes on two cores) or ``--quick``
(a few replicates); ``--data DATA`` names the data folder (default ``$BAYESCAL_DATA``; the
TriviaQA table is skipped without one); ``--part simulation`` or ``--part triviaqa`` runs one
table.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

import bayescal as bc
from bayescal import simulate
from bayescal.frequentist import judge_mean as jm
from bayescal.frequentist import misclassification as mf
from bayescal.frequentist import misclassification_dependent as md
from bayescal.independence import ConditionalDependenceWarning, labelled_test, pattern_test
from bayescal.models import misclassification as mm
from bayescal.models import misclassification_dependent as mdm


def _sibling(name: str) -> ModuleType:
    """A script of this folder, loaded by path (never through sys.path)."""
    key = f"validation_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


bands = _sibling("bands")
PROB = bands.PROB
JUDGES = ["GPT-4", "Llama-13B", "Llama-7B", "Llama3-70B"]
Q0 = [0.85, 0.75, 0.7, 0.8]
Q1 = [0.85, 0.8, 0.7, 0.75]
THETA = 0.4


def _interval(est: bc.Estimate) -> tuple[float, float, float]:
    row = bc.summarize(est, PROB).loc["prevalence"]
    return float(row["estimate"]), float(row["lower"]), float(row["upper"])


def _methods(best: str) -> dict[str, Callable[[bc.Labels], bc.Estimate]]:
    return {"independent MLE": lambda lab: mf.fit(lab),
            "independent MAP": lambda lab: mf.fit(lab, penalty=mm.Priors()),
            "item-effect MLE": lambda lab: md.fit(lab),
            "item-effect MAP": lambda lab: md.fit(lab, penalty=mdm.Priors()),
            f"PPI++ ({best})": lambda lab: jm.ppi_plus_plus(lab, best)}


def _run(datasets: list[bc.Labels], target: list[float],
         methods: dict[str, Callable[[bc.Labels], bc.Estimate]]) -> pd.DataFrame:
    """Coverage, width, bias and refusals of every method over the data sets."""
    rows = []
    for name, method in methods.items():
        hits, widths, errors, flags, defined = [], [], [], [], 0
        for lab, truth in zip(datasets, target, strict=True):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    est, lo, hi = _interval(method(lab))
                except (ValueError, np.linalg.LinAlgError):
                    continue  # refused (boundary, identification): counted as not defined
            defined += 1
            hits.append(lo <= truth <= hi)
            widths.append(hi - lo)
            errors.append(est - truth)
            flags.append(any(w.category is ConditionalDependenceWarning for w in caught))
        reps = len(hits)
        coverage = float(np.mean(hits)) if reps else float("nan")
        rows.append({"method": name, "reps": len(datasets), "defined": defined / len(datasets),
                     "coverage": coverage, "band": f"±{float(bands.band(max(reps, 1))):.3f}",
                     "verdict": bands.verdict(coverage, reps),
                     "width": float(np.mean(widths)) if reps else float("nan"),
                     "bias": float(np.mean(errors)) if reps else float("nan"),
                     "flagged": float(np.mean(flags)) if reps else float("nan")})
    return pd.DataFrame(rows)


def simulation(reps: int, n_items: int, fraction: float, seed: int = 20261204) -> pd.DataFrame:
    frames = []
    for sd in (0.0, 1.5):
        datasets = [simulate.misclassification(
            n_items, prevalence=THETA, specificity=Q0, sensitivity=Q1,
            labelled_fraction=fraction, random_seed=seed + r, item_sd=sd,
            judges=[f"j{i}" for i in range(4)])[0] for r in range(reps)]
        table = _run(datasets, [THETA] * reps, _methods("j0"))
        frames.append(table.assign(item_sd=sd, N=n_items, f=fraction))
    out = pd.concat(frames, ignore_index=True)
    return out[["item_sd", "N", "f", *[c for c in out.columns if c not in ("item_sd", "N", "f")]]]


def _triviaqa(data: str, exam_taker: str | None) -> pd.DataFrame:
    """The answers of one exam taker, or of all eight (None), with every judge's label."""
    answers = bc.datasets.triviaqa_judges(data).dropna(subset=JUDGES)
    if exam_taker is not None:
        answers = answers[answers["model"] == exam_taker]
    answers = answers.reset_index(drop=True)
    return answers.assign(**{j: answers[j].astype(int) for j in JUDGES})


def triviaqa_tests(answers: pd.DataFrame) -> pd.DataFrame:
    """Both conditional-independence statistics on all 400 labelled answers."""
    x = answers[JUDGES].to_numpy()
    y = answers["human"].to_numpy()
    ones = np.ones(len(y))
    # every answer is labelled: the EM of the all-items test starts at the labelled rates
    q0, q1 = (x[y == 0] == 0).mean(axis=0), (x[y == 1] == 1).mean(axis=0)
    tests = {"labelled (within Y)": labelled_test(x, y, ones),
             "all items' patterns": pattern_test(x, ones, float(y.mean()), q0, q1)}
    return pd.DataFrame([{"test": name, "items": len(y), "G2": t.g2, "df": t.df,
                          "p bootstrap": t.p_value, "p chi2": t.p_value_chi2}
                         for name, t in tests.items() if t is not None])


def triviaqa(answers: pd.DataFrame, splits: int, labels: int = 50, seed: int = 0
             ) -> pd.DataFrame:
    truth = float(answers["human"].mean())
    datasets = [bc.Labels.random_split(answers, human="human", judge=JUDGES,
                                       fraction=labels / len(answers), random_seed=seed + s)
                for s in range(splits)]
    methods = _methods(JUDGES[0])
    for judge in JUDGES[1:]:
        methods[f"PPI++ ({judge})"] = lambda lab, judge=judge: jm.ppi_plus_plus(lab, judge)
    return _run(datasets, [truth] * splits, methods).assign(truth=truth)


def main(argv: list[str] | None = None) -> dict[str, pd.DataFrame]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few replicates (seconds)")
    parser.add_argument("--data", default=os.environ.get("BAYESCAL_DATA"),
                        help="data folder holding judging-judges-triviaqa")
    parser.add_argument("--part", choices=("all", "simulation", "triviaqa"), default="all",
                        help="run one table only (the two can run side by side)")
    args = parser.parse_args(argv)
    reps, splits = (10, 10) if args.quick else (300, 300)
    pd.set_option("display.width", 200)
    out: dict[str, pd.DataFrame] = {}
    start = time.perf_counter()
    if args.part in ("all", "simulation"):
        out["simulation"] = simulation(reps, n_items=1000, fraction=0.1)
        print(f"simulation: θ = {THETA}, four judges (q0 = {Q0}, q1 = {Q1}), {reps} replicates "
              "per σ; PPI++ on judge j0")
        print(out["simulation"].to_string(index=False, float_format="%.3f"))
    if args.part == "simulation":
        return out
    if not args.data:
        print("TriviaQA: set BAYESCAL_DATA or pass --data to run it")
        return out
    for exam_taker in ("llama2-7b-chat", None):
        answers = _triviaqa(args.data, exam_taker)
        key = "all" if exam_taker is None else exam_taker
        who = ("all eight exam takers' answers" if exam_taker is None
               else f"{exam_taker} answers")
        out[f"triviaqa_tests_{key}"] = triviaqa_tests(answers)
        print(f"TriviaQA, {who}, judges " + ", ".join(JUDGES)
              + f": conditional independence on all {len(answers)} labelled items")
        print(out[f"triviaqa_tests_{key}"].to_string(index=False, float_format="%.4g"))
        out[f"triviaqa_{key}"] = triviaqa(answers, splits)
        print(f"TriviaQA, {who}: {splits} random splits with 50 human labels, coverage of the "
              f"all-human accuracy {out[f'triviaqa_{key}']['truth'].iloc[0]:.4f}")
        print(out[f"triviaqa_{key}"].drop(columns="truth").to_string(index=False,
                                                                    float_format="%.3f"))
    print(f"({time.perf_counter() - start:.0f} s)")
    return out


if __name__ == "__main__":
    main()
