"""One fit verb for every PyMC model: ``fit(model, method="nuts" | "map") -> DataTree``.

MAP results are stored like posteriors (1 chain x 1 draw), so :func:`bayescal.summarize` and
:func:`bayescal.compare` treat both alike. NUTS runs are checked by
:func:`bayescal.diagnose`, which warns when R-hat, ESS or divergences fail.

Results are ArviZ-native: a NUTS posterior carries a ``log_likelihood`` group with one entry per
observed *cell* (the models see aggregated cells, so ``az.loo`` on it is leave-one-CELL-out:
all verdicts of one (judge, pair) cell are left out together, not one verdict; in the
misclassification model a cell is a label pattern, all items sharing it), and cells are
named by labels, not integer codes: the ``cell`` coordinate reads ``judge: item_i vs item_j``
and the coordinates ``judge_label``, ``item_i_label``, ``item_j_label`` run along it.
"""

from __future__ import annotations

import warnings
from importlib.metadata import version
from typing import Any, Literal

import numpy as np
import pymc as pm
import xarray as xr

from bayescal.diagnostics import diagnose

__all__ = ["fit"]

Method = Literal["nuts", "map"]
Sampler = Literal["nutpie", "pymc", "numpyro", "blackjax"]

# MAP must match the twins' penalized MLE to ~1e-6; scipy's default L-BFGS-B tolerances stop
# at ~1e-5 relative change on a log density in the thousands, so they are tightened here.
_MAP_OPTIONS = {"maxiter": 20_000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30}

# The log_likelihood group costs chains x draws x cells x 8 bytes (17,820 cells at 4 x 1000
# draws: 570 MB); above this size it is only computed when asked for.
_LOG_LIKELIHOOD_BYTES = 256 * 2**20

# Integer-coded data of the models and the coordinate each code indexes.
_CODES = {"item_i": "item", "item_j": "item", "judge_code": "judge"}
_LABEL_NAMES = {"item_i": "item_i", "item_j": "item_j", "judge_code": "judge"}


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
    progressbar: bool = False,
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
    progressbar : bool
        Show a progress bar while sampling.
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
        with warnings.catch_warnings():
            # find_MAP announces that its return type will change; we already ask for the new one
            warnings.filterwarnings("ignore", category=FutureWarning, module="pymc")
            result = pm.find_MAP(
                method="L-BFGS-B",
                model=model,
                return_inferencedata=True,
                jitter=False,
                progressbar=progressbar,
                options=dict(_MAP_OPTIONS),
            )
        result.attrs.update(_attrs("map", random_seed, None))
        return _labelled(result, model)
    if method != "nuts":
        raise ValueError(f"method must be 'nuts' or 'map', got {method!r}")
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
    """Name the cells by their labels and attach the labels behind every integer code.

    Every group with a ``cell`` dim gets the ``cell`` coordinate ``judge: a vs b`` and the
    coordinates ``judge_label``, ``item_i_label``, ``item_j_label`` (so per-judge sums of the
    log-likelihood are one ``groupby`` away). The coded variables of ``constant_data`` keep
    their integer values: PyMC compares them with the model's data to decide what
    ``sample_posterior_predictive`` must resample, and fails on labels.
    """
    codes = {}
    for name, dim in _CODES.items():
        if name in model.named_vars and model.coords.get(dim) is not None:
            value = np.asarray(model[name].get_value())
            codes[name] = np.asarray(model.coords[dim], dtype=str)[value]
    cells = _cell_labels(codes)
    if cells is None:
        return result
    extra = {f"{_LABEL_NAMES[name]}_label": ("cell", labels) for name, labels in codes.items()}
    for group in list(result.children):
        ds = result[group].to_dataset()
        if "cell" in ds.dims and ds.sizes["cell"] == len(cells):
            result[group] = xr.DataTree(ds.assign_coords(cell=cells, **extra))
    return result


def _cell_labels(codes: dict[str, np.ndarray]) -> np.ndarray | None:
    """``judge: a vs b`` per cell (``a vs b`` without judges); None when the model has no pairs."""
    if "item_i" not in codes or "item_j" not in codes:
        return None
    labels = np.char.add(np.char.add(codes["item_i"], " vs "), codes["item_j"])
    if "judge_code" in codes:
        labels = np.char.add(np.char.add(codes["judge_code"], ": "), labels)
    if len(np.unique(labels)) < len(labels):
        # cells that differ only by something unlabelled (display order): number the repeats
        seen: dict[str, int] = {}
        unique = []
        for lab in labels.tolist():
            seen[lab] = seen.get(lab, 0) + 1
            unique.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
        labels = np.asarray(unique)
    return labels
