r"""DIAL's human calibration in PyMC: the power posterior of (11) and λ chosen by PSIS-LOO.

The Bayesian counterpart of :mod:`bayescal.frequentist.human_calibration` (DIAL, "Position-
Debiased LLM Judges with Adaptive Human Preference Calibration", 2026). With
:math:`\ell_h, \ell_l` the average negative log-likelihoods of (11), the generalised posterior

.. math:: p_\lambda(\zeta\mid\text{data}) \propto \pi(\zeta)\,\exp\{-n_h[\ell_h + \lambda\ell_l]\}
          = \pi(\zeta)\,L_h(\zeta)\,L_l(\zeta)^{w},\qquad w = \lambda\,n_h/n_l,

so λ = n_l/n_h (w = 1) is ordinary joint Bayes and λ = 0 the human-only model.

**What it targets.** Its centre is the fixed-λ estimate ζ̂_λ of the twin (the flat-prior mode
is exactly the twin's minimiser of q_λ), and its spread is the inverse curvature of the tempered
objective, ≈ H⁻¹/n_h with H = ∇²q_λ. The twin's fixed-λ covariance (DIAL Theorem 4) is the
sandwich H⁻¹(V_h + λ²τV_l)H⁻¹/n_h, τ = n_h/n_l. Tempering changes the curvature (the LLM part of
H is λI_l) but not the meat: the LLM score variance the meat counts is λ²τV_l = wλV_l. So with
independent, correctly specified verdicts the power posterior overstates the LLM-determined
variance by 1/w at w < 1 (and understates it at w > 1), and the (judge, pair) dependence the
cluster sandwich counts (V_l above I_l) pulls the other way; only at w = 1 with independent
verdicts do the two agree. Its credible intervals are a generalised-Bayes belief update that
weighs each LLM verdict w times a human comparison, not confidence intervals at the fixed λ:
:func:`bayescal.adjust_to_sandwich` gives a posterior with the sandwich's spread
(:func:`power_posterior_note`; ``validation/dial_power_posterior.py`` for coverage). The human

comparisons are the observed variable ``outcome``, **one entry per human comparison** (dim
``comparison``), so the ``log_likelihood`` group holds them only and ``az.loo`` is
leave-one-human-comparison-out with all LLM data kept — the analogue of GACV. The LLM verdicts
enter as ``pm.Potential("llm_tempered", w * logp_llm)`` (binomial kernel): a tempered
likelihood is not an observed variable. With ``tempered=False`` (w = 1 only) they are the
observed variable ``llm_outcome`` (dim ``cell``, labelled by :meth:`Comparisons.cell_labels`),
the ordinary joint model. λ = ∞ is the cut (two-stage) posterior :func:`cut_posterior`.

Parameterisation (exact Condition 3 of Yu et al. 2026, arXiv:2605.05073):
:math:`W = [\mu, V] = \sqrt N H_N A L^{-\top}`, :math:`L = \mathrm{chol}(A^\top A)`;
:math:`\gamma = \bar\gamma 1_K + B_K\delta`, γ̄ > 0 pins the sign of μ; :math:`U = B_K\tilde U`;
:math:`s_h = c_0\mu` (consensus) or :math:`W c` (full). Identified variables:
``human_ability``, ``ability``, ``order_effect``, ``consensus``; names ending in ``_free`` are
not identified (rotations of (U, V), A, c_V).

==========================  ==============  ===========================================
name                        dims            meaning
==========================  ==============  ===========================================
``human_ability``           item            s_h = M c
``ability``                 judge, item     S = γμᵀ + UVᵀ
``order_effect``            judge           b (model (1))
``consensus``               item            μ (‖μ‖² = N)
``feature_effect``          judge, feature  β_k (with comparison features)
``human_feature_effect``    feature         β_h, the humans' (with comparison features)
``calibration_consensus``   —               c_0 (coefficient of μ)
``outcome``                 comparison      human y_t ∈ {0, 1/2, 1} (observed)
``llm_outcome``             cell            LLM wins per cell (observed; ``tempered=False``)
==========================  ==============  ===========================================

With comparison features (``Comparisons.from_frame(features=...)``) the LLM logit gains
:math:`\beta_k^\top(x_i - x_j)` and the human one :math:`\beta_h^\top(x_i - x_j)`; S, and so
the calibration space, are the judges' preferences at equal features.

Like the twin, every function takes ONE Comparisons with the human judge(s) marked; several
human judges are pooled into one human score vector. The design is built here from the data
layer (:meth:`Comparisons.calibration_cells`, :meth:`Comparisons.verdicts`), not from the twin.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons
from bayescal.dial import canonical, check_rank, check_space, check_weight, weight_grid
from bayescal.identify import IdentificationWarning, require_features_identified
from bayescal.models._btl import draw_wins, kernel_logp
from bayescal.priors import check_prior_sd

__all__ = ["Design", "Priors", "build", "choose_by_loo", "cut_posterior", "design", "initvals",
           "llm_logp", "llm_stage", "power_posterior_note"]


@dataclass(frozen=True)
class Priors:
    """Prior scales (logit scale with ‖μ‖² = N).

    ``None`` makes a block flat (every block but ``basis_sd``), for MAP = MLE checks
    (:meth:`flat`).

    Attributes
    ----------
    basis_sd : float
        σ of the unconstrained A (only its direction enters the likelihood).
    loading_mean_sd, loading_sd, disagreement_sd, order_effect_sd : float or None
        As in :class:`bayescal.models.low_rank_judges.Priors`.
    calibration_sd : float or None
        σ of the calibration coefficients c (2).
    human_sd : float or None
        λ = 0: σ of the Helmert coordinates of the human scores (2).
    feature_effect_sd : float or None
        σ of every feature effect, the judges' β_k and the humans' β_h (1; as in
        :class:`bayescal.models.order_effect_btl.Priors`). Used only with features.
    """

    basis_sd: float = 1.0
    loading_mean_sd: float | None = 0.5
    loading_sd: float | None = 0.5
    disagreement_sd: float | None = 1.0
    order_effect_sd: float | None = 1.0
    calibration_sd: float | None = 2.0
    human_sd: float | None = 2.0
    feature_effect_sd: float | None = 1.0

    def __post_init__(self) -> None:
        if self.basis_sd is None:
            raise ValueError("basis_sd cannot be None: A's prior keeps its radial part proper "
                             "(only A's direction enters the likelihood)")
        for name in ("basis_sd", "loading_mean_sd", "loading_sd", "disagreement_sd",
                     "order_effect_sd", "calibration_sd", "human_sd", "feature_effect_sd"):
            check_prior_sd(name, getattr(self, name))

    @classmethod
    def flat(cls) -> Priors:
        """Flat priors on every identified block: the MAP is the twin's weighted estimate."""
        return cls(loading_mean_sd=None, loading_sd=None, disagreement_sd=None,
                   order_effect_sd=None, calibration_sd=None, human_sd=None,
                   feature_effect_sd=None)


@dataclass(frozen=True)
class Design:
    """The model's data: LLM cells, one row per human comparison, and their labels."""

    llm: Comparisons
    human: Comparisons
    human_i: np.ndarray
    human_j: np.ndarray
    human_y: np.ndarray
    human_labels: list[str]
    rank: int
    space: str
    order: bool
    human_x: np.ndarray  # feature differences per human comparison (comparisons x F)

    @property
    def n_llm(self) -> float:
        return float(self.llm.count.sum())

    @property
    def n_human(self) -> float:
        return float(self.human_y.size)


def design(data: Comparisons, *, rank: int = 1, space: str = "consensus",
           order_effects: bool = True) -> Design:
    """Validate the data (humans marked) and lay out the model's arrays.

    Raises
    ------
    DataError
        As :meth:`Comparisons.calibration_cells`, and soft human outcomes (the human node is
        one Bernoulli-type term per comparison).
    ValueError, IdentificationError
        A bad space or rank.

    Warns
    -----
    IdentificationWarning
        Fewer distinct human pairs than the calibration dimension (Condition 4 cannot hold; the
        prior sets the rest).
    """
    space = check_space(space)
    llm, human = data.calibration_cells(order_effects)
    rank = check_rank(rank, llm.n_judges, llm.n_items)
    require_features_identified(llm)  # a prior would only hide a confounded feature
    require_features_identified(human)
    cell, y = human.verdicts()
    labels = human.cell_labels()
    seen: dict[int, int] = {}
    names = []
    for c in cell:
        seen[c] = seen.get(c, 0) + 1
        names.append(f"{labels[c].split(': ', 1)[1]} #{seen[c]}")
    d = 1 if space == "consensus" else rank + 1
    pairs = np.unique(human.item_i * human.n_items + human.item_j).size
    if pairs < d:
        warnings.warn(f"the humans compare {pairs} distinct pair(s), fewer than the calibration "
                      f"dimension d = {d}: Condition 4 fails, the prior sets the rest",
                      IdentificationWarning, stacklevel=3)
    x = human.features[cell] if human.n_features else np.zeros((cell.size, 0))
    return Design(llm, human, human.item_i[cell], human.item_j[cell], y, names, rank, space,
                  order_effects, x)


def _normal(name: str, sd: float | None, **kw) -> pt.TensorVariable:
    return pm.Flat(name, **kw) if sd is None else pm.Normal(name, 0.0, sd, **kw)


def _human_logp(value, d):
    # y log σ(d) + (1 − y) log σ(−d): one human comparison (a tie y = 1/2 included)
    return kernel_logp(value, d, 1.0)


def _draw_human(d, rng=None, size=None):
    # posterior predictive: a new comparison is a win or a loss (ties are not simulated)
    return rng.binomial(1, 1 / (1 + np.exp(-np.asarray(d))), size=size).astype(np.float64)


def llm_logp(S, b, llm: Comparisons, order_effects: bool = True, beta=None):
    """Σ_c [y_c log σ(η_c) + (n_c − y_c) log σ(−η_c)] over the LLM cells (numpy or pytensor);
    with comparison features ``beta`` (judges x features) adds β_kᵀ(x_i − x_j) to η_c."""
    a = llm.order.astype(np.float64)
    eta = S[llm.judge, llm.item_i] - S[llm.judge, llm.item_j] + (
        a * b[llm.judge] if order_effects else 0.0)
    if beta is not None:
        eta = eta + (llm.features * beta[llm.judge]).sum(axis=1)
    y, n = llm.wins, llm.count
    if isinstance(eta, np.ndarray):
        return float(np.sum(-y * np.logaddexp(0, -eta) - (n - y) * np.logaddexp(0, eta)))
    return pt.sum(kernel_logp(y, eta, n))


def _judges_block(des: Design, priors: Priors):
    """The low-rank judge model's variables (exact Condition 3): returns (μ, V, S, b)."""
    K, N, r = des.llm.n_judges, des.llm.n_items, des.rank
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
    u_free = _normal("disagreement_loading_free", priors.disagreement_sd, shape=(K - 1, r))
    U = pt.as_tensor(zero_sum_basis(K)) @ u_free
    S = pm.Deterministic("ability", gamma[:, None] * mu[None, :] + U @ V.T,
                         dims=("judge", "item"))
    b = _normal("order_effect", priors.order_effect_sd, dims="judge") if des.order \
        else pt.zeros(K)
    return mu, V, S, b


def _feature_effects(des: Design, priors: Priors, name: str, dims):
    """β_k (``feature_effect``, judge x feature) or β_h (``human_feature_effect``); None
    without features."""
    if not des.llm.n_features:
        return None
    return _normal(name, priors.feature_effect_sd, dims=dims)


def build(data: Comparisons, *, priors: Priors | None = None, rank: int = 1,
          space: str = "consensus", llm_weight: float = 1.0, power: float | None = None,
          order_effects: bool = True, tempered: bool = True) -> pm.Model:
    """Power-posterior model of DIAL's calibration at a finite λ (or λ = 0).

    Parameters
    ----------
    data : Comparisons
        As in :func:`bayescal.frequentist.human_calibration.fit`: LLM judges and the human
        judge(s) marked ``humans=[...]`` (pooled into one s_h).
    priors : Priors, optional
        Prior scales (default ``Priors()``; ``Priors.flat()`` for MAP = the twin's estimate).
    rank, space, order_effects
        As in the twin.
    llm_weight : float
        λ ≥ 0, finite; the LLM log-likelihood is raised to w = λ n_h/n_l. λ = 0 gives the
        human-only model (centred scores, Helmert coordinates).
    power : float, optional
        w directly (overrides ``llm_weight``).
    tempered : bool
        False (only with w = 1) puts the LLM data in the observed node ``llm_outcome`` instead
        of the Potential — the ordinary joint model, for checking that w = 1 is joint Bayes.

    Returns
    -------
    pymc.Model
        Sample it with ``initvals=initvals(model)`` (the chart is singular at A = 0).
    """
    priors = priors if priors is not None else Priors()
    des = design(data, rank=rank, space=space, order_effects=order_effects)
    lam = check_weight(llm_weight)
    if power is None and not np.isfinite(lam):
        raise ValueError("λ = ∞ is the cut posterior: use llm_stage() and cut_posterior()")
    w = float(power) if power is not None else lam * des.n_human / des.n_llm
    if not tempered and w != 1.0:
        raise ValueError("tempered=False is the ordinary joint model, w = 1 only")
    N = des.llm.n_items
    coords = {"judge": list(des.llm.judges), "item": list(des.llm.items),
              "comparison": des.human_labels, "cell": des.llm.cell_labels()}
    if des.llm.n_features:
        coords["feature"] = list(des.llm.feature_names)
    with pm.Model(coords=coords) as model:
        beta_h = _feature_effects(des, priors, "human_feature_effect", "feature")
        if w == 0:
            beta = _normal("human_ability_free", priors.human_sd, shape=N - 1)
            s_h = pm.Deterministic("human_ability", pt.as_tensor(zero_sum_basis(N)) @ beta,
                                   dims="item")
        else:
            mu, V, S, b = _judges_block(des, priors)
            beta = _feature_effects(des, priors, "feature_effect", ("judge", "feature"))
            c0 = _normal("calibration_consensus", priors.calibration_sd)
            if des.space == "consensus":
                s_h = c0 * mu
            else:
                cv = _normal("calibration_disagreement_free", priors.calibration_sd,
                             shape=des.rank)
                s_h = c0 * mu + V @ cv
            s_h = pm.Deterministic("human_ability", s_h, dims="item")
            if tempered:
                pm.Potential("llm_tempered", w * llm_logp(S, b, des.llm, des.order, beta))
            else:
                c = des.llm
                eta = S[c.judge, c.item_i] - S[c.judge, c.item_j] + (
                    c.order.astype(np.float64) * b[c.judge] if des.order else 0.0)
                if beta is not None:
                    eta = eta + (c.features * beta[c.judge]).sum(axis=1)
                pm.CustomDist("llm_outcome", eta, c.count,
                              logp=kernel_logp, random=draw_wins,
                              observed=c.wins, dims="cell")
        d = s_h[des.human_i] - s_h[des.human_j]
        if beta_h is not None:
            d = d + pt.as_tensor(des.human_x) @ beta_h
        pm.CustomDist("outcome", d, logp=_human_logp, random=_draw_human,
                      observed=des.human_y, dims="comparison")
    return model


def power_posterior_note(llm_weight: float) -> str:
    """What a power posterior at λ = ``llm_weight`` is (the note a run records beside it)."""
    return (f"power posterior at λ = {llm_weight:g} (LLM likelihood tempered by w = λ n_h/n_l): "
            "its spread is the inverse curvature of the tempered objective, not the fixed-λ "
            "sandwich of the MLE (tempering scales the LLM curvature by w, the LLM score "
            "variance by w²; clustered verdicts add to the latter); for intervals with the "
            "sandwich's spread use bayescal.adjust_to_sandwich(posterior, estimate) with the "
            "MLE at the same λ")


def llm_stage(data: Comparisons, *, priors: Priors | None = None, rank: int = 1,
              order_effects: bool = True) -> pm.Model:
    """The LLM-only model (stage 1 of :func:`cut_posterior`) on the non-human judges."""
    priors = priors if priors is not None else Priors()
    des = design(data, rank=rank, order_effects=order_effects)
    coords = {"judge": list(des.llm.judges), "item": list(des.llm.items)}
    if des.llm.n_features:
        coords["feature"] = list(des.llm.feature_names)
    with pm.Model(coords=coords) as model:
        _, _, S, b = _judges_block(des, priors)
        beta = _feature_effects(des, priors, "feature_effect", ("judge", "feature"))
        pm.Potential("llm_tempered", llm_logp(S, b, des.llm, des.order, beta))
    return model


def initvals(model: pm.Model) -> dict[str, np.ndarray]:
    """Start values for NUTS (``initvals=`` of :func:`bayescal.fit`): A away from 0 (empty for
    the human-only model, which has no A)."""
    if "item_basis_free" not in model.named_vars:
        return {}
    shape = model["item_basis_free"].type.shape
    return {"item_basis_free": np.eye(*shape) * np.sqrt(shape[0])}


def cut_posterior(data: Comparisons, llm_result: xr.DataTree, *, rank: int = 1,
                  space: str = "consensus", order_effects: bool = True,
                  random_seed: int | None = None) -> xr.DataTree:
    r"""λ = ∞: the cut (two-stage) posterior.

    Stage 1 is ``llm_result``, draws of θ from the LLM-only model (:func:`llm_stage` fitted by
    NUTS), so the human data never feed back into θ. Stage 2, per draw of θ, fits c by
    maximum likelihood with M = M_θ fixed and draws c from its normal (Laplace) approximation
    :math:`N(\hat c_\theta, (X^\top \mathrm{diag}(n p(1-p)) X)^{-1})` — a flat prior on c; an
    approximation of the exact conditional posterior (exact as n_h grows). Adds
    ``human_ability`` to the posterior and the per-comparison human ``log_likelihood``
    (``outcome``). With comparison features the humans' β_h is fitted and drawn with c (design
    rows (M_i − M_j, x)) and added as ``human_feature_effect``.
    """
    des = design(data, rank=rank, space=space, order_effects=order_effects)
    human = des.human
    post = llm_result["posterior"].to_dataset()
    S = post["ability"].transpose("chain", "draw", "judge", "item").values
    n_chain, n_draw = S.shape[:2]
    seed = random_seed if random_seed is not None else int(
        llm_result.attrs.get("random_seed", 0)) + 17
    rng = np.random.default_rng(seed)
    hy = des.human_y
    nf = human.n_features
    hx = human.features if nf else np.zeros((human.n_cells, 0))
    s_out = np.empty((n_chain, n_draw, human.n_items))
    beta_out = np.empty((n_chain, n_draw, nf))
    ll = np.empty((n_chain, n_draw, hy.size))
    for c in range(n_chain):
        for d in range(n_draw):
            M = canonical(S[c, d], des.rank).basis(des.space)
            X = np.column_stack([M[human.item_i] - M[human.item_j], hx])
            coef = np.zeros(X.shape[1])
            for _ in range(50):
                pr = 1 / (1 + np.exp(-(X @ coef)))
                g = X.T @ (human.count * pr - human.wins)
                H = (X.T * (human.count * pr * (1 - pr))) @ X
                step = np.linalg.solve(H, g)
                coef -= step
                if np.abs(step).max() < 1e-10:
                    break
            draw = rng.multivariate_normal(coef, np.linalg.inv(H))
            s = M @ draw[: M.shape[1]]
            s_out[c, d], beta_out[c, d] = s, draw[M.shape[1]:]
            dd = s[des.human_i] - s[des.human_j] + des.human_x @ beta_out[c, d]
            ll[c, d] = -hy * np.logaddexp(0, -dd) - (1 - hy) * np.logaddexp(0, dd)
    post["human_ability"] = xr.DataArray(s_out, dims=("chain", "draw", "item"),
                                         coords={"item": list(human.items)})
    if nf:
        post["human_feature_effect"] = xr.DataArray(
            beta_out, dims=("chain", "draw", "feature"),
            coords={"feature": list(human.feature_names)})
    out = llm_result.copy()
    out["posterior"] = xr.DataTree(post)
    comparison = {"comparison": des.human_labels}
    out["log_likelihood"] = xr.DataTree(xr.Dataset(
        {"outcome": (("chain", "draw", "comparison"), ll)},
        coords={"chain": post["chain"], "draw": post["draw"], **comparison}))
    out["observed_data"] = xr.DataTree(xr.Dataset({"outcome": (("comparison",), hy)},
                                                  coords=comparison))
    return out


def choose_by_loo(data: Comparisons, *, rank: int = 1, space: str = "consensus",
                  grid_values: list[float] | None = None, draws: int = 500, tune: int = 500,
                  chains: int = 2, random_seed: int = 1, nuts_sampler: str = "pymc"
                  ) -> tuple[pd.DataFrame, dict[float, xr.DataTree]]:
    """PSIS-LOO over the human comparisons for each candidate λ, λ = ∞ by the cut posterior;
    the largest elpd wins (ties to the larger λ).

    Returns
    -------
    table : DataFrame
        ``llm_weight``, ``power`` (w), ``elpd_loo``, ``se``, ``pareto_k_max``, ``selected``.
    fits : dict
        λ → posterior (DataTree).
    """
    import arviz as az

    import bayescal as bc

    des = design(data, rank=rank, space=space)
    lams = weight_grid(des.n_llm, des.n_human) if grid_values is None else sorted(
        {check_weight(v) for v in grid_values}, key=lambda v: -v)
    rows, fits = [], {}
    kw = {"draws": draws, "tune": tune, "chains": chains, "random_seed": random_seed,
          "nuts_sampler": nuts_sampler, "check": False}
    for lam in lams:
        if lam == np.inf:
            model = llm_stage(data, rank=rank)
            first = bc.fit(model, "nuts", **kw, log_likelihood=False, initvals=initvals(model))
            res = cut_posterior(data, first, rank=rank, space=space)
        else:
            model = build(data, rank=rank, space=space, llm_weight=lam)
            res = bc.fit(model, "nuts", **kw, log_likelihood=True, initvals=initvals(model))
        fits[lam] = res
        loo = az.loo(res, var_name="outcome", pointwise=True)
        rows.append({"llm_weight": lam,
                     "power": lam * des.n_human / des.n_llm if np.isfinite(lam) else np.inf,
                     "elpd_loo": float(loo.elpd), "se": float(loo.se),
                     "pareto_k_max": float(np.max(loo.pareto_k))})
    table = pd.DataFrame(rows)
    best = int(np.argmax(table["elpd_loo"].to_numpy()))  # first maximum: the largest λ
    table["selected"] = np.arange(len(table)) == best
    return table, fits
