"""The ``bayescal`` command: ``fit`` (every registered model), ``demo``, ``mean``, ``calibrate``.

``bayescal fit MODEL FILE`` is generated from the registry (:mod:`bayescal.registry`): each
model's flags and ``--help`` come from its entry's options (type, default, help, choices), its
covariance flags from its kinds and built-in keys (meant as
:func:`bayescal.frequentist.covariance.request` decides), its outputs from its score, judge
parameters and figures. Every argument is checked before any fitting, and a flag that does not
apply to the model or to the method is refused in one line naming it (exit 2), never ignored.

Outputs: with ``--out RUN_DIR`` a run is written as one folder, whole or not at all
(:mod:`bayescal.runs`: ``summary.csv``, ``leaderboard.csv``, ``judges.csv``, ``estimate.nc`` or
``posterior.nc``, figures, ``run.json``); ``--json`` prints the result for scripts and nothing
else on stdout. Library warnings are collected, printed once each as ``warning: ...`` and kept
in ``run.json``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bayescal import registry

if TYPE_CHECKING:  # pandas is imported where used, so that `bayescal --help` answers at once
    import pandas as pd

    from bayescal.runs import RunWriter

__all__ = ["main"]

#: The one default interval probability (bayescal.schema.DEFAULT_PROB; a test keeps them equal
#: without importing numpy here).
DEFAULT_PROB = 0.95
_SAMPLING_DEFAULTS = {"draws": 1000, "tune": 1000, "chains": 4, "sampler": "nutpie", "seed": 1}


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
    """Every parser: one-line usage errors, a ``--debug`` option, no abbreviated flags (a
    prefix silently taken for another flag would be an argument ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        if self.add_help:
            self.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                              help="show the traceback of an error")

    def error(self, message: str) -> Any:
        raise _UsageError(f"{message} (see {self.prog} --help)", self.prog)


class _ModelParser(_Parser):
    """``bayescal fit MODEL``: refuses, naming it, a flag that is not this model's."""

    siblings: ClassVar[dict[str, argparse.ArgumentParser]] = {}

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        for token in args or ():
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if token.startswith("--") and name not in self._option_string_actions:
                raise _UsageError(self._not_mine(name), self.prog)
        return super().parse_known_args(args, namespace)

    def _not_mine(self, flag: str) -> str:
        model = self.prog.rsplit(" ", 1)[-1]
        owners = [m for m, p in self.siblings.items() if flag in p._option_string_actions]
        where = f" (an option of {', '.join(owners)})" if owners else ""
        return f"{flag} does not apply to {model}{where}; its flags: {self.prog} --help"


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


def _feature_pair(text: str) -> tuple[str, str]:
    """``A_COLUMN:B_COLUMN`` of ``--feature``."""
    parts = [t.strip() for t in text.split(":")]
    if len(parts) != 2 or not all(parts):
        raise argparse.ArgumentTypeError(f"a feature is A_COLUMN:B_COLUMN (item_a's and item_b's "
                                         f"columns, e.g. loglen_a:loglen_b), got {text!r}")
    return parts[0], parts[1]


def _names(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"one or more comma-separated names are needed, got "
                                         f"{text!r}")
    return names


def _read_table(path: str, format: str | None = None) -> pd.DataFrame:
    """The input table as text, nothing guessed (:func:`bayescal.io.read_table`); a file that
    cannot be read is a DataError naming it (one line, exit code 2)."""
    from bayescal.io import read_table

    return read_table(path, format=format)[0]


#: bayescal.io's file formats and verdict layouts (names of ``--format``; a test keeps them
#: equal to bayescal.io.format_names() and layout_names() without importing pandas here).
_FILE_FORMATS = ("csv", "tsv", "parquet", "json", "jsonl")
_LAYOUTS = ("tidy", "fastchat", "arena", "alpaca_eval", "judge_aware")


def _format_flag(p: argparse.ArgumentParser, *, layouts: bool) -> None:
    names = [*_FILE_FORMATS, *(_LAYOUTS if layouts else ())]
    what = ("a file format or a verdict layout (FastChat MT-Bench judgments, Chatbot Arena "
            "battles, AlpacaEval annotations, judge_aware: Xu et al. 2026)" if layouts
            else "the file format")
    p.add_argument("--format", default=None, choices=names, metavar="NAME",
                   help=f"{what}: {', '.join(names)} (default: recognised from the content)")


def _given(args: argparse.Namespace, arguments: Sequence[str]) -> dict[str, Any]:
    """Library keyword arguments for the options the user typed; the others keep the library's
    defaults (so an optional column left at its default may be absent)."""
    return {a: getattr(args, a) for a in arguments if getattr(args, a, None) is not None}


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


def _check_sampler(sampler: str) -> None:
    import importlib.util

    if sampler == "nutpie" and importlib.util.find_spec("nutpie") is None:
        raise _UsageError("--sampler nutpie: nutpie is not installed; install it or pass "
                          "--sampler pymc")


# ---------------------------------------------------------------- warnings, once each
class _WarningLog:
    """Every warning of a command, recorded (never printed by Python with its file path and
    line) and reported once each as ``warning: <message>``; developer deprecations are left
    out, as Python's default filters do."""

    def __init__(self) -> None:
        self.caught: list[warnings.WarningMessage] = []
        self._cm: warnings.catch_warnings | None = None  # type: ignore[type-arg]

    def __enter__(self) -> _WarningLog:
        self._cm = warnings.catch_warnings(record=True)
        self.caught = self._cm.__enter__()  # type: ignore[assignment]
        warnings.simplefilter("always")
        for category in (DeprecationWarning, PendingDeprecationWarning):
            warnings.filterwarnings("ignore", category=category)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._cm is not None
        self._cm.__exit__(*exc)

    def entries(self) -> list[dict[str, str]]:
        """Distinct warnings in order of first appearance: ``{"category", "message"}``."""
        seen: dict[tuple[str, str], None] = {}
        for w in self.caught:
            seen.setdefault((w.category.__name__, " ".join(str(w.message).split())), None)
        return [{"category": c, "message": m} for c, m in seen]

    def print(self) -> None:
        for w in self.entries():
            print(f"warning: {w['message']}", file=sys.stderr)


# ---------------------------------------------------------------- covariance flags
# --information, --cluster and --correction feed the twins' information=, cluster= and
# correction=; bayescal.frequentist.covariance.request decides what they mean and refuses, before
# any fit, a kind the model does not offer or a key with a kind that uses none. The models'
# kinds and built-in keys come from the registry.
_COVARIANCE = ("information", "cluster", "correction")


def _covariance_options(p: argparse.ArgumentParser, what: str, kinds: Sequence[str],
                        keys: Sequence[str]) -> None:
    p.add_argument("--information", default=None, choices=["auto", *kinds],
                   help=f"covariance of the Wald intervals of {what} (default auto: cluster when "
                   "--cluster names a key, else sandwich when the verdicts hold ties or soft "
                   "outcomes, else expected)")
    if "cluster" not in kinds:
        return
    builtin = "; ".join(f"{k}: {_KEY_MEANING.get(k, k)}" for k in keys)
    p.add_argument("--cluster", default=None, metavar="KEY",
                   help="cluster key for cluster-robust intervals (selects --information "
                   "cluster): a column of the file (a battle or question id)"
                   + (f" or a built-in key ({builtin})" if keys else ""))
    p.add_argument("--correction", default=None, choices=["CR1", "CR0"],
                   help="small-sample factor of the cluster-robust covariance: CR1, G/(G - 1) "
                   "with G clusters (default), or CR0, none (DIAL's authors)")


_KEY_MEANING = {"judge_pair": "judge x item pair", "pair": "item pair"}


def _covariance_given(args: argparse.Namespace) -> list[str]:
    """The covariance flags the user typed."""
    return [_flag(a) for a in _COVARIANCE if getattr(args, a, None) is not None]


def _cluster_column(args: argparse.Namespace, frame: pd.DataFrame, path: str,
                    keys: Sequence[str], model: str) -> str | None:
    """The column ``--cluster`` names (None for a built-in key or no key); refuses a name that
    is neither, or both."""
    key = getattr(args, "cluster", None)
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


def _covariance(args: argparse.Namespace, entry: registry.Entry, data: Any,
                prog: str = "bayescal fit") -> dict[str, Any]:
    """The twin's ``information``, ``cluster`` and ``correction``, checked before fitting by the
    library's :func:`bayescal.frequentist.covariance.request` (a refusal names the flag)."""
    from bayescal.frequentist import covariance

    given = {"information": args.information or "auto",
             "cluster": getattr(args, "cluster", None),
             "correction": getattr(args, "correction", None)}
    try:
        covariance.request(**given, supported=entry.information,
                           data_key=getattr(data, "cluster_key", None),
                           builtin_keys=entry.cluster_keys,
                           quasi=getattr(data, "quasi_likelihood", False), model=entry.cli)
    except ValueError as err:
        raise _UsageError(_as_flags(str(err)), prog) from err
    return {k: v for k, v in given.items() if k == "information" or v is not None}


def _as_flags(text: str) -> str:
    """``information='cluster'`` -> ``--information cluster`` in a library message."""
    return re.sub(r"\b(information|cluster|correction)=(['\"]?)([^'\",;\s)]*)\2",
                  lambda m: f"{_flag(m[1])} {m[3]}", text)


def _refuse_covariance(args: argparse.Namespace, why: str, prog: str) -> None:
    given = _covariance_given(args)
    if given:
        raise _UsageError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                          f"apply {why}", prog)


# ---------------------------------------------------------------- errors
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
        # ... its "outcome_kind='code'" is "--outcome-kind code", "positive=..." "--positive VALUE"
        text = re.sub(r"\b([a-z_]+)='([^' ]*)'",
                      lambda m: f"{_flag(m[1])} {m[2]}" if hasattr(args, m[1]) else m[0], text)
        text = re.sub(r"\b([a-z_]+)=\.\.\.",
                      lambda m: f"{_flag(m[1])} VALUE" if hasattr(args, m[1]) else m[0], text)
    argument = getattr(err, "argument", None)
    if argument is not None and args is not None and hasattr(args, argument):
        value = getattr(args, argument)
        text = f"{_flag(argument)}{'' if value is None else f' {value}'}: {text}"
    return f"bayescal: error: {text}"


# ---------------------------------------------------------------- flags from the registry
# The data flags of each container: (keyword of its from_frame, default shown, help). A test
# checks that the keywords are from_frame's.
_DATA_FLAGS: Mapping[str, tuple[tuple[str, str, str], ...]] = {
    "Comparisons": (
        ("item_a", "item_a", "column of the first item's label"),
        ("item_b", "item_b", "column of the second item's label"),
        ("outcome", "outcome", "column of the verdict: 1 (item_a preferred), 0, 0.5 (tie), or "
         "words (model_a, tie, ...)"),
        ("judge", "judge, if present", "column of the judge's label"),
        ("order", "order, if present", "column of the display order (+1: item_a shown first)"),
        ("count", "count, if present", "column of the number of identical verdicts a row "
         "stands for"),
    ),
    "Labels": (
        ("human", "human", "column of the human labels (missing: not labelled by a human)"),
        ("judge", "judge", "column(s) of the judge labels, comma-separated, one per judge"),
        ("labelled", "rows with a human label", "boolean column marking the human-labelled "
         "rows"),
    ),
    "Ratings": (
        ("judge", "judge", "column of the judge's scores"),
        ("human", "human", "column of the human scores (missing: not rated)"),
        ("item", "the row number", "column of item labels"),
    ),
}
_FILE_HELP = {"Comparisons": "table of verdicts: one row per verdict, or a layout of --format "
                              "(CSV, TSV, JSON, JSON Lines, Parquet)",
              "Labels": "table with one row per item: human and judge labels",
              "Ratings": "table with one row per item: judge and human scores"}


def _data_flags(p: argparse.ArgumentParser, data_type: str) -> None:
    for keyword, default, text in _DATA_FLAGS[data_type]:
        p.add_argument(_flag(keyword), dest=keyword, default=None, metavar="COLUMN",
                       type=_names if (data_type, keyword) == ("Labels", "judge") else None,
                       help=f"{text} (default {default})")
    if data_type == "Comparisons":
        p.add_argument("--fractional", action="store_true",
                       help="accept soft outcomes in [0, 1] and fractional counts (weights)")
        p.add_argument("--outcome-kind", dest="outcome_kind", default="auto",
                       choices=["auto", "code", "winner"],
                       help="how to read --outcome: code (1 = item_a preferred, 0, 0.5 = tie, "
                       "or words), winner (the winning item's label), or auto (each value as "
                       "whichever it can be; a value that is both, read two ways, is refused)")
    elif data_type == "Labels":
        p.add_argument("--positive", default=None, metavar="VALUE",
                       help="human label value meaning Y = 1, for a binary label not coded 0/1 "
                       "(e.g. 2 for 1/2 codes, yes for yes/no); judge columns in the same "
                       "coding are mapped too")
    else:
        p.add_argument("--scale", nargs=2, type=int, required=True, metavar=("LOW", "HIGH"),
                       dest="rating_scale", help="declared integer scale, e.g. --scale 1 5")


def _show(value: Any) -> str:
    if value is registry.REQUIRED:
        return "required"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return "all" if value is None else str(value)


def _option_type(opt: registry.Option) -> Callable[[str], Any]:
    """Text -> value of a model option: its type, or one of its words."""
    def convert(text: str) -> Any:
        if text.strip().lower() in opt.words:
            return text.strip().lower()
        try:
            value = opt.type(text)
        except ValueError:
            words = f" or one of {sorted(opt.words)}" if opt.words else ""
            raise argparse.ArgumentTypeError(
                f"{opt.type.__name__} needed{words}, got {text!r}") from None
        if isinstance(value, float) and value != value:  # NaN is no value
            raise argparse.ArgumentTypeError(f"a number is needed, got {text!r}")
        return value

    convert.__name__ = opt.type.__name__
    return convert


def _model_flags(p: argparse.ArgumentParser, entry: registry.Entry) -> None:
    """One flag per registry option of ``entry`` (left None when not typed)."""
    for opt in entry.options:
        default = _show(opt.command_line_default)
        words = "".join(f"; {w}: {meaning}" for w, meaning in opt.words.items())
        twin_only = "" if "build" in opt.used_by else " (--method mle only)"
        text = f"{opt.help}{words} (default {default}){twin_only}"
        kwargs: dict[str, Any] = {"dest": f"opt_{opt.name}", "default": None, "help": text}
        if opt.type is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif opt.type is list:
            kwargs.update(type=_names, metavar="A,B")
        else:
            kwargs["type"] = _option_type(opt)
            if opt.choices is not None:
                kwargs["choices"] = [*opt.choices, *opt.words]
        p.add_argument(opt.flag, **kwargs)
        if opt.cli_off is not None:
            p.add_argument(f"--{opt.cli_off}", dest=f"opt_{opt.name}", action="store_false",
                           default=None, help=f"the same as --no-{opt.flag[2:]}")


def _sampling_flags(p: argparse.ArgumentParser, *, defaults: bool) -> None:
    """NUTS settings; ``defaults=False`` leaves them None so that a flag typed for a method
    that does not sample can be refused."""
    d = _SAMPLING_DEFAULTS if defaults else dict.fromkeys(_SAMPLING_DEFAULTS)
    nuts = "" if defaults else " (--method nuts)"
    p.add_argument("--draws", type=_positive_int, default=d["draws"],
                   help=f"posterior draws per chain (default 1000){nuts}")
    p.add_argument("--tune", type=_positive_int, default=d["tune"],
                   help=f"tuning steps per chain (default 1000){nuts}")
    p.add_argument("--chains", type=_positive_int, default=d["chains"],
                   help=f"chains (default 4){nuts}")
    p.add_argument("--sampler", default=d["sampler"], choices=["nutpie", "pymc"],
                   help=f"NUTS implementation (default nutpie, measured faster){nuts}")
    p.add_argument("--seed", type=_seed, default=d["seed"],
                   help="random seed of the draws: NUTS, and the Wald-normal draws behind an "
                   "MLE's rank intervals (default 1)")
    p.add_argument("--no-progress", action="store_true", default=None if not defaults else False,
                   help=f"hide the sampling progress bar{nuts}")


def _output_flags(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    p.add_argument("--prob", type=_probability, default=DEFAULT_PROB,
                   help=f"probability of every interval (default {DEFAULT_PROB})")
    p.add_argument("--out", default=None, metavar="RUN_DIR",
                   help="write the run into this new folder: summary.csv, leaderboard.csv, "
                   "judges.csv, estimate.nc or posterior.nc, figures, run.json")
    p.add_argument("--force", action="store_true",
                   help="replace the previous run in --out whole (a run folder only)")
    p.add_argument("--report", action="store_true",
                   help="also write report.html and report.md into --out (the same as "
                   "bayescal report RUN_DIR afterwards)")
    if json_flag:
        p.add_argument("--json", action="store_true",
                       help="print the summary rows and the run's metadata as JSON on stdout "
                       "(and nothing else)")


def _fit_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fit = sub.add_parser("fit", help="fit a model to a file (bayescal fit MODEL --help)",
                         description="Fit a registered model by MLE (its frequentist twin, "
                         "Wald intervals), MAP or NUTS (its PyMC model).")
    models = fit.add_subparsers(dest="model", required=True, metavar="MODEL",
                                parser_class=_ModelParser)
    siblings: dict[str, argparse.ArgumentParser] = {}
    for entry in registry.entries():
        p = models.add_parser(entry.cli, help=entry.title,
                              description=f"{entry.title} ({entry.paper.cite()}).")
        p.add_argument("file", type=_existing_file, help=_FILE_HELP[entry.data_type])
        _format_flag(p, layouts=entry.data_type == "Comparisons")
        _data_flags(p, entry.data_type)
        if entry.stem == "human_calibration":
            p.add_argument("--human", type=_existing_file, default=None, metavar="FILE",
                           dest="human_file",
                           help="table of the human comparisons (same column flags; order and "
                           "judge ignored; its judge is 'human')")
            p.add_argument("--humans", type=_names, default=None, metavar="A,B",
                           help="judge label(s) of FILE that are human raters (instead of "
                           "--human FILE)")
            p.add_argument("--baselines", action="store_true",
                           help="also compute DIAL's baselines (Human-only, Pooled, DIAL-Anc, "
                           "DIAL-Ada, DIAL-Ada(W), DIAL-noPos, AtC): baselines.csv")
        if entry.features:
            p.add_argument("--feature", type=_feature_pair, action="append", default=None,
                           metavar="A_COLUMN:B_COLUMN", dest="features",
                           help="a comparison feature: the columns of item_a's and item_b's "
                           "values, already transformed (e.g. loglen_a:loglen_b for a log length "
                           "ratio); repeatable. Adds judge-specific effects feature_effect[judge, "
                           "feature] of the differences to summary.csv"
                           + (" (and the humans' human_feature_effect[feature]; the human rows "
                              "go in FILE, named by --humans)"
                              if entry.stem == "human_calibration" else ""))
        if entry.features and entry.stem != "human_calibration":
            p.add_argument("--humans", type=_names, default=None, metavar="A,B",
                           help="judge label(s) that are human raters: with --feature and "
                           "--method mle, feature_effect_contrasts.csv holds each judge's effect "
                           "minus the humans' (beta_k - beta_h)")
        _model_flags(p, entry)
        p.add_argument("--method", default="nuts", choices=["mle", "map", "nuts"],
                       help="mle: the frequentist twin (Wald intervals); map: the posterior "
                       "mode; nuts: posterior draws (default)")
        _sampling_flags(p, defaults=False)
        _covariance_options(p, "the MLE (--method mle)", entry.information, entry.cluster_keys)
        _output_flags(p)
        if entry.score is not None and entry.score_log_odds:
            p.add_argument("--scale", default="logit", choices=["logit", "elo"],
                           help="display scale of the leaderboard: logit (log-odds, default) or "
                           "elo (1000 + 400/ln 10 per logit: 400 points = 10:1 odds, 1000 = the "
                           "average item)")
        p.set_defaults(func=_fit, stem=entry.stem)
        siblings[entry.cli] = p
    _ModelParser.siblings = siblings


# ---------------------------------------------------------------- reading the data
# Files are read by bayescal.io (formats and verdict layouts recognised from the content, text
# read as text, numbers parsed explicitly); the columns are checked here first, so that a
# missing one is named by its flag.
def _input(path: str, frame: pd.DataFrame, role: str, layout: str | None = None
           ) -> dict[str, Any]:
    from bayescal.runs import describe_input

    record = describe_input(path, len(frame), role)
    if layout is not None:
        record["layout"] = layout
    return record


def _verdicts(args: argparse.Namespace, path: str, columns: Mapping[str, Any]
              ) -> tuple[pd.DataFrame, str]:
    """A file of verdicts in the tidy columns (any layout of bayescal.io), and its layout."""
    from bayescal.data import DataError
    from bayescal.io import read_verdicts

    fmt = getattr(args, "format", None)
    try:
        frame, source = read_verdicts(path, format=fmt, **columns)
    except DataError as err:
        if fmt is None and not columns and "layout" in str(err):  # a layout was recognised
            raise DataError(f"{err} — the layout was recognised from the columns; to read "
                            "the file as tidy verdicts name its columns (--item-a, --item-b, "
                            "--outcome) or pass --format tidy", argument=err.argument) from err
        raise
    return frame, str(source.layout)


def _read_comparisons(args: argparse.Namespace, entry: registry.Entry, path: str,
                      ) -> tuple[Any, pd.DataFrame, str]:
    from bayescal.data import Comparisons

    names = [k for k, _, _ in _DATA_FLAGS["Comparisons"]]
    columns = _given(args, names)
    frame, layout = _verdicts(args, path, columns)
    _check_columns(frame, path, Comparisons.from_frame, columns, names)
    column = _cluster_column(args, frame, path, entry.cluster_keys, entry.cli)
    humans = getattr(args, "humans", None) or ()
    data = Comparisons.from_frame(frame, **columns, cluster=column, fractional=args.fractional,
                                  humans=humans, outcome_kind=args.outcome_kind,
                                  features=getattr(args, "features", None))
    return data, frame, layout


def _read_data(args: argparse.Namespace, entry: registry.Entry
               ) -> tuple[Any, list[dict[str, Any]]]:
    """The model's data container from FILE (and ``--human FILE``), and the inputs' records."""
    if entry.stem == "human_calibration":
        return _read_human_calibration(args, entry)
    if entry.data_type == "Comparisons":
        data, frame, layout = _read_comparisons(args, entry, args.file)
        record = _input(args.file, frame, "verdicts", layout)
        adaptive = _adaptive_rows(frame)
        if adaptive:
            record["adaptive_rows"] = adaptive
        return data, [record]
    frame = _read_table(args.file, args.format)
    names = [k for k, _, _ in _DATA_FLAGS[entry.data_type]]
    columns = _given(args, names)
    if entry.data_type == "Labels":
        from bayescal.data import Labels
        from bayescal.io import read_labels

        _check_columns(frame, args.file, Labels.from_frame, columns, names)
        data = read_labels(frame, **columns, positive=args.positive)
        return data, [_input(args.file, frame, "labels")]
    from bayescal.data import Ratings
    from bayescal.io import read_ratings

    _check_columns(frame, args.file, Ratings.from_frame, columns, names)
    data = read_ratings(frame, scale=tuple(args.rating_scale), **columns)
    return data, [_input(args.file, frame, "ratings")]


def _adaptive_rows(frame: pd.DataFrame) -> int:
    """Rows that ``bayescal next`` chose for their expected gain (its ``chosen`` column,
    appended with the verdicts): the design's history, read by :func:`_adaptive_note`."""
    from bayescal.design import ADAPTIVE, CHOSEN_COLUMN

    if CHOSEN_COLUMN not in frame:
        return 0
    return int((frame[CHOSEN_COLUMN].astype(str).str.strip() == ADAPTIVE).sum())


def _adaptive_note(args: argparse.Namespace, entry: registry.Entry, options: dict[str, Any],
                   inputs: list[dict[str, Any]]) -> str | None:
    """What the intervals of a leaderboard fitted on adaptively chosen verdicts are worth.

    After ``bayescal next``'s choice from a first fit of a few verdicts per pair, the
    judge-aware leaderboard's Wald intervals and a fixed prior's posterior cover about two
    points under their level; the NUTS posterior with the abilities' scale learned keeps it
    (``validation/design_comparisons.py``). DIAL's human comparisons keep it either way."""
    adaptive = sum(int(r.get("adaptive_rows", 0)) for r in inputs)
    if not adaptive or entry.stem != "judge_discrimination_btl":
        return None
    rows = sum(int(r.get("rows", 0)) for r in inputs)
    chosen = (f"{adaptive} of the {rows} verdicts were chosen by bayescal next from earlier "
              "fits (column chosen = greedy)")
    if args.method == "nuts" and options.get("ability_scale_sd") is not None:
        return (f"{chosen}; the posterior with the abilities' scale learned keeps its level "
                "after such a choice")
    return (f"{chosen}: after an adaptive choice from a first fit of a few verdicts per pair "
            "these intervals cover about two points under their level (less with more "
            "verdicts); the posterior that keeps it is --method nuts --ability-scale-sd 2")


def _read_human_calibration(args: argparse.Namespace, entry: registry.Entry
                            ) -> tuple[Any, list[dict[str, Any]]]:
    """LLM verdicts from FILE; the human comparisons from ``--human FILE`` or the judges of
    FILE named by ``--humans``. One data set, the human judge(s) marked."""
    from bayescal.data import Comparisons

    prog = "bayescal fit human-calibration"
    if (args.human_file is None) == (args.humans is None):
        raise _UsageError("human-calibration needs the human comparisons: --human FILE, or "
                          "--humans LABELS naming the human judges of "
                          f"{args.file} (one of the two)", prog)
    if args.humans is not None:
        data, frame, layout = _read_comparisons(args, entry, args.file)
        return data, [_input(args.file, frame, "verdicts", layout)]
    if args.features:
        # comparison features need one frame (Comparisons.concat refuses them)
        raise _UsageError("--feature with --human FILE: put the human comparisons, with their "
                          "feature columns, in FILE and name their judge(s) with --humans", prog)
    names = [k for k, _, _ in _DATA_FLAGS["Comparisons"]]
    columns = _given(args, names)
    human_cols = {k: v for k, v in columns.items() if k in ("item_a", "item_b", "outcome",
                                                             "count")}
    frame, layout = _verdicts(args, args.file, columns)
    human_frame, human_layout = _verdicts(args, args.human_file, human_cols)
    _check_columns(frame, args.file, Comparisons.from_frame, columns, names)
    _check_columns(human_frame, args.human_file, Comparisons.from_frame, human_cols,
                   ("item_a", "item_b", "outcome", "count"))
    column = _cluster_column(args, frame, args.file, entry.cluster_keys, entry.cli)
    llm = Comparisons.from_frame(frame, **columns, cluster=column, fractional=args.fractional,
                                 outcome_kind=args.outcome_kind)
    hjudge = columns.get("judge", "judge")
    if hjudge not in human_frame:  # one human judge, named so
        human_frame = human_frame.assign(**{hjudge: "human"})
    if column is not None and column not in human_frame:
        raise _UsageError(f"--cluster {column}: {args.human_file} has no column {column!r}; "
                          "give the human comparisons the key too (each sample is clustered on "
                          "its own), or use a built-in key", prog)
    human = Comparisons.from_frame(human_frame, **human_cols, order=None, judge=hjudge,
                                   cluster=column, fractional=args.fractional,
                                   outcome_kind=args.outcome_kind)
    shared = sorted(set(human.judges) & set(llm.judges))
    if shared:
        raise _UsageError(f"human-calibration: judge label(s) {shared} appear in both "
                          f"{args.file} and {args.human_file}; the human judges must have their "
                          "own labels", prog)
    data = Comparisons.concat([llm, human], humans=list(human.judges))
    return data, [_input(args.file, frame, "verdicts", layout),
                  _input(args.human_file, human_frame, "human comparisons", human_layout)]


def _labels(data: Any) -> list[str]:
    """Item and judge labels of a data set (figures show them as typed)."""
    return [str(v) for name in ("items", "judges") for v in (getattr(data, name, None) or ())]


# ---------------------------------------------------------------- fit
def _refuse_for_method(args: argparse.Namespace, entry: registry.Entry) -> None:
    """A flag typed for a method that does not use it is refused, before reading anything."""
    prog, method = f"bayescal fit {entry.cli}", args.method
    if method != "mle":
        _refuse_covariance(args, f"to --method {method}: they set the covariance of the "
                           "twin's Wald intervals (--method mle)", prog)
    for opt in entry.options:
        if getattr(args, f"opt_{opt.name}") is None:
            continue
        uses = "fit" if method == "mle" else "build"
        if uses not in opt.used_by:
            where = ("the twin's fit (--method mle)" if "fit" in opt.used_by
                     else "the PyMC model (--method map or nuts)")
            raise _UsageError(f"{opt.flag} does not apply to --method {method}: it is an option "
                              f"of {where}", prog)
    scale_sd = getattr(args, "opt_ability_scale_sd", None)
    if scale_sd is not None and not (math.isfinite(scale_sd) and scale_sd > 0):
        raise _UsageError(f"--ability-scale-sd must be a finite positive number (the "
                          f"half-normal prior's scale of the abilities' spread), got {scale_sd}",
                          prog)
    if method == "map" and scale_sd is not None:
        raise _UsageError("--ability-scale-sd does not apply to --method map: with the "
                          "abilities' scale learned the joint density grows without bound as "
                          "the scale and the abilities shrink together, so a MAP is at best a "
                          "local mode; use --method nuts", prog)
    if method != "nuts":
        typed = [f for f in ("draws", "tune", "chains", "sampler", "no_progress")
                 if getattr(args, f) is not None]
        if typed:
            raise _UsageError(f"{_flag(typed[0])} does not apply to --method {method}: it is a "
                              "NUTS setting (--method nuts)", prog)
    if args.seed is not None and not (method == "nuts" or (method == "mle" and entry.score)):
        raise _UsageError(f"--seed does not apply to --method {method}{' of ' + entry.cli}: "
                          "nothing is drawn", prog)


def _model_options(args: argparse.Namespace, entry: registry.Entry) -> dict[str, Any]:
    """Every option of the model: the typed value, else the command line's default."""
    out = {}
    for opt in entry.options:
        value = getattr(args, f"opt_{opt.name}")
        if value is None:
            value = opt.command_line_default
            if value is registry.REQUIRED:
                raise _UsageError(f"{entry.cli} needs {opt.flag}", f"bayescal fit {entry.cli}")
        out[opt.name] = value
    return out


def _sampling(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`bayescal.fit` for NUTS."""
    s = {k: (getattr(args, k) if getattr(args, k) is not None else v)
         for k, v in _SAMPLING_DEFAULTS.items()}
    return {"draws": s["draws"], "tune": s["tune"], "chains": s["chains"],
            "random_seed": s["seed"], "nuts_sampler": s["sampler"],
            "progressbar": False if args.no_progress else None}


def _seed_of(args: argparse.Namespace) -> int:
    return args.seed if args.seed is not None else _SAMPLING_DEFAULTS["seed"]


@dataclass
class _Fitted:
    """What a model step returns: the fits by method, the model's own tables (name -> (table,
    what it holds)), notes, facts for run.json."""

    fits: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, tuple[pd.DataFrame, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def _fit(args: argparse.Namespace) -> int:
    """``bayescal fit MODEL FILE``: check, read, fit, then print and write the run."""
    import bayescal as bc
    from bayescal.runs import RunWriter

    entry = registry.get(args.stem)
    _refuse_for_method(args, entry)
    options = _model_options(args, entry)
    if args.method == "nuts":
        _check_sampler(args.sampler or _SAMPLING_DEFAULTS["sampler"])
    files = [args.file] + ([args.human_file] if getattr(args, "human_file", None) else [])
    with RunWriter(args.out, inputs=files, force=args.force) as writer:
        data, inputs = _read_data(args, entry)
        covariance = _covariance(args, entry, data) if args.method == "mle" else {}
        step = _fit_human_calibration if entry.stem == "human_calibration" else _fit_model
        fitted = step(args, entry, data, options, covariance)
        note = _adaptive_note(args, entry, options, inputs)
        if note is not None:
            fitted.notes.append(note)
        if args.method == "nuts":
            result = fitted.fits["nuts"]
            diagnostics = bc.diagnose(result, warn=True)
            fitted.tables["diagnostics"] = (diagnostics, "sampler diagnostics of the identified "
                                            "quantities (R-hat, ESS, divergences)")
        tables = _write_outputs(args, writer, entry, fitted, data, sort_by=args.method)
        used = entry.options_for("fit" if args.method == "mle" else "build", options)
        meta = _meta(args, "fit", entry=entry, method=args.method, options=used,
                     covariance=covariance, inputs=inputs, fitted=fitted, data=repr(data))
        full = writer.commit(meta)
    _finish(args, full, tables, fitted)
    return 0


def _fit_model(args: argparse.Namespace, entry: registry.Entry, data: Any,
               options: dict[str, Any], covariance: dict[str, Any]) -> _Fitted:
    """The one fit of every model: the twin for MLE, the PyMC model for MAP and NUTS."""
    import bayescal as bc

    out = _Fitted()
    if args.method == "mle":
        result = entry.fit(data, **entry.options_for("fit", options), **covariance)
        out.notes += list(result.info.get("notes", {}).values())
        out.info["covariance"] = _resolved_covariance(result)
        for name in entry.twin_tables:
            out.tables[name] = (entry.twin_table(name)(result),
                                f"{name.replace('_', ' ')} (from the MLE)")
        if entry.features and data.n_features and data.humans:
            from bayescal.frequentist.features import feature_effect_contrasts

            out.tables["feature_effect_contrasts"] = (
                feature_effect_contrasts(result, args.prob),
                "feature effects relative to the humans, beta_k - beta_h (from the MLE)")
    else:
        model = entry.build(data, **entry.options_for("build", options))
        kwargs = _sampling(args) if args.method == "nuts" else {}
        result = entry.canonical_form(bc.fit(model, args.method, **kwargs,
                                             **entry.fit_kwargs(model)))
    out.fits[args.method] = result
    return out


def _fit_human_calibration(args: argparse.Namespace, entry: registry.Entry, data: Any,
                           options: dict[str, Any], covariance: dict[str, Any]) -> _Fitted:
    """DIAL's calibration: λ given or chosen by GACV (the twin's choice, also for MAP and
    NUTS); λ = ∞ by NUTS is the cut posterior; ``--baselines`` adds DIAL's baselines."""

    import bayescal as bc
    from bayescal.frequentist import human_calibration as hc
    from bayescal.models import human_calibration as hm

    prog = "bayescal fit human-calibration"
    out = _Fitted()
    lam = options["llm_weight"]
    twin = {k: v for k, v in entry.options_for("fit", options).items() if k != "llm_weight"}
    if lam != "gacv" and not lam >= 0:  # before any fit, naming the flag (NaN refused too)
        raise _UsageError(f"--llm-weight must be λ ≥ 0 (0 = human only, inf = anchored to the "
                          f"LLM consensus) or 'gacv', got {lam:g}", prog)
    if args.method == "map" and lam != "gacv" and math.isinf(lam):
        raise _UsageError("--llm-weight inf with --method map: λ = ∞ is the cut posterior, "
                          "which has no mode; use --method nuts or --method mle", prog)
    est = None
    if lam == "gacv":
        table, est = hc.gacv(data, **twin, **covariance)
        est.info.pop("gacv_table", None)  # written as gacv.csv
        out.tables["gacv"] = (table, "GACV over the λ grid (selected: the chosen λ)")
        lam = float(est.info["llm_weight"])
        out.notes.append(f"λ chosen by GACV: {lam:g} (n_l/n_h = "
                         f"{est.info['n_llm'] / est.info['n_human']:g} is the joint MLE)")
    out.info["llm_weight"] = lam
    if args.method == "mle":
        result = est if est is not None else hc.fit(data, llm_weight=lam, **twin, **covariance)
        out.info["intervals"] = result.info["intervals"]
        out.info["covariance"] = _resolved_covariance(result)
        out.notes.append(f"calibrated human scores at λ = {lam:g} ({options['space']} space, "
                         f"r = {options['rank']}; intervals: {result.info['intervals']})")
        if data.n_features:
            from bayescal.frequentist.features import feature_effect_contrasts

            out.tables["feature_effect_contrasts"] = (
                feature_effect_contrasts(result, args.prob),
                "feature effects relative to the humans, beta_k - beta_h (from the MLE)")
    elif math.isinf(lam):
        if args.method == "map":
            raise _UsageError("GACV chose λ = ∞, the cut posterior, which has no mode; use "
                              "--method nuts, --method mle or a finite --llm-weight", prog)
        build = entry.options_for("build", options)
        stage = hm.llm_stage(data, rank=build["rank"], order_effects=build["order_effects"])
        first = bc.fit(stage, "nuts", **_sampling(args), **entry.fit_kwargs(stage),
                       check=False)  # diagnosed with the human scores below
        result = hm.cut_posterior(data, first, rank=build["rank"], space=build["space"],
                                  order_effects=build["order_effects"],
                                  random_seed=_seed_of(args))
    else:
        model = entry.build(data, **{**entry.options_for("build", options), "llm_weight": lam})
        kwargs = _sampling(args) if args.method == "nuts" else {}
        result = bc.fit(model, args.method, **kwargs, **entry.fit_kwargs(model))
        if args.method == "nuts":
            out.notes.append(hm.power_posterior_note(lam))
    out.fits[args.method] = result
    if args.baselines:
        from bayescal.frequentist import dial_baselines as db

        scores, methods, _ = db.baselines(data, rank=options["rank"], **covariance)
        out.tables["baselines"] = (scores, "every DIAL method's human scores: Human (λ = 0), "
                                   "Pooled, DIAL-Anc, DIAL-Ada, DIAL-Ada(W), DIAL-noPos, AtC")
        out.tables["baseline_methods"] = (methods, "λ and notes of each DIAL method")
    return out


def _resolved_covariance(estimate: Any) -> dict[str, Any]:
    """What ``information="auto"`` became, and why (``Estimate.info``)."""
    keys = ("information", "cluster", "correction", "information_reason")
    return {k: estimate.info[k] for k in keys if k in estimate.info}


# ---------------------------------------------------------------- outputs
def _judges_table(summary: pd.DataFrame, parameters: Sequence[str]) -> pd.DataFrame | None:
    """Per-judge rows of the summary (``discrimination[gpt-4]``): a ``judge`` column first."""
    rows = summary[summary["parameter"].isin(list(parameters))]
    if rows.empty:
        return None
    judges = [term[len(p) + 1:-1] for term, p in zip(rows.index, rows["parameter"], strict=True)]
    table = rows.reset_index(drop=True)
    table.insert(0, "judge", judges)
    return table.set_index("judge")


def _result_files(fits: Mapping[str, Any]) -> dict[str, str]:
    """Method -> file of its fit: estimate.nc, posterior.nc (map.nc beside a NUTS one)."""
    from bayescal.runs import RESULT_FILES

    files = {m: RESULT_FILES[m] for m in fits}
    if "map" in fits and "nuts" in fits:
        files["map"] = "map.nc"
    return files


def _write_outputs(args: argparse.Namespace, writer: RunWriter, entry: registry.Entry,
                   fitted: _Fitted, data: Any, *, sort_by: str, truth: Any = None,
                   quiet: bool = False) -> dict[str, pd.DataFrame]:
    """The run's tables (printed unless ``--json`` or ``quiet``), results and figures."""
    import pandas as pd

    import bayescal as bc
    from bayescal.runs import draw_figures

    prob, fits = args.prob, fitted.fits
    summary = pd.concat([bc.summarize(r, prob) for r in fits.values()])
    tables = {"summary": summary}
    writer.table("summary.csv", summary, "interval table of every fit (index term; column "
                 "method)")
    scale = getattr(args, "scale", "logit")
    if entry.score is not None:
        board = bc.leaderboard(prob=prob, sort_by=sort_by, truth=truth, parameter=entry.score,
                               random_seed=_seed_of(args), scale=scale, **fits)
        tables["leaderboard"] = board
        writer.table("leaderboard.csv", board, f"items ranked by {entry.score}, best first, "
                     f"with intervals and rank intervals ({scale} scale)")
    judges = _judges_table(summary, entry.judge_parameters)
    if judges is not None:
        if "llm_weight" in fitted.info:
            judges["calibration_weight"] = fitted.info["llm_weight"]
        tables["judges"] = judges
        writer.table("judges.csv", judges, "per-judge quantities: "
                     + ", ".join(p for p in entry.judge_parameters if p in set(judges.parameter))
                     + (" and the calibration weight λ of the LLM judges"
                        if "llm_weight" in fitted.info else ""))
    for name, (frame, what) in fitted.tables.items():
        tables[name] = frame
        writer.table(f"{name}.csv", frame, what)
    for method, file in _result_files(fits).items():
        writer.result(file, fits[method], f"the {method.upper()} fit")
    draw_figures(writer, entry.figures, fits, entry=entry, prob=prob, sort_by=sort_by,
                 labels=_labels(data), truth=truth, scale=scale)
    if not (quiet or getattr(args, "json", False)):
        _print_tables(entry, tables, fitted, prob, scale)
    return tables


_KINDS = {"mle": "Wald", "nuts": "posterior equal-tailed", "map": "a point, no interval"}
_TITLES = {"order_effect_tests": "Wald tests of the order effects b_k = 0 and b_k = b_k' (Holm "
                                 "within each family)",
           "gacv": "GACV over λ (λ = n_l/n_h is the joint MLE)",
           "baselines": "DIAL's baselines: human scores of every method",
           "feature_effect_contrasts": "feature effects relative to the humans, beta_k - beta_h "
                                       "(Wald)"}


def _print_tables(entry: registry.Entry, tables: Mapping[str, pd.DataFrame], fitted: _Fitted,
                  prob: float, scale: str) -> None:
    import pandas as pd

    from bayescal.tables import format_leaderboard

    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 60)
    number = lambda v: f"{v:.4f}"  # noqa: E731
    summary = tables["summary"]
    if "leaderboard" in tables:
        shown = "; ".join(f"{m}: {_KINDS[m]}" for m in fitted.fits)
        on = (" on the Elo scale (1000 + 173.7 × logit; 400 points = 10:1 odds)"
              if scale == "elo" else "")
        print(f"Leaderboard of {entry.score}{on}, best first ({prob:.0%} intervals — {shown}; "
              "rank [interval], 1 = best):")
        board = format_leaderboard(tables["leaderboard"].drop(columns="scale", errors="ignore"),
                                   digits=0 if scale == "elo" else 3)
        print(board.to_string())
        summary = summary[summary["parameter"] != entry.score]
    if len(summary):
        if "leaderboard" in tables:
            print()
        print(summary.to_string(float_format=number))
    for name, title in _TITLES.items():
        if name in tables:
            print(f"\n{title}:")
            frame = tables[name]
            print(frame.to_string(index=name == "baselines", float_format=lambda v: f"{v:.5g}"))
    for note in fitted.notes:
        print(f"note: {note}", file=sys.stderr)
    if "diagnostics" in tables:
        print(tables["diagnostics"].to_string(), file=sys.stderr)


def _meta(args: argparse.Namespace, command: str, *, entry: registry.Entry | None = None,
          method: str | None = None, options: Mapping[str, Any] | None = None,
          covariance: Mapping[str, Any] | None = None, inputs: Sequence[Any] = (),
          fitted: _Fitted | None = None, **extra: Any) -> dict[str, Any]:
    """``run.json`` less the files (the writer adds them)."""
    import bayescal as bc
    from bayescal.environment import versions
    from bayescal.runs import created_now

    results = _result_files(fitted.fits) if fitted is not None else {}
    nuts = method == "nuts" or "nuts" in results
    meta: dict[str, Any] = {
        "command": command, "argv": list(args.argv), "bayescal": bc.__version__,
        "versions": {k: str(v) for k, v in versions().items()},
        "model": entry.stem if entry else None, "cli": entry.cli if entry else None,
        "method": method, "options": dict(options or {}), "covariance": dict(covariance or {}),
        "sampling": _sampling(args) if nuts and command == "fit" else None,
        "prob": args.prob, "scale": getattr(args, "scale", "logit"),
        "seed": _seed_of(args) if hasattr(args, "seed") else None,
        "inputs": list(inputs), "results": results,
        "info": dict(fitted.info) if fitted else {}, "notes": list(fitted.notes) if fitted else [],
        **extra,
        "warnings": args.log.entries(), "created": created_now(),
    }
    if meta["sampling"] is not None:
        meta["sampling"].pop("progressbar", None)
    return meta


def _finish(args: argparse.Namespace, meta: dict[str, Any], tables: Mapping[str, Any],
            fitted: _Fitted | None) -> None:
    """``--report``: the run's report; ``--json``: the run's metadata and tables on stdout;
    else where the run was written."""
    if getattr(args, "report", False):
        from bayescal.report import write_report

        write_report(args.out)
        meta = json.loads((Path(args.out) / "run.json").read_text())
    if getattr(args, "json", False):
        from bayescal.runs import records

        out = {"run": meta, **{name: records(t) for name, t in tables.items()}}
        print(json.dumps(out, allow_nan=False))
    elif args.out:
        print(f"wrote {len(meta['files'])} files and run.json in {args.out}", file=sys.stderr)


# ---------------------------------------------------------------- demo
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


def _demo_data(args: argparse.Namespace, seed: int) -> tuple[Any, Any, str, list[Any]]:
    from bayescal import datasets, simulate
    from bayescal.data import Comparisons

    entry = registry.get("judge_discrimination_btl")
    keys = entry.cluster_keys
    if args.data_dir is None:
        if args.cluster is not None and args.cluster not in keys:
            raise _UsageError(f"--cluster {args.cluster}: the simulated data have no columns; "
                              f"built-in keys are {list(keys)}", "bayescal demo")
        truth = simulate.judge_discrimination_truth(12, 6, log_discrimination_sd=0.8,
                                                    random_seed=seed)
        data = simulate.judge_discrimination_btl(truth, 30_000, random_seed=seed + 1)
        source = ("simulated: 12 models, 6 judges of unequal discrimination, 30,000 verdicts "
                  f"(the design of Xu et al. 2026, seed {seed})")
        return data, truth, source, []
    frame = datasets.ppr_chatbot_arena(args.data_dir)
    column = _cluster_column(args, frame, "ppr-chatbot-arena", keys, entry.cli)
    data = Comparisons.from_frame(frame, humans=["human"], cluster=column)
    source = (f"Chatbot Arena (ppr-chatbot-arena): {len(frame):,} verdicts, human crowd + "
              "3 LLM judges")
    from bayescal.runs import describe_input

    folder = Path(args.data_dir) / "ppr-chatbot-arena"
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return data, None, source, [describe_input(p, None, "dataset file") for p in files]


def _demo(args: argparse.Namespace) -> int:
    if args.dial:
        return _demo_dial(args)
    import bayescal as bc
    from bayescal import identify
    from bayescal.frequentist import MLEBoundaryError
    from bayescal.runs import RunWriter

    entry = registry.get("judge_discrimination_btl")
    _check_sampler(args.sampler)
    inputs_dir = [args.data_dir] if args.data_dir else []
    with RunWriter(args.out, inputs=inputs_dir, force=args.force) as writer:
        data, truth, source, inputs = _demo_data(args, args.seed)
        covariance = _covariance(args, entry, data, "bayescal demo")
        print(f"bayescal {bc.__version__} — {entry.title} ({entry.paper.cite()})")
        print(f"data: {source}")
        print(f"      {data}")
        ident = identify.check(data)
        print(f"      comparison graph connected: {ident.connected}; MLE exists (Zermelo): "
              f"{ident.mle_exists}\n")
        fitted = _Fitted()
        t0 = time.perf_counter()
        try:
            fitted.fits["mle"] = entry.fit(data, **covariance)
            kind = fitted.fits["mle"].info.get("information")
            print(f"MLE (twin, Wald from the {kind} covariance): "
                  f"{time.perf_counter() - t0:.2f} s")
        except (MLEBoundaryError, bc.IdentificationError) as err:
            print(f"MLE: not reported — {err}")
        model = entry.build(data)
        t0 = time.perf_counter()
        fitted.fits["map"] = bc.fit(model, "map")
        print(f"MAP (PyMC, default priors): {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        post = bc.fit(model, "nuts", draws=args.draws, tune=args.tune, chains=args.chains,
                      random_seed=args.seed, nuts_sampler=args.sampler,
                      progressbar=False if args.no_progress else None)
        fitted.fits["nuts"] = post
        print(f"NUTS ({args.sampler}, {args.chains} chains x {args.draws} draws after "
              f"{args.tune} tuning): {time.perf_counter() - t0:.2f} s\n")
        table = bc.compare(*fitted.fits.values(), prob=args.prob, truth=truth)
        fitted.tables["comparison"] = (table, "every term of every fit side by side, with "
                                       "width ratios and overlaps")
        diagnostics = bc.diagnose(post, warn=False)
        fitted.tables["diagnostics"] = (diagnostics, "NUTS diagnostics of the identified "
                                        "quantities")
        _write_demo_tables(args, writer, entry, fitted, data, truth)
        methods = [m for m in ("mle", "map", "nuts") if m in fitted.fits]
        view = _discrimination_view(table, methods, sort_by="nuts")
        if truth is not None:
            view["truth"] = table["truth"].reindex(view.index).map(lambda v: f"{v:.3f}")
        print("\nJudge discriminations (same intervals):")
        print(view.to_string())
        print("\nSampler diagnostics (identified quantities):")
        print(diagnostics.to_string())
        meta = _meta(args, "demo", entry=entry, method=None, covariance=covariance,
                     inputs=inputs, fitted=fitted, data=source,
                     sampling={"draws": args.draws, "tune": args.tune, "chains": args.chains,
                               "random_seed": args.seed, "nuts_sampler": args.sampler})
        full = writer.commit(meta)
    _finish(args, full, {}, fitted)
    return 0


def _write_demo_tables(args: argparse.Namespace, writer: RunWriter, entry: registry.Entry,
                       fitted: _Fitted, data: Any, truth: Any) -> None:
    """The demo's run: the outputs of a fit of every method; the leaderboard printed."""
    import pandas as pd

    from bayescal.tables import format_leaderboard

    tables = _write_outputs(args, writer, entry, fitted, data, sort_by="nuts", truth=truth,
                            quiet=True)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 40)
    shown = "; ".join(f"{m}: {_KINDS[m]}" for m in fitted.fits)
    print(f"Leaderboard, best first ({args.prob:.0%} intervals — {shown}; rank [interval], "
          "1 = best):")
    print(format_leaderboard(tables["leaderboard"]).to_string())


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
    from bayescal.runs import RunWriter

    if args.data_dir is not None:
        raise _UsageError("demo --dial runs on simulated data; drop the data folder",
                          "bayescal demo")
    _refuse_covariance(args, "to demo --dial, whose intervals follow DIAL's authors (clustered "
                       "by judge and pair)", "bayescal demo")
    entry = registry.get("human_calibration")
    with RunWriter(args.out, force=args.force) as writer:
        par = sd.truth(10, 6, 1, random_seed=args.seed)
        par["s_h"] = par["mu"] + 0.3 * par["V"][:, 0]  # humans a little off the consensus
        llm = sd.llm(par, 24_000, random_seed=args.seed + 3)
        human = sd.human(par, 300, random_seed=args.seed + 4)
        pd.set_option("display.width", 200)
        print(f"bayescal {bc.__version__} — DIAL ({entry.paper.cite()}): position-debiased "
              "judges calibrated to human preferences")
        print(f"LLM verdicts: {llm}\nhuman comparisons: {human}\n"
              "(simulated: N = 10 models, K = 6 judges, rank 1, canonical item shown first w.p. "
              "0.75; humans s_h = μ + 0.3 V)\n")
        fitted = _Fitted()
        t0 = time.perf_counter()
        order = oe.fit(llm, information="cluster", cluster="judge_pair", correction="CR0")
        tests = oe.order_effect_tests(order, pairwise=False)
        tests["truth"] = par["b"]
        fitted.tables["order_effect_tests"] = (tests, "Wald tests of b_k = 0 (per-judge BTL, "
                                               "cell-clustered, CR0), with the truth")
        print(f"1. Order effects b_k (per-judge BTL, cell-clustered; "
              f"{time.perf_counter() - t0:.2f} s):")
        print(tests.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        t0 = time.perf_counter()
        data = Comparisons.concat([llm, human], humans=["human"])
        low = lr.fit(llm, rank=1, information="cluster", cluster="judge_pair")
        cons = low.summary(args.prob)
        cons = cons[cons["parameter"] == "consensus_loading"]
        print(f"\n2. Low-rank consensus (r = 1; {time.perf_counter() - t0:.2f} s): judge "
              "loadings γ_k")
        print(cons[["estimate", "lower", "upper"]].assign(truth=par["gamma"]).to_string(
            float_format=lambda v: f"{v:.3f}"))
        fitted.tables["consensus_loadings"] = (cons.assign(truth=par["gamma"]),
                                               "low-rank judges (r = 1) loadings γ_k")
        t0 = time.perf_counter()
        table, est = hc.gacv(data, rank=1)
        est.info.pop("gacv_table", None)  # written as gacv.csv
        fitted.tables["gacv"] = (table, "GACV over the λ grid (selected: the chosen λ)")
        print(f"\n3. GACV path over λ ({time.perf_counter() - t0:.2f} s; λ₀ = n_l/n_h = "
              f"{llm.n_rows / human.n_rows:g} is the joint MLE):")
        print(table.drop(columns="seconds").to_string(index=False,
                                                      float_format=lambda v: f"{v:.5g}"))
        scores, _, _ = db.baselines(data, rank=1)
        fitted.tables["baselines"] = (scores.assign(truth=par["s_h"]), "every DIAL method's "
                                      "human scores (Human = λ 0, Pooled, ...), with the truth")
        lam = est.info["llm_weight"]
        fitted.info["llm_weight"] = lam
        t0 = time.perf_counter()
        sampling = {"draws": args.draws, "tune": args.tune, "chains": args.chains,
                    "random_seed": args.seed, "nuts_sampler": "pymc", "check": False}
        if lam == np.inf:
            model = hm.llm_stage(data, rank=1)
            first = bc.fit(model, "nuts", log_likelihood=False, initvals=hm.initvals(model),
                           **sampling)
            post = hm.cut_posterior(data, first, rank=1)
        else:
            model = hm.build(data, rank=1, llm_weight=lam)
            post = bc.fit(model, "nuts", initvals=hm.initvals(model), **sampling)
        t_nuts = time.perf_counter() - t0
        fitted.fits = {"mle": est, "nuts": post}
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
        }, index=pd.Index(list(llm.items), name="model")).sort_values("DIAL-Ada",
                                                                      ascending=False)
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
        truth_scores = pd.Series(par["s_h"], index=[f"human_ability[{m}]" for m in llm.items])
        _write_outputs(args, writer, entry, fitted, data, sort_by="mle", truth=truth_scores,
                       quiet=True)  # the tables above are the demo's view
        meta = _meta(args, "demo --dial", entry=entry, inputs=[], fitted=fitted,
                     data="simulated (DIAL design): N = 10 models, K = 6 judges, rank 1, "
                     f"24,000 LLM verdicts, 300 human comparisons, seed {args.seed}",
                     kendall_tau=tau, sampling=sampling)
        full = writer.commit(meta)
    _finish(args, full, {}, fitted)
    return 0


def _demo_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    demo = sub.add_parser("demo", help="fit MLE, MAP and NUTS and print the comparison table")
    demo.add_argument("data_dir", nargs="?", default=None, type=_existing_dir,
                      help="folder holding ppr-chatbot-arena/ (default: simulated data)")
    _sampling_flags(demo, defaults=True)
    _output_flags(demo, json_flag=False)
    demo.add_argument("--dial", action="store_true",
                      help="the DIAL pipeline: order effects, low-rank consensus, GACV, "
                      "calibrated leaderboard beside Human-only and Pooled")
    entry = registry.get("judge_discrimination_btl")
    _covariance_options(demo, "the MLE", entry.information, entry.cluster_keys)
    demo.set_defaults(func=_demo)


# ---------------------------------------------------------------- mean
def _mean(args: argparse.Namespace) -> int:
    from bayescal.data import Labels
    from bayescal.frequentist import judge_mean
    from bayescal.runs import RunWriter

    with RunWriter(args.out, inputs=[args.file], force=args.force) as writer:
        from bayescal.io import read_labels

        frame = _read_table(args.file, args.format)
        columns = _given(args, ("human", "judge", "labelled"))
        _check_columns(frame, args.file, Labels.from_frame, columns,
                       ("human", "judge", "labelled"))
        labels = read_labels(frame, **columns, positive=args.positive)
        table = judge_mean.estimate(labels, prob=args.prob).rename_axis("estimator")
        writer.table("summary.csv", table, "every estimator of the mean (index estimator)")
        _draw_mean_figure(writer, table)
        if not args.json:
            import pandas as pd

            pd.set_option("display.width", 200)
            print(f"{labels}")
            print(table.to_string(float_format=lambda v: f"{v:.4f}"))
        meta = _meta(args, "mean", options={"human": args.human, "judge": args.judge,
                                            "labelled": args.labelled,
                                            "positive": args.positive},
                     inputs=[_input(args.file, frame, "labels")])
        full = writer.commit(meta)
    _finish(args, full, {"summary": table}, None)
    return 0


def _draw_mean_figure(writer: RunWriter, table: pd.DataFrame) -> None:
    if not writer.active:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayescal import plots

    try:
        pc = plots.judge_mean_estimators(table)
        path = writer.path("estimators.png", "figure: every estimator with its interval")
        assert path is not None
        pc.savefig(path, dpi=100)
    finally:
        plt.close("all")


def _mean_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mean = sub.add_parser("mean", help="estimate a mean under a noisy judge (Chen et al. 2026)")
    mean.add_argument("file", type=_existing_file, help="table with one row per item (CSV)")
    _format_flag(mean, layouts=False)
    mean.add_argument("--human", required=True, help="column of human labels")
    mean.add_argument("--judge", required=True, help="column of judge labels")
    mean.add_argument("--labelled", default=None,
                      help="boolean column marking human-labelled rows (default: non-missing)")
    mean.add_argument("--positive", default=None,
                      help="human label value meaning Y = 1, for a binary label not coded 0/1 "
                      "(e.g. 2 for 1/2 codes, yes for yes/no); judge columns in the same coding "
                      "are mapped too")
    _output_flags(mean)
    mean.set_defaults(func=_mean)


# ------------------------------------------------------------------ calibrate
_STATE_FORMAT = "bayescal-calibrator-state"


def _load_state(path: Path) -> tuple[Any, list[dict[str, Any]]]:
    """The calibrator and the batches recorded in a state file; refuses one that is not whole."""
    from bayescal.calibration import from_dict
    from bayescal.data import DataError

    try:
        state = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"--state {path}: not a readable state ({err}); it may have been cut "
                        "short: restore it from a backup, or start a new stream with a new "
                        "--state file") from None
    try:
        model = from_dict(state)
    except DataError as err:
        raise DataError(f"--state {path}: {err}; restore the file, or start a new stream with "
                        "a new --state file") from None
    batches = state.get("batches", [])
    if not isinstance(batches, list):
        raise DataError(f"--state {path}: 'batches' must be a list")
    return model, batches


def _calibrate(args: argparse.Namespace) -> int:
    """Learn a calibration map from ANCHORS (added to ``--state`` when it exists) and apply it to
    the judge scores of SCORES."""
    import numpy as np

    from bayescal.calibration.protocol import default_methods
    from bayescal.data import DataError
    from bayescal.io import read_ratings
    from bayescal.runs import created_now, refuse_inputs, sha256, write_atomic

    inputs = [args.anchors, args.scores]
    for flag, path in (("--out", args.out), ("--state", args.state)):
        if path is not None:
            refuse_inputs(path, inputs, flag, folder=False)
            if Path(path).is_dir():
                raise _UsageError(f"{flag} {path} is a folder; name a file")
    if args.out is not None and args.state is not None and Path(args.out).resolve() == Path(
            args.state).resolve():
        raise _UsageError(f"--out and --state name the same file {args.out}")
    lo, hi = args.scale
    methods = default_methods(distributions=args.dist is not None)
    state_path = Path(args.state) if args.state else None
    model, batches = (_load_state(state_path) if state_path is not None and state_path.exists()
                      else (None, []))
    name = args.method or "sqm"
    if name not in methods:
        raise DataError(f"unknown method {name!r}; choose one of {sorted(methods)}")
    fresh = methods[name]((lo, hi))
    if model is not None:
        want, have = fresh.to_dict(), model.to_dict()
        if (want["method"], want["params"]) != (have["method"], have["params"]):
            if args.method is None and tuple(have["params"]["scale"]) == (lo, hi):
                fresh = model  # --method not given: continue the state's own method
            else:
                raise DataError(
                    f"--state {args.state} holds a {have['method']} calibrator with "
                    f"{have['params']}, not {name} on the scale {lo}..{hi}; use the state's "
                    "method and scale, or a new --state file")
        else:
            fresh = model
    digest = sha256(args.anchors)
    if not args.allow_repeat and any(b.get("sha256") == digest for b in batches):
        raise DataError(f"{args.anchors}: these anchors were already added to --state "
                        f"{args.state}; adding them again would count every anchor twice "
                        "(pass --allow-repeat if they are new anchors that happen to be equal)")
    dist = args.dist.split(",") if args.dist else None
    anchors_df = _read_table(args.anchors, args.format)
    scores_df = _read_table(args.scores, args.format)
    judge_col = None if dist is not None and args.judge not in scores_df else args.judge
    anchors = read_ratings(anchors_df, scale=(lo, hi), judge=judge_col, human=args.human,
                           judge_dist=dist)
    if not anchors.rated.all():
        raise DataError(f"{args.anchors}: rows {list(anchors.index[~anchors.rated][:5])} have no "
                        f"human score in column {args.human!r}; every anchor needs one")
    targets = read_ratings(scores_df, scale=(lo, hi), judge=judge_col, human=None,
                           judge_dist=dist)
    takes_dist = fresh.accepts_distributions and anchors.judge_dist is not None
    fresh.partial_fit(anchors.judge_dist if takes_dist else anchors.judge, anchors.human)
    calibrated = fresh.predict(targets.judge_dist if takes_dist else targets.judge)
    out = scores_df.assign(calibrated=calibrated,
                           calibrated_rounded=np.clip(np.floor(calibrated + 0.5), lo, hi)
                           .astype(int))
    if args.out:
        write_atomic(args.out, out.to_csv(index=False).encode())
        print(f"wrote {len(out)} calibrated scores to {args.out} ({fresh.name}, "
              f"{fresh.n_anchors} anchors)", file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False)
    if state_path is not None:  # after the scores: a failed write leaves the state as it was
        record = {"file": Path(args.anchors).name, "sha256": digest, "anchors": anchors.n,
                  "added": created_now()}
        state = {"format": _STATE_FORMAT, **fresh.to_dict(), "batches": [*batches, record]}
        write_atomic(state_path, (json.dumps(state, allow_nan=False) + "\n").encode())
        print(f"--state {state_path}: {fresh.n_anchors} anchors in {len(batches) + 1} "
              "batch(es)", file=sys.stderr)
    return 0


def _calibrate_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cal = sub.add_parser("calibrate", help="calibrate judge scores to human scores "
                         "(Subasic et al. 2026)")
    cal.add_argument("anchors", type=_existing_file,
                     help="CSV of anchors: judge and human score per item")
    cal.add_argument("scores", type=_existing_file, help="CSV of judge scores to calibrate")
    _format_flag(cal, layouts=False)
    cal.add_argument("--scale", nargs=2, type=int, required=True, metavar=("LOW", "HIGH"),
                     help="declared integer scale, e.g. --scale 1 5")
    cal.add_argument("--method", default=None,
                     help="sqm (mid-distribution, default), sqm_upper (the paper's formula), "
                          "isotonic, platt, few_shot, ... (see bayescal.calibration.protocol); "
                          "with an existing --state, the state's method")
    cal.add_argument("--judge", default="judge", help="judge score column (default judge)")
    cal.add_argument("--human", default="human", help="human score column (default human)")
    cal.add_argument("--dist", default=None,
                     help="comma-separated judge probability columns, one per scale point "
                          "(enables sqm_predictive and contrastive_rollout)")
    cal.add_argument("--out", default=None, help="output CSV (default: standard output)")
    cal.add_argument("--state", default=None, metavar="FILE",
                     help="the stream's state (JSON): read if it exists, the anchors added to "
                     "it, written back atomically")
    cal.add_argument("--allow-repeat", action="store_true",
                     help="add an anchors file to --state although the same file was added "
                     "before")
    cal.set_defaults(func=_calibrate)


# ------------------------------------------------------------------ the command
def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayescal",
        description="Calibrated LLM-as-a-judge evaluations: Bayesian models and frequentist twins.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _demo_parser(sub)
    _fit_parser(sub)
    _mean_parser(sub)
    _calibrate_parser(sub)
    _report_parser(sub)
    _next_parser(sub)
    return parser


# ---------------------------------------------------------------- next
def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a fraction between 0 and 1 is needed, got {text!r}")
    return value


def _next(args: argparse.Namespace) -> int:
    from bayescal import design
    from bayescal.runs import RunFolderError, load_run, refuse_inputs, write_atomic

    prog = "bayescal next"
    run = load_run(args.run_dir)
    if run.model not in ("judge_discrimination_btl", "human_calibration"):
        raise _UsageError(f"{args.run_dir} is a run of {run.model or run.command}; bayescal next "
                          "chooses comparisons for a judge-discrimination-btl or "
                          "human-calibration fit (for human labels of a mean use "
                          "bayescal.design.choose_labels)", prog)
    if run.model == "human_calibration" and args.judges is not None:
        raise _UsageError("--judges does not apply to human-calibration: the comparisons it "
                          "chooses are human ones", prog)
    if args.target is not None and args.top is not None:
        raise _UsageError("give --target or --top, not both", prog)
    out = Path(args.out)
    refuse_inputs(out, [i["path"] for i in run.meta.get("inputs", []) if "path" in i], "--out",
                  folder=False)
    if out.resolve().parent == run.path.resolve():
        raise RunFolderError(f"--out {out} is inside the run folder {run.path}, which holds one "
                             "whole run; write the next comparisons elsewhere")
    if out.exists() and not args.force:
        raise RunFolderError(f"--out {out} exists; choose a new file or pass --force to "
                             "replace it")
    target: Any = "all" if args.target is None else tuple(args.target)
    if args.target is not None and len(args.target) != 2:
        raise _UsageError(f"--target needs two item labels A,B, got {args.target}", prog)
    table = design.next_comparisons(run.result(), args.budget, target=target, top=args.top,
                                    judges=args.judges, explore=args.explore,
                                    random_seed=args.seed)
    columns = [c for c in ("item_a", "item_b", "judge", "outcome", design.CHOSEN_COLUMN)
               if c in table]
    write_atomic(out, table[columns].to_csv(index=False).encode())
    print(f"wrote {len(table)} comparisons to {out} (target: {table.attrs['target']}; its "
          f"standard error {table.attrs['target_se_now']:.4g} now, "
          f"{table['target_se'].iloc[-1]:.4g} expected after them; "
          f"{(table['chosen'] == 'random').sum()} drawn at random, --explore {args.explore}). "
          "Fill in the outcome column, append the rows to the verdicts (keep the chosen column: "
          "bayescal fit reads it as the design's history) and fit again. After an "
          "adaptive choice from a first fit of a few verdicts per pair, a judge-aware "
          "leaderboard's Wald intervals (and a fixed prior's posterior) cover about two points "
          "less than their level, less as the verdicts grow; the NUTS posterior with the "
          "abilities' scale learned keeps it (bayescal fit judge-discrimination-btl ... --method "
          "nuts --ability-scale-sd 2), and so does --explore 1 (random verdicts). Evidence: "
          "validation/design_comparisons.py in the bayescal repository.",
          file=sys.stderr)
    return 0


def _next_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    nxt = sub.add_parser(
        "next", help="choose the next comparisons to collect for a fitted leaderboard",
        description="From a judge-discrimination-btl or human-calibration run folder (bayescal "
        "fit ... --out RUN_DIR), choose the next --budget verdicts (item pair, and the judge; "
        "human comparisons for human-calibration) that most lower the variance of the target: "
        "every pairwise contrast by default, one contrast (--target A,B) or the top-k set "
        "(--top K). Writes a CSV in the tidy verdict format with an empty outcome column to "
        "fill in and append.")
    nxt.add_argument("run_dir", type=_existing_dir, metavar="RUN_DIR",
                     help="a run folder of bayescal fit judge-discrimination-btl or "
                     "human-calibration")
    nxt.add_argument("--budget", type=_positive_int, required=True,
                     help="number of comparisons to choose")
    nxt.add_argument("--out", required=True, metavar="FILE",
                     help="CSV to write: item_a, item_b, judge, outcome (empty), chosen (greedy or "
                     "random: the history a later bayescal fit reads)")
    nxt.add_argument("--target", type=_names, default=None, metavar="A,B",
                     help="one contrast: the two item labels (default: every pairwise contrast)")
    nxt.add_argument("--top", type=_positive_int, default=None, metavar="K",
                     help="the pairs that decide the top-K set")
    nxt.add_argument("--judges", type=_names, default=None, metavar="A,B",
                     help="the judges that may be asked (default: every judge of the fit)")
    nxt.add_argument("--explore", type=_fraction, default=0.25,
                     help="fraction of the budget drawn at random, which narrows the refit's "
                     "loss of coverage without removing it (default 0.25; 0 = all greedy)")
    nxt.add_argument("--seed", type=_seed, default=0, help="seed of the random part")
    nxt.add_argument("--force", action="store_true", help="replace an existing --out file")
    nxt.set_defaults(func=_next)


# ---------------------------------------------------------------- report
def _report_run(args: argparse.Namespace) -> int:
    from bayescal.report import write_report

    paths = write_report(args.run_dir)
    print(f"wrote {', '.join(str(p) for p in paths)}", file=sys.stderr)
    return 0


def _report_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = sub.add_parser(
        "report", help="write a run folder's report (report.html, report.md)",
        description="Write one self-contained HTML page (and the same as Markdown) from a run "
        "folder written by bayescal fit, demo or mean --out RUN_DIR: data summary, leaderboard "
        "with intervals and rank intervals, judges, diagnostics, warnings, figures. The files "
        "are added to the run folder and listed in its run.json.")
    report.add_argument("run_dir", type=_existing_dir, metavar="RUN_DIR",
                        help="a run folder (the --out of bayescal fit, demo or mean)")
    report.set_defaults(func=_report_run)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bayescal`` command.

    Arguments are validated before any fit. An error the user can fix (a bad option, a missing
    file or column, bad data, an estimate the data cannot identify) is one line on stderr
    naming the option, with exit code 2; ``--debug`` prints the traceback instead. Warnings are
    printed once each, as ``warning: ...``, after the command.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    log = _WarningLog()
    try:
        with log:
            args = _parser().parse_args(argv)
            args.argv, args.log = argv, log
            if getattr(args, "report", False) and not getattr(args, "out", None):
                raise _UsageError("--report writes into the run folder: give --out RUN_DIR",
                                  f"bayescal {args.command}")
            code = int(args.func(args))
    except Exception as err:
        log.print()
        line = _report(err, args)
        if line is None:
            raise
        if getattr(args, "debug", False):
            traceback.print_exc()
        else:
            print(line, file=sys.stderr)
        return 2
    log.print()
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
