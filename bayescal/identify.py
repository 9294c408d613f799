"""Identification checks that run before any optimizer or sampler.

Two graph facts decide whether a Bradley–Terry-type fit is meaningful:

* **Connectivity** of the comparison graph (items joined when compared at least once): scores
  in different components are not comparable; the MLE refuses, a Bayesian fit proceeds with the
  prior setting the between-component differences.
* **Existence of the MLE** (Zermelo 1929; Ford 1957): the directed win graph, with an edge
  i → j when i beat j at least once (a tie counts both ways), must be strongly connected.
  Otherwise some group of items never loses to the rest and its scores run to infinity.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse import coo_array, csr_array
from scipy.sparse.csgraph import connected_components

from bayescal.data import Comparisons, DataError

__all__ = [
    "Identification",
    "IdentificationError",
    "IdentificationWarning",
    "OrderIdentification",
    "calibration",
    "check",
    "components",
    "discrimination_not_identified",
    "feature_problems",
    "order_effect",
    "order_effect_rank",
    "order_separation",
    "require_mle",
    "require_order",
    "require_features_identified",
    "require_order_effect_mle",
    "require_tie_parameters",
    "warn_if_order_unidentified",
    "warn_if_unidentified",
]


class IdentificationError(DataError):
    """The data cannot identify the requested estimate (e.g. no finite MLE)."""


class IdentificationWarning(UserWarning):
    """A Bayesian fit proceeds, but part of the answer comes from the prior."""


def _labels(items: tuple[str, ...], codes: np.ndarray) -> tuple[str, ...]:
    return tuple(items[c] for c in codes)


def _graph(src: np.ndarray, dst: np.ndarray, n: int) -> csr_array:
    """Adjacency of the edges src -> dst on n nodes, each edge once.

    Cells repeat an edge (orders, judges, ties), and scipy's COO -> CSR conversion sorts every
    entry: 0.3 s for the million cells of a 300-item leaderboard. A dense boolean matrix drops
    the repeats in one pass where n² is small; beyond that, the sort it is.
    """
    if n * n <= 1 << 24:
        adj = np.zeros((n, n), dtype=bool)
        adj[src, dst] = True
        return csr_array(adj)
    return csr_array(coo_array((np.ones(len(src)), (src, dst)), shape=(n, n)))


def _component_labels(items: tuple[str, ...], n: int, labels: np.ndarray) -> list[tuple[str, ...]]:
    # group item codes by component label with one stable sort (a flatnonzero per component is
    # quadratic when a judge saw few items: hundreds of singletons)
    order = np.argsort(labels, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(labels, minlength=n))[:-1])
    named = [_labels(items, g) for g in groups]
    return sorted(named, key=lambda g: (-len(g), g))


def components(data: Comparisons, judge: str | None = None) -> list[tuple[str, ...]]:
    """Connected components of the comparison graph, largest first.

    Parameters
    ----------
    data : Comparisons
    judge : str, optional
        Restrict to one judge's comparisons; by default all judges are pooled.

    Returns
    -------
    list of tuple of str
        Item labels of each component. Items the judge never compared are singletons.
    """
    if judge is None:
        n = data.n_items
        n_comp, labels = connected_components(_graph(data.item_i, data.item_j, n),
                                              directed=False)
        return _component_labels(data.items, n_comp, labels)
    if judge not in data.judges:
        raise DataError(f"unknown judge {judge!r}; judges are {data.judges}")
    return _judge_components(data)[judge]


def _judge_components(data: Comparisons) -> dict[str, list[tuple[str, ...]]]:
    """Components of every judge's comparison graph, from one graph search.

    Node k·N + i is item i as judge k saw it, so the judges' graphs are the disjoint blocks of
    one graph: one ``connected_components`` call instead of one (and one pass over every
    cell) per judge, which cost 0.2 s at 300 items and 18 judges.
    """
    n, n_judges = data.n_items, data.n_judges
    base = data.judge.astype(np.int64) * n
    if n * n * n_judges <= 1 << 24:
        # the blocks of a block-diagonal adjacency, deduplicated densely block by block
        adj = np.zeros((n_judges, n, n), dtype=bool)
        adj[data.judge, data.item_i, data.item_j] = True
        graph = sp.block_diag([csr_array(a) for a in adj], format="csr")
    else:
        graph = _graph(base + data.item_i, base + data.item_j, n * n_judges)
    _, labels = connected_components(graph, directed=False)
    out = {}
    for k, label in enumerate(data.judges):
        # renumber judge k's block 0..c-1 (labels are global across the blocks)
        _, local = np.unique(labels[k * n:(k + 1) * n], return_inverse=True)
        out[label] = _component_labels(data.items, int(local.max()) + 1, local)
    return out


@dataclass(frozen=True)
class Identification:
    """What the comparison data identify.

    Attributes
    ----------
    components : list of tuple of str
        Connected components of the pooled comparison graph.
    judge_components : dict
        Components per judge (a judge that saw only part of the items has several); computed
        on first access (the MLE checks do not need it, and at 1,000 items and 18 judges it
        costs as much as the rest of the check).
    win_components : list of tuple of str
        Strongly connected components of the directed win graph (pooled over judges).
    never_lose, never_win : tuple of str
        Items with no loss / no win at all (ties count as half of each).
    data : Comparisons
        The checked data.
    """

    components: list[tuple[str, ...]]
    win_components: list[tuple[str, ...]]
    never_lose: tuple[str, ...]
    never_win: tuple[str, ...]
    data: Comparisons = field(repr=False, compare=False)

    @cached_property
    def judge_components(self) -> dict[str, list[tuple[str, ...]]]:
        """Components per judge (see the class docstring)."""
        return _judge_components(self.data)

    @property
    def connected(self) -> bool:
        """The pooled comparison graph is connected."""
        return len(self.components) == 1

    @property
    def mle_exists(self) -> bool:
        """The BTL MLE exists (strongly connected win graph, Zermelo/Ford)."""
        return len(self.win_components) == 1

    def disconnected_message(self) -> str:
        """Describe the components, for errors and warnings."""
        shown = "; ".join("{" + ", ".join(c) + "}" for c in self.components[:6])
        return f"the comparison graph has {len(self.components)} components: {shown}"

    def no_mle_message(self) -> str:
        """Describe why the MLE does not exist, naming the items."""
        parts = []
        if self.never_lose:
            parts.append(f"item(s) {list(self.never_lose)} never lose")
        if self.never_win:
            parts.append(f"item(s) {list(self.never_win)} never win")
        if not parts:
            shown = "; ".join("{" + ", ".join(c) + "}" for c in self.win_components[:6])
            parts.append(
                f"the win graph splits into {len(self.win_components)} groups, one of which never "
                f"loses to another: {shown}"
            )
        return (
            "the maximum-likelihood scores do not exist (they run to infinity): "
            + " and ".join(parts)
        )


def check(data: Comparisons) -> Identification:
    """Run every graph check on ``data`` (pooled; per judge for connectivity, when
    ``judge_components`` is first read).

    Parameters
    ----------
    data : Comparisons

    Returns
    -------
    Identification
    """
    n = data.n_items
    losses = data.count - data.wins
    if n * n <= 1 << 24:
        # per ordered pair (i < j) tables of i's wins, its losses and the verdicts, one pass
        # over the cells each: the win graph and the item totals come from them (masks and
        # concatenations of a million cells cost more than the rest of the check)
        pair = data.item_i.astype(np.int64) * n + data.item_j
        won, lost_to, met = (np.bincount(pair, v, n * n).reshape(n, n)
                             for v in (data.wins, losses, data.count))
        win_graph = csr_array((won > 0) | (lost_to > 0).T)  # i -> j: i beat j (a tie counts)
        wins_per_item = won.sum(axis=1) + lost_to.sum(axis=0)
        games = met.sum(axis=1) + met.sum(axis=0)
    else:
        beat_i = data.wins > 0  # i beat j at least once (a tie counts)
        beat_j = losses > 0
        src = np.concatenate([data.item_i[beat_i], data.item_j[beat_j]])
        dst = np.concatenate([data.item_j[beat_i], data.item_i[beat_j]])
        win_graph = _graph(src, dst, n)
        wins_per_item = (np.bincount(data.item_i, data.wins, n)
                         + np.bincount(data.item_j, losses, n))
        games = np.bincount(data.item_i, data.count, n) + np.bincount(data.item_j, data.count, n)
    n_strong, strong = connected_components(win_graph, directed=True, connection="strong")
    if np.all(data.count > 0):
        # every cell with verdicts has a win one way or the other, so the comparison graph's
        # components are the win graph's weak ones (no second graph)
        pooled = _component_labels(data.items, *connected_components(
            win_graph, directed=True, connection="weak"))
    else:
        pooled = components(data)
    lost = games - wins_per_item
    return Identification(
        components=pooled,
        win_components=_component_labels(data.items, n_strong, strong),
        never_lose=_labels(data.items, np.flatnonzero((lost <= 0) & (games > 0))),
        never_win=_labels(data.items, np.flatnonzero((wins_per_item <= 0) & (games > 0))),
        data=data,
    )


def require_mle(data: Comparisons) -> Identification:
    """Raise :class:`IdentificationError` unless the pooled BTL MLE exists.

    Raises
    ------
    IdentificationError
        The graph is disconnected (components named) or an item never loses / never wins.
    """
    ident = check(data)
    if not ident.connected:
        raise IdentificationError(
            ident.disconnected_message()
            + ". Scores in different components are not comparable by maximum likelihood: "
            "add comparisons that join them, fit each component separately, or use the "
            "Bayesian fit (the prior then sets the between-component differences)."
        )
    if not ident.mle_exists:
        raise IdentificationError(
            ident.no_mle_message()
            + ". Add comparisons involving these items, or use the MAP/NUTS fit, whose prior "
            "keeps the scores finite."
        )
    return ident


def warn_if_unidentified(data: Comparisons) -> Identification:
    """Warn (for Bayesian fits) where the prior, not the data, sets part of the answer."""
    ident = check(data)
    if not ident.connected:
        warnings.warn(
            ident.disconnected_message()
            + "; differences between components come from the prior only.",
            IdentificationWarning,
            stacklevel=3,
        )
    elif not ident.mle_exists:
        warnings.warn(
            ident.no_mle_message()
            + "; the posterior of those scores is bounded only by the prior.",
            IdentificationWarning,
            stacklevel=3,
        )
    return ident


def discrimination_not_identified(data: Comparisons) -> dict[str, str]:
    r"""Judges whose discrimination :math:`\gamma_k` their own verdicts cannot bound.

    For the judge-discrimination BTL (Xu et al. 2026) judge k's discrimination enters only through
    its own cells, so three cases are decided by the data alone, whatever the scores:

    * **no verdicts**: :math:`\gamma_k` does not enter the likelihood;
    * **only ties**: each tie contributes :math:`\tfrac12\log\sigma(\eta)(1-\sigma(\eta))`,
      largest at :math:`\gamma_k = 0`;
    * **one item pair, all verdicts one way** (a single verdict included): the likelihood is
      monotone in :math:`\gamma_k`, so it runs to 0 or to infinity.

    The MLE of :math:`\gamma_k` then does not exist, and a Bayesian fit takes it from the prior.

    Parameters
    ----------
    data : Comparisons

    Returns
    -------
    dict
        Judge label -> the reason, in words (empty when every judge is bounded by its data).
    """
    c = data.collapse(order=True)
    k = c.judge
    n_judges = data.n_judges
    # the pooled cells come in key order, judge first: each judge's cells are one segment
    bounds = np.searchsorted(k, np.arange(n_judges + 1))
    filled = bounds[1:] > bounds[:-1]

    def per_judge(values: np.ndarray) -> np.ndarray:
        # segment sums: a bincount into K bins adds into one slot after another, 20x slower
        out = np.zeros(n_judges)
        if filled.any():
            out[filled] = np.add.reduceat(values, bounds[:-1][filled])
        return out

    count = per_judge(c.count)
    # Σ (y - 1/2)², Σ y², Σ (1 - y)² per judge from the cells' sums of y and y²
    off_tie = per_judge(c.wins_sq - c.wins + c.count / 4)
    sum_sq = per_judge(c.wins_sq)
    off_win = per_judge(c.count - 2 * c.wins + c.wins_sq)
    # a judge's cells lie on one item pair iff every code equals the judge's first (vectorised:
    # a set of pairs per judge costs seconds at Arena scale, ufunc.at a tenth of a second)
    code = c.item_i.astype(np.int64) * data.n_items + c.item_j
    first = np.full(n_judges, -1, dtype=np.int64)
    first[filled] = code[bounds[:-1][filled]]
    one_pair = per_judge((code != np.repeat(first, np.diff(bounds))).astype(np.float64)) == 0
    tol = 1e-9 * np.maximum(count, 1.0)
    out: dict[str, str] = {}
    for m, label in enumerate(data.judges):
        if count[m] <= 0:
            out[label] = "has no verdicts, so its discrimination does not enter the likelihood"
        elif off_tie[m] <= tol[m]:
            out[label] = (f"gave only ties ({count[m]:g}), which the model explains best with "
                          "discrimination 0 whatever the scores")
        elif one_pair[m] and min(sum_sq[m], off_win[m]) <= tol[m]:
            i, j = divmod(int(first[m]), data.n_items)
            winner, loser = ((data.items[i], data.items[j]) if off_win[m] <= tol[m]
                             else (data.items[j], data.items[i]))
            what = ("a single verdict" if count[m] == 1
                    else f"{count[m]:g} verdicts, all on one pair and all the same way")
            out[label] = (f"gave {what} ({winner!r} over {loser!r}), so the likelihood is "
                          "monotone in its discrimination and runs to 0 or to infinity")
    return out


def require_tie_parameters(data: Comparisons) -> None:
    r"""Raise unless every judge's Davidson (1970) tie parameter :math:`\nu_k` has a finite,
    positive MLE.

    In Davidson's trinomial model judge k's ties enter only through :math:`\nu_k`, whose score
    is :math:`t_k - \sum_c n_c p_{t,c}`: with no tie it is negative at every :math:`\nu_k`, so
    the MLE is the boundary 0 (a flat-prior MAP runs to :math:`\log\nu_k = -\infty`); with
    only ties it is positive, and :math:`\nu_k \to \infty`. A proper prior would alone set
    such a :math:`\nu_k`, so the PyMC models refuse too. Used by every model and twin with
    ``ties="davidson"``.

    Raises
    ------
    DataError
        Soft outcomes or fractional counts (:meth:`~bayescal.data.Comparisons.outcome_counts`).
    IdentificationError
        The data hold no tie, or some judge never tied, or some judge only tied (named).
    """
    wins, ties, losses = data.outcome_counts()
    tied = np.bincount(data.judge, ties, data.n_judges)
    if not tied.any():
        raise IdentificationError(
            "ties='davidson' needs tied verdicts: these data hold none, so the tie parameter ν "
            "is not identified (its MLE is 0). Use ties='half', which is the Bernoulli "
            "likelihood exactly on tie-free data.")
    decided = np.bincount(data.judge, wins + losses, data.n_judges)
    never = [str(data.judges[k]) for k in np.flatnonzero(tied == 0)]
    only = [str(data.judges[k]) for k in np.flatnonzero((tied > 0) & (decided == 0))]
    problems = []
    if never:
        problems.append(f"judge(s) {never} gave no tie (their ν has its MLE at 0)")
    if only:
        problems.append(f"judge(s) {only} gave only ties (their ν has its MLE at infinity)")
    if problems:
        raise IdentificationError(
            "ties='davidson': " + "; ".join(problems) + ", so their tie parameter ν is not "
            "identified. Fit the other judges (Comparisons.subset), or use ties='half'.")


# ---------------------------------------------------------------------- order effects (DIAL)
@dataclass(frozen=True)
class OrderIdentification:
    """Whether one judge's scores and order effect are identified (DIAL Prop. 1, Cor. B.1).

    Attributes
    ----------
    judge : str
    connected : bool
        The judge's comparison graph reaches every item (otherwise ``s_k`` is not identified).
    nonzero_cycle : bool
        Some cycle of the judge's comparison multigraph has a nonzero signed order sum, i.e.
        :math:`z_k \\notin \\mathrm{col}(D_k)` (then ``b_k`` is identified given connectivity).
    witness : tuple of (str, str, int)
        A cycle with nonzero signed sum, as steps ``(from_item, to_item, order)`` where ``order``
        is +1 when ``from_item`` was displayed first in that cell and -1 when second; the signed
        sum is ``sum(order)``. Empty when there is none.
    components : list of tuple of str
        Connected components of the judge's comparison graph, largest first.
    """

    judge: str
    connected: bool
    nonzero_cycle: bool
    witness: tuple[tuple[str, str, int], ...]
    components: list[tuple[str, ...]]

    @property
    def identified(self) -> bool:
        """``rank([D_k, z_k]) = N``: scores and order effect of this judge are identified."""
        return self.connected and self.nonzero_cycle

    @property
    def signed_sum(self) -> int:
        """Signed order sum of the witness cycle (0 when there is no witness)."""
        return int(sum(step[2] for step in self.witness))

    def reason(self) -> str:
        """Why this judge is (not) identified, in words, naming items and the witness cycle."""
        if not self.connected:
            shown = "; ".join("{" + ", ".join(c) + "}" for c in self.components[:6])
            return (f"judge {self.judge!r}: the comparison graph has {len(self.components)} "
                    f"components ({shown}), so its scores in different components are not "
                    "comparable")
        if not self.nonzero_cycle:
            return (f"judge {self.judge!r}: every cycle of its comparisons has signed order sum "
                    "zero (no pair shown in both orders and no cycle with unbalanced display "
                    "order), so the order effect is confounded with score differences "
                    "(z_k lies in col(D_k))")
        steps = " -> ".join(f"{a}({'first' if o > 0 else 'second'})" for a, _, o in self.witness)
        return (f"judge {self.judge!r}: identified; witness cycle {steps} -> "
                f"{self.witness[0][0]} has signed order sum {self.signed_sum}")


def _order_criterion(
    n_items: int, i: np.ndarray, j: np.ndarray, a: np.ndarray
) -> tuple[int, np.ndarray | None, list[tuple[int, int, int]]]:
    """Spanning-forest potentials for one judge's cells, O(N + m).

    Returns the number of components, the component label of every item and a witness cycle
    as ``(from, to, order of from)`` steps (empty when every signed cycle sum vanishes).
    """
    m = len(i)
    # adjacency in CSR form: every cell is an edge i -> j with potential drop a
    ends = np.concatenate([i, j])
    order = np.argsort(ends, kind="stable")
    start = np.searchsorted(ends[order], np.arange(n_items + 1))
    edge_of = order % m
    label = np.full(n_items, -1)
    x = np.zeros(n_items)
    parent_edge = np.full(n_items, -1)
    depth = np.zeros(n_items, dtype=np.int64)
    in_tree = np.zeros(m, bool)
    n_comp = 0
    for root in range(n_items):
        if label[root] >= 0:
            continue
        label[root] = n_comp
        queue = [root]
        while queue:
            u = queue.pop()
            for t in edge_of[start[u]:start[u + 1]]:
                v = j[t] if i[t] == u else i[t]
                if label[v] >= 0:
                    continue
                # x_i - x_j = a_t along tree edges
                x[v] = x[u] - a[t] if i[t] == u else x[u] + a[t]
                label[v], parent_edge[v], depth[v] = n_comp, t, depth[u] + 1
                in_tree[t] = True
                queue.append(v)
        n_comp += 1
    bad = np.flatnonzero(~in_tree & (x[i] - x[j] != a))
    if len(bad) == 0:
        return n_comp, label, []
    t = int(bad[0])
    # the cycle: non-tree edge i_t -> j_t, then the tree path j_t -> i_t
    up_i, up_j = [], []  # tree edges climbed from i_t and from j_t towards their common ancestor
    u, v = int(i[t]), int(j[t])
    while u != v:
        if depth[u] >= depth[v]:
            up_i.append(int(parent_edge[u]))
            e = parent_edge[u]
            u = int(j[e] if i[e] == u else i[e])
        else:
            up_j.append(int(parent_edge[v]))
            e = parent_edge[v]
            v = int(j[e] if i[e] == v else i[e])
    steps = [(int(i[t]), int(j[t]), int(a[t]))]
    node = int(j[t])
    for e in up_j + up_i[::-1]:
        nxt = int(j[e] if i[e] == node else i[e])
        steps.append((node, nxt, int(a[e]) if i[e] == node else -int(a[e])))
        node = nxt
    return n_comp, label, steps


def _judge_cells(data: Comparisons, judge: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if judge not in data.judges:
        raise DataError(f"unknown judge {judge!r}; judges are {data.judges}")
    mask = data.judge == data.judges.index(judge)
    return data.item_i[mask], data.item_j[mask], data.order[mask]


def order_effect(data: Comparisons) -> dict[str, OrderIdentification]:
    """DIAL's identification criterion per judge in O(N + m_k) (Prop. 1, Cor. B.1).

    A breadth-first spanning forest assigns potentials :math:`x` with :math:`x_i - x_j = a_t`
    along tree edges; :math:`z_k \\in \\mathrm{col}(D_k)` exactly when every non-tree edge
    satisfies the same equation, and the first edge that does not closes a cycle with nonzero
    signed order sum (a pair shown in both orders is a 2-cycle with sum 2).

    Parameters
    ----------
    data : Comparisons
        With display order recorded (cells with ``order == 0`` are an error).

    Returns
    -------
    dict of str to OrderIdentification
        One entry per judge, in the order of ``data.judges``.

    Raises
    ------
    DataError
        Some cells have no recorded display order.
    """
    require_order(data)
    out = {}
    for judge in data.judges:
        i, j, a = _judge_cells(data, judge)
        n_comp, label, steps = _order_criterion(data.n_items, i, j, a)
        witness = tuple((data.items[u], data.items[v], o) for u, v, o in steps)
        out[judge] = OrderIdentification(
            judge=judge,
            connected=n_comp == 1,
            nonzero_cycle=bool(steps),
            witness=witness,
            components=_component_labels(data.items, n_comp, label),
        )
    return out


def order_effect_rank(data: Comparisons) -> dict[str, bool]:
    """The slow cross-check of :func:`order_effect`: ``rank([D_k, z_k]) == N`` per judge (Prop. 1).

    Dense SVD of the judge's (cells x (N+1)) design; use for tests and small data.
    """
    require_order(data)
    out = {}
    for judge in data.judges:
        i, j, a = _judge_cells(data, judge)
        out[judge] = _rank_design(data.n_items, i, j, a) == data.n_items
    return out


def _rank_design(n_items: int, i: np.ndarray, j: np.ndarray, a: np.ndarray) -> int:
    design = np.zeros((len(i), n_items + 1))
    rows = np.arange(len(i))
    design[rows, i] = 1.0
    design[rows, j] = -1.0
    design[rows, n_items] = a
    return int(np.linalg.matrix_rank(design)) if len(i) else 0


def require_order(data: Comparisons) -> None:
    """Raise :class:`DataError` naming the cells whose display order was not recorded."""
    missing = data.order == 0
    if not missing.any():
        return
    idx = np.flatnonzero(missing)
    shown = ", ".join(
        f"({data.judges[data.judge[c]]!r}, {data.items[data.item_i[c]]!r}, "
        f"{data.items[data.item_j[c]]!r})" for c in idx[:5]
    )
    more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
    raise DataError(
        f"display order is not recorded for {len(idx)} of {data.n_cells} cells (judge, item, "
        f"item): {shown}{more}. The order-effect model needs it: build Comparisons from a frame "
        "with an 'order' column (+1 when item_a was displayed first, -1 when second), or "
        "use a model without order effects."
    )


def order_separation(data: Comparisons) -> dict[str, str]:
    """Judges whose order-effect BTL MLE is infinite (separation; Albert & Anderson 1984).

    For judge k the MLE of :math:`(s_k, b_k)` is finite iff no direction :math:`d \\neq 0` has
    :math:`x_c^\\top d \\ge 0` on every cell with a win of item i and :math:`\\le 0` on every cell
    with a win of item j (ties count both ways), with strict inequality somewhere, where
    :math:`x_c = (e_i - e_j, a_c)`. This is decided by a small linear program per judge. It
    generalises Zermelo's strong-connectivity condition to the order covariate.

    Returns
    -------
    dict of str to str
        For each judge without a finite MLE, a description of the direction in which the
        likelihood keeps increasing. Judges with a finite MLE are absent.
    """
    from scipy.optimize import linprog

    require_order(data)
    out = {}
    n = data.n_items
    for k, judge in enumerate(data.judges):
        mask = data.judge == k
        i, j, a = data.item_i[mask], data.item_j[mask], data.order[mask]
        won, lost = data.wins[mask] > 0, (data.count[mask] - data.wins[mask]) > 0
        mixed = won & lost
        n_comp, _, steps = _order_criterion(n, i[mixed], j[mixed], a[mixed])
        if n_comp == 1 and steps:
            # cells with both outcomes force x_c d = 0; if they alone identify (s_k, b_k), only
            # d = 0 is left and no linear program is needed
            continue
        x = np.zeros((int(mask.sum()), n + 1))
        rows = np.arange(len(i))
        x[rows, i], x[rows, j], x[rows, n] = 1.0, -1.0, a
        # constraints sign_c x_c d >= 0, written as -sign_c x_c d <= 0; both when a cell has both
        lhs = np.vstack([-x[won], x[lost]])
        # maximise the total signed slope sum_c sign_c x_c d within the box |d| <= 1, sum s = 0
        obj = -(x[won].sum(axis=0) - x[lost].sum(axis=0))
        eq = np.concatenate([np.ones(n), [0.0]])[None, :]
        res = linprog(obj, A_ub=lhs, b_ub=np.zeros(len(lhs)), A_eq=eq, b_eq=[0.0],
                      bounds=[(-1, 1)] * (n + 1), method="highs")
        if res.status != 0 or -res.fun <= 1e-9:
            continue
        d = res.x
        up = [data.items[c] for c in np.flatnonzero(d[:n] > 1e-9)]
        down = [data.items[c] for c in np.flatnonzero(d[:n] < -1e-9)]
        parts = []
        if up or down:
            parts.append(f"the score gap between {up} (up) and {down} (down) grows without bound")
        if abs(d[n]) > 1e-9:
            parts.append("the order effect runs to " + ("+inf (the first-shown item always wins "
                         "where it matters)" if d[n] > 0 else "-inf (the second-shown item "
                         "always wins where it matters)"))
        out[judge] = " and ".join(parts)
    return out


def require_order_effect_mle(data: Comparisons) -> dict[str, OrderIdentification]:
    """Raise unless every judge's order-effect BTL MLE is identified and finite.

    Raises
    ------
    DataError
        Display order not recorded for some cells (named).
    IdentificationError
        A judge's graph is disconnected, its order effect is confounded with the scores (no
        cycle with nonzero signed order sum), or its MLE is infinite (separation); the message
        names the judge, the reason and what to do.
    """
    ident = order_effect(data)
    bad = [v for v in ident.values() if not v.identified]
    if bad:
        raise IdentificationError(
            "the order-effect BTL is not identified per judge (DIAL Prop. 1: rank([D_k, z_k]) "
            "must equal N): " + "; ".join(v.reason() for v in bad)
            + ". Show some pairs in both display orders (or add comparisons that close a cycle "
            "with unbalanced order, and that join the components), drop the judge "
            "(Comparisons.subset), or use the Bayesian fit, where the prior then sets what the "
            "data leave free."
        )
    sep = order_separation(data)
    if sep:
        raise IdentificationError(
            "the order-effect BTL MLE does not exist (it runs to infinity) for "
            + "; ".join(f"judge {k!r}: {why}" for k, why in sep.items())
            + ". Add comparisons for these judges or use the MAP/NUTS fit, whose prior keeps "
            "the estimates finite."
        )
    return ident


def warn_if_order_unidentified(data: Comparisons) -> dict[str, OrderIdentification]:
    """Warn (Bayesian fits) for each judge whose scores or order effect are prior-driven."""
    ident = order_effect(data)
    for v in ident.values():
        if not v.identified:
            warnings.warn(v.reason() + "; the posterior of what the data leave free comes from "
                          "the prior only.", IdentificationWarning, stacklevel=3)
    for k, why in order_separation(data).items():
        warnings.warn(f"judge {k!r}: the maximum-likelihood estimate is infinite ({why}); "
                      "the posterior there is bounded only by the prior.",
                      IdentificationWarning, stacklevel=3)
    return ident


def _rank(design: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(design)) if design.size else 0


def feature_problems(data: Comparisons, *, order: bool = True) -> dict[str, str]:
    r"""Comparison features whose judge-specific effects :math:`\beta_{kf}` are not identified.

    One check for every pairwise model with feature effects (the order-effect BTL, the low-rank
    judges, the judge-discrimination BTL): their logits add :math:`\beta_k^\top x` to a
    judge's item contrasts, and (with ``order``) its order effect. Checking against each
    judge's full item contrasts is conservative for the judge-discrimination and low-rank
    models, whose contrasts are shared or low-rank: a feature the judge's own abilities would
    absorb is refused even where the shared structure could separate it, since its effect
    would then rest on that structure alone, not on comparisons of the same items.

    For each judge k, with design rows :math:`(e_i - e_j, a, x)` per cell (:math:`a` dropped
    when ``order`` is False: a model without display order), feature f is refused
    when its differences (a) are zero for every verdict of the judge, (b) take one value within
    every (judge, pair): its effect then rests only on the BTL's transitivity across pairs, not
    on any comparison of the same two items, (c) are proportional to the display order a,
    (d) are differences :math:`g_i - g_j` of item values (absorbed by the abilities), or
    (e) lie in the span of the item contrasts, the order and the other features. (b) contains
    (d) and is checked first; the others are rank tests (SVD) of the judge's cells. (c) applies
    only with ``order``.

    Returns
    -------
    dict of str to str
        ``"judge 'k', feature 'f'"`` -> the reason, for every failing pair; empty when all
        effects are identified. Data without features give an empty dict.
    """
    out: dict[str, str] = {}
    if not data.feature_names:
        return out
    n = data.n_items
    for k, judge in enumerate(data.judges):
        mask = data.judge == k
        i, j, a = data.item_i[mask], data.item_j[mask], data.order[mask].astype(np.float64)
        x = data.features[mask]
        contrasts = np.zeros((len(i), n))
        rows = np.arange(len(i))
        contrasts[rows, i], contrasts[rows, j] = 1.0, -1.0
        base = np.column_stack([contrasts, a]) if order else contrasts
        pair = i * n + j
        _, code = np.unique(pair, return_inverse=True)
        for f, name in enumerate(data.feature_names):
            col = x[:, f]
            where = f"judge {judge!r}, feature {name!r}"
            scale = max(float(np.max(np.abs(col))), 1.0) if len(col) else 1.0
            if not np.any(np.abs(col) > 1e-12 * scale):
                out[where] = "its difference x_a - x_b is zero for every verdict"
                continue
            low = np.full(code.max() + 1, np.inf)
            high = np.full(code.max() + 1, -np.inf)
            np.minimum.at(low, code, col)
            np.maximum.at(high, code, col)
            if np.all(high - low <= 1e-9 * scale):
                out[where] = ("it takes one value within every pair (e.g. each item's answer "
                              "has one length): its effect cannot be told from the items' "
                              "abilities; it needs pairs compared with different feature values")
                continue
            # a judge without display orders (a human, or orders pooled) has no b_k to confound
            if order and np.any(a) and _rank(np.column_stack([a, col])) < 2:
                out[where] = "it is proportional to the display order a (confounded with b_k)"
                continue
            others = np.delete(x, f, axis=1)
            rest = np.column_stack([base, others])
            if _rank(np.column_stack([rest, col])) == _rank(rest):
                design = ("the item contrasts and the display order" if order
                          else "the item contrasts")
                what = (design if not others.shape[1]
                        or _rank(np.column_stack([base, col])) == _rank(base)
                        else f"{design.replace(' and ', ', ')} and the other features")
                out[where] = f"it is a linear combination of {what}"
    return out


def refuse_features(data: Comparisons, model: str) -> None:
    """Refuse comparison features for a model that has no feature effects.

    The cells of such data still sum exactly, so the fit would run, as a model without the
    features: an argument the caller named, silently ignored.
    """
    if getattr(data, "feature_names", ()):
        raise DataError(
            f"the {model} has no feature effects, but the comparisons carry features "
            f"{list(data.feature_names)}: fit order_effect_btl, judge_discrimination_btl or "
            "low_rank_judges for judge-specific feature effects, or build the Comparisons "
            "without features=", argument="features")


def require_features_identified(data: Comparisons, *, order: bool = True) -> None:
    """Raise :class:`IdentificationError` naming each judge and feature whose effect is not
    identified (:func:`feature_problems`, ``order`` as there); nothing to do without
    features."""
    bad = feature_problems(data, order=order)
    if bad:
        raise IdentificationError(
            "the feature effects are not identified: "
            + "; ".join(f"{where}: {why}" for where, why in bad.items())
            + ". Drop the feature, transform it, or fit the judges it fails for without it.")


# ---------------------------------------------------------------------------- DIAL Condition 4
def calibration(
    items: tuple[str, ...],
    item_i: np.ndarray,
    item_j: np.ndarray,
    basis: np.ndarray,
    *,
    space: str = "consensus",
) -> None:
    r"""DIAL's Condition 4: the human comparisons see the calibration space, rank(D_h M) = d.

    Parameters
    ----------
    items : tuple of str
        Item labels (rows of ``basis``).
    item_i, item_j : array of int
        Items of each human comparison cell.
    basis : array (N, d)
        M = μ (d = 1) or W = [μ, V] (d = r + 1), from the LLM-only fit.
    space : str
        Name of the basis, for the message.

    Raises
    ------
    IdentificationError
        rank(D_h M) < d: some direction of the calibration coefficient c is invisible to the
        human comparisons (for d = 1: every compared pair has equal consensus scores).
    """
    M = np.asarray(basis, dtype=np.float64)
    if M.ndim == 1:
        M = M[:, None]
    d = M.shape[1]
    X = M[np.asarray(item_i)] - M[np.asarray(item_j)]
    sv = np.linalg.svd(X, compute_uv=False) if X.size else np.zeros(0)
    tol = 1e-8 * max(np.abs(M).max(), 1e-300) * max(X.shape[0], 1)
    rank = int(np.sum(sv > tol))
    if rank < d:
        seen = sorted({(items[a], items[b]) for a, b in zip(item_i, item_j, strict=True)})
        raise IdentificationError(
            f"Condition 4 fails: the human comparisons (pairs {seen[:5]}"
            f"{' ...' if len(seen) > 5 else ''}) span rank {rank} of the "
            f"d = {d}-dimensional calibration space (space={space!r}); rank(D_h M) = d is needed "
            "for s_h = M c to be identified. Add human comparisons of pairs the LLM scores "
            "separate" + (", or use space='consensus'" if d > 1 else "") + "."
        )
