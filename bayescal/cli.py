"""The ``bayescal`` command: ``demo``, ``fit`` and ``mean``."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["main"]

_MODELS = ("judge-discrimination-btl",)


def _interval_columns(table: pd.DataFrame, methods: Sequence[str], digits: int = 3) -> pd.DataFrame:
    """One readable column per method: ``estimate [lower, upper]`` (or the estimate alone)."""
    out = pd.DataFrame(index=table.index)
    for m in methods:
        est = table[f"{m}_estimate"]
        text = est.map(lambda v: "" if pd.isna(v) else f"{v:.{digits}f}")
        if f"{m}_lower" not in table:
            out[m] = text
            continue
        lo, hi = table[f"{m}_lower"], table[f"{m}_upper"]
        has = lo.notna() & hi.notna()
        text[has] = [f"{e:.{digits}f} [{a:.{digits}f}, {b:.{digits}f}]"
                     for e, a, b in zip(est[has], lo[has], hi[has], strict=True)]
        out[m] = text
    return out


def _leaderboard(table: pd.DataFrame, methods: Sequence[str], sort_by: str) -> pd.DataFrame:
    shown = table[table["parameter"].isin(["ability", "discrimination"])]
    parts = []
    for name in ("ability", "discrimination"):
        part = shown[shown["parameter"] == name].sort_values(f"{sort_by}_estimate",
                                                              ascending=False)
        parts.append(part)
    ordered = pd.concat(parts)
    view = _interval_columns(ordered, methods)
    ratios = [c for c in ordered.columns if c.startswith("width_ratio_")]
    for c in ratios:
        view[c.replace("width_ratio_", "width ")] = ordered[c].map(
            lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return view


def _demo_data(data_dir: str | None, seed: int):
    from bayescal import datasets, simulate
    from bayescal.data import Comparisons

    if data_dir is None:
        truth = simulate.judge_discrimination_truth(12, 6, log_discrimination_sd=0.8,
                                                    random_seed=seed)
        data = simulate.judge_discrimination_btl(truth, 30_000, random_seed=seed + 1)
        source = ("simulated: 12 models, 6 judges of unequal discrimination, 30,000 verdicts "
                  f"(seed 002 design, seed {seed})")
        return data, truth, source
    frame = datasets.ppr_chatbot_arena(data_dir)
    data = Comparisons.from_frame(frame, humans=["human"])
    source = (f"Chatbot Arena (ppr-chatbot-arena): {len(frame):,} verdicts, human crowd + "
              "3 LLM judges")
    return data, None, source


def _demo(args: argparse.Namespace) -> int:
    import bayescal as bc
    from bayescal import identify
    from bayescal.frequentist import MLEBoundaryError
    from bayescal.frequentist import judge_discrimination_btl as twin
    from bayescal.models import judge_discrimination_btl as jd

    data, truth, source = _demo_data(args.data_dir, args.seed)
    print(f"bayescal {bc.__version__} — judge-discrimination BTL (Xu et al. 2026, seed 002)")
    print(f"data: {source}")
    print(f"      {data}")
    ident = identify.check(data)
    print(f"      comparison graph connected: {ident.connected}; MLE exists (Zermelo): "
          f"{ident.mle_exists}\n")
    fits = {}
    t0 = time.perf_counter()
    try:
        fits["mle"] = twin.fit(data, information=args.information)
        print(f"MLE (twin, Wald from {args.information} information): "
              f"{time.perf_counter() - t0:.2f} s")
    except (MLEBoundaryError, bc.IdentificationError) as err:
        print(f"MLE: not reported — {err}")
    model = jd.build(data)
    t0 = time.perf_counter()
    fits["map"] = bc.fit(model, "map")
    print(f"MAP (PyMC, default priors): {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bc.DiagnosticWarning)
        post = bc.fit(model, "nuts", draws=args.draws, tune=args.tune, chains=args.chains,
                      random_seed=args.seed, nuts_sampler=args.sampler,
                      progressbar=not args.no_progress)
    fits["nuts"] = post
    print(f"NUTS ({args.sampler}, {args.chains} chains x {args.draws} draws after {args.tune} "
          f"tuning): {time.perf_counter() - t0:.2f} s\n")
    table = bc.compare(*fits.values(), prob=args.prob, truth=truth)
    methods = [m for m in ("mle", "map", "nuts") if m in fits]
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 40)
    view = _leaderboard(table, methods, sort_by="nuts")
    if truth is not None:
        view["truth"] = table["truth"].reindex(view.index).map(lambda v: f"{v:.3f}")
    print(f"Leaderboard and judge discriminations ({args.prob:.0%} intervals: "
          "MLE Wald, NUTS equal-tailed; MAP is a point):")
    print(view.to_string())
    print("\nSampler diagnostics (identified quantities):")
    print(bc.diagnose(post, warn=False).to_string())
    for w in caught:
        print(f"WARNING: {w.message}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    if args.model == "low-rank-judges":
        return _fit_low_rank(args)
    import bayescal as bc
    from bayescal.data import Comparisons
    from bayescal.frequentist import judge_discrimination_btl as twin

    frame = pd.read_csv(args.file)
    data = Comparisons.from_frame(
        frame, item_a=args.item_a, item_b=args.item_b, outcome=args.outcome, judge=args.judge,
        order=args.order, count=args.count,
    )
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    discrimination = not args.unweighted
    if args.method == "mle":
        result = twin.fit(data, discrimination=discrimination, information=args.information)
        table = result.summary(args.prob)
        if out is not None:
            result.to_netcdf(out / "estimate.nc")
    else:
        from bayescal.models import judge_discrimination_btl as jd

        model = jd.build(data, discrimination=discrimination)
        result = bc.fit(model, args.method, draws=args.draws, tune=args.tune, chains=args.chains,
                        random_seed=args.seed, nuts_sampler=args.sampler,
                        progressbar=args.method == "nuts" and not args.no_progress)
        table = bc.summarize(result, args.prob)
        if out is not None:
            result.to_netcdf(out / "posterior.nc")
        if args.method == "nuts":
            print(bc.diagnose(result, warn=True).to_string(), file=sys.stderr)
    pd.set_option("display.width", 200)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if out is not None:
        table.to_csv(out / "summary.csv")
        saved = out / ("estimate.nc" if args.method == "mle" else "posterior.nc")
        print(f"wrote {out / 'summary.csv'} and {saved}", file=sys.stderr)
    return 0


def _mean(args: argparse.Namespace) -> int:
    from bayescal.data import Labels
    from bayescal.frequentist import judge_mean

    frame = pd.read_csv(args.file)
    labels = Labels.from_frame(frame, human=args.human, judge=args.judge, labelled=args.labelled)
    table = judge_mean.estimate(labels, prob=args.prob)
    pd.set_option("display.width", 200)
    print(f"{labels}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayescal",
        description="Calibrated LLM-as-a-judge evaluations: Bayesian models and frequentist twins.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def sampling(p: argparse.ArgumentParser, draws: int) -> None:
        p.add_argument("--draws", type=int, default=draws)
        p.add_argument("--tune", type=int, default=draws)
        p.add_argument("--chains", type=int, default=4)
        p.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"],
                       help="NUTS implementation (default nutpie, measured faster)")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--prob", type=float, default=0.95, help="interval probability")
        p.add_argument("--no-progress", action="store_true", help="hide the sampling progress bar")
        p.add_argument("--information", default="expected",
                       choices=["expected", "observed", "sandwich"],
                       help="Wald covariance of the MLE (default: expected, the paper's)")

    demo = sub.add_parser("demo", help="fit MLE, MAP and NUTS and print the comparison table")
    demo.add_argument("data_dir", nargs="?", default=None,
                      help="folder holding ppr-chatbot-arena/ (default: simulated data)")
    sampling(demo, 1000)
    demo.set_defaults(func=_demo)

    fit = sub.add_parser("fit", help="fit a model to a CSV of verdicts")
    fit.add_argument("model", choices=_MODELS)
    fit.add_argument("file", help="CSV with one row per verdict")
    fit.add_argument("--method", default="nuts", choices=["mle", "map", "nuts"])
    fit.add_argument("--out", default=None,
                     help="folder for summary.csv and posterior.nc (estimate.nc for mle)")
    fit.add_argument("--unweighted", action="store_true", help="fix every discrimination at 1")
    fit.add_argument("--rank", type=int, default=None,
                     help="low-rank-judges: number of disagreement factors r (required)")
    fit.add_argument("--no-order-effects", action="store_true",
                     help="low-rank-judges: pool the display orders, b = 0 (DIAL-noPos)")
    for flag, default in (("item-a", "item_a"), ("item-b", "item_b"), ("outcome", "outcome"),
                          ("judge", "judge"), ("order", "order"), ("count", "count")):
        fit.add_argument(f"--{flag}", default=default, help=f"column name (default {default})")
    sampling(fit, 1000)
    fit.set_defaults(func=_fit)

    mean = sub.add_parser("mean", help="estimate a mean under a noisy judge (seed 001)")
    mean.add_argument("file", help="CSV with one row per item")
    mean.add_argument("--human", required=True, help="column of human labels")
    mean.add_argument("--judge", required=True, help="column of judge labels")
    mean.add_argument("--labelled", default=None,
                      help="boolean column marking human-labelled rows (default: non-missing)")
    mean.add_argument("--prob", type=float, default=0.9)
    mean.set_defaults(func=_mean)
    return parser


def _fit_low_rank(args: argparse.Namespace) -> int:
    """``bayescal fit low-rank-judges FILE --rank r``: DIAL's LLM-only fit (twin, MAP or NUTS)."""
    import bayescal as bc
    from bayescal.data import Comparisons, DataError
    from bayescal.frequentist import low_rank_judges as twin

    if args.rank is None or args.rank < 1:
        raise DataError("low-rank-judges needs --rank r with 1 ≤ r ≤ min(judges − 1, items − 2)")
    frame = pd.read_csv(args.file)
    order_effects = not args.no_order_effects
    data = Comparisons.from_frame(
        frame, item_a=args.item_a, item_b=args.item_b, outcome=args.outcome, judge=args.judge,
        order=args.order if order_effects else None, count=args.count,
    )
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    if args.method == "mle":
        result = twin.fit(data, args.rank, order_effects=order_effects,
                          information=args.information)
        table = result.summary(args.prob)
        for note in result.info["notes"].values():
            print(f"note: {note}", file=sys.stderr)
    else:
        from bayescal.models import low_rank_judges as lrm

        model = lrm.build(data, rank=args.rank, order_effects=order_effects)
        result = bc.fit(model, args.method, draws=args.draws, tune=args.tune, chains=args.chains,
                        random_seed=args.seed, nuts_sampler=args.sampler,
                        progressbar=args.method == "nuts" and not args.no_progress)
        if args.method == "nuts":
            result = lrm.canonical_factors(result)
            print(bc.diagnose(result, warn=True).to_string(), file=sys.stderr)
        table = bc.summarize(result, args.prob)
        if out is not None:
            result.to_netcdf(out / "posterior.nc")
    pd.set_option("display.width", 200)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if out is not None:
        table.to_csv(out / "summary.csv")
        print(f"wrote {out / 'summary.csv'}", file=sys.stderr)
    return 0


_MODELS += ("low-rank-judges",)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bayescal`` command."""
    args = _parser().parse_args(argv)
    from bayescal.data import DataError

    try:
        return int(args.func(args))
    except (DataError, FileNotFoundError) as err:
        print(f"bayescal: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
