"""One fit verb for every PyMC model: ``fit(model, method="nuts" | "map") -> DataTree``.

MAP results are stored like posteriors (1 chain x 1 draw), so :func:`bayescal.summarize` and
:func:`bayescal.compare` treat both alike. NUTS runs are checked by
:func:`bayescal.diagnose`, which warns when R-hat, ESS or divergences fail.

Results are ArviZ-native: a NUTS posterior carries a ``log_likelihood`` group with one entry per
observed *cell* (the models see aggregated cells, so ``az.loo`` on it is leave-one-CELL-out:
all verdicts of one (judge, pair) cell are left out together, not one verdict; in the
misclassification model a cell is a label pattern, all items sharing it). Cells are named by
labels, never integer codes: every model gives its observed dims coordinates (``cell`` from
:meth:`bayescal.data.Comparisons.cell_labels`, ``judge: item_i vs item_j``), and every integer
code the model holds along such a dim gets its labels as a coordinate beside it
(``judge_label``, ``item_i_label``, ``item_j_label``), so that per-judge sums of the
log-likelihood are one ``groupby`` away.
"""

from __future__ import annotations

import warnings
from importlib.metadata import version
from typing import Any, Literal

import numpy as np
import pymc as pm
import pytensor
import xarray as xr
from pymc.initial_point import make_initial_point_fn
from scipy.optimize import minimize

from bayescal.diagnostics import diagnose
from bayescal.progress import interactive

__all__ = ["fit"]

Method = Literal["nuts", "map"]
Sampler = Literal["nutpie", "pymc", "numpyro", "blackjax"]

# MAP must match the twins' penalized MLE to ~1e-6; scipy's default L-BFGS-B tolerances stop
# at ~1e-5 relative change on a log density in the thousands, so they are tightened here.
_MAP_OPTIONS = {"maxiter": 20_000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30}

# The log_likelihood group costs chains x draws x cells x 8 bytes (17,820 cells at 4 x 1000
# draws: 570 MB); above this size it is only computed when asked for.
_LOG_LIKELIHOOD_BYTES = 256 * 2**20



def fit(
    model: pm.Model,
    method: Method = "nuts",
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    random_seed: int | None = None,
    nuts_sampler: Sampler = "nutpie",
    target_accept: float = 0.8,
    progressbar: bool | None = None,
    check: bool = True,
    log_likelihood: bool | None = None,
    **sample_kwargs: Any,
) -> xr.DataTree:
    """Fit a bayescal PyMC model by NUTS or MAP.

    Parameters
    ----------
    model : pymc.Model
        From a ``bayescal.models.<stem>.build``.
    method : {"nuts", "map"}
        ``nuts``: posterior draws. ``map``: the posterior mode in the model's constrained
        parameterization (no Jacobian; with flat priors, the MLE), stored as 1 chain x 1 draw
        with ``observed_data`` and ``constant_data``; attrs ``map_converged``,
        ``map_iterations`` and ``map_logp`` (L-BFGS-B; warns when it does not converge). It
        starts from the model's initial point, or from ``initvals=`` where a model needs one
        (``bayescal.models.human_calibration.initvals``); other sampler arguments are refused.
    draws, tune, chains, cores : int
        NUTS settings (``cores`` defaults to PyMC's choice).
    random_seed : int, optional
        Seed; the same seed gives the same draws.
    nuts_sampler : {"nutpie", "pymc", "numpyro", "blackjax"}
        NUTS implementation. nutpie is the default because it was measured faster on the
        aggregated BTL models (``bench/judge_discrimination_btl.py``, 17,820 cells, 4 x 1000
        draws: 32 s against 39 s for PyMC's sampler, faster in most runs on a shared machine);
        it compiles the model on every call (several seconds), so PyMC's own sampler suits many
        small fits.
    target_accept : float
        NUTS target acceptance rate.
    progressbar : bool, optional
        Show NUTS progress bars. Default: yes in a terminal or a notebook, no under pytest or
        CI (:func:`bayescal.progress.interactive`; ``BAYESCAL_PROGRESS=0`` silences it).
    check : bool
        Run :func:`bayescal.diagnose` after NUTS and warn when it fails.
    log_likelihood : bool, optional
        Add the ``log_likelihood`` group (NUTS only; one entry per observed cell, so
        ``az.loo`` is leave-one-cell-out). Default: added when it takes at most 256 MB,
        otherwise skipped with a warning; True always adds it, False never.
    **sample_kwargs
        Passed to :func:`pymc.sample`.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior`` (and ``sample_stats``, ``observed_data``, ``constant_data`` and
        ``log_likelihood`` for NUTS), coordinates and data as labels; attrs
        ``bayescal_method``, ``bayescal_version``, ``random_seed`` and ``nuts_sampler``.
    """
    if method == "map":
        initvals = sample_kwargs.pop("initvals", None)
        if sample_kwargs:
            raise ValueError(f"{sorted(sample_kwargs)} apply to NUTS (pymc.sample), not to "
                             "method='map'")
        result = _map(model, initvals)
        result.attrs.update(_attrs("map", random_seed, None))
        return _labelled(result, model)
    if method != "nuts":
        raise ValueError(f"method must be 'nuts' or 'map', got {method!r}")
    if progressbar is None:
        progressbar = interactive()
    result = pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        random_seed=random_seed,
        nuts_sampler=nuts_sampler,
        target_accept=target_accept,
        progressbar=progressbar,
        quiet=not progressbar,
        compute_convergence_checks=False,
        model=model,
        **sample_kwargs,
    )
    result.attrs.update(_attrs("nuts", random_seed, nuts_sampler))
    _add_log_likelihood(result, model, log_likelihood)
    result = _labelled(result, model)
    if check:
        diagnose(result, warn=True)
    return result


def _attrs(method: str, random_seed: int | None, sampler: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"bayescal_method": method, "bayescal_version": version("bayescal")}
    if random_seed is not None:
        attrs["random_seed"] = int(random_seed)
    if sampler is not None:
        attrs["nuts_sampler"] = sampler
    return attrs


def _map(model: pm.Model, initvals: dict[str, Any] | None = None) -> xr.DataTree:
    """Posterior mode without the Jacobian, by L-BFGS-B on the model's unconstrained values.

    The same optimum as ``pm.find_MAP(jitter=False)``, made for interactive use. It compiles with
    PyTensor's FAST_COMPILE mode: on the models here the full rewrite pipeline plus the numba
    build cost several seconds on every call, even with a warm cache, while the optimizer needs
    a few hundred evaluations of a cell-level log density (``bench/interactive.py`` prints both).
    It builds the DataTree directly, without the trace and ArviZ conversion machinery.
    """
    free = model.continuous_value_vars
    if len(free) != len(model.value_vars):
        raise ValueError("MAP needs a model whose free variables are all continuous")
    start = (model.initial_point() if not initvals else make_initial_point_fn(
        model=model, overrides=initvals, jitter_rvs=set(), return_transformed=True)(None))
    shapes = [np.shape(start[v.name]) for v in free]
    sizes = [int(np.prod(shape)) for shape in shapes]
    loss = -model.logp(jacobian=False)
    fn = model.compile_fn([loss, *pytensor.grad(loss, free)], inputs=free, mode="FAST_COMPILE",
                          point_fn=False)

    def unravel(x: np.ndarray) -> list[np.ndarray]:
        parts = np.split(x, np.cumsum(sizes)[:-1])
        return [p.reshape(shape) for p, shape in zip(parts, shapes, strict=True)]

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, *grads = fn(*unravel(x))
        return float(value), np.concatenate([np.ravel(g) for g in grads])

    x0 = np.concatenate([np.ravel(start[v.name]) for v in free]).astype(np.float64)
    res = minimize(objective, x0, jac=True, method="L-BFGS-B", options=dict(_MAP_OPTIONS))
    if not res.success:
        warnings.warn(f"the MAP optimizer did not converge: {res.message}", UserWarning,
                      stacklevel=3)
    # free variables on their own scale and every deterministic, as find_MAP reports them
    wanted = {rv.name for rv in model.free_RVs} | {d.name for d in model.deterministics}
    outs = [v for v in model.unobserved_value_vars if v.name in wanted]
    names = [v.name for v in outs]
    values_fn = model.compile_fn(outs, inputs=free, mode="FAST_COMPILE", point_fn=False,
                                 on_unused_input="ignore")
    values = values_fn(*unravel(np.asarray(res.x)))
    posterior = xr.Dataset({
        name: _labelled_array(model, name, np.asarray(value)[None, None], ("chain", "draw"))
        for name, value in zip(names, values, strict=True)
    }).assign_coords(chain=[0], draw=[0])
    observed = xr.Dataset({
        rv.name: _labelled_array(model, rv.name, _value(model.rvs_to_values[rv]), ())
        for rv in model.observed_RVs
    })
    constant = xr.Dataset({
        var.name: _labelled_array(model, var.name, _value(var), ()) for var in model.data_vars
    })
    result = xr.DataTree.from_dict({"posterior": posterior, "observed_data": observed,
                                    "constant_data": constant})
    result.attrs.update({"map_converged": int(bool(res.success)), "map_iterations": int(res.nit),
                         "map_logp": float(-res.fun)})
    return result


def _value(var: Any) -> np.ndarray:
    """The numbers behind a shared variable (pm.Data) or a constant (observed data)."""
    return np.asarray(var.get_value() if hasattr(var, "get_value") else var.data)


def _labelled_array(model: pm.Model, name: str, value: np.ndarray,
                    leading: tuple[str, ...]) -> xr.DataArray:
    """``value`` with the model's dims and coords for ``name`` after the ``leading`` dims."""
    given = list(model.named_vars_to_dims.get(name) or ())
    n = value.ndim - len(leading)
    # unnamed axes get PyMC's own names (``ability_free_dim_0``)
    dims = [given[i] if i < len(given) and given[i] is not None else f"{name}_dim_{i}"
            for i in range(n)]
    coords = {d: list(model.coords[d]) for d in dims if model.coords.get(d) is not None}
    return xr.DataArray(value, dims=[*leading, *dims], coords=coords)


def _add_log_likelihood(result: xr.DataTree, model: pm.Model, wanted: bool | None) -> None:
    """Pointwise log-likelihood of every observed variable, per element (cell), in place."""
    if wanted is False or not model.observed_RVs:
        return
    post = result["posterior"]
    n_samples = post.sizes.get("chain", 1) * post.sizes.get("draw", 1)
    observed = result["observed_data"].to_dataset() if "observed_data" in result.children \
        else xr.Dataset()
    size = sum(int(v.size) for v in observed.data_vars.values())
    if wanted is None and 8 * n_samples * size > _LOG_LIKELIHOOD_BYTES:
        warnings.warn(
            f"the log_likelihood group was not computed: {n_samples} draws x {size} cells "
            f"would take {8 * n_samples * size / 2**20:.0f} MB. Pass log_likelihood=True to "
            "bayescal.fit, or call pymc.compute_log_likelihood(result, model=model) later.",
            UserWarning, stacklevel=3,
        )
        return
    pm.compute_log_likelihood(result, model=model, progressbar=False)


def _labelled(result: xr.DataTree, model: pm.Model) -> xr.DataTree:
    """Attach the labels behind every integer code the model holds along a labelled dim.

    A ``pm.Data`` of integers along one dim (``cell``) that is named after the coordinate it
    indexes (``judge_code``, ``item_i``, ``item_j``: the coordinate's name, then ``_`` and
    anything) gets a coordinate ``<name>_label`` along that dim in every group with the dim
    (``_code`` is dropped from the name: ``judge_label``). The coded variables of
    ``constant_data`` keep their integer values: PyMC compares them with the model's data to
    decide what ``sample_posterior_predictive`` must resample, and fails on labels.
    """
    extra: dict[str, dict[str, tuple[str, np.ndarray]]] = {}
    for var in model.data_vars:
        dims = model.named_vars_to_dims.get(var.name) or ()
        value = _value(var)
        if len(dims) != 1 or value.dtype.kind not in "iu" or model.coords.get(dims[0]) is None:
            continue
        coord = _indexed_coordinate(model, var.name, dims[0])
        if coord is None:
            continue
        labels = np.asarray(model.coords[coord], dtype=str)
        if value.size and (value.min() < 0 or value.max() >= labels.size):
            continue
        name = var.name.removesuffix("_code") + "_label"
        extra.setdefault(dims[0], {})[name] = (dims[0], labels[value])
    for group in list(result.children):
        ds = result[group].to_dataset()
        add = {name: spec for dim, specs in extra.items() if dim in ds.dims
               and ds.sizes[dim] == len(next(iter(specs.values()))[1])
               for name, spec in specs.items()}
        if add:
            result[group] = xr.DataTree(ds.assign_coords(add))
    return result


def _indexed_coordinate(model: pm.Model, name: str, dim: str) -> str | None:
    """The coordinate a coded variable indexes: the longest coordinate name that ``name`` is,
    or starts with followed by ``_`` (never the variable's own dim)."""
    found = [c for c in model.coords if c != dim and (name == c or name.startswith(f"{c}_"))]
    return max(found, key=len) if found else None
