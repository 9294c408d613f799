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
# # Low-rank judges on PRD Vicuna80: consensus, loadings, disagreement, order effects
#
# The model is specified in the card [`models/low_rank_judges.md`](../models/low_rank_judges.md)
# (DIAL 2026, model (1) under Condition 3 of Yu et al. 2026, arXiv:2605.05073): judge $k$
# prefers item $i$ over item $j$, with $i$ shown in position $a$ (+1 first, −1 second), with
# probability $\sigma(S_{ki} - S_{kj} + a\,b_k)$, where $S = \gamma\mu^\top + UV^\top$: a
# consensus direction $\mu$ over the items, each judge's loading $\gamma_k$ on it, and $r$
# disagreement directions.
#
# Data: PRD Vicuna80 (Li, Patel & Du 2023; MIT): five LLM reviewers (bard, claude, gpt35, gpt4,
# vicuna-13b) judge answers of the same five models to 80 questions, every pair in **both**
# display orders (8,000 verdicts; `prd-vicuna80/PROVENANCE.md` in the data directory). The human
# ratings are left out here: this is the LLM-only stage of DIAL. We use r = 1.
#
# The notebook only calls the library; the data directory comes from `BAYESCAL_DATA`.

# %%
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescal as bc
from bayescal.frequentist import low_rank_judges as lr_f
from bayescal.models import low_rank_judges as lr

RANDOM_SEED = int(os.environ.get("BAYESCAL_NB_SEED", 2026))
DRAWS = int(os.environ.get("BAYESCAL_NB_DRAWS", 1000))
TUNE = int(os.environ.get("BAYESCAL_NB_TUNE", DRAWS))
CHAINS = int(os.environ.get("BAYESCAL_NB_CHAINS", 2))
NUTS_SAMPLER = os.environ.get("BAYESCAL_NB_SAMPLER", "pymc")
RANK = 1
PROB = 0.95
OUT = Path(os.environ.get("NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="bayescal-notebook-"))
OUT.mkdir(parents=True, exist_ok=True)
pd.set_option("display.width", 140)
pd.set_option("display.precision", 3)
T0 = time.perf_counter()
print(bc.versions().to_string())

# %% [markdown]
# ## Data
#
# Raw first-position win rates per reviewer: a reviewer without position bias picks the
# first-shown answer about half the time (ties excluded from the rate).

# %%
df = bc.datasets.prd_vicuna80(include_humans=False)
data = bc.Comparisons.from_frame(df)
print(data)
first_wins = df.assign(first=np.where(df["order"] == 1, df["outcome"], 1 - df["outcome"]))
decided = first_wins[first_wins["outcome"] != 0.5]
print(decided.groupby("judge")["first"].mean().rename("first-shown win rate").to_string())

# %% [markdown]
# ## LLM-only MLE (the frequentist twin)
#
# The fit runs the alternating scoring and the L-BFGS polish, then canonicalises with DIAL's
# closed forms. Wald intervals come from the covariance kind `information=` names, with the
# rotations of the factors removed; the default `"auto"` sees the ties in these verdicts (a tie
# is half a win each way, a quasi-likelihood) and takes the per-verdict sandwich.
# `information="cluster", cluster="judge_pair"` gives DIAL's cell-clustered sandwich (clusters =
# judge × unordered pair, both orders pooled) — with five models that is 10 clusters per
# reviewer for its 3 own parameters, and the library warns that such cluster-robust standard
# errors run small.

# %%
mle = lr_f.fit(data, rank=RANK)
print(f"information: {mle.info['information']} ({mle.info['information_reason']})")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    mle_cluster = lr_f.fit(data, rank=RANK, information="cluster", cluster="judge_pair")
print("\n".join(str(w.message) for w in caught))
print(f"converged: {mle.converged}, max |gradient| {mle.info['max_abs_gradient']:.2g}, "
      f"point fit {mle.info['seconds_point']:.2f} s")
print("singular value of UVᵀ:", np.round(mle.info["singular_values"], 3))
print("notes:", mle.info["notes"])
table = mle.summary(PROB)

# %% [markdown]
# ### Order effects
#
# $b_k > 0$: judge $k$ favours the answer shown first. Wald tests of $H_0: b_k = 0$ with the
# model-based and the cluster-robust standard errors.

# %%
b = table[table["parameter"] == "order_effect"][["estimate", "se", "lower", "upper"]].copy()
b["se_cluster"] = mle_cluster.se.loc[b.index].to_numpy()
b["z"] = b["estimate"] / b["se"]
b["z_cluster"] = b["estimate"] / b["se_cluster"]
print(b.to_string())

# %% [markdown]
# ### Consensus ranking and judge loadings
#
# The consensus $\mu$ ($\lVert\mu\rVert^2 = N$) ranks the five models; $\gamma_k$ is how strongly
# reviewer $k$'s position-debiased scores follow it.

# %%
mu = table[table["parameter"] == "consensus"].sort_values("estimate", ascending=False)
print(mu[["estimate", "se", "lower", "upper"]].to_string())
gamma = table[table["parameter"] == "consensus_loading"]
print(gamma[["estimate", "se", "lower", "upper"]].to_string())

# %% [markdown]
# ### The disagreement direction
#
# With r = 1 the disagreement direction $V$ is identified up to its sign (the card explains the
# rotation/sign ambiguity); the sign rule makes bard's loading positive. Here the disagreement is
# weak (its singular value is small) and the sign-pinning loading is close to zero, so the twin
# withholds intervals for $U$ and $V$ and says so in `info["notes"]`; $UV^\top$ itself, and the
# projector onto the disagreement direction, remain identified.

# %%
V = table[table["parameter"] == "disagreement"][["estimate", "interval"]]
U = table[table["parameter"] == "disagreement_loading"][["estimate", "interval"]]
print(V.to_string())
print(U.to_string())

# %% [markdown]
# `bc.plots.judge_loadings` draws the biplot: each reviewer at $(\gamma_k, U_{k1})$ (lines: Wald
# intervals where the twin reports them), each model's answer as an arrow along
# $(\mu_i, V_{i1})$, so that a reviewer's score of an answer is the inner product.

# %%
fig = bc.plots.judge_loadings(mle, prob=PROB)
fig.savefig(OUT / "low_rank_judges_loadings.png", dpi=100)

# %% [markdown]
# ## Bayesian fit: MAP and a short NUTS run
#
# The PyMC model writes Condition 3 into the parameterisation (a Helmert basis times the
# orthonormal factor of an unconstrained matrix; a positive mean loading; judge-centred $U$), so
# every draw satisfies it exactly. Diagnostics run on the identified quantities only.

# %%
model = lr.build(data, rank=RANK)
mode = bc.fit(model, "map")
post = bc.fit(model, "nuts", draws=DRAWS, tune=TUNE, chains=CHAINS, nuts_sampler=NUTS_SAMPLER,
              random_seed=RANDOM_SEED, check=False)
diag = bc.diagnose(post, warn=False)
print(diag.xs("r_hat_max", level="check")["value"].round(3).to_string())
post = lr.canonical_factors(post)

# %% [markdown]
# ## Posterior against Wald
#
# For the identified quantities the posterior intervals (equal-tailed) and the Wald intervals
# should nearly coincide at 8,000 verdicts; the width ratio is shown per term.

# %%
terms = ["order_effect", "consensus", "consensus_loading"]
both = bc.compare(post, mle, prob=PROB)
shown = both[both["parameter"].isin(terms)]
cols = [c for c in shown.columns if c.endswith(("_estimate", "_lower", "_upper"))
        or c.startswith("width_ratio")]
print(shown[cols].round(3).to_string())
gap = (shown["nuts_estimate"] - shown["mle_estimate"]).abs() / both.loc[shown.index, "mle_se"]
print(f"largest |posterior mean − MLE| / SE: {gap.max():.2f}")

# %%
print(f"notebook ran in {time.perf_counter() - T0:.0f} s")
