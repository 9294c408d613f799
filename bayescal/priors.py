"""The one check of prior scales, shared by every model's ``Priors`` and every twin's penalty.

A prior standard deviation is a finite positive number, or ``None`` for a flat prior (improper:
fine for a MAP, which then equals the MLE; refused where a posterior needs it proper). A Beta
prior is a pair (a, b) of finite positive numbers (Beta(1, 1) is the flat prior on (0, 1)).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["FEATURE_POOLING", "check_beta_prior", "check_feature_pooling", "check_prior_sd"]

#: How the pairwise models' feature effects β_k are pooled across judges
#: (``Priors.feature_pooling``).
FEATURE_POOLING = ("none", "shared", "partial")


def check_prior_sd(name: str, sd: object) -> None:
    """Raise ValueError unless ``sd`` is None (flat) or a finite positive number."""
    if sd is None:
        return
    if (not isinstance(sd, numbers.Real) or isinstance(sd, bool)
            or not math.isfinite(float(sd)) or float(sd) <= 0):
        raise ValueError(
            f"{name} must be a finite positive number (a prior standard deviation) or None "
            f"for a flat prior, got {sd!r}"
        )


def check_beta_prior(name: str, ab: object) -> None:
    """Raise ValueError unless ``ab`` is a Beta (a, b) pair of finite positive numbers."""
    try:
        a, b = ab  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a Beta (a, b) pair, got {ab!r}") from None
    for value in (a, b):
        if (not isinstance(value, numbers.Real) or isinstance(value, bool)
                or not math.isfinite(float(value)) or float(value) <= 0):
            raise ValueError(
                f"{name} must be a Beta (a, b) pair of finite positive numbers, got {ab!r}"
            )


def check_feature_pooling(pooling: object, scale_sd: object) -> None:
    """Raise ValueError unless ``pooling`` is one of :data:`FEATURE_POOLING` and the
    partial-pooling scale's prior sd ``scale_sd`` is a finite positive number (never flat: a
    flat prior on a hierarchical scale gives an improper posterior)."""
    if pooling not in FEATURE_POOLING:
        raise ValueError(f"feature_pooling must be one of {FEATURE_POOLING}, got {pooling!r}")
    if scale_sd is None:
        raise ValueError("feature_pooling_sd cannot be None: the half-normal prior on the "
                         "spread of the judges' feature effects must be proper")
    check_prior_sd("feature_pooling_sd", scale_sd)
