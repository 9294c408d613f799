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
# # What to label next: human labels and comparisons chosen for the estimate
#
# Human labels are the expensive part of a judge-corrected evaluation. `bayescal.design` says
# which ones to buy next. It answers three questions:
#
# 1. Which answers should go to humans, to correct a judge's estimate of an accuracy? This is
#    the setting of Chen, Lu, Li, Guo & Li (2026, arXiv:2601.05420). The answer is a Neyman
#    allocation over the judge's label, or active sampling for a judge score.
# 2. Which comparisons should be collected next for a leaderboard? This is the judge-aware BTL
#    of Xu, Tan, Wu & Zhou (2026, arXiv:2601.21817), with a greedy A-optimal design.
# 3. How to do either from the shell, with `bayescal next`.
#
# The card [`models/design.md`](../models/design.md) has the mathematics and the simulation
# studies.

# %%
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescal as bc
from bayescal import datasets, design
from bayescal.data import Labels
from bayescal.frequentist import judge_discrimination_btl as jd_f
from bayescal.frequentist import judge_mean

pd.set_option("display.width", 140)
pd.set_option("display.precision", 4)
RNG = np.random.default_rng(int(os.environ.get("BAYESCAL_NB_SEED", 1)))

# %% [markdown]
# ## 1. TriviaQA: which answers to send to humans
#
# Judging the Judges (TriviaQA) has 3,200 answers, each with a human correct/incorrect label
# and the labels of several LLM judges. Pretend that only the judges' labels are known, and
# that a first batch of 80 random answers has been labelled by humans. There is a budget of
# 240 more human labels.

# %%
with warnings.catch_warnings():  # 400 of its 3,600 rows have no human label: dropped, said once
    warnings.simplefilter("ignore", UserWarning)
    frame = datasets.triviaqa_judges()
y = frame["human"].to_numpy(float)
judge = frame["GPT-4"].to_numpy(float)
order = RNG.permutation(len(frame))
first, rest = order[:80], order[80:]
held = Labels.from_arrays(y[first], judge[first], judge[rest], judges=["GPT-4"])
print(f"all-human accuracy (the target, unknown in practice): {y.mean():.4f}")
allocation = design.allocate_labels(held, 240)
allocation

# %% [markdown]
# The allocation gives each next label to the judge-label stratum whose share of the variance
# falls most, i.e. it spends in proportion to p_s σ_s (share × the human spread). GPT-4's
# "incorrect" stratum (37 % of the answers, humans say correct in about 6 %) gets more than its
# share of the items and the "correct" stratum less. GPT-4 is a good judge here: the two
# strata's p_s σ_s are close, so the allocation is close to proportional, and the standard error
# it reaches is about the one random labelling reaches (`attrs`). The allocation pays for
# judges whose strata differ more, e.g. with a rare outcome (the card's study).

# %%
pd.Series(allocation.attrs)

# %% [markdown]
# `choose_labels` draws the items, at random within each stratum. In practice the humans label
# them now; here the labels are read from the data.

# %%
ask = design.choose_labels(held, 240, random_seed=RNG)
chosen = rest[ask.index.to_numpy()]  # positions in the unlabelled set -> rows of the frame
labelled = np.r_[first, chosen]
others = np.setdiff1d(rest, chosen)
after = Labels.from_arrays(y[labelled], judge[labelled], judge[others], judges=["GPT-4"])
table = judge_mean.estimate(after)
table[["estimate", "lower", "upper", "note"]]

# %% [markdown]
# Read the `bayes` row. The labelled answers were chosen by their judge label, so they are no
# longer a random sample of all answers. The label-shift check notices, and it says so in the
# PPI, PPI++, MLE and EIF notes. The saturated model's likelihood, and with it the Jeffreys
# posterior, is unaffected by a selection on the judge's label. PPI is not: it assumes the
# labelled items are a random sample.
#
# ## 2. Active sampling for a judge score
#
# With a score rather than a label, `active_labels` sends each answer to humans with a known
# probability. The probability is larger where a prediction of the human label, fitted to the
# labels held, is uncertain. `active_mean` is unbiased for any prediction. Here the score is the
# number of the nine judges that say "correct".

# %%
score = frame.drop(columns=["model", "question", "human"]).sum(axis=1).to_numpy(float)
held_score = Labels.from_arrays(y[first], score[first], score[rest], judges=["votes"])
draw = design.active_labels(held_score, 240, random_seed=RNG)
print(f"{draw['selected'].sum()} answers drawn; inclusion probabilities "
      f"{draw['inclusion_probability'].min():.3f}–{draw['inclusion_probability'].max():.3f}")
picked = rest[draw["selected"].to_numpy()]
active = design.active_mean(held_score, draw, y[picked])
active.summary()

# %% [markdown]
# ## 3. A leaderboard: which comparisons to collect next
#
# For a judge-aware BTL fit, `next_comparisons` picks the next verdicts that most lower the
# variance of a target. The target can be every pairwise contrast, one contrast, or the pairs
# that decide the top-k set. By default a quarter of the budget is drawn at random: a design
# chosen only from the current, noisy estimate makes the pooled refit's Wald intervals cover
# about two points below their level, and the random part narrows that loss without removing
# it (the card has the study).

# %%
verdicts_path = Path(bc.__file__).resolve().parents[1] / "tests" / "data" / "verdicts.csv"
fit = jd_f.fit(bc.Comparisons.from_frame(pd.read_csv(verdicts_path)))
nxt = design.next_comparisons(fit, 12, judges=["human"], random_seed=1)
print(nxt.attrs)
nxt

# %% [markdown]
# The same from the shell: fit into a run folder, then `bayescal next` writes the comparisons
# in the tidy verdict format, with an empty `outcome` to fill in and append.

# %%
with tempfile.TemporaryDirectory() as tmp:  # the commands run in a scratch folder
    cli = [sys.executable, "-m", "bayescal.cli"]
    subprocess.run([*cli, "fit", "judge-discrimination-btl", str(verdicts_path), "--method",
                    "mle", "--out", "run"], check=True, capture_output=True, cwd=tmp)
    done = subprocess.run([*cli, "next", "run", "--budget", "5", "--top", "2", "--out",
                           "next.csv"], check=True, capture_output=True, text=True, cwd=tmp)
    print(done.stderr.strip())
    print(Path(tmp, "next.csv").read_text())
