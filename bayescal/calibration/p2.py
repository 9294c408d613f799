"""P² streaming quantiles (Jain & Chlamtac 1985) and SQM for continuous scores (arXiv:2611.00447).

:class:`P2Quantiles` keeps five markers per quantile level and updates all levels at once
(vectorised over levels), so memory is O(L) and an update O(L) whatever the stream length.
Checked against the textbook test vector (Jain & Chlamtac 1985). For Likert scores use the exact
counts of :class:`~bayescal.calibration.SQM`: P² is an approximation and returns non-integer
quantiles on discrete data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayescal.calibration.base import Calibrator
from bayescal.data import DataError

__all__ = ["ContinuousSQM", "P2Quantiles"]


class P2Quantiles:
    """P² estimates of the quantiles at ``probs`` of a stream (Jain & Chlamtac 1985).

    With fewer than five observations (P² needs five to place its markers) :meth:`value`
    returns the exact sample quantiles (``numpy.quantile``, linear interpolation); afterwards the
    middle marker of each level.

    Parameters
    ----------
    probs : array of float in (0, 1)
    """

    def __init__(self, probs: ArrayLike) -> None:
        p = np.atleast_1d(np.asarray(probs, dtype=np.float64))
        if p.ndim != 1 or not ((p > 0) & (p < 1)).all():
            raise DataError(f"quantile levels must lie in (0, 1), got {p.tolist()}")
        self.probs = p
        self.count = 0
        self.heights = np.zeros((len(p), 5))
        self.positions = np.tile(np.arange(1.0, 6.0), (len(p), 1))
        self.desired = np.column_stack([np.ones_like(p), 1 + 2 * p, 1 + 4 * p, 3 + 2 * p,
                                        np.full_like(p, 5.0)])
        self.increments = np.column_stack([np.zeros_like(p), p / 2, p, (1 + p) / 2,
                                           np.ones_like(p)])
        self._first: list[float] = []

    def update(self, x: float) -> P2Quantiles:
        """Add one observation."""
        x = float(x)
        if not np.isfinite(x):
            raise DataError(f"P² needs finite observations, got {x!r}")
        self.count += 1
        if self.count <= 5:
            self._first.append(x)
            if self.count == 5:
                self.heights[:] = np.sort(self._first)
            return self
        q, n = self.heights, self.positions
        cell = (q[:, 1:4] <= x).sum(axis=1)
        q[:, 0] = np.minimum(q[:, 0], x)
        q[:, 4] = np.maximum(q[:, 4], x)
        n += np.arange(5)[None, :] > cell[:, None]
        self.desired += self.increments
        rows = np.arange(len(q))
        for i in (1, 2, 3):
            d = self.desired[:, i] - n[:, i]
            move = (((d >= 1) & (n[:, i + 1] - n[:, i] > 1))
                    | ((d <= -1) & (n[:, i - 1] - n[:, i] < -1)))
            if not move.any():
                continue
            s = np.where(move, np.sign(d), 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):  # rows that do not move
                parabolic = q[:, i] + s / (n[:, i + 1] - n[:, i - 1]) * (
                    (n[:, i] - n[:, i - 1] + s) * (q[:, i + 1] - q[:, i])
                    / (n[:, i + 1] - n[:, i])
                    + (n[:, i + 1] - n[:, i] - s) * (q[:, i] - q[:, i - 1])
                    / (n[:, i] - n[:, i - 1])
                )
                nb = (i + s).astype(np.int64)
                linear = q[:, i] + s * (q[rows, nb] - q[:, i]) / (n[rows, nb] - n[:, i])
            inside = (q[:, i - 1] < parabolic) & (parabolic < q[:, i + 1])
            new = np.where(inside, parabolic, linear)
            q[:, i] = np.where(move, new, q[:, i])
            n[:, i] = np.where(move, n[:, i] + s, n[:, i])
        return self

    def value(self) -> NDArray[np.float64]:
        """Current quantile estimates, one per level (NaN-free; error before any observation)."""
        if self.count == 0:
            raise DataError("P²: no observations yet")
        if self.count < 5:
            return np.quantile(np.asarray(self._first), self.probs)
        return self.heights[:, 2].copy()

    def to_dict(self) -> dict[str, Any]:
        return {"probs": self.probs.tolist(), "count": self.count,
                "heights": self.heights.tolist(), "positions": self.positions.tolist(),
                "desired": self.desired.tolist(), "first": list(self._first)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> P2Quantiles:
        """Rebuild from :meth:`to_dict`, checking shapes and the observation count."""
        keys = {"probs", "count", "heights", "positions", "desired", "first"}
        if not isinstance(d, dict) or set(d) != keys:
            raise DataError(f"P² state needs the keys {sorted(keys)}")
        obj = cls(d["probs"])
        count = d["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise DataError(f"P² state: count must be a whole number >= 0, got {count!r}")
        obj.count = count
        for key in ("heights", "positions", "desired"):
            arr = np.asarray(d[key], dtype=np.float64)
            if arr.shape != (len(obj.probs), 5) or not np.isfinite(arr).all():
                raise DataError(f"P² state: {key} must be finite of shape "
                                f"{(len(obj.probs), 5)}, got {arr.shape}")
            setattr(obj, key, arr)
        obj._first = [float(v) for v in d["first"]]
        if len(obj._first) != min(count, 5):
            raise DataError(f"P² state: {len(obj._first)} first observations for count "
                            f"{count}")
        return obj


class ContinuousSQM(Calibrator):
    """SQM for continuous scores through P² quantile markers (the paper names P² only; ours).

    Judge and human streams each keep P² estimates at levels ``p_1 < … < p_L``;
    ``u = F̂_J(j)`` by linear interpolation of ``(q^J_l, p_l)`` (clamped to the end levels) and
    ``g(j)`` by linear interpolation of ``(p_l, q^H_l)`` at u. Marker estimates are made
    non-decreasing across levels (running maximum) before interpolating.

    Parameters
    ----------
    scale : (float, float)
        Bounds of the score range; scores outside are refused.
    probs : array of float, optional
        Quantile levels (default 0.01, 0.02, …, 0.99).
    """

    name = "sqm_continuous"

    def __init__(self, scale: tuple[float, float] = (0.0, 1.0),
                 probs: ArrayLike | None = None) -> None:
        lo, hi = float(scale[0]), float(scale[1])
        if not lo < hi:
            raise DataError(f"scale must be (low, high) with low < high, got {scale!r}")
        self.probs = np.linspace(0.01, 0.99, 99) if probs is None else \
            np.sort(np.asarray(probs, dtype=np.float64))
        self.scale = (lo, hi)  # type: ignore[assignment]
        self.n_anchors = 0
        self._reset()

    def _reset(self) -> None:
        self.judge_q = P2Quantiles(self.probs)
        self.human_q = P2Quantiles(self.probs)

    def _human(self, values: ArrayLike, what: str) -> NDArray[np.float64]:
        return self._checked(values, what)

    def _judge_many(self, judge: ArrayLike) -> NDArray[np.float64]:
        return self._checked(judge, "judge score")

    def _checked(self, values: ArrayLike, what: str) -> NDArray[np.float64]:
        x = np.atleast_1d(np.asarray(values, dtype=np.float64))
        off = ~np.isfinite(x) | (x < self.scale[0]) | (x > self.scale[1])
        if x.ndim != 1 or off.any():
            raise DataError(f"{what} off the declared range {self.scale} (or missing) at "
                            f"positions {np.flatnonzero(off)[:5].tolist()}")
        return x

    def _update(self, judge: float, human: float) -> None:
        self.judge_q.update(judge)
        self.human_q.update(human)

    def _predict(self, judge: NDArray[np.float64]) -> NDArray[np.float64]:
        qj = np.maximum.accumulate(self.judge_q.value())
        qh = np.maximum.accumulate(self.human_q.value())
        u = np.interp(judge, qj, self.probs)
        return np.interp(u, self.probs, qh)

    def _params(self) -> dict[str, Any]:
        return {"probs": self.probs.tolist()}

    def _state(self) -> dict[str, Any]:
        return {"judge_q": self.judge_q.to_dict(), "human_q": self.human_q.to_dict()}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.judge_q = P2Quantiles.from_dict(state["judge_q"])
        self.human_q = P2Quantiles.from_dict(state["human_q"])

    def _check_state(self) -> None:
        if not self.judge_q.count == self.human_q.count == self.n_anchors:
            raise DataError(f"{self.name} state: {self.judge_q.count} judge and "
                            f"{self.human_q.count} human observations for {self.n_anchors} "
                            "anchors")
