"""Facts notebooks/features.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: effects["odds x per doubling"] = 2 ** effects["estimate"]
assert (effects["lower"] > 0).all()
assert effects["estimate"].idxmax() == "feature_effect[LLaMA2, loglen]"
assert abs(effects.loc["feature_effect[GPT-4, loglen]", "estimate"] - 0.305) < 0.001

# %% after: board = pd.concat({"equal length (feature)": gold_gap(fit), "length ignored": gold_gap(plain)},
gaps = board.xs("gap", axis=1, level=1)
assert (gaps["equal length (feature)"] > gaps["length ignored"]).all()
p_gold = board.xs("P(gold)", axis=1, level=1)
flipped = p_gold[(p_gold["equal length (feature)"] > 0.5) & (p_gold["length ignored"] < 0.5)]
assert sorted(flipped.index) == ["ChatGPT-0301", "LLaMA2"]

# %% after: contrasts = oef.feature_effect_contrasts(fit_h, PROB)
assert beta_all.loc["feature_effect[human, loglen]", "lower"] > 0
covers = contrasts.set_index("judge").eval("lower < 0 < upper")
assert covers.to_dict() == {"ChatGPT": True, "GPT-4": True, "LLaMA2": False, "PaLM2": True}
assert abs(float(fit_h.params["order_effect"].sel(judge="human"))) < 1e-9
