"""What a result was computed with: versions of Python and of the numerical stack."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import pandas as pd

__all__ = ["versions"]

_PACKAGES = ("bayescal", "pymc", "pytensor", "arviz", "nutpie", "numpy", "scipy", "pandas",
             "xarray", "matplotlib")


def versions() -> pd.Series:
    """Versions of Python and of the packages bayescal's results depend on.

    Returns
    -------
    pandas.Series
        Indexed by package name; ``not installed`` for an optional package that is absent.
    """
    found = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return pd.Series(found, name="version")
