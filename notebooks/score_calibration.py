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
# # Score calibration: streaming quantile matching beside a Bayesian calibration map
#
# Subasic, Rabinovich and Chen (2026, arXiv:2611.00447) calibrate a frozen judge's Likert
# scores to human scores from a small set of anchors with streaming quantile matching (SQM),
# the monotone map
# $g(j) = \hat F_H^{-1}(\hat F_J(j))$. bayescal implements SQM (two conventions for where a judge
# level sits in its probability band), its baselines and the held-out protocol
# (`bayescal.calibration`), and adds a Bayesian monotone ordinal model
# (`bayescal.models.score_calibration`; card
# [`models/score_calibration.md`](../models/score_calibration.md)) that gives a posterior over
# the map, so one can see how far to trust it after 30 anchors.
#
# Data: llm-rubric (real part): GPT-3.5 scores dialogues on a 1–4 rubric and gives its full
# probability over the four answers; one human rates each dialogue. We use Q0 (overall
# satisfaction). The notebook only calls the library; the data directory comes from
# `BAYESCAL_DATA`, figures go to `NOTEBOOK_OUT`.

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
from bayescal import calibration as cal
from bayescal import datasets
from bayescal.calibration import protocol as pr
from bayescal.calibration.metrics import exact_match, mae, wasserstein
from bayescal.data import Ratings
from bayescal.frequentist import score_calibration as scf
from bayescal.models import score_calibration as sc

RANDOM_SEED = int(os.environ.get("BAYESCAL_NB_SEED", 2026))
DRAWS = int(os.environ.get("BAYESCAL_NB_DRAWS", 1000))
TUNE = int(os.environ.get("BAYESCAL_NB_TUNE", 1000))
CHAINS = int(os.environ.get("BAYESCAL_NB_CHAINS", 4))
NUTS_SAMPLER = os.environ.get("BAYESCAL_NB_SAMPLER", "pymc")  # tiny model: PyMC's own NUTS
PROB = 0.90
N_SMALL = 30  # "after 30 anchors"
OUT = Path(os.environ.get("NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="bayescal-notebook-"))
OUT.mkdir(parents=True, exist_ok=True)
pd.set_option("display.width", 160)
pd.set_option("display.precision", 3)
T0 = time.perf_counter()
print(f"draws={DRAWS}, tune={TUNE}, chains={CHAINS}, sampler={NUTS_SAMPLER}, seed={RANDOM_SEED}")

# %% [markdown]
# ## 1. Data and a fixed 30 % hold-out
#
# `Ratings` keeps, per item, the judge's sampled score, its probability over the scale and the
# human score, on the declared scale 1..4; bad rows would be refused with the item named.

# %%
with warnings.catch_warnings(record=True) as notes:
    warnings.simplefilter("always")
    frame = datasets.llm_rubric()
for note in notes:
    print(note.message)
q0 = frame[frame["criterion"] == "Q0"]
ratings = Ratings.from_frame(q0, scale=(1, 4), judge="judge", judge_dist=datasets.RUBRIC_PROBS,
                             item="item")
print(ratings)
rng = np.random.default_rng(RANDOM_SEED)
order = rng.permutation(ratings.n)
n_test = round(0.3 * ratings.n)
test, pool = order[:n_test], order[n_test:]
anchors, held = ratings.take(pool), ratings.take(test)
print(f"{anchors.n} anchors in the pool, {held.n} held-out items")

# %% [markdown]
# ## 2. Calibration maps
#
# SQM with the paper's literal position (`upper`: $u = \hat F_J(j)$) and with the mid-distribution
# position (`mid`, bayescal's default), SQM over the judge's predictive distributions, and
# isotonic regression — all fitted on the whole pool.

# %%
methods = {
    "sqm (mid)": cal.SQM((1, 4), "mid").fit(anchors.judge, anchors.human),
    "sqm (upper)": cal.SQM((1, 4), "upper").fit(anchors.judge, anchors.human),
    "sqm predictive (mid)": cal.PredictiveSQM((1, 4), "mid").fit(anchors.judge_dist,
                                                                 anchors.human),
    "isotonic": cal.Isotonic((1, 4)).fit(anchors.judge, anchors.human),
}
levels = np.arange(1, 5)
maps = pd.DataFrame({name: m.predict(np.eye(4) if m.accepts_distributions else levels)
                     for name, m in methods.items()}, index=pd.Index(levels, name="judge"))
print(maps)

rows = []
for name, m in {"raw": cal.Raw((1, 4)).fit(anchors.judge, anchors.human), **methods}.items():
    x = held.judge_dist if m.accepts_distributions else held.judge
    pred = m.predict(x)
    rows.append({"method": name, "MAE": mae(pred, held.human), "W1": wasserstein(pred, held.human),
                 "exact match": exact_match(pred, held.human, (1, 4))})
print(pd.DataFrame(rows).set_index("method"))

# %% [markdown]
# ## 3. Distributions before and after
#
# SQM is a transport map: it moves the judge's score distribution onto the humans'. With the
# upper position the pushforward lies above the human distribution (its CDF never exceeds the
# human one); the mid position sits closer.

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
width = 0.16
series = {"human (held-out)": held.human, "judge (raw)": held.judge,
          "sqm (mid)": methods["sqm (mid)"].predict(held.judge),
          "sqm (upper)": methods["sqm (upper)"].predict(held.judge)}
for i, (name, values) in enumerate(series.items()):
    share = np.bincount(values.astype(int) - 1, minlength=4) / len(values)
    ax.bar(levels + (i - 1.5) * width, share, width=width, label=name)
ax.set_xticks(levels)
ax.set_xlabel("score")
ax.set_ylabel("share of held-out items")
ax.legend(frameon=False, fontsize=8)
fig.tight_layout()
fig.savefig(OUT / "score_calibration_distributions.png", dpi=110)

# %% [markdown]
# ## 4. How far to trust the map after 30 anchors
#
# The Bayesian monotone ordinal model on the first 30 anchors of the stream: the posterior of the
# calibrated mean $E[H \mid J = j]$ per judge level (90 % equal-tailed intervals), beside SQM's
# map from the same 30 anchors and the maps from the whole pool. Judge level 1 is rare, so its
# interval is wide: that is the information SQM's point map does not carry.

# %%
first = anchors.take(np.arange(N_SMALL))
model = sc.build(first)
# 30 anchors leave some judge levels nearly empty: a funnel that the default step size
# crosses with divergences, hence the higher target acceptance
post = bc.fit(model, "nuts", draws=DRAWS, tune=TUNE, chains=CHAINS, cores=1, target_accept=0.99,
              nuts_sampler=NUTS_SAMPLER, random_seed=RANDOM_SEED, check=False)
print(bc.diagnose(post, warn=True).to_string())
table = sc.calibration_table(post, prob=PROB)
sqm_small = cal.SQM((1, 4), "mid").fit(first.judge, first.human)
table[f"sqm (mid), {N_SMALL} anchors"] = sqm_small.predict(levels)
table["anchors at level"] = np.bincount(first.judge.astype(int) - 1, minlength=4)
print(table)
full = scf.fit(anchors, penalty=sc.Priors())
print(full.summary(PROB).loc[[f"calibrated_mean[{v}]" for v in levels],
                             ["estimate", "lower", "upper"]])

# %%
fig = bc.plots.calibration_map(
    **{f"Bayesian map, {N_SMALL} anchors": table,
       f"SQM (mid), {N_SMALL} anchors": sqm_small,
       f"Bayesian map (MAP), {anchors.n} anchors": full,
       f"SQM (mid), {anchors.n} anchors": methods["sqm (mid)"]})
fig.savefig(OUT / "score_calibration_maps.png", dpi=110)

# %% [markdown]
# ## 5. The held-out protocol in small
#
# Three questions, one seed (the full study, 8 questions × 3 seeds, is
# `validation/score_calibration.py`). Table 2's shape: median held-out MAE / W1 / exact match
# with Δ % over raw, Copeland rank and wins/losses.

# %%
small = Ratings.from_frame(frame[frame["criterion"].isin(["Q0", "Q2", "Q6"])], scale=(1, 4),
                           judge="judge", judge_dist=datasets.RUBRIC_PROBS,
                           groups=["criterion"], item="item")
result = pr.run(small, seeds=[RANDOM_SEED], rules=["stop_at_100", "ema_slope"])
print(pr.table2(result))

# %%
print(f"notebook ran in {time.perf_counter() - T0:.0f} s")
print(bc.versions().to_string())
