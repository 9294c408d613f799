"""Shared pieces of the frequentist twins: the Estimate result and zero-sum charts.

Nothing here imports PyMC: the twins must stay independent of the Bayesian models they check.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import NDArray
from scipy.special import ndtri

from bayescal.schema import COLUMNS, INTERVAL_KINDS, resolve_prob, term_labels, wald_interval

__all__ = ["ConvergenceWarning", "Estimate", "MLEBoundaryError"]


class MLEBoundaryError(ValueError):
    """The likelihood has no interior maximum: some parameter runs to a boundary."""


class ConvergenceWarning(UserWarning):
    """The optimizer stopped short of a stationary point; ``Estimate.converged`` is False."""


_COV_NAME = "estimate_cov"


def _json_scalar(value: Any) -> Any:
    """numpy scalars as Python numbers and numeric arrays as (nested) lists; anything else is
    not serialisable (a list comes back as a list, which is what a reader of the JSON sees)."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _check_loaded(path: Any, params: xr.Dataset, terms: tuple[str, ...], columns: list[str],
                  cov: NDArray[np.float64], interval: dict[str, Any], info: Any) -> None:
    """Refuse an Estimate file whose parts do not fit together (see ``from_netcdf``)."""
    def bad(what: str) -> ValueError:
        return ValueError(f"{path}: {what}; the file was changed or damaged after it was "
                          "written — write the estimate again")

    if not isinstance(info, dict):
        raise bad("the info metadata is not a mapping")
    if list(terms) != columns or cov.shape != (len(terms), len(terms)):
        raise bad(f"the covariance is {cov.shape[0]} x {cov.shape[1]} with different labels on "
                  "its two axes" if list(terms) != columns else
                  f"the covariance is {cov.shape} for {len(terms)} terms")
    if len(set(terms)) != len(terms):
        raise bad("a term label appears twice in the covariance")
    labels = [lab for name, da in params.data_vars.items() for lab in term_labels(str(name), da)]
    if labels != list(terms):
        diff = next((f"{a!r} vs {b!r}" for a, b in zip(labels, terms, strict=False) if a != b),
                    f"{len(labels)} parameter elements vs {len(terms)} terms")
        raise bad(f"the covariance terms do not match the parameters ({diff})")
    unknown = sorted(set(interval) - set(map(str, params.data_vars)))
    kinds = sorted({str(k) for k in interval.values()} - set(INTERVAL_KINDS))
    if unknown or kinds:
        raise bad(f"interval kinds for unknown parameters {unknown}" if unknown else
                  f"unknown interval kinds {kinds}")
    diag = np.diag(cov)
    if np.any(diag < 0):
        k = int(np.flatnonzero(diag < 0)[0])
        raise bad(f"the variance of {terms[k]} is negative ({diag[k]:.3g})")
    finite = np.isfinite(cov) & np.isfinite(cov.T)
    scale = max(1.0, float(np.abs(cov[finite]).max())) if finite.any() else 1.0
    if np.any(np.abs(cov - cov.T)[finite] > 1e-8 * scale) or np.any(finite != np.isfinite(cov)):
        raise bad("the covariance is not symmetric")


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
        (positive parameters) or ``none``; see :func:`bayescal.schema.wald_interval`.
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

    def summary(self, prob: float | None = None, *, ci_prob: float | None = None) -> pd.DataFrame:
        """Tidy interval table (the shared schema of :func:`bayescal.summarize`).

        Parameters
        ----------
        prob : float
            Interval probability (``ci_prob``: the same under ArviZ's name); default 0.95.
        """
        prob = resolve_prob(prob, ci_prob)
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

    def to_dataset(self) -> xr.Dataset:
        """The Estimate as one xarray Dataset, the content of :meth:`to_netcdf`'s file.

        The parameters keep their own names; the covariance is ``estimate_cov(term, term_col)``
        with the term labels as coordinates; the method, interval kinds, log-likelihood,
        convergence flag and ``info`` are a JSON attribute. ``info`` entries that are not
        JSON-serialisable (numpy scalars are converted) are left out with a warning naming them.
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
                          "saved", UserWarning, stacklevel=3)
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
        return ds

    def to_netcdf(self, path: str | os.PathLike[str]) -> None:
        """Save to a netCDF file that :meth:`from_netcdf` reads back exactly (the Dataset of
        :meth:`to_dataset`)."""
        self.to_dataset().to_netcdf(path, engine="h5netcdf")

    @classmethod
    def from_netcdf(cls, path: str | os.PathLike[str]) -> Estimate:
        """Load an Estimate written by :meth:`to_netcdf`, validated (see :meth:`from_dataset`)."""
        with xr.open_dataset(path, engine="h5netcdf") as handle:
            ds = handle.load()
        return cls.from_dataset(ds, source=str(path))

    @classmethod
    def from_dataset(cls, ds: xr.Dataset, *, source: str = "the dataset") -> Estimate:
        """Rebuild an Estimate from :meth:`to_dataset`'s Dataset, validated: one that was changed
        or is not an Estimate is refused (``ValueError`` naming ``source`` and the problem), never
        loaded into intervals it does not support.

        Checked: the metadata (method, interval kinds of the parameters, log-likelihood,
        convergence flag, info); the covariance square over the terms, with the same labels on
        both axes; the terms unique and equal, in order, to the parameters' element labels (a
        relabelled parameter or covariance is caught); the covariance symmetric (to 1e-8
        relative) with no negative variance.
        """
        if "bayescal_estimate" not in ds.attrs or _COV_NAME not in ds:
            raise ValueError(f"{source} is not an Estimate written by Estimate.to_netcdf")
        try:
            meta = json.loads(ds.attrs["bayescal_estimate"])
            method, interval = str(meta["method"]), dict(meta["interval"])
            loglik, converged, info = float(meta["loglik"]), bool(meta["converged"]), meta["info"]
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{source}: the Estimate metadata is damaged ({err!r}); write the "
                             "estimate again") from err
        cov = ds[_COV_NAME]
        params = ds.drop_vars([_COV_NAME, "term", "term_col"])
        params.attrs = {}
        terms = tuple(str(t) for t in cov.coords["term"].values)
        matrix = np.asarray(cov.values, dtype=np.float64)
        _check_loaded(source, params, terms, [str(t) for t in cov.coords["term_col"].values],
                      matrix, interval, info)
        return cls(method=method, params=params, cov=matrix, terms=terms, interval=interval,
                   loglik=loglik, converged=converged, info=info)

    def to_datatree(self, draws: int = 1000, chains: int = 4, *, seed: int = 0) -> xr.DataTree:
        """A view of the Estimate that ArviZ reads as a posterior: ``az.summary(view,
        kind="stats")`` and ``az.plot_forest(view)`` show the Wald estimates and intervals.

        The ``posterior`` group holds ``chains x draws`` pseudo-draws of the Wald normal
        approximation N(θ̂, Σ̂) on each parameter's interval scale (logit for ``wald-logit``,
        log for ``wald-log``, mapped back). The standard-normal points are a Latin hypercube
        (each coordinate takes every normal quantile (i + 1/2)/(chains·draws) once, in a
        seeded random order), centred and whitened so that their sample mean is 0 and their
        sample covariance (ddof = 1) is exactly the identity; they are then multiplied by the
        symmetric square root of Σ̂ on that scale. So on the interval scale the draws' means,
        standard deviations and correlations equal θ̂ and Σ̂ exactly: a linear contrast
        computed from the draws has the Wald estimate and standard error, and linear constraints
        of Σ̂ (sum-zero abilities) hold in every draw. The draws' quantiles are sample
        quantiles: they match the Wald interval to Monte Carlo accuracy (at the 4000 default
        points, a few hundredths of a standard error; :func:`bayescal.summarize` of the view
        gives the exact Wald table). The medians of
        logit- and log-scale parameters are θ̂ only approximately, and their means are not θ̂.
        Parameters with no interval (kind ``none``) are left out and listed in the attrs.

        These are not posterior draws: R-hat and ESS of the view mean nothing, and
        :func:`bayescal.diagnose` refuses it. The Estimate itself rides along in the
        ``bayescal_estimate`` group, so :func:`bayescal.summarize` of the view returns the
        Estimate's own Wald table.
        """
        if draws < 2 or chains < 1:
            raise ValueError(f"to_datatree needs draws >= 2 and chains >= 1, got draws={draws}, "
                             f"chains={chains}")
        n = draws * chains
        kinds = {str(name): self.interval.get(str(name), "wald") for name in self.params.data_vars}
        shown = [name for name, kind in kinds.items() if kind != "none"]
        index = {t: i for i, t in enumerate(self.terms)}
        labels = {name: term_labels(name, self.params[name]) for name in shown}
        rows = np.array([index[lab] for name in shown for lab in labels[name]], dtype=np.intp)
        centre = np.concatenate([np.asarray(self.params[name].values, np.float64).ravel()
                                 for name in shown]) if shown else np.zeros(0)
        scale_kind = np.concatenate([np.full(len(labels[name]), kinds[name], dtype=object)
                                     for name in shown]) if shown else np.zeros(0, object)
        # the delta method carries Σ̂ to the interval scale (the scale wald_interval works on)
        t = np.clip(centre, 1e-6, 1 - 1e-6)
        jac = np.where(scale_kind == "wald-logit", 1 / (t * (1 - t)),
                       np.where(scale_kind == "wald-log", 1 / np.where(centre > 0, centre, 1), 1.0))
        mid = np.where(scale_kind == "wald-logit", np.log(t / (1 - t)),
                       np.where(scale_kind == "wald-log", np.log(np.where(centre > 0, centre, 1)),
                                centre))
        if np.any((scale_kind == "wald-log") & ~(centre > 0)):
            raise ValueError("a 'wald-log' parameter has a non-positive estimate")
        sigma = np.asarray(self.cov, np.float64)[np.ix_(rows, rows)] * np.outer(jac, jac)
        if not np.all(np.isfinite(sigma)):
            raise ValueError("the covariance has non-finite entries; no normal view exists")
        vals, vecs = np.linalg.eigh((sigma + sigma.T) / 2)
        root = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T
        rng = np.random.default_rng(seed)
        grid = ndtri((np.arange(n) + 0.5) / n)
        z = np.stack([rng.permutation(grid) for _ in rows], axis=1) if len(rows) else \
            np.zeros((n, 0))
        z -= z.mean(axis=0)
        if len(rows):
            w_vals, w_vecs = np.linalg.eigh(np.cov(z, rowvar=False, ddof=1).reshape(
                len(rows), len(rows)))
            z = z @ (w_vecs / np.sqrt(w_vals)) @ w_vecs.T
        x = mid + z @ root
        x = np.where(scale_kind == "wald-logit", 1 / (1 + np.exp(-x)),
                     np.where(scale_kind == "wald-log", np.exp(x), x))
        out, start = {}, 0
        for name in shown:
            da = self.params[name]
            size = int(np.prod(da.shape, dtype=int))
            block = x[:, start:start + size].reshape((chains, draws, *da.shape))
            start += size
            out[name] = xr.DataArray(block, dims=("chain", "draw", *da.dims),
                                     coords={k: v for k, v in da.coords.items()})
        posterior = xr.Dataset(out, coords={"chain": np.arange(chains),
                                            "draw": np.arange(draws)})
        tree = xr.DataTree.from_dict({"posterior": posterior,
                                      "bayescal_estimate": self.to_dataset()})
        tree.attrs = {"bayescal_method": f"{self.method} (Wald view)",
                      "bayescal_view": "estimate",
                      "bayescal_view_omitted": json.dumps(
                          [name for name, kind in kinds.items() if kind == "none"])}
        return tree

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.params.data_vars.items())
        return f"Estimate(method={self.method!r}, {shapes}, converged={self.converged})"
