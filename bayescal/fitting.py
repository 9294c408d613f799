"""One fit verb for every PyMC model: ``fit(model, method="nuts" | "map") -> DataTree``.

MAP results are stored like posteriors (1 chain x 1 draw), so :func:`bayescal.summarize` and
:func:`bayescal.compare` treat both alike. NUTS runs are checked by
:func:`bayescal.diagnose`, which warns when R-hat, ESS or divergences fail.
"""

from __future__ import annotations

import warnings
from importlib.metadata import version
from typing import Any, Literal

import numpy as np
import pymc as pm
import pytensor
import xarray as xr
from scipy.optimize import minimize

from bayescal.diagnostics import diagnose
from bayescal.progress import interactive

__all__ = ["fit"]

Method = Literal["nuts", "map"]
Sampler = Literal["nutpie", "pymc", "numpyro", "blackjax"]

# MAP must match the twins' penalized MLE to ~1e-6; scipy's default L-BFGS-B tolerances stop
# at ~1e-5 relative change on a log density in the thousands, so they are tightened here.
_MAP_OPTIONS = {"maxiter": 20_000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30}


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
    **sample_kwargs: Any,
) -> xr.DataTree:
    """Fit a bayescal PyMC model by NUTS or MAP.

    Parameters
    ----------
    model : pymc.Model
        From a ``bayescal.models.<stem>.build``.
    method : {"nuts", "map"}
        ``nuts``: posterior draws. ``map``: the posterior mode in the model's constrained
        parameterization (no Jacobian; with flat priors, the MLE), stored as 1 chain x 1 draw.
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
    **sample_kwargs
        Passed to :func:`pymc.sample`.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior`` (and ``sample_stats`` for NUTS); attrs ``bayescal_method``,
        ``bayescal_version``, ``random_seed`` and ``nuts_sampler``.
    """
    if method == "map":
        result = _map(model)
        result.attrs.update(_attrs("map", random_seed, None))
        return result
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


def _map(model: pm.Model) -> xr.DataTree:
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
    start = model.initial_point()
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
    posterior = xr.Dataset()
    for name, value in zip(names, values, strict=True):
        given = list(model.named_vars_to_dims.get(name) or ())
        # unnamed axes get PyMC's own names (``ability_free_dim_0``)
        dims = [given[i] if i < len(given) and given[i] is not None else f"{name}_dim_{i}"
                for i in range(np.ndim(value))]
        coords = {d: list(model.coords[d]) if model.coords.get(d) is not None
                  else np.arange(np.shape(value)[i]) for i, d in enumerate(dims)}
        posterior[name] = xr.DataArray(np.asarray(value)[None, None], dims=["chain", "draw", *dims],
                                       coords={"chain": [0], "draw": [0], **coords})
    result = xr.DataTree.from_dict({"posterior": posterior})
    result.attrs.update({"map_converged": int(bool(res.success)), "map_iterations": int(res.nit),
                         "map_logp": float(-res.fun)})
    return result
