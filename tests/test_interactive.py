"""What an interactive user meets first: a fast import, a fast --help, progress bars only when
someone is watching. The timings themselves are printed by bench/interactive.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bayescal.progress import interactive

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_import_and_help_load_neither_pandas_nor_pymc():
    """Catches an eager import added to bayescal/__init__.py or bayescal/cli.py, which puts
    seconds on `bayescal --help` and on every frequentist-only script."""
    heavy = {"pandas", "scipy", "pymc", "arviz", "arviz_plots", "matplotlib"}
    assert not heavy & _modules_after("import bayescal, bayescal.cli")
    assert not heavy & _modules_after(
        "from bayescal.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")


def test_importing_the_twins_loads_neither_scipy_stats_nor_pymc():
    """scipy.stats takes about a second to import and the twins need one normal quantile
    (bayescal.schema.z_value) or a p-value (scipy.special.ndtr). Catches a module-level
    scipy.stats import creeping back into a twin, and a twin importing PyMC."""
    import pkgutil

    import bayescal.frequentist

    names = [f"bayescal.frequentist.{m.name}"
             for m in pkgutil.iter_modules(bayescal.frequentist.__path__)]
    loaded = _modules_after("\n".join(f"import {n}" for n in names))
    assert not {"scipy.stats", "pymc", "arviz"} & loaded


def test_lazy_names_resolve_to_functions_not_modules():
    import bayescal as bc

    # importing the submodule must not replace the function bc.contrasts by the module
    import bayescal.contrasts

    assert callable(bc.contrasts) and callable(bc.leaderboard) and callable(bc.fit)
    assert bc.plots.__name__ == "bayescal.plots"
    with pytest.raises(AttributeError):
        bc.no_such_name  # noqa: B018


@pytest.mark.parametrize(("env", "expected"), [
    ({"BAYESCAL_PROGRESS": "1", "PYTEST_CURRENT_TEST": "x"}, True),
    ({"BAYESCAL_PROGRESS": "0"}, False),
    ({"CI": "true"}, False),
    ({"PYTEST_CURRENT_TEST": "x"}, False),
])
def test_progress_default_follows_the_environment(monkeypatch, env, expected):
    for name in ("BAYESCAL_PROGRESS", "CI", "PYTEST_CURRENT_TEST"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert interactive() is expected


def test_progress_in_a_terminal_but_not_in_a_pipe(monkeypatch):
    for name in ("BAYESCAL_PROGRESS", "CI", "PYTEST_CURRENT_TEST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)

    class Stream:
        def __init__(self, tty: bool):
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert interactive() is True
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert interactive() is False


def test_every_cli_function_that_uses_pandas_imports_it():
    """cli.py imports pandas inside functions (so `bayescal --help` stays fast); a function that
    uses ``pd`` without its own import fails only when that command runs (as `demo --dial` did,
    whose test is slow-marked). Static check over every function of the module."""
    import ast

    import bayescal.cli

    tree = ast.parse(Path(bayescal.cli.__file__).read_text())
    missing = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        body = [n for stmt in node.body for n in ast.walk(stmt)]
        uses = any(isinstance(n, ast.Name) and n.id == "pd" for n in body)
        imports = any(isinstance(n, ast.Import) and any(a.asname == "pd" for a in n.names)
                      for n in body)
        if uses and not imports:
            missing.append(node.name)
    assert not missing, f"functions using pd without importing pandas: {missing}"


# ------------------------------------------------------------------ compiled once per structure
# bc.fit compiles a model's functions once per *structure* (bayescal._structure: the graph with
# its data as inputs) and passes each model's own numbers. These tests pin that a cached
# function never answers with another model's data, and that different structures never share.

def _judge_data(seed: int, n_items: int = 6):
    from bayescal import simulate

    truth = simulate.judge_discrimination_truth(n_items, 3, random_seed=11)
    return simulate.judge_discrimination_btl(truth, 4000, random_seed=seed)


@pytest.fixture(scope="module")
def judge_datasets():
    return [_judge_data(1), _judge_data(2)]


def _ability(result) -> np.ndarray:
    return result["posterior"]["ability"].values.ravel()


def test_map_of_a_second_model_of_the_same_structure_uses_its_own_data(judge_datasets):
    """Catches a structure cache that returns the compiled function with the first model's
    data baked in (the second MAP would then equal the first), or one that recompiles."""
    import bayescal as bc
    from bayescal import fitting
    from bayescal.frequentist import judge_discrimination_btl as twin
    from bayescal.models import judge_discrimination_btl as jd

    first, second = (jd.build(d, priors=jd.Priors.flat()) for d in judge_datasets)
    map_first = bc.fit(first, "map")
    hits, misses = fitting._MAP_CACHE.hits, fitting._MAP_CACHE.misses
    map_second = bc.fit(second, "map")
    assert (fitting._MAP_CACHE.hits, fitting._MAP_CACHE.misses) == (hits + 1, misses)
    for data, mode in zip(judge_datasets, (map_first, map_second), strict=True):
        mle = twin.fit(data)  # flat priors: the MAP is the MLE
        np.testing.assert_allclose(_ability(mode), mle.params["ability"].values, atol=1e-6)
        np.testing.assert_allclose(mode["posterior"]["discrimination"].values.ravel(),
                                   mle.params["discrimination"].values, rtol=1e-6)
    assert np.max(np.abs(_ability(map_first) - _ability(map_second))) > 1e-2


def test_map_structures_that_differ_do_not_share(judge_datasets):
    """A prior scale (a constant of the graph) and the number of items are structure: each
    gets its own compiled function and its own optimum. Catches a key that abstracts
    constants it must keep (then the default-prior MAP would equal the flat one)."""
    import bayescal as bc
    from bayescal import fitting
    from bayescal.frequentist import judge_discrimination_btl as twin
    from bayescal.models import judge_discrimination_btl as jd

    data = judge_datasets[0]
    bc.fit(jd.build(data, priors=jd.Priors.flat()), "map")
    for new_data, priors in ((data, jd.Priors(ability_sd=0.5, discrimination_sd=0.3)),
                             (_judge_data(1, n_items=7), jd.Priors.flat())):
        misses = fitting._MAP_CACHE.misses
        mode = bc.fit(jd.build(new_data, priors=priors), "map")
        assert fitting._MAP_CACHE.misses == misses + 1
        penalty = None if priors == jd.Priors.flat() else priors
        reference = twin.fit(new_data, penalty=penalty)
        np.testing.assert_allclose(_ability(mode), reference.params["ability"].values,
                                   atol=1e-6)


def test_map_reads_the_models_current_data_and_graph(judge_datasets):
    """The same model object refitted after pm.set_data, then after adding a term. Catches
    graphs or data kept from the previous call: swapping the two items of every cell flips
    the sign of every ability; a Potential that pulls ability[0] to 0 must move it."""
    import pymc as pm

    import bayescal as bc
    from bayescal.models import judge_discrimination_btl as jd

    model = jd.build(judge_datasets[0], priors=jd.Priors.flat())
    before = _ability(bc.fit(model, "map"))
    i, j = model["item_i"].get_value(), model["item_j"].get_value()
    pm.set_data({"item_i": j, "item_j": i}, model=model)
    np.testing.assert_allclose(_ability(bc.fit(model, "map")), -before, atol=1e-6)
    pm.set_data({"item_i": i, "item_j": j}, model=model)
    with model:
        pm.Potential("pull", -1e4 * model["ability"][0] ** 2)
    pulled = _ability(bc.fit(model, "map"))
    assert abs(pulled[0]) < 1e-2 < abs(before[0])


def test_structure_keeps_scalars_and_abstracts_arrays():
    """The key itself: a scalar constant (a prior's scale) is structure, an array constant
    (observed counts) is data; one shared variable used twice is not two."""
    import pytensor
    import pytensor.tensor as pt

    from bayescal._structure import structure

    x = pt.dvector("x")
    key = lambda graph: structure([graph], [x]).key  # noqa: E731
    assert key(x * 2.0) != key(x * 3.0)
    one, two = structure([x * np.ones(3)], [x]), structure([x * np.arange(3.0)], [x])
    assert one.key == two.key
    np.testing.assert_array_equal(two.values()[0], np.arange(3.0))
    d, e = pytensor.shared(np.ones(3)), pytensor.shared(np.ones(3))
    assert key(x * d + d) != key(x * d + e)


def test_abstracted_graph_reads_its_inputs_and_keeps_its_roots():
    """Structure.abstracted copies the graph once with the data swapped for fresh inputs.
    Catches a copy that also copies a root output (a free variable reported as it is and
    read by nothing else: the compiled function would then miss that input) or leaves a
    datum in the graph (the cached function would read the first model's numbers)."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph.traversal import ancestors

    from bayescal._structure import structure

    x = pt.dvector("x")
    d = pytensor.shared(np.arange(20.0), name="d")
    c = pt.constant(np.full(20, 2.0))
    y = pt.dvector("y")  # a free variable reported as it is, read by no operation
    found = structure([x * d + c, y, d], [x, y])
    (total, same, datum), inputs = found.abstracted([x * d + c, y, d])
    assert same is y and datum is inputs[list(found.data).index(d)]
    assert not {d, c} & set(ancestors([total]))
    f = pytensor.function([x, y, *inputs], [total, same, datum], mode="FAST_COMPILE")
    values = [np.arange(20.0) + 10.0 if v is d else np.full(20, -1.0) for v in found.data]
    got = f(np.ones(20), np.zeros(2), *values)
    np.testing.assert_array_equal(got[0], np.arange(20.0) + 9.0)
    np.testing.assert_array_equal(got[2], np.arange(20.0) + 10.0)


def test_map_compiles_three_functions_once_per_structure(judge_datasets, monkeypatch):
    """A first MAP of a structure compiles its three functions (loss and gradient, reported
    values, initial point) with the plain Python linker, the loss and gradient with
    FAST_COMPILE's canonicalization and the two evaluated once without it; a refit compiles
    none; PyTensor's traceback setting, lowered while they are built, is restored. Catches a
    MAP that compiles per call or a function more, FAST_COMPILE's VM linker coming back (it
    imports setuptools, a tenth of a first call), the canonicalization dropped from the
    loss (its evaluations 1.6 times as long on the human-calibration model) or kept for the
    other two (a tenth of a first call), and a config flag left changed for the user."""
    import pymc.pytensorf
    import pytensor
    from pytensor.link.basic import PerformLinker

    import bayescal as bc
    from bayescal import fitting
    from bayescal._structure import StructureCache
    from bayescal.models import judge_discrimination_btl as jd

    monkeypatch.setattr(fitting, "_MAP_CACHE", StructureCache())  # none compiled before
    compiled = []
    original = pymc.pytensorf.compile

    def counting(*args, **kwargs):
        compiled.append(original(*args, **kwargs))
        return compiled[-1]

    monkeypatch.setattr(pymc.pytensorf, "compile", counting)
    limit = pytensor.config.traceback__limit
    model = jd.build(_judge_data(3))
    bc.fit(model, "map")
    assert len(compiled) == 3
    assert all(isinstance(f.maker.linker, PerformLinker) for f in compiled)
    excluded = [set(f.maker.mode.provided_optimizer.exclude) for f in compiled]
    assert excluded == [set(), {"canonicalize"}, {"canonicalize"}]
    bc.fit(model, "map")
    bc.fit(jd.build(_judge_data(4)), "map")
    assert len(compiled) == 3
    assert pytensor.config.traceback__limit == limit
    assert (fitting._MAP_CACHE.hits, fitting._MAP_CACHE.misses) == (2, 1)


def test_map_builds_and_compiles_with_the_garbage_collector_paused(monkeypatch):
    """The MAP's graphs are built and compiled with Python's cyclic collector off, and it is
    on again afterwards, also when building fails. Catches the pause lost (0.08 s of a
    first MAP back) and a collector left off for the user (cyclic garbage never freed), also
    after an error."""
    import gc

    import bayescal as bc
    from bayescal import fitting
    from bayescal.models import judge_discrimination_btl as jd

    seen = []
    original = fitting._map_functions

    def recording(model):
        seen.append(gc.isenabled())
        return original(model)

    def failing(model):
        raise RuntimeError("compile failed")

    assert gc.isenabled()
    model = jd.build(_judge_data(5))
    monkeypatch.setattr(fitting, "_map_functions", recording)
    bc.fit(model, "map")
    assert seen == [False]
    assert gc.isenabled()
    monkeypatch.setattr(fitting, "_map_functions", failing)
    with pytest.raises(RuntimeError, match="compile failed"):
        bc.fit(model, "map")
    assert gc.isenabled()


def test_gc_pause_leaves_a_disabled_collector_disabled():
    """A caller who turned the collector off (or another thread's pause) finds it off after
    a pause, also after an error. Catches a pause that turns the collector on at its end
    whatever the state it found."""
    import gc

    from bayescal.fitting import _gc_paused

    gc.disable()
    try:
        with _gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        with pytest.raises(ValueError, match="inside"), _gc_paused():
            raise ValueError("inside")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nutpie_structure_is_data_free_but_keeps_priors(judge_datasets):
    """The key of nutpie's compiled model: equal for two data sets of one design, different
    for another prior scale (a constant PyMC derives into the log density, which cannot be
    swapped into a compiled nutpie model and so must be keyed by value)."""
    from bayescal import fitting
    from bayescal.models import judge_discrimination_btl as jd

    def key(data, priors):
        return fitting._nutpie_structure(fitting._shared_copy(jd.build(data, priors=priors))).key

    a, b = judge_datasets
    assert key(a, jd.Priors()) == key(b, jd.Priors())
    assert key(a, jd.Priors()) != key(a, jd.Priors(ability_sd=1.0))


def _mirrored(model):
    """The model's twin with item_i and item_j swapped in every cell: every ability flips."""
    import pymc as pm

    i, j = model["item_i"].get_value(), model["item_j"].get_value()
    pm.set_data({"item_i": j, "item_j": i}, model=model)
    return model


def test_nutpie_second_fit_of_a_structure_does_not_recompile(judge_datasets):
    """The second nutpie fit of a structure reuses the compiled model with its own data (a
    mirrored design, whose abilities are the first's with the sign flipped). Catches stale
    data in the cached nutpie model (the posterior would sit at the first model's mode) and
    a result that differs in form from a first fit."""
    import bayescal as bc
    from bayescal import fitting
    from bayescal.models import judge_discrimination_btl as jd

    first, second = jd.build(judge_datasets[0]), _mirrored(jd.build(judge_datasets[0]))
    options = {"draws": 200, "tune": 200, "chains": 2, "random_seed": 7, "check": False}
    fitting._NUTPIE_CACHE.clear()
    post_first = bc.fit(first, **options)
    post_second = bc.fit(second, **options)
    assert (fitting._NUTPIE_CACHE.hits, fitting._NUTPIE_CACHE.misses) == (1, 1)
    mode = _ability(bc.fit(first, "map"))
    mean_first = post_first["posterior"]["ability"].mean(("chain", "draw")).values
    mean_second = post_second["posterior"]["ability"].mean(("chain", "draw")).values
    assert np.max(np.abs(mean_first - mode)) < 0.05 < 0.5 < np.max(np.abs(mode))
    assert np.max(np.abs(mean_second + mode)) < 0.05
    for post in (post_first, post_second):
        assert set(post.children) == {"posterior", "sample_stats", "observed_data",
                                      "constant_data", "log_likelihood"}
        assert post.attrs["nuts_sampler"] == "nutpie"
        assert list(post["posterior"].data_vars) == ["ability", "log_discrimination",
                                                     "discrimination"]
        assert post["posterior"].attrs["sampling_time"] > 0
    labels = post_second["log_likelihood"]["outcome"].coords["item_i_label"].values
    np.testing.assert_array_equal(
        labels, post_first["log_likelihood"]["outcome"].coords["item_j_label"].values)


@pytest.mark.slow
def test_nutpie_cached_fit_draws_as_a_fresh_compile(judge_datasets):
    """Seed for seed, a fit through the cache draws exactly what a fresh compile of that model
    draws (three nutpie compiles: slow)."""
    import bayescal as bc
    from bayescal import fitting
    from bayescal.models import judge_discrimination_btl as jd

    options = {"draws": 150, "tune": 150, "chains": 2, "random_seed": 7, "check": False}
    fitting._NUTPIE_CACHE.clear()
    bc.fit(jd.build(judge_datasets[0]), **options)
    cached = bc.fit(jd.build(judge_datasets[1]), **options)
    fitting._NUTPIE_CACHE.clear()
    fresh = bc.fit(jd.build(judge_datasets[1]), **options)
    np.testing.assert_array_equal(cached["posterior"]["ability"].values,
                                  fresh["posterior"]["ability"].values)
    # the same form as pm.sample's own nutpie path
    reference = bc.fit(jd.build(judge_datasets[1]), **options, nuts={})
    assert set(reference.children) == set(cached.children)
    assert set(reference["posterior"].attrs) == set(cached["posterior"].attrs)
    assert set(reference["sample_stats"].data_vars) == set(cached["sample_stats"].data_vars)


def test_a_twin_fit_imports_no_dask_yet_xarray_still_sees_dask_arrays():
    """xarray imports dask (0.7 s) on the first array it wraps unless bayescal._lazy_dask
    answers its two questions first. Catches the shortcut being lost (dask imported by a
    twin's fit) and a shortcut that hides real dask arrays from xarray afterwards."""
    pytest.importorskip("dask.array")
    code = (
        "import sys\n"
        "from bayescal import simulate\n"
        "from bayescal.frequentist import judge_discrimination_btl as twin\n"
        "import bayescal as bc\n"
        "truth = simulate.judge_discrimination_truth(5, 2, random_seed=1)\n"
        "bc.leaderboard(twin.fit(simulate.judge_discrimination_btl(truth, 2000, random_seed=2)))\n"
        "assert 'dask' not in sys.modules, 'dask imported'\n"
        "import dask.array as da, xarray as xr\n"
        "lazy = xr.DataArray(da.ones(4, chunks=2), dims='x').assign_coords(x=[1, 2, 3, 4])\n"
        "assert lazy.chunks == ((2, 2),) and float(lazy.sum()) == 4.0\n"
        "shown = repr(xr.Dataset({'v': lazy}))\n"
        "assert 'dask.array<chunksize=(2,), meta=' in shown, shown\n"
        "assert xr.Dataset({'v': lazy}).chunks == {'x': (2, 2)}\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
