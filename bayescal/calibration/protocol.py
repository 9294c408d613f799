"""The held-out evaluation protocol of arXiv:2611.00447 (Sections 3 and 5).

Per group (dataset × attribute × judge) a fixed 30 % of the items is held out and never used for
fitting; the rest (the pool) is replayed as a stream of anchors in a random order. Each method
runs in its paper mode (card, convention 8): streaming and batch methods are evaluated on the
held-out items after every checkpoint (each 1 % of the pool, plus 100 and 200 anchors),
full-batch methods are refitted on the first 10/25/50/75/100 % of the pool (data-limited fits).
Three seeds randomise the split and the stream order ("3 runs", card, convention 7).
:func:`table2` reduces the result to the paper's Table 2 shape; :func:`wilcoxon_vs_raw` and
:func:`stopping` give the significance tests and the stopping rules' regret.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import wilcoxon

from bayescal.calibration import baselines as bl
from bayescal.calibration.base import Calibrator, from_dict
from bayescal.calibration.metrics import (
    exact_match,
    mae,
    round_scores,
    wasserstein,
    wasserstein_distribution,
)
from bayescal.calibration.sqm import SQM, PredictiveSQM
from bayescal.data import DataError, Ratings

__all__ = [
    "FRACTIONS", "METRICS", "STOPPING_RULES", "ProtocolResult", "default_methods", "early_stop",
    "run", "stopping", "table2", "wilcoxon_vs_raw",
]

FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0)
METRICS = ("mae", "w1", "exact")
_LOWER_IS_BETTER = {"mae": True, "w1": True, "exact": False}
Factory = Callable[[tuple[int, int]], Calibrator]


def default_methods(distributions: bool = True) -> dict[str, Factory]:
    """The methods of Table 3 that bayescal implements, by table name.

    ``sqm`` is the mid-distribution convention (bayescal's default) and ``sqm_upper`` the paper's
    literal formula; predictive-distribution methods are included when ``distributions``.
    """
    methods: dict[str, Factory] = {
        "raw": bl.Raw,
        "sqm": lambda s: SQM(s, position="mid"),
        "sqm_upper": lambda s: SQM(s, position="upper"),
        "median_scaling": bl.MedianScaling,
        "few_shot": bl.FewShot,
        "streaming_linear": bl.StreamingLinear,
        "bayesian_update": bl.BayesianUpdate,
        "sliced_wasserstein": bl.SlicedWassersteinOT,
        "dawid_skene": bl.DawidSkene,
        "conformal": bl.Conformal,
        "platt": bl.Platt,
        "isotonic": bl.Isotonic,
        "sd_kde": bl.SDKDE,
        "cross_entropy": bl.CrossEntropyMatching,
    }
    if distributions:
        methods["sqm_predictive"] = lambda s: PredictiveSQM(s, position="mid")
        methods["sqm_predictive_upper"] = lambda s: PredictiveSQM(s, position="upper")
        methods["contrastive_rollout"] = bl.ContrastiveRollout
    return methods


@dataclass(frozen=True)
class ProtocolResult:
    """Output of :func:`run`.

    Attributes
    ----------
    curve : DataFrame
        One row per (group, seed, method, checkpoint): ``n_anchors``, ``fraction`` of the pool,
        held-out ``mae``, ``w1``, ``exact`` (rounded outputs for exact match, card, convention
        1), the same MAE and W1 on rounded outputs (``mae_rounded``, ``w1_rounded``),
        ``w1_distribution`` (a distributional output, predictive SQM's, scored as the
        distribution it predicts, :func:`~bayescal.calibration.metrics.wasserstein_distribution`;
        equal to ``w1`` for point outputs: the W1 to compare across methods) and the
        prequential ``cumulative_mae`` (a biased contrast; streaming and batch modes only).
    stream_loss : DataFrame
        Per (group, seed, method) of streaming/batch mode, each anchor's prequential loss
        ``|g_before(j) − h|`` (input of the stopping rules).
    stops : DataFrame
        Stopping points of every rule (see :func:`stopping`).
    """

    curve: pd.DataFrame
    stream_loss: pd.DataFrame
    stops: pd.DataFrame


def _checkpoints(n_pool: int) -> NDArray[np.int64]:
    pct = np.ceil(n_pool * np.arange(1, 101) / 100).astype(np.int64)
    extra = [n for n in (100, 200) if n <= n_pool]
    return np.unique(np.concatenate([pct, extra]))


def _split(n: int, holdout: float, rng: np.random.Generator, name: str
           ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    n_test = round(holdout * n)
    if n_test < 1 or n - n_test < 2:
        raise DataError(
            f"group {name} has {n} human-rated items: too few to hold out {holdout:.0%} and keep "
            "at least 2 anchors; merge it with another group or drop it"
        )
    order = rng.permutation(n)
    return order[n_test:], np.sort(order[:n_test])


def run(
    ratings: Ratings,
    methods: Mapping[str, Factory] | None = None,
    *,
    group_keys: Sequence[str] | None = None,
    seeds: Sequence[int] = (0, 1, 2),
    holdout: float = 0.3,
    fractions: Sequence[float] = FRACTIONS,
    rules: Sequence[str] | None = None,
) -> ProtocolResult:
    """Run the held-out protocol (the paper's Section 3) on every group.

    Parameters
    ----------
    ratings : Ratings
        Items with judge scores (and distributions, for the predictive methods) and human scores.
        Items without a human score are not used (a warning says how many).
    methods : mapping name -> factory(scale), optional
        Default :func:`default_methods` (predictive methods when ``ratings.judge_dist`` exists).
    group_keys : sequence of str, optional
        Group keys (default: all of ``ratings.groups``).
    seeds : sequence of int
        One run per seed: the held-out split (by item) and the stream order.
    holdout : float
        Held-out share per group (0.3).
    fractions : sequence of float
        Pool shares of the data-limited full-batch fits.
    rules : sequence of str, optional
        Stopping rules to run on streaming methods (default all of :data:`STOPPING_RULES`).
    """
    if not 0 < holdout < 1:
        raise DataError(f"holdout must lie in (0, 1), got {holdout!r}")
    dist = ratings.judge_dist is not None
    methods = dict(default_methods(dist) if methods is None else methods)
    rules = list(STOPPING_RULES) if rules is None else list(rules)
    unknown = [r for r in rules if r not in STOPPING_RULES]
    if unknown:
        raise DataError(f"unknown stopping rule(s) {unknown}; known: {list(STOPPING_RULES)}")
    if not ratings.rated.all():
        warnings.warn(f"protocol: {int((~ratings.rated).sum())} of {ratings.n} items have no human "
                      "score and are not used", UserWarning, stacklevel=2)
        ratings = ratings.take(np.flatnonzero(ratings.rated))
    groups = ratings.by_group(group_keys)
    keys = list(ratings.groups.columns) if group_keys is None else list(group_keys)
    curves, losses, stops = [], [], []
    for gi, (key, part) in enumerate(groups.items()):
        label = dict(zip(keys, key, strict=True))
        for seed in seeds:
            rng = np.random.default_rng([int(seed), gi])
            pool, test = _split(part.n, holdout, rng, repr(label) if label else "(all)")
            for name, factory in methods.items():
                c, loss, st = _run_one(name, factory, part, pool, test, fractions, rules)
                tag = {**label, "seed": seed, "method": name}
                curves.append(c.assign(**tag))
                if loss is not None:
                    losses.append(pd.DataFrame({**tag, "n_anchors": np.arange(1, len(loss) + 1),
                                                "loss": loss}))
                stops.extend({**tag, **s} for s in st)
    front = [*keys, "seed", "method"]
    curve = pd.concat(curves, ignore_index=True)
    curve = curve[front + [c for c in curve.columns if c not in front]]
    loss_df = pd.concat(losses, ignore_index=True) if losses else pd.DataFrame()
    return ProtocolResult(curve, loss_df, pd.DataFrame(stops))


def _inputs(method: Calibrator, part: Ratings, idx: NDArray[np.int64]) -> NDArray[np.float64]:
    if method.accepts_distributions:
        if part.judge_dist is None:
            raise DataError(f"{method.name} needs judge predictive distributions (judge_dist)")
        return part.judge_dist[idx]
    return part.judge[idx]


def _metrics(model: Calibrator, x: NDArray[np.float64], human: NDArray[np.float64],
             scale: tuple[int, int], pred: NDArray[np.float64] | None = None
             ) -> dict[str, float]:
    pred = model.predict(x) if pred is None else pred
    rounded = round_scores(pred, scale)
    w1 = wasserstein(pred, human)
    # a distributional output is scored as the distribution it predicts; a point output's
    # distribution is that of its points
    dist = getattr(model, "predict_distribution", None)
    return {"mae": mae(pred, human), "w1": w1,
            "exact": exact_match(pred, human, scale), "mae_rounded": mae(rounded, human),
            "w1_rounded": wasserstein(rounded, human),
            "w1_distribution": w1 if dist is None else wasserstein_distribution(
                dist(x), human, scale)}


def _run_one(name: str, factory: Factory, part: Ratings, pool: NDArray[np.int64],
             test: NDArray[np.int64], fractions: Sequence[float], rules: Sequence[str]
             ) -> tuple[pd.DataFrame, NDArray[np.float64] | None, list[dict[str, Any]]]:
    model = factory(part.scale)
    x_pool, h_pool = _inputs(model, part, pool), part.human[pool]
    x_test, h_test = _inputs(model, part, test), part.human[test]
    rows = []
    if model.mode == "full-batch":
        for f in fractions:
            n = max(1, int(np.ceil(f * len(pool))))
            model.fit(x_pool[:n], h_pool[:n])
            rows.append({"mode": model.mode, "n_anchors": n, "fraction": n / len(pool),
                         **_metrics(model, x_test, h_test, part.scale)})
        return pd.DataFrame(rows), None, []
    checks = set(_checkpoints(len(pool)).tolist())
    monitors = {r: STOPPING_RULES[r]() for r in rules} if name != "raw" else {}
    stops: dict[str, int] = {}
    loss = np.empty(len(pool))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # identity before the first anchor
        for t in range(len(pool)):
            # inputs were validated once by Ratings: use the unchecked hooks in the hot loop
            before = model._predict(x_pool[t: t + 1])[0] if t else model._point(x_pool[t: t + 1])[0]
            loss[t] = abs(before - h_pool[t])
            model._update(x_pool[t], float(h_pool[t]))
            model.n_anchors += 1
            n = t + 1
            for r, mon in monitors.items():
                if r not in stops and mon.observe(n, loss[t], model, x_pool[t], h_pool[t]):
                    stops[r] = n
            if n in checks:
                rows.append({"mode": model.mode, "n_anchors": n, "fraction": n / len(pool),
                             **_metrics(model, x_test, h_test, part.scale,
                                        model._predict(x_test)),
                             "cumulative_mae": float(loss[:n].mean())})
    out = [{"rule": r, "stop": stops.get(r, len(pool)), "fired": r in stops} for r in monitors]
    return pd.DataFrame(rows), loss, out


# ------------------------------------------------------------------------------ stopping rules
class _Rule:
    """A stopping rule watching the prequential loss stream (held-out MAE would leak)."""

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        raise NotImplementedError


class _Fixed(_Rule):
    def __init__(self, at: int) -> None:
        self.at = at

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        return n >= self.at


class _EmaSlope(_Rule):
    """Stop when the EMA (α = 0.1) of the loss has not fallen by more than 0.001 per anchor
    over the last 20 anchors (after at least 30)."""

    def __init__(self, alpha: float = 0.1, lag: int = 20, tol: float = 1e-3,
                 min_n: int = 30) -> None:
        self.alpha, self.lag, self.tol, self.min_n = alpha, lag, tol, min_n
        self.ema: float | None = None
        self.history: deque[float] = deque(maxlen=lag + 1)

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        self.ema = loss if self.ema is None else self.alpha * loss + (1 - self.alpha) * self.ema
        self.history.append(self.ema)
        if n < self.min_n or len(self.history) <= self.lag:
            return False
        return (self.history[0] - self.history[-1]) / self.lag < self.tol


class _PageHinkley(_Rule):
    """Page–Hinkley test for a *decrease* of the mean loss (δ = 0.005, λ = 1); stop once 50
    anchors have passed without an alarm (the loss has stopped improving), after at least 30."""

    def __init__(self, delta: float = 0.005, lam: float = 1.0, quiet: int = 50,
                 min_n: int = 30) -> None:
        self.delta, self.lam, self.quiet, self.min_n = delta, lam, quiet, min_n
        self._restart(0)

    def _restart(self, n: int) -> None:
        self.count, self.mean, self.cum, self.max_cum, self.last_alarm = 0, 0.0, 0.0, 0.0, n

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        self.count += 1
        self.mean += (loss - self.mean) / self.count
        self.cum += loss - self.mean + self.delta
        self.max_cum = max(self.max_cum, self.cum)
        if self.max_cum - self.cum > self.lam:
            self._restart(n)
        return n >= self.min_n and n - self.last_alarm >= self.quiet


class _Adwin(_Rule):
    """ADWIN-style window (Hoeffding cut, δ = 0.002, losses bounded by the scale range R):
    the oldest part of the window is dropped while its mean differs from the rest by more than
    ``R·sqrt(ln(4/δ)/(2m))`` (m the harmonic size); stop when the window holds 50 anchors."""

    def __init__(self, delta: float = 0.002, size: int = 50) -> None:
        self.delta, self.size = delta, size
        self.window: list[float] = []

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        self.window.append(loss)
        span = float(model.scale[1] - model.scale[0])
        while len(self.window) > 1:
            w = np.asarray(self.window)
            csum = np.cumsum(w)[:-1]
            n0 = np.arange(1, len(w))
            n1 = len(w) - n0
            eps = span * np.sqrt(np.log(4 / self.delta) * (1 / n0 + 1 / n1) / 2)
            cut = np.flatnonzero(np.abs(csum / n0 - (w.sum() - csum) / n1) > eps)
            if not len(cut):
                break
            self.window = self.window[int(cut[0]) + 1:]
        return len(self.window) >= self.size


class _ChampionChallenger(_Rule):
    """Every 20 anchors the current model (challenger) is compared with the champion on those
    20 anchors' prequential losses; it is promoted when ≥ 2 % better, else training stops."""

    def __init__(self, every: int = 20, margin: float = 0.02) -> None:
        self.every, self.margin = every, margin
        self.champion: dict[str, Any] | None = None
        self.block: list[tuple[Any, float]] = []

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        self.block.append((judge, human))
        if n % self.every:
            return False
        x = np.asarray([b[0] for b in self.block])
        h = np.asarray([b[1] for b in self.block])
        self.block = []
        if self.champion is None:
            self.champion = model.to_dict()
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            champ = mae(from_dict(self.champion).predict(x), h)
        chall = mae(model.predict(x), h)
        if chall <= (1 - self.margin) * champ:
            self.champion = model.to_dict()
            return False
        return True


class _ReservoirValidation(_Rule):
    """A reservoir sample (size 30, Algorithm R, seeded) of past anchors; every 10 anchors the
    model's MAE on it is recorded; stop after 3 evaluations without a new best."""

    def __init__(self, size: int = 30, every: int = 10, patience: int = 3, seed: int = 0) -> None:
        self.size, self.every, self.patience = size, every, patience
        self.rng = np.random.default_rng(seed)
        self.sample: list[tuple[Any, float]] = []
        self.best, self.since = np.inf, 0

    def observe(self, n: int, loss: float, model: Calibrator, judge: Any, human: float) -> bool:
        if len(self.sample) < self.size:
            self.sample.append((judge, human))
        else:
            i = int(self.rng.integers(0, n))
            if i < self.size:
                self.sample[i] = (judge, human)
        if n % self.every:
            return False
        x = np.asarray([s[0] for s in self.sample])
        val = mae(model.predict(x), np.asarray([s[1] for s in self.sample]))
        if val < self.best - 1e-12:
            self.best, self.since = val, 0
        else:
            self.since += 1
        return self.since >= self.patience


STOPPING_RULES: dict[str, Callable[[], _Rule]] = {
    "stop_at_100": lambda: _Fixed(100),
    "stop_at_200": lambda: _Fixed(200),
    "ema_slope": _EmaSlope,
    "page_hinkley": _PageHinkley,
    "adwin": _Adwin,
    "champion_challenger": _ChampionChallenger,
    "reservoir_validation": _ReservoirValidation,
}


def stopping(result: ProtocolResult) -> pd.DataFrame:
    """Regret of each stopping rule on held-out MAE (the paper's Section 5.2.2).

    For each (group, seed, method, rule) the held-out MAE at the first checkpoint at or after
    the stopping point, ``L_stop``, against the best checkpoint ``L_best`` and the final one
    ``L_final``: ``regret_best = 100 (L_stop − L_best)/L_best``, ``regret_final`` likewise.
    Returns the median over groups and seeds per (method, rule), with the share of runs where
    the rule fired before the pool ran out and the median stopping point.
    """
    if result.stops.empty:
        return pd.DataFrame()
    keys = [c for c in result.stops.columns if c not in ("rule", "stop", "fired")]
    rows = []
    for tag, st in result.stops.groupby(keys, sort=False):
        cur = result.curve.merge(pd.DataFrame([dict(zip(keys, tag, strict=True))]), on=keys)
        cur = cur.sort_values("n_anchors")
        best, final = cur["mae"].min(), cur["mae"].iloc[-1]
        for _, s in st.iterrows():
            at = cur[cur["n_anchors"] >= s["stop"]]
            l_stop = at["mae"].iloc[0] if len(at) else final
            rows.append({"method": tag[keys.index("method")], "rule": s["rule"],
                         "stop": s["stop"], "fired": s["fired"],
                         "regret_best": 100 * (l_stop - best) / best if best > 0 else np.nan,
                         "regret_final": 100 * (l_stop - final) / final if final > 0 else np.nan})
    df = pd.DataFrame(rows)
    return df.groupby(["method", "rule"], sort=False).agg(
        median_stop=("stop", "median"), fired=("fired", "mean"),
        regret_best=("regret_best", "median"), regret_final=("regret_final", "median"))


# ------------------------------------------------------------------------------ tables
def _per_group(result: ProtocolResult, checkpoint: str, rounded: bool = False) -> pd.DataFrame:
    """One row per (group, seed, method) at the final or best checkpoint; seeds averaged."""
    cur = result.curve
    if rounded:  # MAE and W1 of the rounded outputs (unstated in the paper: report both)
        cur = cur.drop(columns=["mae", "w1"]).rename(
            columns={"mae_rounded": "mae", "w1_rounded": "w1"})
    keys = [c for c in cur.columns[: list(cur.columns).index("method")] if c != "seed"]
    by = [*keys, "seed", "method"]
    if checkpoint == "final":
        pick = cur.loc[cur.groupby(by, sort=False)["n_anchors"].idxmax()]
    elif checkpoint == "best":
        pick = cur.loc[cur.groupby(by, sort=False)["mae"].idxmin()]
    else:
        raise DataError(f"checkpoint must be 'final' or 'best', got {checkpoint!r}")
    mode = pick.groupby("method", sort=False)["mode"].first()
    vals = pick.groupby([*keys, "method"], sort=False)[list(METRICS)].mean().reset_index()
    vals.attrs["mode"] = mode.to_dict()
    vals.attrs["keys"] = keys
    return vals


def table2(result: ProtocolResult, *, checkpoint: str = "final", reference: str = "raw",
           rounded: bool = False) -> pd.DataFrame:
    """The paper's Table 2: median held-out MAE / W1 / exact match with Δ% over raw, rank, W/L.

    Per group the three runs are averaged; the medians are over groups. Δ% uses one pooled raw
    median per metric (card, convention 4). W/L counts the (group × metric) combinations in which
    a method is first / last (ties counted for all tied); the rank is a Copeland ordering over
    method pairs, A beating B when A is better in more combinations (card, convention 5).

    Parameters
    ----------
    result : ProtocolResult
    checkpoint : {"final", "best"}
        The state after the whole pool, or the best held-out checkpoint (selects on the held-out
        set, so it is optimistic; the paper's Fig. 6 uses it, card, convention 3).
    reference : str
        The method Δ% and the Wilcoxon tests compare with.
    rounded : bool
        MAE and W1 of the outputs rounded half up to the scale (exact match always uses them).
        The paper does not say which it reports (card, convention 1); continuous-output methods
        have a large W1 against integer human scores unless rounded.
    """
    vals = _per_group(result, checkpoint, rounded)
    keys = vals.attrs["keys"]
    methods = list(dict.fromkeys(vals["method"]))
    if reference not in methods:
        raise DataError(f"reference method {reference!r} was not run; methods are {methods}")
    med = vals.groupby("method", sort=False)[list(METRICS)].median().loc[methods]
    out = pd.DataFrame(index=pd.Index(methods, name="method"))
    out["mode"] = [vals.attrs["mode"][m] for m in methods]
    for m in METRICS:
        raw = med.loc[reference, m]
        sign = 1 if _LOWER_IS_BETTER[m] else -1
        out[m] = med[m]
        out[f"{m}_delta_pct"] = 100 * sign * (raw - med[m]) / raw if raw else np.nan
    wide = {m: vals.pivot_table(index=keys or None, columns="method", values=m)[methods]
            if keys else vals.set_index("method")[[m]].T[methods] for m in METRICS}
    better = {m: (wide[m] if _LOWER_IS_BETTER[m] else -wide[m]) for m in METRICS}
    wins = pd.Series(0, index=methods)
    losses = pd.Series(0, index=methods)
    for m in METRICS:
        b = better[m]
        wins += (b.eq(b.min(axis=1), axis=0)).sum().reindex(methods)
        losses += (b.eq(b.max(axis=1), axis=0)).sum().reindex(methods)
    copeland = pd.Series(0, index=methods, dtype=float)
    for a in methods:
        for c in methods:
            if a == c:
                continue
            a_better = sum(int((better[m][a] < better[m][c]).sum()) for m in METRICS)
            c_better = sum(int((better[m][c] < better[m][a]).sum()) for m in METRICS)
            copeland[a] += np.sign(a_better - c_better)
    out["rank"] = copeland.rank(ascending=False, method="min").astype(int)
    out["wins"] = wins.astype(int)
    out["losses"] = losses.astype(int)
    out.attrs["checkpoint"] = checkpoint
    out.attrs["rounded"] = rounded
    return out.sort_values("rank", kind="stable")


def wilcoxon_vs_raw(result: ProtocolResult, *, checkpoint: str = "final", reference: str = "raw",
                    alpha: float = 0.05) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests of each method against raw, Holm within method.

    Pairs are the groups (seed-averaged); the family is one method's three metrics. A method
    identical to raw on every group gets p = 1 (no evidence of a difference); with a single
    group there is no paired test and p is NaN. With fewer than 6 groups the exact two-sided
    test cannot reach p < 0.05 (``n_pairs`` says how many there were). Card, convention 6.
    """
    vals = _per_group(result, checkpoint)
    keys = vals.attrs["keys"]
    rows = []
    for method in dict.fromkeys(vals["method"]):
        if method == reference:
            continue
        ps = []
        for m in METRICS:
            wide = vals.pivot_table(index=keys, columns="method", values=m) if keys else \
                vals.set_index("method")[[m]].T
            d = wide[method] - wide[reference]
            n_pairs = len(d)
            if n_pairs < 2:
                ps.append(np.nan)  # one group: there is no paired test
            else:
                ps.append(float(wilcoxon(wide[method], wide[reference]).pvalue)
                          if (d != 0).any() else 1.0)
        order = np.argsort(ps)
        adj = np.full(3, np.nan)
        running = 0.0
        for rank, i in enumerate(order):
            if np.isnan(ps[i]):
                continue
            running = max(running, min(1.0, (3 - rank) * ps[i]))
            adj[i] = running
        for m, p, q in zip(METRICS, ps, adj, strict=True):
            rows.append({"method": method, "metric": m, "n_pairs": n_pairs, "p": p,
                         "p_holm": q, "significant": bool(q < alpha)})
    return pd.DataFrame(rows)


def early_stop(result: ProtocolResult, *, band: float = 1.05) -> pd.DataFrame:
    """First pool fraction at which a streaming/batch method's held-out MAE (seed-averaged)
    enters ``band`` × the mean final MAE of the full-batch methods, per group; 1.0
    ("never reached", plotted at 100 %) when it does not (card, convention 10)."""
    cur = result.curve
    keys = [c for c in cur.columns[: list(cur.columns).index("method")] if c != "seed"]
    full = cur[cur["mode"] == "full-batch"]
    final = full.loc[full.groupby([*keys, "seed", "method"])["n_anchors"].idxmax()]
    ref = final.groupby(keys)["mae"].mean() if keys else pd.Series([final["mae"].mean()])
    rows = []
    stream = cur[cur["mode"] != "full-batch"]
    for tag, part in stream.groupby([*keys, "method"], sort=False):
        tag = tag if isinstance(tag, tuple) else (tag,)
        r = ref.loc[tag[:-1] if len(tag) > 2 else tag[0]] if keys else ref.iloc[0]
        avg = part.groupby("n_anchors").agg(fraction=("fraction", "mean"), mae=("mae", "mean"))
        inside = avg[avg["mae"] <= band * r]
        rows.append({**dict(zip([*keys, "method"], tag, strict=True)),
                     "fraction": float(inside["fraction"].iloc[0]) if len(inside) else 1.0,
                     "reached": bool(len(inside))})
    return pd.DataFrame(rows)
