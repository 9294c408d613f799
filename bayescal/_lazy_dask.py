"""xarray without the price of dask where no dask object exists.

When dask is installed (the ``test`` and ``studies`` extras install it), xarray imports it the
first time it wraps any array, numpy included: ``as_compatible_data`` asks for dask's array
type (importing ``dask.array``, about 0.45 s) and making an index asks whether the values are a
dask collection (importing ``dask``, about 0.25 s). A twin's first fit in a process paid both.

Both questions have an answer that needs no import:

* no object is a ``dask.array.Array`` before ``dask.array`` has been imported (the class is
  created by that import), so xarray's record of dask reports no array type until then and is
  xarray's own record afterwards;
* ``dask.base.is_dask_collection`` answers False for an object without a ``__dask_graph__``
  method (its first test), so that case is answered without importing dask.

:func:`install` applies both to ``xarray.namedarray`` when it is loaded (an import hook, so
that ``import bayescal`` itself imports nothing). If xarray's internals differ from these
(another version), nothing is changed.
"""

from __future__ import annotations

import sys
from importlib.machinery import PathFinder
from types import ModuleType
from typing import Any

__all__ = ["install"]

_PYCOMPAT = "xarray.namedarray.pycompat"
_UTILS = "xarray.namedarray.utils"


class _DaskRecord:
    """xarray's ``DuckArrayModule("dask")``, built only once dask.array is imported."""

    def __init__(self, pycompat: ModuleType) -> None:
        self._pycompat = pycompat
        self._real: Any = None

    def _load(self) -> Any:
        if self._real is None:
            self._real = self._pycompat.DuckArrayModule("dask")
        return self._real

    @property
    def type(self) -> tuple[type, ...]:
        if self._real is None and "dask.array" not in sys.modules:
            return ()
        return self._load().type

    def __getattr__(self, name: str) -> Any:
        return getattr(self._load(), name)


def _patch_pycompat(module: ModuleType) -> None:
    cache = getattr(module, "_cached_duck_array_modules", None)
    if isinstance(cache, dict) and "dask" not in cache and hasattr(module, "DuckArrayModule"):
        cache["dask"] = _DaskRecord(module)


def _patch_utils(module: ModuleType) -> None:
    real = getattr(module, "is_dask_collection", None)
    if real is None or getattr(real, "_bayescal", False):
        return

    def is_dask_collection(x: object) -> bool:
        if isinstance(x, type) or not callable(getattr(x, "__dask_graph__", None)):
            return False  # dask.base.is_dask_collection's own first answer
        return real(x)

    is_dask_collection._bayescal = True  # type: ignore[attr-defined]
    is_dask_collection.__doc__ = real.__doc__
    module.is_dask_collection = is_dask_collection


_PATCHES = {_PYCOMPAT: _patch_pycompat, _UTILS: _patch_utils}


class _Finder:
    """Finds the two xarray modules as usual and patches them right after they execute."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        patch = _PATCHES.get(name)
        if patch is None:
            return None
        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Patch xarray's dask checks now if xarray is loaded, else when it is."""
    for name, patch in _PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
    if not all(name in sys.modules for name in _PATCHES) and not any(
            isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
