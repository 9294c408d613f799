"""Each LLMBar judge's length effect against the gold label (order-effect BTL with a feature).

LLMBar (Zeng et al. 2024, arXiv:2310.07641) ships, per instance, an instruction, two outputs
and a gold label (curated for the LLMBar and CaseStudy subsets, a human preference for the
Processed ones), and every judge's verdict in both display orders. Per judge k, with the two
"items" the gold output and the other one,

    logit P(k picks the gold output) = (s_gold - s_other) + a b_k + β_k (log len_gold − log len_other),

a = +1 when the gold output is shown first. β_k is the judge's preference for the longer
answer *at a given gold label*: 0 for a judge that follows the gold whatever the lengths; a
doubling of the gold answer's length relative to the other's multiplies its odds by 2^β_k.
s_gold − s_other is the judge's log-odds of agreeing with the gold at equal lengths and no
position effect. Lengths are characters of the output text. Intervals are cluster-robust over
instances (both display orders of an instance share the instance; CR1).

Run::

    python validation/llmbar_length.py                       # data root from $BAYESCAL_DATA
    python validation/llmbar_length.py --data PATH --strategy Vanilla_NoRules

Prints one table per subset group (all, curated labels, human labels) and writes
``llmbar_length.csv`` to --out (default: the current folder).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

import bayescal as bc
from bayescal.data import Comparisons
from bayescal.frequentist import order_effect_btl as oef

GROUPS = {"all": None, "curated (LLMBar, CaseStudy)": ("LLMBar", "CaseStudy"),
          "human labels (Processed)": ("Processed",)}


def _folder(data: str | None) -> Path:
    root = Path(data or os.environ.get("BAYESCAL_DATA", ""))
    if not str(root):
        raise SystemExit("give --data PATH (the data root or its llmbar folder) or set "
                         "BAYESCAL_DATA")
    return root if (root / "datasets").is_dir() else root / "llmbar"


def gold_frame(folder: Path, strategy: str) -> pd.DataFrame:
    """Verdicts as gold-vs-other comparisons with the log lengths of both outputs."""
    v = bc.datasets.llmbar(folder, strategies=strategy, lengths=True)
    if (v[["length_a", "length_b"]] == 0).any().any():
        raise SystemExit("an empty output: check the data")
    # the loader's item_a is the output shown first; gold = 1 when the gold output is item_a
    gold_first = v["gold"].to_numpy() == 1.0
    len_gold = np.where(gold_first, v["length_a"], v["length_b"])
    len_other = np.where(gold_first, v["length_b"], v["length_a"])
    return pd.DataFrame({
        "item_a": "gold", "item_b": "other", "judge": v["judge"],
        "outcome": np.where(gold_first, v["outcome"], 1.0 - v["outcome"]),
        "order": np.where(gold_first, 1, -1), "question": v["question"],
        "subset": v["subset"], "loglen_a": np.log(len_gold), "loglen_b": np.log(len_other)})


def table(frame: pd.DataFrame, prob: float = 0.95) -> pd.DataFrame:
    """Per judge: verdicts, accuracy at equal lengths, b_k and β_k with Wald intervals."""
    data = Comparisons.from_frame(frame, features=[("loglen_a", "loglen_b")],
                                  cluster="question")
    est = oef.fit(data, information="cluster")
    z = float(norm.ppf(0.5 + prob / 2))
    rows = []
    for judge in data.judges:
        def get(term: str, name: str) -> tuple[float, float, float]:
            value = float(est.params[name].sel(judge=judge, **(
                {"feature": "loglen"} if name == "feature_effect" else {})))
            return value, value - z * est.se[term], value + z * est.se[term]

        beta = get(f"feature_effect[{judge}, loglen]", "feature_effect")
        b = get(f"order_effect[{judge}]", "order_effect")
        gap = float(est.params["ability"].sel(judge=judge, item="gold")
                    - est.params["ability"].sel(judge=judge, item="other"))
        rows.append({"judge": judge, "verdicts": int(est.info["n_verdicts_per_judge"][judge]),
                     "p_gold_equal_length": 1 / (1 + np.exp(-gap)),
                     "b": b[0], "b_lower": b[1], "b_upper": b[2],
                     "beta_loglen": beta[0], "beta_lower": beta[1], "beta_upper": beta[2],
                     "odds_x_per_doubling": 2 ** beta[0]})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="data root or its llmbar folder "
                    "(default $BAYESCAL_DATA)")
    ap.add_argument("--strategy", default="Vanilla_NoRules",
                    help="prompting strategy (default Vanilla_NoRules, the one every subset has)")
    ap.add_argument("--out", default=".", help="folder of llmbar_length.csv")
    args = ap.parse_args(argv)
    frame = gold_frame(_folder(args.data), args.strategy)
    out = []
    pd.set_option("display.width", 160)
    for name, prefixes in GROUPS.items():
        part = frame if prefixes is None else frame[frame["subset"].str.startswith(prefixes)]
        t = table(part)
        t.insert(0, "group", name)
        out.append(t)
        print(f"\n{name}: {part['question'].nunique()} instances, strategy {args.strategy}")
        print(t.drop(columns="group").to_string(index=False, float_format="{:.3f}".format))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    pd.concat(out).to_csv(Path(args.out) / "llmbar_length.csv", index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
