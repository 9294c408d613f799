"""Facts notebooks/judge_discrimination_btl.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: print("components per judge:", {k: len(v) for k, v in ident.judge_components.items()})
assert ident.connected and ident.mle_exists

# %% after: print(df.groupby("judge")["outcome"].apply(lambda y: (y == 0.5).mean()).round(3).to_string())
assert se["observed/expected"].between(0.9, 1.1).all()
assert (se.loc[se["parameter"] == "ability", "sandwich/expected"] < 1).all()
assert abs(se.loc["discrimination[gpt35_turbo]", "sandwich/expected"] - 1) < 0.05

# %% after: "|map - penalized mle|": (est["map"][terms] - est["penalized mle"][terms]).abs().max(),
assert gaps["|map - penalized mle|"] < 1e-5
assert gaps["|map (flat) - mle|"] < 1e-5
assert gaps["|map - mle| (prior pull)"] < 1e-2  # the prior barely moves the mode

# %% after: checks = set(diag.index.get_level_values("check"))
assert {"r_hat_max", "ess_bulk_min", "ess_tail_min", "divergences"} <= checks
assert diag.loc[("sampler", "divergences"), "value"] == 0
if CHAINS > 1:  # R-hat needs several chains (it is NaN, and reported as failed, for one)
    assert diag.xs("r_hat_max", level="check")["value"].max() < 1.05

# %% after: "|posterior mean - MLE| / Wald se": (table["nuts_estimate"] - table["mle_estimate"]).abs()
assert agreement["|posterior mean - MLE| / Wald se"].max() < 0.5
assert agreement["posterior sd / Wald se"].between(0.8, 1.25).all()

# %% after: llm_agreement = judges["agrees with crowd"].dropna()
assert judges.index[0] != "human"  # the crowd is not the sharpest judge
assert judges.index[-1] == "gpt35_turbo"  # GPT-3.5-Turbo has the smallest discrimination ...
assert llm_agreement["gpt35_turbo"] > llm_agreement.min()  # ... but not the lowest agreement
assert judges.loc["gpt35_turbo", "first shown picked"] > 0.5
assert judges.loc["gpt35_turbo", "tie share"] < 0.01

# %% after: fig.legend(handles, names, loc="lower right", bbox_to_anchor=(0.98, 0.06), fontsize=10,
assert figure_path.stat().st_size > 10_000

# %% after: ratio_columns = ["width ratio pooled/aware", "relative width ratio", "relative Wald width ratio"]
assert ranks["rank change"].abs().max() <= 2
assert ranks["relative Wald width ratio"].median() > 1

# %% after: {name: spearmanr(s.loc[human_only.index], human_only).statistic for name, s in scores.items()},
assert rho.min() > 0.9

# %% after: {name: spearmanr(s.loc[human_only.index], human_only).statistic for name, s in scores.items()},
assert rho["judge-aware, 3 LLM judges (MLE)"] <= rho["pooled, 3 LLM judges (MLE)"] + 1e-12
