"""Shared pieces of the frequentist twins: the Estimate result and zero-sum charts.

Nothing here imports PyMC: the twins must stay independent of the Bayesian models they check.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from bayescal.summary import COLUMNS, term_labels, wald_interval

__all__ = ["Estimate", "MLEBoundaryError", "cluster_meat", "zero_sum_basis"]


class MLEBoundaryError(ValueError):
    """The likelihood has no interior maximum: some parameter runs to a boundary."""


_COV_NAME = "estimate_cov"


def _json_scalar(value: Any) -> Any:
    """numpy scalars and 0-d arrays as Python numbers (anything else is not serialisable)."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


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


def cluster_meat(
    scores: NDArray[np.float64] | sp.sparray | sp.spmatrix,
    clusters: ArrayLike,
    *,
    correction: bool = True,
) -> NDArray[np.float64]:
    r"""Meat of the cluster-robust sandwich, :math:`\frac{G}{G-1}\sum_g S_g S_g^\top`.

    :math:`S_g = \sum_{r \in g} s_r` is the total score of cluster g over its records r
    (rows of ``scores``: per verdict, or per (cluster, cell) record with the cell's gradient
    times the record's residual sum). The covariance is :math:`H^{-1} M H^{-1}` with H the
    (observed) information, the CR1 estimator of Liang & Zeger (1986).

    Parameters
    ----------
    scores : ndarray or scipy sparse matrix, shape (records, parameters)
        Score contributions; sparse input keeps the cost O(non-zeros) for cell designs.
    clusters : array of int, shape (records,)
        Cluster code of each record (any integers; G is the number of distinct codes).
    correction : bool
        Multiply by the small-sample factor G / (G - 1) (Stata's and statsmodels' cluster
        factor; statsmodels' ``use_correction=True`` also multiplies by (N - 1) / (N - p), a
        regression df factor that is not applied here).

    Returns
    -------
    ndarray, shape (parameters, parameters)

    Notes
    -----
    A user's key comes from ``Comparisons.from_frame(..., cluster=...)`` (records are
    (cluster, cell) sums, codes ``cluster_code``). A built-in key needs no new data: DIAL's
    cell-clustered sandwich (judge x unordered pair, both display orders pooled) passes
    per-cell scores with ``clusters = (judge * n_items + item_i) * n_items + item_j``.
    """
    codes = np.asarray(clusters)
    n_records = scores.shape[0]
    if codes.shape != (n_records,):
        raise ValueError(f"clusters has shape {codes.shape}; expected ({n_records},)")
    uniq, code = np.unique(codes, return_inverse=True)
    n_clusters = len(uniq)
    if n_clusters < 2:
        raise ValueError(f"a cluster-robust variance needs at least 2 clusters, got {n_clusters}")
    indicator = sp.csr_array(
        (np.ones(n_records), (code, np.arange(n_records))), shape=(n_clusters, n_records)
    )
    totals = indicator @ scores
    meat = totals.T @ totals
    meat = meat.toarray() if sp.issparse(meat) else np.asarray(meat)
    factor = n_clusters / (n_clusters - 1) if correction else 1.0
    return np.asarray(factor * meat, dtype=np.float64)


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
        Interval kind per parameter: ``wald``, ``wald-logit`` or ``none``.
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

    def to_netcdf(self, path: str | os.PathLike[str]) -> None:
        """Save to a netCDF file that :meth:`from_netcdf` reads back exactly.

        The file holds the parameters under their own names, the covariance as
        ``estimate_cov(term, term_col)`` with the term labels as coordinates, and the method,
        interval kinds, log-likelihood, convergence flag and ``info`` as JSON attributes.
        ``info`` entries that are not JSON-serialisable (numpy scalars are converted) are
        left out with a warning naming them.
        """
        if _COV_NAME in self.params.data_vars:
            raise ValueError(f"a parameter is named {_COV_NAME!r}, the covariance's reserved name")
        info, dropped = {}, []
        for key, value in self.info.items():
            try:
                info[key] = json.loads(json.dumps(value, default=_json_scalar))
            except (TypeError, ValueError):
                dropped.append(key)
        if dropped:
            warnings.warn(f"Estimate.info entries {dropped} are not serialisable and are not "
                          "saved", UserWarning, stacklevel=2)
        ds = self.params.copy()
        ds[_COV_NAME] = xr.DataArray(
            np.asarray(self.cov, dtype=np.float64), dims=("term", "term_col"),
            coords={"term": list(self.terms), "term_col": list(self.terms)},
        )
        ds.attrs = {
            "bayescal_estimate": json.dumps({
                "method": self.method, "interval": dict(self.interval),
                "loglik": float(self.loglik), "converged": bool(self.converged),
                "info": info,
            }),
        }
        ds.to_netcdf(path, engine="h5netcdf")

    @classmethod
    def from_netcdf(cls, path: str | os.PathLike[str]) -> Estimate:
        """Load an Estimate written by :meth:`to_netcdf`."""
        with xr.open_dataset(path, engine="h5netcdf") as handle:
            ds = handle.load()
        if "bayescal_estimate" not in ds.attrs or _COV_NAME not in ds:
            raise ValueError(f"{path} is not an Estimate file written by Estimate.to_netcdf")
        meta = json.loads(ds.attrs["bayescal_estimate"])
        cov = ds[_COV_NAME]
        params = ds.drop_vars([_COV_NAME, "term", "term_col"])
        params.attrs = {}
        return cls(
            method=meta["method"],
            params=params,
            cov=np.asarray(cov.values, dtype=np.float64),
            terms=tuple(str(t) for t in cov.coords["term"].values),
            interval=meta["interval"],
            loglik=float(meta["loglik"]),
            converged=bool(meta["converged"]),
            info=meta["info"],
        )

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.params.data_vars.items())
        return f"Estimate(method={self.method!r}, {shapes}, converged={self.converged})"
