"""bayescal: calibrating LLM-as-a-judge evaluations.

Each paper's model is a PyMC model (``bayescal.models``) fitted by MAP and NUTS, with an
independent frequentist twin (``bayescal.frequentist``) for side-by-side intervals.
"""

from importlib.metadata import version as _version

from bayescal import datasets, simulate
from bayescal.compare import compare
from bayescal.data import Comparisons, DataError, Labels
from bayescal.diagnostics import DiagnosticWarning, diagnose
from bayescal.fitting import fit
from bayescal.identify import IdentificationError, IdentificationWarning
from bayescal.summary import summarize

__version__ = _version("bayescal")

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
    "simulate",
    "summarize",
]
