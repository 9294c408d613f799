"""nutpie's native callbacks cached on disk (bayescal._nutpie_numba): found again, and the
same numbers as PyMC's log density and nutpie's own compile."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import checkout_env


def _model(n_items: int = 5, seed: int = 1, verdicts: int = 3000):
    from bayescal import fitting, simulate
    from bayescal.models import judge_discrimination_btl as jd

    truth = simulate.judge_discrimination_truth(n_items, 3, random_seed=11)
    copy = fitting._shared_copy(jd.build(simulate.judge_discrimination_btl(
        truth, verdicts, random_seed=seed)))
    for i, var in enumerate(fitting._nutpie_structure(copy).data):
        var.name = f"bayescal_data_{i}"  # as fitting._compile_nutpie names them
    return copy


def _logp(compiled, x: np.ndarray, dim: int | None = None) -> tuple[int, float, np.ndarray]:
    out, value = np.zeros(x.size), np.zeros(1)
    pointer = ctypes.POINTER(ctypes.c_double)
    code = compiled.compiled_logp_func.ctypes(
        compiled.n_dim if dim is None else dim, x.ctypes.data_as(pointer), out.ctypes.data_as(pointer),
        value.ctypes.data_as(pointer), compiled.user_data.ctypes.data_as(ctypes.c_void_p))
    return code, float(value[0]), out


def _expand(compiled, x: np.ndarray) -> tuple[int, np.ndarray]:
    out = np.zeros(compiled.n_expanded)
    pointer = ctypes.POINTER(ctypes.c_double)
    code = compiled.compiled_expand_func.ctypes(
        compiled.n_dim, compiled.n_expanded, x.ctypes.data_as(pointer),
        out.ctypes.data_as(pointer), compiled.user_data.ctypes.data_as(ctypes.c_void_p))
    return code, out


def _cache_files(compiled) -> list[Path]:
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS, NUMBA_CACHE_PATH

    keys = [CACHED_SRC_FUNCTIONS[f.__wrapped__]
            for f in (compiled.compiled_logp_func, compiled.compiled_expand_func)]
    return [p for key in keys for p in NUMBA_CACHE_PATH.glob(f"*{key}*")]


def _assert_pymcs_numbers(compiled, model, rng: np.random.Generator) -> None:
    """The compiled callbacks give PyMC's log density (with the Jacobian), its gradient and
    every reported variable of ``model`` at three random points."""
    import pytensor

    names, slices, shapes = compiled.shape_info
    free = model.value_vars
    logp = model.logp()
    fn = pytensor.function(free, [logp, *pytensor.grad(logp, free),
                                  *model.unobserved_value_vars],
                           mode="FAST_COMPILE", on_unused_input="ignore")
    for _ in range(3):
        x = rng.normal(size=compiled.n_dim)
        value, *rest = fn(*[x[s].reshape(shape) for s, shape in
                            zip(slices[:len(free)], shapes[:len(free)], strict=True)])
        grad, values = rest[:len(free)], rest[len(free):]
        code, got, got_grad = _logp(compiled, x)
        assert code == 0
        np.testing.assert_allclose(got, value, rtol=1e-12)
        np.testing.assert_allclose(got_grad, np.concatenate([g.ravel() for g in grad]),
                                   rtol=1e-10, atol=1e-10)
        code, expanded = _expand(compiled, x)
        by_name = {n: expanded[s].reshape(shape)
                   for n, s, shape in zip(names, slices, shapes, strict=True)}
        assert code == 0
        for var, want in zip(model.unobserved_value_vars, values, strict=True):
            np.testing.assert_allclose(by_name[var.name], want, rtol=1e-12)


def test_callbacks_are_found_on_disk_and_compute_pymcs_log_density():
    """A second compile of one structure loads both callbacks from the disk cache (counted by
    numba's cache hits) instead of compiling them, and both give PyMC's log density,
    gradient and reported values at random points: on the model's own data, and, through
    nutpie's ``with_data``, on a data set with fewer cells (one structure: the copy's data
    have no fixed length). Catches callbacks numba refuses to cache (a closure or data in
    their code), a key that is not reproduced, callbacks that read the wrong datum or the
    wrong element of nutpie's table (shapes, sizes, addresses), and a cell count baked into
    the compiled code."""
    import pytensor

    from bayescal import _nutpie_numba, fitting

    model, fewer = _model(), _model(seed=2, verdicts=40)
    assert fewer["count"].get_value().size < model["count"].get_value().size
    assert fitting._nutpie_structure(model).key == fitting._nutpie_structure(fewer).key
    first = _nutpie_numba.compile_model(model)  # compiles, or loads an earlier run's entry
    second = _nutpie_numba.compile_model(model)
    assert (second.compiled_logp_func.cache_hits, second.compiled_expand_func.cache_hits) \
        == (1, 1)
    assert _cache_files(second)
    # the other data set's numbers, by the names fitting._sample_nutpie passes them
    own = fitting._nutpie_structure(model).data
    other = fitting._nutpie_structure(fewer).values()
    second = second.with_data(**{var.name: value for var, value in zip(own, other, strict=True)
                                 if var in second.shared_var_keys})

    rng = np.random.default_rng(3)
    for compiled, source in ((first, model), (second, fewer)):
        _assert_pymcs_numbers(compiled, source, rng)
    # nutpie's codes: a gradient that is not finite, a vector of another length
    assert _logp(first, np.full(first.n_dim, 1e300))[0] == 3
    assert _logp(first, np.zeros(first.n_dim + 1), dim=first.n_dim + 1)[0] == -1
    # with PyTensor's numba cache off there is no key: the callbacks are not cached either
    assert _nutpie_numba._inner_key(first.logp_func) is not None
    with pytensor.config.change_flags(numba__cache=False):
        assert _nutpie_numba._inner_key(first.logp_func) is None


def test_a_data_table_of_another_layout_is_refused_before_compiling(monkeypatch):
    """The callbacks read nutpie's data table by position; a nutpie whose table is laid out
    otherwise (here: aligned fields) is refused, and fitting then uses nutpie's own compile.
    Catches a missing layout check (callbacks reading addresses that are not there)."""
    from nutpie import compile_pymc

    from bayescal import _nutpie_numba

    original = compile_pymc.make_user_data

    def aligned(keys, data):
        table = original(keys, data)
        return np.zeros((), dtype=np.dtype([("flag", np.uint8), *table.dtype.descr],
                                            align=True))

    monkeypatch.setattr(compile_pymc, "make_user_data", aligned)
    with pytest.raises(_nutpie_numba.Unsupported, match="table"):
        _nutpie_numba.compile_model(_model())


def test_an_unchecked_nutpie_release_is_refused(monkeypatch):
    """The callbacks' C signature is nutpie's private convention; a release they were not
    checked against takes nutpie's own compile. Catches a missing release gate (a new nutpie
    calling the cached native code with another signature: a crash, or wrong numbers)."""
    from bayescal import _nutpie_numba

    monkeypatch.setattr(_nutpie_numba, "version",
                        lambda name: "0.17.0" if name == "nutpie" else "1.0")
    with pytest.raises(_nutpie_numba.Unsupported, match="0.17.0"):
        _nutpie_numba.compile_model(_model())


_SECOND_PROCESS = """
import json, time
from tests.test_nutpie_cache import _model
from bayescal import _nutpie_numba
model = _model()
start = time.process_time()
compiled = _nutpie_numba.compile_model(model)
print(json.dumps({"hits": [compiled.compiled_logp_func.cache_hits,
                           compiled.compiled_expand_func.cache_hits],
                  "cpu": time.process_time() - start}))
"""


@pytest.mark.slow
def test_a_fresh_process_loads_the_callbacks_another_process_compiled(tmp_path):
    """Two processes with one empty PyTensor cache directory: the first compiles the
    callbacks, the second loads both (numba's cache hits) and so does not compile them.
    Catches a key that differs between processes (one holding an object's id or a random
    name) and a cache outside PyTensor's directory. (Cold caches: slow.)"""
    env = checkout_env()
    env["PYTENSOR_FLAGS"] = f"base_compiledir={tmp_path}"
    env["OPENBLAS_NUM_THREADS"] = "1"
    root = Path(__file__).resolve().parents[1]
    runs = [json.loads(subprocess.run([sys.executable, "-c", _SECOND_PROCESS], env=env,
                                      cwd=root, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1])
            for _ in range(2)]
    assert [r["hits"] for r in runs] == [[0, 0], [1, 1]]
    assert list((tmp_path / "numba").glob("*bayescal_logp_*"))


@pytest.mark.slow
def test_cached_callbacks_draw_what_nutpies_own_compile_draws():
    """Seed for seed, nutpie samples the same draws from this module's compiled model as from
    ``nutpie.compile_pymc_model`` (bit for bit: the callbacks return the same numbers and
    codes, and the initial point is nutpie's). Catches a changed initial point or jitter, or
    any difference in the log density. (nutpie's own compile: slow.)"""
    import nutpie

    from bayescal import _nutpie_numba

    model = _model()
    ours = _nutpie_numba.compile_model(model)
    theirs = nutpie.compile_pymc_model(model, backend="numba")
    x = np.random.default_rng(0).normal(size=ours.n_dim)
    assert _logp(ours, x)[1] == _logp(theirs, x)[1]
    options = {"draws": 100, "tune": 100, "chains": 2, "seed": 5, "progress_bar": False}
    a, b = nutpie.sample(ours, **options), nutpie.sample(theirs, **options)
    np.testing.assert_array_equal(a.posterior["ability"].values, b.posterior["ability"].values)
    np.testing.assert_array_equal(a.sample_stats["diverging"].values,
                                  b.sample_stats["diverging"].values)


@pytest.mark.slow
def test_a_fit_on_more_cells_reuses_the_compiled_model_and_draws_as_a_fresh_compile():
    """bc.fit on a data set with more cells than the first fit's: no second compile (the
    cache's count), and seed for seed the draws of a fresh compile of that model. Catches a
    cell count kept in the key (two compiles) or baked into the compiled code (other draws).
    (Three nutpie fits: slow.)"""
    import bayescal as bc
    from bayescal import fitting, simulate
    from bayescal.models import judge_discrimination_btl as jd

    truth = simulate.judge_discrimination_truth(5, 3, random_seed=11)
    few, many = (jd.build(simulate.judge_discrimination_btl(truth, n, random_seed=n))
                 for n in (40, 3000))
    assert few["count"].get_value().size < many["count"].get_value().size
    options = {"draws": 150, "tune": 150, "chains": 2, "random_seed": 7, "check": False}
    fitting._NUTPIE_CACHE.clear()
    bc.fit(few, **options)
    cached = bc.fit(many, **options)
    assert (fitting._NUTPIE_CACHE.hits, fitting._NUTPIE_CACHE.misses) == (1, 1)
    fitting._NUTPIE_CACHE.clear()
    fresh = bc.fit(many, **options)
    np.testing.assert_array_equal(cached["posterior"]["ability"].values,
                                  fresh["posterior"]["ability"].values)


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["judge_discrimination_btl", "order_effect_btl",
                                  "low_rank_judges", "human_calibration", "misclassification",
                                  "score_calibration"])
def test_every_models_callbacks_give_pymcs_numbers(stem):
    """For every registered model (its registered simulation), the callbacks compiled here
    give PyMC's log density, gradient and reported variables. Catches data of another dtype
    or rank viewed wrongly (matrices, scalars, booleans), which the BTL model alone does not
    have. (One compile per model: slow.)"""
    from bayescal import _nutpie_numba, fitting, registry

    entry = registry.get(stem)
    model = entry.build(entry.simulation.draw(random_seed=1),
                        **entry.options_for("build", entry.contract.options))
    copy = fitting._shared_copy(model)
    found = fitting._nutpie_structure(copy)
    assert found is not None
    for i, var in enumerate(found.data):
        var.name = f"bayescal_data_{i}"
    _assert_pymcs_numbers(_nutpie_numba.compile_model(copy), copy, np.random.default_rng(5))
