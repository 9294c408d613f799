"""The ``bayescal`` command: ``demo``, ``fit`` and ``mean``."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where used, so that `bayescal --help` answers at once
    import pandas as pd

__all__ = ["main"]

_MODELS = ("judge-discrimination-btl", "order-effect-btl", "low-rank-judges",
           "human-calibration")


# ---------------------------------------------------------------- validation before any fit
# Every subcommand validates its arguments before fitting: value checks run as argparse types,
# column checks right after the file is read. Options are named like the library arguments they
# feed (``--item-a`` -> ``item_a``), so a library error about an argument can name the option.
class _UsageError(Exception):
    """A command-line mistake: reported as one line with exit code 2."""

    def __init__(self, message: str, prog: str = "bayescal") -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """Every parser and subparser: one-line usage errors and a ``--debug`` option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.add_help:  # not on parent parsers built with add_help=False
            self.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                              help="show the traceback of an error")

    def error(self, message: str) -> Any:
        raise _UsageError(f"{message} (see {self.prog} --help)", self.prog)


def _flag(argument: str) -> str:
    """The option that feeds a library argument: ``item_a`` -> ``--item-a``."""
    return "--" + argument.replace("_", "-")


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"an interval probability strictly between 0 and 1 is needed (e.g. 0.95), got {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a positive whole number is needed, got {text!r}")
    return int(text)


def _seed(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"a non-negative whole number is needed, got {text!r}")
    return int(text)


def _existing_file(text: str) -> str:
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return text


def _existing_dir(text: str) -> str:
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {text!r}")
    return text


def _read_table(path: str) -> pd.DataFrame:
    """The input table as text, nothing guessed (:func:`bayescal.io.read_table`); a file that
    cannot be read is a DataError naming it (one line, exit code 2)."""
    from bayescal.io import read_table

    return read_table(path)[0]


def _given(args: argparse.Namespace, arguments: Sequence[str]) -> dict[str, Any]:
    """Library keyword arguments for the options the user typed; the others keep the library's
    defaults (so an optional column left at its default may be absent)."""
    return {a: getattr(args, a) for a in arguments if getattr(args, a) is not None}


def _check_columns(
    frame: pd.DataFrame, path: str, reader: Callable[..., Any], given: dict[str, Any],
    arguments: Sequence[str],
) -> None:
    """Refuse, naming the options, any column ``reader`` would need that the file lacks."""
    from bayescal.data.normalize import _column_problems

    params = inspect.signature(reader).parameters
    named = {a: given.get(a, params[a].default) for a in arguments}
    problems = _column_problems(frame, named)
    if not problems:
        return
    parts = []
    for argument, name, near in problems:
        part = (f"{_flag(argument)} {name}" if argument in given
                else f"{_flag(argument)} (default {name!r})")
        if near:
            part += (f" ({', '.join(map(repr, near))} differs only by surrounding spaces or "
                     f"case: pass {_flag(argument)} with that name)")
        parts.append(part)
    raise _UsageError(f"missing column(s) in {path}: {'; '.join(parts)}; columns are "
                      f"{list(frame.columns)}")


def _check_sampler(args: argparse.Namespace) -> None:
    import importlib.util

    if args.sampler == "nutpie" and importlib.util.find_spec("nutpie") is None:
        raise _UsageError("--sampler nutpie: nutpie is not installed; install it or pass "
                          "--sampler pymc")


# ---------------------------------------------------------------- covariance flags
# --information, --cluster and --correction feed the twins' information=, cluster= and
# correction=; bayescal.frequentist.covariance.request decides what they mean and refuses, before
# any fit, a kind the model does not offer or a key with a kind that uses none. The models'
# kinds and built-in keys come from the registry.
_COVARIANCE = ("information", "cluster", "correction")


def _covariance_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--information", default=None,
                   choices=["auto", "expected", "observed", "sandwich", "cluster"],
                   help=f"covariance of the Wald intervals of {what} (default auto: cluster when "
                   "--cluster names a key, else sandwich when the verdicts hold ties or soft "
                   "outcomes, else expected)")
    p.add_argument("--cluster", default=None, metavar="KEY",
                   help="cluster key for cluster-robust intervals (selects --information "
                   "cluster): a column of the file (a battle or question id) or a built-in key "
                   "(judge_pair: judge x item pair; pair: item pair)")
    p.add_argument("--correction", default=None, choices=["CR1", "CR0"],
                   help="small-sample factor of the cluster-robust covariance: CR1, G/(G - 1) "
                   "with G clusters (default), or CR0, none (DIAL's authors)")


def _covariance_given(args: argparse.Namespace) -> list[str]:
    """The covariance flags the user typed."""
    return [_flag(a) for a in _COVARIANCE if getattr(args, a, None) is not None]


def _cluster_column(args: argparse.Namespace, frame: pd.DataFrame, path: str,
                    keys: Sequence[str], model: str) -> str | None:
    """The column ``--cluster`` names (None for a built-in key or no key); refuses a name that
    is neither, or both."""
    key = args.cluster
    if key is None:
        return None
    column, builtin = key in frame.columns, key in keys
    if column and builtin:
        raise _UsageError(f"--cluster {key}: both a column of {path} and a built-in cluster key "
                          f"of {model}; rename the column to use it")
    if not (column or builtin):
        offer = f"built-in keys are {list(keys)}" if keys else f"{model} has no built-in key"
        raise _UsageError(f"--cluster {key}: not a column of {path} (columns are "
                          f"{list(frame.columns)}) and not a built-in cluster key ({offer})")
    return key if column else None


def _covariance(args: argparse.Namespace, model: str, data: Any,
                prog: str = "bayescal fit") -> dict[str, Any]:
    """The twin's ``information``, ``cluster`` and ``correction``, checked before fitting by the
    library's :func:`bayescal.frequentist.covariance.request` (a refusal names the flag)."""
    from bayescal import registry
    from bayescal.frequentist import covariance

    entry = registry.by_cli(model)
    given = {"information": args.information or "auto", "cluster": args.cluster,
             "correction": args.correction}
    try:
        covariance.request(**given, supported=entry.information, data_key=data.cluster_key,
                           builtin_keys=entry.cluster_keys, quasi=data.quasi_likelihood,
                           model=model)
    except ValueError as err:
        raise _UsageError(_as_flags(str(err)), prog) from err
    return given


def _as_flags(text: str) -> str:
    """``information='cluster'`` -> ``--information cluster`` in a library message."""
    return re.sub(r"\b(information|cluster|correction)=(['\"]?)([^'\",;\s)]*)\2",
                  lambda m: f"{_flag(m[1])} {m[3]}", text)


def _refuse_covariance(args: argparse.Namespace, why: str, prog: str) -> None:
    given = _covariance_given(args)
    if given:
        raise _UsageError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                          f"apply {why}", prog)


def _raised_by_bayescal(err: BaseException) -> bool:
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith("bayescal")


def _report(err: BaseException, args: argparse.Namespace | None) -> str | None:
    """One line for an error the user can fix (None for a bug, which keeps its traceback)."""
    from bayescal.data import DataError

    if isinstance(err, _UsageError):
        return f"{err.prog}: error: {err}"
    if not (isinstance(err, (DataError, OSError))
            or (isinstance(err, ValueError) and _raised_by_bayescal(err))):
        return None
    text = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
    if args is not None:  # the library's "fractional=True" is this command's "--fractional"
        text = re.sub(r"\b([a-z_]+)=True\b",
                      lambda m: _flag(m[1]) if hasattr(args, m[1]) else m[0], text)
    argument = getattr(err, "argument", None)
    if argument is not None and args is not None and hasattr(args, argument):
        value = getattr(args, argument)
        text = f"{_flag(argument)}{'' if value is None else f' {value}'}: {text}"
    return f"bayescal: error: {text}"


def _discrimination_view(table: pd.DataFrame, methods: Sequence[str], sort_by: str) -> pd.DataFrame:
    """Discriminations of a :func:`bayescal.compare` table, largest first: one readable column
    per method (``estimate [lower, upper]``, as in the leaderboard) and the width ratios."""
    import pandas as pd

    from bayescal.tables import _cell

    ordered = table[table["parameter"] == "discrimination"].sort_values(
        f"{sort_by}_estimate", ascending=False)
    nan = pd.Series(float("nan"), index=ordered.index)
    view = pd.DataFrame(index=ordered.index)
    for m in methods:
        view[m] = [_cell(e, a, b, ".3f") for e, a, b in
                   zip(ordered[f"{m}_estimate"], ordered.get(f"{m}_lower", nan),
                       ordered.get(f"{m}_upper", nan), strict=True)]
    for c in (c for c in ordered.columns if c.startswith("width_ratio_")):
        view[c.replace("width_ratio_", "width ")] = ordered[c].map(
            lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return view


def _demo_data(args: argparse.Namespace, data_dir: str | None, seed: int):
    from bayescal import datasets, registry, simulate
    from bayescal.data import Comparisons

    keys = registry.by_cli("judge-discrimination-btl").cluster_keys
    if data_dir is None:
        if args.cluster is not None and args.cluster not in keys:
            raise _UsageError(f"--cluster {args.cluster}: the simulated data have no columns; "
                              f"built-in keys are {list(keys)}", "bayescal demo")
        truth = simulate.judge_discrimination_truth(12, 6, log_discrimination_sd=0.8,
                                                    random_seed=seed)
        data = simulate.judge_discrimination_btl(truth, 30_000, random_seed=seed + 1)
        source = ("simulated: 12 models, 6 judges of unequal discrimination, 30,000 verdicts "
                  f"(seed 002 design, seed {seed})")
        return data, truth, source
    frame = datasets.ppr_chatbot_arena(data_dir)
    column = _cluster_column(args, frame, "ppr-chatbot-arena", keys, "judge-discrimination-btl")
    data = Comparisons.from_frame(frame, humans=["human"], cluster=column)
    source = (f"Chatbot Arena (ppr-chatbot-arena): {len(frame):,} verdicts, human crowd + "
              "3 LLM judges")
    return data, None, source


def _demo(args: argparse.Namespace) -> int:
    import pandas as pd

    if getattr(args, "dial", False):
        return _demo_dial(args)
    import bayescal as bc
    from bayescal import identify
    from bayescal.frequentist import MLEBoundaryError
    from bayescal.frequentist import judge_discrimination_btl as twin
    from bayescal.models import judge_discrimination_btl as jd

    _check_sampler(args)
    data, truth, source = _demo_data(args, args.data_dir, args.seed)
    covariance = _covariance(args, "judge-discrimination-btl", data, "bayescal demo")
    print(f"bayescal {bc.__version__} — judge-discrimination BTL (Xu et al. 2026, seed 002)")
    print(f"data: {source}")
    print(f"      {data}")
    ident = identify.check(data)
    print(f"      comparison graph connected: {ident.connected}; MLE exists (Zermelo): "
          f"{ident.mle_exists}\n")
    fits = {}
    t0 = time.perf_counter()
    try:
        fits["mle"] = twin.fit(data, **covariance)
        kind = fits["mle"].info.get("information")
        print(f"MLE (twin, Wald from the {kind} covariance): "
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
                      progressbar=False if args.no_progress else None)
    fits["nuts"] = post
    print(f"NUTS ({args.sampler}, {args.chains} chains x {args.draws} draws after {args.tune} "
          f"tuning): {time.perf_counter() - t0:.2f} s\n")
    table = bc.compare(*fits.values(), prob=args.prob, truth=truth)
    methods = [m for m in ("mle", "map", "nuts") if m in fits]
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 40)
    _print_leaderboard(fits, args.prob, truth, sort_by="nuts")
    view = _discrimination_view(table, methods, sort_by="nuts")
    if truth is not None:
        view["truth"] = table["truth"].reindex(view.index).map(lambda v: f"{v:.3f}")
    print("\nJudge discriminations (same intervals):")
    print(view.to_string())
    if args.out:
        _write_figures(Path(args.out), fits, args.prob, truth, sort_by="nuts")
    print("\nSampler diagnostics (identified quantities):")
    print(bc.diagnose(post, warn=False).to_string())
    for w in caught:
        print(f"WARNING: {w.message}")
    return 0


def _demo_dial(args: argparse.Namespace) -> int:
    """``bayescal demo --dial``: DIAL end to end on simulated judges and a few humans."""
    import numpy as np
    import pandas as pd

    import bayescal as bc
    from bayescal import simulate_dial as sd
    from bayescal.data import Comparisons
    from bayescal.frequentist import dial_baselines as db
    from bayescal.frequentist import human_calibration as hc
    from bayescal.frequentist import low_rank_judges as lr
    from bayescal.frequentist import order_effect_btl as oe
    from bayescal.models import human_calibration as hm

    if args.data_dir is not None:
        raise _UsageError("demo --dial runs on simulated data; drop the data folder",
                          "bayescal demo")
    _refuse_covariance(args, "to demo --dial, whose intervals follow DIAL's authors (clustered "
                       "by judge and pair)", "bayescal demo")
    par = sd.truth(10, 6, 1, random_seed=args.seed)
    par["s_h"] = par["mu"] + 0.3 * par["V"][:, 0]  # humans a little off the judges' consensus
    llm = sd.llm(par, 24_000, random_seed=args.seed + 3)
    human = sd.human(par, 300, random_seed=args.seed + 4)
    pd.set_option("display.width", 200)
    print(f"bayescal {bc.__version__} — DIAL (seed 000): position-debiased judges calibrated to "
          "human preferences")
    print(f"LLM verdicts: {llm}\nhuman comparisons: {human}\n"
          "(simulated: N = 10 models, K = 6 judges, rank 1, canonical item shown first w.p. "
          "0.75; humans s_h = μ + 0.3 V)\n")
    t0 = time.perf_counter()
    order = oe.fit(llm, information="cluster", cluster="judge_pair", correction="CR0")
    tests = oe.order_effect_tests(order, pairwise=False)
    tests["truth"] = par["b"]
    print(f"1. Order effects b_k (per-judge BTL, cell-clustered; {time.perf_counter() - t0:.2f} "
          "s):")
    print(tests.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    t0 = time.perf_counter()
    data = Comparisons.concat([llm, human], humans=["human"])
    low = lr.fit(llm, rank=1, information="cluster", cluster="judge_pair")
    cons = low.summary(args.prob)
    cons = cons[cons["parameter"] == "consensus_loading"]
    print(f"\n2. Low-rank consensus (r = 1; {time.perf_counter() - t0:.2f} s): judge loadings γ_k")
    print(cons[["estimate", "lower", "upper"]].assign(truth=par["gamma"]).to_string(
        float_format=lambda v: f"{v:.3f}"))
    t0 = time.perf_counter()
    table, est = hc.gacv(data, rank=1)
    print(f"\n3. GACV path over λ ({time.perf_counter() - t0:.2f} s; λ₀ = n_l/n_h = "
          f"{llm.n_rows / human.n_rows:g} is the joint MLE):")
    print(table.drop(columns="seconds").to_string(index=False, float_format=lambda v: f"{v:.5g}"))
    scores, _, _ = db.baselines(data, rank=1)
    lam = est.info["llm_weight"]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if lam == np.inf:
            model = hm.llm_stage(data, rank=1)
            first = bc.fit(model, "nuts", draws=args.draws, tune=args.tune,
                           chains=args.chains, random_seed=args.seed, nuts_sampler="pymc",
                           log_likelihood=False, check=False, initvals=hm.initvals(model))
            post = hm.cut_posterior(data, first, rank=1)
        else:
            model = hm.build(data, rank=1, llm_weight=lam)
            post = bc.fit(model, "nuts",
                          draws=args.draws, tune=args.tune, chains=args.chains,
                          random_seed=args.seed, nuts_sampler="pymc", check=False,
                          initvals=hm.initvals(model))
    t_nuts = time.perf_counter() - t0
    summ = est.summary(args.prob)
    rows = summ[summ["parameter"] == "human_ability"]
    draws = post["posterior"]["human_ability"]
    q = (1 - args.prob) / 2
    board = pd.DataFrame({
        "DIAL-Ada": rows["estimate"].to_numpy(),
        "interval": [f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(rows["lower"], rows["upper"],
                                                               strict=True)],
        "posterior": draws.mean(("chain", "draw")).values,
        "post. interval": [f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(
            draws.quantile(q, ("chain", "draw")).values,
            draws.quantile(1 - q, ("chain", "draw")).values, strict=True)],
        "Human-only": scores["Human"].to_numpy(),
        "Pooled": scores["Pooled"].to_numpy(),
        "truth s_h": par["s_h"],
    }, index=pd.Index(list(llm.items), name="model")).sort_values("DIAL-Ada", ascending=False)
    print(f"\n4. Calibrated leaderboard at λ̂ = {lam:g} ({args.prob:.0%}: MLE "
          f"{est.info['intervals']}; posterior: power posterior w = λ n_h/n_l, NUTS "
          f"{args.chains} x {args.draws}, {t_nuts:.1f} s):")
    print(board.to_string(float_format=lambda v: f"{v:.3f}"))
    i, j = np.triu_indices(10, 1)
    truth = par["s_h"]
    tau = {m: 2 * np.mean(np.sign(scores[m].to_numpy()[i] - scores[m].to_numpy()[j])
                          == np.sign(truth[i] - truth[j])) - 1
           for m in ("Human", "Pooled", "DIAL-Ada") if scores[m].notna().all()}
    print("\nKendall τ against the true human ranking: "
          + ", ".join(f"{m} {v:.3f}" for m, v in tau.items()))
    return 0


_VERDICT_COLUMNS = ("item_a", "item_b", "outcome", "judge", "order", "count")


def _fit(args: argparse.Namespace) -> int:
    import pandas as pd

    if args.model == "human-calibration":
        return _fit_human_calibration(args)
    if args.method != "mle":
        _refuse_covariance(args, f"to --method {args.method}: they set the covariance of the "
                           "twin's Wald intervals (--method mle)", "bayescal fit")
    if args.model == "low-rank-judges" and args.rank is None:
        raise _UsageError("fit low-rank-judges needs --rank r (1 <= r <= min(judges - 1, "
                          "items - 2))", "bayescal fit")
    import bayescal as bc
    from bayescal import registry
    from bayescal.data import Comparisons
    from bayescal.frequentist import judge_discrimination_btl as twin

    if args.method == "nuts":
        _check_sampler(args)
    frame = _read_table(args.file)
    columns = _given(args, _VERDICT_COLUMNS)
    _check_columns(frame, args.file, Comparisons.from_frame, columns, _VERDICT_COLUMNS)
    column = _cluster_column(args, frame, args.file, registry.by_cli(args.model).cluster_keys,
                             args.model)
    data = Comparisons.from_frame(frame, **columns, cluster=column, fractional=args.fractional)
    args.covariance = _covariance(args, args.model, data) if args.method == "mle" else {}
    if args.model == "order-effect-btl":
        return _fit_order_effect(args, data)
    if args.model == "low-rank-judges":
        return _fit_low_rank(args, data)
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    discrimination = not args.unweighted
    if args.method == "mle":
        result = twin.fit(data, discrimination=discrimination, **args.covariance)
        table = result.summary(args.prob)
        if out is not None:
            result.to_netcdf(out / "estimate.nc")
    else:
        from bayescal.models import judge_discrimination_btl as jd

        model = jd.build(data, discrimination=discrimination)
        result = bc.fit(model, args.method, draws=args.draws, tune=args.tune, chains=args.chains,
                        random_seed=args.seed, nuts_sampler=args.sampler,
                        progressbar=False if args.no_progress else None)
        table = bc.summarize(result, args.prob)
        if out is not None:
            result.to_netcdf(out / "posterior.nc")
        if args.method == "nuts":
            print(bc.diagnose(result, warn=True).to_string(), file=sys.stderr)
    pd.set_option("display.width", 200)
    board = _print_leaderboard({args.method: result}, args.prob, None, sort_by=args.method)
    rest = table[table["parameter"] != "ability"]
    if len(rest):
        print()
        print(rest.to_string(float_format=lambda v: f"{v:.4f}"))
    if out is not None:
        table.to_csv(out / "summary.csv")
        board.to_csv(out / "leaderboard.csv")
        _write_figures(out, {args.method: result}, args.prob, None, sort_by=args.method)
        saved = out / ("estimate.nc" if args.method == "mle" else "posterior.nc")
        print(f"wrote {out / 'summary.csv'} and {saved}", file=sys.stderr)
    return 0


def _fit_order_effect(args: argparse.Namespace, data) -> int:
    """``bayescal fit order-effect-btl``: DIAL model (1), its table and the Wald tests of b_k."""
    import pandas as pd

    import bayescal as bc
    from bayescal.frequentist import order_effect_btl as twin

    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    if args.method == "mle":
        result = twin.fit(data, **args.covariance)
        table = result.summary(args.prob)
    else:
        from bayescal.models import order_effect_btl as oe

        result = bc.fit(oe.build(data), args.method, draws=args.draws, tune=args.tune,
                        chains=args.chains, random_seed=args.seed, nuts_sampler=args.sampler,
                        progressbar=args.method == "nuts" and not args.no_progress)
        table = bc.summarize(result, args.prob)
        if out is not None:
            result.to_netcdf(out / "posterior.nc")
        if args.method == "nuts":
            print(bc.diagnose(result, warn=True).to_string(), file=sys.stderr)
    pd.set_option("display.width", 200)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.method == "mle":
        print(f"\nWald tests of the order effects ({result.info['information']} covariance; "
              "Holm within "
              "each family):")
        print(twin.order_effect_tests(result).to_string(
            index=False, float_format=lambda v: f"{v:.4g}"))
    if out is not None:
        table.to_csv(out / "summary.csv")
        print(f"wrote {out / 'summary.csv'}", file=sys.stderr)
    return 0


def _print_leaderboard(fits: dict, prob: float, truth, sort_by: str) -> pd.DataFrame:
    """The ability leaderboard, best first, as ``bayescal fit`` and ``bayescal demo`` print it."""
    import bayescal as bc
    from bayescal.tables import format_leaderboard

    board = bc.leaderboard(prob=prob, truth=truth, sort_by=sort_by, **fits)
    kinds = {"mle": "Wald", "nuts": "posterior equal-tailed", "map": "a point, no interval"}
    shown = "; ".join(f"{m}: {kinds.get(m, '')}" for m in fits)
    print(f"Leaderboard, best first ({prob:.0%} intervals — {shown}; rank [interval], 1 = best):")
    print(format_leaderboard(board).to_string())
    return board


def _write_figures(out: Path, fits: dict, prob: float, truth, sort_by: str) -> list[Path]:
    """PNGs of the fits in ``out``: forest, leaderboard, win probabilities, discriminations."""
    import matplotlib

    matplotlib.use("Agg")  # the command writes files; it never opens windows
    import matplotlib.pyplot as plt

    from bayescal import plots

    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "forest.png": lambda: plots.forest(prob=prob, truth=truth, **fits),
        "leaderboard.png": lambda: plots.leaderboard(prob=prob, truth=truth, sort_by=sort_by,
                                                     **fits),
        "win_probabilities.png": lambda: plots.win_probability_heatmap(fits[sort_by]),
    }
    if any("discrimination" in _variables(fit) for fit in fits.values()):
        figures["discriminations.png"] = lambda: plots.discriminations(prob=prob, truth=truth,
                                                                        **fits)
    written = []
    for name, draw in figures.items():
        figure = draw()
        figure.savefig(out / name, dpi=100)
        written.append(out / name)
        plt.close("all")
    print(f"wrote {', '.join(p.name for p in written)} in {out}", file=sys.stderr)
    return written


def _variables(fit) -> list[str]:
    """Variable names of a fit (posterior variables or Estimate parameters)."""
    import xarray as xr

    if isinstance(fit, xr.DataTree):
        return [str(v) for v in fit["posterior"].data_vars]
    return [str(v) for v in fit.params.data_vars]


def _mean(args: argparse.Namespace) -> int:
    import pandas as pd

    from bayescal.data import Labels
    from bayescal.frequentist import judge_mean

    frame = _read_table(args.file)
    columns = _given(args, ("human", "judge", "labelled"))
    _check_columns(frame, args.file, Labels.from_frame, columns, ("human", "judge", "labelled"))
    labels = Labels.from_frame(frame, **columns,
                               positive=_positive_value(frame, args.human, args.positive))
    table = judge_mean.estimate(labels, prob=args.prob)
    pd.set_option("display.width", 200)
    print(f"{labels}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def _positive_value(frame: pd.DataFrame, human: str, positive: str | None) -> object:
    """``--positive`` as the human column's type: a number for a numeric column."""
    import pandas as pd
    if positive is None or human not in frame or not pd.api.types.is_numeric_dtype(frame[human]):
        return positive
    try:
        return float(positive)
    except ValueError:
        return positive


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayescal",
        description="Calibrated LLM-as-a-judge evaluations: Bayesian models and frequentist twins.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def sampling(p: argparse.ArgumentParser, draws: int) -> None:
        p.add_argument("--draws", type=_positive_int, default=draws)
        p.add_argument("--tune", type=_positive_int, default=draws)
        p.add_argument("--chains", type=_positive_int, default=4)
        p.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"],
                       help="NUTS implementation (default nutpie, measured faster)")
        p.add_argument("--seed", type=_seed, default=1)
        p.add_argument("--prob", type=_probability, default=0.95, help="interval probability")
        p.add_argument("--no-progress", action="store_true", help="hide the sampling progress bar")

    demo = sub.add_parser("demo", help="fit MLE, MAP and NUTS and print the comparison table")
    demo.add_argument("data_dir", nargs="?", default=None, type=_existing_dir,
                      help="folder holding ppr-chatbot-arena/ (default: simulated data)")
    sampling(demo, 1000)
    demo.add_argument("--out", default=None, help="folder for the PNG figures")
    demo.add_argument("--dial", action="store_true",
                      help="the DIAL pipeline (seed 000): order effects, low-rank consensus, "
                      "GACV, calibrated leaderboard")
    _covariance_options(demo, "the MLE")
    demo.set_defaults(func=_demo)

    fit = sub.add_parser("fit", help="fit a model to a CSV of verdicts")
    fit.add_argument("model", choices=_MODELS)
    fit.add_argument("file", type=_existing_file, help="CSV with one row per verdict")
    fit.add_argument("--method", default="nuts", choices=["mle", "map", "nuts"])
    fit.add_argument("--out", default=None,
                     help="folder for summary.csv, leaderboard.csv, the PNG figures and "
                          "posterior.nc (estimate.nc for mle)")
    fit.add_argument("--unweighted", action="store_true", help="fix every discrimination at 1")
    fit.add_argument("--fractional", action="store_true",
                     help="accept soft outcomes in [0, 1] and fractional counts (weights)")
    fit.add_argument("--rank", type=_positive_int, default=None,
                     help="number of disagreement factors r (low-rank-judges: required; "
                     "human-calibration: default 1)")
    fit.add_argument("--no-order-effects", action="store_true",
                     help="low-rank-judges: pool the display orders, b = 0 (DIAL-noPos)")
    for flag, default in (("item-a", "item_a"), ("item-b", "item_b"), ("outcome", "outcome"),
                          ("judge", "judge"), ("order", "order"), ("count", "count")):
        fit.add_argument(f"--{flag}", default=None, help=f"column name (default {default})")
    _covariance_options(fit, "the MLE (--method mle; human-calibration always)")
    sampling(fit, 1000)
    _human_calibration_options(fit)
    fit.set_defaults(func=_fit)

    mean = sub.add_parser("mean", help="estimate a mean under a noisy judge (seed 001)")
    mean.add_argument("file", type=_existing_file, help="CSV with one row per item")
    mean.add_argument("--human", required=True, help="column of human labels")
    mean.add_argument("--judge", required=True, help="column of judge labels")
    mean.add_argument("--labelled", default=None,
                      help="boolean column marking human-labelled rows (default: non-missing)")
    mean.add_argument("--prob", type=_probability, default=0.9)
    mean.add_argument("--positive", default=None,
                      help="human label value meaning Y = 1, for a binary label not coded 0/1 "
                      "(e.g. 2 for 1/2 codes, yes for yes/no); judge columns in the same coding "
                      "are mapped too")
    mean.set_defaults(func=_mean)
    _calibrate_parser(sub)
    return parser


def _fit_low_rank(args: argparse.Namespace, data) -> int:
    """``bayescal fit low-rank-judges FILE --rank r``: DIAL's LLM-only fit (twin, MAP or NUTS)."""
    import pandas as pd

    import bayescal as bc
    from bayescal.frequentist import low_rank_judges as twin

    order_effects = not args.no_order_effects
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    if args.method == "mle":
        result = twin.fit(data, rank=args.rank, order_effects=order_effects,
                          **args.covariance)
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


# ------------------------------------------------------------------ calibrate (seed 003)
def _calibrate(args: argparse.Namespace) -> int:
    """Learn a calibration map from ANCHORS.csv and apply it to the judge scores of SCORES.csv."""
    import json

    import numpy as np
    import pandas as pd

    from bayescal.calibration.protocol import default_methods
    from bayescal.data import DataError, Ratings

    lo, hi = args.scale
    methods = default_methods(distributions=args.dist is not None)
    if args.method not in methods:
        raise DataError(f"unknown method {args.method!r}; choose one of {sorted(methods)}")
    dist = args.dist.split(",") if args.dist else None
    anchors_df = pd.read_csv(args.anchors)
    scores_df = pd.read_csv(args.scores)
    judge_col = None if dist is not None and args.judge not in scores_df else args.judge
    anchors = Ratings.from_frame(anchors_df, scale=(lo, hi), judge=judge_col, human=args.human,
                                 judge_dist=dist)
    if not anchors.rated.all():
        raise DataError(f"{args.anchors}: rows {list(anchors.index[~anchors.rated][:5])} have no "
                        f"human score in column {args.human!r}; every anchor needs one")
    targets = Ratings.from_frame(scores_df, scale=(lo, hi), judge=judge_col, human=None,
                                 judge_dist=dist)
    model = methods[args.method]((lo, hi))
    takes_dist = model.accepts_distributions and anchors.judge_dist is not None
    model.fit(anchors.judge_dist if takes_dist else anchors.judge, anchors.human)
    calibrated = model.predict(targets.judge_dist if takes_dist else targets.judge)
    out = scores_df.assign(calibrated=calibrated,
                           calibrated_rounded=np.clip(np.floor(calibrated + 0.5), lo, hi)
                           .astype(int))
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"wrote {len(out)} calibrated scores to {args.out} ({args.method}, "
              f"{anchors.n} anchors)", file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False)
    if args.state:
        Path(args.state).write_text(json.dumps(model.to_dict()))
    return 0


def _calibrate_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cal = sub.add_parser("calibrate", help="calibrate judge scores to human scores (seed 003)")
    cal.add_argument("anchors", help="CSV of anchors: judge and human score per item")
    cal.add_argument("scores", help="CSV of judge scores to calibrate")
    cal.add_argument("--scale", nargs=2, type=int, required=True, metavar=("LOW", "HIGH"),
                     help="declared integer scale, e.g. --scale 1 5")
    cal.add_argument("--method", default="sqm",
                     help="sqm (mid-distribution, default), sqm_upper (the paper's formula), "
                          "isotonic, platt, few_shot, ... (see bayescal.calibration.protocol)")
    cal.add_argument("--judge", default="judge", help="judge score column (default judge)")
    cal.add_argument("--human", default="human", help="human score column (default human)")
    cal.add_argument("--dist", default=None,
                     help="comma-separated judge probability columns, one per scale point "
                          "(enables sqm_predictive and contrastive_rollout)")
    cal.add_argument("--out", default=None, help="output CSV (default: standard output)")
    cal.add_argument("--state", default=None, help="also save the fitted state as JSON")
    cal.set_defaults(func=_calibrate)


# ---------------------------------------------------------------- DIAL human calibration (issue 9)
def _llm_weight(text: str) -> float | str:
    if text.strip().lower() == "gacv":
        return "gacv"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(
            f"a weight λ ≥ 0 (0 = human only, inf = anchored) or 'gacv' is needed, got {text!r}")
    return value


def _human_calibration_options(fit: argparse.ArgumentParser) -> None:
    """Options of ``fit human-calibration`` (added only where another model has not)."""
    have = fit._option_string_actions
    if "--rank" not in have:
        fit.add_argument("--rank", type=_positive_int, default=None,
                         help="number of disagreement factors r (human-calibration: default 1)")
    fit.add_argument("--human", type=_existing_file, default=None,
                     help="human-calibration: CSV of human comparisons (same column options; "
                     "order and judge ignored)")
    fit.add_argument("--space", default="consensus", choices=["consensus", "full"],
                     help="human-calibration: calibration basis M = μ (consensus) or W = [μ, V]")
    fit.add_argument("--llm-weight", type=_llm_weight, default="gacv",
                     help="human-calibration: λ (a number ≥ 0, inf) or 'gacv' (default)")


def _fit_human_calibration(args: argparse.Namespace) -> int:
    """``bayescal fit human-calibration LLM.csv --human HUMAN.csv``: DIAL (11)/(12) with GACV."""
    import pandas as pd

    from bayescal.data import Comparisons
    from bayescal.frequentist import human_calibration as hc

    prog = "bayescal fit"
    if args.human is None:
        raise _UsageError("human-calibration needs --human HUMAN.csv (the human comparisons)",
                          prog)
    if args.method != "mle":
        print("note: human-calibration runs the frequentist twin (GACV and the joint sandwich); "
              f"--method {args.method} is not offered for it", file=sys.stderr)
    frame = _read_table(args.file)
    human_frame = _read_table(args.human)
    columns = _given(args, ("item_a", "item_b", "outcome", "judge", "order", "count"))
    _check_columns(frame, args.file, Comparisons.from_frame, columns,
                   ("item_a", "item_b", "outcome", "judge", "order", "count"))
    human_cols = {k: v for k, v in columns.items() if k in ("item_a", "item_b", "outcome",
                                                             "count")}
    _check_columns(human_frame, args.human, Comparisons.from_frame, human_cols,
                   ("item_a", "item_b", "outcome", "count"))
    from bayescal import registry

    column = _cluster_column(args, frame, args.file, registry.get("human_calibration").cluster_keys,
                             "human-calibration")
    llm = Comparisons.from_frame(frame, **columns, cluster=column, fractional=args.fractional)
    hjudge = columns.get("judge", "judge")
    if hjudge not in human_frame:  # one human judge, named so
        human_frame = human_frame.assign(**{hjudge: "human"})
    if column is not None and column not in human_frame:
        raise _UsageError(f"--cluster {column}: {args.human} has no column {column!r}; give the "
                          "human comparisons the key too (each sample is clustered on its own), "
                          "or use a built-in key", prog)
    human = Comparisons.from_frame(human_frame, **human_cols, order=None, judge=hjudge,
                                   cluster=column, fractional=args.fractional)
    shared = sorted(set(human.judges) & set(llm.judges))
    if shared:
        raise _UsageError(f"human-calibration: judge label(s) {shared} appear in both {args.file} "
                          f"and {args.human}; the human judges must have their own labels", prog)
    # one data set, the human judge(s) marked: DIAL's human is a judge like any other
    data = Comparisons.concat([llm, human], humans=list(human.judges))
    covariance = _covariance(args, "human-calibration", data, prog)
    rank = 1 if args.rank is None else args.rank
    if args.llm_weight == "gacv":
        table, est = hc.gacv(data, rank=rank, space=args.space, **covariance)
    else:
        table, est = None, hc.fit(data, rank=rank, space=args.space,
                                  llm_weight=args.llm_weight, **covariance)
    pd.set_option("display.width", 200)
    if table is not None:
        print(f"GACV over λ (n_l = {llm.n_rows:g}, n_h = {human.n_rows:g}; λ = n_l/n_h is the "
              "joint MLE):")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    summary = est.summary(args.prob)
    board = summary[summary["parameter"] == "human_ability"].sort_values("estimate",
                                                                        ascending=False)
    print(f"\nCalibrated human scores at λ = {est.info['llm_weight']:g} ({args.space} space, "
          f"r = {rank}; intervals: {est.info['intervals']}):")
    print(board.to_string(float_format=lambda v: f"{v:.4f}"))
    if "order_effect" in est.params:
        print("\nOrder effects b_k:")
        print(summary[summary["parameter"] == "order_effect"].to_string(
            float_format=lambda v: f"{v:.4f}"))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        summary.to_csv(out / "summary.csv")
        if table is not None:
            table.to_csv(out / "gacv.csv", index=False)
        print(f"wrote {out / 'summary.csv'}" + (f" and {out / 'gacv.csv'}" if table is not None
                                                 else ""), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bayescal`` command.

    Arguments are validated before any fit. An error the user can fix (a bad option, a missing
    file or column, bad data, an estimate the data cannot identify) is one line on stderr
    naming the option, with exit code 2; ``--debug`` prints the traceback instead.
    """
    args = None
    try:
        args = _parser().parse_args(argv)
        return int(args.func(args))
    except Exception as err:
        line = _report(err, args)
        if line is None:
            raise
        if getattr(args, "debug", False):
            traceback.print_exc()
        else:
            print(line, file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
