r"""Twin of the misclassification model with an item effect shared by the judges.

The K-judge misclassification model (Chen, Lu, Li, Guo and Li 2026, arXiv:2601.05420, extended
to K judges; :mod:`bayescal.frequentist.misclassification`) takes the judges' labels to be
independent given the human label Y. Judges that the same hard items fool break that: their
errors are correlated given Y, the model reads their agreement as evidence about Y, and its
prevalence interval is narrow around a biased value. This model lets the judges share an item
effect :math:`u_i \sim N(0, 1)`:

.. math:: \operatorname{logit} P(\hat Y_{ik} = 1 \mid Y_i = y, u_i) = \alpha_{ky} + \sigma_y u_i,

with :math:`\alpha_{k1} = \operatorname{logit} q_{1k}` and
:math:`\alpha_{k0} = -\operatorname{logit} q_{0k}`: ``specificity`` and ``sensitivity`` are those of
the median item (u = 0), and ``item_sd`` (σ_y, one per human class) scales the shared effect. At
σ = 0 the model is exactly the conditionally independent one; σ_y > 0 makes the judges' labels
positively dependent within class y. The judges are independent given (Y, u), so

.. math:: P(\hat y \mid y) = \int \prod_k \pi_{ky}(u)^{\hat y_k}(1 - \pi_{ky}(u))^{1 - \hat y_k}
          \,\phi(u)\,du,

computed by Gauss–Hermite quadrature (``nodes`` points of the probabilists' rule, weights
normalised to one). It is exact at σ = 0; the logistic's poles at distance π/σ from the real
line slow it down as σ grows: with the default 64 nodes the error of a pattern's
log-probability is below 1e-15 at σ = 1, about 5e-8 at σ = 2 and 1e-4 at σ = 3 (measured
against adaptive quadrature). :func:`fit` checks its own estimate: it recomputes the
log-likelihood with twice the nodes, records the difference (``info["quadrature_error"]``) and
warns when it exceeds 1e-4, naming the ``nodes`` to use. Calibration
items contribute :math:`\log \theta_y P(\hat y \mid y)`, test items
:math:`\log \sum_y \theta_y P(\hat y \mid y)`, through the counts of their distinct label
patterns (:meth:`bayescal.data.Labels.patterns`, the sufficient statistics), with no multinomial
coefficient, as in the independent twin.

Identification. The likelihood is even in each σ_y (u and -u have one law), so the fit
optimises σ on the whole line and reports |σ̂|; σ = 0 is then an interior stationary point, not
a boundary, and the prevalence keeps a Wald interval there. One judge cannot separate σ from α
(one binary label per item has one rate given Y): refused. With two or three judges the
unlabelled patterns (2^K − 1 = 3 or 7 frequencies) cannot identify 2K + 3 parameters, so each
human class needs at least two labelled items (within a class the judges' agreement on labelled
items measures σ_y); from four judges on, the 15 pattern frequencies exceed the 11 parameters. As
in the independent twin, a calibration item of each class fixes the orientation of Y.

Fit: a trust region with the analytic gradient and Hessian on the chart (node-posterior means
and covariances, and over Y for the test patterns Louis's identity), then Newton steps. The
likelihood can have several maxima, so it starts twice (the conditionally independent MLE with
σ = 0.3, the calibration proportions with σ = 1.5) and keeps the better
(``info["start_objectives"]``).

Covariance (``information=``, :func:`bayescal.frequentist.covariance.request`): ``expected``
(:math:`m E_{cal}[s s^\top] + n E_{test}[s s^\top]`, sums over the 2^K patterns), ``observed``
(minus the analytic Hessian) or ``sandwich`` (observed bread, per-item meat over the patterns);
``auto`` resolves to ``expected``. The information is computed on the chart
(logit θ, logit q0, logit q1, σ) and carried to (θ, q0, q1, σ) by the delta method; intervals are
``wald-logit`` for the probabilities and ``wald-log`` for σ, none for σ when some σ̂_y is 0
(a boundary of |σ|; ``info["item_sd_note"]``). Estimates with a chart coordinate past
15 in absolute value (a rate within ~3e-7 of 0 or 1, or σ > 15: judges that are
deterministic given u) raise :class:`~bayescal.frequentist._core.MLEBoundaryError`.

Nothing here imports PyMC; the PyMC model is :mod:`bayescal.models.misclassification_dependent`.
See ``models/misclassification.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import xarray as xr
from numpy.polynomial.hermite_e import hermegauss
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logit, logsumexp

from bayescal.data import Labels
from bayescal.data.labels import LabelPatterns
from bayescal.frequentist import covariance
from bayescal.frequentist._core import ConvergenceWarning, Estimate, MLEBoundaryError
from bayescal.identify import IdentificationError
from bayescal.priors import check_beta_prior, check_prior_sd
from bayescal.schema import term_labels

__all__ = ["INFORMATION", "NODES", "fit", "gradient", "information", "loglik"]

#: The covariance kinds :func:`fit` offers (``"auto"`` resolves to ``"expected"``).
INFORMATION = ("expected", "observed", "sandwich")
#: Gauss–Hermite nodes of the integral over u.
NODES = 64
# A chart coordinate past this is on the boundary (a rate within ~3e-7 of 0 or 1, or σ > 15).
_CHART_MAX = 15.0
# |σ̂_y| below this is σ_y = 0 (the boundary of the reported |σ|): no interval for item_sd
_SD_ZERO = 1e-4
_GRADIENT_TOL = 1e-8
_NEWTON_MAX_STEPS = 50
# Starting item effects of the two optimizer runs (the best is kept): from the independent
# MLE, and from the calibration proportions.
_START_SD = (0.3, 1.5)
# The log-likelihood's change with twice the nodes beyond which fit warns.
_QUADRATURE_TOL = 1e-4
# The expected information and the pattern sums run over 2^K patterns.
_MAX_JUDGES = 12
CLASSES = [0, 1]


# ------------------------------------------------------------------ parameters
def _chart(params: Mapping[str, ArrayLike], k: int) -> NDArray[np.float64]:
    """(prevalence, specificity[K], sensitivity[K], item_sd[2]) -> the chart c of length 2K+3."""
    theta = np.asarray(params["prevalence"], dtype=np.float64).reshape(-1)
    q0 = np.asarray(params["specificity"], dtype=np.float64).reshape(-1)
    q1 = np.asarray(params["sensitivity"], dtype=np.float64).reshape(-1)
    sd = np.asarray(params["item_sd"], dtype=np.float64).reshape(-1)
    if theta.size != 1 or q0.size != k or q1.size != k or sd.size != 2:
        raise ValueError(
            f"params need a scalar prevalence, specificity/sensitivity of length {k} (one per "
            f"judge) and item_sd of length 2 (Y = 0, Y = 1); got sizes {theta.size}, "
            f"{q0.size}, {q1.size}, {sd.size}")
    probs = np.concatenate([theta, q0, q1])
    if not np.all((probs > 0) & (probs < 1)):
        raise ValueError("prevalence, specificity and sensitivity must lie in (0, 1)")
    return np.concatenate([logit(probs), sd])


def _quadrature(nodes: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if not isinstance(nodes, (int, np.integer)) or nodes < 1:
        raise ValueError(f"nodes must be a positive integer, got {nodes!r}")
    z, w = hermegauss(int(nodes))
    return z, np.log(w / w.sum())


def _blocks(k: int) -> list[tuple[NDArray[np.int64], NDArray[np.float64]]]:
    """Per class y: chart indices of (α_{·y}, σ_y) and the sign of ∂α/∂chart."""
    idx0 = np.r_[1 : 1 + k, 1 + 2 * k]
    idx1 = np.r_[1 + k : 1 + 2 * k, 2 + 2 * k]
    return [(idx0, np.r_[-np.ones(k), 1.0]), (idx1, np.ones(k + 1))]


def _derivatives(c: NDArray[np.float64], yhat: NDArray[np.float64], y: NDArray[np.float64],
                 test: NDArray[np.bool_], nodes: int, order: int
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None,
                            NDArray[np.float64] | None, NDArray[np.float64]]:
    """Per pattern: log-probability, chart gradient (order ≥ 1), chart Hessian (order 2), and
    P(Y = 1 | pattern) (the human label on calibration patterns).

    Each class term is h_y = log θ_y + log Σ_j w_j exp(L_j), L_j the judges' log-probability at
    node z_j; its derivatives follow from the node posterior r_j ∝ w_j exp(L_j) (the mean and
    covariance of ∇L_j, plus the mean of ∇²L_j), and the test patterns' logaddexp over y the
    same way with P(Y | pattern).
    """
    k = yhat.shape[1]
    z, lw = _quadrature(nodes)
    theta = expit(c[0])
    d = 2 * k + 3
    n_pat = len(yhat)
    h = np.empty((2, n_pat))
    grads = np.zeros((2, n_pat, d)) if order >= 1 else None
    hess = np.zeros((2, n_pat, d, d)) if order >= 2 else None
    for cls, (idx, sign) in enumerate(_blocks(k)):
        alpha = sign[:k] * c[idx[:k]]
        sd = c[idx[k]]
        eta = alpha[None, :] + sd * z[:, None]  # (J, K)
        big = yhat @ eta.T + log_expit(-eta).sum(axis=1)[None, :]  # L_pj, (P, J)
        g = lw[None, :] + big
        f = logsumexp(g, axis=1)
        h[cls] = (np.log(theta) if cls == 1 else np.log1p(-theta)) + f
        if grads is None:
            continue
        r = np.exp(g - f[:, None])  # node posterior (P, J)
        pi = expit(eta)  # (J, K)
        resid = yhat[:, None, :] - pi[None, :, :]  # (P, J, K)
        gl = np.concatenate([resid, (z[None, :] * resid.sum(axis=2))[:, :, None]], axis=2)
        gf = np.einsum("pj,pjd->pd", r, gl)  # ∇f in (α_y, σ_y), (P, K+1)
        grads[cls][:, idx] = gf * sign
        grads[cls][:, 0] = (1 - theta) if cls == 1 else -theta
        if hess is None:
            continue
        v = pi * (1 - pi)  # (J, K)
        e_hess = np.zeros((n_pat, k + 1, k + 1))
        diag = -(r @ v)  # (P, K)
        e_hess[:, np.arange(k), np.arange(k)] = diag
        cross = -(r @ (z[:, None] * v))  # (P, K)
        e_hess[:, :k, k] = cross
        e_hess[:, k, :k] = cross
        e_hess[:, k, k] = -(r @ (z**2 * v.sum(axis=1)))
        outer = np.einsum("pj,pjd,pje->pde", r, gl, gl) - gf[:, :, None] * gf[:, None, :]
        block = (e_hess + outer) * np.outer(sign, sign)
        hess[cls][np.ix_(np.arange(n_pat), idx, idx)] = block
        hess[cls][:, 0, 0] = -theta * (1 - theta)
    w = np.where(test, expit(h[1] - h[0]), y)
    lp = np.where(test, np.logaddexp(h[1], h[0]), np.where(y == 1, h[1], h[0]))
    if grads is None:
        return lp, None, None, w
    wy = np.stack([1 - w, w])  # (2, P)
    grad = np.einsum("yp,ypd->pd", wy, grads)
    if hess is None:
        return lp, grad, None, w
    full = (np.einsum("yp,ypde->pde", wy, hess)
            + np.einsum("yp,ypd,ype->pde", wy, grads, grads)
            - grad[:, :, None] * grad[:, None, :])
    return lp, grad, full, w


def _grid(k: int) -> NDArray[np.float64]:
    return ((np.arange(2**k)[:, None] >> np.arange(k)[::-1]) & 1).astype(np.float64)


def _patterns(data: Labels, judges: Sequence[str] | None) -> LabelPatterns:
    pat = data.patterns(judges)
    if pat.n_judges > _MAX_JUDGES:
        raise ValueError(f"the item-effect model sums over 2^K patterns; K = {pat.n_judges} "
                         f"judges is more than {_MAX_JUDGES}")
    return pat


# ------------------------------------------------------------------ public functions
def loglik(params: Mapping[str, ArrayLike], data: Labels, *,
           judges: Sequence[str] | None = None, nodes: int = NODES) -> float:
    r"""Log-likelihood of the item-effect misclassification model at ``params``.

    Parameters
    ----------
    params : mapping
        ``prevalence`` (θ), ``specificity`` and ``sensitivity`` (q0, q1 of the median item, one
        per judge in the order of ``judges``), ``item_sd`` (σ_0, σ_1: Y = 0, Y = 1).
    data : Labels
        Binary labels.
    judges : sequence of str, optional
        Judges used (default: all).
    nodes : int
        Gauss–Hermite nodes of the integral over the item effect u.

    Returns
    -------
    float
        :math:`\sum_{cal}\log\theta_Y P(\hat y\mid Y) + \sum_{test}\log\sum_y\theta_y
        P(\hat y\mid y)`, the sum over items; at σ = 0 the independent twin's ``loglik``.
    """
    pat = _patterns(data, judges)
    c = _chart(params, pat.n_judges)
    lp = _derivatives(c, pat.yhat, pat.y, pat.test, nodes, 0)[0]
    return float(pat.count @ lp)


def _natural_jacobian(c: NDArray[np.float64]) -> NDArray[np.float64]:
    """d(θ, q0, q1, σ)/d chart (diagonal)."""
    p = expit(c[:-2])
    return np.concatenate([p * (1 - p), [1.0, 1.0]])


def gradient(params: Mapping[str, ArrayLike], data: Labels, *,
             judges: Sequence[str] | None = None, nodes: int = NODES
             ) -> dict[str, NDArray[np.float64] | float]:
    """Analytic gradient of :func:`loglik` in (θ, q0, q1, σ).

    Returns
    -------
    dict
        ``prevalence`` (float), ``specificity``, ``sensitivity`` (per judge), ``item_sd``
        (Y = 0, Y = 1).
    """
    pat = _patterns(data, judges)
    k = pat.n_judges
    c = _chart(params, k)
    g = pat.count @ _derivatives(c, pat.yhat, pat.y, pat.test, nodes, 1)[1]
    g = g / _natural_jacobian(c)
    return {"prevalence": float(g[0]), "specificity": g[1 : 1 + k],
            "sensitivity": g[1 + k : 1 + 2 * k], "item_sd": g[1 + 2 * k :]}


def information(params: Mapping[str, ArrayLike], data: Labels,
                kind: str = "observed", *, judges: Sequence[str] | None = None,
                nodes: int = NODES) -> NDArray[np.float64]:
    """Fisher information on the chart (logit θ, logit q0[K], logit q1[K], σ_0, σ_1).

    Parameters
    ----------
    kind : {"observed", "expected"}
        ``observed``: minus the Hessian of :func:`loglik` in the chart. ``expected``:
        :math:`m E_{cal}[s s^\\top] + n E_{test}[s s^\\top]` at ``params``.
    """
    pat = _patterns(data, judges)
    c = _chart(params, pat.n_judges)
    if kind == "observed":
        return -np.einsum("p,pde->de", pat.count,
                          _derivatives(c, pat.yhat, pat.y, pat.test, nodes, 2)[2])
    if kind == "expected":
        return _expected(c, pat, nodes)
    raise ValueError(f"kind must be 'observed' or 'expected', got {kind!r}")


def _expected(c: NDArray[np.float64], pat: LabelPatterns, nodes: int) -> NDArray[np.float64]:
    k = pat.n_judges
    grid = _grid(k)
    n_grid = len(grid)
    both = np.vstack([grid, grid])
    human = np.r_[np.zeros(n_grid), np.ones(n_grid)]
    lp, s, _, _ = _derivatives(c, both, human, np.zeros(2 * n_grid, bool), nodes, 1)
    cal = s.T @ (np.exp(lp)[:, None] * s)
    lp, s, _, _ = _derivatives(c, grid, np.zeros(n_grid), np.ones(n_grid, bool), nodes, 1)
    test = s.T @ (np.exp(lp)[:, None] * s)
    return np.asarray(pat.m * cal + pat.n * test)


# ------------------------------------------------------------------ fit
def _check_identified(pat: LabelPatterns) -> None:
    k = pat.n_judges
    if k < 2:
        raise IdentificationError(
            "the item effect is not identified with one judge: one binary label per item has "
            "one rate given Y, shared by α and σ. Use the independent model "
            "(bayescal.frequentist.misclassification.fit), which is exact for one judge")
    reason = pat.sign_unidentified()
    if reason is not None:
        raise IdentificationError(reason + ". Label items of both human classes")
    if k < 4:
        cal = ~pat.test
        for cls in CLASSES:
            size = int(pat.count[cal & (pat.y == cls)].sum())
            if size < 2:
                raise IdentificationError(
                    f"with {k} judges the unlabelled patterns ({2**k - 1} frequencies) cannot "
                    f"identify {2 * k + 3} parameters, and only {size} labelled item(s) have "
                    f"Y = {cls}: item_sd[{cls}] (σ_{cls}) needs at least two labelled items of "
                    "that class (or four judges). Label more items")


def _embed(v: NDArray[np.float64], free: NDArray[np.bool_]) -> NDArray[np.float64]:
    out = np.zeros(len(free))
    out[free] = v
    return out


def _start(pat: LabelPatterns) -> NDArray[np.float64]:
    """Calibration proportions (add-a-half); σ set by the caller (σ = 0 is a stationary
    point, never a start)."""
    q0, q1 = pat.calibration_accuracy(smoothing=0.5)
    theta = (pat.n_calibration_positive + 0.5) / (pat.m + 1)
    return np.concatenate([logit(np.r_[theta, q0, q1]), [1.0, 1.0]])


class PriorsLike(Protocol):
    """The fields of the PyMC model's ``Priors`` (no PyMC import here)."""

    prevalence: tuple[float, float]
    specificity: tuple[float, float]
    sensitivity: tuple[float, float]
    item_sd: float | None


def _penalty(c: NDArray[np.float64], k: int, penalty: PriorsLike | None
             ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Log prior density in (θ, q0, q1, σ) (no Jacobian: the MAP's objective), with its
    gradient and diagonal Hessian on the chart: Beta (a, b) kernels
    (a - 1) log x + (b - 1) log(1 - x) and the half-normal's -σ²/(2s²), up to constants."""
    if penalty is None:
        return 0.0, np.zeros_like(c), np.zeros_like(c)
    for name in ("prevalence", "specificity", "sensitivity"):
        check_beta_prior(f"penalty.{name}", getattr(penalty, name, None))
    check_prior_sd("penalty.item_sd", getattr(penalty, "item_sd", None))
    ab = np.asarray([penalty.prevalence] + [penalty.specificity] * k
                    + [penalty.sensitivity] * k, dtype=np.float64)
    a, b = ab[:, 0] - 1, ab[:, 1] - 1
    x = expit(c[:-2])
    value = float(a @ log_expit(c[:-2]) + b @ log_expit(-c[:-2]))
    grad = np.r_[a * (1 - x) - b * x, 0.0, 0.0]
    hess = np.r_[-(a + b) * x * (1 - x), 0.0, 0.0]
    if penalty.item_sd is not None:
        s2 = float(penalty.item_sd) ** 2
        value -= float(c[-2:] @ c[-2:]) / (2 * s2)
        grad[-2:] = -c[-2:] / s2
        hess[-2:] = -1 / s2
    return value, grad, hess


def _total(c: NDArray[np.float64], pat: LabelPatterns, nodes: int, order: int,
           penalty: PriorsLike | None
           ) -> tuple[float, NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """The (penalized) log-likelihood, its chart gradient and Hessian (up to ``order``)."""
    lp, g, h, _ = _derivatives(c, pat.yhat, pat.y, pat.test, nodes, order)
    pv, pg, ph = _penalty(c, pat.n_judges, penalty)
    value = float(pat.count @ lp) + pv
    grad = None if g is None else pat.count @ g + pg
    hess = None if h is None else np.einsum("p,pde->de", pat.count, h) + np.diag(ph)
    return value, grad, hess


def _optimise(pat: LabelPatterns, nodes: int, penalty: PriorsLike | None
              ) -> tuple[NDArray[np.float64], dict[str, object]]:
    scale = 1.0 / (pat.m + pat.n)

    def trust(start: NDArray[np.float64], free: NDArray[np.bool_]) -> NDArray[np.float64]:
        def point(v: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.asarray(np.where(free, 0.0, start) + _embed(v, free))

        def sub(v: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            value, grad, _ = _total(point(v), pat, nodes, 1, penalty)
            assert grad is not None
            return -value * scale, -grad[free] * scale

        def sub_hessian(v: NDArray[np.float64]) -> NDArray[np.float64]:
            hess = _total(point(v), pat, nodes, 2, penalty)[2]
            assert hess is not None
            return np.asarray(-hess[np.ix_(free, free)] * scale)

        res = minimize(sub, start[free], jac=True, hess=sub_hessian, method="trust-exact",
                       options={"gtol": 1e-9, "maxiter": 500})
        return point(res.x)

    # The likelihood can have several local maxima (seen: one with a judge's rate running to
    # 1 under a large σ, and a better interior one that runs from the calibration proportions
    # never reached). Two starts, the best kept: the conditionally independent MLE (σ held
    # at 0, from the calibration proportions) with σ = 0.3, and the calibration proportions
    # with σ = 1.5.
    base = _start(pat)
    rates = np.r_[np.ones(len(base) - 2, bool), False, False]
    independent = trust(np.r_[base[:-2], 0.0, 0.0], rates)
    everything = np.ones(len(base), bool)
    runs = [trust(np.r_[independent[:-2], _START_SD[0], _START_SD[0]], everything),
            trust(np.r_[base[:-2], _START_SD[1], _START_SD[1]], everything)]
    values = [_total(r, pat, nodes, 0, penalty)[0] for r in runs]
    c = runs[int(np.argmax(values))]
    # Newton polish: the trust region stops near 1e-9 per item, exact steps reach ~1e-13
    steps = 0
    for _ in range(_NEWTON_MAX_STEPS):
        if np.max(np.abs(c)) > _CHART_MAX:
            break
        value, grad, hess = _total(c, pat, nodes, 2, penalty)
        assert grad is not None and hess is not None
        try:
            step = np.linalg.solve(hess, -grad)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(step)) or grad @ step <= 0:
            break  # not an ascent direction: the Hessian is not negative definite here
        t = 1.0
        while t > 1e-10:
            if _total(c + t * step, pat, nodes, 0, penalty)[0] >= value - 1e-12 * abs(value):
                break
            t /= 2
        if t <= 1e-10:
            break
        c = c + t * step
        steps += 1
        if np.max(np.abs(t * step)) < 1e-13:
            break
    return c, {"optimizer": "trust-exact + Newton", "newton_steps": steps,
               "start_item_sd": list(_START_SD), "start_objectives": values}


def fit(
    data: Labels,
    *,
    judges: Sequence[str] | None = None,
    nodes: int = NODES,
    information: covariance.Information = "auto",
    cluster: str | None = None,
    correction: str | None = None,
    penalty: PriorsLike | None = None,
) -> Estimate:
    """Maximum-likelihood fit of the item-effect misclassification model, logit-Wald intervals.

    Parameters
    ----------
    data : Labels
        Binary human labels on the calibration items, judge labels on every item.
    judges : sequence of str, optional
        Judges to use (default: all; at least two).
    nodes : int
        Gauss–Hermite nodes of the integral over the item effect (default 64).
    information : {"auto", "expected", "observed", "sandwich"}
        Covariance kind (module docstring); ``"auto"`` resolves to ``"expected"``.
        ``"cluster"`` is refused: items carry no cluster key.
    cluster, correction : None
        Only for ``information="cluster"``, not offered; naming either is an error.
    penalty : Priors, optional
        Add the log prior densities of :class:`bayescal.models.misclassification_dependent.Priors`
        (Beta kernels on θ, q0, q1, a half-normal on σ; no Jacobian): the optimum is then the
        PyMC model's MAP, the method ``"penalized-mle"`` and the bread includes the prior's
        curvature. ``None`` gives the MLE. The identification checks apply either way.

    Returns
    -------
    Estimate
        ``prevalence`` (θ), ``specificity``, ``sensitivity`` (dim ``judge``, the median
        item's), ``item_sd`` (σ_y ≥ 0, dim ``class``: Y = 0, Y = 1); method ``"mle"``.
        ``info`` holds the resolved covariance request and each judge's marginal
        specificity and sensitivity (averaged over u).

    Raises
    ------
    ValueError
        A covariance kind not offered, ``cluster``/``correction`` given, a bad ``nodes``
        (before any fitting).
    DataError
        Labels that are not 0/1, an unknown judge.
    IdentificationError
        One judge; a human class absent from the calibration set; with two or three judges,
        fewer than two labelled items of a class; a singular information at the estimate.
    MLEBoundaryError
        A rate at 0 or 1, or σ → ∞ (judges deterministic given the item effect).

    Warns
    -----
    ConvergenceWarning
        The optimizer stopped short of a stationary point (``converged`` is False).
    UserWarning
        The quadrature is not accurate at the estimate (module docstring).
    """
    req = covariance.request(information, cluster=cluster, correction=correction,
                             supported=INFORMATION, model="the item-effect misclassification model")
    _quadrature(nodes)
    pat = _patterns(data, judges)
    k = pat.n_judges
    _check_identified(pat)
    _penalty(_start(pat), k, penalty)  # validate before fitting
    c, info = _optimise(pat, nodes, penalty)
    labels = (["prevalence"] + [f"specificity[{j}]" for j in pat.judges]
              + [f"sensitivity[{j}]" for j in pat.judges] + ["item_sd[0]", "item_sd[1]"])
    far = np.abs(c) > _CHART_MAX
    if np.any(far):
        what = "maximum-likelihood" if penalty is None else "penalized"
        raise MLEBoundaryError(
            f"the {what} estimate of the item-effect model is on the boundary: "
            + ", ".join(labels[i] for i in np.flatnonzero(far))
            + " ran past the chart's limit (a rate at 0 or 1, or an item_sd → ∞: judges that "
            "are deterministic given the item effect). No Wald interval is meaningful there. "
            + ("Fit with penalty=bayescal.models.misclassification_dependent.Priors() (the "
               "MAP: its Beta priors keep the rates inside (0, 1)), drop the judge "
               "(fit(..., judges=[...])) or label more items" if penalty is None else
               "Drop the judge (fit(..., judges=[...])) or label more items"))
    ll = float(pat.count @ _derivatives(c, pat.yhat, pat.y, pat.test, nodes, 0)[0])
    _, grad, hess = _total(c, pat, nodes, 2, penalty)
    assert grad is not None and hess is not None
    prior_curvature = _penalty(c, k, penalty)[2]
    observed = -hess
    max_gradient = float(np.max(np.abs(grad)))
    converged = max_gradient <= _GRADIENT_TOL * (pat.m + pat.n)
    if not converged:
        warnings.warn(f"the optimizer stopped without converging (largest gradient "
                      f"{max_gradient:.3g}); the estimate and its covariance are not trustworthy",
                      ConvergenceWarning, stacklevel=2)
    eig = np.linalg.eigvalsh(observed)
    if eig[0] <= 1e-10 * max(eig[-1], 1e-300):
        raise IdentificationError(
            "the observed information of the item-effect model is singular (or not positive "
            f"definite) at the estimate (eigenvalues {eig[0]:.3g} .. {eig[-1]:.3g}): the labels "
            "do not identify every parameter (often item_sd: label more items, or use more "
            "judges)")
    if req.kind == "expected":
        cov_c = np.linalg.inv(_expected(c, pat, nodes) - np.diag(prior_curvature))
    elif req.kind == "observed":
        cov_c = np.linalg.inv(observed)
    else:
        _, s, _, _ = _derivatives(c, pat.yhat, pat.y, pat.test, nodes, 1)
        cov_c = covariance.sandwich(observed, covariance.weighted_gram(s, pat.count))
    # σ is reported as |σ̂| (the likelihood is even in each σ_y): flip the sign of its row
    jac = _natural_jacobian(c) * np.r_[np.ones(1 + 2 * k), np.where(c[-2:] < 0, -1.0, 1.0)]
    cov = jac[:, None] * cov_c * jac[None, :]
    cov = (cov + cov.T) / 2
    x = np.concatenate([expit(c[: 1 + 2 * k]), np.abs(c[-2:])])
    finer = float(pat.count @ _derivatives(c, pat.yhat, pat.y, pat.test, 2 * nodes, 0)[0])
    if abs(finer - ll) > _QUADRATURE_TOL:
        warnings.warn(
            f"the Gauss–Hermite rule with {nodes} nodes is not accurate at this estimate "
            f"(item_sd = {np.abs(c[-2:]).round(3).tolist()}): the log-likelihood moves by "
            f"{abs(finer - ll):.3g} with {2 * nodes} nodes. Refit with nodes={4 * nodes}",
            UserWarning, stacklevel=2)
    info.update(req.as_info(), nodes=int(nodes), quadrature_error=abs(finer - ll),
                max_abs_gradient=max_gradient, m=pat.m,
                n=pat.n, n_patterns=len(pat.count), **_marginal_rates(c, k, pat.judges, nodes))
    return _estimate(pat, x, cov, ll, info, converged, penalty is not None)


def _marginal_rates(c: NDArray[np.float64], k: int, judges: Sequence[str], nodes: int
                    ) -> dict[str, dict[str, float]]:
    """Each judge's specificity and sensitivity averaged over the item effect."""
    z, lw = _quadrature(nodes)
    w = np.exp(lw)
    out: dict[str, dict[str, float]] = {}
    for cls, (idx, sign) in enumerate(_blocks(k)):
        eta = (sign[:k] * c[idx[:k]])[None, :] + c[idx[k]] * z[:, None]
        rate = w @ expit(eta)  # P(Ŷ_k = 1 | Y = cls)
        key = "marginal_sensitivity" if cls == 1 else "marginal_specificity"
        out[key] = dict(zip(judges, (rate if cls == 1 else 1 - rate).tolist(), strict=True))
    return out


def _estimate(pat: LabelPatterns, x: NDArray[np.float64], cov: NDArray[np.float64], ll: float,
              info: dict[str, object], converged: bool, penalized: bool) -> Estimate:
    k = pat.n_judges
    coords = {"judge": list(pat.judges)}
    ds = xr.Dataset({
        "prevalence": xr.DataArray(x[0]),
        "specificity": xr.DataArray(x[1 : 1 + k], dims="judge", coords=coords),
        "sensitivity": xr.DataArray(x[1 + k : 1 + 2 * k], dims="judge", coords=coords),
        "item_sd": xr.DataArray(x[1 + 2 * k :], dims="class", coords={"class": CLASSES}),
    })
    terms = tuple(label for name, da in ds.data_vars.items()
                  for label in term_labels(str(name), da))
    # σ_y ≥ 0 is reported as |σ̂_y| of a likelihood even in σ_y: away from 0 its interval is
    # Wald on the log scale (it stays positive); at 0 (the judges look independent in class y,
    # or the prior's mode won) |σ̂| sits on a boundary where no normal approximation holds, so
    # no interval is printed. θ's interval is unaffected: by that evenness the θ-σ cross
    # information vanishes at σ = 0.
    at_zero = bool(np.any(x[1 + 2 * k :] < _SD_ZERO))
    if at_zero:
        info["item_sd_note"] = (
            "an item_sd is at 0, a boundary of |σ| where its Wald interval is not valid: none "
            "is given for item_sd; the conditional-independence tests (bayescal.independence) "
            "test σ = 0")
    interval = {"prevalence": "wald-logit", "specificity": "wald-logit",
                "sensitivity": "wald-logit", "item_sd": "none" if at_zero else "wald-log"}
    return Estimate(method="penalized-mle" if penalized else "mle", params=ds, cov=cov,
                    terms=terms, interval=interval,
                    loglik=ll, converged=converged, info=info)
