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
# # Calibrating five LLM reviewers to human preferences on PRD Vicuna80 (DIAL)
#
# The model is specified in the card [`models/human_calibration.md`](../models/human_calibration.md)
# (DIAL 2026, estimators (11)/(12)): the human scores live in the judges' calibration space,
# $s_h = M_\theta c$, and the weight $\lambda$ on the average LLM log-likelihood moves the fit
# from human-only ($\lambda = 0$) to anchored on the judges ($\lambda = \infty$). GACV picks
# $\lambda$.
#
# Data: PRD Vicuna80 (Li, Patel and Du 2023): five LLM reviewers judge every ordered pair of five
# chat models (both display orders); human votes on the same pairs serve as the human side.
# We use a random half of the human votes as a small calibration budget and the other half as a
# held-out test of the human ranking. The human rater is a judge like any other: one data set
# holds the LLM reviewers and the human votes, with the human judge marked. The notebook only
# calls the library.

# %%
import os
import tempfile
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import bayescal as bc
from bayescal.frequentist import dial_baselines as db
from bayescal.frequentist import human_calibration as hc

RANDOM_SEED = int(os.environ.get("BAYESCAL_NB_SEED", 2026))
DRAWS = int(os.environ.get("BAYESCAL_NB_DRAWS", 1000))
TUNE = int(os.environ.get("BAYESCAL_NB_TUNE", 500))
CHAINS = int(os.environ.get("BAYESCAL_NB_CHAINS", 2))
N_HUMAN = 150
OUT = Path(os.environ.get("NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="bayescal-notebook-"))
OUT.mkdir(parents=True, exist_ok=True)
pd.set_option("display.width", 140)

# %% [markdown]
# ## Data: LLM verdicts in both orders, a small human calibration set, a held-out test set

# %%
df = bc.datasets.prd_vicuna80()
llm_frame = df[df["judge"] != "human"]
items = sorted(set(llm_frame["item_a"]) | set(llm_frame["item_b"]))
human_frame = df[(df["judge"] == "human") & df["item_a"].isin(items) & df["item_b"].isin(items)]
rng = np.random.default_rng(RANDOM_SEED)
perm = rng.permutation(len(human_frame))
calib = human_frame.iloc[perm[:N_HUMAN]]
test = human_frame.iloc[perm[len(perm) // 2:]]
llm = bc.Comparisons.from_frame(llm_frame[["item_a", "item_b", "outcome", "judge", "order"]])


def humans(frame):
    """Human votes as the judge "human" (their display order is not used)."""
    return bc.Comparisons.from_frame(frame[["item_a", "item_b", "outcome", "judge"]],
                                     order=None, humans=["human"])


data = bc.Comparisons.concat([llm, humans(calib)])  # the calibration data set
held_out = bc.Comparisons.concat([llm, humans(test)])
print(data)
print(f"human calibration votes: {calib.shape[0]}; held-out votes: {test.shape[0]}")

# %% [markdown]
# ## GACV over λ, beside exact leave-one-human-comparison-out
#
# Every candidate keeps all LLM verdicts; only the human comparisons are left out. The exact
# LOO refits are the slow cross-check: GACV tracks them to $O(n_h^{-2})$.

# %%
table, est = hc.gacv(data, rank=1)
loo = hc.exact_loo(data, rank=1)
table["exact_loo"] = loo["loo"].to_numpy()
print(table.drop(columns=["seconds", "reason_code"]).to_string(
    index=False, float_format=lambda v: f"{v:.5f}"))
print(f"\nselected λ = {est.info['llm_weight']:g} (λ₀ = n_l/n_h = "
      f"{llm.n_rows / calib.shape[0]:g}); intervals: {est.info['intervals']} "
      f"(information='auto' chose {est.info['information']!r}: {est.info['information_reason']})")

# %%
finite = table[np.isfinite(table["llm_weight"]) & (table["llm_weight"] > 0)]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(finite["llm_weight"], finite["gacv"], "o-", label="GACV")
ax.plot(finite["llm_weight"], finite["exact_loo"], "x", ms=9, label="exact LOO")
for lam, style, name in ((np.inf, "--", "λ = ∞"), (0.0, ":", "λ = 0")):
    row = table[table["llm_weight"] == lam]
    if len(row) and np.isfinite(row["gacv"].iloc[0]):
        ax.axhline(row["gacv"].iloc[0], ls=style, color="grey", label=f"GACV at {name}")
sel = est.info["llm_weight"]
if 0 < sel < np.inf:
    ax.plot([sel], table.loc[table["selected"], "gacv"], "r*", ms=14, label="selected")
ax.set_xscale("log")
ax.set_xlabel("λ")
ax.set_ylabel("human log-loss")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUT / "gacv_curve.png", dpi=120)

# %% [markdown]
# ## Calibrated leaderboard beside Human-only and Pooled
#
# Intervals: those of `information="auto"` above, at the selected λ (at λ = ∞ the fixed-M
# calibration plus the LLM estimation error of M). DIAL's own intervals are cell-clustered by
# (judge, pair) (`information="cluster", cluster="judge_pair"`), but with five models each
# reviewer has only 10 pairs: the library warns that so few clusters make cluster-robust
# standard errors too small (shown below). Kendall τ is against the human ranking of the
# held-out votes.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hc.fit(data, rank=1, llm_weight=est.info["llm_weight"], information="cluster",
           cluster="judge_pair")
print("\n".join(str(w.message) for w in caught if "few clusters" in str(w.message)))

# %%
scores, info, ests = db.baselines(data, rank=1)
target = hc.fit(held_out, llm_weight=0).params["human_ability"].values


def kendall(s, t):
    i, j = np.triu_indices(len(s), 1)
    return 2 * np.mean(np.sign(s[i] - s[j]) == np.sign(t[i] - t[j])) - 1


print(pd.Series({m: kendall(scores[m].to_numpy(), target) for m in scores.columns
                 if scores[m].notna().all()}, name="Kendall τ vs held-out").round(3).to_string())
board = scores[["Human", "Pooled", "DIAL-Ada"]].assign(held_out_human=target)
print(board.sort_values("DIAL-Ada", ascending=False).round(3).to_string())

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
order = np.argsort(scores["DIAL-Ada"].to_numpy())
y = np.arange(len(items))
for shift, name in ((-0.2, "Human"), (0.0, "DIAL-Ada")):
    e = ests[name]
    if e is None:
        continue
    s = e.summary().loc[[f"human_ability[{x}]" for x in llm.items]]
    ax.errorbar(s["estimate"].to_numpy()[order], y + shift,
                xerr=[(s["estimate"] - s["lower"]).to_numpy()[order],
                      (s["upper"] - s["estimate"]).to_numpy()[order]], fmt="o", label=name)
ax.plot(scores["Pooled"].to_numpy()[order], y + 0.2, "s", label="Pooled (point)")
ax.set_yticks(y, np.asarray(llm.items)[order])
ax.set_xlabel("human-scale score (log-odds, centred)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(OUT / "calibrated_leaderboard.png", dpi=120)

# %% [markdown]
# Pairwise contrasts of the calibrated scores with their intervals:

# %%
print(bc.contrasts(est, parameter="human_ability").round(3)
      [["estimate", "se", "lower", "upper"]].to_string())

# %% [markdown]
# ## The posterior side by side (power posterior at the GACV λ)
#
# The generalised posterior $\pi \cdot L_h \cdot L_l^{w}$ with $w = \lambda n_h/n_l$;
# at λ = ∞ the cut posterior (LLM-only posterior, then the calibration per draw).

# %%
from bayescal.models import human_calibration as hm

lam = est.info["llm_weight"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    if lam == np.inf:
        model = hm.llm_stage(data, rank=1)
        first = bc.fit(model, "nuts", draws=DRAWS, tune=TUNE,
                       chains=CHAINS, random_seed=RANDOM_SEED, nuts_sampler="pymc",
                       log_likelihood=False, check=False, initvals=hm.initvals(model))
        post = hm.cut_posterior(data, first, rank=1)
    else:
        model = hm.build(data, rank=1, llm_weight=lam)
        post = bc.fit(model, "nuts", draws=DRAWS,
                      tune=TUNE, chains=CHAINS, random_seed=RANDOM_SEED, nuts_sampler="pymc",
                      check=False, initvals=hm.initvals(model))
draws = post["posterior"]["human_ability"]
side = pd.DataFrame({
    "MLE": est.params["human_ability"].values,
    "MLE se": np.sqrt(np.diag(est.cov)[: len(items)]),
    "posterior mean": draws.mean(("chain", "draw")).values,
    "posterior sd": draws.std(("chain", "draw")).values,
}, index=list(llm.items))
print(side.round(3).to_string())

# %% [markdown]
# The posterior sd and the MLE's standard error answer different questions, so they need not
# agree: at λ̂ = λ₀/10 (w = 0.1) vicuna-13b's posterior sd is about 0.1 against a standard error
# of 0.066, and the other items' sds are 1.0–1.3 times theirs. The power posterior weighs each
# LLM verdict $w = \lambda n_h/n_l$ times a human comparison; its spread is the inverse
# curvature of that tempered objective. The MLE's standard error is the sandwich of DIAL's
# Theorem 4 at the same fixed λ (here `information="auto"`, the per-verdict sandwich): tempering scales the LLM curvature by $w$ but the LLM score variance by $w^2$, so at
# $w < 1$ the posterior counts the LLM-determined directions as less certain than the fixed-λ
# estimator is (by up to $1/w$ in variance), while dependence among a judge's verdicts on a
# pair, which the cluster sandwich counts and the posterior does not, works the other way. The
# credible intervals are therefore not confidence intervals at λ̂. Where those are wanted,
# `bc.adjust_to_sandwich` moves the draws to the MLE's covariance, keeping the posterior's
# centre: $\tilde\theta = \bar\theta + \Sigma_S^{1/2}\Sigma_P^{-1/2}(\theta - \bar\theta)$
# (Müller 2013; Ribatet, Cooley and Davison 2012). Its sd is the MLE se by construction, and
# `bc.summarize` labels it "sandwich-adjusted".

# %%
adjusted = bc.adjust_to_sandwich(post, est, var_names=["human_ability"])
side["adjusted sd"] = adjusted["posterior"]["human_ability"].std(("chain", "draw")).values
side["sd ratio"] = side["posterior sd"] / side["MLE se"]
print(side.round(3).to_string())
print(bc.summarize(adjusted)[["method", "estimate", "lower", "upper"]].round(3).to_string())
