"""Facts notebooks/low_rank_judges.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: mu = table[table["parameter"] == "consensus"].sort_values("estimate", ascending=False)
assert mu.index[0] == "consensus[gpt4]"  # every reviewer ranks gpt4's answers first
assert (gamma["lower"] > 0).all()  # every reviewer loads positively on the consensus

# %% after: gap = (shown["nuts_estimate"] - shown["mle_estimate"]).abs() / both.loc[shown.index, "mle_se"]
assert gap.max() < 1.0
