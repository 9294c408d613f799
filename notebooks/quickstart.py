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
# # Quickstart: a leaderboard from judge verdicts, three ways
#
# This notebook needs no download: it reads the small file that ships with the tests,
# `tests/data/verdicts.csv` (900 pairwise verdicts on six chat models by three judges: two LLMs
# and a human). It fits one model, the **judge-discrimination Bradley–Terry–Luce model** of
# Xu, Tan, Wu and Zhou (2026, arXiv:2601.21817), three ways:
#
# 1. the **MLE** with Wald intervals (the frequentist twin, numpy/scipy, milliseconds);
# 2. the **MAP**, the mode of the Bayesian model (PyMC), which with flat priors equals the MLE;
# 3. a short **NUTS** run, the posterior, with its sampler diagnostics.
#
# Judge $k$ prefers model $i$ over model $j$ with probability $\sigma(\gamma_k(s_i - s_j))$:
# $s_i$ is model $i$'s ability (the abilities sum to zero) and $\gamma_k$ judge $k$'s
# discrimination (their geometric mean is one), so a sharper judge moves the abilities more per
# verdict. The card [`models/judge_discrimination_btl.md`](../models/judge_discrimination_btl.md)
# has the likelihood, priors, identification and what each interval means.

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import bayescal as bc
from bayescal import identify
from bayescal.frequentist import judge_discrimination_btl as jd_f
from bayescal.models import judge_discrimination_btl as jd

# Sampling sizes that keep the notebook to seconds on this small model.
RANDOM_SEED = int(os.environ.get("BAYESCAL_NB_SEED", 1))
DRAWS = int(os.environ.get("BAYESCAL_NB_DRAWS", 1000))
TUNE = int(os.environ.get("BAYESCAL_NB_TUNE", 1000))
CHAINS = int(os.environ.get("BAYESCAL_NB_CHAINS", 4))
PROB = 0.95
pd.set_option("display.width", 140)
pd.set_option("display.precision", 3)

# The shipped file, found from the installed package of this checkout.
VERDICTS = Path(bc.__file__).resolve().parents[1] / "tests" / "data" / "verdicts.csv"

# %% [markdown]
# ## 1. Read and check the data
#
# One row per verdict: the two items compared, the outcome and the judge. `outcome` may be a
# number (1 = `item_a` preferred, 0 = `item_b`, 0.5 = tie) or a verdict word such as `model_a`.
# `Comparisons.from_frame` validates every row (a bad one is refused with its row number) and
# adds the verdicts up into cells, one per (judge, pair of items): the model only needs those
# counts. `humans=["human"]` marks which judge is a person; here it only labels the tables.

# %%
df = pd.read_csv(VERDICTS)
print(df.head().to_string(index=False))
data = bc.Comparisons.from_frame(df, humans=["human"])
print(data)

# %% [markdown]
# Before fitting, `identify.check` says whether the data can determine the abilities at all:
# every model must be connected to every other through comparisons, and the MLE exists only if
# no model wins (or loses) every comparison it takes part in.

# %%
ident = identify.check(data)
print("connected:", ident.connected, "| MLE exists:", ident.mle_exists)

# %% [markdown]
# ## 2. The MLE and its Wald intervals
#
# `jd_f.fit` maximises the likelihood and reports Wald intervals from the inverse information
# (the covariance kind it chose, and why, is in `mle.info`). `summary(prob)` is the one
# interval table every method in bayescal returns.

# %%
mle = jd_f.fit(data)
print("covariance:", mle.info["information"], "-", mle.info["information_reason"])
print(mle.summary(PROB)[["estimate", "se", "lower", "upper", "interval"]].to_string())

# %% [markdown]
# ## 3. The Bayesian model: its mode (MAP)
#
# `jd.build(data)` returns a plain `pm.Model` with weakly informative priors (`jd.Priors()`).
# Its mode is found in well under a second. With flat priors (`jd.Priors.flat()`) the mode is
# the MLE, which is a useful check that the PyMC model and the twin are the same model; with the
# default priors the mode moves a little towards zero.

# %%
model = jd.build(data)
mode = bc.fit(model, method="map")
mode_flat = bc.fit(jd.build(data, priors=jd.Priors.flat()), method="map")
gap = pd.Series({
    "|MAP (flat priors) - MLE|": (bc.summarize(mode_flat, PROB)["estimate"]
                                  - mle.summary(PROB)["estimate"]).abs().max(),
    "|MAP (default priors) - MLE|": (bc.summarize(mode, PROB)["estimate"]
                                     - mle.summary(PROB)["estimate"]).abs().max(),
}, name="largest difference over every parameter")
print(gap.to_string(float_format="{:.1e}".format))

# %% [markdown]
# ## 4. The posterior by NUTS
#
# A short run of PyMC's own sampler (quick to start on a small model; `bc.fit` defaults to
# nutpie, which pays a compile on every call and wins on long runs). Always look at the
# diagnostics before the intervals: R-hat near 1, enough effective draws, no divergences.

# %%
post = bc.fit(model, method="nuts", draws=DRAWS, tune=TUNE, chains=CHAINS,
              nuts_sampler="pymc", random_seed=RANDOM_SEED, progressbar=False)
print(bc.diagnose(post, warn=False).to_string())

# %% [markdown]
# ## 5. The leaderboard, three fits side by side
#
# `bc.leaderboard` ranks the items by one fit and shows every fit's ability interval and rank
# interval beside it. With 900 verdicts and weak priors the posterior and the Wald intervals
# nearly coincide; they part where the data are thin (few verdicts, near-separation), which is
# where the posterior is the more honest of the two.

# %%
print(bc.leaderboard(mle, mode, post, sort_by="nuts").to_string())

# %% [markdown]
# `bc.compare` puts every term of several fits in one row each, with the ratio of interval
# widths: a quick way to see where two methods disagree.

# %%
both = bc.compare(post, mle, prob=PROB)
print(both.filter(regex="estimate|width_ratio").to_string())

# %% [markdown]
# The same comparison as a picture: abilities with their intervals, one colour per fit.

# %%
bc.plots.leaderboard(mle, mode, post, sort_by="nuts")
plt.show()

# %% [markdown]
# ## Where to go next
#
# * The other notebooks apply each model of the library to real data sets: judge-aware ranking
#   on Chatbot Arena, means under a noisy judge, order effects, consensus and disagreement
#   among many judges, calibration to human preferences, and score calibration (see the
#   README's list).
# * The same fit from the shell: `bayescal fit judge-discrimination-btl tests/data/verdicts.csv`.
# * The cards in `models/` carry the mathematics each model relies on.
