r"""Fixed bases of the identification constraints, shared by the PyMC models and the twins.

A sum-zero vector (abilities under :math:`\sum_i s_i = 0`, log discriminations under
:math:`\sum_k \log\gamma_k = 0`) has n − 1 free coordinates; both the PyMC models (flat priors
on free coordinates) and the twins (Newton steps in the free chart) write it as
:math:`s = A u` with the orthonormal Helmert basis A below, so a MAP and an MLE live in the
same chart. No PyMC, no other bayescal imports.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["zero_sum_basis"]


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
