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
# # Judge-specific order effects on PRD Vicuna80 (DIAL model (1))
#
# The model and its twin are specified in the card
# [`models/order_effect_btl.md`](../models/order_effect_btl.md) (DIAL, "Position-Debiased LLM
# Judges with Adaptive Human Preference Calibration", 2026, Section 3.1): judge $k$ prefers the
# canonical model $i$ over $j$, shown in display order $a$ ($+1$: $i$ shown first), with
# probability $\sigma(s_{ki} - s_{kj} + a\,b_k)$, $\sum_i s_{ki} = 0$. $b_k > 0$ favours
# the answer shown first.
#
# Data: PRD Vicuna80 (Li, Patel and Du 2023): 80 questions, five chat models, and five LLM
# reviewers (bard, claude, gpt35, gpt4, vicuna-13b) that judge every ordered pair of the five
# models, so every pair is seen in **both** display orders (source and license:
# `prd-vicuna80/PROVENANCE.md` in the data directory). The reviewers judge their own answers too.
#
# This notebook only calls the library: it defines no model. The data directory comes from the
# `BAYESCAL_DATA` environment variable.

# %%
import os
import tempfile
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import bayescal as bc
from bayescal import identify
from bayescal.frequentist import order_effect_btl as oe_f
from bayescal.models import order_effect_btl as oe

# Small defaults so that CI runs the notebook quickly; raise them for a real analysis.
RANDOM_SEED = int(os.environ.get("BAYESCAL_NB_SEED", 2026))
DRAWS = int(os.environ.get("BAYESCAL_NB_DRAWS", 1000))
TUNE = int(os.environ.get("BAYESCAL_NB_TUNE", 500))
CHAINS = int(os.environ.get("BAYESCAL_NB_CHAINS", 4))
NUTS_SAMPLER = os.environ.get("BAYESCAL_NB_SAMPLER", "pymc")
PROB = 0.95
OUT = Path(os.environ.get("NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="bayescal-notebook-"))
OUT.mkdir(parents=True, exist_ok=True)

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 20)
pd.set_option("display.precision", 3)
T0 = time.perf_counter()
print(bc.versions())
print(f"draws={DRAWS}, tune={TUNE}, chains={CHAINS}, sampler={NUTS_SAMPLER}, seed={RANDOM_SEED}")

# %% [markdown]
# ## Data
#
# `bc.datasets.prd_vicuna80()` returns one row per verdict with `item_a` the model shown first
# (`order = +1` on every row); a tie is 0.5. `Comparisons` puts each pair in canonical
# (alphabetical) orientation and flips the order indicator where needed, so each (judge, pair)
# has two cells, one per display order.

# %%
df = bc.datasets.prd_vicuna80(include_humans=False)
data = bc.Comparisons.from_frame(df)
print(data)
print("cells per (judge, order):")
print(data.to_frame().groupby(["judge", "order"]).size().unstack().to_string())

# %% [markdown]
# ## Identification, before anything is fitted
#
# DIAL Prop. 1: $(s_k, b_k)$ is identified iff $\mathrm{rank}([D_k, z_k]) = N$, i.e. judge
# $k$'s graph is connected and some cycle has a nonzero signed order sum (Cor. B.1).
# `identify.order_effect` decides it in $O(N + m_k)$ from spanning-tree potentials and returns
# a witness cycle; here every pair is shown in both orders, so the witness is a 2-cycle.
# `identify.order_effect_rank` is the slow matrix-rank cross-check.

# %%
ident = identify.order_effect(data)
for v in ident.values():
    print(v.reason())
print("judges without a finite MLE (separation):", identify.order_separation(data) or "none")

# %% [markdown]
# ## Each judge's order effect: MLE, intervals and tests
#
# `oe_f.fit` is one logistic regression per judge (Newton's method on cells). Covariances:
# the inverse Fisher information (`expected`, the paper's "inverse information"), the
# independent-verdict sandwich (`sandwich`, HC0; ties make it narrower, because a tie varies
# less than a Bernoulli verdict with the same mean) and the cell-clustered sandwich
# (`cluster="judge_pair"`: clusters = judge × unordered pair; `correction="CR0"`, no
# small-sample factor, is DIAL's convention). The default, `information="auto"`, would pick the
# sandwich here, because PRD's reviewers tie. PRD has only 10 pairs per judge for 5
# parameters: the twin warns that so few clusters bias the clustered SEs downwards, and the
# table shows it (cluster/expected < 1 for most judges).

# %%
fits = {"expected": oe_f.fit(data, information="expected"),
        "sandwich": oe_f.fit(data, information="sandwich")}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fits["cluster"] = oe_f.fit(data, information="cluster", cluster="judge_pair",
                               correction="CR0")
print(f"{len(caught)} warnings, e.g.: {caught[0].message}")
se_b = pd.DataFrame({k: f.se.filter(like="order_effect") for k, f in fits.items()})
se_b["sandwich/expected"] = se_b["sandwich"] / se_b["expected"]
se_b["cluster/expected"] = se_b["cluster"] / se_b["expected"]
print(se_b.round(4).to_string())

# %%
mle = fits["expected"]
tests = oe_f.order_effect_tests(mle)
tests[tests["family"] == "b_k = 0"].set_index("judge").drop(columns=["family", "judge_2"])

# %% [markdown]
# Pairwise tests of equal order effects, $H_0: b_k = b_{k'}$ (Holm-adjusted within the family):

# %%
tests[tests["family"] == "b_k = b_k'"].drop(columns="family")

# %% [markdown]
# ## Ties modelled: Davidson (1970)
#
# PRD's reviewers tie, and the half-win likelihood (a tie is half a win each way) is then a
# quasi-likelihood: that is why the sandwich is the default above. `ties="davidson"` models the
# ties instead, with one tie parameter $\nu_k$ per judge (card, Section 11): its own Fisher
# information is valid, and on Chatbot Arena its intervals matched a bootstrap. The two models
# put $b_k$ on different scales (Davidson's $b_k$ is the logit among decided verdicts; the
# half-win $b_k$ is shrunk by the ties, the more the more a judge ties), so what is compared is
# each judge's $b_k$ and its Wald statistic $b_k/\mathrm{se}$.

# %%
from bayescal.identify import IdentificationError  # noqa: E402

try:
    davidson = oe_f.fit(data, ties="davidson")
    half_b = fits["sandwich"].params["order_effect"].to_numpy()
    dav_b = davidson.params["order_effect"].to_numpy()
    ties_table = pd.DataFrame({
        "b half-win": half_b, "z half-win (sandwich)": half_b / se_b["sandwich"].to_numpy(),
        "b davidson": dav_b,
        "z davidson": dav_b / davidson.se.filter(like="order_effect").to_numpy()},
        index=se_b.index)
    print(ties_table.round(3).to_string())
    print(davidson.summary(PROB).filter(like="tie[", axis=0)[
        ["estimate", "lower", "upper"]].round(3).to_string())
except IdentificationError as err:
    print("Davidson ties:", err)

# %% [markdown]
# ## Raw first-position win rates vs the model-based $b_k$
#
# The raw rate is the share of verdicts won by the answer shown first (a tie counts half).
# It mixes the order effect with which pairs were shown: $\sigma(b_k)$ is the model's
# first-position probability **between two equally good answers**. Because the score equation
# of $b_k$ sets $\sum_c a_c(y_c - n_c\hat p_c) = 0$, the model-implied first-position rate at
# the MLE equals the raw rate exactly, whatever the design; the printed difference checks it.

# %%
cells = data.to_frame()
first_wins = np.where(cells["order"] > 0, cells["wins"], cells["count"] - cells["wins"])
raw = pd.Series(first_wins, index=cells.index).groupby(cells["judge"]).sum() / cells.groupby(
    "judge")["count"].sum()
s_hat = mle.params["ability"]
b_hat = mle.params["order_effect"]
eta = (s_hat.values[data.judge, data.item_i] - s_hat.values[data.judge, data.item_j]
       + data.order * b_hat.values[data.judge])
p_hat = 1 / (1 + np.exp(-eta))
fitted_first = np.where(data.order > 0, data.count * p_hat, data.count * (1 - p_hat))
implied = pd.Series(np.bincount(data.judge, fitted_first) / np.bincount(data.judge, data.count),
                    index=data.judges)
tab = mle.summary(PROB).loc[[f"order_effect[{k}]" for k in data.judges]]
rates = pd.DataFrame({
    "raw first-position rate": raw.values,
    "model-implied rate": implied.values,
    "b_k": tab["estimate"].values,
    "b_k lower": tab["lower"].values,
    "b_k upper": tab["upper"].values,
    "sigma(b_k)": 1 / (1 + np.exp(-tab["estimate"].values)),
}, index=data.judges)
print(rates.round(3).to_string())

# %% [markdown]
# ## A forest plot of $b_k$
#
# 95% Wald intervals from the Fisher information and from the verdict-level sandwich
# (`bc.plots.order_effects`; the dashed line is $b_k = 0$).

# %%
pc = bc.plots.order_effects(expected=fits["expected"], sandwich=fits["sandwich"], prob=PROB)
pc.savefig(OUT / "order_effect_forest.png", dpi=120)

# %% [markdown]
# ## Position-debiased vs order-averaged probabilities (DIAL Section 3.1, App. B.2)
#
# $p^{deb}_{kij} = \sigma(s_{ki} - s_{kj})$ removes the order term; the order-averaged
# $p^{avg} = \{p^{(+1)} + p^{(-1)}\}/2$ averages the two display orders. Both order the pairs in
# the same way, but identity (B.1), $2p^{avg} - 1 = (2p^{deb} - 1)(1 - t^2)/(1 - u^2t^2)$ with
# $u = \tanh(\Delta/2)$, $t = \tanh(b/2)$, shows $p^{avg}$ pulled towards 1/2 by a factor that
# depends on the pair: order averaging attenuates preferences most for the judge with the
# largest $|b_k|$ (bard) and hardly at all for gpt35 ($b \approx 0$).

# %%
probs = oe_f.pairwise_probabilities(mle, PROB)
probs["attenuation"] = (2 * probs["p_averaged"] - 1) / (2 * probs["p_debiased"] - 1)
check = oe_f.order_averaged_identity(probs["delta"], b_hat.sel(judge=probs["judge"].values))
print(probs.groupby("judge")["attenuation"].agg(["min", "median", "max"]).round(3).to_string())
probs[probs["judge"] == "bard"][["item_i", "item_j", "p_debiased", "p_debiased_lower",
                                 "p_debiased_upper", "p_averaged", "p_i_first",
                                 "p_i_second"]].round(3)

# %%
fig, ax = plt.subplots(figsize=(4, 4))
for judge, part in probs.groupby("judge"):
    ax.scatter(part["p_debiased"], part["p_averaged"], s=14, label=judge)
ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
ax.set_xlabel("$p^{deb}$ (position-debiased)")
ax.set_ylabel("$p^{avg}$ (order-averaged)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUT / "debiased_vs_averaged.png", dpi=120)

# %% [markdown]
# ## The order-agnostic baseline
#
# DIAL's "Pooled" collapses judges and orders into one BTL (`oe_f.pooled`). Here every pair is
# shown equally often in both orders, so pooling does not bias the ranking much; it does give
# one score vector where the judges differ in scale (vicuna-13b's scores are compressed).

# %%
pooled = oe_f.pooled(data, information="expected")
scores = s_hat.to_pandas().T
scores["judge mean"] = scores.mean(axis=1)
scores["pooled"] = pooled.params["ability"].values
scores.round(3)

# %% [markdown]
# ## The Bayesian model: MAP and NUTS against the MLE
#
# Default priors: `ZeroSumNormal(2)` on each judge's scores, `Normal(0, 1)` on $b_k$. With
# 1,600 verdicts per judge the posterior of $b_k$ is close to the Wald interval.

# %%
model = oe.build(data)
post = bc.fit(model, "nuts", draws=DRAWS, tune=TUNE, chains=CHAINS, random_seed=RANDOM_SEED,
              nuts_sampler=NUTS_SAMPLER)
table = bc.compare(post, mle, prob=PROB)
table[table["parameter"] == "order_effect"]

# %%
print(bc.diagnose(post, warn=False).to_string())
print(f"total run time {time.perf_counter() - T0:.1f} s")
