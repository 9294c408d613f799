"""Public entry points: ``fit`` at a fixed λ, ``gacv`` over the grid, ``loglik``, the
calibration LR test and exact leave-one-out, each on ONE Comparisons with the humans marked."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike
from scipy.special import chdtrc  # chi2.sf, without importing scipy.stats

from bayescal.data import Comparisons, DataError
from bayescal.data.comparisons import BUILTIN_CLUSTER_KEYS
from bayescal.dial import check_weight, weight_grid
from bayescal.frequentist import covariance
from bayescal.frequentist._core import Estimate, MLEBoundaryError
from bayescal.frequentist.human_calibration import inference
from bayescal.frequentist.human_calibration import optimize as opt
from bayescal.frequentist.human_calibration.objective import human_nll, llm_nll
from bayescal.frequentist.human_calibration.path import (
    SEPARATION,
    Candidate,
    Path,
    Reason,
    describe,
    one_blas_thread,
    run_path,
)
from bayescal.frequentist.human_calibration.problem import (
    Point,
    Problem,
    problem,
    require_fit_data,
)
from bayescal import identify
from bayescal.identify import IdentificationError, require_features_identified
from bayescal.schema import term_labels

__all__ = ["LRTest", "calibration_lr_test", "exact_loo", "fit", "gacv", "grid", "loglik"]

#: Covariance kinds offered (all of :data:`bayescal.frequentist.covariance.KINDS`).
KINDS = covariance.KINDS
ANCHORED = ("joint", "fixed")


def grid(p: Problem) -> list[float]:
    """Candidate λ in scan order, [∞, λ₀·geomspace(10, 0.1, 7), 0] with λ₀ = n_l/n_h."""
    return weight_grid(p.n_l, p.n_h)


def _request(data: Comparisons, information: str, cluster: str | None,
             correction: str | None) -> covariance.Request:
    if not isinstance(data, Comparisons):
        raise DataError("data must be a Comparisons with the human judge(s) marked: "
                        "Comparisons.from_frame(df, humans=['human']) or "
                        "Comparisons.concat([llm, human], humans=['human'])")
    return covariance.request(information, cluster=cluster, correction=correction,
                              supported=KINDS, data_key=data.cluster_key,
                              builtin_keys=BUILTIN_CLUSTER_KEYS, quasi=data.quasi_likelihood,
                              model="human-calibration")


def _check_anchored(anchored: str) -> None:
    if anchored not in ANCHORED:
        raise ValueError(f"anchored must be one of {ANCHORED}, got {anchored!r}")


def fit(data: Comparisons, *, rank: int = 1, space: str = "consensus",
        llm_weight: float = np.inf, order_effects: bool = True, anchored: str = "joint",
        information: str = "auto", cluster: str | None = None,
        correction: str | None = None) -> Estimate:
    r"""DIAL's calibrated human scores at a fixed LLM weight λ ((11); endpoints (12) and λ = 0).

    Parameters
    ----------
    data : Comparisons
        One data set: LLM judges' verdicts (with display order when ``order_effects``) and the
        human judge(s) marked ``humans=[...]`` (DIAL's human is a judge like any other; the LLM
        part is every other judge). Several human judges are pooled into one human score
        vector s_h, their display orders ignored. Every item needs LLM verdicts. With
        comparison features (``Comparisons.from_frame(features=...)``, one frame for both
        samples) the judges' logits gain β_kᵀ(x_i − x_j) and the humans' β_hᵀ(x_i − x_j); S,
        and so the calibration space, are then the judges' preferences at equal features.
    rank : int
        r, the disagreement rank of the judge model (1 ≤ r ≤ min(K − 1, N − 2)).
    space : {"consensus", "full"}
        Calibration basis M = μ (d = 1) or M = W = [μ, V] (d = r + 1).
    llm_weight : float
        λ ≥ 0 multiplying the average LLM NLL; 0 = human-only BTL, ``inf`` = anchored (12),
        n_l/n_h = joint MLE.
    order_effects : bool
        False sets b ≡ 0 (orders pooled): the DIAL-noPos ablation.
    anchored : {"joint", "fixed"}
        Intervals of ŝ_h at λ = ∞: ``joint`` adds the LLM estimation error of M (delta method
        through ĉ(θ)); ``fixed`` treats M as known — the authors' convention, which under-covers
        where n_l is not large against n_h.
    information : {"auto", "expected", "observed", "sandwich", "cluster"}
        Covariance kind; what each means at λ = 0, finite λ and ∞ is in
        :mod:`bayescal.frequentist.human_calibration.inference`. ``auto`` resolves as in
        :func:`bayescal.frequentist.covariance.request` (the data's own cluster key, else the
        sandwich with ties, else expected).
    cluster : str, optional
        Key of ``information="cluster"``: ``"judge_pair"`` (DIAL's cell-clustered intervals),
        ``"pair"``, or the data's own key.
    correction : {"CR1", "CR0"}, optional
        Small-sample factor of the cluster meat (default CR1; ``"CR0"`` with ``"judge_pair"``
        reproduces the authors' post-selection intervals).

    Returns
    -------
    Estimate
        ``human_ability[item]`` (ŝ_h) with Wald intervals; at λ > 0 also ``ability[judge,
        item]`` (S) and ``order_effect[judge]`` (b) from the same fit; with features
        ``human_feature_effect[feature]`` (β_h) and, at λ > 0, ``feature_effect[judge,
        feature]`` (β_k). ``info["llm_weight"]``
        = λ, ``info["gacv"]``, ``info["calibration"]`` (c in the paper's chart for consensus),
        ``info["intervals"]`` (what the covariance is), the covariance request.

    Raises
    ------
    DataError, IdentificationError
        Bad input (see :func:`~bayescal.frequentist.human_calibration.problem.problem`),
        Condition 4 failing at the LLM fit, an unidentified judges' model, a comparison
        feature whose effect the judges' or the humans' design cannot separate
        (:func:`bayescal.identify.require_features_identified`, named).
    ValueError
        A bad covariance request or weight.
    MLEBoundaryError
        λ = 0 and the human BTL MLE does not exist, or the fit did not converge / ran off.
    """
    lam = check_weight(llm_weight)
    _check_anchored(anchored)
    req = _request(data, information, cluster, correction)
    p = problem(data, rank=rank, space=space, order_effects=order_effects)
    require_fit_data(p)
    require_features_identified(p.llm)
    require_features_identified(p.human)
    clusters = inference.prepare_clusters(p, req, lam)
    path = run_path(p, [lam])
    cand = path.candidates[0]
    _require_estimate(cand, lam)
    with one_blas_thread():
        return _estimate(p, cand, req, clusters, anchored)


def _require_estimate(cand: Candidate, lam: float) -> None:
    """Refuse a candidate that has no estimate to report, by its reason (not its wording)."""
    reason = cand.reason
    if (not cand.fit.converged or reason is Reason.RUNAWAY
            or (lam == 0 and reason is not None)):
        raise MLEBoundaryError(f"no estimate at λ = {lam:g}: {describe(cand)}")
    if reason in (Reason.NULL_DIRECTIONS, Reason.CALIBRATION_SINGULAR):
        raise IdentificationError(
            f"no estimate at λ = {lam:g}: {describe(cand)}: the LLM and human data together do "
            "not identify every score. Add comparisons or lower the rank.")
    if np.abs(cand.fit.s).max() > SEPARATION:
        raise MLEBoundaryError(
            f"no interior estimate at λ = {lam:g}: {describe(cand)}; the human comparisons are "
            "(nearly) separated in the calibration space. Use a larger λ or more human data.")


def gacv(data: Comparisons, *, rank: int = 1, space: str = "consensus",
         grid_values: Sequence[float] | None = None, order_effects: bool = True,
         anchored: str = "joint", information: str = "auto", cluster: str | None = None,
         correction: str | None = None) -> tuple[pd.DataFrame, Estimate]:
    r"""Choose λ by GACV and return the candidate table and the selected fit.

    :math:`\mathrm{GACV}(\lambda) = \ell_h(\hat s_\lambda)
    + \mathrm{tr}(\hat H_\lambda^-\hat J_\lambda)/(n_h-1)` (see
    :mod:`~bayescal.frequentist.human_calibration.path`). Grid {∞, λ₀·geomspace(10, 0.1, 7),
    0} unless ``grid_values``; the minimiser over admissible candidates wins, exact ties to the
    larger λ. The other parameters are those of :func:`fit`;
    the covariance kind applies to the selected fit (post-selection intervals, no selection
    correction, as DIAL reports them).

    Returns
    -------
    table : DataFrame
        One row per candidate: ``llm_weight``, ``gacv``, ``admissible``, ``reason`` (words),
        ``reason_code`` (the :class:`~bayescal.frequentist.human_calibration.Reason` name),
        ``human_nll``, ``selected``, ``seconds``.
    estimate : Estimate
        :func:`fit`'s output at λ̂.

    Raises
    ------
    MLEBoundaryError, IdentificationError
        No admissible candidate (the message lists each λ's reason and the judges whose own
        verdicts are separated); λ = ∞ counts as admissible only where the LLM information at
        θ̂_∞ is non-singular.
    """
    _check_anchored(anchored)
    req = _request(data, information, cluster, correction)
    p = problem(data, rank=rank, space=space, order_effects=order_effects)
    require_fit_data(p)
    require_features_identified(p.llm)
    require_features_identified(p.human)
    inference.prepare_clusters(p, req, None)
    lams = _grid(p, grid_values)
    path = run_path(p, lams)
    cands = list(path.candidates)
    for idx, cnd in enumerate(cands):
        if cnd.fit.lam == np.inf and cnd.admissible:
            # λ = ∞ reports θ̂_∞'s covariance: admissible only where the LLM data identify it
            # (the check fit(llm_weight=inf) makes before it reports anything)
            why = inference.llm_identified(path.llm_fit.zeta, p)
            if why:
                cands[idx] = dataclasses.replace(cnd, reason=Reason.LLM_NOT_IDENTIFIED,
                                                 detail=f" ({why})")
    best = None
    for idx, cnd in enumerate(cands):
        if cnd.admissible and (best is None or cnd.gacv < cands[best].gacv):
            best = idx
    if best is None:
        raise _no_admissible(p, cands)
    table = pd.DataFrame({
        "llm_weight": lams,
        "gacv": [c.gacv for c in cands],
        "admissible": [c.admissible for c in cands],
        "reason": [describe(c) for c in cands],
        "reason_code": [c.reason.name if c.reason is not None else "" for c in cands],
        "human_nll": [human_nll(c.fit.s, p, c.fit.beta_h) / p.n_h
                      if np.isfinite(c.fit.s).all() else np.nan for c in cands],
        "selected": [i == best for i in range(len(cands))],
        "seconds": [c.seconds for c in cands],
    })
    chosen = cands[best]
    # checked before fitting for λ > 0; the human block has N − 1 parameters at λ̂ = 0
    clusters = inference.prepare_clusters(p, req, chosen.fit.lam, check=chosen.fit.lam == 0)
    with one_blas_thread():
        est = _estimate(p, chosen, req, clusters, anchored)
    est.info["gacv_table"] = table
    return table, est


def _no_admissible(p: Problem, cands: Sequence[Candidate]) -> Exception:
    """The refusal when GACV has no admissible λ: every candidate's reason, and the judges whose
    own verdicts have no BTL MLE (separation, the usual cause), instead of a λ = ∞ estimate
    with runaway scores."""
    rows = "; ".join(f"λ = {c.fit.lam:g}: {describe(c)}" for c in cands)
    separated = []
    for judge in p.llm.judges:
        ident = identify.check(p.llm.subset([judge]))
        if ident.connected and not ident.mle_exists:
            separated.append(f"{judge!r} ({ident.no_mle_message()})")
    evidence = (" Judges whose own verdicts are separated: " + "; ".join(separated) + "."
                if separated else "")
    boundary = any(c.reason is not None and c.reason.no_interior_estimate for c in cands)
    cls = MLEBoundaryError if boundary else IdentificationError
    return cls(
        f"no λ on the GACV grid has an estimate to report ({rows}).{evidence} Drop or merge the "
        "separated judges' verdicts, add comparisons, lower the rank, or fit a fixed λ with "
        "llm_weight=0 (human only) if the human data identify the scores.")


def _grid(p: Problem, grid_values: Sequence[float] | None) -> list[float]:
    if grid_values is None:
        return grid(p)
    return sorted({check_weight(v) for v in grid_values}, key=lambda v: -v)


def _estimate(p: Problem, cand: Candidate, req: covariance.Request,
              clusters: inference.Clusters | None, anchored: str) -> Estimate:
    f = cand.fit
    items, judges = list(p.items), list(p.judges)
    lam = f.lam
    features = list(p.llm.feature_names)
    params = {"human_ability": xr.DataArray(f.s, dims="item", coords={"item": items})}
    if features:
        params["human_feature_effect"] = xr.DataArray(f.beta_h, dims="feature",
                                                      coords={"feature": features})
    info: dict = {"llm_weight": lam, "rank": p.rank, "space": p.space, "gacv": cand.gacv,
                  "n_human": p.n_h, "n_llm": p.n_l, "converged": f.converged,
                  "order_effects": p.order, "anchored": anchored, **req.as_info()}
    if lam > 0:
        pt = p.point(f.zeta)
        params["ability"] = xr.DataArray(pt.S, dims=("judge", "item"),
                                         coords={"judge": judges, "item": items})
        if p.order:
            params["order_effect"] = xr.DataArray(pt.b, dims="judge", coords={"judge": judges})
        if features:
            params["feature_effect"] = xr.DataArray(pt.beta, dims=("judge", "feature"),
                                                    coords={"judge": judges,
                                                            "feature": features})
        info["calibration"] = (pt.u[0] * np.linalg.norm(pt.F @ pt.G.sum(axis=0) / p.K)
                               / np.sqrt(p.N) if p.space == "consensus" else None)
    result = inference.covariance_at(f, p, req.kind, clusters, anchored)
    info["intervals"] = result.description
    info["notes"] = {}
    ds = xr.Dataset(params)
    terms = tuple(lbl for name, da in ds.data_vars.items() for lbl in term_labels(str(name), da))
    method = {0.0: "human", np.inf: "dial-anchored"}.get(lam, "dial")
    return Estimate(method=method, params=ds, cov=result.cov, terms=terms,
                    interval={name: "wald" for name in ds.data_vars},
                    loglik=-human_nll(f.s, p, f.beta_h), converged=f.converged, info=info)


def loglik(params: Mapping[str, ArrayLike], data: Comparisons, *, llm_weight: float,
           rank: int = 1, space: str = "consensus", order_effects: bool = True) -> float:
    r"""Log-likelihood of the weighted objective (11) at ``params``: :math:`-n_h q_\lambda`.

    :math:`L_h(s_h) + w\,L_l(S, b)` with :math:`w = \lambda n_h/n_l` (total log-likelihoods;
    ties count 1/2 each way), the log density of the power posterior of
    :mod:`bayescal.models.human_calibration` up to its priors.

    Parameters
    ----------
    params : mapping
        ``human_ability`` (N, s_h); for λ > 0 also ``ability`` (K x N over the LLM judges, S) and
        ``order_effect`` (K) exactly when ``order_effects``. With comparison features also
        ``human_feature_effect`` (F, β_h) and, for λ > 0, ``feature_effect`` (K x F, β_k).
    data : Comparisons
        As in :func:`fit`.
    llm_weight : float
        λ ≥ 0, finite (λ = ∞ is the two-stage fit: its parts are
        :func:`bayescal.frequentist.low_rank_judges.loglik` and this function at λ = 0).

    Raises
    ------
    ValueError
        λ = ∞; shapes that do not match the data; for λ > 0, an S of rank above r + 1 or an
        s_h outside the calibration space of S (μ ∝ Sᵀ1, or the row space of S for ``full``).
    """
    lam = check_weight(llm_weight)
    if not np.isfinite(lam):
        raise ValueError("llm_weight = ∞ is the staged fit, not a weighted objective: use "
                         "low_rank_judges.loglik and this function at llm_weight=0")
    p = problem(data, rank=rank, space=space, order_effects=order_effects)
    s = np.asarray(params["human_ability"], dtype=np.float64)
    if s.shape != (p.N,):
        raise ValueError(f"human_ability has shape {s.shape}; the data have {p.N} items")
    beta_h = _feature_param(params, "human_feature_effect", (p.n_feat,), p)
    value = -human_nll(s, p, beta_h)
    if lam == 0:
        return value
    S = np.asarray(params["ability"], dtype=np.float64)
    if S.shape != (p.K, p.N):
        raise ValueError(f"ability has shape {S.shape}; the data have {p.K} LLM judges and "
                         f"{p.N} items")
    if order_effects != ("order_effect" in params):
        raise ValueError("params must hold 'order_effect' exactly when order_effects=True")
    b = np.asarray(params["order_effect"], dtype=np.float64) if order_effects else np.zeros(p.K)
    beta = _feature_param(params, "feature_effect", (p.K, p.n_feat), p)
    _check_calibration_space(S, s, p)
    F = np.linalg.svd(S, full_matrices=False)[2][: p.r1].T
    coef = np.column_stack(([b] if order_effects else []) + [beta]) if p.m else np.zeros((p.K, 0))
    # S = (S F) Fᵀ, F orthonormal
    pt = Point(np.zeros(0), S @ F, F, coef, beta_h, np.zeros(p.n_u), p.order)
    return value - lam * p.n_h / p.n_l * llm_nll(pt, p)


def _feature_param(params: Mapping[str, ArrayLike], name: str, shape: tuple[int, ...],
                   p: Problem) -> np.ndarray:
    """A feature-effect parameter of :func:`loglik`: required exactly when the data carry
    features, of the given shape."""
    if not p.n_feat:
        if name in params:
            raise ValueError(f"{name} given, but the data carry no comparison features")
        return np.zeros(shape)
    if name not in params:
        raise ValueError(f"the data carry features {list(p.llm.feature_names)}: params need "
                         f"{name} of shape {shape}")
    value = np.asarray(params[name], dtype=np.float64)
    if value.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {value.shape}")
    return value


def _check_calibration_space(S: np.ndarray, s: np.ndarray, p: Problem) -> None:
    sv = np.linalg.svd(S, compute_uv=False)
    scale = max(sv[0], 1e-300)
    if sv.size > p.r1 and sv[p.r1] > 1e-8 * scale:
        raise ValueError(f"ability has rank above r + 1 = {p.r1} (singular value "
                         f"{sv[p.r1]:.3g}): not a score matrix of the rank-{p.rank} model")
    if p.space == "consensus":
        M = S.sum(axis=0)[:, None]
    else:
        M = np.linalg.svd(S, full_matrices=False)[2][: p.r1].T
    resid = s - M @ np.linalg.lstsq(M, s, rcond=None)[0]
    if np.linalg.norm(resid) > 1e-6 * max(np.linalg.norm(s), 1.0):
        raise ValueError(f"human_ability is not in the {p.space} calibration space of ability "
                         f"(residual {np.linalg.norm(resid):.3g}): s_h = M c is required")


@dataclass(frozen=True)
class LRTest:
    """The calibration-restriction LR test and AICs (DIAL Prop. D.10)."""

    statistic: float
    df: int
    p_value: float
    aic_anchored: float
    aic_human: float


def calibration_lr_test(data: Comparisons, *, rank: int = 1, space: str = "consensus",
                        order_effects: bool = True) -> LRTest:
    r"""Calibration-restriction LR test and AIC (DIAL Prop. D.10).

    :math:`T = 2\{L_h(\hat c; M) - L_h(\hat s_0)\}` (total NLLs), df N − 1 − d, M from θ̂_∞
    treated as known (the τ = 0 regime); ``aic_anchored`` = 2 L_h(ĉ) + 2d against
    ``aic_human`` = 2 L_h(ŝ_0) + 2(N − 1). ``data`` as in :func:`fit`.

    Raises
    ------
    MLEBoundaryError
        The human-only MLE does not exist (the Firth-penalised variant is not implemented).
    """
    p = problem(data, rank=rank, space=space, order_effects=order_effects)
    require_fit_data(p)
    anc, hum = run_path(p, [np.inf, 0.0]).candidates
    if not hum.fit.converged:
        raise MLEBoundaryError("the LR test needs the human-only MLE: " + describe(hum))
    L_anc = human_nll(anc.fit.s, p, anc.fit.beta_h)
    L_hum = human_nll(hum.fit.s, p, hum.fit.beta_h)
    stat = 2 * (L_anc - L_hum)
    df = p.N - 1 - p.d
    return LRTest(stat, df, float(chdtrc(df, stat)) if df > 0 else np.nan,
                  2 * L_anc + 2 * p.d, 2 * L_hum + 2 * (p.N - 1))


# ---------------------------------------------------------------------------- exact LOO
def exact_loo(data: Comparisons, *, rank: int = 1, space: str = "consensus",
              grid_values: Sequence[float] | None = None,
              order_effects: bool = True) -> pd.DataFrame:
    r"""Exact leave-one-human-comparison-out loss per candidate λ beside GACV.

    :math:`\mathrm{CV}_{LOO}(\lambda) = n_h^{-1}\sum_t h_t(\hat\zeta_\lambda^{[-t]})`, where
    :math:`\hat\zeta^{[-t]}_\lambda` minimises :math:`(n_h-1)^{-1}\sum_{s\ne t} h_s + \lambda\ell_l`
    (all LLM verdicts kept). Comparisons with the same pair and outcome give the same refit,
    so one refit per (human cell, outcome) is enough, weighted by its multiplicity; each refit
    starts at the full-data fit. DIAL's Theorem 5: :math:`|\mathrm{GACV} - \mathrm{CV}_{LOO}| =
    O_p(n_h^{-2})`.

    Returns
    -------
    DataFrame
        ``llm_weight``, ``gacv``, ``loo``, ``gap`` (GACV − LOO), ``refits``, ``seconds``.
        Candidates where the full-data fit is inadmissible get NaN.

    Raises
    ------
    DataError
        Soft human outcomes (no whole comparisons to leave out), or as :func:`fit`.
    """
    p = problem(data, rank=rank, space=space, order_effects=order_effects)
    require_fit_data(p)
    outcomes = p.human.outcome_counts()
    lams = _grid(p, grid_values)
    path = run_path(p, lams)
    with one_blas_thread():
        return _loo_rows(p, lams, path, outcomes)


def _loo_rows(p: Problem, lams: list[float], path: Path,
              outcomes: tuple[np.ndarray, np.ndarray, np.ndarray]) -> pd.DataFrame:
    rows = []
    for lam, cand in zip(lams, path.candidates, strict=True):
        t0 = time.perf_counter()
        if not cand.admissible:
            rows.append({"llm_weight": lam, "gacv": cand.gacv, "loo": np.nan, "gap": np.nan,
                         "refits": 0, "seconds": 0.0})
            continue
        total, refits = 0.0, 0
        for y, mult in zip((1.0, 0.5, 0.0), outcomes, strict=True):
            for c in np.flatnonzero(mult > 0):
                hn, hy, hy2 = p.hn.copy(), p.hy.copy(), p.hy2.copy()
                hn[c] -= 1
                hy[c] -= y
                hy2[c] -= y * y
                s, beta_h = _refit(p.with_human(hn, hy, hy2), cand.fit)
                d = s[p.hi[c]] - s[p.hj[c]] + p.hx[c] @ beta_h
                total += mult[c] * (np.logaddexp(0.0, d) - y * d)
                refits += 1
        loo = total / p.n_h
        rows.append({"llm_weight": lam, "gacv": cand.gacv, "loo": loo, "gap": cand.gacv - loo,
                     "refits": refits, "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)


def _refit(q: Problem, f: opt.Fit) -> tuple[np.ndarray, np.ndarray]:
    """Refit at f's λ on the reduced human data, warm-started at the full-data fit: (ŝ_h,
    β̂_h)."""
    if f.lam == 0:
        s, beta_h, _ = opt.human_btl(q, start=f.s, start_beta=f.beta_h)
        return s, beta_h
    res = opt.newton(f.zeta, q, 0.0 if f.lam == np.inf else f.lam, fixed_theta=f.lam == np.inf)
    return opt.scores_at(res.zeta, q), q.point(res.zeta).beta_h

