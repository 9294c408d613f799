r"""One meaning of ``information=`` for every frequentist twin.

Every twin's ``fit`` takes ``information``, ``cluster`` and ``correction`` and hands them to
:func:`request` before anything is fitted; the resolved :class:`Request` says what the twin
computes, and its :meth:`Request.as_info` goes into ``Estimate.info``. The kinds are the same
in every twin (as statsmodels' ``cov_type`` is the same for every model):

``expected``
    Model-based covariance from the expected (Fisher) information :math:`I(\hat\theta)`.
    For a maximum-likelihood fit it is :math:`I^{-1}`. For a weighted objective
    :math:`\ell_1 + w\,\ell_2` of two independent samples (DIAL's human calibration) the
    model-based covariance is :math:`H^{-1}(I_1 + w^2 I_2)H^{-1}` with :math:`H = I_1 + w I_2`.
    A block's own information is not invariant under a change of chart where that block's
    score is not zero (only the total score vanishes at the estimate), so the twin writes
    :math:`I_2 = (H - I_1)/w` and computes the chart-free
    :math:`w H^{-1} + (1 - w) H^{-1} I_1 H^{-1}`; it equals :math:`H^{-1}` at :math:`w = 1`
    (the joint likelihood), :math:`I_2^{-1}/w` as :math:`w \to \infty` and :math:`I_1^{-1}` at
    :math:`w = 0`.
``observed``
    The same with the observed information (minus the Hessian of the log-likelihood) as
    :math:`H` (and, for the weighted objective, the first block's Fisher information as
    :math:`I_1`).
``sandwich``
    :math:`H^{-1} J H^{-1}` with the observed-information bread :math:`H` and the meat
    :math:`J = \sum_t s_t s_t^\top` over the per-verdict scores :math:`s_t` (HC0, White
    1980): valid when the model's variance is wrong (ties make the half-win likelihood a
    quasi-likelihood; soft outcomes too).
``cluster``
    :math:`H^{-1} M H^{-1}` with :math:`M = c \sum_g S_g S_g^\top` over the total scores
    :math:`S_g` of the clusters of a key (Liang & Zeger 1986): valid when verdicts within a
    cluster are dependent (the judges of one battle, repeated queries of one pair). The key
    is the data's own (``Comparisons.from_frame(..., cluster=COLUMN)``) or a built-in
    (:data:`bayescal.data.comparisons.BUILTIN_CLUSTER_KEYS`); ``correction="CR1"`` (default)
    sets :math:`c = G/(G-1)`, ``"CR0"`` sets :math:`c = 1` (DIAL's authors' convention).
``auto`` (the default)
    ``cluster`` when the data carry a cluster key of their own, else ``sandwich`` when the
    likelihood is a quasi-likelihood (the data hold ties or soft outcomes), else
    ``expected``. The resolved kind and the reason are recorded.

A key the caller names is used or refused, never ignored; ``cluster=`` or ``correction=``
with a kind that uses no key is an error, and so is a kind the model does not offer. A
cluster count too small for the parameters is refused or warned about by
:func:`check_cluster_counts`, the same way in every twin.

Nothing here imports PyMC.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from bayescal.identify import IdentificationError

__all__ = [
    "KINDS",
    "FewClustersWarning",
    "Information",
    "Request",
    "check_cluster_counts",
    "cluster_meat",
    "davidson_request",
    "request",
    "sandwich",
    "sandwich_from_inverse",
    "weighted_gram",
]

Information = Literal["auto", "expected", "observed", "sandwich", "cluster"]
Correction = Literal["CR1", "CR0"]
KINDS: tuple[str, ...] = ("expected", "observed", "sandwich", "cluster")
DAVIDSON_KINDS: tuple[str, ...] = ("expected", "observed", "sandwich")
CORRECTIONS: tuple[str, ...] = ("CR1", "CR0")

# Cameron & Miller (2015) put the point below which CR1 standard errors are noticeably biased
# down at 20-50 clusters; with few clusters per parameter the meat is also badly estimated.
FEW_CLUSTERS = 30
CLUSTERS_PER_PARAMETER = 5


class FewClustersWarning(UserWarning):
    """A cluster-robust covariance rests on few clusters; its standard errors run small."""


@dataclass(frozen=True)
class Request:
    """A resolved covariance request.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    cluster : str or None
        The cluster key (the data's column name or a built-in key) for ``kind="cluster"``.
    correction : str or None
        ``"CR1"`` or ``"CR0"`` for ``kind="cluster"``.
    reason : str
        Why this kind: ``"requested"``, or what ``information="auto"`` saw in the data.
    """

    kind: str
    cluster: str | None = None
    correction: str | None = None
    reason: str = "requested"

    @property
    def small_sample_factor(self) -> bool:
        """Whether the cluster meat carries G / (G - 1)."""
        return self.correction == "CR1"

    def describe(self) -> str:
        """One line for tables and notes, e.g. ``cluster (battle, CR1)``."""
        if self.kind == "cluster":
            return f"cluster ({self.cluster}, {self.correction})"
        return self.kind

    def as_info(self) -> dict[str, Any]:
        """The request as ``Estimate.info`` entries (JSON-serialisable)."""
        return {"information": self.kind, "cluster": self.cluster,
                "correction": self.correction, "information_reason": self.reason}


def request(
    information: str = "auto",
    *,
    cluster: str | None = None,
    correction: str | None = None,
    supported: Sequence[str] = KINDS,
    data_key: str | None = None,
    builtin_keys: Iterable[str] = (),
    quasi: bool = False,
    model: str = "this model",
) -> Request:
    """Check and resolve ``information``, ``cluster`` and ``correction`` before any fitting.

    Parameters
    ----------
    information : {"auto", "expected", "observed", "sandwich", "cluster"}
        The caller's kind.
    cluster : str, optional
        The caller's cluster key: the data's own key (its column name) or a built-in key.
        Naming one with ``information="auto"`` selects ``"cluster"``.
    correction : {"CR1", "CR0"}, optional
        Small-sample factor of the cluster meat (default ``"CR1"``).
    supported : sequence of str
        The kinds the model offers.
    data_key : str, optional
        The name of the cluster key the data carry (``Comparisons.cluster_key``).
    builtin_keys : iterable of str
        The model's built-in keys (e.g. ``"judge_pair"``).
    quasi : bool
        The likelihood is a quasi-likelihood on these data (ties, soft outcomes).
    model : str
        The model's name, for messages.

    Raises
    ------
    ValueError
        An unknown kind or correction; a kind ``model`` does not offer; ``cluster`` or
        ``correction`` with a kind that uses no key; ``"cluster"`` without a key; a key that
        is neither the data's nor built in.
    """
    kinds = ("auto", *KINDS)
    if information not in kinds:
        raise ValueError(f"information must be one of {kinds}, got {information!r}")
    if correction is not None and correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    builtin = tuple(builtin_keys)
    if information == "auto":
        if cluster is not None:
            kind, reason = "cluster", f"cluster={cluster!r} was given"
        elif data_key is not None and "cluster" in supported:
            kind, reason = "cluster", f"the data carry the cluster key {data_key!r}"
        elif quasi and "sandwich" in supported:
            kind, reason = "sandwich", ("the data hold ties or soft outcomes, so the likelihood "
                                        "is a quasi-likelihood and only the sandwich is valid")
        elif "expected" in supported:
            kind, reason = "expected", "binary verdicts, no cluster key"
        else:
            kind, reason = supported[0], f"{model} offers {tuple(supported)}"
    else:
        kind, reason = information, "requested"
    if kind not in supported:
        raise ValueError(f"information={kind!r} is not available for {model}; it offers "
                         f"{('auto', *supported)}")
    if kind != "cluster":
        named = [f"{name}={value!r}" for name, value in (("cluster", cluster),
                                                       ("correction", correction))
                 if value is not None]
        if named and "cluster" not in supported:
            raise ValueError(f"{' and '.join(named)}: {model} has no cluster-robust covariance "
                             f"(it offers {('auto', *supported)}); drop the argument")
        if named:
            raise ValueError(f"{' and '.join(named)} only apply to information='cluster', but "
                             f"information={information!r}; pass information='cluster' to use "
                             "the key, or drop the argument")
        return Request(kind, reason=reason)
    key = cluster if cluster is not None else data_key
    if key is None:
        offer = f" or a built-in key {list(builtin)}" if builtin else ""
        raise ValueError(f"information='cluster' needs a cluster key: build the data with a key "
                         f"column (Comparisons.from_frame(df, cluster='battle_id')){offer} and "
                         "pass cluster=...")
    if key not in builtin and key != data_key:
        own = f"the data's own key {data_key!r}" if data_key else "no key of their own"
        raise ValueError(f"unknown cluster key {key!r} for {model}: the data carry {own}"
                         + (f"; built-in keys are {list(builtin)}" if builtin else ""))
    return Request(kind, key, correction or "CR1", reason)


def davidson_request(
    information: str = "auto",
    *,
    cluster: str | None = None,
    correction: str | None = None,
    data_key: str | None = None,
    model: str = "this model",
) -> Request:
    """:func:`request` for a pairwise twin fitted with Davidson's (1970) tie model.

    The trinomial likelihood is a full likelihood of the verdicts, so ``"auto"`` resolves to
    ``expected`` (ties or not); ``observed`` and ``sandwich`` are offered. A cluster kind is
    refused before fitting, whether asked for or implied by the data's key: the cluster
    records hold each record's wins and count, not its ties, which the trinomial score needs.

    Raises
    ------
    ValueError
        ``information="cluster"``, ``cluster=``, or ``"auto"`` on data with a key of their own;
        and everything :func:`request` refuses.
    """
    if information == "cluster" or cluster is not None or (
            information == "auto" and data_key is not None):
        why = (f"the data carry the cluster key {data_key!r}"
               if cluster is None and information == "auto"
               else "a cluster covariance was asked for")
        raise ValueError(
            f"ties='davidson' has no cluster-robust covariance ({why}): the cluster records "
            "hold each record's wins and count but not its ties, which the trinomial score "
            "needs. Pass information='sandwich' (verdicts independent) or 'expected', or fit "
            "ties='half' with information='cluster'.")
    resolved = request(information, correction=correction, supported=DAVIDSON_KINDS,
                       model=f"{model} (ties='davidson')")
    if information == "auto":
        # a full likelihood of the verdicts: its Fisher information is valid without the sandwich
        resolved = Request(resolved.kind, reason="ties='davidson' is the full trinomial "
                           "likelihood of the verdicts, so its expected information is valid")
    return resolved


def pairwise_request(
    ties: str,
    information: str = "auto",
    *,
    cluster: str | None = None,
    correction: str | None = None,
    data: Any,
    model: str,
) -> Request:
    """The covariance request of a pairwise BTL twin (judge-discrimination, order-effect).

    ``ties="davidson"``: :func:`davidson_request`. Otherwise :func:`request` with every kind,
    the built-in cluster keys ``judge_pair`` and ``pair``, the data's own key, and ``"auto"``
    resolving to the sandwich where the half-win likelihood is a quasi-likelihood (ties or soft
    outcomes, ``data.quasi_likelihood``).
    """
    if ties == "davidson":
        return davidson_request(information, cluster=cluster, correction=correction,
                                data_key=data.cluster_key, model=model)
    return request(information, cluster=cluster, correction=correction, supported=KINDS,
                   data_key=data.cluster_key, builtin_keys=("judge_pair", "pair"),
                   quasi=data.quasi_likelihood, model=model)


def check_cluster_counts(groups: Iterable[tuple[str, int, int]], *, key: str) -> None:
    """Refuse singular and warn about weak cluster-robust covariances, the same everywhere.

    Parameters
    ----------
    groups : iterable of (label, G, p)
        Per block of parameters estimated from its own clusters (one per judge in a per-judge
        fit; a single ``("all", G, p)`` otherwise): the number of clusters G and of free
        parameters p.
    key : str
        The key's name, for messages.

    Raises
    ------
    IdentificationError
        G ≤ p in a block: the cluster scores sum to zero at the estimate, so the meat has rank
        at most G − 1 < p and some contrast would get a zero variance.

    Warns
    -----
    FewClustersWarning
        G < max(30, 5 p) in a block: CR1 standard errors are biased down (Cameron & Miller
        2015), typically by 10-30 %.
    """
    singular, few = [], []
    for label, n_clusters, n_params in groups:
        where = f"{n_clusters} clusters for {n_params} parameters" + (
            f" ({label})" if label != "all" else "")
        if n_clusters <= n_params:
            singular.append(where)
        elif n_clusters < max(FEW_CLUSTERS, CLUSTERS_PER_PARAMETER * n_params):
            few.append(where)
    if singular:
        raise IdentificationError(
            f"the cluster-robust covariance by {key!r} is singular: {'; '.join(singular)}. It "
            "needs more clusters than parameters; use a finer key or information='sandwich'.")
    if few:
        warnings.warn(
            f"few clusters by {key!r}: {'; '.join(few[:5])}{' ...' if len(few) > 5 else ''}. "
            f"With fewer than max({FEW_CLUSTERS}, {CLUSTERS_PER_PARAMETER} x parameters) "
            "clusters, cluster-robust standard errors are biased down; compare with "
            "information='sandwich' or 'expected' before trusting them.",
            FewClustersWarning, stacklevel=3)


def weighted_gram(
    design: NDArray[np.float64] | sp.sparray | sp.spmatrix, weight: ArrayLike
) -> NDArray[np.float64]:
    r""":math:`\sum_r w_r x_r x_r^\top` over the rows :math:`x_r` of ``design``.

    The expected information of a cell model is this with :math:`w_c = n_c p_c (1 - p_c)`
    and :math:`x_c = \partial\eta_c/\partial\theta`; the per-verdict sandwich meat is this
    with :math:`w_c = \sum_{t \in c} (y_t - p_c)^2` (from the cell's sums of y and y²).
    """
    w = np.asarray(weight, dtype=np.float64)
    if sp.issparse(design):
        out = design.T @ sp.diags_array(w) @ design
        return np.asarray(out.toarray(), dtype=np.float64)
    x = np.asarray(design, dtype=np.float64)
    return np.asarray((x * w[:, None]).T @ x, dtype=np.float64)


def cluster_meat(
    scores: NDArray[np.float64] | sp.sparray | sp.spmatrix,
    clusters: ArrayLike,
    *,
    correction: str = "CR1",
) -> NDArray[np.float64]:
    r"""Meat of the cluster-robust sandwich, :math:`c \sum_g S_g S_g^\top`.

    :math:`S_g = \sum_{r \in g} s_r` is the total score of cluster g over its records r
    (rows of ``scores``: per verdict, or per (cluster, cell) record with the cell's gradient
    times the record's residual sum); :math:`c = G/(G-1)` for ``"CR1"``, 1 for ``"CR0"``.

    Parameters
    ----------
    scores : ndarray or scipy sparse matrix, shape (records, parameters)
        Score contributions; sparse input keeps the cost O(non-zeros) for cell designs.
    clusters : array of int, shape (records,)
        Cluster code of each record (any integers; G is the number of distinct codes).
    correction : {"CR1", "CR0"}
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    codes = np.asarray(clusters)
    n_records = scores.shape[0]
    if codes.shape != (n_records,):
        raise ValueError(f"clusters has shape {codes.shape}; expected ({n_records},)")
    uniq, code = np.unique(codes, return_inverse=True)
    n_clusters = len(uniq)
    if n_clusters < 2:
        raise ValueError(f"a cluster-robust variance needs at least 2 clusters, got {n_clusters}")
    indicator = sp.csr_array(
        (np.ones(n_records), (code, np.arange(n_records))), shape=(n_clusters, n_records)
    )
    totals = indicator @ scores
    meat = totals.T @ totals
    meat = meat.toarray() if sp.issparse(meat) else np.asarray(meat)
    factor = n_clusters / (n_clusters - 1) if correction == "CR1" else 1.0
    return np.asarray(factor * meat, dtype=np.float64)


def sandwich(bread: NDArray[np.float64], meat: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`B^{-1} M B^{-1}`, symmetrised (``bread`` must be non-singular)."""
    return sandwich_from_inverse(np.linalg.inv(bread), meat)


def sandwich_from_inverse(inverse: NDArray[np.float64], meat: NDArray[np.float64]
                          ) -> NDArray[np.float64]:
    r""":math:`G M G^\top`, symmetrised, for a bread whose (generalised) inverse :math:`G` a
    twin already holds (the judge-discrimination twin's :math:`J B^{-1} J^\top`)."""
    out = inverse @ meat @ inverse.T
    return (out + out.T) / 2
