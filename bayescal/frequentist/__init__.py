"""Frequentist twins: numpy/scipy estimators that never import PyMC."""

from bayescal.frequentist._core import Estimate, MLEBoundaryError

__all__ = ["Estimate", "MLEBoundaryError"]
