"""Seeded data-generating processes with known truth, one per model (the papers' designs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike
from scipy.special import expit

from bayescal.data import Comparisons, DataError, Labels, Ratings

__all__ = [
    "judge_discrimination_btl",
    "judge_discrimination_truth",
    "misclassification",
    "order_effect_btl",
    "order_effect_truth",
    "score_calibration",
]


def judge_discrimination_truth(
    n_items: int,
    n_judges: int,
    *,
    log_discrimination_sd: float = 0.5,
    random_seed: int | None = None,
) -> xr.Dataset:
    """Draw a true (ability, discrimination) for the simulations of Xu et al. (2026), Sec. 4.

    ``ability`` ~ N(0, 1) centred (Σ s = 0); ``log discrimination`` ~ N(0, sd²) centred
    (Σ log γ = 0), so some judges are near-noise and some sharp.

    Returns
    -------
    xarray.Dataset
        ``ability`` (item) and ``discrimination`` (judge), labelled ``model_00``…, ``judge_00``….
    """
    rng = np.random.default_rng(random_seed)
    s = rng.normal(size=n_items)
    alpha = rng.normal(scale=log_discrimination_sd, size=n_judges)
    return xr.Dataset(
        {
            "ability": ("item", s - s.mean()),
            "discrimination": ("judge", np.exp(alpha - alpha.mean())),
        },
        coords={
            "item": [f"model_{i:02d}" for i in range(n_items)],
            "judge": [f"judge_{k:02d}" for k in range(n_judges)],
        },
    )


def judge_discrimination_btl(
    truth: xr.Dataset,
    n_comparisons: int,
    *,
    random_seed: int | None = None,
    as_frame: bool = False,
) -> pd.DataFrame | Comparisons:
    """Simulate Xu et al. (2026, Sec. 4): T comparisons with (i, j, k) uniform over all triples.

    Parameters
    ----------
    truth : Dataset
        ``ability`` (item) and ``discrimination`` (judge), e.g. from
        :func:`judge_discrimination_truth`.
    n_comparisons : int
        T.
    random_seed : int, optional
    as_frame : bool
        Return the tidy frame (``item_a, item_b, judge, outcome``) instead of
        :class:`~bayescal.data.Comparisons` (the frame costs string labels for every row).

    Returns
    -------
    Comparisons or DataFrame
        Outcomes :math:`Y \\sim \\mathrm{Bernoulli}(\\sigma(\\gamma_k(s_i - s_j)))`.
    """
    s = np.asarray(truth["ability"].values, dtype=np.float64)
    gamma = np.asarray(truth["discrimination"].values, dtype=np.float64)
    rng = np.random.default_rng(random_seed)
    n_items, n_judges = len(s), len(gamma)
    i = rng.integers(0, n_items, n_comparisons)
    j = (i + rng.integers(1, n_items, n_comparisons)) % n_items  # uniform over j != i
    k = rng.integers(0, n_judges, n_comparisons)
    y = (rng.random(n_comparisons) < expit(gamma[k] * (s[i] - s[j]))).astype(np.float64)
    items = [str(v) for v in truth["item"].values]
    judges = [str(v) for v in truth["judge"].values]
    if as_frame:
        return pd.DataFrame(
            {
                "item_a": np.asarray(items, dtype=object)[i],
                "item_b": np.asarray(items, dtype=object)[j],
                "judge": np.asarray(judges, dtype=object)[k],
                "outcome": y,
            }
        )
    return Comparisons.from_codes(items, judges, judge=k, item_a=i, item_b=j, outcome=y)


def _probabilities(name: str, value: ArrayLike) -> np.ndarray:
    """A scalar or a vector of probabilities in [0, 1], as a 1-d float array."""
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a probability or a sequence of them (one per judge), "
                         f"got shape {np.shape(value)}")
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {arr.tolist()}")
    return arr


def misclassification(
    n_items: int,
    *,
    prevalence: float,
    specificity: float | Sequence[float],
    sensitivity: float | Sequence[float],
    labelled_fraction: float,
    random_seed: int | None = None,
    judges: Sequence[str] | None = None,
    item_sd: float | Sequence[float] = 0.0,
) -> tuple[Labels, xr.Dataset]:
    r"""Simulate Chen et al. (2026): binary human labels, K noisy judges, a random labelled subset.

    For each of the N = ``n_items`` items, independently (Chen et al. 2026, Secs. 2.1, 5.2):

    * the human label :math:`Y \sim \mathrm{Bern}(\theta)`, θ = ``prevalence``;
    * judge k's label :math:`\hat Y_k \mid Y`: :math:`P(\hat Y_k = 1 \mid Y = 1) = q_{1k}`
      (``sensitivity``), :math:`P(\hat Y_k = 0 \mid Y = 0) = q_{0k}` (``specificity``), the
      judges conditionally independent given Y (the multi-judge model of
      :mod:`bayescal.models.misclassification`; with one judge, exactly the paper's design);
    * the labelled indicator :math:`R \sim \mathrm{Bern}(f)`, f = ``labelled_fraction``,
      independent of :math:`(Y, \hat Y)`: missing completely at random, the paper's Bernoulli
      assignment, so the calibration size m is Binomial(N, f), not fixed.

    Items with R = 1 form the calibration set (Y and every Ŷ_k seen), the others the test set
    (Ŷ_k only). Any (q0, q1) in [0, 1] is allowed, including judges no better than chance
    (:math:`q_0 + q_1 \le 1`), which the estimators must then report.

    Parameters
    ----------
    n_items : int
        N, calibration plus test items.
    prevalence : float
        θ in [0, 1].
    specificity, sensitivity : float or sequence of float
        q0 and q1: one value shared by every judge, or one per judge (equal lengths when both
        are sequences).
    labelled_fraction : float
        f in (0, 1): the probability that an item gets a human label.
    random_seed : int, optional
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same draw.
    judges : sequence of str, optional
        Judge names. Default ``"judge"`` for one judge, ``"judge_0"``, ``"judge_1"``, ... for
        several (the defaults of :meth:`Labels.from_arrays`). Their number fixes K when q0 and
        q1 are scalars.
    item_sd : float or pair of float
        σ_y of an item effect shared by the judges (one value, or (σ_0, σ_1) by human class):
        :math:`\operatorname{logit} P(\hat Y_k = 1 \mid Y = y, u) = \alpha_{ky} + \sigma_y u`
        with :math:`u \sim N(0, 1)` per item, :math:`\alpha_{k1} = \operatorname{logit} q_{1k}`,
        :math:`\alpha_{k0} = -\operatorname{logit} q_{0k}` (the model of
        :mod:`bayescal.models.misclassification_dependent`; q0, q1 are then the median item's
        and must lie in (0, 1)). Default 0: conditionally independent judges, the draw
        unchanged.

    Returns
    -------
    labels : Labels
        Calibration set (R = 1) and test set (R = 0).
    truth : xarray.Dataset
        ``prevalence`` (scalar), ``specificity`` and ``sensitivity`` (dim ``judge``): the
        population parameters of the draw, in the names of the models and twins, ready for
        ``bayescal.compare(..., truth=truth)``. ``prevalence`` is the population θ that every
        estimator of Chen et al. targets, not the sample mean of Y over the N drawn items (a
        different, finite-population target that differs from θ by
        :math:`O(\sqrt{\theta(1-\theta)/N})`); that sample mean is kept in
        ``truth.attrs["sample_prevalence"]``, with ``n_items``, ``labelled_fraction``, ``m``
        and ``n``.

    Raises
    ------
    ValueError
        A probability outside [0, 1], ``labelled_fraction`` outside (0, 1), ``n_items`` < 2,
        or specificity, sensitivity and judges of different lengths.
    DataError
        The draw of R leaves the calibration or the test set empty (from :class:`Labels`; raise
        ``n_items`` or move ``labelled_fraction`` away from 0 and 1).
    """
    if int(n_items) != n_items or n_items < 2:
        raise ValueError(f"n_items must be an integer of at least 2, got {n_items!r}")
    n_items = int(n_items)
    if np.ndim(prevalence) != 0:
        raise ValueError(f"prevalence must be one probability, got {prevalence!r}")
    theta = float(_probabilities("prevalence", prevalence)[0])
    if not 0 < labelled_fraction < 1:
        raise ValueError(f"labelled_fraction must lie strictly between 0 and 1, "
                         f"got {labelled_fraction!r}")
    q0 = _probabilities("specificity", specificity)
    q1 = _probabilities("sensitivity", sensitivity)
    sizes = {len(q0), len(q1)} - {1}
    if judges is not None:
        sizes.add(len(judges))
    if len(sizes) > 1:
        raise ValueError(
            f"specificity ({len(q0)}), sensitivity ({len(q1)})"
            + (f" and judges ({len(judges)})" if judges is not None else "")
            + " give different numbers of judges; pass scalars or sequences of one length"
        )
    k = sizes.pop() if sizes else 1
    q0, q1 = np.broadcast_to(q0, k).copy(), np.broadcast_to(q1, k).copy()
    names = (tuple(str(j) for j in judges) if judges is not None
             else ("judge",) if k == 1 else tuple(f"judge_{i}" for i in range(k)))
    if len(set(names)) != k:
        raise ValueError(f"judge names must be distinct, got {list(names)}")

    sd = np.broadcast_to(np.asarray(item_sd, dtype=np.float64).reshape(-1), 2).copy()
    if not np.all(np.isfinite(sd) & (sd >= 0)):
        raise ValueError(f"item_sd must be one or two finite values ≥ 0, got {item_sd!r}")
    if np.any(sd > 0) and not np.all((q0 > 0) & (q0 < 1) & (q1 > 0) & (q1 < 1)):
        raise ValueError("with item_sd > 0 every specificity and sensitivity must lie in (0, 1)")

    rng = np.random.default_rng(random_seed)
    y = rng.random(n_items) < theta
    u = rng.random((n_items, k))
    yhat = np.where(y[:, None], u < q1, u >= q0).astype(np.float64)
    labelled = rng.random(n_items) < labelled_fraction
    if np.any(sd > 0):
        # drawn after R so that item_sd = 0 leaves the conditionally independent draw as it was
        effect = rng.standard_normal((n_items, 1)) * np.where(y, sd[1], sd[0])[:, None]
        alpha = np.where(y[:, None], np.log(q1 / (1 - q1)), np.log((1 - q0) / q0))
        yhat = (u < expit(alpha + effect)).astype(np.float64)
    try:
        labels = Labels.from_arrays(y[labelled].astype(np.float64), yhat[labelled],
                                    yhat[~labelled], judges=names)
    except DataError as err:
        raise DataError(
            f"simulate.misclassification: R ~ Bernoulli({labelled_fraction:g}) over "
            f"{n_items} items labelled {int(labelled.sum())} of them, so {err}. Raise n_items, "
            "move labelled_fraction away from 0 and 1, or change random_seed."
        ) from err
    truth = xr.Dataset(
        {
            "prevalence": ((), theta),
            "specificity": ("judge", q0),
            "sensitivity": ("judge", q1),
            **({"item_sd": ("class", sd)} if np.any(sd > 0) else {}),
        },
        coords={"judge": list(names), **({"class": [0, 1]} if np.any(sd > 0) else {})},
        attrs={
            "sample_prevalence": float(y.mean()),
            "n_items": n_items,
            "labelled_fraction": float(labelled_fraction),
            "m": labels.m,
            "n": labels.n,
        },
    )
    return labels, truth


def score_calibration(
    n_anchors: int,
    *,
    scale: tuple[int, int] = (1, 5),
    cutpoint_spread: float = 3.0,
    level_step: float = 1.2,
    n_targets: int = 0,
    random_seed: int | None = None,
) -> tuple[Ratings, xr.Dataset]:
    r"""Simulate anchors of the monotone ordinal calibration model (Subasic et al. 2026's
    setting: a judge score and a human score on one integer scale).

    Each item's judge level J is uniform on the scale; the human score follows the model's
    cumulative logit :math:`P(H \le v_k \mid J = j) = \sigma(c_k - \beta_j)`, with cutpoints
    evenly spaced on [−``cutpoint_spread``, ``cutpoint_spread``] plus the mean level effect (so
    the middle judge level is centred) and :math:`\beta_j` rising by ``level_step`` per level
    (:math:`\beta` = 0 at the lowest level).

    Parameters
    ----------
    n_anchors : int
        Items with a human score.
    scale : (int, int)
        The declared scale (at least 3 points).
    cutpoint_spread, level_step : float
    n_targets : int
        Extra items with a judge score only (to be calibrated; the model ignores them).
    random_seed : int, optional

    Returns
    -------
    ratings : Ratings
    truth : xarray.Dataset
        ``cutpoint`` (threshold) and ``level_effect`` (judge_level), in the names of the model
        and its twin.
    """
    lo, hi = int(scale[0]), int(scale[1])
    if hi - lo < 2:
        raise ValueError(f"the ordinal model needs a scale of at least 3 points, got {scale}")
    k = hi - lo + 1
    beta = level_step * np.arange(k, dtype=np.float64)
    cut = np.linspace(-cutpoint_spread, cutpoint_spread, k - 1) + beta.mean()
    rng = np.random.default_rng(random_seed)
    judge = rng.integers(0, k, n_anchors + n_targets)
    below = expit(cut[None, :] - beta[judge][:, None])  # P(H <= level k | J)
    human = (rng.random(len(judge))[:, None] > below).sum(axis=1).astype(np.float64)
    human[n_anchors:] = np.nan
    ratings = Ratings.from_arrays(lo + judge, lo + human, scale=(lo, hi))
    levels = [str(v) for v in range(lo, hi + 1)]
    truth = xr.Dataset(
        {"cutpoint": ("threshold", cut), "level_effect": ("judge_level", beta)},
        coords={"threshold": [f"{a}|{a + 1}" for a in range(lo, hi)], "judge_level": levels},
    )
    return ratings, truth


# ---------------------------------------------------------------- DIAL order effects
def order_effect_truth(
    n_items: int, n_judges: int, *, rank: int | None = None, random_seed: int | None = None
) -> xr.Dataset:
    r"""Draw DIAL's synthetic truth (Section 6.1 steps 1, 2, 4): scores S and order effects b.

    :math:`\mu \sim N(0, I_N)` centred and scaled to :math:`\|\mu\|^2 = N`;
    :math:`\gamma_k = 1 + 0.3\xi_k` rescaled to :math:`\sum\gamma = K`; V Gaussian, projected
    off span{1, μ}, orthonormalised and × √N; U Gaussian, column-centred;
    :math:`S = \gamma\mu^\top + UV^\top`. Order effects :math:`b_k = \beta_k\sigma_k`,
    :math:`\beta_k \sim U(0.3, 1.2)`, :math:`\sigma_k = +1` w.p. 0.8 else -1, last judge 0.05.

    Parameters
    ----------
    rank : int, optional
        Rank r of the disagreement UVᵀ. U is judge-centred, so r ≤ K − 1; the default is
        min(1, K − 1): one judge has scores γμᵀ only.

    Returns
    -------
    xarray.Dataset
        ``ability`` (judge, item; each row sums to zero) and ``order_effect`` (judge): the
        model-(1) part of :func:`low_rank_judges_truth`.
    """
    if rank is None:
        rank = min(1, n_judges - 1)
    truth = low_rank_judges_truth(n_items, n_judges, rank, random_seed=random_seed or 0)
    return truth[["ability", "order_effect"]]


def order_effect_btl(
    truth: xr.Dataset,
    n_comparisons: int,
    *,
    p_first: float = 0.75,
    pair_sd: float = 0.0,
    random_seed: int | None = None,
) -> Comparisons:
    r"""Simulate DIAL's LLM comparisons (its Section 6.1 step 5) under model (1).

    Each verdict: judge k uniform, pair (i < j) uniform over the N(N-1)/2 pairs, the canonical
    item i displayed first (a = +1) with probability ``p_first`` (DIAL: 0.75), else a = -1;
    :math:`y \sim \mathrm{Bern}(\sigma(s_{ki} - s_{kj} + a b_k + \varepsilon_{kij}))` with
    :math:`\varepsilon_{kij} \sim N(0, \sigma_L^2)` drawn once per (judge, pair): the
    judge-pair overdispersion of DIAL's misspecified row (``pair_sd`` = σ_L; 0 = exact model).

    Parameters
    ----------
    truth : Dataset
        ``ability`` (judge, item) and ``order_effect`` (judge), e.g. :func:`order_effect_truth`.
    n_comparisons : int
        n_l.
    p_first, pair_sd : float
    random_seed : int, optional

    Returns
    -------
    Comparisons
        With display order recorded.
    """
    if not 0 <= p_first <= 1:
        raise ValueError(f"p_first must lie in [0, 1], got {p_first}")
    s = np.asarray(truth["ability"].values, dtype=np.float64)
    b = np.asarray(truth["order_effect"].values, dtype=np.float64)
    n_judges, n_items = s.shape
    rng = np.random.default_rng(random_seed)
    ii, jj = np.triu_indices(n_items, 1)
    eps = rng.normal(scale=pair_sd, size=(n_judges, len(ii))) if pair_sd > 0 else None
    k = rng.integers(0, n_judges, n_comparisons)
    pair = rng.integers(0, len(ii), n_comparisons)
    a = np.where(rng.random(n_comparisons) < p_first, 1, -1)
    eta = s[k, ii[pair]] - s[k, jj[pair]] + a * b[k]
    if eps is not None:
        eta = eta + eps[k, pair]
    y = (rng.random(n_comparisons) < expit(eta)).astype(np.float64)
    return Comparisons.from_codes(
        [str(v) for v in truth["item"].values], [str(v) for v in truth["judge"].values],
        judge=k, item_a=ii[pair], item_b=jj[pair], outcome=y, order=a,
    )


# ---------------------------------------------------------------------------- DIAL low-rank judges
__all__ += ["low_rank_judges", "low_rank_judges_truth"]


def low_rank_judges_truth(
    n_items: int = 10,
    n_judges: int = 4,
    rank: int = 1,
    *,
    random_seed: int = 0,
) -> xr.Dataset:
    """Draw DIAL's synthetic truth (DIAL 2026, Section 6.1; its ``main10`` design by default).

    With seed s: μ ~ N(0, I) centred and scaled to ‖μ‖² = N; γ_k = 1 + 0.3 ξ_k rescaled to
    Σγ = K; V Gaussian, projected off span{1, μ}, orthonormalised, × √N; U Gaussian,
    column-centred; the first non-zero entry of each column of U, and of V, made positive.
    With seed s + 1: b_k = β_k σ_k, β_k ~ U(0.3, 1.2), σ_k = +1 w.p. 0.8 else −1, and the last
    judge's b_K = 0.05. S = γμᵀ + UVᵀ (Condition 3 holds exactly).

    Returns
    -------
    xarray.Dataset
        ``ability`` (judge, item) = S, ``order_effect`` (judge), ``consensus`` (item),
        ``consensus_loading`` (judge), ``disagreement`` (item, factor),
        ``disagreement_loading`` (judge, factor); items ``item_00``…, judges ``judge_00``….
    """
    N, K, r = n_items, n_judges, rank
    # U is judge-centred (rank ≤ K − 1) and V is orthogonal to 1 and μ (rank ≤ N − 2): a
    # larger r would give zero columns, i.e. a truth of lower rank than asked for
    if K < 1 or N < 2 or r < 0 or r > min(K - 1, N - 2):
        raise ValueError(
            f"rank {r} needs at least {r + 1} judges and {r + 2} items (U is judge-centred, V "
            f"is orthogonal to 1 and μ); got {K} judges and {N} items: lower the rank")
    rng = np.random.default_rng(random_seed)
    mu = rng.normal(size=N)
    mu -= mu.mean()
    mu *= np.sqrt(N) / np.linalg.norm(mu)
    gamma = 1 + 0.3 * rng.normal(size=K)
    gamma *= K / gamma.sum()
    V = rng.normal(size=(N, r))
    basis = np.linalg.qr(np.column_stack([np.ones(N), mu]))[0]
    V -= basis @ (basis.T @ V)
    V = np.sqrt(N) * np.linalg.qr(V)[0]
    U = rng.normal(size=(K, r))
    U -= U.mean(axis=0)
    for M in (U, V):
        for q in range(r):
            if M[np.flatnonzero(M[:, q])[0], q] < 0:
                M[:, q] *= -1
    rng_b = np.random.default_rng(random_seed + 1)
    b = rng_b.uniform(0.3, 1.2, K) * np.where(rng_b.random(K) < 0.8, 1.0, -1.0)
    b[-1] = 0.05
    items = [f"item_{i:02d}" for i in range(N)]
    judges = [f"judge_{k:02d}" for k in range(K)]
    factors = list(range(1, r + 1))
    return xr.Dataset(
        {
            "ability": (("judge", "item"), np.outer(gamma, mu) + U @ V.T),
            "order_effect": ("judge", b),
            "consensus": ("item", mu),
            "consensus_loading": ("judge", gamma),
            "disagreement": (("item", "factor"), V),
            "disagreement_loading": (("judge", "factor"), U),
        },
        coords={"item": items, "judge": judges, "factor": factors},
    )


def low_rank_judges(
    truth: xr.Dataset,
    n_comparisons: int,
    *,
    first_prob: float = 0.75,
    overdispersion: float = 0.0,
    both_orders: bool = False,
    random_seed: int = 3,
) -> Comparisons:
    """Simulate DIAL's LLM verdicts (DIAL 2026, Section 6.1 step 5; model (1)).

    Each verdict draws a judge k and a pair i < j uniformly; the canonical item i is displayed
    first (a = +1) with probability ``first_prob`` (0.75 in the paper), else a = −1; and
    Y ~ Bernoulli(σ(S_ki − S_kj + a b_k + ε_kij)), with ε_kij ~ N(0, overdispersion²) drawn once
    per (judge, pair) and shared by both orders (the judge–pair overdispersion of Fig. 2's
    bottom row). ``both_orders=True`` instead asks every (judge, pair) in both orders, equally
    often (DIAL's real-data design); ``first_prob`` is then ignored.

    Parameters
    ----------
    truth : Dataset
        From :func:`low_rank_judges_truth` (needs ``ability`` and ``order_effect``).
    n_comparisons : int
        n_l, the number of verdicts.
    random_seed : int
        Seed of the verdicts (the paper's s + 3); ε uses ``random_seed + 100``.

    Returns
    -------
    Comparisons
        With ``order`` recorded on every verdict.
    """
    S = np.asarray(truth["ability"].values, dtype=np.float64)
    b = np.asarray(truth["order_effect"].values, dtype=np.float64)
    K, N = S.shape
    if not 0 <= first_prob <= 1:
        raise ValueError(f"first_prob must lie in [0, 1], got {first_prob}")
    ii, jj = np.triu_indices(N, 1)
    eps = np.random.default_rng(random_seed + 100).normal(0.0, overdispersion, (K, len(ii)))
    rng = np.random.default_rng(random_seed)
    if both_orders:
        # the same number of verdicts in every (judge, pair, order) cell, up to one
        n_cells = K * len(ii) * 2
        count = np.full(n_cells, n_comparisons // n_cells)
        count[rng.permutation(n_cells)[: n_comparisons % n_cells]] += 1
        k = np.repeat(np.arange(K), len(ii) * 2)
        pair = np.tile(np.repeat(np.arange(len(ii)), 2), K)
        a = np.tile([1, -1], K * len(ii))
        eta = S[k, ii[pair]] - S[k, jj[pair]] + a * b[k] + eps[k, pair]
        wins = rng.binomial(count, 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
        # each cell as two rows of whole verdicts: its wins (outcome 1) and its losses (0)
        n_won = np.r_[wins, count - wins]
        keep = n_won > 0
        two = np.r_[np.arange(n_cells), np.arange(n_cells)][keep]
        return Comparisons.from_codes(
            [str(v) for v in truth["item"].values], [str(v) for v in truth["judge"].values],
            judge=k[two], item_a=ii[pair][two], item_b=jj[pair][two],
            outcome=np.r_[np.ones(n_cells), np.zeros(n_cells)][keep], order=a[two],
            count=n_won[keep])
    k = rng.integers(0, K, n_comparisons)
    pair = rng.integers(0, len(ii), n_comparisons)
    a = np.where(rng.random(n_comparisons) < first_prob, 1, -1)
    eta = S[k, ii[pair]] - S[k, jj[pair]] + a * b[k] + eps[k, pair]
    y = (rng.random(n_comparisons) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    return Comparisons.from_codes(
        [str(v) for v in truth["item"].values], [str(v) for v in truth["judge"].values],
        judge=k, item_a=ii[pair], item_b=jj[pair], outcome=y, order=a)
