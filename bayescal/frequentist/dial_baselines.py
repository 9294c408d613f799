r"""DIAL's baselines (DIAL 2026, Section 6) beside the adaptive calibration.

=============  ===========================================================================
Human          centred human BTL, λ = 0 (not reported where the human MLE does not exist)
Pooled         BTL on all LLM verdicts (judges and orders pooled, no b), rescaled by one
               human-fitted scalar α̂ = argmin_α ℓ_h(α ŝ_pool)
DIAL-Anc       (12) with M = μ̂_∞: λ = ∞, consensus space
DIAL-Ada       (11), M = μ, λ chosen by GACV
DIAL-Ada(W)    (11), M = W = [μ, V], λ chosen by GACV
DIAL-noPos     DIAL-Ada with b ≡ 0 (display orders pooled)
AtC            isotonic least-squares projection of the LLM consensus μ_code = Sᵀ1/K (the
               authors' judge-side chart) onto the order of the human BTL ŝ_0, centred (scale
               of μ; compare by Kendall τ only)
=============  ===========================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression
from scipy.special import expit

from bayescal import identify
from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.identify import IdentificationError

__all__ = ["METHODS", "baselines", "pooled_btl"]

METHODS = ("Human", "Pooled", "DIAL-Anc", "DIAL-Ada", "DIAL-Ada(W)", "DIAL-noPos", "AtC")


def _btl(N: int, i, j, n, y, *, max_iter: int = 100) -> np.ndarray:
    """Centred BTL MLE by Newton in Helmert coordinates (existence checked by the caller)."""
    B = zero_sum_basis(N)
    X = B[i] - B[j]
    beta = np.zeros(N - 1)
    for _ in range(max_iter):
        d = X @ beta
        pr = expit(d)
        g = X.T @ (n * pr - y)
        if np.abs(g).max() < 1e-10 * n.sum():
            break
        H = X.T @ ((n * pr * (1 - pr))[:, None] * X)
        beta = beta - np.linalg.solve(H, g)
    return B @ beta


def pooled_btl(data: Comparisons) -> np.ndarray:
    """ŝ_pool: BTL on all LLM verdicts (the judges not marked human) with judges and display
    orders pooled (no b)."""
    llm = data.subset([j for j in data.judges if j not in data.humans])
    c = llm.collapse(order=True, judges=True)
    identify.require_mle(c)
    return _btl(llm.n_items, c.item_i, c.item_j, c.count, c.wins)


def _scale(s: np.ndarray, p: hc.Problem) -> float:
    """α̂ = argmin_α ℓ_h(α s) (one-dimensional logistic regression, Newton)."""
    x = s[p.hi] - s[p.hj]
    a = 0.0
    for _ in range(100):
        pr = expit(a * x)
        g = np.sum(x * (p.hn * pr - p.hy))
        h = np.sum(x * x * p.hn * pr * (1 - pr))
        step = g / h
        a -= step
        if abs(step) < 1e-12 * max(1.0, abs(a)):
            break
    return a


def baselines(data: Comparisons, *, rank: int = 1, information: str = "auto",
              cluster: str | None = None, correction: str | None = None
              ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Estimate | None]]:
    """Every method of DIAL's Section 6 on one data set (humans marked, as in
    :func:`bayescal.frequentist.human_calibration.fit`).

    ``information``, ``cluster`` and ``correction`` set the intervals of every DIAL estimate
    (the meanings of :func:`bayescal.frequentist.human_calibration.fit`; the Human baseline
    takes them at λ = 0).

    Returns
    -------
    scores : DataFrame
        Index ``item``, one column per method in :data:`METHODS` (NaN where a method is not
        defined or its fit does not exist, e.g. Human and AtC without a human MLE; the reason
        is in ``methods["note"]``).
    methods : DataFrame
        Index ``method``: ``llm_weight`` (λ used; NaN where none) and ``note``.
    estimates : dict
        Method → :class:`~bayescal.frequentist.Estimate` with intervals (Human, DIAL-Anc,
        DIAL-Ada, DIAL-Ada(W), DIAL-noPos; None where not defined).

    Raises
    ------
    DataError
        Comparisons with features: the Pooled and AtC baselines have no feature effects (fit
        :func:`bayescal.frequentist.human_calibration.fit`, which has them).
    """
    identify.refuse_features(data, "DIAL baselines' comparison (Pooled, AtC)")
    p = hc.problem(data, rank=rank)
    cov = {"information": information, "cluster": cluster, "correction": correction}
    N = p.N
    scores: dict[str, np.ndarray] = {}
    rows: dict[str, tuple[float, str]] = {}
    ests: dict[str, Estimate | None] = {}
    try:
        human = ests["Human"] = hc.fit(data, rank=rank, llm_weight=0, **cov)
        s0 = human.params["human_ability"].values
        rows["Human"] = (0.0, "")
    except MLEBoundaryError as err:
        ests["Human"] = None
        s0 = np.full(N, np.nan)
        rows["Human"] = (0.0, str(err))
    scores["Human"] = s0
    pool = pooled_btl(data)
    alpha = _scale(pool, p)
    scores["Pooled"] = alpha * pool
    rows["Pooled"] = (np.nan, f"α̂ = {alpha:.4g}")
    anc: Estimate | None
    try:
        anc = ests["DIAL-Anc"] = hc.fit(data, rank=rank, llm_weight=np.inf, **cov)
        scores["DIAL-Anc"] = anc.params["human_ability"].values
        rows["DIAL-Anc"] = (np.inf, "")
    except (MLEBoundaryError, IdentificationError) as err:
        anc = ests["DIAL-Anc"] = None
        scores["DIAL-Anc"] = np.full(N, np.nan)
        rows["DIAL-Anc"] = (np.inf, f"not reported: {err}")
    for name, kw in (("DIAL-Ada", {}), ("DIAL-Ada(W)", {"space": "full"}),
                     ("DIAL-noPos", {"order_effects": False})):
        try:
            _, est = hc.gacv(data, rank=rank, **kw, **cov)
        except (MLEBoundaryError, IdentificationError) as err:
            ests[name] = None
            scores[name] = np.full(N, np.nan)
            rows[name] = (np.nan, f"not reported: {err}")
            continue
        ests[name] = est
        scores[name] = est.params["human_ability"].values
        rows[name] = (est.info["llm_weight"], "GACV")
    if np.isfinite(s0).all() and anc is not None:
        mu_code = anc.params["ability"].values.mean(axis=0)
        order = np.argsort(s0, kind="stable")
        iso = np.empty(N)
        iso[order] = isotonic_regression(mu_code[order]).x
        scores["AtC"] = iso - iso.mean()
        rows["AtC"] = (np.nan, "isotonic μ_code in the human order (scale of μ)")
    else:
        scores["AtC"] = np.full(N, np.nan)
        rows["AtC"] = (np.nan, "undefined: the human BTL MLE or the LLM-only fit does not exist")
    table = pd.DataFrame(scores, index=pd.Index(list(p.items), name="item"))[list(METHODS)]
    info = pd.DataFrame.from_dict(rows, orient="index", columns=["llm_weight", "note"])
    info.index.name = "method"
    return table, info.loc[list(METHODS)], ests
