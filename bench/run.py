"""Every performance figure of bayescal against its anchor, in one run.

Each figure is measured in a fresh Python process (so first calls pay what a user's first call
pays: imports, lazy imports, compilation), and printed with wall and CPU time: on a machine
shared with other jobs the wall time can be well above the CPU time. The load average is
printed beside them.

=====================  ===============================================  ====================
figure                 what is timed                                    anchor, target
=====================  ===============================================  ====================
frame -> leaderboard   1M Arena-style rows (45 models, string labels):  choix.ilsr_pairwise
                       from_frame + twin fit + bc.leaderboard; first    on the same verdicts;
                       call in a fresh process and warm                 ≤ 0.06x
frame 10M              from_frame on 10M rows with judges; peak         ≤ 1.5 s; peak ≤ frame
                       memory beyond the frame (tracemalloc)            + 0.5 GiB
imports                import of a twin module; ``bayescal --help``     2.3 s before the lazy imports
MAP                    bc.fit(model, "map"), demo model (12 models, 6   ≤ 0.5 s first (warm
                       judges, 18 parameters): first call in a fresh    disk cache), ≤ 0.1 s
                       process, repeat, new model of one structure      repeat; twin MLE
NUTS                   bc.fit nutpie 4 x 1000, 45 x 18 / 1M verdicts:   ≤ 25 s, same ESS
                       first fit (compiles; nutpie's native callbacks
                       from the disk cache after the first run) and a
                       second fit of the same structure (new data, no
                       recompilation)
judge-aware MLE        twin fit + Wald at 1M verdicts, 18 judges, 20 /  choix
                       45 / 100 / 300 / 1000 models; plain BT twin;     ilsr_pairwise_dense;
                       one BLAS thread, least CPU time of 3 runs; a     Arena-style BT with
                       scaling table: cells, CPU-s, s per 1M cells      sandwich (statsmodels
                                                                        GLM, HC0); ≤ 1 CPU-s
                                                                        and ≤ 12x choix at
                                                                        300; s per 1M cells
                                                                        flat to 1000 models
Chen et al.               judge_mean.estimate, 10^6 test items             ppi-python PPI++; ≤ 3x
design                 next_comparisons on a judge-aware fit of 50      ≤ 0.1 s CPU for one
                       models and 4 judges: one verdict, a batch of 50  verdict, ≤ 0.5 s CPU
                       (all contrasts; the top-5 set)                   for 50
low rank (full only)   NUTS r = 2 vs r = 1 (DIAL scale)                 ≤ 2x; min bulk ESS
                                                                        ≥ 400
=====================  ===============================================  ====================

The Arena-style anchor is Bradley–Terry as a logistic regression on the pair table with a
sandwich covariance, which is what Arena leaderboards compute (the arena-rank package itself
pulls in JAX and an older numpy, so it is not used here).

Run::

    python bench/run.py            # full sizes (about 10 minutes on 2 cores)
    python bench/run.py --quick    # small sizes, a smoke run (a minute or two)
    python bench/run.py --only map,frame
    python bench/run.py --only judge_mle                        # the scaling table to 1000
    python bench/run.py --only judge_mle --mle-items 300,1000   # some sizes only
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("frame", "frame10m", "imports", "map", "nuts", "judge_mle", "judge_mean",
            "design", "low_rank")
GIB = 2**30


# ------------------------------------------------------------------------ child measurements
def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - start[0], time.process_time() - start[1]


def _arena_frame(n_rows: int, n_items: int, seed: int, judges: int = 0):
    """A tidy frame as an Arena export has it: string labels, 1/0 outcomes (no ties, so that
    choix sees the same verdicts), optionally a judge column."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    names = np.array([f"model-{i:03d}" for i in range(n_items)], dtype=object)
    skill = rng.normal(size=n_items)
    a = rng.integers(0, n_items, n_rows)
    b = (a + rng.integers(1, n_items, n_rows)) % n_items
    y = (rng.random(n_rows) < 1 / (1 + np.exp(skill[b] - skill[a]))).astype(float)
    columns = {"item_a": pd.array(names[a], dtype="str"), "item_b": pd.array(names[b], dtype="str"),
               "outcome": y}
    if judges:
        labels = np.array([f"judge-{k:02d}" for k in range(judges)], dtype=object)
        columns["judge"] = pd.array(labels[rng.integers(0, judges, n_rows)], dtype="str")
    return pd.DataFrame(columns), a, b, y


def child_frame(size: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    df, a, b, y = _arena_frame(size["frame_rows"], 45, seed=1)
    start = _clock()
    import bayescal as bc
    from bayescal.frequentist import judge_discrimination_btl as twin
    imports = _since(start)

    def table() -> Any:
        return bc.leaderboard(twin.fit(bc.Comparisons.from_frame(df)))

    start = _clock()
    table()
    first = _since(start)
    warm = []
    for _ in range(3):
        start = _clock()
        table()
        warm.append(_since(start))
    start = _clock()
    data = bc.Comparisons.from_frame(df)
    twin.fit(data)
    fit_only = _since(start)
    import choix

    start = _clock()
    pairs = list(zip(np.where(y == 1, a, b).tolist(), np.where(y == 1, b, a).tolist(),
                     strict=True))
    pairs_s = _since(start)
    start = _clock()
    choix.ilsr_pairwise(45, pairs)
    choix_s = _since(start)
    return {"imports": imports, "first": first, "warm": min(warm), "frame_to_fit": fit_only,
            "choix": choix_s, "choix_pairs": pairs_s, "rows": len(df)}


def child_frame10m(size: dict[str, Any]) -> dict[str, Any]:
    import resource
    import tracemalloc

    df, *_ = _arena_frame(size["big_rows"], 45, seed=2, judges=18)
    from bayescal.data import Comparisons

    Comparisons.from_frame(df.head(1000))  # imports and first-call costs out of the figure
    frame_bytes = float(df.memory_usage(deep=True).sum())
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    tracemalloc.start()
    start = _clock()
    Comparisons.from_frame(df)
    seconds = _since(start)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = _clock()
    Comparisons.from_frame(df)
    untraced = _since(start)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    return {"seconds": untraced, "seconds_traced": seconds, "peak_beyond_frame": float(peak),
            "frame_bytes": frame_bytes, "rss_growth": rss_after - rss_before,
            "rows": len(df)}


def _demo_data(seed: int):
    from bayescal import simulate

    truth = simulate.judge_discrimination_truth(12, 6, log_discrimination_sd=0.8, random_seed=1)
    return simulate.judge_discrimination_btl(truth, 30_000, random_seed=seed)


def child_map(size: dict[str, Any]) -> dict[str, Any]:
    import bayescal as bc
    from bayescal.frequentist import judge_discrimination_btl as twin
    from bayescal.models import judge_discrimination_btl as jd

    data = _demo_data(2)
    model = jd.build(data)
    start = _clock()
    bc.fit(model, "map")
    first = _since(start)
    repeats = []
    for _ in range(5):
        start = _clock()
        bc.fit(model, "map")
        repeats.append(_since(start))
    other = jd.build(_demo_data(3))
    start = _clock()
    bc.fit(other, "map")
    same_structure = _since(start)
    start = _clock()
    twin.fit(data)
    mle = _since(start)
    repeats.sort()
    return {"first": first, "repeat": repeats[len(repeats) // 2], "same_structure": same_structure,
            "mle": mle}


def child_nuts(size: dict[str, Any]) -> dict[str, Any]:
    import warnings

    import bayescal as bc
    from bayescal import simulate
    from bayescal.models import judge_discrimination_btl as jd

    truth = simulate.judge_discrimination_truth(size["nuts_items"], size["nuts_judges"],
                                                random_seed=2002)
    out: dict[str, Any] = {}
    _ = bc.fit  # PyMC's import is not the sampler's cost
    for label, seed in (("first", 2003), ("second", 2004)):
        data = simulate.judge_discrimination_btl(truth, size["nuts_verdicts"], random_seed=seed)
        model = jd.build(data)
        start = _clock()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bc.fit(model, "nuts", draws=size["draws"], tune=size["draws"], chains=4,
                          random_seed=1, check=False, log_likelihood=False)
        seconds = _since(start)
        table = bc.diagnose(post, warn=False)
        out[label] = seconds
        out[f"{label}_ess"] = float(table.xs("ess_bulk_min", level="check")["value"].min())
        out[f"{label}_rhat"] = float(table.xs("r_hat_max", level="check")["value"].max())
        out[f"{label}_sampling"] = float(post["posterior"].attrs.get("sampling_time", 0.0))
    return out


def _win_matrix(data) -> Any:
    """comp_mat[i, j] = times i beat j, judges and orders pooled (ties half a win each way)."""
    import numpy as np

    n = data.n_items
    wins = np.bincount(data.item_i * n + data.item_j, weights=data.wins, minlength=n * n)
    losses = np.bincount(data.item_j * n + data.item_i, weights=data.count - data.wins,
                         minlength=n * n)
    return (wins + losses).reshape(n, n)


def _arena_bt(data) -> Any:
    """Bradley–Terry as a binomial GLM on the pair table with a sandwich covariance (HC0), as
    Arena leaderboards compute it (statsmodels, dense design: slow beyond 100 models)."""
    import numpy as np
    import statsmodels.api as sm

    pooled = data.collapse(order=True, judges=True)
    x = np.zeros((pooled.n_cells, data.n_items))
    rows = np.arange(pooled.n_cells)
    x[rows, pooled.item_i] = 1.0
    x[rows, pooled.item_j] = -1.0
    y = np.column_stack([pooled.wins, pooled.count - pooled.wins])
    return sm.GLM(y, x[:, 1:], family=sm.families.Binomial()).fit(cov_type="HC0")


def child_judge_mle(size: dict[str, Any]) -> dict[str, Any]:
    import choix
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # CPU seconds of one thread: the cost, not the machine's load
        return _judge_mle(size, choix)


def _judge_mle(size: dict[str, Any], choix: Any) -> dict[str, Any]:
    from bayescal import simulate
    from bayescal.frequentist import judge_discrimination_btl as twin

    out: dict[str, Any] = {}
    for n_items in size["mle_items"]:
        truth = simulate.judge_discrimination_truth(n_items, 18, random_seed=n_items)
        data = simulate.judge_discrimination_btl(truth, size["mle_verdicts"], random_seed=1)
        twin.fit(data, information="expected")  # first-call costs out of the comparison
        matrix = _win_matrix(data)  # choix's input, built outside its clock
        figures = {}
        calls = [("twin", lambda d=data: twin.fit(d, information="expected")),
                 ("plain", lambda d=data: twin.fit(d, discrimination=False,
                                                   information="expected")),
                 ("choix_dense", lambda m=matrix: choix.ilsr_pairwise_dense(m))]
        if n_items <= 100:
            calls.append(("arena_bt", lambda d=data: _arena_bt(d)))
        for label, call in calls:
            best = None
            # the least CPU time of a few runs: on a shared machine the others only add to it
            for _ in range(3 if n_items <= 300 or label != "choix_dense" else 1):
                start = _clock()
                call()
                seconds = _since(start)
                best = seconds if best is None or seconds[1] < best[1] else best
            figures[label] = best
        figures["cells"] = data.n_cells
        out[str(n_items)] = figures
    return out


def child_judge_mean(size: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    import ppi_py

    from bayescal.data import Labels
    from bayescal.frequentist import judge_mean as jm

    rng = np.random.default_rng(1)
    n_test, n_cal = size["mean_items"], 2000
    y_cal = (rng.random(n_cal) < 0.3).astype(float)
    noisy = lambda y: np.where(rng.random(len(y)) < 0.85, y, 1 - y)  # noqa: E731
    yhat_cal = noisy(y_cal)
    yhat_test = noisy((rng.random(n_test) < 0.3).astype(float))
    labels = Labels.from_arrays(y_cal, yhat_cal, yhat_test)
    jm.estimate(labels, 0.9)  # first-call costs out of the comparison
    start = _clock()
    jm.estimate(labels, 0.9)
    ours = _since(start)
    start = _clock()
    ppi_py.ppi_mean_ci(y_cal, yhat_cal, yhat_test, alpha=0.1)  # lam=None: PPI++
    theirs = _since(start)
    return {"ours": ours, "ppi_plus_plus": theirs}


def child_design(size: dict[str, Any]) -> dict[str, Any]:
    """next_comparisons on a judge-aware BTL fit of 50 models and 4 judges (4,900 candidate
    (pair, judge) triples): one verdict, and a batch of 50 (greedy steps, Σ updated each)."""
    from bayescal import simulate
    from bayescal.design import next_comparisons
    from bayescal.frequentist import judge_discrimination_btl as twin

    truth = simulate.judge_discrimination_truth(50, 4, random_seed=5)
    est = twin.fit(simulate.judge_discrimination_btl(truth, 20_000, random_seed=6))
    next_comparisons(est, 1)  # first-call costs out of the figure
    out = {}
    for label, kwargs in (("one", {"budget": 1}), ("batch", {"budget": 50}),
                          ("batch_top", {"budget": 50, "top": 5})):
        best = None
        for _ in range(3):
            start = _clock()
            next_comparisons(est, random_seed=0, **kwargs)
            took = _since(start)
            best = took if best is None or took[0] < best[0] else best
        out[label] = best
    return out


def child_low_rank(size: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench"))
    import low_rank_judges as lrb

    from bayescal import simulate

    shape = lrb.QUICK if size["quick"] else lrb.FULL
    # both ranks on the same data (a rank-2 truth), as the target compares them
    truth = simulate.low_rank_judges_truth(shape["n_items"], shape["n_judges"], 2,
                                           random_seed=1)
    data = simulate.low_rank_judges(truth, shape["n_comparisons"], both_orders=True,
                                    random_seed=4)
    return {str(rank): lrb.bench_nuts(data, rank, shape, "nutpie", 1) for rank in (1, 2)}


CHILDREN = {"frame": child_frame, "frame10m": child_frame10m, "map": child_map,
            "nuts": child_nuts, "judge_mle": child_judge_mle, "judge_mean": child_judge_mean,
            "design": child_design, "low_rank": child_low_rank}


# ------------------------------------------------------------------------ parent
def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["BAYESCAL_PROGRESS"] = "0"
    # an installed package has its bytecode (pip compiles it at install time); a shell that
    # forbids writing it would make every fresh child compile bayescal's modules from source
    # (0.02 s of the first frame call alone, and more of the import figures)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run_child(section: str, size: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", section, json.dumps(size)],
                          capture_output=True, text=True, env=_env(), check=False)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"section {section} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _process_seconds(code: list[str], repeats: int) -> float:
    """Median wall time of a whole fresh process running ``code``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, *code], env=_env(), check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def _imports() -> dict[str, Any]:
    bare = _process_seconds(["-c", "import numpy, pandas"], 3)
    twin = _process_seconds(["-c", "import bayescal.frequentist.judge_discrimination_btl"], 3)
    after_pandas = _process_seconds(["-c", "import numpy, pandas, time; t = time.perf_counter()"
                                     "; import bayescal.frequentist.judge_discrimination_btl"], 3)
    return {"twin_process": twin, "numpy_pandas_process": bare,
            "twin_beyond_pandas": after_pandas - bare,
            "help": _process_seconds(["-m", "bayescal.cli", "--help"], 3),
            "python": _process_seconds(["-c", "pass"], 3)}


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []

    def add(self, figure: str, measured: str, anchor: str = "", ratio: str = "",
            verdict: str = "") -> None:
        self.rows.append((figure, measured, anchor, ratio, verdict))

    def show(self) -> None:
        heads = ("figure", "measured (wall / cpu)", "anchor", "ratio", "target")
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) for i, h in enumerate(heads)]
        print("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)))
        print("  ".join("-" * w for w in widths))
        for row in self.rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def _t(pair: list[float]) -> str:
    return f"{pair[0]:.3f} / {pair[1]:.3f} s"


def _verdict(ok: bool, target: str) -> str:
    return f"{target}: {'met' if ok else 'MISSED'}"


def report(results: dict[str, Any], table: Table) -> None:
    if "frame" in results:
        r = results["frame"]
        choix_s = r["choix"][0]
        table.add(f"frame -> leaderboard, {r['rows']:,} rows, first call", _t(r["first"]),
                  f"choix.ilsr_pairwise {choix_s:.2f} s", f"{r['first'][0] / choix_s:.3f}x",
                  _verdict(r["first"][0] <= 0.06 * choix_s, "≤ 0.06x"))
        table.add("frame -> leaderboard, warm", _t(r["warm"]), "", f"{r['warm'][0] / choix_s:.3f}x",
                  _verdict(r["warm"][0] <= 0.06 * choix_s, "≤ 0.06x"))
        table.add("frame -> twin fit (no table), warm", _t(r["frame_to_fit"]), "",
                  f"{r['frame_to_fit'][0] / choix_s:.3f}x")
        table.add("  (imports of bayescal + twin, after pandas)", _t(r["imports"]),
                  f"choix's pair list {r['choix_pairs'][0]:.2f} s")
    if "frame10m" in results:
        r = results["frame10m"]
        beyond = r["peak_beyond_frame"] / GIB
        table.add(f"from_frame {r['rows']:,} rows", _t(r["seconds"]), "", "",
                  _verdict(r["seconds"][0] <= 1.5 * r["rows"] / 1e7, "≤ 1.5 s per 10M"))
        table.add("  peak beyond the frame (tracemalloc)",
                  f"{beyond:.2f} GiB (frame {r['frame_bytes'] / GIB:.2f} GiB)", "", "",
                  _verdict(beyond <= 0.5, "≤ 0.5 GiB"))
    if "imports" in results:
        r = results["imports"]
        table.add("import a twin module (whole process)", f"{r['twin_process']:.2f} s",
                  "2.3 s before", f"{r['twin_process'] / 2.3:.2f}x")
        table.add("  of which beyond numpy + pandas", f"{r['twin_beyond_pandas']:.2f} s",
                  f"python alone {r['python']:.2f} s")
        table.add("bayescal --help (whole process)", f"{r['help']:.2f} s", "", "",
                  _verdict(r["help"] <= 0.5, "≤ 0.5 s"))
    if "map" in results:
        r = results["map"]
        mle = r["mle"][0]
        table.add("MAP first call (fresh process)", _t(r["first"]), f"twin MLE {mle:.3f} s",
                  f"{r['first'][0] / mle:.0f}x", _verdict(r["first"][0] <= 0.5, "≤ 0.5 s"))
        table.add("MAP repeat call (same model)", _t(r["repeat"]), "",
                  f"{r['repeat'][0] / mle:.0f}x", _verdict(r["repeat"][0] <= 0.1, "≤ 0.1 s"))
        table.add("MAP new model, same structure", _t(r["same_structure"]), "",
                  f"{r['same_structure'][0] / mle:.0f}x",
                  _verdict(r["same_structure"][0] <= 0.1, "≤ 0.1 s"))
    if "nuts" in results:
        r = results["nuts"]
        for label in ("first", "second"):
            table.add(f"NUTS nutpie 4 x draws, {label} fit" + (" (cached)" if label == "second"
                                                               else " (compiles)"),
                      _t(r[label]), f"sampling {r[label + '_sampling']:.1f} s",
                      f"ESS {r[label + '_ess']:.0f}, R-hat {r[label + '_rhat']:.3f}",
                      _verdict(r[label][0] <= 25.0, "≤ 25 s"))
    if "judge_mle" in results:
        for n_items, r in results["judge_mle"].items():
            dense = r["choix_dense"][1]
            arena = r["arena_bt"][1] if "arena_bt" in r else float("nan")
            # ratios of CPU times: each side's own work, which the machine's load does not scale
            ok = "" if n_items != "300" else _verdict(
                r["twin"][1] <= 1.0 and r["twin"][1] <= 12 * dense, "≤ 1 CPU-s, ≤ 12x")
            table.add(f"judge-aware MLE + Wald, {n_items} models ({r['cells']:,} cells)",
                      _t(r["twin"]), f"choix dense {dense:.3f} s; GLM BT + HC0 {arena:.3f} s",
                      f"{r['twin'][1] / dense:.1f}x; {r['twin'][1] / arena:.2f}x", ok)
            table.add(f"  plain BT twin, {n_items} models", _t(r["plain"]), "",
                      f"{r['plain'][1] / dense:.1f}x; {r['plain'][1] / arena:.2f}x")
    if "judge_mean" in results:
        r = results["judge_mean"]
        ratio = r["ours"][0] / r["ppi_plus_plus"][0]
        table.add("judge_mean.estimate, 10^6 test items", _t(r["ours"]),
                  f"ppi-python PPI++ {r['ppi_plus_plus'][0]:.3f} s", f"{ratio:.1f}x",
                  _verdict(ratio <= 3, "≤ 3x"))
    if "design" in results:
        r = results["design"]
        # judged on CPU time: one thread of numpy, whose wall time a loaded machine inflates
        table.add("next_comparisons, 50 models x 4 judges, 1 verdict", _t(r["one"]), "", "",
                  _verdict(r["one"][1] <= 0.1, "≤ 0.1 s CPU"))
        table.add("  a batch of 50 verdicts (all contrasts)", _t(r["batch"]), "", "",
                  _verdict(r["batch"][1] <= 0.5, "≤ 0.5 s CPU"))
        table.add("  a batch of 50 verdicts (top-5 set)", _t(r["batch_top"]), "", "",
                  _verdict(r["batch_top"][1] <= 0.5, "≤ 0.5 s CPU"))
    if "low_rank" in results:
        one, two = results["low_rank"]["1"], results["low_rank"]["2"]
        ratio = two["wall_s"] / one["wall_s"]
        table.add("low-rank NUTS r = 2 vs r = 1", f"{two['wall_s']:.1f} / {one['wall_s']:.1f} s",
                  f"ESS of S, b, μ, γ {two['ess_core_min']:.0f} (r = 2)", f"{ratio:.2f}x",
                  _verdict(ratio <= 2 and two["ess_core_min"] >= 400, "≤ 2x, ESS ≥ 400"))


def judge_mle_scaling(results: dict[str, Any], verdicts: int) -> None:
    """The judge-aware twin's cost against its cells: CPU seconds per million cells should not
    grow with the number of models (the card's "Cost")."""
    rows = results["judge_mle"]
    print(f"\njudge-aware MLE + Wald (expected information), 18 judges, {verdicts:,} verdicts; "
          "CPU seconds, one BLAS thread, least of 3 runs")
    print(f"{'models':>7}  {'cells':>9}  {'CPU-s':>7}  {'s per 1M cells':>14}  "
          f"{'plain BT CPU-s':>14}")
    for n_items, r in rows.items():
        cpu = r["twin"][1]
        print(f"{n_items:>7}  {r['cells']:>9,}  {cpu:>7.3f}  {cpu / r['cells'] * 1e6:>14.3f}  "
              f"{r['plain'][1]:>14.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--only", default=None, help=f"comma-separated subset of {SECTIONS}")
    parser.add_argument("--json", default=None, help="also write the raw figures here")
    parser.add_argument("--mle-items", default=None,
                        help="comma-separated model counts of the judge_mle section (default "
                             "20,45,100,300,1000; --quick: 20,45)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        section, size = args.child
        print("RESULT " + json.dumps(CHILDREN[section](json.loads(size))))
        return 0
    quick = args.quick
    size = {"quick": quick, "frame_rows": 200_000 if quick else 1_000_000,
            "big_rows": 1_000_000 if quick else 10_000_000,
            "nuts_items": 10 if quick else 45, "nuts_judges": 4 if quick else 18,
            "nuts_verdicts": 20_000 if quick else 1_000_000, "draws": 200 if quick else 1000,
            "mle_items": ([int(n) for n in args.mle_items.split(",")] if args.mle_items
                          else [20, 45] if quick else [20, 45, 100, 300, 1000]),
            "mle_verdicts": 100_000 if quick else 1_000_000,
            "mean_items": 100_000 if quick else 1_000_000}
    sections = [s for s in SECTIONS if quick is False or s != "low_rank"]
    if args.only:
        wanted = [s.strip() for s in args.only.split(",")]
        unknown = sorted(set(wanted) - set(SECTIONS))
        if unknown:
            parser.error(f"unknown sections {unknown}; choose from {SECTIONS}")
        sections = [s for s in SECTIONS if s in wanted]
    print(f"bench/run.py{' --quick' if quick else ''}: {', '.join(sections)}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    compileall.compile_dir(ROOT / "bayescal", quiet=1)  # what an install leaves in place
    if "map" in sections:  # the first MAP of a fresh process is timed with a warm disk cache
        _run_child("map", size)
    results: dict[str, Any] = {}
    for section in sections:
        start = time.perf_counter()
        results[section] = _imports() if section == "imports" else _run_child(section, size)
        print(f"  {section}: {time.perf_counter() - start:.0f} s "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    table = Table()
    report(results, table)
    print()
    table.show()
    if "judge_mle" in results:
        judge_mle_scaling(results, size["mle_verdicts"])
    if quick:
        print("\n--quick: small sizes; the targets are for the full sizes.")
    if args.json:
        Path(args.json).write_text(json.dumps({"size": size, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
