"""nutpie's numba model with its native entry points cached on disk across processes.

``nutpie.compile_pymc_model(model, backend="numba")`` compiles the log density and its
gradient with PyTensor's numba backend, whose functions PyTensor already caches on disk, and
then wraps them in two C callbacks (the log density with its gradient, and the expansion to
every reported variable) that read the model's data from a pointer table. nutpie compiles
those callbacks afresh in every process: they close over the data and the inner function,
which numba cannot cache. Typing and optimising them takes most of a first fit's fixed cost
(on the judge-discrimination model of ``bench/run.py``, about 12 of the 14 CPU seconds of a
compile; PyTensor's rewrites and its cached inner functions take the rest).

:func:`compile_model` builds the same ``CompiledPyMCModel`` from nutpie's own pieces (its
PyTensor functions, initial point, pointer table and coordinates) with callbacks written here
as plain source: each reads the data pointers, sizes and shapes from nutpie's table by
position, calls PyTensor's function and returns nutpie's status codes. Having no closure and
no data in their code, they are cached by numba in PyTensor's own numba cache directory
(``<base_compiledir>/numba``, the one PyTensor's functions use), under a key that fixes
everything their machine code depends on:

* the callbacks' source (the number of free values and of reported values, the data's dtypes
  and ranks, which data each callback reads);
* PyTensor's cache keys of the two inner functions (every operation and constant of their
  rewritten graphs) and the types of their inputs and outputs, static shapes included;
* the versions of numba, llvmlite, PyTensor, PyMC and nutpie.

A change of any of them is a different key, so a stale entry is never loaded; numba itself
also discards an index written by another numba version. Deleting the directory empties the
cache. When PyTensor's numba cache is off (``PYTENSOR_FLAGS=numba__cache=False``) or an inner
function has no cache key, the callbacks are compiled for this process only. Anything of
nutpie's that is not as expected raises :class:`Unsupported`, and the caller compiles with
nutpie as before.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from typing import Any

import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["Unsupported", "compile_model"]

# bumped when the callbacks' calling convention with nutpie changes
_FORMAT = 1
# the nutpie releases whose callback signature and private pieces this module was checked
# against: native code called with another signature reads memory that is not there (a crash
# or wrong numbers, not an exception), so any other release takes nutpie's own compile
_CHECKED_NUTPIE = ("0.16.",)


class Unsupported(Exception):
    """nutpie's internals are not what this module was written against."""


@intrinsic
def _pointer(typingctx: Any, address: Any) -> Any:
    """The integer ``address`` as a ``void *`` (to view data from nutpie's table)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


_LOGP_SIGNATURE = types.int64(types.uint64, types.CPointer(types.double),
                              types.CPointer(types.double), types.CPointer(types.double),
                              types.voidptr)
_EXPAND_SIGNATURE = types.int64(types.uint64, types.uint64, types.CPointer(types.double),
                                types.CPointer(types.double), types.voidptr)


def _views(positions: list[int], layout: list[tuple[str, int]], n_table: int) -> str:
    """Source lines that view the data at ``positions`` of nutpie's table as arrays
    ``d0, d1, ...``. The table is nutpie's packed record: the data addresses, then their
    sizes, then each datum's shape (``layout`` gives dtype and rank per datum)."""
    n = len(layout)
    offsets = np.cumsum([0] + [ndim for _, ndim in layout]).tolist()
    lines = [f"        table = numba.carray(user_data, ({n_table},), np.uint64)"]
    for k, position in enumerate(positions):
        dtype, ndim = layout[position]
        start = 2 * n + offsets[position]
        shape = "".join(f"int(table[{start + a}]), " for a in range(ndim))
        lines.append(f"        d{k} = numba.carray(_pointer(table[{position}]), ({shape}), "
                     f"np.{dtype})")
    return "\n".join(lines)


def _sources(n_dim: int, n_expanded: int, layout: list[tuple[str, int]],
             logp_positions: list[int], expand_positions: list[int],
             n_table: int) -> tuple[str, str]:
    """The two callbacks, with nutpie's status codes: the log density returns 0, -1 (wrong
    dimension), 1 (an error), 3 (a gradient that is not finite) or 4 (a log density that is
    not finite); the expansion 0, -1 or -2 (an error)."""
    logp_args = "".join(f", d{k}" for k in range(len(logp_positions)))
    expand_args = "".join(f", d{k}" for k in range(len(expand_positions)))
    logp = f"""
def bayescal_nutpie_logp(dim, x_, out_, logp_, user_data):
    if dim != {n_dim}:
        return -1
    try:
        x = numba.carray(x_, ({n_dim},))
        out = numba.carray(out_, ({n_dim},))
{_views(logp_positions, layout, n_table)}
        value, grad = inner(x{logp_args})
        if grad.shape[0] != {n_dim}:
            return 1
        logp_[0] = value
        finite = True
        for i in range({n_dim}):
            out[i] = grad[i]
            if not np.isfinite(grad[i]):
                finite = False
        if not finite:
            return 3
        if not np.isfinite(value):
            return 4
    except Exception:
        return 1
    return 0
"""
    expand = f"""
def bayescal_nutpie_expand(dim, expanded, x_, out_, user_data):
    if dim != {n_dim}:
        return -1
    if expanded != {n_expanded}:
        return -1
    try:
        x = numba.carray(x_, ({n_dim},))
        out = numba.carray(out_, ({n_expanded},))
{_views(expand_positions, layout, n_table)}
        (values,) = inner(x{expand_args})
        if values.shape[0] != {n_expanded}:
            return -2
        for i in range({n_expanded}):
            out[i] = values[i]
    except Exception:
        return -2
    return 0
"""
    return logp, expand


def _inner_key(function: Any) -> str | None:
    """PyTensor's numba cache key of a compiled function's graph, with the types of its
    inputs and outputs (the key leaves static shapes to the types); None if PyTensor does
    not cache it."""
    from pytensor.configdefaults import config
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS

    if not config.numba__cache:
        return None
    key = CACHED_SRC_FUNCTIONS.get(function.vm.jit_fn.py_func)
    if key is None:
        return None
    fgraph = function.maker.fgraph
    return repr((key, [str(v.type) for v in fgraph.inputs],
                 [str(v.type) for v in fgraph.outputs]))


def _callback(source: str, name: str, inner: Any, signature: Any,
              key: str | None) -> Any:
    """The C callback defined by ``source``, cached under ``key`` (None: not cached)."""
    from pytensor.link.numba.cache import compile_numba_function_src

    # a module name lets numba rebuild the callback's environment when it loads it
    names = {"__name__": __name__, "numba": numba, "np": np, "_pointer": _pointer,
             "inner": inner}
    function = compile_numba_function_src(source, name, global_env=names, cache_key=key)
    if key is not None:
        try:
            return numba.cfunc(signature, cache=True)(function)
        except Exception:  # an unreadable cache entry (a disk cache is an economy, never a must)
            function = compile_numba_function_src(source, name, global_env=dict(names))
    return numba.cfunc(signature)(function)


def compile_model(model: Any) -> Any:
    """nutpie's compiled numba model of ``model``, as ``nutpie.compile_pymc_model(model,
    backend="numba")`` makes it, with its callbacks from the disk cache when an earlier
    process compiled the same ones (the module docstring says what the key holds).

    Raises
    ------
    Unsupported
        nutpie's private pieces used here are missing or not laid out as expected.
    """
    from pymc.initial_point import make_initial_point_fn

    release = version("nutpie")
    if not release.startswith(_CHECKED_NUTPIE):
        raise Unsupported(f"nutpie {release} is not a release these callbacks were checked "
                          f"against ({', '.join(r + 'x' for r in _CHECKED_NUTPIE)})")
    try:
        from nutpie import compile_pymc as pieces
        make_functions, lock = pieces._make_functions, pieces._wrap_with_lock
        make_user_data, prepare = pieces.make_user_data, pieces._prepare_dims_and_coords
        compiled_type = pieces.CompiledPyMCModel
    except (ImportError, AttributeError) as err:
        raise Unsupported(str(err)) from err

    # nutpie's defaults for the numba backend: the support point with a U(-1, 1) jitter of
    # every free variable
    initial = lock(make_initial_point_fn(
        model=model, overrides=None, default_strategy="support_point",
        jitter_rvs=set(model.free_RVs), return_transformed=True))
    (n_dim, n_expanded, logp_fn, expand_fn, initial_point_fn, shape_info,
     reparameterized) = make_functions(model, mode="NUMBA", compute_grad=True,
                                       join_expanded=True, pymc_initial_point_fn=initial,
                                       var_names=None)
    # the data both functions read, each once, with names fixed by position (nutpie's own
    # keys are random, and they name the fields of the table)
    shared: list[Any] = []
    for var in [*logp_fn.get_shared(), *expand_fn.get_shared()]:
        if var not in shared:
            shared.append(var)
    keys = {var: f"data_{i}" for i, var in enumerate(shared)}
    data = {}
    for var in shared:
        value = np.array(var.get_value(), order="C", copy=True)
        value.flags.writeable = False
        data[keys[var]] = value
    table = make_user_data(keys, data)
    layout = [(value.dtype.name, value.ndim) for value in data.values()]
    expected = np.concatenate([[v.ctypes.data for v in data.values()],
                               [v.size for v in data.values()],
                               *[np.asarray(v.shape, dtype=np.uint64) for v in data.values()]]
                              ).astype(np.uint64)
    if (table.dtype.itemsize != 8 * expected.size
            or not np.array_equal(np.frombuffer(table.tobytes(), np.uint64), expected)
            or any(dtype not in np.sctypeDict for dtype, _ in layout)):
        raise Unsupported("nutpie's data table is not the packed record of addresses, sizes "
                          "and shapes")
    logp_positions = [shared.index(v) for v in logp_fn.get_shared()]
    expand_positions = [shared.index(v) for v in expand_fn.get_shared()]
    logp_source, expand_source = _sources(n_dim, n_expanded, layout, logp_positions,
                                          expand_positions, expected.size)
    inner_keys = (_inner_key(logp_fn), _inner_key(expand_fn))
    key = None
    if None not in inner_keys:
        versions = tuple(version(p) for p in ("numba", "llvmlite", "pytensor", "pymc", "nutpie"))
        key = hashlib.sha256(repr((_FORMAT, logp_source, expand_source, inner_keys,
                                   versions)).encode()).hexdigest()
    try:
        logp = _callback(logp_source, "bayescal_nutpie_logp", logp_fn.vm.jit_fn,
                         _LOGP_SIGNATURE, None if key is None else f"bayescal_logp_{key}")
        expand = _callback(expand_source, "bayescal_nutpie_expand", expand_fn.vm.jit_fn,
                           _EXPAND_SIGNATURE, None if key is None else f"bayescal_expand_{key}")
    except numba.core.errors.NumbaError as err:  # data of a type the callbacks cannot view
        raise Unsupported(f"the callbacks do not compile: {err}") from err
    dims, coords = prepare(model, shape_info, reparameterized)
    return compiled_type(
        _n_dim=n_dim, dims=dims, _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp, compiled_expand_func=expand, initial_point_func=initial_point_fn,
        shared_data=data, shared_var_keys=keys, user_data=table, n_expanded=n_expanded,
        shape_info=shape_info, logp_func=logp_fn, expand_func=expand_fn,
        reparameterized_names=reparameterized)
