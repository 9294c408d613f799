"""Shared pieces of the frequentist twins: the Estimate result and zero-sum charts.

Nothing here imports PyMC: the twins must stay independent of the Bayesian models they check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import NDArray

from bayescal.summary import COLUMNS, term_labels, wald_interval

__all__ = ["Estimate", "MLEBoundaryError", "zero_sum_basis"]


class MLEBoundaryError(ValueError):
    """The likelihood has no interior maximum: some parameter runs to a boundary."""


@cache
def zero_sum_basis(n: int) -> NDArray[np.float64]:
    """Orthonormal basis of the sum-zero subspace of R^n (Helmert contrasts), shape (n, n-1).

    Column ``k`` (k = 1..n-1) has ``1/sqrt(k(k+1))`` in rows ``1..k``, ``-k/sqrt(k(k+1))`` in
    row ``k+1`` and zeros after, so ``A.T @ 1 = 0`` and ``A.T @ A = I``.
    """
    basis = np.zeros((n, max(n - 1, 0)))
    for k in range(1, n):
        basis[:k, k - 1] = 1.0 / np.sqrt(k * (k + 1))
        basis[k, k - 1] = -k / np.sqrt(k * (k + 1))
    basis.flags.writeable = False
    return basis


@dataclass(frozen=True)
class Estimate:
    """A frequentist estimate with its covariance, in the same names and coords as the posterior.

    Attributes
    ----------
    method : str
        Label used in tables (``mle``, ``rogan_gladen``, ...).
    params : xarray.Dataset
        Point estimates, one variable per parameter, with the models' dims and coords.
    cov : ndarray
        Covariance of all elements of ``params`` in the order of ``terms``.
    terms : tuple of str
        ArviZ-style labels of the covariance rows.
    interval : dict
        Interval kind per parameter: ``wald``, ``wald-logit`` (probabilities), ``wald-log``
        (positive parameters) or ``none``; see :func:`bayescal.summary.wald_interval`.
    loglik : float
        Log-likelihood at the estimate (NaN when the method has none).
    converged : bool
    info : dict
        Method details (optimizer result, information type, λ, ...).
    """

    method: str
    params: xr.Dataset
    cov: NDArray[np.float64]
    terms: tuple[str, ...]
    interval: Mapping[str, str]
    loglik: float = float("nan")
    converged: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def se(self) -> pd.Series:
        """Standard errors by term."""
        return pd.Series(np.sqrt(np.clip(np.diag(self.cov), 0, None)), index=list(self.terms))

    def summary(self, prob: float = 0.95) -> pd.DataFrame:
        """Tidy interval table (the shared schema of :func:`bayescal.summarize`).

        Parameters
        ----------
        prob : float
            Interval probability.
        """
        se = self.se
        frames = []
        for name, da in self.params.data_vars.items():
            labels = term_labels(str(name), da)
            est = np.asarray(da.values, dtype=np.float64).ravel()
            s = se.loc[labels].to_numpy()
            kind = self.interval.get(str(name), "wald")
            if kind == "none":
                lower = upper = np.full(est.shape, np.nan)
            else:
                lower, upper = wald_interval(est, s, prob, kind)
            frames.append(
                pd.DataFrame(
                    {
                        "term": labels,
                        "parameter": str(name),
                        "method": self.method,
                        "estimate": est,
                        "se": s,
                        "lower": lower,
                        "upper": upper,
                        "prob": prob if kind != "none" else np.nan,
                        "interval": kind,
                    }
                )
            )
        return pd.concat(frames).set_index("term")[COLUMNS]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.params.data_vars.items())
        return f"Estimate(method={self.method!r}, {shapes}, converged={self.converged})"
