"""Facts notebooks/quickstart.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: ident = identify.check(data)
assert ident.connected and ident.mle_exists

# %% after: mode_flat = bc.fit(jd.build(data, priors=jd.Priors.flat()), method="map")
assert gap["|MAP (flat priors) - MLE|"] < 1e-5  # the PyMC model and the twin are one model
assert gap["|MAP (default priors) - MLE|"] < 0.05  # the default priors barely move the mode

# %% after: post = bc.fit(model, method="nuts", draws=DRAWS, tune=TUNE, chains=CHAINS,
# CI runs short chains (BAYESCAL_NB_DRAWS), whose ESS may fall below the threshold; the rendered
# notebook (full length) is checked for failed diagnostics by test_notebooks.py.
diag = bc.diagnose(post, warn=False)
assert diag.loc[("sampler", "divergences"), "value"] == 0
assert diag.xs("r_hat_max", level="check")["value"].max() < 1.05

# %% after: print(bc.leaderboard(mle, mode, post, sort_by="nuts").to_string())
board = bc.leaderboard(mle, mode, post, sort_by="nuts")
assert board["item"].iloc[0] == "claude-3.5"
assert (board["mle_rank"] == board["nuts_rank"]).all()
