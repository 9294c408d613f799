r"""Exact leave-one-human-comparison-out refits, cross-checking DIAL's GACV (SPEC §1.9).

:math:`\mathrm{CV}_{LOO}(\lambda) = n_h^{-1}\sum_t h_t(\hat\zeta_\lambda^{[-t]})`, where
:math:`\hat\zeta^{[-t]}_\lambda` minimises
:math:`(n_h-1)^{-1}\sum_{s\ne t} h_s + \lambda\ell_l` (all
LLM verdicts kept). Comparisons with the same pair and outcome give the same refit, so one refit
per (human cell, outcome) is enough, weighted by its multiplicity. Theorem 5:
:math:`|\mathrm{GACV} - \mathrm{CV}_{LOO}| = O_p(n_h^{-2})`.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc

__all__ = ["exact_loo"]


def _outcome_counts(p: hc.Problem):
    """Per human cell: (y, multiplicity) of wins, ties and losses of item i (from n, Σy, Σy²)."""
    half = 4 * (p.hy - p.hy2)
    ones = 2 * p.hy2 - p.hy
    zeros = p.hn - ones - half
    return [(1.0, ones), (0.5, half), (0.0, zeros)]


def exact_loo(llm: Comparisons, human: Comparisons, *, rank: int = 1, space: str = "consensus",
              grid_values: list[float] | None = None, order_effects: bool = True) -> pd.DataFrame:
    """Exact LOO human loss per candidate λ beside GACV.

    Returns
    -------
    DataFrame
        ``llm_weight``, ``gacv``, ``loo``, ``gap`` (GACV − LOO), ``refits``, ``seconds``.
        Candidates where the full-data fit is inadmissible get NaN.
    """
    p = hc.problem(llm, human, rank=rank, space=space, order_effects=order_effects)
    lams = hc.grid(p) if grid_values is None else sorted(
        {hc._check_weight(v) for v in grid_values}, key=lambda v: -v)
    path = hc._path(p, lams)
    with hc._one_blas_thread():
        return _loo_rows(p, lams, path)


def _loo_rows(p: hc.Problem, lams: list[float], path: dict) -> pd.DataFrame:
    T = path["chart"]
    rows = []
    for lam, cand in zip(lams, path["candidates"], strict=True):
        t0 = time.perf_counter()
        if not cand["admissible"]:
            rows.append({"llm_weight": lam, "gacv": cand["gacv"], "loo": np.nan, "gap": np.nan,
                         "refits": 0, "seconds": 0.0})
            continue
        f = cand["fit"]
        total, refits = 0.0, 0
        for y, mult in _outcome_counts(p):
            for c in np.flatnonzero(mult > 0.5):
                hn, hy, hy2 = p.hn.copy(), p.hy.copy(), p.hy2.copy()
                hn[c] -= 1
                hy[c] -= y
                hy2[c] -= y * y
                q = p.human(hn, hy, hy2)
                s = _refit(q, lam, f, T)
                d = s[p.hi[c]] - s[p.hj[c]]
                total += mult[c] * (np.logaddexp(0.0, d) - y * d)
                refits += 1
        loo = total / p.n_h
        rows.append({"llm_weight": lam, "gacv": cand["gacv"], "loo": loo,
                     "gap": cand["gacv"] - loo, "refits": refits,
                     "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)


def _refit(q: hc.Problem, lam: float, f, T) -> np.ndarray:
    """Refit at λ on the reduced human data, warm-started at the full-data fit."""
    if lam == 0:
        s, _ = hc._human_btl(q, start=f.s)
        return s
    if lam == np.inf:
        z, _, _, _ = hc._newton(f.zeta, q, 0.0, T, fixed_theta=True)
    else:
        z, _, _, _ = hc._newton(f.zeta, q, lam, T)
    G, F, _, u = hc._split(T @ z, q)
    return hc._human_scores(G, F, u, q)
