"""Benchmark of DIAL's low-rank judge model at the paper's real-data scale.

DIAL (2026) collects 410,000 verdicts from K = 21 LLM judges on N = 20 Chatbot Arena models,
every pair queried in both display orders, and fits r = 1 (and r = 2). This script simulates data
of that size with :func:`bayescal.simulate.low_rank_judges` (both orders, equal cell counts, the
truth generator of DIAL's Section 6.1 at N = 20, K = 21) and measures, for each r:

* the frequentist twin's LLM-only MLE from the aggregated cells (7,980 cells): the point fit
  (``Estimate.info["seconds_point"]``: start, alternating scoring, L-BFGS polish) and the whole
  ``fit`` call including Wald intervals (``information="observed"``); median of ``--repeats``
  calls,
  single-threaded BLAS;
* NUTS (4 chains x 1000 draws after 1000 tuning, nutpie by default) on
  :func:`bayescal.models.low_rank_judges.build`, every rank on the *same* data (simulated from a
  truth of the largest rank, as a user compares r = 1 with r = 2 on one data set), in
  ``--rounds`` rounds that fit the ranks in turn (r = 1, r = 2, r = 1, r = 2, ...). The first
  round compiles nutpie's model of each rank; later rounds reuse it (bayescal's cache of
  compiled models per structure), and each line says which. Per fit: wall and CPU time
  (including compilation and the twin's start), the sampler's own time, the largest R-hat and
  the smallest bulk ESS over the identified variables, the smallest bulk ESS of S, b, μ, γ
  (the ESS target's quantities) and that ESS per second of sampling and per CPU second, the
  divergences, the mean leapfrog steps per draw and the smallest share of a chain's draws whose
  disagreement factors point the way of chain 0's
  (:func:`bayescal.models.low_rank_judges.check_reflections`; 1 when no chain sits in a mirror
  mode). ``--start mle`` pivots the PyMC chart on the twin's MLE instead of the ridge start.

Targets: MLE ≤ 0.25 s (the authors' implementation: 0.19 s for r = 1, 0.25 s for
r = 2); NUTS ≤ 180 s including compilation with R-hat ≤ 1.01 on the invariants. Also: NUTS at
r = 2 within 2x the wall time of r = 1 on the same data (the median ratio over the alternated
pairs, printed for wall, CPU and sampling time), and a smallest bulk ESS of S, b, μ, γ ≥ 400.

Run::

    python bench/low_rank_judges.py                 # full size, twin and NUTS, r = 1 and 2
    python bench/low_rank_judges.py --skip-nuts     # the twin only
    python bench/low_rank_judges.py --quick         # smoke run (small data, short chains)

The load average of the machine is printed before and after each phase: on a shared machine the
wall-clock figures scale with it, so the CPU time of this process (all threads; for nutpie the
chains run as threads) is printed too. With PyMC's sampler (``--sampler pymc``) the chains run in
child processes whose CPU time is not counted.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

from bayescal import simulate  # noqa: E402
from bayescal.frequentist import low_rank_judges as twin  # noqa: E402

FULL = {"n_items": 20, "n_judges": 21, "n_comparisons": 410_000, "draws": 1000, "tune": 1000,
        "chains": 4}
QUICK = {"n_items": 8, "n_judges": 5, "n_comparisons": 20_000, "draws": 200, "tune": 200,
         "chains": 2}
TARGETS = {"mle_s": 0.25, "nuts_s": 180.0, "rhat": 1.01, "rank2_ratio": 2.0, "ess": 400.0}


def _load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def bench_twin(data, rank: int, repeats: int) -> dict[str, float]:
    """Median wall time of the point fit and of the whole fit over ``repeats`` calls."""
    point, total, cpu = [], [], []
    est = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        est = twin.fit(data, rank=rank, information="observed")
        total.append(time.perf_counter() - t0)
        point.append(est.info["seconds_point"])
        cpu.append(est.info["cpu_seconds_point"])
    assert est is not None
    return {"point_s": statistics.median(point), "total_s": statistics.median(total),
            "point_cpu_s": statistics.median(cpu),
            "point_min_s": min(point), "max_abs_gradient": est.info["max_abs_gradient"],
            "sweeps": est.info["sweeps"], "lbfgs_iterations": est.info["lbfgs_iterations"]}


# S, b, μ, γ: the invariants the ESS target is about (the projectors are reported beside them)
CORE = ("ability", "order_effect", "consensus", "consensus_loading", "consensus_loading_mean")


def bench_nuts(data, rank: int, size: dict, sampler: str, seed: int,
               start: str = "ridge") -> dict[str, float]:
    """One NUTS fit: wall and CPU time (including the twin's start and any compilation), the
    sampler's own time, whether nutpie's model was compiled in this call, and the figures of
    the posterior (R-hat, bulk ESS, divergences, leapfrog steps, factor signs)."""
    import bayescal as bc
    from bayescal import fitting
    from bayescal.models import low_rank_judges as lrm

    misses = fitting._NUTPIE_CACHE.misses
    t0, cpu0 = time.perf_counter(), time.process_time()
    s0 = twin.fit(data, rank=rank).params["ability"].values if start == "mle" else None
    model = lrm.build(data, rank=rank, start=s0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bc.DiagnosticWarning)
        post = bc.fit(model, "nuts", draws=size["draws"], tune=size["tune"],
                      chains=size["chains"], nuts_sampler=sampler, random_seed=seed,
                      check=False, log_likelihood=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    table = bc.diagnose(post, warn=False)
    rhat = table.xs("r_hat_max", level="check")["value"]
    ess = table.xs("ess_bulk_min", level="check")["value"]
    div = float(table.loc[("sampler", "divergences"), "value"]) if (
        "sampler", "divergences") in table.index else float("nan")
    stats = post["sample_stats"]
    steps = float(stats["n_steps"].mean()) if "n_steps" in stats else float("nan")
    share = lrm.check_reflections(post, warn=False)
    sampling = float(post["posterior"].attrs.get("sampling_time", float("nan")))
    core = float(ess[[n for n in CORE if n in ess.index]].min())
    return {"wall_s": wall, "cpu_s": cpu, "sampling_s": sampling,
            "compiled": fitting._NUTPIE_CACHE.misses > misses,
            "rhat_max": float(rhat.max()), "rhat_worst": str(rhat.idxmax()),
            "ess_bulk_min": float(ess.min()), "ess_worst": str(ess.idxmin()),
            "ess_core_min": core, "ess_per_s": core / sampling, "ess_per_cpu_s": core / cpu,
            "divergences": div, "steps_per_draw": steps,
            "sign_share_min": float(share.min())}


def _nuts_line(rank: int, nu: dict, size: dict, sampler: str) -> str:
    return (f"  NUTS r = {rank} ({sampler}, {size['chains']} x {size['draws']} after "
            f"{size['tune']} tuning, {'compiled' if nu['compiled'] else 'cached model'}): "
            f"{nu['wall_s']:.1f} s wall ({nu['sampling_s']:.1f} s sampling), "
            f"{nu['cpu_s']:.1f} s CPU (all threads); max R-hat {nu['rhat_max']:.4f} "
            f"({nu['rhat_worst']}), min bulk ESS of S, b, μ, γ {nu['ess_core_min']:.0f} "
            f"({nu['ess_core_min'] / nu['sampling_s']:.1f}/s sampling, "
            f"{nu['ess_per_cpu_s']:.1f}/s CPU), of every invariant {nu['ess_bulk_min']:.0f} "
            f"({nu['ess_worst']}), divergences {nu['divergences']:.0f}, "
            f"{nu['steps_per_draw']:.1f} leapfrog steps per draw, smallest share of draws on "
            f"chain 0's factor signs {nu['sign_share_min']:.3f}")


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-nuts", action="store_true")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2,
                        help="NUTS rounds, each fitting every rank in turn on the same data "
                             "(the first round compiles, later ones reuse the compiled model)")
    parser.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", default="ridge", choices=["ridge", "mle"],
                        help="scores the PyMC chart is pivoted on and NUTS starts from")
    args = parser.parse_args(argv)
    size = QUICK if args.quick else FULL

    def simulated(rank: int):
        truth = simulate.low_rank_judges_truth(size["n_items"], size["n_judges"], rank,
                                               random_seed=args.seed)
        return simulate.low_rank_judges(truth, size["n_comparisons"], both_orders=True,
                                        random_seed=args.seed + 3)

    twins = {}
    for rank in args.ranks:
        data = simulated(rank)
        print(f"twin, r = {rank} (data of a rank-{rank} truth): {data}")
        print(f"  before twin: {_load()}")
        tw = bench_twin(data, rank, args.repeats)
        print(f"  twin MLE: point fit {tw['point_s']:.3f} s (median of {args.repeats}; fastest "
              f"{tw['point_min_s']:.3f} s; CPU time {tw['point_cpu_s']:.3f} s), whole fit with "
              f"Wald intervals {tw['total_s']:.3f} s; "
              f"{tw['sweeps']} alternating sweeps, {tw['lbfgs_iterations']} L-BFGS iterations, "
              f"max |gradient| {tw['max_abs_gradient']:.2g}")
        print(f"  after twin: {_load()}")
        twins[rank] = tw
    fits: dict[int, list[dict]] = {rank: [] for rank in args.ranks}
    if not args.skip_nuts:
        # every rank on the same data (a truth of the largest rank), as a user compares ranks
        top = max(args.ranks)
        data = simulated(top)
        print(f"\nNUTS, every rank on the data of a rank-{top} truth: {data}")
        for k in range(args.rounds):
            for rank in args.ranks:
                print(f"  round {k + 1}, before r = {rank}: {_load()}")
                nu = bench_nuts(data, rank, size, args.sampler, args.seed + k, args.start)
                print(_nuts_line(rank, nu, size, args.sampler))
                fits[rank].append(nu)
        print(f"  after NUTS: {_load()}")

    print("\nTargets (issues 8 and 17):")
    for rank in args.ranks:
        tw = twins[rank]
        ok = tw["point_s"] <= TARGETS["mle_s"]
        print(f"  r = {rank}: MLE point fit {tw['point_s']:.3f} s ≤ {TARGETS['mle_s']} s: "
              f"{'met' if ok else 'MISSED'} (CPU time {tw['point_cpu_s']:.3f} s); with "
              f"intervals {tw['total_s']:.3f} s")
        if not fits[rank]:
            continue
        first = fits[rank][0]
        ok_t = first["wall_s"] <= TARGETS["nuts_s"]
        rhat = max(f["rhat_max"] for f in fits[rank])
        ess = min(f["ess_core_min"] for f in fits[rank])
        signs = min(f["sign_share_min"] for f in fits[rank])
        print(f"  r = {rank}: NUTS {first['wall_s']:.1f} s incl. compilation ≤ "
              f"{TARGETS['nuts_s']:.0f} s: {'met' if ok_t else 'MISSED'}; largest R-hat "
              f"{rhat:.4f} ≤ {TARGETS['rhat']}: {'met' if rhat <= TARGETS['rhat'] else 'MISSED'}"
              f"; smallest bulk ESS of S, b, μ, γ {ess:.0f} ≥ {TARGETS['ess']:.0f}: "
              f"{'met' if ess >= TARGETS['ess'] else 'MISSED'}; smallest share on chain 0's "
              f"factor signs {signs:.3f} (1: no chain in a mirror mode)")
        again = [f for f in fits[rank] if not f["compiled"]]
        if again:
            print(f"  r = {rank}: a later fit of the same structure: median "
                  f"{_median(again, 'wall_s'):.1f} s wall, {_median(again, 'cpu_s'):.1f} s CPU "
                  f"({len(again)} fit(s), none compiled)")
    if 1 in args.ranks and 2 in args.ranks and fits[1] and fits[2]:
        for key, what in (("wall_s", "wall"), ("cpu_s", "CPU"), ("sampling_s", "sampling")):
            pairs = [b[key] / a[key] for a, b in zip(fits[1], fits[2], strict=True)]
            ratio = statistics.median(pairs)
            print(f"  NUTS {what} r = 2 / r = 1 on the same data: median {ratio:.2f} over "
                  f"{len(pairs)} alternated pair(s) ({', '.join(f'{p:.2f}' for p in pairs)}) ≤ "
                  f"{TARGETS['rank2_ratio']}: "
                  f"{'met' if ratio <= TARGETS['rank2_ratio'] else 'MISSED'}")
    print(f"({_load()}; {os.cpu_count()} CPUs; figures scale with the load on a shared machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
