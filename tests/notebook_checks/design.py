# Facts the design notebook shows, checked when it executes (tests/test_notebooks.py).

# %% after: allocation = design.allocate_labels(held, 240)
assert allocation["new_labels"].sum() == 240
assert allocation.attrs["se_after"] < allocation.attrs["se_now"]
assert allocation.attrs["se_after"] <= allocation.attrs["se_after_random"] + 1e-12

# %% after: table = judge_mean.estimate(after)
assert "label shift" in table.loc["ppi", "note"]
assert table.loc["bayes", "lower"] < y.mean() < table.loc["bayes", "upper"]

# %% after: active = design.active_mean(held_score, draw, y[picked])
row = active.summary().iloc[0]
assert row["lower"] < y.mean() < row["upper"]

# %% after: nxt = design.next_comparisons(fit, 12, judges=["human"], random_seed=1)
assert (nxt["judge"] == "human").all() and len(nxt) == 12
assert nxt["target_se"].iloc[-1] < nxt.attrs["target_se_now"]
