"""Pictures of results on ArviZ 1's plotting layer (arviz-plots, matplotlib backend).

Every function takes the results :func:`bayescal.compare` takes (NUTS posteriors, MAP modes,
frequentist :class:`~bayescal.frequentist.Estimate` objects) and returns an arviz-plots
``PlotCollection`` (or a matplotlib ``Figure`` where arviz-plots has no such plot). Nothing here
selects a matplotlib backend or closes a figure: that stays the caller's choice.

**How intervals reach arviz-plots.** ``plot_forest`` computes intervals from draws; an
Estimate has none, and inventing draws from its Wald normal would blur an exact interval with
Monte Carlo noise. So the intervals are computed once by :func:`bayescal.summarize` (posterior
equal-tailed quantiles; the Estimate's own Wald interval, on the scale it declares, e.g.
``wald-logit``) and handed to ``plot_forest`` as precomputed statistics (its ``stats``
argument); the draws it is given only lay out the rows. A MAP mode is a point: it is drawn
without an interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescal.compare import truth_series
from bayescal.schema import resolve_prob, term_labels
from bayescal.summary import summarize
from bayescal.tables import leaderboard as leaderboard_table
from bayescal.tables import named_results

if TYPE_CHECKING:
    from arviz_plots import PlotCollection
    from matplotlib.figure import Figure

    from bayescal.frequentist._core import Estimate

__all__ = ["calibration_map", "discriminations", "forest", "judge_loadings",
           "judge_mean_estimators", "leaderboard", "order_effects",
           "win_probability_heatmap"]

Truth = xr.Dataset | Mapping[str, float] | pd.Series | None
_SAMPLE_DIMS = ("chain", "draw")
_CI = "ci_bound"


def _template(result: Any, name: str) -> xr.DataArray | None:
    """The variable's shape, dims and coords in a result (no sample dims); None if absent."""
    if isinstance(result, xr.DataTree):
        post = result["posterior"].to_dataset()
        if name not in post:
            return None
        da = post[name].isel(chain=0, draw=0, drop=True)
        return da.assign_coords({d: np.asarray(da[d].values, dtype=str) for d in da.dims
                                 if d in da.coords})
    params = result.params
    if name not in params:
        return None
    da = params[name]
    # plain numpy labels: pandas' string dtype does not align with numpy's in xarray
    return da.assign_coords({d: np.asarray(da[d].values, dtype=str) for d in da.dims
                             if d in da.coords})


def _estimates(result: Any, name: str, table: pd.DataFrame
               ) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray] | None:
    """Estimate, lower and upper of one variable as DataArrays shaped like the variable."""
    template = _template(result, name)
    if template is None:
        return None
    rows = table.loc[term_labels(name, template)]
    out = []
    for col in ("estimate", "lower", "upper"):
        values = rows[col].to_numpy(dtype=np.float64).reshape(template.shape)
        out.append(template.copy(data=values))
    return out[0], out[1], out[2]


def _default_names(fits: Mapping[str, Any], prob: float) -> list[str]:
    names: list[str] = []
    for res in fits.values():
        for p in summarize(res, prob)["parameter"]:
            if p not in names:
                names.append(str(p))
    return names


def _forest_stats(
    fits: Mapping[str, Any], var_names: Sequence[str], prob: float
) -> tuple[xr.Dataset, xr.Dataset]:
    """Point estimates and intervals with a ``model`` dim (one entry per fit)."""
    tables = {m: summarize(res, prob) for m, res in fits.items()}
    points, twigs = {}, {}
    for name in var_names:
        per_fit = {m: _estimates(res, name, tables[m]) for m, res in fits.items()}
        per_fit = {m: v for m, v in per_fit.items() if v is not None}
        if not per_fit:
            raise KeyError(f"no fit has a variable {name!r}")
        models = np.asarray(list(per_fit), dtype=str)
        points[name] = xr.concat([v[0] for v in per_fit.values()], dim="model",
                                 join="outer").assign_coords(model=models)
        twigs[name] = xr.concat(
            [xr.concat([v[1], v[2]], dim=_CI) for v in per_fit.values()], dim="model",
            join="outer").assign_coords(model=models)
    order = np.asarray(list(fits), dtype=str)
    point = xr.Dataset(points).reindex(model=order)
    twig = xr.Dataset(twigs).reindex(model=order).assign_coords({_CI: ["lower", "upper"]})
    return point, twig


def _layout(point: xr.Dataset, columns: Sequence[str] = ("labels", "forest")) -> xr.DataTree:
    """A one-draw "posterior" that only tells plot_forest which rows and columns to draw."""
    ds = point.fillna(0.0).expand_dims({"chain": [0], "draw": [0]})
    ds = ds.expand_dims(column=list(columns))
    return xr.DataTree.from_dict({"posterior": ds})


def _plot_forest(point: xr.Dataset, twig: xr.Dataset, columns: Sequence[str] = ("labels",
                 "forest"), *, separate: bool = True, **kwargs: Any) -> PlotCollection:
    """plot_forest on precomputed statistics, drawn as a reader expects a forest plot.

    arviz-plots writes the row labels as text in a column of their own, with the dims' names
    ("variable", "item") as a footer; here the labels column is left empty and collapsed, and
    every term is a tick label of the forest axis instead, so that each variable can have its
    own axes: with ``separate`` and several variables (abilities in logits, discriminations
    as ratios), one row of axes per variable, each with its own x scale and its x label naming
    the variable.
    """
    import arviz_plots as azp

    kwargs.setdefault("backend", "matplotlib")
    names = [str(n) for n in point.data_vars]
    figure_kwargs = dict(kwargs.pop("figure_kwargs", {}))
    ratios = [0.02 if c == "labels" else (2.0 if c == "forest" else 1.0) for c in columns]
    figure_kwargs.setdefault("width_ratios", ratios)
    sizes = [max(1, int(np.prod([point[n].sizes[d] for d in point[n].dims if d != "model"])))
             for n in names]
    rows = separate and len(names) > 1
    if rows:
        kwargs["rows"] = ["__variable__"]
        figure_kwargs.update(sharey="row", sharex=False, height_ratios=sizes, plot_hspace=0.6)
    height = 0.9 + 0.32 * sum(sizes) + (0.6 * len(names) if rows else 0.0)
    figure_kwargs.setdefault("figsize", (8.0, max(2.5, height)))
    pc = azp.plot_forest(
        _layout(point, columns), combined=True, sample_dims=list(_SAMPLE_DIMS), labels=[],
        stats={"twig": twig, "point_estimate": point},
        visuals={"trunk": False, "ticklabels": False, "remove_axis": False},
        figure_kwargs=figure_kwargs, **kwargs)
    # room for the tick labels and x labels added below (arviz-plots lays out for its own)
    pc.viz["figure"].item().set_layout_engine("constrained")
    y = pc.get_aes_as_dataset("y")
    for name in names:
        centre = y[name].mean("model") if "model" in y[name].dims else y[name]
        template = point[name].isel(model=0, drop=True) if "model" in point[name].dims \
            else point[name]
        labels = term_labels(name, template)
        ticks = centre.transpose(*template.dims).to_numpy().ravel()
        shown = [lbl[len(name) + 1:-1] if lbl.startswith(f"{name}[") else lbl for lbl in labels]
        row = name if rows else None
        # the y axis is shared along the row, and matplotlib shows shared tick labels on the
        # first axes only: the collapsed labels column carries them
        side = pc.get_target(row, {"column": "labels"})
        side.set_yticks(ticks, labels=shown)
        side.tick_params(axis="y", length=0)
        side.xaxis.set_visible(False)
        side.spines[:].set_visible(False)
        side.set_ylim(ticks.min() - 0.6, ticks.max() + 0.6)
        main = pc.get_target(row, {"column": "forest"})
        main.spines[["top", "right"]].set_visible(False)
        main.set_xlabel(name if rows else ", ".join(names))
    return pc


def _sort_terms(point: xr.Dataset, twig: xr.Dataset, by: str | None
                ) -> tuple[xr.Dataset, xr.Dataset]:
    """Each one-dimensional variable's terms ordered by the estimate of fit ``by`` (default:
    the first fit), largest at the top; terms without an estimate last."""
    models = [str(m) for m in point["model"].values]
    by = models[0] if by is None else by
    if by not in models:
        raise ValueError(f"sort_by={by!r} names no fit; the fits are {models}")
    order: dict[str, Any] = {}
    for name, da in point.data_vars.items():
        dims = [d for d in da.dims if d != "model"]
        if len(dims) != 1 or dims[0] in order:
            continue
        values = da.sel(model=by).to_numpy()
        key = np.where(np.isnan(values), np.inf, -values)
        order[dims[0]] = da[dims[0]].values[np.argsort(key, kind="stable")]
    return point.reindex(order), twig.reindex(order)


def _truth_arrays(truth: Truth, point: xr.Dataset) -> xr.Dataset:
    """True values shaped like each plotted variable (NaN where unknown)."""
    if truth is None:
        return xr.Dataset()
    true = truth_series(truth)
    out = {}
    for name, da in point.data_vars.items():
        template = da.isel(model=0, drop=True) if "model" in da.dims else da
        labels = term_labels(str(name), template)
        values = true.reindex(labels).to_numpy(dtype=np.float64)
        if np.isfinite(values).any():
            out[name] = template.copy(data=values.reshape(template.shape))
    return xr.Dataset(out)


def _mark_truth(pc: PlotCollection, truth: xr.Dataset) -> None:
    """A black cross at each true value, in the middle of the rows of its term."""
    from arviz_plots.visuals import scatter_x

    y = pc.get_aes_as_dataset("y")
    for name in truth.data_vars:
        centre = y[name].mean("model") if "model" in y[name].dims else y[name]
        pc.map(scatter_x, "truth", data=truth[[name]], coords={"column": "forest"},
               ignore_aes={"color", "y", "alpha"}, y=centre, color="black", marker="x")


def _legend(pc: PlotCollection, fits: Mapping[str, Any]) -> None:
    """A legend of the fits, when there is more than one to tell apart."""
    if len(fits) > 1:
        pc.add_legend("model", title="fit")


def _title(pc: PlotCollection, text: str) -> None:
    figure = pc.viz["figure"].item()
    figure.suptitle(text, fontsize="medium")


def forest(
    *results: xr.DataTree | Estimate,
    truth: Truth = None,
    prob: float | None = None,
    ci_prob: float | None = None,
    var_names: Sequence[str] | None = None,
    sort_by: str | None = None,
    **named: xr.DataTree | Estimate,
) -> PlotCollection:
    """Intervals of several fits side by side, one colour per fit, truth marked when known.

    Each variable has its own axes (its own x scale, its name as the x label), its terms
    sorted by the estimate of the ``sort_by`` fit (default: the first), largest at the top.

    Parameters
    ----------
    *results : DataTree or Estimate
        Fits of the same model (MLE Wald, MAP, NUTS, ...), named by their method as in
        :func:`bayescal.compare`.
    truth : Dataset or mapping, optional
        True values (``bayescal.simulate``): drawn as black crosses.
    prob : float
        Interval probability (posterior equal-tailed; Wald for an Estimate, on its declared
        scale). A MAP mode is drawn as a point.
    var_names : sequence of str, optional
        Variables to draw (default: every variable of any fit).
    sort_by : str, optional
        The fit whose estimates order the terms (a name of :func:`bayescal.compare`'s
        columns: ``mle``, ``map``, ``nuts``, or a keyword name).
    **named : DataTree or Estimate
        Fits under names of your choice.

    Returns
    -------
    arviz_plots.PlotCollection
        ``pc.viz["twig"][name]`` holds one line per (fit, term) that has an interval (None
        where a fit has no interval), ``pc.viz["point_estimate"][name]`` the points,
        ``pc.viz["truth"][name]`` the true values; ``pc.savefig(path)`` writes it.
    """
    prob = resolve_prob(prob, ci_prob)
    fits = named_results(results, named)
    names = list(var_names) if var_names is not None else _default_names(fits, prob)
    point, twig = _sort_terms(*_forest_stats(fits, names, prob), sort_by)
    pc = _plot_forest(point, twig)
    true = _truth_arrays(truth, point)
    if true.data_vars:
        _mark_truth(pc, true)
    _legend(pc, fits)
    _title(pc, f"{prob:.0%} intervals (posterior equal-tailed, Wald for estimates)"
           + ("; × = truth" if true.data_vars else ""))
    return pc


def discriminations(
    *results: xr.DataTree | Estimate,
    truth: Truth = None,
    prob: float | None = None,
    ci_prob: float | None = None,
    **named: xr.DataTree | Estimate,
) -> PlotCollection:
    """Judge parameters with intervals, one colour per fit.

    The judge-discrimination BTL's ``discrimination`` (γ_k of Xu et al. eq. 1; geometric mean
    one, so a judge above 1 separates items more sharply than the average judge, marked by a
    vertical line); for a model without discriminations, every variable indexed by judge (the
    misclassification model's ``sensitivity`` and ``specificity``, q1 and q0 of Chen et al. 2026).
    Intervals as in :func:`forest`.
    """
    prob = resolve_prob(prob, ci_prob)
    fits = named_results(results, named)
    names = _judge_variables(fits, prob)
    pc = forest(truth=truth, prob=prob, var_names=names, **fits)
    if names == ["discrimination"]:
        from arviz_plots.visuals import vline

        pc.map(vline, "reference", data=xr.Dataset({"discrimination": 1.0}),
               coords={"column": "forest"}, ignore_aes=pc.aes_set, color="grey",
               linestyle="dashed")
        pc.get_target(None, {"column": "forest"}).set_xlabel(
            "discrimination $\\gamma_k$ (geometric mean 1; dashed line: the average judge)")
    return pc


def _judge_variables(fits: Mapping[str, Any], prob: float) -> list[str]:
    found: list[str] = []
    for res in fits.values():
        for name in _default_names({"x": res}, prob):
            template = _template(res, name)
            if template is not None and "judge" in template.dims and name not in found:
                found.append(name)
    if "discrimination" in found:
        return ["discrimination"]
    if not found:
        raise ValueError("these fits have no judge-indexed parameter to plot")
    return found


def leaderboard(
    *results: xr.DataTree | Estimate,
    prob: float | None = None,
    ci_prob: float | None = None,
    parameter: str = "ability",
    judge: str | None = None,
    sort_by: str | None = None,
    truth: Truth = None,
    random_seed: int | None = 0,
    scale: str = "logit",
    **named: xr.DataTree | Estimate,
) -> PlotCollection:
    """Items best first: ability intervals, and in a second panel the rank intervals.

    ``scale="elo"`` draws the abilities on the Elo display scale of
    :func:`bayescal.elo_scale` (1000 + 400/ln 10 per logit, as the table's ``scale``).

    The rows follow :func:`bayescal.leaderboard` (the ``sort_by`` fit's estimate, best at the
    top). Rank intervals come from :func:`bayescal.ranks`: posterior draws for NUTS, draws of
    the Wald normal for an Estimate, none for a MAP mode (its rank is a point).

    Returns
    -------
    arviz_plots.PlotCollection
        Columns ``labels``, ``forest`` (abilities, ``pc.viz["twig"]``) and ``rank``
        (``pc.viz["rank_interval"]``, ``pc.viz["rank"]``).
    """
    prob = resolve_prob(prob, ci_prob)
    from arviz_plots.visuals import line_x, scatter_x

    fits = named_results(results, named)
    table = leaderboard_table(prob=prob, parameter=parameter, judge=judge, sort_by=sort_by,
                              random_seed=random_seed, scale=scale, **fits)
    items = list(table["item"])
    models = list(fits)

    def block(suffixes: Sequence[str]) -> xr.DataArray:
        values = np.full((len(models), len(items), len(suffixes)), np.nan)
        for a, m in enumerate(models):
            for c, suffix in enumerate(suffixes):
                col = f"{m}_{suffix}"
                if col in table:
                    values[a, :, c] = table[col].to_numpy(dtype=np.float64)
        return xr.DataArray(values, dims=["model", "item", _CI],
                            coords={"model": models, "item": items})

    point = xr.Dataset({parameter: block(["estimate"]).isel({_CI: 0}, drop=True)})
    twig = xr.Dataset({parameter: block(["lower", "upper"])}).assign_coords(
        {_CI: ["lower", "upper"]})
    rank_point = xr.Dataset({parameter: block(["rank"]).isel({_CI: 0}, drop=True)})
    rank_twig = xr.Dataset({parameter: block(["rank_lower", "rank_upper"])}).assign_coords(
        {_CI: ["lower", "upper"]})
    pc = _plot_forest(point, twig, columns=("labels", "forest", "rank"))
    pc.map(line_x, "rank_interval", data=rank_twig, coords={"column": "rank"},
           ignore_aes={"alpha"}, width=1.5)
    pc.map(scatter_x, "rank", data=rank_point, coords={"column": "rank"}, ignore_aes={"alpha"})
    if truth is not None:
        true = _truth_arrays(truth, point)
        if true.data_vars:
            _mark_truth(pc, true)
    _legend(pc, fits)
    rank_axis = pc.get_target(None, {"column": "rank"})
    rank_axis.set_xlabel("rank (1 = best)")
    rank_axis.set_xlim(len(items) + 0.5, 0.5)
    rank_axis.set_xticks(_rank_ticks(len(items)))
    rank_axis.spines[["top", "right"]].set_visible(False)
    unit = (" (Elo scale: 1000 + 400/ln 10 per logit)" if scale == "elo" else "")
    pc.get_target(None, {"column": "forest"}).set_xlabel(f"{parameter}{unit}")
    _title(pc, f"Leaderboard: {prob:.0%} intervals of {parameter} and of the rank")
    return pc


def _rank_ticks(n: int) -> list[int]:
    """Integer rank ticks that always include 1 (the best) and n (the last)."""
    step = max(1, int(np.ceil(n / 8)))
    ticks = list(range(1, n + 1, step))
    return ticks if ticks[-1] == n else [*ticks, n]


def win_probability_heatmap(
    result: xr.DataTree | Estimate,
    *,
    parameter: str = "ability",
    judge: str | None = None,
    digits: int = 2,
) -> Figure:
    r"""Matrix of :math:`P(i \succ j) = \sigma(s_i - s_j)`, items ordered best first.

    From :func:`bayescal.win_probabilities` (posterior mean for NUTS, plug-in at the estimate
    for an Estimate or a MAP mode). arviz-plots has no heatmap, so this is a matplotlib
    ``imshow`` with the probabilities written in the cells.

    Returns
    -------
    matplotlib.figure.Figure
        One axes whose image is ``fig.axes[0].images[0]`` (rows: item i, columns: opponent j).
    """
    import matplotlib.pyplot as plt

    from bayescal.contrasts import win_probabilities

    matrix = win_probabilities(result, parameter=parameter, judge=judge)
    order = matrix.mean(axis=1).sort_values(ascending=False).index
    matrix = matrix.loc[order, order]
    n = len(order)
    size = max(4.0, 0.45 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.0, size), layout="constrained")
    image = ax.imshow(matrix.to_numpy(), cmap="RdBu_r", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), labels=list(order), rotation=60, ha="right")
    ax.set_yticks(range(n), labels=list(order))
    ax.set_xlabel("opponent j")
    ax.set_ylabel("item i")
    if n <= 25:
        for i in range(n):
            for j in range(n):
                value = matrix.iat[i, j]
                ax.text(j, i, f"{value:.{digits}f}", ha="center", va="center", fontsize="x-small",
                        color="white" if abs(value - 0.5) > 0.3 else "black")
    fig.colorbar(image, ax=ax, label="P(i beats j)")
    method = summarize(result, 0.95, var_names=[parameter])["method"].iloc[0]
    ax.set_title(f"Win probabilities ({method})", fontsize="medium")
    return fig


def judge_mean_estimators(
    table: pd.DataFrame, *, truth: float | None = None, title: str | None = None
) -> PlotCollection:
    """The estimators of a mean of Chen et al. (2026) side by side, from ``judge_mean.estimate``.

    Parameters
    ----------
    table : DataFrame
        :func:`bayescal.frequentist.judge_mean.estimate` output (one row per method; a method
        undefined on the data has NaN numbers and is listed without an interval).
    truth : float, optional
        The quantity estimated, when known (e.g. the mean of every human label): a black cross.
    title : str, optional

    Returns
    -------
    arviz_plots.PlotCollection
        One row per method; ``pc.viz["twig"][parameter]`` holds a line per method that has an
        interval.
    """
    required = {"parameter", "method", "estimate", "lower", "upper", "prob"}
    missing = required - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}; pass judge_mean.estimate(...)")
    name = str(table["parameter"].dropna().iloc[0])
    methods = [str(m) for m in table["method"]]
    coords = {"estimator": methods}
    point = xr.Dataset({name: ("estimator", table["estimate"].to_numpy(dtype=np.float64))},
                       coords=coords)
    bounds = np.stack([table["lower"].to_numpy(dtype=np.float64),
                       table["upper"].to_numpy(dtype=np.float64)], axis=-1)
    twig = xr.Dataset({name: (("estimator", _CI), bounds)},
                      coords={**coords, _CI: ["lower", "upper"]})
    pc = _plot_forest(point, twig)
    if truth is not None:
        from arviz_plots.visuals import scatter_x

        y = pc.get_aes_as_dataset("y")
        data = xr.Dataset({name: ("estimator", np.full(len(methods), float(truth)))},
                          coords=coords)
        pc.map(scatter_x, "truth", data=data, coords={"column": "forest"},
               ignore_aes={"y", "alpha"}, y=y[name], color="black", marker="x")
    probs = table["prob"].dropna().unique()
    level = f"{probs[0]:.0%} " if len(probs) == 1 else ""
    _title(pc, title or f"Estimators of the {name}: {level}intervals"
           + ("; × = truth" if truth is not None else ""))
    return pc


def order_effects(
    *results: xr.DataTree | Estimate,
    prob: float | None = None,
    ci_prob: float | None = None,
    truth: Truth = None,
    **named: xr.DataTree | Estimate,
) -> PlotCollection:
    """Each judge's order effect :math:`b_k` with intervals, one colour per fit, zero marked.

    ``order_effect[judge]`` of the order-effect BTL (DIAL Sec. 3.1, model (1)), the low-rank
    judges model and the human-calibration model: :math:`b_k > 0` favours the answer shown
    first, so an interval clear of the dashed line at 0 is a position bias. Intervals as in
    :func:`forest` (a MAP mode is a point).

    Returns
    -------
    arviz_plots.PlotCollection
        As :func:`forest`, plus ``pc.viz["reference"]["order_effect"]`` (the line at 0).
    """
    prob = resolve_prob(prob, ci_prob)
    from arviz_plots.visuals import vline

    fits = named_results(results, named)
    pc = forest(truth=truth, prob=prob, var_names=["order_effect"], **fits)
    pc.map(vline, "reference", data=xr.Dataset({"order_effect": 0.0}),
           coords={"column": "forest"}, ignore_aes=pc.aes_set, color="grey", linestyle="dashed")
    pc.get_target(None, {"column": "forest"}).set_xlabel(
        "order effect $b_k$ (> 0 favours the answer shown first)")
    return pc


_LOADINGS = ("consensus", "consensus_loading", "disagreement", "disagreement_loading")


def judge_loadings(
    result: xr.DataTree | Estimate, *, factor: int = 1, prob: float | None = None,
    ci_prob: float | None = None
) -> Figure:
    r"""Biplot of the low-rank judges fit: judges at :math:`(\gamma_k, U_{kq})`, items as arrows.

    DIAL (Sec. 3.2) writes each judge's scores as :math:`S_{ki} = \gamma_k\mu_i +
    \sum_q U_{kq}V_{iq}`. For rank 1 the plane is exact: judge k sits at
    :math:`(\gamma_k, U_{k1})`, item i is an arrow to :math:`c\,(\mu_i, V_{i1})`, and the inner
    product of the two, divided by c, is :math:`S_{ki}`; for rank ≥ 2 it shows factor ``q``
    only. c is one positive factor that brings the arrows to the judges' scale (named in the
    legend). Crosses through a judge are its ``prob`` intervals where the fit reports them (the
    twin withholds U's intervals when the sign-pinning loading is near zero; a MAP mode has
    none). arviz-plots has no scatter/biplot layer, so this is a matplotlib figure.

    Parameters
    ----------
    result : DataTree or Estimate
        :func:`bayescal.frequentist.low_rank_judges.fit`, or a MAP/NUTS fit of
        :func:`bayescal.models.low_rank_judges.build` (its canonical factors are added with
        ``canonical_factors`` when missing; a posterior is drawn at its means).
    factor : int
        q, the disagreement factor on the vertical axis (1-based, as the ``factor`` coords).
    prob : float
        Interval probability of the judges' crosses.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: ``ax.collections[0]`` holds the K judge points, ``ax.patches`` the N arrows.
    """
    prob = resolve_prob(prob, ci_prob)
    import matplotlib.pyplot as plt

    if isinstance(result, xr.DataTree) and "disagreement_loading" not in result["posterior"]:
        from bayescal.models.low_rank_judges import canonical_factors

        result = canonical_factors(result)
    missing = [n for n in _LOADINGS if _template(result, n) is None]
    if missing:
        raise ValueError(f"the result has no {missing}: pass a low-rank judges fit "
                         "(bayescal.frequentist.low_rank_judges.fit or models.low_rank_judges)")
    table = summarize(result, prob, var_names=list(_LOADINGS))
    est = {n: _estimates(result, n, table) for n in _LOADINGS}
    factors = [int(f) for f in est["disagreement"][0]["factor"].values]
    if factor not in factors:
        raise ValueError(f"factor must be one of {factors}, got {factor!r}")

    def pick(name: str, i: int) -> xr.DataArray:
        da = est[name][i]
        return da.sel(factor=str(factor)) if "factor" in da.dims else da

    gamma, u = pick("consensus_loading", 0), pick("disagreement_loading", 0)
    mu, v = pick("consensus", 0), pick("disagreement", 0)
    judges, items = [str(j) for j in gamma["judge"].values], [str(i) for i in mu["item"].values]
    g, uu = gamma.to_numpy(), u.sel(judge=gamma["judge"]).to_numpy()
    m, vv = mu.to_numpy(), v.sel(item=mu["item"]).to_numpy()
    c = np.max(np.hypot(g, uu)) / np.max(np.hypot(m, vv))

    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")
    ax.scatter(g, uu, color="C0", zorder=3, label="judge k at $(\\gamma_k, U_{kq})$")
    for name, horizontal in (("consensus_loading", True), ("disagreement_loading", False)):
        lower = pick(name, 1).sel(judge=gamma["judge"]).to_numpy()
        upper = pick(name, 2).sel(judge=gamma["judge"]).to_numpy()
        ok = np.isfinite(lower) & np.isfinite(upper) & (upper > lower)
        for k in np.flatnonzero(ok):
            if horizontal:
                ax.plot([lower[k], upper[k]], [uu[k], uu[k]], color="C0", lw=1, alpha=0.6)
            else:
                ax.plot([g[k], g[k]], [lower[k], upper[k]], color="C0", lw=1, alpha=0.6)
    texts = [ax.text(x, y, name, color="C0") for name, x, y in zip(judges, g, uu, strict=True)]
    for name, x, y in zip(items, c * m, c * vv, strict=True):
        ax.arrow(0.0, 0.0, x, y, color="C1", width=0.0, head_width=0.02 * c * np.max(np.abs(m)),
                 length_includes_head=True, alpha=0.8)
        texts.append(ax.text(x, y, name, color="C1", fontsize="small"))
    ax.plot([], [], color="C1", label=f"item i: arrow to {c:.2g}·$(\\mu_i, V_{{iq}})$")
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.axvline(0.0, color="grey", lw=0.5)
    ax.set_xlabel("consensus loading $\\gamma_k$ (items: consensus $\\mu_i$)")
    ax.set_ylabel(f"disagreement loading $U_{{k{factor}}}$ (items: $V_{{i{factor}}}$)")
    method = str(table["method"].iloc[0])
    ax.set_title(f"Judge loadings ({method}; lines: {prob:.0%} intervals where reported)",
                 fontsize="medium")
    ax.legend(fontsize="small", loc="best")
    # judges and items often sit close together (similar judges, items of similar ability):
    # adjustText moves the labels apart, with a thin line to a label that had to move far
    from adjustText import adjust_text

    adjust_text(texts, ax=ax, expand=(1.2, 1.4),
                arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5})
    return fig


def _calibration_curve(obj: Any, levels: np.ndarray | None, prob: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Judge levels, calibrated scores and (where the object has one) the interval per level."""
    from bayescal.calibration.base import Calibrator

    if isinstance(obj, Calibrator):
        if obj.n_anchors == 0:
            raise ValueError(f"{obj.name} has no anchors: fit it before drawing its map")
        lv = obj.levels if levels is None else levels
        x = np.eye(len(lv))[np.searchsorted(obj.levels, lv)] if obj.accepts_distributions else lv
        return lv, obj.predict(x), None, None
    if isinstance(obj, pd.DataFrame):
        if "mean" not in obj:
            raise ValueError("a table must be models.score_calibration.calibration_table output "
                             "(columns mean, lower, upper indexed by judge_level)")
        lv = obj.index.to_numpy(dtype=np.float64)
        lower = obj["lower"].to_numpy(dtype=np.float64) if "lower" in obj else None
        upper = obj["upper"].to_numpy(dtype=np.float64) if "upper" in obj else None
        return lv, obj["mean"].to_numpy(dtype=np.float64), lower, upper
    template = _template(obj, "calibrated_mean")
    if template is None:
        raise TypeError(f"cannot draw a calibration map from {type(obj).__name__}: pass a fitted "
                        "Calibrator, a calibration_table, or a score-calibration fit")
    table = summarize(obj, prob, var_names=["calibrated_mean"])
    point, lower, upper = _estimates(obj, "calibrated_mean", table)
    lv = np.asarray(template["judge_level"].values, dtype=np.float64)
    return lv, point.to_numpy(), lower.to_numpy(), upper.to_numpy()


def _table_prob(obj: Any, prob: float) -> float:
    if isinstance(obj, pd.DataFrame) and "prob" in obj:
        return float(obj["prob"].iloc[0])
    return prob


def calibration_map(
    *calibrators_or_tables: Any,
    scale: tuple[int, int] | None = None,
    prob: float | None = None,
    ci_prob: float | None = None,
    **named: Any,
) -> Figure:
    r"""Calibration maps :math:`g(j)`: judge level on x, calibrated score on y, identity dotted.

    arXiv:2611.00447: SQM and the other :mod:`bayescal.calibration` maps are points per
    level; the Bayesian monotone ordinal model gives :math:`E[H \mid J = j]` with an interval
    per level, drawn as a band (posterior equal-tailed; Wald for the twin's Estimate; none for
    a MAP mode or a point table). arviz-plots has no line-with-band layer for level-indexed
    curves from mixed sources, so this is a matplotlib figure.

    Parameters
    ----------
    *calibrators_or_tables
        Fitted :class:`~bayescal.calibration.base.Calibrator` objects (a predictive one is
        evaluated at the one-hot distribution of each level), DataFrames from
        :func:`bayescal.models.score_calibration.calibration_table`, NUTS/MAP fits of
        :func:`bayescal.models.score_calibration.build`, or
        :func:`bayescal.frequentist.score_calibration.fit` Estimates. Named by method.
    scale : (int, int), optional
        The scale ``(a, b)`` (default: from the first calibrator, else the levels of the maps);
        the axes span it and the calibrators are evaluated on its levels.
    prob : float
        Interval probability for fits (a table carries its own).
    **named
        The same under names of your choice.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: one line per map (``ax.lines``, then the identity last) and one band per map
        with an interval (``ax.collections``).
    """
    prob = resolve_prob(prob, ci_prob)
    import matplotlib.pyplot as plt

    from bayescal.calibration.base import Calibrator

    items: dict[str, Any] = {}
    for obj in calibrators_or_tables:
        if isinstance(obj, Calibrator):
            base = obj.name
        elif isinstance(obj, pd.DataFrame):
            base = "bayesian map"
        else:
            base = str(summarize(obj, prob, var_names=["calibrated_mean"])["method"].iloc[0])
        name, k = base, 2
        while name in items:
            name, k = f"{base}_{k}", k + 1
        items[name] = obj
    for name, obj in named.items():
        if name in items:
            raise ValueError(f"two maps are named {name!r}; pass distinct keyword names")
        items[name] = obj
    if not items:
        raise ValueError("calibration_map needs at least one calibrator or table")
    if scale is None:
        scale = next((c.scale for c in items.values() if isinstance(c, Calibrator)), None)
    levels = None if scale is None else np.arange(int(scale[0]), int(scale[1]) + 1)

    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    markers = "os^vDx<>"
    span: list[float] = []
    for n, (name, obj) in enumerate(items.items()):
        lv, y, lower, upper = _calibration_curve(obj, levels, prob)
        span.extend([lv.min(), lv.max()])
        (line,) = ax.plot(lv, y, marker=markers[n % len(markers)], linestyle="-" if n == 0
                          else ":", label=name)
        if lower is not None and upper is not None and np.any(upper > lower):
            ax.fill_between(lv, lower, upper, color=line.get_color(), alpha=0.2,
                            label=f"{name}: {_table_prob(obj, prob):.0%} interval")
    lo, hi = (scale if scale is not None else (min(span), max(span)))
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, linestyle="--", label="identity")
    ax.set_xticks(np.arange(int(lo), int(hi) + 1))
    ax.set_xlabel("judge score j")
    ax.set_ylabel("calibrated score g(j)")
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
