"""bayescal: calibrating LLM-as-a-judge evaluations.

Each paper's model is a PyMC model (``bayescal.models``) fitted by MAP and NUTS, with an
independent frequentist twin (``bayescal.frequentist``) for side-by-side intervals.
"""

from importlib import import_module
from typing import Any

# Every public name is loaded on first use: pandas/scipy take about a second to import and
# PyMC/ArviZ several, and `bayescal --help` or a frequentist twin should not pay for them.
# Name -> module that defines it (a module's own name means the module itself).
_LAZY = {
    "Comparisons": "bayescal.data",
    "DataError": "bayescal.data",
    "DiagnosticWarning": "bayescal.diagnostics",
    "IdentificationError": "bayescal.identify",
    "IdentificationWarning": "bayescal.identify",
    "Labels": "bayescal.data",
    "compare": "bayescal.compare",
    "datasets": "bayescal.datasets",
    "diagnose": "bayescal.diagnostics",
    "fit": "bayescal.fitting",
    "leaderboard": "bayescal.tables",
    "plots": "bayescal.plots",
    "simulate": "bayescal.simulate",
    "summarize": "bayescal.summary",
    "versions": "bayescal.environment",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # importlib.metadata alone costs a few hundred ms
        from importlib.metadata import version

        globals()[name] = version("bayescal")
        return globals()[name]
    if name in _LAZY:
        module = import_module(_LAZY[name])
        value = module if module.__name__ == f"bayescal.{name}" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayescal' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, "__version__"])


__all__ = [
    "Comparisons",
    "DataError",
    "DiagnosticWarning",
    "IdentificationError",
    "IdentificationWarning",
    "Labels",
    "compare",
    "datasets",
    "diagnose",
    "fit",
    "leaderboard",
    "plots",
    "simulate",
    "summarize",
    "versions",
]
