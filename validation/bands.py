"""The binomial band of the validation studies: where a valid interval's coverage falls.

A 95 % interval that is valid covers in each of R independent replicates with probability
0.95, so its observed coverage has standard deviation sqrt(0.95 · 0.05 / R); the studies call
an interval ``holds`` within 3 of those of its level, ``under`` below and ``over`` above. The
threshold comes from the binomial distribution, not from the results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PROB = 0.95
BAND_SD = 3.0


def band(reps: Any, prob: float = PROB, k: float = BAND_SD) -> Any:
    """Half-width k·sqrt(prob(1 − prob)/R) of the band a valid interval's coverage falls in."""
    r = np.asarray(reps, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return k * np.sqrt(prob * (1 - prob) / r)


def verdict(coverage: float, reps: int, prob: float = PROB, *, half: float | None = None) -> str:
    """``holds`` / ``under`` / ``over`` the band (:func:`band`, or the given ``half``-width);
    ``refused`` when the row gave no interval in any replicate."""
    if reps == 0 or not np.isfinite(coverage):
        return "refused"
    half = float(band(reps, prob)) if half is None else half
    if coverage < prob - half:
        return "under"
    if coverage > prob + half:
        return "over"
    return "holds"
