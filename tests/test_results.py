"""fit / summarize / diagnose / compare: the shared machinery every model uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.stats import norm

import bayescal as bc
from bayescal.frequentist import Estimate
from bayescal.schema import COLUMNS, term_labels, wald_interval


def fake_posterior(shift: float, seed: int = 0) -> xr.DataTree:
    """Two chains of a 3-vector; ``shift`` moves the second chain (a non-mixing sampler)."""
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=(2, 500, 3))
    draws[1] += shift
    post = xr.Dataset({"ability": (("chain", "draw", "item"), draws)},
                      coords={"chain": [0, 1], "draw": np.arange(500), "item": ["a", "b", "c"]})
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 500), bool)),
                        "energy": (("chain", "draw"), rng.normal(size=(2, 500)))})
    tree = xr.DataTree.from_dict({"posterior": post, "sample_stats": stats})
    tree.attrs["bayescal_method"] = "nuts"
    return tree


def test_summary_schema_and_equal_tailed_quantiles():
    tree = fake_posterior(0.0)
    table = bc.summarize(tree, 0.8)
    assert list(table.columns) == COLUMNS and list(table.index) == ["ability[a]", "ability[b]",
                                                                    "ability[c]"]
    draws = tree["posterior"]["ability"].values[..., 1].ravel()
    assert table.loc["ability[b]", "lower"] == pytest.approx(np.quantile(draws, 0.1))
    assert table.loc["ability[b]", "upper"] == pytest.approx(np.quantile(draws, 0.9))
    assert table.loc["ability[b]", "se"] == pytest.approx(draws.std(ddof=1))
    with pytest.raises(ValueError, match="prob"):
        bc.summarize(tree, 95)


def test_diagnose_passes_a_mixed_posterior_and_warns_on_a_stuck_chain():
    ok = bc.diagnose(fake_posterior(0.0), warn=False)
    assert ok["ok"].all()
    with pytest.warns(bc.DiagnosticWarning, match="ability r_hat_max"):
        bad = bc.diagnose(fake_posterior(3.0))
    assert not bad.loc[("ability", "r_hat_max"), "ok"]


def test_diagnose_refuses_a_map_result():
    tree = fake_posterior(0.0)
    tree.attrs["bayescal_method"] = "map"
    with pytest.raises(ValueError, match="MAP"):
        bc.diagnose(tree)


def test_compare_columns_truth_and_names():
    a, b = fake_posterior(0.0, seed=1), fake_posterior(0.0, seed=2)
    truth = xr.Dataset({"ability": ("item", [0.0, 0.0, 10.0])}, coords={"item": ["a", "b", "c"]})
    table = bc.compare(first=a, second=b, prob=0.9, truth=truth)
    assert {"first_estimate", "second_upper", "width_ratio_first/second",
            "overlap_first/second", "covers_first"} <= set(table.columns)
    assert table["covers_first"].tolist() == [True, True, False]
    assert table["overlap_first/second"].between(0.8, 1.0).all()
    same = bc.compare(a, b, prob=0.9)
    assert "nuts_2_estimate" in same.columns
    with pytest.raises(ValueError, match="at least one"):
        bc.compare(prob=0.9)


def test_wald_intervals():
    lo, hi = wald_interval(0.3, 0.05, 0.9, "wald")
    assert hi - 0.3 == pytest.approx(norm.ppf(0.95) * 0.05)
    lo, hi = wald_interval(0.3, 0.05, 0.9, "wald-logit")
    half = norm.ppf(0.95) * 0.05 / (0.3 * 0.7)
    assert np.log(hi / (1 - hi)) == pytest.approx(np.log(0.3 / 0.7) + half)
    assert 0 < lo < 0.3 < hi < 1
    with pytest.raises(ValueError, match="unknown interval"):
        wald_interval(0.3, 0.05, 0.9, "profile")


def test_wald_log_interval_for_positive_parameters():
    """exp(log θ ± z se/θ): positive even when θ ± z se is not, symmetric on the log scale.
    Catches a log interval built with se instead of se/θ (the delta method)."""
    lo, hi = wald_interval(5.08, 54.1, 0.95, "wald-log")  # the γ = 5.08 [−100.9, 111.0]
    half = norm.ppf(0.975) * 54.1 / 5.08
    assert np.log(hi) - np.log(5.08) == pytest.approx(half)
    assert np.log(5.08) - np.log(lo) == pytest.approx(half)
    assert 0 < lo < 5.08 < hi
    with pytest.raises(ValueError, match="positive estimate"):
        wald_interval([1.0, 0.0], [0.1, 0.1], 0.9, "wald-log")


@pytest.mark.parametrize("kind", ["wald", "wald-log", "wald-logit"])
def test_an_interval_never_excludes_its_estimate(kind):
    """Every interval kind contains its estimate, for standard errors from tiny to huge."""
    rng = np.random.default_rng(7)
    est = rng.uniform(0.001, 0.999, 500)  # inside the support of every kind
    se = np.exp(rng.uniform(-12, 6, 500))
    lo, hi = wald_interval(est, se, 0.95, kind)
    assert np.all((lo <= est) & (est <= hi))


def test_compare_coverage_is_missing_where_there_is_no_truth_or_no_interval():
    """A term without a true value, or without an interval from a method, has unknown coverage
    (pd.NA), not False: a coverage rate averaged over such rows would be biased low."""
    est = Estimate(
        method="mle",
        params=xr.Dataset({"ability": ("item", [0.0, 1.0]), "spread": 2.0},
                          coords={"item": ["a", "b"]}),
        cov=np.diag([0.04, 0.04, 0.25]),
        terms=("ability[a]", "ability[b]", "spread"),
        interval={"ability": "wald", "spread": "none"},
    )
    table = bc.compare(est, prob=0.9, truth={"ability[a]": 0.1, "spread": 2.0})
    covers = table["covers_mle"]
    assert str(covers.dtype) == "boolean"
    assert bool(covers["ability[a]"]) is True
    assert covers.isna().tolist() == [False, True, True]
    assert covers.mean() == 1.0  # only the known row counts


def test_term_labels_for_two_dimensional_parameters():
    da = xr.DataArray(np.zeros((2, 3)), dims=("judge", "item"),
                      coords={"judge": ["j1", "j2"], "item": ["a", "b", "c"]})
    assert term_labels("ability", da)[:4] == ["ability[j1, a]", "ability[j1, b]",
                                              "ability[j1, c]", "ability[j2, a]"]


def test_fit_rejects_an_unknown_method():
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x")
    with pytest.raises(ValueError, match="'nuts' or 'map'"):
        bc.fit(model, "laplace")  # type: ignore[arg-type]


def test_summarize_rejects_other_objects():
    with pytest.raises(TypeError, match="cannot summarize"):
        bc.summarize(pd.DataFrame(), 0.9)


def test_compare_against_a_reference_and_points_without_intervals():
    a, b, c = (fake_posterior(0.0, seed=k) for k in (1, 2, 3))
    point = fake_posterior(0.0, seed=4)
    point.attrs["bayescal_method"] = "map"
    point["posterior"] = point["posterior"].to_dataset().isel(chain=[0], draw=[0])
    table = bc.compare(a=a, b=b, c=c, mode=point, prob=0.9)
    assert [col for col in table.columns if col.startswith("width_ratio")] == [
        "width_ratio_a/c", "width_ratio_b/c"]
    assert "mode_estimate" in table.columns and "mode_lower" not in table.columns
    table = bc.compare(a=a, b=b, c=c, prob=0.9, reference="a")
    assert "width_ratio_c/a" in table.columns
    with pytest.raises(ValueError, match="reference 'mode'"):
        bc.compare(a=a, mode=point, prob=0.9, reference="mode")


# ---------------------------------------------------------------- ArviZ-native results (issue 6)

@pytest.fixture(scope="module")
def btl_data():
    from bayescal import simulate

    truth = simulate.judge_discrimination_truth(4, 2, random_seed=31)
    return simulate.judge_discrimination_btl(truth, 600, random_seed=32)


@pytest.fixture(scope="module")
def btl_fits(btl_data):
    """Judge-aware and unweighted BTL by (tiny) NUTS, with their log_likelihood groups."""
    from bayescal.models import judge_discrimination_btl as jd

    fits = {}
    for name, weighted in (("judge-aware", True), ("unweighted", False)):
        model = jd.build(btl_data, discrimination=weighted)
        fits[name] = bc.fit(model, "nuts", draws=100, tune=100, chains=2, cores=1,
                            nuts_sampler="pymc", random_seed=5, check=False)
    return fits


def test_log_likelihood_is_per_cell_and_sums_to_the_twin_loglik(btl_fits, btl_data):
    """One entry per (judge, pair) cell whose sum at a draw equals the independent twin's total
    log-likelihood: catches a per-verdict or per-pooled-cell group, and a kernel that is not
    the model's (e.g. a binomial coefficient added)."""
    from bayescal.frequentist import judge_discrimination_btl as jd_f

    cells = btl_data.collapse(order=True)
    for name, tree in btl_fits.items():
        ll = tree["log_likelihood"]["outcome"]
        assert ll.dims == ("chain", "draw", "cell") and ll.sizes["cell"] == cells.n_cells
        post = tree["posterior"]
        for chain, draw in ((0, 0), (1, 77)):
            params = {"ability": post["ability"].values[chain, draw]}
            if name == "judge-aware":
                params["discrimination"] = post["discrimination"].values[chain, draw]
            total = float(ll.values[chain, draw].sum())
            assert total == pytest.approx(jd_f.loglik(params, btl_data, discrimination=(
                name == "judge-aware")), rel=1e-10)


@pytest.mark.filterwarnings("ignore:Numba will use object mode")
def test_cells_carry_labels_and_posterior_predictive_still_runs(btl_fits, btl_data):
    """Every cell group names its cells by labels (`j: a vs b`, plus judge/item label coords);
    the coded constant_data stays what PyMC compares, so posterior predictive sampling works."""
    import pymc as pm

    from bayescal.models import judge_discrimination_btl as jd

    tree = btl_fits["judge-aware"]
    cells = btl_data.collapse(order=True)
    judge, a, b = (btl_data.judges[cells.judge[3]], btl_data.items[cells.item_i[3]],
                   btl_data.items[cells.item_j[3]])
    for group in ("log_likelihood", "observed_data", "constant_data"):
        ds = tree[group]
        assert str(ds["cell"].values[3]) == f"{judge}: {a} vs {b}"
        assert (str(ds["judge_label"].values[3]), str(ds["item_i_label"].values[3]),
                str(ds["item_j_label"].values[3])) == (judge, a, b)
    assert tree["constant_data"]["count"].values[3] == cells.count[3]
    per_judge = tree["log_likelihood"]["outcome"].groupby("judge_label").sum()
    assert set(per_judge["judge_label"].values) == set(btl_data.judges)
    ppc = pm.sample_posterior_predictive(tree, model=jd.build(btl_data), progressbar=False,
                                         random_seed=1)
    assert ppc["posterior_predictive"]["outcome"].shape == (2, 100, cells.n_cells)


# cells of ~100 verdicts are influential observations: Pareto k above 0.6 is expected here
@pytest.mark.filterwarnings("ignore:Estimated shape parameter of Pareto")
def test_loo_and_compare_run_on_fits(btl_fits):
    """az.loo on the per-cell group (leave-one-cell-out) and az.compare of judge-aware vs
    unweighted: both models hold the same cells, so the comparison is defined."""
    import arviz as az

    loo = az.loo(btl_fits["judge-aware"])
    assert np.isfinite(loo.elpd)
    table = az.compare(btl_fits)
    assert len(table) == 2 and set(table.index) == {"judge-aware", "unweighted"}


def test_log_likelihood_is_skipped_with_a_warning_when_too_large(btl_fits, btl_data,
                                                                  monkeypatch):
    from bayescal import fitting
    from bayescal.models import judge_discrimination_btl as jd

    tree = btl_fits["unweighted"].copy()
    del tree["log_likelihood"]
    monkeypatch.setattr(fitting, "_LOG_LIKELIHOOD_BYTES", 100)
    model = jd.build(btl_data, discrimination=False)
    with pytest.warns(UserWarning, match="log_likelihood=True"):
        fitting._add_log_likelihood(tree, model, None)
    assert "log_likelihood" not in tree.children
    fitting._add_log_likelihood(tree, model, True)
    assert "log_likelihood" in tree.children


def test_estimate_round_trips_through_netcdf(tmp_path, btl_data):
    """Every field back exactly: values, cov, terms, interval kinds, loglik, info."""
    from bayescal.frequentist import judge_discrimination_btl as jd_f
    from bayescal.frequentist._core import Estimate

    est = jd_f.fit(btl_data, information="sandwich")
    path = tmp_path / "estimate.nc"
    est.to_netcdf(path)
    back = Estimate.from_netcdf(path)
    xr.testing.assert_identical(back.params, est.params)
    assert np.array_equal(back.cov, est.cov) and back.terms == est.terms
    assert dict(back.interval) == dict(est.interval) and back.method == est.method
    assert back.loglik == est.loglik and back.converged == est.converged
    assert back.info == est.info
    pd.testing.assert_frame_equal(back.summary(0.9), est.summary(0.9))
    odd = Estimate(est.method, est.params, est.cov, est.terms, est.interval,
                   info={"kept": np.float64(2.5), "dropped": object()})
    with pytest.warns(UserWarning, match="dropped"):
        odd.to_netcdf(tmp_path / "odd.nc")
    assert Estimate.from_netcdf(tmp_path / "odd.nc").info == {"kept": 2.5}
    assert np.isnan(Estimate.from_netcdf(tmp_path / "odd.nc").loglik)


def test_cli_fit_mle_writes_the_estimate(tmp_path, btl_data):
    from bayescal import simulate
    from bayescal.cli import main
    from bayescal.frequentist._core import Estimate

    truth = simulate.judge_discrimination_truth(4, 2, random_seed=31)
    csv = tmp_path / "verdicts.csv"
    simulate.judge_discrimination_btl(truth, 600, random_seed=32, as_frame=True).to_csv(
        csv, index=False)
    code = main(["fit", "judge-discrimination-btl", str(csv), "--method", "mle",
                 "--out", str(tmp_path / "out")])
    assert code == 0
    est = Estimate.from_netcdf(tmp_path / "out" / "estimate.nc")
    assert set(est.params["item"].values) == set(btl_data.items)


def _tampered(tmp_path, est, edit):
    """Write ``est``, change the file with ``edit(dataset)``, return the new path."""
    import json

    import xarray as xr

    src, dst = tmp_path / "estimate.nc", tmp_path / "tampered.nc"
    est.to_netcdf(src)
    with xr.open_dataset(src, engine="h5netcdf") as handle:
        ds = handle.load()
    ds = edit(ds, json)
    ds.to_netcdf(dst, engine="h5netcdf")
    return dst


def test_estimate_from_netcdf_refuses_tampered_files(tmp_path):
    """A changed Estimate file is refused on load, naming the problem. Catches: a negative
    variance loaded and printed as a zero-width interval, an asymmetric covariance, swapped
    or duplicated labels, damaged metadata, an unknown interval kind (all loaded silently)."""
    from bayescal.frequentist import judge_discrimination_btl as jd_f
    from bayescal.frequentist._core import Estimate

    from pathlib import Path

    frame = pd.read_csv(Path(__file__).parent / "data" / "verdicts.csv")
    data = bc.Comparisons.from_frame(frame, humans=["human"])
    est = jd_f.fit(data, information="expected")
    ok = _tampered(tmp_path, est, lambda ds, js: ds)
    assert Estimate.from_netcdf(ok).terms == est.terms  # an untouched file loads

    def negative(ds, js):
        v = ds["estimate_cov"].values.copy()
        v[1, 1] = -abs(v[1, 1])
        ds["estimate_cov"] = (ds["estimate_cov"].dims, v)
        return ds

    def asymmetric(ds, js):
        v = ds["estimate_cov"].values.copy()
        v[0, 1] += 0.01
        ds["estimate_cov"] = (ds["estimate_cov"].dims, v)
        return ds

    def swapped(ds, js):
        terms = list(ds["term"].values)
        terms[0], terms[1] = terms[1], terms[0]
        return ds.assign_coords(term=terms)

    def relabelled(ds, js):
        terms = list(ds["term"].values)
        terms[0], terms[1] = terms[1], terms[0]
        return ds.assign_coords(term=terms, term_col=terms)

    def duplicated(ds, js):
        terms = list(ds["term"].values)
        terms[1] = terms[0]
        return ds.assign_coords(term=terms, term_col=terms)

    def damaged(ds, js):
        ds.attrs["bayescal_estimate"] = ds.attrs["bayescal_estimate"][:-5]
        return ds

    def kind(ds, js):
        meta = js.loads(ds.attrs["bayescal_estimate"])
        meta["interval"][next(iter(meta["interval"]))] = "exact"
        ds.attrs["bayescal_estimate"] = js.dumps(meta)
        return ds

    for edit, words in ((negative, "is negative"), (asymmetric, "not symmetric"),
                        (swapped, "different labels"),
                        (relabelled, "do not match the parameters"), (duplicated, "appears twice"),
                        (damaged, "metadata is damaged"), (kind, "unknown interval kinds")):
        path = _tampered(tmp_path, est, edit)
        with pytest.raises(ValueError, match=words):
            Estimate.from_netcdf(path)


def test_ci_prob_is_prob_under_arviz_name():
    """``ci_prob`` (ArviZ's name) is accepted beside ``prob`` everywhere an interval is asked
    for; both with different values are refused; neither gives the one default (0.95).
    Catches: ``ci_prob=`` taken as a fit's name by the ``**named`` functions (compare, the
    plots) or silently ignored, and a function whose default differs (the calibration map's
    was 0.9)."""
    import importlib
    import inspect
    from pathlib import Path

    from bayescal.frequentist import judge_discrimination_btl as jd_f
    from bayescal.schema import DEFAULT_PROB

    def mod(name):
        return importlib.import_module(f"bayescal.{name}")

    frame = pd.read_csv(Path(__file__).parent / "data" / "verdicts.csv")
    est = jd_f.fit(bc.Comparisons.from_frame(frame, humans=["human"]), information="expected")
    assert bc.summarize(est, ci_prob=0.8).equals(bc.summarize(est, 0.8))
    assert (bc.summarize(est)["prob"] == DEFAULT_PROB).all()
    assert bc.compare(est, ci_prob=0.8).equals(bc.compare(est, prob=0.8))
    assert bc.leaderboard(est, ci_prob=0.8).equals(bc.leaderboard(est, prob=0.8))
    assert bc.contrasts(est, ci_prob=0.8).equals(bc.contrasts(est, prob=0.8))
    with pytest.raises(ValueError, match="give one of them"):
        bc.summarize(est, 0.9, ci_prob=0.8)
    with pytest.raises(ValueError, match="give one of them"):
        bc.compare(est, prob=0.9, ci_prob=0.8)
    for module, names in (("summary", ["summarize"]), ("compare", ["compare"]),
                          ("contrasts", ["contrasts", "ranks"]), ("tables", ["leaderboard"]),
                          ("plots", ["forest", "discriminations", "leaderboard", "order_effects",
                                     "judge_loadings", "calibration_map"]),
                          ("frequentist.judge_mean", ["estimate"])):
        for name in names:
            params = inspect.signature(getattr(mod(module), name)).parameters
            assert "ci_prob" in params and params["prob"].default is None, (module, name)


def test_ci_prob_reaches_the_remaining_interval_functions():
    """``Estimate.summary``, ``pairwise_probabilities`` and ``calibration_table`` take
    ``ci_prob`` beside ``prob`` with the one default. Catches: one of them still without
    ``ci_prob`` (a TypeError for ArviZ users) or with a default other than None/0.95."""
    import inspect

    from bayescal.frequentist import judge_discrimination_btl as jd_f
    from bayescal.frequentist._core import Estimate
    from bayescal.frequentist.order_effect_btl import pairwise_probabilities
    from bayescal.models.score_calibration import calibration_table

    for fn in (Estimate.summary, pairwise_probabilities, calibration_table):
        params = inspect.signature(fn).parameters
        assert "ci_prob" in params and params["prob"].default is None, fn
    from pathlib import Path
    frame = pd.read_csv(Path(__file__).parent / "data" / "verdicts.csv")
    est = jd_f.fit(bc.Comparisons.from_frame(frame, humans=["human"]), information="expected")
    assert est.summary(ci_prob=0.8).equals(est.summary(0.8))
    assert not est.summary(ci_prob=0.8).equals(est.summary())


def test_ci_prob_reaches_the_vectorised_judge_mean_cores():
    """``binary_from_counts`` and ``discrete_from_stats`` take ``ci_prob``. Catches: ci_prob
    refused or ignored (the interval at the default instead of the one asked for)."""
    from bayescal.frequentist.judge_mean.cores import binary_from_counts

    counts = {"N11": 30, "N10": 5, "N01": 8, "N00": 40, "T1": 300, "T0": 500}
    a = binary_from_counts(counts, ci_prob=0.8)["ppi"]["lower"]
    assert a == binary_from_counts(counts, 0.8)["ppi"]["lower"]
    assert a != binary_from_counts(counts)["ppi"]["lower"]


def test_every_public_function_taking_prob_takes_ci_prob_with_the_one_default():
    """Scan every public function and method of bayescal with an optional ``prob``: each also
    takes ``ci_prob`` and defaults ``prob`` to None (resolved to the one default, 0.95).
    Catches a new interval function written without ArviZ's name, or with its own default
    (``mean`` used 0.9 where ``fit`` used 0.95)."""
    import importlib
    import inspect
    import pkgutil

    import bayescal

    seen, bad = 0, []
    for info in pkgutil.walk_packages(bayescal.__path__, "bayescal."):
        if any(part.startswith("_") and part != "__init__" for part in info.name.split(".")[1:-1]):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            targets = [obj] if inspect.isfunction(obj) else [
                member for member_name, member in vars(obj).items()
                if inspect.isclass(obj) and not member_name.startswith("_")
                and inspect.isfunction(member)] if inspect.isclass(obj) else []
            for fn in targets:
                params = inspect.signature(fn).parameters
                if "prob" not in params or params["prob"].default is inspect.Parameter.empty:
                    continue  # a required prob (schema's z_value, run internals): no default
                seen += 1
                if "ci_prob" not in params or params["prob"].default is not None:
                    bad.append(f"{info.name}.{fn.__qualname__}")
    assert seen >= 15, seen
    assert not bad, bad


def test_estimate_view_gives_arviz_the_wald_intervals():
    """``Estimate.to_datatree`` is read by ``az.summary`` and ``az.plot_forest``: the view's
    mean and sd equal the estimate and SE (natural-scale parameters) exactly, its ETI the Wald
    interval to Monte Carlo accuracy (on the
    log scale for discriminations), a contrast from the draws has the Wald
    SE, ``summarize`` of the view is the Estimate's own table and ``diagnose`` refuses it.
    Catches: draws scaled by the variance instead of the SD, an uncorrelated view (contrast SE
    wrong), a logit parameter drawn on the natural scale (interval outside [0, 1] or shifted),
    and pseudo-draws summarised as if they were a posterior."""
    import arviz as az
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    from bayescal.frequentist import judge_discrimination_btl as jd_f

    frame = pd.read_csv(Path(__file__).parent / "data" / "verdicts.csv")
    est = jd_f.fit(bc.Comparisons.from_frame(frame, humans=["human"]), information="expected")
    view = est.to_datatree()
    table = est.summary(0.9)
    stats = az.summary(view, kind="stats", ci_prob=0.9, round_to="none")
    stats.index = [str(i) for i in stats.index]
    common = table.index.intersection(stats.index)
    assert len(common) == len(table)
    nat = table[table["interval"] == "wald"].index
    np.testing.assert_allclose(stats.loc[nat, "mean"], table.loc[nat, "estimate"], atol=1e-10)
    np.testing.assert_allclose(stats.loc[nat, "sd"], table.loc[nat, "se"], rtol=1e-10)
    # the ends are sample quantiles of 4000 points: compare on the interval scale (log for the
    # wald-log discriminations), in SEs of that scale, against 4 Monte Carlo SDs of an iid
    # sample's 5 % quantile, sqrt(p(1-p)/n)/φ(z_p) (a Latin hypercube does better)
    from scipy.stats import norm as normal

    log = table.loc[common, "interval"].eq("wald-log").to_numpy()
    fwd = lambda v: np.where(log, np.log(np.asarray(v, float)), np.asarray(v, float))  # noqa: E731
    scale_se = np.where(log, table.loc[common, "se"] / table.loc[common, "estimate"],
                        table.loc[common, "se"])
    band = 4 * np.sqrt(0.05 * 0.95 / 4000) / normal.pdf(normal.ppf(0.95))
    for side, col in (("lower", "eti90_lb"), ("upper", "eti90_ub")):
        err = np.abs(fwd(stats.loc[common, col]) - fwd(table.loc[common, side])) / scale_se
        assert err.max() < band, (side, err)
    post = view["posterior"]
    a, b = post["ability"].isel(item=0), post["ability"].isel(item=1)
    i, j = list(est.terms).index(table.index[0]), list(est.terms).index(table.index[1])
    wald_var = est.cov[i, i] + est.cov[j, j] - 2 * est.cov[i, j]
    assert float((a - b).std(ddof=1)) == pytest.approx(np.sqrt(wald_var), rel=1e-9)
    assert bc.summarize(view, 0.9).equals(table)
    with pytest.raises(ValueError, match="Wald estimate"):
        bc.diagnose(view)
    az.plot_forest(view, var_names=["ability"])
    matplotlib.pyplot.close("all")


def test_estimate_view_draws_a_probability_on_the_logit_scale():
    """A ``wald-logit`` parameter's view stays in (0, 1) and its quantiles are the logit-Wald
    interval (a natural-scale normal would leave [0, 1] for θ̂ = 0.03, SE 0.03); a parameter
    with no interval is left out and named. Catches a view that ignores the interval kind."""
    import arviz as az

    params = xr.Dataset({"theta": 0.03, "k": 2.0})
    est = Estimate(method="toy", params=params, cov=np.diag([0.03 ** 2, 1.0]),
                   terms=("theta", "k"), interval={"theta": "wald-logit", "k": "none"})
    view = est.to_datatree()
    theta = view["posterior"]["theta"].values
    assert theta.min() > 0 and theta.max() < 1
    assert "k" not in view["posterior"] and "k" in view.attrs["bayescal_view_omitted"]
    lower, upper = wald_interval(0.03, 0.03, 0.9, "wald-logit")
    stats = az.summary(view, kind="stats", ci_prob=0.9, round_to="none")
    # compared on the logit scale in logit-scale SEs, within the band of the test above
    se_logit = 0.03 / (0.03 * 0.97)
    for got, want in ((stats.loc["theta", "eti90_lb"], lower), (stats.loc["theta", "eti90_ub"],
                                                                 upper)):
        assert abs(float(np.log(got / (1 - got)) - np.log(want / (1 - want)))) < 0.14 * se_logit
