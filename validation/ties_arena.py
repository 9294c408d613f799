"""Ties on Chatbot Arena: Wald interval widths of the half-win and Davidson fits against an
Arena-style bootstrap.

Data: the human verdicts of the Chatbot Arena conversations used by Chatzi, Straitouri,
Thejaswi, Gomez-Rodriguez (2024, arXiv:2402.17826), file ``arena_human_vs_llm_judges.csv``
(both tie kinds read as a tie), restricted to the ``--models`` most-compared models. One judge
(the human voters), so γ ≡ 1 and Davidson's model has one ν.

For each of B bootstrap resamples of the verdicts (with replacement, the Arena leaderboard's
procedure) both models are refitted; the bootstrap interval of each ability is the percentile
interval (2.5 %, 97.5 %). Each Wald interval (95 %) is compared with the bootstrap of its own
estimator: half-win expected information (the paper's convention) and half-win sandwich
against the half-win bootstrap, Davidson's expected information against the Davidson
bootstrap. Printed: per kind, the median and range over models of the width ratio
Wald / bootstrap. NUTS is not run here (see the card).

Run::

    python validation/ties_arena.py --data ROOT            # B = 200 (about a minute)
    python validation/ties_arena.py --data ROOT --quick    # B = 20, smoke version
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bayescal.data import Comparisons
from bayescal.frequentist import judge_discrimination_btl as twin

_Z = 1.959963984540054
_FILE = Path("ppr-chatbot-arena") / "arena_human_vs_llm_judges.csv"


def load(root: Path, n_models: int) -> pd.DataFrame:
    """Human verdicts among the ``n_models`` most-compared models, as a tidy frame."""
    raw = pd.read_csv(root / _FILE, usecols=["model_a", "model_b", "human"])
    counts = pd.concat([raw.model_a, raw.model_b]).value_counts()
    keep = set(counts.index[:n_models])
    raw = raw[raw.model_a.isin(keep) & raw.model_b.isin(keep)]
    outcome = raw.human.map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5})
    return pd.DataFrame({"item_a": raw.model_a.to_numpy(), "item_b": raw.model_b.to_numpy(),
                         "outcome": outcome.to_numpy()})


def _abilities(df: pd.DataFrame, ties: str, information: str) -> tuple[np.ndarray, np.ndarray]:
    est = twin.fit(Comparisons.from_frame(df), ties=ties, information=information)
    n = est.params["ability"].size
    return est.params["ability"].values, np.sqrt(np.diag(est.cov)[:n])


def run(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    """Parse ``argv``, print the table and return the width ratios per interval kind."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="data root (or BAYESCAL_DATA)")
    parser.add_argument("--models", type=int, default=10, help="most-compared models kept (10)")
    parser.add_argument("--boot", type=int, default=200, help="bootstrap resamples B (200)")
    parser.add_argument("--quick", action="store_true", help="B = 20")
    parser.add_argument("--seed", type=int, default=20261203)
    args = parser.parse_args(argv)
    root = args.data or (Path(os.environ["BAYESCAL_DATA"]) if "BAYESCAL_DATA" in os.environ
                         else None)
    if root is None:
        parser.error("give --data ROOT or set BAYESCAL_DATA")
    boot = 20 if args.quick else args.boot
    df = load(root, args.models)
    ties = float(np.mean(df.outcome == 0.5))
    print(f"{len(df)} human verdicts among {args.models} models, {ties:.1%} ties; B = {boot}")
    wald = {"half-win expected": _abilities(df, "half", "expected")[1],
            "half-win sandwich": _abilities(df, "half", "sandwich")[1],
            "Davidson expected": _abilities(df, "davidson", "expected")[1],
            "Davidson sandwich": _abilities(df, "davidson", "sandwich")[1]}
    rng = np.random.default_rng(args.seed)
    draws: dict[str, list[np.ndarray]] = {"half": [], "davidson": []}
    for _ in range(boot):
        sample = df.iloc[rng.integers(0, len(df), len(df))]
        for model in draws:
            draws[model].append(_abilities(sample, model, "expected")[0])
    width = {m: np.diff(np.percentile(np.array(d), [2.5, 97.5], axis=0), axis=0)[0]
             for m, d in draws.items()}
    print(f"{'interval':<20} {'Wald / bootstrap width: median':>31} {'min':>6} {'max':>6}")
    ratios = {}
    for name, se in wald.items():
        ratio = ratios[name] = 2 * _Z * se / width["half" if name.startswith("half")
                                                    else "davidson"]
        print(f"{name:<20} {np.median(ratio):>31.3f} {ratio.min():>6.3f} {ratio.max():>6.3f}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
