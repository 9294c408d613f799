"""Facts notebooks/order_effect_btl.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: print("judges without a finite MLE (separation):", identify.order_separation(data) or "none")
assert all(v.identified for v in ident.values())
assert identify.order_effect_rank(data) == {k: True for k in data.judges}

# %% after: implied = pd.Series(np.bincount(data.judge, fitted_first) / np.bincount(data.judge, data.count),
assert np.allclose(rates["raw first-position rate"], rates["model-implied rate"], atol=1e-8)

# %% after: print(probs.groupby("judge")["attenuation"].agg(["min", "median", "max"]).round(3).to_string())
assert np.allclose(check, probs["p_averaged"], atol=1e-12)
