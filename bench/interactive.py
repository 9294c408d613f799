"""Benchmark: what an interactive user waits for, each in a fresh Python process.

Prints, with a cold and a warm PyTensor compile cache (cold = an empty temporary
``base_compiledir``; warm = the same folder on a second run):

* ``bayescal --help`` (target ≤ 0.5 s wall, the whole process);
* the MAP of the demo model (12 models, 6 judges, 30,000 simulated verdicts, as in
  ``bayescal demo``): the ``bc.fit(model, "map")`` call alone (target ≤ 3 s warm) and the whole
  process (imports, simulation, fit);
* the same MAP by the path bayescal used before (``import arviz`` as the diagnostics module
  did, then ``pm.find_MAP`` with the default numba build and its DataTree conversion);
* the MLE of the same data (the frequentist twin) for scale;
* NUTS with nutpie on the same model (``--draws`` per chain, 4 chains), whose first fit of a
  model structure in a process compiles (``bench/run.py`` also times the second, cached, fit);
* ``Comparisons.from_frame`` on 1,000,000 rows with string labels (target ≤ 0.3 s; measured
  in this process, it does not touch PyTensor).

Each figure is shown as wall time and as the process's CPU time: on a machine shared with other
jobs the wall time can be several times the CPU time.

The machine is shared: the load average is printed beside the figures; read them with it.

Run::

    python bench/interactive.py            # 3 repeats of the quick figures, 1000 NUTS draws
    python bench/interactive.py --quick    # 1 repeat, 200 NUTS draws
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"help": 0.5, "map_fit": 3.0, "from_frame": 0.3}

# The child builds the demo data exactly as `bayescal demo` does and reports its timings.
CHILD = r"""
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import bayescal as bc
from bayescal import simulate
from bayescal.models import judge_discrimination_btl as jd
truth = simulate.judge_discrimination_truth(12, 6, log_discrimination_sd=0.8, random_seed=1)
data = simulate.judge_discrimination_btl(truth, 30_000, random_seed=2)
out = {}
what = sys.argv[1]
if what == "mle":
    from bayescal.frequentist import judge_discrimination_btl as twin
    t, c = time.perf_counter(), time.process_time()
    twin.fit(data)
    out["mle_fit"] = (time.perf_counter() - t, time.process_time() - c)
else:
    model = jd.build(data)
    t, c = time.perf_counter(), time.process_time()
    if what == "map":
        bc.fit(model, "map")
        out["map_fit"] = (time.perf_counter() - t, time.process_time() - c)
    elif what == "find_map":
        import warnings
        import arviz, pymc as pm
        warnings.simplefilter("ignore", FutureWarning)
        pm.find_MAP(model=model, return_inferencedata=True, jitter=False, progressbar=False,
                    options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30})
        out["find_map_fit"] = (time.perf_counter() - t, time.process_time() - c)
    else:
        bc.fit(model, "nuts", draws=int(sys.argv[2]), tune=int(sys.argv[2]), chains=4,
               nuts_sampler="nutpie", random_seed=1, progressbar=False, check=False,
               log_likelihood=False)
        out["nutpie_fit"] = (time.perf_counter() - t, time.process_time() - c)
out["process_" + what] = (time.perf_counter() - t0, time.process_time() - c0)
print("BENCH" + json.dumps(out))
"""


def _env(compiledir: Path) -> dict[str, str]:
    env = dict(os.environ)
    flags = [f for f in env.get("PYTENSOR_FLAGS", "").split(",")
             if f and not f.startswith("base_compiledir")]
    env["PYTENSOR_FLAGS"] = ",".join([*flags, f"base_compiledir={compiledir}"])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["BAYESCAL_PROGRESS"] = "0"
    return env


def _child(args: list[str], env: dict[str, str]) -> dict[str, tuple[float, float]]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - t
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("BENCH")]
    if done.returncode or not lines:
        raise RuntimeError(f"child {args} failed:\n{done.stderr[-2000:]}")
    out = json.loads(lines[-1][len("BENCH"):])
    out = {k: tuple(v) for k, v in out.items()}
    out["wall_" + args[0]] = (wall, float("nan"))
    return out


def _help(env: dict[str, str]) -> tuple[float, float]:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bayescal.cli", "--help"], env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - t, float("nan")


def _from_frame(n: int, repeats: int) -> tuple[float, float]:
    from bayescal.data import Comparisons

    rng = np.random.default_rng(0)
    names = np.array([f"model-{i:02d}" for i in range(30)], dtype=object)
    a = rng.integers(0, 30, n)
    b = (a + rng.integers(1, 30, n)) % 30
    frame = pd.DataFrame({"item_a": names[a], "item_b": names[b],
                          "outcome": rng.integers(0, 2, n).astype(float),
                          "judge": np.array(["gpt", "claude", "human"], dtype=object)[
                              rng.integers(0, 3, n)]})
    times = []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        Comparisons.from_frame(frame)
        times.append((time.perf_counter() - t, time.process_time() - c))
    return float(np.median([w for w, _ in times])), float(np.median([c for _, c in times]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 repeat, 200 NUTS draws")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    draws = 200 if args.quick else 1000
    rows = []
    cache = Path(tempfile.mkdtemp(prefix="bayescal-bench-pytensor-"))
    try:
        env = _env(cache)
        for state in ("cold", "warm"):
            figures: dict[str, list[tuple[float, float]]] = {}
            runs = 1 if state == "cold" else repeats
            for _ in range(runs):
                for key, value in {**_child(["map"], env), **_child(["mle"], env),
                                   **_child(["find_map"], env)}.items():
                    figures.setdefault(key, []).append(value)
                figures.setdefault("help", []).append(_help(env))
            figures.update({k: [v] for k, v in _child(["nuts", str(draws)], env).items()})
            for key, values in figures.items():
                wall, cpu = np.median(np.asarray(values), axis=0)
                rows.append((state, key, float(wall), float(cpu), len(values)))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    rows.append(("-", "from_frame", *_from_frame(1_000_000, repeats), repeats))
    table = pd.DataFrame(rows, columns=["cache", "figure", "seconds", "cpu_seconds", "runs"])
    table["target"] = table["figure"].map(TARGETS)
    table["ok"] = np.where(table["target"].isna(), "",
                           np.where(table["seconds"] <= table["target"], "PASS", "FAIL"))
    labels = {
        "help": "bayescal --help (whole process)",
        "map_fit": "bc.fit(model, 'map') call (demo model)",
        "find_map_fit": "before: import arviz + pm.find_MAP (numba, DataTree)",
        "process_find_map": "before: fresh process, imports + data + find_MAP",
        "wall_find_map": "before: incl. interpreter start (find_MAP)",
        "process_map": "fresh process: imports + data + MAP",
        "wall_map": "fresh process incl. interpreter start (MAP)",
        "mle_fit": "twin MLE call (same data)",
        "process_mle": "fresh process: imports + data + MLE",
        "wall_mle": "fresh process incl. interpreter start (MLE)",
        "nutpie_fit": f"bc.fit NUTS nutpie, 4 x {draws} draws",
        "process_nuts": "fresh process: imports + data + NUTS",
        "wall_nuts": "fresh process incl. interpreter start (NUTS)",
        "from_frame": "Comparisons.from_frame, 1M string rows",
    }
    table["figure"] = table["figure"].map(lambda k: labels.get(k, k))
    warm = dict(zip(table.loc[table["cache"] == "warm", "figure"],
                    table.loc[table["cache"] == "warm", "seconds"], strict=True))
    pd.set_option("display.width", 160)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}. seconds = wall "
          "(the target applies to it); cpu_seconds = this process's CPU time, which a loaded "
          "machine inflates far less than the wall time")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    ratio = warm[labels["map_fit"]] / warm[labels["mle_fit"]]
    print(f"\nwarm MAP / MLE call: {ratio:.0f}x; warm nutpie / MAP call: "
          f"{warm[labels['nutpie_fit']] / warm[labels['map_fit']]:.1f}x; warm find_MAP path "
          f"(before) / MAP call: {warm[labels['find_map_fit']] / warm[labels['map_fit']]:.1f}x")


if __name__ == "__main__":
    main()
