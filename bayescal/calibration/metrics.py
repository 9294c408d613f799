"""Held-out metrics (arXiv:2611.00447, Section 3): MAE, 1-Wasserstein, exact match, pairs."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import wasserstein_distance

__all__ = ["discordant_pairs", "exact_match", "mae", "round_scores", "wasserstein",
           "wasserstein_distribution"]


def round_scores(x: ArrayLike, scale: tuple[int, int]) -> NDArray[np.float64]:
    """Round half up (``floor(x + ½)``) and clip to ``[a, b]``: the integer output (card, 1)."""
    return np.clip(np.floor(np.asarray(x, dtype=np.float64) + 0.5), scale[0], scale[1])


def mae(pred: ArrayLike, human: ArrayLike) -> float:
    """Mean absolute error ``mean |g(j_i) − h_i|``."""
    return float(np.mean(np.abs(np.asarray(pred, float) - np.asarray(human, float))))


def wasserstein(pred: ArrayLike, human: ArrayLike) -> float:
    """1-Wasserstein distance between the calibrated and the human score distributions.

    ``∫ |F_1 − F_2|`` on the score scale (``scipy.stats.wasserstein_distance``); on an integer
    scale with integer outputs this is ``Σ_v |F̂_1(v) − F̂_2(v)|``.
    """
    return float(wasserstein_distance(np.asarray(pred, float), np.asarray(human, float)))


def wasserstein_distribution(dist: ArrayLike, human: ArrayLike, scale: tuple[int, int]
                             ) -> float:
    """1-Wasserstein distance between a distributional output and the human scores.

    A method that predicts a distribution over the levels ``a..b`` per item (predictive SQM,
    arXiv:2611.00447 Section 4.1) is a distribution of calibrated scores: the mixture
    ``p̄(v) = mean_i p_i(v)``. Its distance to the humans' empirical distribution is
    ``Σ_v |P̄(v) − F̂_h(v)|`` (cumulative sums over the integer levels). Scoring the mean of
    each ``p_i`` instead (:func:`wasserstein` on :meth:`predict`) compares non-integer points
    with integer human scores, a distance that stays above zero even when the predicted
    distribution is the humans' own.

    Parameters
    ----------
    dist : array (n, b - a + 1)
        Each item's predicted probabilities over the levels (rows sum to 1).
    human : array (n,)
        Integer human scores in ``a..b``.
    scale : (int, int)
        The scale ``(a, b)``.
    """
    p = np.asarray(dist, dtype=np.float64)
    levels = np.arange(scale[0], scale[1] + 1, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != len(levels):
        raise ValueError(f"dist must have one column per level {scale[0]}..{scale[1]}, "
                         f"got shape {p.shape}")
    return float(wasserstein_distance(levels, np.asarray(human, float), u_weights=p.sum(axis=0)))


def exact_match(pred: ArrayLike, human: ArrayLike, scale: tuple[int, int]) -> float:
    """Share of items whose rounded calibrated score equals the human score (card, convention 1)."""
    return float(np.mean(round_scores(pred, scale) == np.asarray(human, float)))


def discordant_pairs(x: ArrayLike, y: ArrayLike) -> NDArray[np.bool_]:
    """Boolean matrix of discordant pairs ``(x_i − x_k)(y_i − y_k) < 0`` (upper triangle).

    A non-decreasing calibration map can merge levels (creating ties) but never reverses a pair:
    discordant pairs after calibration ⊆ discordant pairs before (card, convention 9).
    """
    a, b = np.asarray(x, float), np.asarray(y, float)
    d = (a[:, None] - a[None, :]) * (b[:, None] - b[None, :]) < 0
    return np.triu(d, 1)
