"""One fit verb for every PyMC model: ``fit(model, method="nuts" | "map") -> DataTree``.

MAP results are stored like posteriors (1 chain x 1 draw), so :func:`bayescal.summarize` and
:func:`bayescal.compare` treat both alike. The MAP's functions and nutpie's compiled model are
compiled once per model structure and reused with each model's own data
(:mod:`bayescal._structure`). NUTS runs are checked by
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

import contextlib
import dataclasses
import functools
import gc
import os
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Literal

import numpy as np
import pymc as pm
import pytensor
import xarray as xr
from pymc.initial_point import make_initial_point_fn
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import ancestors
from pytensor.tensor.type import TensorType
from scipy.optimize import minimize

from bayescal._structure import Entry, Structure, StructureCache, Uncacheable, is_data, structure
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
        draws: 32 s against 39 s for PyMC's sampler, faster in most runs on a shared machine).
        Its compiled model is kept per model structure (the graph with its data as inputs,
        :mod:`bayescal._structure`): the first fit of a structure in a process compiles, a
        later fit of the same structure, on other data (observed arrays of any length), does
        not (``bench/run.py`` prints both). Its native callbacks are cached on disk in
        PyTensor's numba cache (:mod:`bayescal._nutpie_numba`), so a new process compiles
        only PyTensor's part of a structure an earlier process compiled.
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
        Passed to :func:`pymc.sample` (which then compiles nutpie's model afresh).

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
    result = None
    if nuts_sampler == "nutpie" and not sample_kwargs:
        result = _sample_nutpie(model, draws=draws, tune=tune, chains=chains, cores=cores,
                                random_seed=random_seed, target_accept=target_accept,
                                progressbar=progressbar)
    if result is None:
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

    The same optimum as ``pm.find_MAP(jitter=False)``, made for interactive use. Its three
    functions (the loss and gradient, the initial point, the reported values) are compiled
    once per model structure with the data as inputs (:func:`_map_functions`), so a refit of
    the same model, or of a model built from other data of the same shape, only evaluates
    them. They are compiled with PyTensor's FAST_COMPILE rewrites and its Python linker
    (:func:`_map_mode`): the full rewrite pipeline plus the numba build cost seconds, while
    the optimizer needs a few dozen evaluations of a cell-level log density. Python's
    cyclic garbage collector is paused while they are built (:func:`_gc_paused`). On the
    demo model (12 models, 6 judges) a first call in a fresh process took 0.39 s of CPU
    (0.09 s of it importing ``scipy.optimize``), a refit 0.05 s and a model of the same
    structure 0.09 s (``bench/run.py --only map``). It builds the DataTree directly,
    without the trace and ArviZ conversion machinery.
    """
    free = model.continuous_value_vars
    if len(free) != len(model.value_vars):
        raise ValueError("MAP needs a model whose free variables are all continuous")
    # PyTensor records the Python stack of every variable it creates (traceback.limit, 8
    # frames by default) for its error messages; the log density, its gradient and their
    # copies are made here, not in the user's code, and recording them took about 0.04 s
    # of a first MAP
    with pytensor.config.change_flags(traceback__limit=0), _gc_paused():
        functions, names, data = _map_functions(model)
    with functions.lock, _one_blas_thread():
        start = functions.value.initial(*data)
        if initvals:  # a start the model's own initial point cannot give (not cached)
            point = make_initial_point_fn(model=model, overrides=initvals, jitter_rvs=set(),
                                          return_transformed=True)(None)
            start = [point[v.name] for v in free]
        shapes = [np.shape(v) for v in start]
        sizes = [int(np.prod(shape)) for shape in shapes]

        def unravel(x: np.ndarray) -> list[np.ndarray]:
            parts = np.split(x, np.cumsum(sizes)[:-1])
            return [p.reshape(shape) for p, shape in zip(parts, shapes, strict=True)]

        def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
            value, *grads = functions.value.objective(*unravel(x), *data)
            return float(value), np.concatenate([np.ravel(g) for g in grads])

        x0 = np.concatenate([np.ravel(v) for v in start]).astype(np.float64)
        res = minimize(objective, x0, jac=True, method="L-BFGS-B", options=dict(_MAP_OPTIONS))
        values = functions.value.values(*unravel(np.asarray(res.x)), *data)
    if not res.success:
        warnings.warn(f"the MAP optimizer did not converge: {res.message}", UserWarning,
                      stacklevel=3)
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


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, then as the caller had it.

    Building and compiling the MAP's graphs allocates tens of thousands of objects, few of
    them cyclic garbage. Those allocations set off Python's collections: the young ones
    about 0.02 s in all, and, in a fresh process after importing PyMC, one full collection
    of every object alive (about 0.08 s of a first MAP). Paused, the young objects are
    looked at once when collection resumes, and the full collection runs later, when
    Python's own thresholds next call for it. The state is restored on error too; a pause
    entered while the collector is already off (another thread's pause, or the caller's)
    leaves it off.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _one_blas_thread() -> Any:
    """BLAS limited to one thread. numpy and scipy each load an OpenBLAS whose idle threads
    spin; alternating tiny calls between the two (the log density, then L-BFGS-B's update)
    made one MAP iteration take milliseconds instead of microseconds on two cores."""
    return _blas_controller().limit(limits=1, user_api="blas")


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController  # a PyMC dependency

    return ThreadpoolController()  # inspecting the loaded libraries takes milliseconds: once


@dataclass(frozen=True)
class _MapFunctions:
    objective: Callable[..., list[np.ndarray]]  # (free values, data) -> loss, its gradients
    values: Callable[..., list[np.ndarray]]  # (free values, data) -> the reported variables
    initial: Callable[..., list[np.ndarray]]  # (data) -> the initial free values


# compiled MAP functions per model structure (bayescal._structure); a few dozen structures
# at most in a session, each a few hundred kB
_MAP_CACHE = StructureCache(size=32)


def _map_functions(model: pm.Model) -> tuple[Entry, list[str], list[Any]]:
    """The MAP's compiled functions for ``model``, the names of the reported variables and
    the model's data in the functions' input order.

    The graphs are keyed by their structure with the data abstracted; a hit reuses functions
    compiled for an earlier model and passes this model's numbers. Graphs that cannot be
    keyed are compiled for this call only.
    """
    from pymc.pytensorf import compile as compile_pymc

    graphs = _map_graphs(model)
    free = model.continuous_value_vars

    def build() -> _MapFunctions:
        if graphs.structure is None:
            new, inputs = list(graphs.outputs), []
        else:
            new, inputs = graphs.structure.abstracted(graphs.outputs)
        n = len(graphs.names)
        loss, outs, initial = new[0], new[1:1 + n], new[1 + n:]
        options = {"on_unused_input": "ignore", "allow_input_downcast": True,
                   "accept_inplace": True}
        with model:
            return _MapFunctions(
                objective=compile_pymc([*free, *inputs], [loss, *pytensor.grad(loss, free)],
                                       mode=_map_mode(), **options),
                values=compile_pymc([*free, *inputs], outs, mode=_map_mode(once=True),
                                    **options),
                initial=compile_pymc(inputs, initial, mode=_map_mode(once=True), **options))

    if graphs.structure is None:
        return Entry(build()), graphs.names, []
    return _MAP_CACHE.get(graphs.structure.key, build), graphs.names, graphs.structure.values()


@functools.cache
def _map_mode(once: bool = False) -> Any:
    """PyTensor's FAST_COMPILE rewrites with the plain Python linker. FAST_COMPILE's own VM
    linker is as fast per evaluation here, but its first use imports setuptools (for C
    compiler errors it never raises in this mode): about 0.06 s of a first MAP. The plain
    linker evaluates every node in order, so an ``ifelse`` computes both branches (the
    result is the same, only not lazy).

    ``once``: for a function evaluated once per fit (the initial point, the reported
    values), without the canonicalization, which is most of FAST_COMPILE's rewriting time
    and pays back only over many evaluations (on the demo model the two compiled in 0.02 s
    instead of 0.06 s); the stabilizing rewrites stay. The loss and its gradient, evaluated
    a few dozen to a few hundred times per fit, keep it: without it they compiled in a third
    of the time, but one evaluation of the human-calibration model's took 1.6 times as long,
    and so did its repeated MAP.
    """
    from pytensor.compile.mode import FAST_COMPILE, Mode
    from pytensor.link.basic import PerformLinker

    rewrites = FAST_COMPILE.provided_optimizer
    return Mode(linker=PerformLinker(),
                optimizer=rewrites.excluding("canonicalize") if once else rewrites)


@dataclass(frozen=True)
class _MapGraphs:
    fingerprint: tuple[Any, ...]
    outputs: tuple[Any, ...]  # the loss, the reported variables, the initial free values
    names: list[str]  # of the reported variables
    structure: Structure | None  # None: not cacheable


# Building the graphs (PyMC's logp rewrites) is most of a repeat MAP call's time, so they are
# kept while their model lives and is unchanged (see _model_fingerprint).
_MAP_GRAPHS: weakref.WeakKeyDictionary[pm.Model, _MapGraphs] = weakref.WeakKeyDictionary()


def _map_graphs(model: pm.Model) -> _MapGraphs:
    from pymc.initial_point import make_initial_point_expression

    fingerprint = _model_fingerprint(model)
    known = _MAP_GRAPHS.get(model)
    if known is not None and known.fingerprint == fingerprint:
        return known
    free = model.continuous_value_vars
    loss = -model.logp(jacobian=False)
    # free variables on their own scale and every deterministic, as find_MAP reports them
    wanted = {rv.name for rv in model.free_RVs} | {d.name for d in model.deterministics}
    outs = [v for v in model.unobserved_value_vars if v.name in wanted]
    start = make_initial_point_expression(
        free_rvs=model.free_RVs, rvs_to_transforms=model.rvs_to_transforms,
        initval_strategies=model.rvs_to_initial_values, return_transformed=True)
    start_of = {model.rvs_to_values[rv].name: x
                for rv, x in zip(model.free_RVs, start, strict=True)}
    outputs = (loss, *outs, *(start_of[v.name] for v in free))
    try:
        found = structure(outputs, free, extra=("map", bool(model.check_bounds)))
    except Uncacheable:
        found = None
    graphs = _MapGraphs(fingerprint, outputs, [v.name for v in outs], found)
    _MAP_GRAPHS[model] = graphs
    return graphs


def _model_fingerprint(model: pm.Model) -> tuple[Any, ...]:
    """What a change to a model's graph changes: its variables (PyMC adds, never replaces or
    removes them), their transforms and initial values, and the bounds check. Data values and
    coordinate lengths are not in it: the compiled functions read them on every call."""
    def initval(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return (id(value), value.tobytes())
        return value if isinstance(value, str | int | float | None) else id(value)

    return (bool(model.check_bounds), tuple(map(id, model.named_vars.values())),
            tuple((id(rv), id(t)) for rv, t in model.rvs_to_transforms.items()),
            tuple((id(rv), initval(v)) for rv, v in model.rvs_to_initial_values.items()))


# --------------------------------------------------------------------------- NUTS with nutpie
@dataclass(frozen=True)
class _Nutpie:
    compiled: Any  # nutpie's CompiledPyMCModel of ``clone``
    copy: pm.Model  # the model with every datum a shared variable of its own (private)
    data: tuple[Any, ...]  # the copy's data variables, in the structure's order


# A compiled nutpie model holds native code (a few MB) and costs seconds to build: a handful
# of structures are kept.
_NUTPIE_CACHE = StructureCache(size=8)


def _sample_nutpie(model: pm.Model, *, draws: int, tune: int, chains: int, cores: int | None,
                   random_seed: int | None, target_accept: float,
                   progressbar: bool) -> xr.DataTree | None:
    """``pm.sample(nuts_sampler="nutpie")`` without recompiling a structure already seen.

    nutpie compiles the model's log density and gradient to native code on every
    ``pm.sample`` call (several seconds even with a warm cache). Here it compiles a copy of
    the model whose data are all shared variables (:func:`_shared_copy`), once per structure
    of that copy (:mod:`bayescal._structure`); a later model of the same structure passes its
    numbers through nutpie's ``with_data`` and its own coordinates, then samples exactly as
    ``pm.sample`` would: the same per-chain seeds, settings and result groups. Returns None
    (the caller then uses ``pm.sample``) for a model that cannot be keyed.
    """
    import nutpie
    from pymc.backends.arviz import patch_nutpie_idata
    from pymc.progress_bar import NutpieProgressBarManager
    from pymc.util import get_random_generator

    prepare = getattr(nutpie.compile_pymc, "_prepare_dims_and_coords", None)
    if prepare is None or not hasattr(nutpie.compile_pymc.CompiledPyMCModel, "with_data"):
        return None  # a nutpie without the pieces used here: compile as pm.sample does
    try:
        copy = _shared_copy(model)
        found = None if copy is None else _nutpie_structure(copy)
    except Exception:  # the cache is an economy: pm.sample then compiles as it always did
        return None
    if found is None:
        return None
    try:
        entry = _NUTPIE_CACHE.get(found.key, lambda: _compile_nutpie(copy, found))
    except Uncacheable:
        return None
    values = found.values()
    with entry.lock:
        cached: _Nutpie = entry.value
        updates = {}
        for var, value in zip(cached.data, values, strict=True):
            if isinstance(var.type, TensorType):
                # the compiled copy's own variables (its initial point reads them) and
                # nutpie's copy of their values
                var.set_value(value)
                if var in cached.compiled.shared_var_keys:
                    updates[var.name] = value
        compiled = cached.compiled.with_data(**updates)
        dims, coords = prepare(model, compiled.shape_info, compiled.reparameterized_names)
        compiled = dataclasses.replace(compiled, dims=dims, _coords=coords)
        # the seeds pm.sample derives from random_seed, so both paths give the same draws
        seeds = [rng.integers(2**30) for rng in get_random_generator(random_seed).spawn(chains)]
        cores = min(min(4, os.cpu_count() or 1) if cores is None else cores, chains)
        manager = NutpieProgressBarManager(chains=chains, draws=draws, progressbar=progressbar)
        start = time.time()
        with manager:
            result = nutpie.sample(compiled, draws=draws, tune=max(tune, 1), chains=chains,
                                   cores=cores, seed=int(seeds[0]), save_warmup=False,
                                   store_unconstrained=False, progress_bar=False,
                                   progress_callback=manager.update,
                                   target_accept=target_accept)
        patch_nutpie_idata(result, model, sampling_time=time.time() - start)
    # the copy may list its variables in another order; show them in the model's, as
    # pm.sample does
    post = result["posterior"].to_dataset()
    order = [v.name for v in model.unobserved_value_vars if v.name in post.data_vars]
    result["posterior"] = xr.DataTree(post[order + [n for n in post.data_vars if n not in order]])
    return result


def _shared_copy(model: pm.Model) -> pm.Model | None:
    """A copy of ``model`` in which every datum is a shared variable of its own.

    The copy's data (``pm.Data``, coordinate lengths, and the array constants of the model's
    graph such as observed counts, which become shared here) never alias the caller's, so
    they can be overwritten. An observed array becomes a shared variable of unknown length
    (as ``pm.Data`` are), so that nothing compiled from the copy fixes the number of cells
    and one compiled model serves data of any length; a constant read elsewhere keeps its
    static shape. None when PyMC cannot copy the model (initial values set).
    """
    from pymc.model.fgraph import ModelObservedRV, fgraph_from_model, model_from_fgraph

    if any(v is not None for v in model.rvs_to_initial_values.values()):
        return None
    fgraph, memo = fgraph_from_model(model)  # copies the shared variables
    constants = [v for v in ancestors(_model_variables(model))
                 if isinstance(v, Constant) and is_data(v)]
    for i, constant in enumerate(constants):
        old = memo.get(constant, constant)
        clients = fgraph.clients.get(old, [])
        # only PyMC's marker of an observed variable reads it, as its data: the marker's
        # output has the random variable's type, not the data's, so nothing downstream
        # carries the data's length
        observed = bool(clients) and all(
            isinstance(node.op, ModelObservedRV) and k == 1 for node, k in clients)
        new = pytensor.shared(np.array(constant.data), name=f"bayescal_data_{i}",
                              shape=(None,) * constant.ndim if observed else constant.type.shape)
        if observed:
            for node, k in list(clients):
                fgraph.change_node_input(node, k, new, import_missing=True, check=False)
        else:
            fgraph.replace(old, new, import_missing=True)
    return model_from_fgraph(fgraph, mutate_fgraph=True)


def _model_variables(model: pm.Model) -> list[Any]:
    return [*model.basic_RVs, *model.deterministics, *model.potentials,
            *(model.rvs_to_values[rv] for rv in model.observed_RVs)]


def _nutpie_structure(model: pm.Model) -> Structure | None:
    """The structure nutpie's compiled model of ``model`` depends on: the log density with
    the Jacobian, every unobserved variable and the initial point's expressions, the names
    of the variables and their shapes (nutpie fixes them when it compiles). None unless every
    datum is a shared variable (only those can be swapped into a compiled nutpie model)."""
    from pymc.initial_point import make_initial_point_expression

    if len(model.value_vars) != len(model.continuous_value_vars):
        return None
    free = model.value_vars
    start = make_initial_point_expression(
        free_rvs=model.free_RVs, rvs_to_transforms=model.rvs_to_transforms,
        initval_strategies=model.rvs_to_initial_values, return_transformed=True)
    unobserved = model.unobserved_value_vars
    graphs = [model.logp(), *unobserved, *start]
    # the shapes, from the MAP's functions (compiled once per structure too)
    functions, names, data = _map_functions(model)
    with functions.lock:
        x0 = functions.value.initial(*data)
        reported = functions.value.values(*x0, *data)
    shapes = tuple((v.name, np.shape(x)) for v, x in zip(free, x0, strict=True)) + tuple(
        (name, np.shape(x)) for name, x in zip(names, reported, strict=True))
    extra = ("nutpie", bool(model.check_bounds), tuple(v.name for v in unobserved), shapes)
    # the constants PyMC makes while deriving the log density are keyed by value
    own = {v for v in ancestors(_model_variables(model)) if isinstance(v, Constant)}
    try:
        found = structure(graphs, free, extra=extra, constants=own.__contains__)
    except Uncacheable:
        return None
    if not all(isinstance(v, SharedVariable) for v in found.data):
        return None
    return found


def _compile_nutpie(copy: pm.Model, found: Structure) -> _Nutpie:
    """nutpie's compiled model of ``copy`` (from :func:`_shared_copy`), its native callbacks
    cached on disk across processes (:mod:`bayescal._nutpie_numba`)."""
    import nutpie

    from bayescal._nutpie_numba import Unsupported, compile_model

    for i, var in enumerate(found.data):
        # nutpie's with_data finds data by name; the copy's names need not be unique (a
        # coordinate length and a pm.Data can share one), and the copy is private
        var.name = f"bayescal_data_{i}"
    try:
        compiled = compile_model(copy)  # its native callbacks from the disk cache
    except Unsupported:
        compiled = nutpie.compile_pymc_model(copy, backend="numba")
    if not set(compiled.shared_var_keys) <= set(found.data):
        raise Uncacheable("nutpie reads shared variables that are not the copy's data")
    return _Nutpie(compiled, copy, found.data)


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
