"""bayescal: calibrating LLM-as-a-judge evaluations.

Each paper's model is a PyMC model (``bayescal.models``) fitted by MAP and NUTS, with an
independent frequentist twin (``bayescal.frequentist``) for side-by-side intervals.
"""

from importlib import import_module
from importlib.metadata import version as _version
from typing import Any

from bayescal import datasets, simulate
from bayescal.compare import compare
from bayescal.contrasts import contrasts, elo_scale, ranks, win_probabilities
from bayescal.data import Comparisons, DataError, Labels
from bayescal.environment import versions
from bayescal.identify import IdentificationError, IdentificationWarning
from bayescal.summary import summarize

__version__ = _version("bayescal")

# PyMC and ArviZ take seconds to import; the frequentist twins and the data layer do not need
# them, so the Bayesian entry points are loaded on first use.
_LAZY = {"fit": "bayescal.fitting", "diagnose": "bayescal.diagnostics",
         "DiagnosticWarning": "bayescal.diagnostics"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bayescal' has no attribute {name!r}")

__all__ = [
    "Comparisons",
    "DataError",
    "DiagnosticWarning",
    "IdentificationError",
    "IdentificationWarning",
    "Labels",
    "compare",
    "contrasts",
    "datasets",
    "diagnose",
    "elo_scale",
    "fit",
    "ranks",
    "simulate",
    "summarize",
    "versions",
    "win_probabilities",
]
