"""bayescal: calibrating LLM-as-a-judge evaluations.

Each paper's model is a PyMC model (``bayescal.models``) fitted by MAP and NUTS, with an
independent frequentist twin (``bayescal.frequentist``) for side-by-side intervals.
"""

import sys
from importlib import import_module
from types import ModuleType
from typing import Any

from bayescal._lazy_dask import install as _install_lazy_dask

# xarray would import dask (0.7 s) on the first array it wraps; see bayescal._lazy_dask
_install_lazy_dask()

# Every public name is loaded on first use: pandas/scipy take about a second to import and
# PyMC/ArviZ several, and `bayescal --help` or a frequentist twin should not pay for them.
# Name -> module that defines it.
_LAZY = {
    "Comparisons": "bayescal.data",
    "DataError": "bayescal.data",
    "DiagnosticWarning": "bayescal.diagnostics",
    "IdentificationError": "bayescal.identify",
    "IdentificationWarning": "bayescal.identify",
    "Labels": "bayescal.data",
    "Ratings": "bayescal.data",
    "adjust_to_sandwich": "bayescal.adjust",
    "compare": "bayescal.compare",
    "contrasts": "bayescal.contrasts",
    "datasets": "bayescal.datasets",
    "design": "bayescal.design",
    "diagnose": "bayescal.diagnostics",
    "elo_scale": "bayescal.contrasts",
    "fit": "bayescal.fitting",
    "leaderboard": "bayescal.tables",
    "plots": "bayescal.plots",
    "ranks": "bayescal.contrasts",
    "registry": "bayescal.registry",
    "simulate": "bayescal.simulate",
    "summarize": "bayescal.summary",
    "versions": "bayescal.environment",
    "win_probabilities": "bayescal.contrasts",
}
_MODULES = {"datasets", "design", "plots", "registry", "simulate"}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # importlib.metadata alone costs a few hundred ms
        from importlib.metadata import version

        globals()[name] = version("bayescal")
        return globals()[name]
    if name in _LAZY:
        module = import_module(_LAZY[name])
        value = module if name in _MODULES else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayescal' has no attribute {name!r}")


class _Package(ModuleType):
    """Keeps ``bayescal.contrasts`` the function when its submodule is imported.

    Importing a submodule sets it as an attribute of the package; where a public function has
    the submodule's name, the function is kept, as an eager ``from ... import`` would.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, ModuleType) and name in _LAZY and name not in _MODULES
                and value.__name__ == _LAZY[name]):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, "__version__"])


__all__ = [
    "Comparisons",
    "DataError",
    "DiagnosticWarning",
    "IdentificationError",
    "IdentificationWarning",
    "Labels",
    "Ratings",
    "compare",
    "contrasts",
    "datasets",
    "diagnose",
    "elo_scale",
    "fit",
    "leaderboard",
    "plots",
    "ranks",
    "registry",
    "simulate",
    "summarize",
    "versions",
    "win_probabilities",
]
