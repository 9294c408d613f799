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
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from bayescal.data import Comparisons, DataError

__all__ = [
    "Identification",
    "IdentificationError",
    "IdentificationWarning",
    "check",
    "components",
    "discrimination_not_identified",
    "require_mle",
    "warn_if_unidentified",
]


class IdentificationError(DataError):
    """The data cannot identify the requested estimate (e.g. no finite MLE)."""


class IdentificationWarning(UserWarning):
    """A Bayesian fit proceeds, but part of the answer comes from the prior."""


def _labels(items: tuple[str, ...], codes: np.ndarray) -> tuple[str, ...]:
    return tuple(items[c] for c in codes)


def _component_labels(items: tuple[str, ...], n: int, labels: np.ndarray) -> list[tuple[str, ...]]:
    groups = [tuple(np.flatnonzero(labels == c)) for c in range(n)]
    named = [_labels(items, np.asarray(g)) for g in groups]
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
    mask = np.ones(data.n_cells, bool)
    if judge is not None:
        if judge not in data.judges:
            raise DataError(f"unknown judge {judge!r}; judges are {data.judges}")
        mask = data.judge == data.judges.index(judge)
    n = data.n_items
    graph = coo_array(
        (np.ones(int(mask.sum())), (data.item_i[mask], data.item_j[mask])), shape=(n, n)
    )
    n_comp, labels = connected_components(graph, directed=False)
    return _component_labels(data.items, n_comp, labels)


@dataclass(frozen=True)
class Identification:
    """What the comparison data identify.

    Attributes
    ----------
    components : list of tuple of str
        Connected components of the pooled comparison graph.
    judge_components : dict
        Components per judge (a judge that saw only part of the items has several).
    win_components : list of tuple of str
        Strongly connected components of the directed win graph (pooled over judges).
    never_lose, never_win : tuple of str
        Items with no loss / no win at all (ties count as half of each).
    """

    components: list[tuple[str, ...]]
    judge_components: dict[str, list[tuple[str, ...]]]
    win_components: list[tuple[str, ...]]
    never_lose: tuple[str, ...]
    never_win: tuple[str, ...]

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
    """Run every graph check on ``data`` (pooled, and per judge for connectivity).

    Parameters
    ----------
    data : Comparisons

    Returns
    -------
    Identification
    """
    n = data.n_items
    losses = data.count - data.wins
    beat_i = data.wins > 0  # i beat j at least once (a tie counts)
    beat_j = losses > 0
    src = np.concatenate([data.item_i[beat_i], data.item_j[beat_j]])
    dst = np.concatenate([data.item_j[beat_i], data.item_i[beat_j]])
    win_graph = coo_array((np.ones(len(src)), (src, dst)), shape=(n, n))
    n_strong, strong = connected_components(win_graph, directed=True, connection="strong")
    wins_per_item = np.bincount(data.item_i, data.wins, n) + np.bincount(data.item_j, losses, n)
    games = np.bincount(data.item_i, data.count, n) + np.bincount(data.item_j, data.count, n)
    lost = games - wins_per_item
    return Identification(
        components=components(data),
        judge_components={k: components(data, k) for k in data.judges},
        win_components=_component_labels(data.items, n_strong, strong),
        never_lose=_labels(data.items, np.flatnonzero((lost <= 0) & (games > 0))),
        never_win=_labels(data.items, np.flatnonzero((wins_per_item <= 0) & (games > 0))),
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

    For the judge-discrimination BTL (seed 002) judge k's discrimination enters only through
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
    count = np.bincount(k, c.count, n_judges)
    # Σ (y - 1/2)², Σ y², Σ (1 - y)² per judge from the cells' sums of y and y²
    off_tie = np.bincount(k, c.wins_sq - c.wins + c.count / 4, n_judges)
    sum_sq = np.bincount(k, c.wins_sq, n_judges)
    off_win = np.bincount(k, c.count - 2 * c.wins + c.wins_sq, n_judges)
    pairs = [set(zip(c.item_i[k == m].tolist(), c.item_j[k == m].tolist(), strict=True))
             for m in range(n_judges)]
    tol = 1e-9 * np.maximum(count, 1.0)
    out: dict[str, str] = {}
    for m, label in enumerate(data.judges):
        if count[m] <= 0:
            out[label] = "has no verdicts, so its discrimination does not enter the likelihood"
        elif off_tie[m] <= tol[m]:
            out[label] = (f"gave only ties ({count[m]:g}), which the model explains best with "
                          "discrimination 0 whatever the scores")
        elif len(pairs[m]) == 1 and min(sum_sq[m], off_win[m]) <= tol[m]:
            (i, j), = pairs[m]
            winner, loser = ((data.items[i], data.items[j]) if off_win[m] <= tol[m]
                             else (data.items[j], data.items[i]))
            what = ("a single verdict" if count[m] == 1
                    else f"{count[m]:g} verdicts, all on one pair and all the same way")
            out[label] = (f"gave {what} ({winner!r} over {loser!r}), so the likelihood is "
                          "monotone in its discrimination and runs to 0 or to infinity")
    return out
