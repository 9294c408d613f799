"""The one streaming interface every score calibrator follows (arXiv:2611.00447).

A calibrator maps a frozen judge's score ``j`` on a declared integer scale ``a..b`` to a calibrated
score ``g(j)`` learned from anchors ``(j_i, h_i)`` (the paper's Section 3):

* ``update(judge, human)`` adds one anchor;
* ``fit(judge, human)`` starts afresh and adds a whole array of anchors; for every calibrator the
  state after ``fit`` equals the state after calling ``update`` anchor by anchor (tested);
* ``partial_fit(judge, human)`` adds a whole array of anchors to the current state (a second
  batch of a stream: the state after two batches is the state after ``fit`` on both);
* ``predict(judge)`` returns calibrated scores (floats;
  :func:`bayescal.calibration.metrics.round_scores` gives the integer outputs, card, convention 1);
* ``to_dict()`` / :func:`from_dict` serialise the state to plain JSON types; :func:`from_dict`
  checks what it loads (the keys and shapes of the method's state, whole non-negative counts
  that add up to the number of anchors), since a state file may be truncated, edited or another
  method's.

Before any anchor, ``predict`` returns the judge scores unchanged (the identity map) and
warns with :class:`NoAnchorsWarning`, so a production stream can start before its first human
score without crashing and without hiding that nothing has been learned.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayescal.data import DataError

__all__ = ["Calibrator", "NoAnchorsWarning", "check_total", "from_dict"]

_REGISTRY: dict[str, type[Calibrator]] = {}


class NoAnchorsWarning(UserWarning):
    """A prediction was asked for before any anchor: the identity map was used."""


class Calibrator:
    """Base class: validation, identity before the first anchor, (de)serialisation.

    Subclasses set ``name`` and ``mode`` (``streaming``, ``batch`` or ``full-batch``: how the
    paper runs them, card, convention 8) and implement ``_reset``, ``_update``, ``_predict`` and the
    ``_params`` / ``_state`` / ``_set_state`` triple.
    """

    name: ClassVar[str] = "calibrator"
    mode: ClassVar[str] = "streaming"
    accepts_distributions: ClassVar[bool] = False
    needs_distributions: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.name] = cls

    def __init__(self, scale: tuple[int, int] = (1, 5)) -> None:
        lo, hi = scale
        if int(lo) != lo or int(hi) != hi or lo >= hi:
            raise DataError(f"scale must be two integers a < b, got {scale!r}")
        self.scale = (int(lo), int(hi))
        self.n_anchors = 0
        self._reset()

    # ---------------------------------------------------------------- public interface
    @property
    def levels(self) -> NDArray[np.int64]:
        """The scale points ``a..b``."""
        return np.arange(self.scale[0], self.scale[1] + 1)

    @property
    def k(self) -> int:
        """Number of scale points K."""
        return self.scale[1] - self.scale[0] + 1

    def update(self, judge: ArrayLike, human: float) -> Calibrator:
        """Add one anchor ``(j, h)``: a judge score (or distribution) and a human score."""
        j = self._judge_one(judge)
        h = self._human(np.atleast_1d(human), "human score")[0]
        self._update(j, float(h))
        self.n_anchors += 1
        return self

    def fit(self, judge: ArrayLike, human: ArrayLike) -> Calibrator:
        """Start afresh and learn from all anchors (equal to ``update`` anchor by anchor)."""
        j = self._judge_many(judge)
        h = self._human(human, "human score")
        if len(j) != len(h):
            raise DataError(f"{len(j)} judge scores but {len(h)} human scores")
        self.n_anchors = 0
        self._reset()
        self._fit(j, h)
        self.n_anchors = len(h)
        return self

    def partial_fit(self, judge: ArrayLike, human: ArrayLike) -> Calibrator:
        """Add an array of anchors to the current state (``update`` anchor by anchor)."""
        j = self._judge_many(judge)
        h = self._human(human, "human score")
        if len(j) != len(h):
            raise DataError(f"{len(j)} judge scores but {len(h)} human scores")
        for jj, hh in zip(j, h, strict=True):
            self._update(jj, float(hh))
            self.n_anchors += 1
        return self

    def predict(self, judge: ArrayLike) -> NDArray[np.float64]:
        """Calibrated scores ``g(j)``; before any anchor the identity, with a warning."""
        j = self._judge_many(judge)
        if self.n_anchors == 0:
            warnings.warn(
                f"{self.name}: no anchors yet, so predict returns the judge scores unchanged "
                "(identity map); add anchors with update() or fit()",
                NoAnchorsWarning, stacklevel=2,
            )
            return self._point(j)
        return np.asarray(self._predict(j), dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON state: ``{"method", "params", "state"}``; :func:`from_dict` restores it."""
        return {"method": self.name, "params": {"scale": list(self.scale), **self._params()},
                "state": {"n_anchors": self.n_anchors, **_plain(self._state())}}

    # ---------------------------------------------------------------- subclass hooks
    def _reset(self) -> None:
        raise NotImplementedError

    def _update(self, judge: Any, human: float) -> None:
        raise NotImplementedError

    def _fit(self, judge: NDArray[np.float64], human: NDArray[np.float64]) -> None:
        for j, h in zip(judge, human, strict=True):
            self._update(j, float(h))
            self.n_anchors += 1

    def _predict(self, judge: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _params(self) -> dict[str, Any]:
        return {}

    def _state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _set_state(self, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _check_state(self) -> None:
        """Refuse a loaded state whose parts disagree (counts that do not add up to
        ``n_anchors``, ...); shapes and whole non-negative counts are checked before."""

    # ---------------------------------------------------------------- validation
    def _human(self, values: ArrayLike, what: str) -> NDArray[np.float64]:
        return _on_scale(values, self.scale, what)

    def _judge_one(self, judge: ArrayLike) -> Any:
        """One anchor's judge input: a scalar score, or a K-vector distribution."""
        arr = np.asarray(judge, dtype=np.float64)
        if arr.ndim == 1 and arr.size > 1:
            return self._judge_many(arr[None, :])[0]
        return self._judge_many(arr.reshape(1))[0]

    def _judge_many(self, judge: ArrayLike) -> NDArray[np.float64]:
        """Judge inputs: a vector of point scores, or an items x K array of distributions."""
        arr = np.asarray(judge, dtype=np.float64)
        if arr.ndim == 2:
            if not self.accepts_distributions:
                raise DataError(
                    f"{self.name} takes judge point scores (a vector), got an array of shape "
                    f"{arr.shape}; use a method over predictive distributions (sqm_predictive, "
                    "contrastive_rollout) or pass the scores"
                )
            return _distributions(arr, self.scale)
        if self.needs_distributions:
            raise DataError(f"{self.name} needs judge predictive distributions (items x {self.k})")
        return _on_scale(arr, self.scale, "judge score")

    def _point(self, judge: NDArray[np.float64]) -> NDArray[np.float64]:
        """Point score of a judge input: itself, or a distribution's mean."""
        if judge.ndim == 2:
            return judge @ self.levels.astype(np.float64)
        return judge.astype(np.float64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scale={self.scale}, n_anchors={self.n_anchors})"


def from_dict(d: dict[str, Any]) -> Calibrator:
    """Rebuild a calibrator from :meth:`Calibrator.to_dict` output, checking it.

    The state must have exactly the keys of the method's state, arrays of the method's shapes
    with finite values, whole non-negative counts where the method keeps counts, and parts
    that agree with each other and with ``n_anchors`` (each method's ``_check_state``).

    Raises
    ------
    DataError
        What is wrong, for a state that is not a calibrator's, is another version's, or was
        truncated or edited.
    """
    if not isinstance(d, dict) or not {"method", "params", "state"} <= set(d):
        raise DataError("not a calibrator state: expected a JSON object with 'method', "
                        "'params' and 'state' (written by Calibrator.to_dict)")
    cls = _REGISTRY.get(d["method"]) if isinstance(d["method"], str) else None
    if cls is None:
        raise DataError(f"unknown calibrator {d['method']!r}; known: {sorted(_REGISTRY)}")
    if not isinstance(d["params"], dict) or not isinstance(d["state"], dict):
        raise DataError(f"{d['method']} state: 'params' and 'state' must be JSON objects")
    params = dict(d["params"])
    scale = params.get("scale")
    if not isinstance(scale, list | tuple) or len(scale) != 2:
        raise DataError(f"{d['method']} state: params.scale must be [low, high], got {scale!r}")
    params["scale"] = tuple(scale)
    try:
        obj = cls(**params)
    except TypeError as err:  # a parameter this method does not take
        raise DataError(f"{d['method']} state: bad params {sorted(params)} ({err})") from None
    state = dict(d["state"])
    n = state.pop("n_anchors", None)
    if isinstance(n, bool) or not isinstance(n, int | float) or n < 0 or n != int(n):
        raise DataError(f"{d['method']} state: n_anchors must be a whole number >= 0, got {n!r}")
    template = obj._state()
    if set(state) != set(template):
        raise DataError(f"{d['method']} state: keys {sorted(state)}, expected "
                        f"{sorted(template)}")
    for key, like in template.items():
        _check_like(state[key], like, f"{d['method']} state {key!r}")
    obj.n_anchors = int(n)
    try:
        obj._set_state(state)
    except (TypeError, ValueError) as err:
        raise DataError(f"{d['method']} state: cannot be read ({err})") from None
    obj._check_state()
    return obj


def _check_like(value: Any, like: Any, what: str) -> None:
    """``value`` has the shape of ``like`` (a fresh state's part), finite values, and whole
    non-negative values where ``like`` is an integer count."""
    if isinstance(like, dict):
        if not isinstance(value, dict):
            raise DataError(f"{what} must be a JSON object")
        return
    if isinstance(like, list):  # anchors, pending pairs, residuals: variable length
        if not isinstance(value, list):
            raise DataError(f"{what} must be a list")
        arr = np.asarray(value, dtype=np.float64) if value else np.zeros(0)
        if not np.isfinite(arr).all():
            raise DataError(f"{what} holds non-finite values")
        return
    template = np.asarray(like)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{what} must be numbers of shape {template.shape}") from None
    if arr.shape != template.shape:
        raise DataError(f"{what} has shape {arr.shape}, expected {template.shape}")
    if not np.isfinite(arr).all():
        raise DataError(f"{what} holds non-finite values")
    if np.issubdtype(template.dtype, np.integer) and (
            (arr < 0).any() or (arr != np.round(arr)).any()):
        raise DataError(f"{what} must hold whole counts >= 0, got {arr.ravel()[:8].tolist()}")


def check_total(counts: NDArray[Any], n: float, what: str, method: str) -> None:
    """Refuse counts that do not add up to the number of anchors."""
    total = float(np.sum(counts))
    if abs(total - n) > 1e-9 * max(1.0, n):
        raise DataError(f"{method} state: {what} add up to {total:g}, but n_anchors is {n:g}; "
                        "the state was edited or mixes two streams")


def _plain(obj: Any) -> Any:
    """Numpy containers to JSON-able lists and floats."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _on_scale(values: ArrayLike, scale: tuple[int, int], what: str) -> NDArray[np.float64]:
    """Integer scores on ``a..b`` as floats; a DataError names the first offending positions."""
    x = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if x.ndim != 1:
        raise DataError(f"{what}s must be a vector, got shape {x.shape}")
    lo, hi = scale
    off = ~np.isfinite(x) | (x < lo) | (x > hi)
    if off.any():
        pos = np.flatnonzero(off)[:5].tolist()
        raise DataError(f"{what} off the declared scale {lo}..{hi} (or missing) at positions "
                        f"{pos}: "
                        f"{x[off][:5].tolist()}")
    frac = x != np.round(x)
    if frac.any():
        pos = np.flatnonzero(frac)[:5].tolist()
        raise DataError(f"{what} is not an integer at positions {pos}: {x[frac][:5].tolist()}; "
                        f"the scale {lo}..{hi} is integer (continuous scores: ContinuousSQM)")
    return x


def _distributions(w: NDArray[np.float64], scale: tuple[int, int]) -> NDArray[np.float64]:
    """Predictive distributions over ``a..b``: non-negative rows summing to 1 within 1e−5."""
    k = scale[1] - scale[0] + 1
    if w.shape[1] != k:
        raise DataError(f"judge distributions need {k} columns (scale {scale[0]}..{scale[1]}), "
                        f"got {w.shape[1]}")
    bad = ~np.isfinite(w).all(axis=1) | (w < 0).any(axis=1)
    if bad.any():
        raise DataError(f"judge distribution has negative or missing mass at positions "
                        f"{np.flatnonzero(bad)[:5].tolist()}")
    total = w.sum(axis=1)
    off = np.abs(total - 1) > 1e-5
    if off.any():
        raise DataError(f"judge distribution does not sum to 1 at positions "
                        f"{np.flatnonzero(off)[:5].tolist()}: sums {total[off][:5].tolist()}")
    return w / total[:, None]
