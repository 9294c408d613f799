"""Facts notebooks/misclassification.py shows, checked when it runs (tests/test_notebooks.py).

Each block runs right after the notebook cell that contains its "after:" line.
"""

# %% after: print(f"{len(arena)} battles; all-human prevalence (Claude preferred) = {TRUTH_ARENA:.4f}")
assert files["gpt-4o-mini"]["id"].equals(files["gpt-5.2"]["id"])
assert files["gpt-4o-mini"]["human"].equals(files["gpt-5.2"]["human"])

# %% after: for (y, yhat), count in {(1, 1): "N11", (1, 0): "N10", (0, 1): "N01", (0, 0): "N00"}.items():
assert picks["gpt-4o-mini"] == needed != picks["gpt-5.2"]
assert {k: int(v) for k, v in counts.items()} == VIGNETTE

# %% after: deviation = pd.Series({name: float(np.abs(table_vignette.loc[name, ["estimate", "lower", "upper"]]
for name, numbers in published.items():
    got = table_vignette.loc[name, ["estimate", "lower", "upper"]].to_numpy(dtype=float)
    assert np.allclose(got, numbers, atol=5.1e-4), (name, got, numbers)

# %% after: print(f"gpt-5.2 on the fresh split: calibration κ = {kappa_cal:.3f}, PPI++ weight λ = {weight:.3f}")
for table in (table_vignette, table_fresh):
    naive = table.loc["naive"]
    assert not naive["covers truth"] and naive["width"] < table.loc["PPI", "width"]
    defined = table["note"] == ""
    core = [m for m in ("PPI++", "MLE", "EIF, cells") if defined[m]]
    assert np.ptp(table.loc[core, "estimate"].to_numpy(dtype=float)) < 0.01
    for method in ("PPI", "PPI++", "EIF, cells"):
        assert defined[method]
assert (kappa_cal <= 0) == ("Rogan-Gladen, raw" in notes_fresh) == (weight <= 0)
assert "MLE" not in notes_fresh  # free κ: defined whatever the sign of κ̂
if kappa_cal < 0:
    assert fits_fresh["MLE"].info["full_fit"].info["kappa"]["gpt-5.2"] < 0

# %% after: map_vignette_flat = bc.fit(mm.build(vignette, priors=mm.Priors.flat()), method="map")
assert gaps.max() < 1e-5

# %% after: f"fresh split (seed {RANDOM_SEED}), GPT-5.2": with_bayes(table_fresh, post_fresh, map_fresh),
sens = "sensitivity[gpt-4o-mini]"
assert side.loc[sens, "covers_mle"]
assert side.loc[sens, "nuts_estimate"] > 0.25  # pulled toward 1/2 from the proportion 1/4
for table in panels.values():
    post_row = table.loc["posterior (NUTS)"]
    eif_row = table.loc["EIF, cells"]
    assert post_row["covers truth"]
    assert 0.5 < post_row["width"] / eif_row["width"] < 2.0
    assert post_row["width"] < table.loc["PPI", "width"]

# %% after: fig.suptitle("Claude-Opus-4 vs Gemini-2.5-Pro, 10% human labels: every interval of the paper and "
assert first.index.equals(second.index)
assert forest_path.stat().st_size > 10_000

# %% after: f"largest |estimate() - binary_from_counts()| over the looped replicates: {route_gap:.1e}")
assert route_gap < 1e-6

# %% after: fig.suptitle(f"Chen et al.'s design: N = {N_ITEMS}, {LABELLED:.0%} labelled, {REPS} replicates per "
wide_band = 4 * np.sqrt(PROB * (1 - PROB) / REPS)
by = coverage.set_index(["theta", "q", "method"]).sort_index()
for theta, q in CELLS:
    cell = by.loc[(theta, q)]
    for method in ("PPI", "PPI++", "EIF, cells", "MLE"):
        assert abs(cell.loc[method, "coverage"] - PROB) < wide_band, (theta, q, method)
    assert cell.loc["Rogan-Gladen, raw", "coverage"] > PROB - wide_band
    assert cell.loc["PPI++", "mean width"] < cell.loc["PPI", "mean width"]
    assert cell.loc["PPI", "mean width"] < cell.loc["Rogan-Gladen, raw", "mean width"]
    eff = cell.loc[["PPI++", "EIF, cells", "MLE"], "mean width"]
    assert np.ptp(eff) / eff.mean() < 0.05
    if theta != 0.5:
        assert cell.loc["naive", "coverage"] < 0.5
    if q == 0.6:
        assert cell.loc["Rogan-Gladen, raw", "mean width"] > cell.loc["Rogan-Gladen, raw",
                                                                        "asymptotic width"]
efficient = coverage[coverage["method"].isin(["PPI++", "MLE", "EIF, cells"])]
assert np.allclose(efficient["mean width"], efficient["asymptotic width"], rtol=0.05)

# %% after: print(f"{EXAM_TAKER}: {len(answers)} answers; all-human accuracy = {TRUTH_TRIVIA:.4f}")
assert answers[TRIVIA_JUDGES].notna().all().all()

# %% after: (kappa_draws(post_multi) < 0).mean(("chain", "draw")).round(3).to_dict()["data"])
assert float((kappa_draws(post_multi) < 0).mean()) < 0.01

# %% after: print(f"{int(test_patterns['outside'].sum())} of {len(test_patterns)} test patterns fall outside "
assert n_parameters == n_frequencies and test_patterns["outside"].sum() <= 1

# %% after: coverage=("covers", "mean"), mean_width=("width", "mean"), mean_error=("error", "mean"))
best = prevalence.loc["GPT-4 alone, PPI++"]
multi = prevalence.loc["3 judges, posterior (NUTS)"]
vote_row = prevalence.loc["3 judges, vote-count EIF (linear)"]
outside = ((accuracy["all 400 labels"] < accuracy["posterior lower"])
           | (accuracy["all 400 labels"] > accuracy["posterior upper"]))
sim_multi, sim_best = simulated.loc["3 judges, penalized twin"], simulated.loc["GPT-4 alone, PPI++"]
assert best["covers truth"] and vote_row["covers truth"]
assert not multi["covers truth"] and multi["estimate"] > TRUTH_TRIVIA
assert vote_row["width"] < 1.25 * best["width"]
if mle_multi is not None:
    assert not prevalence.loc["3 judges, multi-judge MLE", "covers truth"]
    robust = prevalence.loc["3 judges, multi-judge MLE, sandwich"]
    assert not robust["covers truth"]
    assert 1 < robust["width"] / prevalence.loc["3 judges, multi-judge MLE", "width"] < 1.2
assert corr["all 400 answers"].max() > 0.2
assert outside.any()
assert sim_multi["mean_width"] < sim_best["mean_width"]
assert abs(sim_multi["mean_error"]) < 0.02 < multi["estimate"] - TRUTH_TRIVIA

# %% after: table_vignette = interval_rows(fits_vignette, notes_vignette, TRUTH_ARENA)
assert list(table_vignette.index) == METHOD_ORDER

# %% after: mle_fresh = mf.fit(fresh, judges=["gpt-5.2"])
if kappa_cal < 0:
    assert positive_fit != "interior" and map_kappa < 0

# %% after: coverage_rows, route_gap, nan_mismatch = [], 0.0, 0
assert nan_mismatch == 0

# %% after: print(f"largest |MAP (flat priors) - MLE| over all parameters: {gap:.1e}")
if mle_multi is not None:
    assert gap < 1e-4
