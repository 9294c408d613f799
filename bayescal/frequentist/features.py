r"""Judge-specific effects of comparison features, shared by the pairwise twins.

The order-effect BTL (DIAL's model (1)), the judge-discrimination BTL (Xu, Tan, Wu, Zhou 2026,
arXiv:2601.21817) and DIAL's low-rank judges add the same term to their logit,
:math:`\beta_k^\top(x_i - x_j)`, judge k's effect of the feature differences of a comparison
(``Comparisons.from_frame(features=...)``; the differences, cells and identification checks
live in :mod:`bayescal.data` and :mod:`bayescal.identify`). This module holds what their twins
share about it: reading ``feature_effect`` from a parameter mapping, the per-judge score sums
:math:`\sum_c r_c x_c` of the term, and the headline contrasts :math:`\beta_k - \beta_h`
against human judges.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from bayescal.data import Comparisons
from bayescal.frequentist._core import Estimate
from bayescal.priors import check_prior_sd
from bayescal.schema import resolve_prob, wald_interval

__all__ = ["feature_effect_contrasts", "feature_effect_param", "feature_penalty_sd",
           "feature_sums"]


def feature_effect_param(params: Mapping[str, ArrayLike], data: Comparisons
                         ) -> NDArray[np.float64]:
    r"""``params["feature_effect"]`` (:math:`\beta`, judges x features), its shape checked.

    Zeros of shape (judges, 0) for data without features, where ``feature_effect`` must not be
    given (a parameter the data cannot inform, silently ignored, would be a wrong answer).
    """
    shape = (data.n_judges, data.n_features)
    if data.n_features == 0:
        if "feature_effect" in params:
            raise ValueError("feature_effect given, but the data carry no comparison features")
        return np.zeros(shape)
    if "feature_effect" not in params:
        raise ValueError(f"the data carry features {list(data.feature_names)}: params need "
                         f"feature_effect of shape (judges, features) = {shape}")
    beta = np.asarray(params["feature_effect"], dtype=np.float64)
    if beta.shape != shape:
        raise ValueError(f"feature_effect must have shape (judges, features) = {shape}; got "
                         f"{beta.shape}")
    return beta


def feature_penalty_sd(penalty: object) -> float | None:
    """The feature effects' prior sd of a twin's ``penalty`` (a model's ``Priors``), or None.

    Refuses a penalty whose ``feature_pooling`` is not ``"none"``: a shared or partially pooled
    prior is not the independent Gaussian the twins add, and silently using it as one would
    return the optimum of another model.
    """
    if penalty is None:
        return None
    pooling = getattr(penalty, "feature_pooling", "none")
    if pooling != "none":
        raise ValueError(
            f"the twin's penalty takes independent feature-effect priors only "
            f"(feature_pooling='none'), got feature_pooling={pooling!r}: fit that prior with "
            "the PyMC model (NUTS)")
    sd = getattr(penalty, "feature_effect_sd", None)
    check_prior_sd("feature_effect_sd", sd)
    return sd


def feature_sums(judge: NDArray[np.integer], values: NDArray[np.float64],
                 x: NDArray[np.float64], n_judges: int) -> NDArray[np.float64]:
    r""":math:`\sum_{c:\,k_c = k} v_c x_{cf}` per judge and feature (judges x features).

    With :math:`v_c = y_c - n_c p_c` it is the score :math:`\partial\ell/\partial\beta_{kf}`.
    """
    n_feat = x.shape[1]
    flat = judge[:, None] * n_feat + np.arange(n_feat)
    return np.bincount(flat.ravel(), (values[:, None] * x).ravel(),
                       n_judges * n_feat).reshape(n_judges, n_feat)


def feature_effect_contrasts(estimate: Estimate, prob: float | None = None, *,
                             humans: list[str] | None = None,
                             ci_prob: float | None = None) -> pd.DataFrame:
    r"""Each judge's feature effect relative to a human judge: :math:`\beta_{kf} - \beta_{hf}`.

    The headline "bias relative to humans": a judge that rewards length by
    :math:`\beta_k` where humans reward it by :math:`\beta_h` has excess length bias
    :math:`\beta_k - \beta_h`. Wald intervals with
    :math:`\mathrm{se}^2 = v_{kk} + v_{hh} - 2v_{kh}` from the estimate's covariance (the cross
    term is non-zero when the judges share parameters, as in the judge-discrimination BTL and
    the low-rank judges, or a cluster key, e.g. a battle judged by an LLM and a human), and the two-sided normal p-value of :math:`\beta_{kf} = \beta_{hf}`.

    Parameters
    ----------
    estimate : Estimate
        From a pairwise twin's ``fit`` on data with comparison features, or from
        :func:`bayescal.frequentist.human_calibration.fit` (whose humans' effect is
        ``human_feature_effect[feature]``, β_h of the pooled human judge, named ``human``
        here).
    prob : float, optional
        Interval probability (default 0.95; ``ci_prob``: the same under ArviZ's name).
    humans : list of str, optional
        The reference judge(s); default the judges marked ``humans`` in the data
        (``Estimate.info["humans"]``). Not with a ``human_feature_effect``.

    Returns
    -------
    DataFrame
        One row per (judge, human, feature) with the judge not a human: ``judge``, ``human``,
        ``feature``, ``estimate``, ``se``, ``lower``, ``upper``, ``statistic``, ``p_value``,
        ``prob``.

    Raises
    ------
    ValueError
        The estimate has no ``feature_effect``; no human judge is given or marked; a human
        that is not a judge; every judge is a human.
    """
    prob = resolve_prob(prob, ci_prob)
    if "feature_effect" not in estimate.params:
        raise ValueError("the estimate has no feature_effect: fit data built with "
                         "Comparisons.from_frame(..., features=...)")
    beta = estimate.params["feature_effect"]
    judges = [str(j) for j in beta.coords["judge"].values]
    features = [str(f) for f in beta.coords["feature"].values]
    pos = {t: r for r, t in enumerate(estimate.terms)}
    if "human_feature_effect" in estimate.params:
        # the calibration's pooled human judge: β_h has its own variable
        if humans is not None:
            raise ValueError("humans= does not apply: the estimate's human effect is its "
                             "human_feature_effect (the pooled human judge)")
        ref = {f: (float(estimate.params["human_feature_effect"].sel(feature=f)),
                   pos[f"human_feature_effect[{f}]"]) for f in features}
        return _contrast_table(estimate, prob, [
            (k, "human", f, float(beta.sel(judge=k, feature=f)), pos[f"feature_effect[{k}, {f}]"],
             *ref[f]) for k in judges for f in features])
    refs = list(humans) if humans is not None else list(estimate.info.get("humans", []))
    if not refs:
        raise ValueError("no human judge: mark them in the data (Comparisons.from_frame(..., "
                         f"humans=[...])) or pass humans=; judges are {judges}")
    unknown = [h for h in refs if h not in judges]
    if unknown:
        raise ValueError(f"humans {unknown} are not judges of the estimate; judges are {judges}")
    machines = [j for j in judges if j not in refs]
    if not machines:
        raise ValueError(f"every judge {judges} is a human: there is nothing to contrast")
    return _contrast_table(estimate, prob, [
        (k, h, f, float(beta.sel(judge=k, feature=f)), pos[f"feature_effect[{k}, {f}]"],
         float(beta.sel(judge=h, feature=f)), pos[f"feature_effect[{h}, {f}]"])
        for h in refs for k in machines for f in features])


def _contrast_table(estimate: Estimate, prob: float,
                    pairs: list[tuple[str, str, str, float, int, float, int]]) -> pd.DataFrame:
    """Rows (judge, human, feature, β_k, its term, β_h, its term) to the contrasts' table."""
    rows = []
    for k, h, f, bk, a, bh, c in pairs:
        var = estimate.cov[a, a] + estimate.cov[c, c] - 2 * estimate.cov[a, c]
        rows.append((k, h, f, bk - bh, float(np.sqrt(max(var, 0.0)))))
    out = pd.DataFrame(rows, columns=["judge", "human", "feature", "estimate", "se"])
    out["lower"], out["upper"] = wald_interval(out["estimate"].to_numpy(),
                                               out["se"].to_numpy(), prob, "wald")
    out["statistic"] = out["estimate"] / out["se"]
    out["p_value"] = 2 * ndtr(-np.abs(out["statistic"]))
    out["prob"] = prob
    return out
