"""The one check of prior scales, shared by every model's ``Priors`` and every twin's penalty.

A prior standard deviation is a finite positive number, or ``None`` for a flat prior (improper:
fine for a MAP, which then equals the MLE; refused where a posterior needs it proper).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_prior_sd"]


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
