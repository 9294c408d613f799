"""Pictures and the leaderboard table on MLE, MAP and NUTS results of every model.

Each plot is checked by counting what it drew (one interval line per fit and term that has an
interval, none for a MAP mode), so a plot that silently drops a fit, draws a fake interval for a
point estimate, or loses the truth marks fails here.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")  # the tests choose the backend; the library never does
import matplotlib.pyplot as plt

import bayescal as bc
from bayescal import plots, simulate
from bayescal.diagnostics import DiagnosticWarning
from bayescal.frequentist import judge_discrimination_btl as jd_f
from bayescal.frequentist import judge_mean
from bayescal.frequentist import misclassification as mc_f
from bayescal.models import judge_discrimination_btl as jd
from bayescal.models import misclassification as mc
from bayescal.tables import format_leaderboard

N_ITEMS, N_JUDGES = 5, 3


def _nuts(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        return bc.fit(model, "nuts", draws=100, tune=150, chains=2, cores=1, nuts_sampler="pymc",
                      random_seed=3, log_likelihood=False)


@pytest.fixture(scope="session")
def btl():
    truth = simulate.judge_discrimination_truth(N_ITEMS, N_JUDGES, random_seed=2)
    data = simulate.judge_discrimination_btl(truth, 1500, random_seed=3)
    model = jd.build(data)
    return {"truth": truth, "fits": [jd_f.fit(data), bc.fit(model, "map"), _nuts(model)]}


@pytest.fixture(scope="session")
def misclass():
    labels, truth = simulate.misclassification(
        400, prevalence=0.4, specificity=[0.9, 0.8], sensitivity=[0.85, 0.75],
        labelled_fraction=0.3, random_seed=5)
    model = mc.build(labels)
    return {"truth": truth, "labels": labels,
            "fits": [mc_f.fit(labels), bc.fit(model, "map"), _nuts(model)]}


def _drawn(pc, visual: str) -> dict[str, int]:
    """Artists of one visual per variable, counting only those actually drawn."""
    group = pc.viz[visual]
    return {str(k): sum(a is not None for a in np.ravel(group[k].values))
            for k in group.data_vars}


def test_forest_draws_one_interval_per_fit_with_intervals_and_marks_the_truth(btl):
    pc = plots.forest(*btl["fits"], truth=btl["truth"], var_names=["ability", "discrimination"])
    # MLE (Wald) and NUTS have intervals, MAP is a point: 2 lines per term, 3 points per term
    assert _drawn(pc, "twig") == {"ability": 2 * N_ITEMS, "discrimination": 2 * N_JUDGES}
    assert _drawn(pc, "point_estimate") == {"ability": 3 * N_ITEMS,
                                            "discrimination": 3 * N_JUDGES}
    assert _drawn(pc, "truth") == {"ability": N_ITEMS, "discrimination": N_JUDGES}
    plt.close("all")


def test_forest_interval_ends_are_the_summary_numbers(btl):
    """The drawn Wald line is the Estimate's own interval, not one rebuilt from draws."""
    mle = btl["fits"][0]
    pc = plots.forest(mle, prob=0.9, var_names=["ability"])
    line = pc.viz["twig"]["ability"].sel(model="mle", item="model_00").item()
    table = mle.summary(0.9).loc["ability[model_00]"]
    np.testing.assert_allclose(sorted(line.get_xdata()), [table["lower"], table["upper"]])
    plt.close("all")


@pytest.mark.parametrize("model", ["btl", "misclass"])
def test_every_fit_kind_of_every_model_gets_a_forest(model, request):
    fixture = request.getfixturevalue(model)
    pc = plots.forest(*fixture["fits"], truth=fixture["truth"])
    counts = _drawn(pc, "twig")
    points = _drawn(pc, "point_estimate")
    for name in counts:
        # per term: MLE and NUTS intervals (where the MLE reports the variable), never MAP
        assert counts[name] <= 2 * points[name] / 3 + 1e-9, name
        assert counts[name] > 0
    plt.close("all")


def test_discriminations_of_the_btl_and_judge_accuracies_of_misclassification(btl, misclass):
    pc = plots.discriminations(*btl["fits"], truth=btl["truth"])
    assert _drawn(pc, "twig") == {"discrimination": 2 * N_JUDGES}
    assert _drawn(pc, "reference") == {"discrimination": 1}
    pc = plots.discriminations(*misclass["fits"])
    assert _drawn(pc, "twig") == {"sensitivity": 2 * 2, "specificity": 2 * 2}
    plt.close("all")


def test_leaderboard_table_is_sorted_with_rank_intervals(btl):
    mle, mode, post = btl["fits"]
    table = bc.leaderboard(mle, mode, post, truth=btl["truth"], sort_by="nuts")
    assert list(table["nuts_estimate"]) == sorted(table["nuts_estimate"], reverse=True)
    assert list(table.index) == [f"ability[{i}]" for i in table["item"]]
    for m in ("mle", "nuts"):
        assert (table[f"{m}_rank_lower"] <= table[f"{m}_rank"]).all()
        assert (table[f"{m}_rank"] <= table[f"{m}_rank_upper"]).all()
        assert (table[f"{m}_lower"] < table[f"{m}_estimate"]).all()
    # a mode has no interval and no rank interval
    assert "map_lower" not in table and "map_rank_lower" not in table
    view = format_leaderboard(table)
    assert list(view.index) == list(table["item"])


def test_leaderboard_plot_draws_ability_and_rank_intervals(btl):
    pc = plots.leaderboard(*btl["fits"], truth=btl["truth"])
    assert _drawn(pc, "twig") == {"ability": 2 * N_ITEMS}
    assert _drawn(pc, "rank_interval") == {"ability": 2 * N_ITEMS}
    assert _drawn(pc, "rank") == {"ability": 3 * N_ITEMS}
    assert _drawn(pc, "truth") == {"ability": N_ITEMS}
    plt.close("all")


@pytest.mark.parametrize("which", [0, 1, 2])
def test_win_probability_heatmap_is_the_matrix(btl, which):
    result = btl["fits"][which]
    fig = plots.win_probability_heatmap(result)
    image = fig.axes[0].images[0].get_array()
    assert image.shape == (N_ITEMS, N_ITEMS)
    np.testing.assert_allclose(np.diag(image), 0.5)
    np.testing.assert_allclose(image + image.T, 1.0, atol=1e-12)
    # best first: the row means decrease
    assert np.all(np.diff(image.mean(axis=1)) <= 1e-12)
    plt.close(fig)


def test_judge_mean_estimators_one_row_per_method(misclass):
    labels = misclass["labels"].select([misclass["labels"].judges[0]])
    table = judge_mean.estimate(labels, prob=0.9)
    pc = plots.judge_mean_estimators(table, truth=0.4)
    with_interval = int(table["lower"].notna().sum())
    assert with_interval >= 5
    assert _drawn(pc, "twig") == {str(table["parameter"].iloc[0]): with_interval}
    assert _drawn(pc, "truth") == {str(table["parameter"].iloc[0]): len(table)}
    plt.close("all")


def test_plots_leave_the_backend_alone(btl):
    before = matplotlib.get_backend()
    pc = plots.forest(btl["fits"][0])
    assert matplotlib.get_backend() == before
    assert plt.fignum_exists(pc.viz["figure"].item().number)  # not closed for the user
    plt.close("all")


@pytest.fixture(scope="session")
def order_effect():
    from bayescal.frequentist import order_effect_btl as oe_f
    from bayescal.models import order_effect_btl as oe

    truth = simulate.order_effect_truth(N_ITEMS, N_JUDGES, random_seed=1)
    data = simulate.order_effect_btl(truth, 1000, random_seed=2)
    return {"truth": truth, "fits": [oe_f.fit(data), bc.fit(oe.build(data), "map")]}


def test_order_effects_one_interval_per_judge_and_fit_with_interval_and_a_zero_line(order_effect):
    """Catches a MAP mode drawn with a fake interval, a dropped fit, or a missing zero line."""
    pc = plots.order_effects(*order_effect["fits"], truth=order_effect["truth"])
    assert _drawn(pc, "twig") == {"order_effect": N_JUDGES}  # the twin's Wald; MAP is a point
    assert _drawn(pc, "point_estimate") == {"order_effect": 2 * N_JUDGES}
    assert _drawn(pc, "truth") == {"order_effect": N_JUDGES}
    assert _drawn(pc, "reference") == {"order_effect": 1}
    ref = pc.viz["reference"]["order_effect"].item()
    np.testing.assert_allclose(ref.get_xdata(), 0.0)
    plt.close("all")


@pytest.fixture(scope="session")
def low_rank():
    from bayescal.frequentist import low_rank_judges as lr_f
    from bayescal.models import low_rank_judges as lr

    truth = simulate.low_rank_judges_truth(6, 4, 1, random_seed=1)
    data = simulate.low_rank_judges(truth, 3000, random_seed=2)
    return {"data": data, "fits": [lr_f.fit(data, rank=1), bc.fit(lr.build(data, rank=1), "map")]}


@pytest.mark.parametrize("which", [0, 1])
def test_judge_loadings_places_each_judge_at_its_loadings_and_one_arrow_per_item(low_rank, which):
    """Catches swapped axes (γ vs U), a judge or item dropped, or MAP factors left unrotated."""
    result = low_rank["fits"][which]
    fig = plots.judge_loadings(result)
    ax = fig.axes[0]
    if which == 1:  # the plot adds the canonical factors to a MAP/NUTS tree itself
        from bayescal.models.low_rank_judges import canonical_factors

        result = canonical_factors(result)
    table = bc.summarize(result, 0.95)["estimate"]
    judges = [str(j) for j in low_rank["data"].judges]
    expected = np.column_stack([
        table[[f"consensus_loading[{k}]" for k in judges]],
        table[[f"disagreement_loading[{k}, 1]" for k in judges]]])
    np.testing.assert_allclose(ax.collections[0].get_offsets(), expected)
    from matplotlib.patches import FancyArrow

    assert sum(isinstance(p, FancyArrow) for p in ax.patches) == 6  # one arrow per item
    plt.close(fig)


def test_judge_loadings_labels_do_not_overlap(low_rank):
    """Catches labels of nearby judges or items drawn on top of each other (the review's
    unreadable biplot): no two label boxes intersect once the figure is drawn."""
    fig = plots.judge_loadings(low_rank["fits"][0])
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
    assert len(boxes) == 4 + 6  # every judge and item labelled
    overlaps = [(i, j) for i in range(len(boxes)) for j in range(i)
                if boxes[i].overlaps(boxes[j])]
    assert not overlaps, [(ax.texts[i].get_text(), ax.texts[j].get_text()) for i, j in overlaps]
    plt.close(fig)


@pytest.fixture(scope="session")
def score_cal():
    from bayescal import calibration as cal
    from bayescal.data import Ratings
    from bayescal.frequentist import score_calibration as scf
    from bayescal.models import score_calibration as sc

    rng = np.random.default_rng(4)
    judge = rng.integers(1, 6, 300)
    human = np.clip(judge + rng.integers(-1, 2, 300), 1, 5)
    ratings = Ratings.from_arrays(judge, human, scale=(1, 5))
    return {"mle": scf.fit(ratings), "map": bc.fit(sc.build(ratings), "map"),
            "sqm": cal.SQM((1, 5)).fit(ratings.judge, ratings.human)}


def test_calibration_map_one_line_per_map_a_band_only_where_an_interval_exists(score_cal):
    """Catches a MAP drawn with a band, a lost map, a line off its calibrated_mean, no identity."""
    fig = plots.calibration_map(score_cal["mle"], score_cal["map"], score_cal["sqm"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["mle", "map", "sqm", "identity"]
    assert len(ax.collections) == 1  # only the twin's Wald band
    mle = score_cal["mle"].summary(0.95)  # the one default interval probability
    rows = [f"calibrated_mean[{v}]" for v in range(1, 6)]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), mle.loc[rows, "estimate"])
    np.testing.assert_allclose(ax.lines[2].get_ydata(), score_cal["sqm"].predict(np.arange(1, 6)))
    np.testing.assert_allclose(ax.lines[3].get_xydata(), [[1, 1], [5, 5]])
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(mle.loc[rows, "lower"].min())
    assert band[:, 1].max() == pytest.approx(mle.loc[rows, "upper"].max())
    plt.close(fig)


# ---------------------------------------------------------------- figures a reader can read
def _tick_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def _texts(pc) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in pc.viz["figure"].item().findobj(Text) if t.get_text()]


def test_forest_sorts_terms_by_estimate_on_separate_labelled_axes(btl):
    """Catches the review's forest: terms in alphabetical order, abilities (logits) and
    discriminations (ratios) on one shared x axis, arviz-plots' "variable / item" footer and
    a legend for a single fit."""
    mle = btl["fits"][0]
    pc = plots.forest(mle, var_names=["ability", "discrimination"])
    table = mle.summary()
    for name, dim in (("ability", "item"), ("discrimination", "judge")):
        side = pc.get_target(name, {"column": "labels"})
        main = pc.get_target(name, {"column": "forest"})
        labels = _tick_labels(side)
        estimates = [table.loc[f"{name}[{lbl}]", "estimate"] for lbl in labels]
        # the first tick is the lowest on the axes: estimates increase upwards
        ticks = side.get_yticks()
        order = np.argsort(-ticks)
        assert list(np.asarray(estimates)[order]) == sorted(estimates, reverse=True), name
        assert main.get_xlabel() == name
    first = pc.get_target("ability", {"column": "forest"})
    second = pc.get_target("discrimination", {"column": "forest"})
    assert first is not second and first.get_xlim() != second.get_xlim()
    texts = _texts(pc)
    assert not {"variable", "item", "judge"} & set(texts)
    assert pc.viz["figure"].item().legends == []
    plt.close("all")
    several = plots.forest(*btl["fits"], var_names=["ability"])
    assert len(several.viz["figure"].item().legends) == 1  # three fits to tell apart
    plt.close("all")


def test_leaderboard_figure_has_rank_1_tick_axis_labels_and_the_elo_scale(btl):
    """Catches a rank axis without a tick at 1 (the best), unlabelled axes, ArviZ leftovers,
    and an Elo leaderboard drawn in logits."""
    mle = btl["fits"][0]
    pc = plots.leaderboard(mle)
    rank = pc.get_target(None, {"column": "rank"})
    assert 1 in [int(t) for t in rank.get_xticks()]
    assert rank.get_xlabel() == "rank (1 = best)"
    assert pc.get_target(None, {"column": "forest"}).get_xlabel() == "ability"
    assert not {"variable", "item"} & set(_texts(pc))
    assert pc.viz["figure"].item().legends == []
    logit = pc.viz["point_estimate"]["ability"].sel(model="mle")
    elo = plots.leaderboard(mle, scale="elo")
    assert "Elo" in elo.get_target(None, {"column": "forest"}).get_xlabel()
    points = elo.viz["point_estimate"]["ability"].sel(model="mle")
    x_logit = np.array([a.get_offsets()[0][0] if hasattr(a, "get_offsets") else a.get_xdata()[0]
                        for a in np.ravel(logit.values)])
    x_elo = np.array([a.get_offsets()[0][0] if hasattr(a, "get_offsets") else a.get_xdata()[0]
                      for a in np.ravel(points.values)])
    np.testing.assert_allclose(x_elo, 1000 + 400 / np.log(10) * x_logit, rtol=1e-9)
    plt.close("all")


def test_discriminations_axis_says_what_the_dashed_line_is(btl):
    """Catches the unexplained dashed line and the missing axis label."""
    pc = plots.discriminations(btl["fits"][0])
    label = pc.get_target(None, {"column": "forest"}).get_xlabel()
    assert "discrimination" in label and "dashed line" in label
    plt.close("all")


def test_forest_refuses_a_sort_by_that_names_no_fit(btl):
    """Catches a typo in sort_by ignored (the rows silently in another fit's order)."""
    with pytest.raises(ValueError, match="names no fit"):
        plots.forest(*btl["fits"], sort_by="nutz")
