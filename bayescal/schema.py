"""The tidy interval schema shared by every result, with no bayescal imports.

Every table of estimates (:meth:`bayescal.frequentist.Estimate.summary`,
:func:`bayescal.summarize`) has index ``term`` (an ArviZ-style label such as
``ability[gpt-4]``) and the columns :data:`COLUMNS`. Wald intervals are formed here, on the
scale where each parameter's interval is valid (:func:`wald_interval`). Nothing here imports
PyMC, ArviZ or any other bayescal module, so the data layer, the twins and the tables can all
depend on it without import cycles.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, logit, ndtri

__all__ = ["COLUMNS", "DEFAULT_PROB", "INTERVAL_KINDS", "SAMPLE_DIMS", "check_prob", "resolve_prob", "term_labels",
           "wald_interval", "z_value"]

COLUMNS = ["parameter", "method", "estimate", "se", "lower", "upper", "prob", "interval"]
DEFAULT_PROB = 0.95
SAMPLE_DIMS = ("chain", "draw")


def z_value(prob: float) -> float:
    """The two-sided normal quantile :math:`z_{(1+p)/2}` of an interval probability p."""
    check_prob(prob)
    return float(ndtri(0.5 + prob / 2))


def term_labels(name: str, da: xr.DataArray) -> list[str]:
    """ArviZ-style labels (``name[a, b]``) for every element of ``da`` in C order."""
    dims = [d for d in da.dims if d not in SAMPLE_DIMS]
    if not dims:
        return [name]
    values = [
        [str(v) for v in (da.coords[d].values if d in da.coords else range(da.sizes[d]))]
        for d in dims
    ]
    grids = np.meshgrid(*[np.arange(len(v)) for v in values], indexing="ij")
    flat = [g.ravel() for g in grids]
    return [
        f"{name}[{', '.join(values[a][flat[a][e]] for a in range(len(dims)))}]"
        for e in range(flat[0].size)
    ]


#: Interval kinds of an Estimate's parameters (``none``: no interval is reported).
INTERVAL_KINDS = ("wald", "wald-logit", "wald-log", "none")


def wald_interval(
    estimate: ArrayLike, se: ArrayLike, prob: float, kind: str = "wald"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wald interval ``estimate ± z se`` on the natural, logit or log scale.

    ``se`` is always the standard error on the natural scale.

    * ``wald``: ``estimate ± z se``.
    * ``wald-logit`` (probabilities): the estimate is clamped to [1e-6, 1 - 1e-6] and the
      standard error is carried to the logit scale by the delta method, se / (θ(1 - θ))
      (Chen et al. 2026, Sec. 5.2); an estimate of exactly 0 or 1 stays inside its interval.
    * ``wald-log`` (positive parameters such as a discrimination γ): ``exp(log θ ± z se/θ)``,
      with se(log θ) = se/θ by the delta method. The interval stays positive and always
      contains θ; a non-positive estimate is refused (it is not on this scale).
    """
    check_prob(prob)
    est = np.asarray(estimate, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    z = z_value(prob)
    if kind == "wald":
        return est - z * s, est + z * s
    if kind == "wald-logit":
        t = np.clip(est, 1e-6, 1 - 1e-6)
        half = z * s / (t * (1 - t))
        lower, upper = expit(logit(t) - half), expit(logit(t) + half)
        # an estimate on the edge of [0, 1] (a Rogan-Gladen estimate clipped to 1) is moved by
        # the clamp; the interval is widened to keep it rather than exclude it by 1e-6
        inside = (est >= 0) & (est <= 1)
        return (np.where(inside, np.minimum(lower, est), lower),
                np.where(inside, np.maximum(upper, est), upper))
    if kind == "wald-log":
        if not np.all(est > 0):
            raise ValueError(
                f"a 'wald-log' interval needs a positive estimate, got {est[~(est > 0)].tolist()}"
            )
        half = z * s / est
        with np.errstate(over="ignore"):  # an se far above θ gives (0, inf): honest, not an error
            return est * np.exp(-half), est * np.exp(half)
    raise ValueError(f"unknown interval kind {kind!r}; use 'wald', 'wald-logit' or 'wald-log'")


def resolve_prob(prob: float | None, ci_prob: float | None = None) -> float:
    """The interval probability of a call, under its name here (``prob``) or ArviZ's
    (``ci_prob``): either, or both if equal; :data:`DEFAULT_PROB` when neither is given.

    Raises
    ------
    ValueError
        Both given with different values (one would be ignored), or a value outside (0, 1).
    """
    if prob is not None and ci_prob is not None and prob != ci_prob:
        raise ValueError(f"prob={prob!r} and ci_prob={ci_prob!r} name the same interval "
                         "probability with different values: give one of them")
    value = DEFAULT_PROB if prob is None and ci_prob is None else (
        prob if prob is not None else ci_prob)
    assert value is not None
    check_prob(value)
    return float(value)


def check_prob(prob: float) -> None:
    """Raise ValueError unless 0 < prob < 1 (an interval probability, not a percentage)."""
    if not 0 < prob < 1:
        raise ValueError(f"prob must lie strictly between 0 and 1, got {prob!r}")


