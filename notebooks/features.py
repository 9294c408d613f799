# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Judges' length bias on LLMBar: judge-specific effects of answer features
#
# Position is one bias of an LLM judge; the best known other is verbosity (Zheng et al. 2023,
# arXiv:2306.05685, found that judges prefer longer answers on MT-Bench). DIAL's order-effect
# model (DIAL, "Position-Debiased LLM Judges with Adaptive Human Preference Calibration",
# 2026, model (1)) extends to judge-specific effects of per-comparison features:
#
# $$\mathrm{logit}\,P(k \text{ prefers } i \text{ over } j) = s_{ki} - s_{kj} + a\,b_k
#   + \beta_k^\top(x_i - x_j),$$
#
# $x_i$ the features of item $i$'s answer *in this comparison* (here its log length in
# characters) and $a = \pm 1$ the display order. $\beta_k$ is judge $k$'s length effect: a
# doubling of an answer's length relative to the other's multiplies the odds by
# $2^{\beta_k}$. The abilities $s_k$ are the judge's preferences at equal features, its
# leaderboard with the length bias removed. The mathematics, identification rules and
# simulations are in the card [`models/order_effect_btl.md`](../models/order_effect_btl.md)
# (Section 10).
#
# Data: LLMBar (Zeng et al. 2023, arXiv:2310.07641): instances of an instruction and two
# outputs with a gold label (curated for correct instruction following in the LLMBar and
# CaseStudy subsets; a human preference in the Processed subsets: MT-Bench, LLMEval²,
# FairEval), and six LLM judges' verdicts on every instance in both display orders (source and
# license: `llmbar/PROVENANCE.md` in the data directory). This notebook only calls the
# library; the data directory comes from the `BAYESCAL_DATA` environment variable.

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import bayescal as bc
from bayescal.frequentist import order_effect_btl as oef

PROB = 0.95
pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 20)
pd.set_option("display.precision", 3)
print(bc.versions())

# %% [markdown]
# ## Data: verdicts and answer lengths
#
# `bc.datasets.llmbar(..., lengths=True)` adds the characters of each verdict's two outputs.
# We keep the one prompting strategy every subset has (Vanilla_NoRules); the loader drops the
# verdicts it cannot parse, with a warning.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # the unparsable verdicts, counted below
    raw = bc.datasets.llmbar(strategies="Vanilla_NoRules", lengths=True)
print(f"{len(raw)} verdicts, {raw['question'].nunique()} instances, judges "
      f"{sorted(raw['judge'].unique())}")
print(raw[["question", "judge", "item_a", "item_b", "outcome", "gold", "length_a",
           "length_b"]].head(4).to_string(index=False))

# %% [markdown]
# ## Each judge's length effect against the gold label
#
# The outputs are anonymous, so per judge the two "items" are *the gold output* and *the other
# one*: $s_{\text{gold}} - s_{\text{other}}$ is the judge's log-odds of agreeing with the gold
# label at equal lengths and no position effect, and $\beta_k$ its preference for the longer
# answer *given the label*: 0 for a judge that follows the gold whatever the lengths. The
# feature is the log length, entered as the pair of columns `loglen_a`, `loglen_b`; the
# container keeps their difference. Intervals are cluster-robust over instances (both display
# orders of an instance share it; CR1).

# %%
gold_first = raw["gold"].to_numpy() == 1.0
gold = pd.DataFrame({
    "item_a": "gold", "item_b": "other", "judge": raw["judge"],
    "outcome": np.where(gold_first, raw["outcome"], 1.0 - raw["outcome"]),
    "order": np.where(gold_first, 1, -1), "question": raw["question"],
    "curated": ~raw["subset"].str.startswith("Processed"),
    "loglen_a": np.log(np.where(gold_first, raw["length_a"], raw["length_b"])),
    "loglen_b": np.log(np.where(gold_first, raw["length_b"], raw["length_a"]))})
curated = gold[gold["curated"]]
data = bc.Comparisons.from_frame(curated, features=[("loglen_a", "loglen_b")],
                                 cluster="question")
fit = oef.fit(data, information="cluster")
print(data)
print("covariance:", fit.info["information"], "over", fit.info["cluster"], fit.info["correction"])

# %%
effects = fit.summary(PROB)
effects = effects[effects["parameter"] == "feature_effect"]
effects["odds x per doubling"] = 2 ** effects["estimate"]
effects[["estimate", "lower", "upper", "odds x per doubling"]].round(3)

# %% [markdown]
# Every judge prefers the longer answer beyond what the gold label explains, every interval
# above zero: LLaMA2 most (its odds of picking an answer more than double when the answer is
# twice as long as the other), PaLM2 and GPT-4 least.

# %%
ax = plt.figure(figsize=(6, 3)).gca()
rows = effects.reset_index()
ax.errorbar(rows["estimate"], np.arange(len(rows)),
            xerr=[rows["estimate"] - rows["lower"], rows["upper"] - rows["estimate"]],
            fmt="o", capsize=3)
ax.set_yticks(np.arange(len(rows)), [t.split("[")[1].split(",")[0] for t in rows["term"]])
ax.axvline(0, color="grey", lw=0.8)
ax.set_xlabel("length effect beta_k (logits per unit log length ratio), 95% CI")
ax.set_title("LLMBar curated subsets, against the gold label")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## With and without the length bias removed
#
# Each judge's "leaderboard" here has two entries, the gold output and the other; the gap
# between them is its accuracy against the gold in log-odds. `bc.leaderboard(fit, judge=k)`
# ranks a judge's items with intervals; the fit with the feature gives the gap at equal
# lengths, the fit without it the gap with the judge's length preference mixed in.

# %%
plain = oef.fit(bc.Comparisons.from_frame(curated, cluster="question"), information="cluster")
print(bc.leaderboard(fit, judge="GPT-4", prob=PROB)
      [["item", "mle_estimate", "mle_lower", "mle_upper"]].to_string())


def gold_gap(estimate) -> pd.DataFrame:
    """Per judge: s_gold - s_other, its Wald interval, and P(agrees with gold) at that gap."""
    out = {}
    for judge in estimate.params["ability"].coords["judge"].values:
        table = bc.contrasts(estimate, parameter="ability", judge=str(judge), prob=PROB)
        row = table.loc[f"ability[{judge}, gold] - ability[{judge}, other]"]
        out[str(judge)] = {"gap": row["estimate"], "lower": row["lower"],
                           "upper": row["upper"], "P(gold)": 1 / (1 + np.exp(-row["estimate"]))}
    return pd.DataFrame(out).T


board = pd.concat({"equal length (feature)": gold_gap(fit), "length ignored": gold_gap(plain)},
                  axis=1)
board.round(3)

# %% [markdown]
# ## Relative to humans: $\beta_k - \beta_h$
#
# The design above measures a judge's length preference *beyond the label's*. To read "judge
# $k$ rewards length by $\beta_k$, humans by $\beta_h$", the human label enters as a judge of
# its own. On the Processed subsets the label is a human preference; there the items are the
# two output slots (`output_1`, `output_2`, pooled over instances) so that every judge,
# the human included, has a length effect of its own. The human labels carry no display order:
# each label enters once in each order, which gives $b_h = 0$ by symmetry and, clustered by
# instance, exactly the single label's intervals (the duplicated scores double the
# information and the cluster score alike, and the sandwich is unchanged).
# `feature_effect_contrasts` gives $\beta_k - \beta_h$ with the covariance of the shared
# instances.

# %%
human_rows = raw[raw["subset"].str.startswith("Processed")]
pairs = pd.DataFrame({
    "item_a": human_rows["item_a"], "item_b": human_rows["item_b"],
    "judge": human_rows["judge"], "outcome": human_rows["outcome"], "order": 1,
    "question": human_rows["question"], "loglen_a": np.log(human_rows["length_a"]),
    "loglen_b": np.log(human_rows["length_b"])})
labels = human_rows.drop_duplicates("question").assign(judge="human",
                                                       outcome=lambda f: f["gold"])
labels = pd.DataFrame({"item_a": labels["item_a"], "item_b": labels["item_b"],
                       "judge": "human", "outcome": labels["outcome"], "order": 1,
                       "question": labels["question"],
                       "loglen_a": np.log(labels["length_a"]),
                       "loglen_b": np.log(labels["length_b"])})
swapped = labels.rename(columns={"item_a": "item_b", "item_b": "item_a",
                                 "loglen_a": "loglen_b", "loglen_b": "loglen_a"})
swapped["outcome"] = 1.0 - swapped["outcome"]
both = pd.concat([pairs, labels, swapped], ignore_index=True)
with_humans = bc.Comparisons.from_frame(both, features=[("loglen_a", "loglen_b")],
                                        cluster="question", humans=["human"])
fit_h = oef.fit(with_humans, information="cluster")
beta_all = fit_h.summary(PROB)
print(beta_all[beta_all["parameter"] == "feature_effect"][["estimate", "lower", "upper"]]
      .round(3).to_string())
contrasts = oef.feature_effect_contrasts(fit_h, PROB)
contrasts[["judge", "human", "estimate", "lower", "upper", "p_value"]].round(3)

# %% [markdown]
# The human labels themselves favour the longer answer ($\beta_h > 0$, interval above zero:
# human raters like longer answers too), and the judges' length effects, measured the same way,
# are of the same size: for ChatGPT, GPT-4 and PaLM2 the interval of $\beta_k - \beta_h$
# covers zero, while LLaMA2 rewards length more than the humans do. The gold-label design
# above measures the part of a judge's length preference that the label does not explain;
# this one measures it against the humans' own.
#
# In the table before, the curated gold output is often the shorter one, so a fit that ignores
# the length bias understates every judge's agreement with the gold between answers of equal
# length; for LLaMA2 and ChatGPT-0301 it moves the estimated agreement from above one half to
# below.
#
# ## What the simulation adds
#
# A leaderboard distorted by a length bias is shown best where the truth is known:
# `python validation/order_effect_features.py` (the card's table) fits 400 replications of
# 300 questions × 3 judges whose better items write longer answers. With the feature every
# ability's 95 % interval covers in 0.94–0.97 of replications; without it the items with the
# longest and shortest answers move in the direction of the judge's $\beta_k$ and their
# intervals cover in 0.70–0.90, and a judge that penalises length ranks a longer-answer item
# below its equal in most replications.
