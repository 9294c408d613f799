r"""DIAL's human calibration in PyMC: the power posterior of (11) and λ chosen by PSIS-LOO.

The Bayesian counterpart of :mod:`bayescal.frequentist.human_calibration` (SPEC §1.16). With
:math:`\ell_h, \ell_l` the average negative log-likelihoods of (11), the generalised posterior

.. math:: p_\lambda(\zeta\mid\text{data}) \propto \pi(\zeta)\,\exp\{-n_h[\ell_h + \lambda\ell_l]\}
          = \pi(\zeta)\,L_h(\zeta)\,L_l(\zeta)^{w},\qquad w = \lambda\,n_h/n_l,

so λ = n_l/n_h (w = 1) is ordinary joint Bayes and λ = 0 the human-only model. The LLM term
enters as ``pm.Potential("llm_tempered", w * logp_llm)`` (binomial kernel), the human one as an
observed node with **one entry per human comparison** (``human_outcome``, dim ``comparison``), so
the ``log_likelihood`` group holds the human comparisons only and ``az.loo`` is
leave-one-human-comparison-out with all LLM data kept — the analogue of GACV.
λ = ∞ is the cut (two-stage) posterior :func:`cut_posterior`.

Parameterisation (exact Condition 3, SPEC §1.16): :math:`W = [\mu, V] = \sqrt N H_N A L^{-\top}`,
:math:`L = \mathrm{chol}(A^\top A)`; :math:`\gamma = \bar\gamma 1_K + B_K\delta`, γ̄ > 0 pins the
sign of μ; :math:`U = B_K\tilde U`; :math:`s_h = c_0\mu` (consensus) or :math:`W c`
(full). Identified variables: ``human_ability``, ``ability``, ``order_effect``, ``consensus``;
names ending in ``_free`` are not identified (rotations of (U, V), A, c_V).

==========================  ==============  ===========================================
name                        dims            meaning
==========================  ==============  ===========================================
``human_ability``           item            s_h = M c
``ability``                 judge, item     S = γμᵀ + UVᵀ
``order_effect``            judge           b (model (1))
``consensus``               item            μ (‖μ‖² = N)
``calibration_consensus``   —               c_0 (coefficient of μ)
``human_outcome``           comparison      human y_t ∈ {0, 1/2, 1} (observed)
==========================  ==============  ===========================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.frequentist import human_calibration as hc

__all__ = ["Priors", "build", "choose_by_loo", "cut_posterior", "human_rows", "initvals",
           "llm_logp"]


@dataclass(frozen=True)
class Priors:
    """Prior scales (SPEC §1.16 defaults; logit scale with ‖μ‖² = N).

    ``None`` makes a block flat (``calibration_sd`` and the LLM blocks), for MAP = MLE checks.
    """

    basis_sd: float = 1.0
    loading_mean_sd: float | None = 0.5
    loading_sd: float | None = 0.5
    disagreement_sd: float | None = 1.0
    order_effect_sd: float | None = 1.0
    calibration_sd: float | None = 2.0
    human_sd: float | None = 2.0  # λ = 0: Helmert coordinates of the human scores


def _normal(name, sd, **kw):
    return pm.Flat(name, **kw) if sd is None else pm.Normal(name, 0.0, sd, **kw)


def human_rows(p: hc.Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per human comparison (i, j, y) from the cells (y ∈ {0, 1/2, 1}; ties from Σy²)."""
    half = np.rint(4 * (p.hy - p.hy2)).astype(int)
    ones = np.rint(2 * p.hy2 - p.hy).astype(int)
    zeros = np.rint(p.hn).astype(int) - ones - half
    reps = np.stack([ones, half, zeros], axis=1)
    y = np.repeat(np.tile([1.0, 0.5, 0.0], p.hi.size), reps.ravel())
    cell = np.repeat(np.arange(p.hi.size), reps.sum(axis=1))
    return p.hi[cell], p.hj[cell], y


def _human_logp(value, d):
    # y log σ(d) + (1 − y) log σ(−d): one human comparison (a tie y = 1/2 included)
    return -value * pt.softplus(-d) - (1 - value) * pt.softplus(d)


def _draw_human(d, rng=None, size=None):
    # posterior predictive: a new comparison is a win or a loss (ties are not simulated)
    return rng.binomial(1, 1 / (1 + np.exp(-np.asarray(d))), size=size).astype(np.float64)


def llm_logp(S, b, p: hc.Problem):
    """Σ_c [y_c log σ(η_c) + (n_c − y_c) log σ(−η_c)] (binomial kernel; numpy or pytensor)."""
    eta = S[p.k, p.i] - S[p.k, p.j] + (p.a * b[p.k] if p.order else 0.0)
    if isinstance(eta, np.ndarray):
        return float(np.sum(-p.y * np.logaddexp(0, -eta) - (p.n - p.y) * np.logaddexp(0, eta)))
    return pt.sum(-p.y * pt.softplus(-eta) - (p.n - p.y) * pt.softplus(eta))


def build(llm: Comparisons, human: Comparisons | None, *, rank: int = 1,
          space: hc.Space = "consensus", llm_weight: float = 1.0, power: float | None = None,
          priors: Priors | None = None, order_effects: bool = True,
          tempered: bool = True) -> pm.Model:
    """Power-posterior model of DIAL's calibration at a finite λ (or λ = 0).

    Parameters
    ----------
    llm, human : Comparisons
        As in :func:`bayescal.frequentist.human_calibration.fit`. ``human=None`` builds the
        LLM-only model (the first stage of :func:`cut_posterior`).
    llm_weight : float
        λ ≥ 0, finite; the LLM log-likelihood is raised to w = λ n_h/n_l. λ = 0 gives the
        human-only model (centred scores, Helmert coordinates).
    power : float, optional
        w directly (overrides ``llm_weight``).
    tempered : bool
        False (only with w = 1) puts the LLM data in an observed node instead of the Potential —
        the ordinary joint model, for checking that w = 1 is joint Bayes.

    Returns
    -------
    pymc.Model
        Sample it with ``initvals=initvals(model)`` (the chart is singular at A = 0).
    """
    priors = priors if priors is not None else Priors()
    if human is None:
        p = hc.problem(llm, llm.collapse(order=True, judges=True), rank=rank, space=space,
                       order_effects=order_effects)
        w = 1.0
    else:
        p = hc.problem(llm, human, rank=rank, space=space, order_effects=order_effects)
        lam = hc._check_weight(llm_weight)
        if power is None and not np.isfinite(lam):
            raise ValueError("λ = ∞ is the cut posterior: use cut_posterior()")
        w = float(power) if power is not None else lam * p.n_h / p.n_l
    if not tempered and w != 1.0:
        raise ValueError("tempered=False is the ordinary joint model, w = 1 only")
    K, N, r = p.K, p.N, p.rank
    coords = {"judge": list(p.judges), "item": list(p.items)}
    hi, hj, hy = human_rows(p)
    if human is not None:
        coords["comparison"] = np.arange(hy.size)
    with pm.Model(coords=coords) as model:
        if human is not None and w == 0:
            beta = _normal("human_ability_free", priors.human_sd, shape=N - 1)
            s_h = pm.Deterministic("human_ability", pt.as_tensor(zero_sum_basis(N)) @ beta,
                                   dims="item")
        else:
            # no initval here (PyMC cannot convert such models for log_likelihood); A = 0 is a
            # singular point of the chart, so samplers start from initvals(...)
            A = pm.Normal("item_basis_free", 0.0, priors.basis_sd, shape=(N - 1, r + 1))
            chol = pt.linalg.cholesky(A.T @ A)
            # radial term: A's direction stays uniform, its prior-only length has a mode
            pm.Potential("item_basis_radial", (N - 1) * pt.sum(pt.log(pt.diagonal(chol))))
            Q = pt.linalg.solve_triangular(chol, A.T, lower=True).T
            W = np.sqrt(N) * (pt.as_tensor(zero_sum_basis(N)) @ Q)
            mu = pm.Deterministic("consensus", W[:, 0], dims="item")
            V = W[:, 1:]
            if priors.loading_mean_sd is None:
                gbar = pt.exp(pm.Flat("consensus_loading_mean_log_free"))
            else:
                gbar = pm.LogNormal("consensus_loading_mean", 0.0, priors.loading_mean_sd)
            delta = _normal("consensus_loading_free", priors.loading_sd, shape=K - 1)
            gamma = pm.Deterministic("consensus_loading",
                                     gbar + pt.as_tensor(zero_sum_basis(K)) @ delta, dims="judge")
            u_free = _normal("disagreement_loading_free", priors.disagreement_sd,
                             shape=(K - 1, r))
            U = pt.as_tensor(zero_sum_basis(K)) @ u_free
            S = pm.Deterministic("ability", gamma[:, None] * mu[None, :] + U @ V.T,
                                 dims=("judge", "item"))
            if p.order:
                b = _normal("order_effect", priors.order_effect_sd, dims="judge")
            else:
                b = pt.zeros(K)
            if human is not None:
                c0 = _normal("calibration_consensus", priors.calibration_sd)
                if space == "consensus":
                    s_h = c0 * mu
                else:
                    cv = _normal("calibration_disagreement_free", priors.calibration_sd,
                                 shape=r)
                    s_h = c0 * mu + V @ cv
                s_h = pm.Deterministic("human_ability", s_h, dims="item")
            if tempered:
                pm.Potential("llm_tempered", w * llm_logp(S, b, p))
            else:
                eta = S[p.k, p.i] - S[p.k, p.j] + (p.a * b[p.k] if p.order else 0.0)
                pm.CustomDist("llm_outcome", eta, p.n,
                              logp=lambda v, e, n: -v * pt.softplus(-e) - (n - v) * pt.softplus(e),
                              observed=p.y)
        if human is not None:
            d = s_h[hi] - s_h[hj]
            pm.CustomDist("human_outcome", d, logp=_human_logp, random=_draw_human,
                          observed=hy, dims="comparison")
    return model


def initvals(model: pm.Model) -> dict[str, np.ndarray]:
    """Start values for NUTS (``initvals=`` of :func:`bayescal.fit`): A away from 0 (empty for
    the human-only model, which has no A)."""
    if "item_basis_free" not in model.named_vars:
        return {}
    shape = model["item_basis_free"].type.shape
    return {"item_basis_free": np.eye(*shape) * np.sqrt(shape[0])}


def cut_posterior(llm: Comparisons, human: Comparisons, llm_result: xr.DataTree, *,
                  rank: int = 1, space: hc.Space = "consensus",
                  order_effects: bool = True) -> xr.DataTree:
    r"""λ = ∞: the cut (two-stage) posterior (SPEC §1.16).

    Stage 1 is ``llm_result``, draws of θ from the LLM-only model (``build(llm, None)`` fitted
    by NUTS), so the human data never feed back into θ. Stage 2, per draw of θ, fits c by
    maximum likelihood with M = M_θ fixed and draws c from its normal (Laplace) approximation
    :math:`N(\hat c_\theta, (X^\top \mathrm{diag}(n p(1-p)) X)^{-1})` — a flat prior on c; an
    approximation of the exact conditional posterior (exact as n_h grows). Adds
    ``human_ability`` to the posterior and the per-comparison human ``log_likelihood``.
    """
    p = hc.problem(llm, human, rank=rank, space=space, order_effects=order_effects)
    post = llm_result["posterior"].to_dataset()
    S = post["ability"].transpose("chain", "draw", "judge", "item").values
    n_chain, n_draw = S.shape[:2]
    rng = np.random.default_rng(int(llm_result.attrs.get("random_seed", 0)) + 17)
    hi, hj, hy = human_rows(p)
    s_out = np.empty((n_chain, n_draw, p.N))
    ll = np.empty((n_chain, n_draw, hy.size))
    from bayescal.frequentist.low_rank_judges import canonical

    for c in range(n_chain):
        for d in range(n_draw):
            can = canonical(S[c, d], p.rank)
            M = can["consensus"][:, None] if space == "consensus" else np.column_stack(
                [can["consensus"], can["disagreement"]])
            X = M[p.hi] - M[p.hj]
            coef = np.zeros(M.shape[1])
            for _ in range(50):
                pr = 1 / (1 + np.exp(-(X @ coef)))
                g = X.T @ (p.hn * pr - p.hy)
                H = (X.T * (p.hn * pr * (1 - pr))) @ X
                step = np.linalg.solve(H, g)
                coef -= step
                if np.abs(step).max() < 1e-10:
                    break
            draw = rng.multivariate_normal(coef, np.linalg.inv(H))
            s = M @ draw
            s_out[c, d] = s
            dd = s[hi] - s[hj]
            ll[c, d] = -hy * np.logaddexp(0, -dd) - (1 - hy) * np.logaddexp(0, dd)
    post["human_ability"] = xr.DataArray(s_out, dims=("chain", "draw", "item"),
                                         coords={"item": list(p.items)})
    out = llm_result.copy()
    out["posterior"] = xr.DataTree(post)
    out["log_likelihood"] = xr.DataTree(xr.Dataset(
        {"human_outcome": (("chain", "draw", "comparison"), ll)},
        coords={"chain": post["chain"], "draw": post["draw"], "comparison": np.arange(hy.size)}))
    out["observed_data"] = xr.DataTree(xr.Dataset(
        {"human_outcome": (("comparison",), hy)}, coords={"comparison": np.arange(hy.size)}))
    return out


def choose_by_loo(llm: Comparisons, human: Comparisons, *, rank: int = 1,
                  space: hc.Space = "consensus", grid_values: list[float] | None = None,
                  draws: int = 500, tune: int = 500, chains: int = 2, random_seed: int = 1,
                  nuts_sampler: str = "pymc") -> tuple[pd.DataFrame, dict[float, xr.DataTree]]:
    """PSIS-LOO over the human comparisons for each candidate λ (SPEC §1.16), λ = ∞ by the cut
    posterior; the largest elpd wins (ties to the larger λ).

    Returns
    -------
    table : DataFrame
        ``llm_weight``, ``power`` (w), ``elpd_loo``, ``se``, ``pareto_k_max``, ``selected``.
    fits : dict
        λ → posterior (DataTree).
    """
    import arviz as az

    import bayescal as bc

    p = hc.problem(llm, human, rank=rank, space=space)
    lams = hc.grid(p) if grid_values is None else sorted(
        {hc._check_weight(v) for v in grid_values}, key=lambda v: -v)
    rows, fits = [], {}
    kw = {"draws": draws, "tune": tune, "chains": chains, "random_seed": random_seed,
          "nuts_sampler": nuts_sampler, "check": False}
    for lam in lams:
        if lam == np.inf:
            model = build(llm, None, rank=rank, space=space)
            first = bc.fit(model, "nuts", **kw, log_likelihood=False, initvals=initvals(model))
            res = cut_posterior(llm, human, first, rank=rank, space=space)
        else:
            model = build(llm, human, rank=rank, space=space, llm_weight=lam)
            res = bc.fit(model, "nuts", **kw, log_likelihood=True, initvals=initvals(model))
        fits[lam] = res
        loo = az.loo(res, var_name="human_outcome", pointwise=True)
        rows.append({"llm_weight": lam, "power": lam * p.n_h / p.n_l if np.isfinite(lam)
                     else np.inf, "elpd_loo": float(loo.elpd), "se": float(loo.se),
                     "pareto_k_max": float(np.max(loo.pareto_k))})
    table = pd.DataFrame(rows)
    best = int(np.argmax(table["elpd_loo"].to_numpy()))  # first maximum: the largest λ
    table["selected"] = np.arange(len(table)) == best
    return table, fits
