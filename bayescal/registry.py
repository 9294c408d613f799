"""The one table of models: every model's parts, declared once.

Each :class:`Entry` names, for one model stem, the paper it implements, the data container it
reads, its PyMC module (``build``, ``Priors``) and its frequentist twin (``fit``, ``loglik``),
the quantities that are identified (the ones diagnosed and compared), the covariance kinds and
built-in cluster keys its twin offers, its own options (name, type, default, help: enough to
generate a command line), its registered simulation and the modes it documents, its card and
its command-line name. ``tests/test_contract.py`` runs one contract over every entry, so a
model missing a piece fails by name; ``bayescal.cli`` reads the command-line parts.

Modules are named by import path and imported on first use: ``import bayescal.registry``
costs no numpy, PyMC or pandas import, so ``bayescal --help`` stays fast. Adding a model is one
:class:`Entry` in :data:`ENTRIES` plus its files (see ``ARCHITECTURE.md``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType, ModuleType
from typing import Any

__all__ = ["ENTRIES", "REQUIRED", "Contract", "Entry", "Option", "Paper", "Simulation", "by_cli",
           "entries", "get"]


class _Required:
    """The default of an option the caller must give (``rank`` of the low-rank model)."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
_SAME: Any = object()  # an Option's cli_default when it is the default

#: Functions an option can feed.
USES = ("build", "fit", "loglik")


def _resolve(path: str) -> Any:
    """``"package.module:attribute"`` -> the attribute; ``"package.module"`` -> the module."""
    module, _, attribute = path.partition(":")
    value: Any = import_module(module)
    for part in filter(None, attribute.split(".")):
        value = getattr(value, part)
    return value


@dataclass(frozen=True)
class Paper:
    """The paper a model implements, as the docs cite it (authors, year, arXiv id)."""

    authors: str
    year: int
    title: str
    arxiv: str | None = None
    code: str | None = None  # the authors' repository, where there is one

    def cite(self) -> str:
        """``Xu, Tan, Wu, Zhou 2026, arXiv:2601.21817``."""
        where = f"arXiv:{self.arxiv}" if self.arxiv else f"code: {self.code}"
        return f"{self.authors} {self.year}, {where}"


@dataclass(frozen=True)
class Option:
    """One model option: a keyword-only argument of ``build``, the twin's ``fit`` or ``loglik``.

    Attributes
    ----------
    name : str
        The keyword (``rank``); the command-line flag is :attr:`flag`.
    type : type
        ``bool``, ``int``, ``float``, ``str`` or ``list`` (of str).
    default : object
        The twin's ``fit`` default (:data:`REQUIRED` when there is none), and every other
        function's unless ``defaults`` says otherwise; the contract test checks each against
        the function's signature.
    help : str
        One line for ``--help``.
    used_by : tuple of str
        The functions that take it (of ``"build"``, ``"fit"``, ``"loglik"``).
    choices : tuple, optional
        The allowed values, for a ``str`` option.
    defaults : mapping, optional
        Function -> default where it differs from ``default`` (human calibration's λ is ∞ in
        the twin, 1 in the power posterior, which has no λ = ∞).
    cli : str, optional
        The command-line flag's name where it differs from the keyword (judge
        discrimination's ``scale`` is ``--discrimination-scale``: ``--scale`` is the display
        scale of every leaderboard).
    words : mapping, optional
        Values the command line takes besides the type, word -> meaning (human calibration's
        λ: ``gacv``, chosen by GACV); the command line's model step resolves them.
    cli_default : object, optional
        The command line's default where it differs from ``default`` (λ: ``gacv``).
    cli_off : str, optional
        For a ``bool`` option, a second flag setting it false besides ``--no-<flag>``
        (judge discrimination: ``--unweighted``).
    """

    name: str
    type: type
    default: Any
    help: str
    used_by: tuple[str, ...] = ("build", "fit")
    choices: tuple[Any, ...] | None = None
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    cli: str | None = None
    words: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cli_default: Any = _SAME
    cli_off: str | None = None

    def __post_init__(self) -> None:
        unknown = (set(self.used_by) | set(self.defaults)) - set(USES)
        if unknown:
            raise ValueError(f"option {self.name!r}: used_by names {sorted(unknown)}; use {USES}")
        if self.cli_default is not _SAME and self.cli_default not in self.words:
            raise ValueError(f"option {self.name!r}: cli_default must be one of its words")

    def default_for(self, function: str) -> Any:
        """The default of ``function``'s keyword."""
        return self.defaults.get(function, self.default)

    @property
    def flag(self) -> str:
        """``--llm-weight`` for ``llm_weight`` (``--`` + :attr:`cli` where it is set)."""
        return "--" + (self.cli or self.name.replace("_", "-"))

    @property
    def command_line_default(self) -> Any:
        """The default of the command-line flag (:attr:`cli_default`, else the twin's)."""
        return self.default if self.cli_default is _SAME else self.cli_default


@dataclass(frozen=True)
class Simulation:
    """A registered simulation of a model's data (the paper's design at a small size).

    ``function(random_seed=..., **modes[mode])`` returns a data set in the model's container;
    ``modes`` are the documented variants (a design option of the simulator each), every one of
    which the contract test fits.
    """

    function: Callable[..., Any]
    modes: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({"default": {}}))

    def draw(self, mode: str = "default", *, random_seed: int = 0) -> Any:
        if mode not in self.modes:
            raise ValueError(f"unknown simulation mode {mode!r}; modes are {list(self.modes)}")
        return self.function(random_seed=random_seed, **self.modes[mode])


@dataclass(frozen=True)
class Contract:
    """What the contract test needs from a model beyond its public functions.

    Attributes
    ----------
    options : mapping
        Model options the contract runs with (each passed to the functions of its ``used_by``).
    chart : str
        Import path of ``chart(estimate, data, options) -> bayescal.charts.Chart``: free
        coordinates around the estimate, mapped to the twin's ``loglik`` parameters and to
        the identified quantities compared (written from the model's definition, not from the
        twin's code).
    units : str
        Import path of ``units(data, loglik, options) -> list[bayescal.charts.Unit]``: the
        data's verdicts (items, anchors), each with its log-likelihood and those of its possible
        outcomes (functions of the parameters, from ``loglik``), its weight in the objective and
        its cluster under every key.
    observed_block : str, optional
        For a weighted objective Σ_b w_b ℓ_b (units in several blocks): the block whose share
        of the observed Hessian H is what the other blocks' expected informations leave,
        I_ref = (H − Σ_{b≠ref} w_b I_b)/w_ref. A block's own Hessian depends on the chart
        wherever its gradient is not zero (only the total's is, at the estimate), so this is
        the chart-free observed meat (human calibration: the LLM block).
    same_information : tuple of (str, str)
        Kinds that coincide on every data set by theory (observed = expected for a
        canonical-link model), so that the test does not ask them to differ.
    likelihood_potentials : tuple of str
        Names of ``pm.Potential`` terms of the PyMC model that are part of its likelihood
        (human calibration's tempered LLM term); the rest of its likelihood is its observed
        variables.
    estimate_loglik : mapping
        ``loglik`` options under which it gives ``Estimate.loglik`` (default: the contract's;
        human calibration reports the human comparisons' log-likelihood, λ = 0, the quantity
        its λ path compares, not the weighted objective).
    """

    options: Mapping[str, Any]
    chart: str
    units: str
    observed_block: str | None = None
    same_information: tuple[tuple[str, str], ...] = ()
    likelihood_potentials: tuple[str, ...] = ()
    estimate_loglik: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Entry:
    """Everything the library knows about one model (see the module docstring)."""

    stem: str
    title: str
    paper: Paper
    data_type: str  # "Comparisons", "Labels" or "Ratings" (a class of bayescal.data)
    model: str  # import path of the PyMC module: build, Priors
    twin: str  # import path of the frequentist twin: fit, loglik
    identified: tuple[str, ...]
    information: tuple[str, ...]
    cluster_keys: tuple[str, ...]
    options: tuple[Option, ...]
    simulation: Simulation
    contract: Contract
    cli: str
    card: str
    initvals: str | None = None  # import path of initvals(model) for MAP and NUTS, where needed
    # what the run folder and the report show (bayescal.runs): the item score the leaderboard
    # ranks (None: no leaderboard), whether it is in log-odds units (then win probabilities
    # and the Elo display scale apply), the per-judge quantities of the judges table and the
    # figures (names of bayescal.runs.FIGURES)
    score: str | None = None
    score_log_odds: bool = True
    judge_parameters: tuple[str, ...] = ()
    figures: tuple[str, ...] = ("forest",)
    # import path of canonical(result) -> result, applied to MAP and NUTS fits (low-rank: the
    # canonical factors per draw); tables computed from the twin's Estimate, name -> import
    # path of f(estimate) -> DataFrame (order effects: the Wald tests)
    canonical: str | None = None
    twin_tables: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # judge-specific effects of comparison features (feature_effect[judge, feature]): the
    # command line's --feature and --humans, and the contrasts to the humans from the MLE
    features: bool = False

    # ------------------------------------------------------------------ the parts, lazily
    @property
    def model_module(self) -> ModuleType:
        return _resolve(self.model)

    @property
    def twin_module(self) -> ModuleType:
        return _resolve(self.twin)

    @property
    def build(self) -> Callable[..., Any]:
        return self.model_module.build

    @property
    def priors(self) -> type:
        return self.model_module.Priors

    @property
    def fit(self) -> Callable[..., Any]:
        return self.twin_module.fit

    @property
    def loglik(self) -> Callable[..., float]:
        return self.twin_module.loglik

    @property
    def data_class(self) -> type:
        return _resolve(f"bayescal.data:{self.data_type}")

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise KeyError(f"{self.stem} has no option {name!r}; options are "
                       f"{[o.name for o in self.options]}")

    def options_for(self, function: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """The entries of ``values`` that ``function`` (``"build"``, ...) takes."""
        if function not in USES:
            raise ValueError(f"function must be one of {USES}, got {function!r}")
        unknown = [k for k in values if k not in {o.name for o in self.options}]
        if unknown:
            raise KeyError(f"{self.stem} has no option(s) {unknown}")
        return {k: v for k, v in values.items() if function in self.option(k).used_by}

    def signature(self, function: str) -> inspect.Signature:
        """The signature of ``build``, ``fit`` or ``loglik``."""
        return inspect.signature(getattr(self, function))

    def canonical_form(self, result: Any) -> Any:
        """A MAP or NUTS fit in the model's canonical form (:attr:`canonical`), else as is."""
        return _resolve(self.canonical)(result) if self.canonical else result

    def twin_table(self, name: str) -> Callable[..., Any]:
        """The function behind :attr:`twin_tables` ``[name]``."""
        return _resolve(self.twin_tables[name])

    def fit_kwargs(self, model: Any) -> dict[str, Any]:
        """Extra keyword arguments of :func:`bayescal.fit` (MAP and NUTS) for this model."""
        return {"initvals": _resolve(self.initvals)(model)} if self.initvals else {}


# ---------------------------------------------------------------------------- simulations
# The registered simulations: the simulators of bayescal.simulate at a size the contract test
# fits in seconds, returning the model's data container. Imports are inside, on first use.
def _simulate_judge_discrimination(*, random_seed: int, n_items: int = 5, n_judges: int = 3,
                                   n_comparisons: int = 900, as_frame: bool = False) -> Any:
    from bayescal import simulate
    from bayescal.data import Comparisons

    truth = simulate.judge_discrimination_truth(n_items, n_judges, random_seed=random_seed)
    out = simulate.judge_discrimination_btl(truth, n_comparisons, random_seed=random_seed + 1,
                                            as_frame=as_frame)
    return Comparisons.from_frame(out) if as_frame else out


def _simulate_order_effect(*, random_seed: int, n_items: int = 8, n_judges: int = 2,
                           n_comparisons: int = 1600, pair_sd: float = 0.0) -> Any:
    from bayescal import simulate

    truth = simulate.order_effect_truth(n_items, n_judges, random_seed=random_seed)
    return simulate.order_effect_btl(truth, n_comparisons, pair_sd=pair_sd,
                                     random_seed=random_seed + 1)


def _simulate_low_rank(*, random_seed: int, n_items: int = 8, n_judges: int = 4, rank: int = 1,
                       n_comparisons: int = 2400, overdispersion: float = 0.0,
                       both_orders: bool = False) -> Any:
    from bayescal import simulate

    truth = simulate.low_rank_judges_truth(n_items, n_judges, rank, random_seed=random_seed)
    return simulate.low_rank_judges(truth, n_comparisons, overdispersion=overdispersion,
                                    both_orders=both_orders, random_seed=random_seed + 3)


def _simulate_human_calibration(*, random_seed: int, n_items: int = 7, n_judges: int = 3,
                                n_llm: int = 2400, n_human: int = 300,
                                misspecified: float = 0.0) -> Any:
    from bayescal import simulate_dial
    from bayescal.data import Comparisons

    par = simulate_dial.truth(n_items, n_judges, 1, random_seed=random_seed,
                              misspecified=misspecified)
    llm = simulate_dial.llm(par, n_llm, random_seed=random_seed + 3)
    human = simulate_dial.human(par, n_human, random_seed=random_seed + 4)
    return Comparisons.concat([llm, human], humans=["human"])


def _simulate_misclassification(*, random_seed: int, n_items: int = 600, n_judges: int = 2,
                                labelled_fraction: float = 0.3,
                                item_sd: tuple[float, float] = (0.0, 0.0)) -> Any:
    from bayescal import simulate

    labels, _ = simulate.misclassification(
        n_items, prevalence=0.35, specificity=[0.85, 0.75, 0.9, 0.8][:n_judges],
        sensitivity=[0.8, 0.7, 0.85, 0.75][:n_judges], labelled_fraction=labelled_fraction,
        item_sd=item_sd, random_seed=random_seed)
    return labels


def _simulate_score_calibration(*, random_seed: int, n_anchors: int = 300,
                                scale: tuple[int, int] = (1, 5),
                                n_targets: int = 0) -> Any:
    from bayescal import simulate

    ratings, _ = simulate.score_calibration(n_anchors, scale=scale, n_targets=n_targets,
                                            random_seed=random_seed)
    return ratings


_BTL_KINDS = ("expected", "observed", "sandwich", "cluster")
_TIES = Option("ties", str, "half", "tie model of the PyMC model and of the twin (half: half a "
               "win each way; davidson: Davidson 1970, a tie parameter per judge)",
               ("build", "fit", "loglik"), ("half", "davidson"))
_PAIR_KEYS = ("judge_pair", "pair")
_ABILITY_SCALE = Option("ability_scale_sd", float, None, "learn the abilities' scale, "
                        "ability_scale ~ HalfNormal(S) (the posterior that keeps its level "
                        "after bayescal next's adaptive choice; read it by --method nuts)",
                        ("build",))
_DIAL = Paper("the DIAL authors", 2026, "Position-Debiased LLM Judges with Adaptive Human "
              "Preference Calibration", code="JinHongDu-Lab/DIAL")
_CHEN = Paper("Chen, Lu, Li, Guo, Li", 2026, "Efficient Inference for Noisy LLM-as-a-Judge "
              "Evaluation", arxiv="2601.05420")

ENTRIES: Mapping[str, Entry] = MappingProxyType({e.stem: e for e in (
    Entry(
        stem="judge_discrimination_btl",
        title="Judge-discrimination Bradley–Terry–Luce model",
        paper=Paper("Xu, Tan, Wu, Zhou", 2026, "A Judge-Aware Ranking Framework for Evaluating "
                    "Large Language Models without Ground Truth", arxiv="2601.21817"),
        data_type="Comparisons",
        model="bayescal.models.judge_discrimination_btl",
        twin="bayescal.frequentist.judge_discrimination_btl",
        identified=("ability", "log_discrimination", "discrimination"),
        information=_BTL_KINDS,
        cluster_keys=_PAIR_KEYS,
        options=(
            Option("discrimination", bool, True, "estimate a discrimination per judge (false: "
                   "the unweighted BTL, every discrimination 1)", ("build", "fit", "loglik"),
                   cli_off="unweighted"),
            Option("scale", str, "log", "scale of the discriminations' Wald interval (log: "
                   "positive; natural: the paper's)", ("fit",), ("log", "natural"),
                   cli="discrimination-scale"),
            _TIES,
            _ABILITY_SCALE,
        ),
        simulation=Simulation(_simulate_judge_discrimination,
                              MappingProxyType({"default": {}, "frame": {"as_frame": True}})),
        contract=Contract(options=MappingProxyType({}), chart="bayescal.charts:btl",
                          units="bayescal.charts:verdicts"),
        cli="judge-discrimination-btl",
        card="models/judge_discrimination_btl.md",
        score="ability",
        judge_parameters=("discrimination",),
        figures=("forest", "leaderboard", "win_probabilities", "discriminations"),
        features=True,
    ),
    Entry(
        stem="order_effect_btl",
        title="Judge-specific order-effect Bradley–Terry–Luce model (DIAL model (1))",
        paper=_DIAL,
        data_type="Comparisons",
        model="bayescal.models.order_effect_btl",
        twin="bayescal.frequentist.order_effect_btl",
        identified=("ability", "order_effect"),
        information=_BTL_KINDS,
        cluster_keys=_PAIR_KEYS,
        options=(_TIES,),
        simulation=Simulation(_simulate_order_effect,
                              MappingProxyType({"default": {}, "overdispersed": {"pair_sd": 0.5}})),
        # a logit link linear in (s, b): the Hessian does not involve the outcomes
        contract=Contract(options=MappingProxyType({}), chart="bayescal.charts:order_effect",
                          units="bayescal.charts:verdicts",
                          same_information=(("expected", "observed"),)),
        cli="order-effect-btl",
        card="models/order_effect_btl.md",
        judge_parameters=("order_effect",),  # abilities per judge: no one item score
        figures=("forest", "order_effects"),
        twin_tables=MappingProxyType({
            "order_effect_tests": "bayescal.frequentist.order_effect_btl:order_effect_tests"}),
        features=True,
    ),
    Entry(
        stem="low_rank_judges",
        title="Low-rank judges: consensus and disagreement (DIAL Condition 3)",
        paper=_DIAL,
        data_type="Comparisons",
        model="bayescal.models.low_rank_judges",
        twin="bayescal.frequentist.low_rank_judges",
        identified=("ability", "order_effect", "consensus", "consensus_loading",
                    "consensus_loading_mean", "disagreement_matrix", "disagreement_projector",
                    "space_projector"),
        information=_BTL_KINDS,
        cluster_keys=_PAIR_KEYS,
        options=(
            Option("rank", int, 1, "number of disagreement factors r "
                   "(1 <= r <= min(judges - 1, items - 2))"),
            Option("order_effects", bool, True, "estimate an order effect per judge (false: "
                   "pool the display orders, DIAL-noPos)", ("build", "fit", "loglik")),
        ),
        simulation=Simulation(_simulate_low_rank, MappingProxyType({
            "default": {}, "overdispersed": {"overdispersion": 0.5},
            "both_orders": {"both_orders": True}})),
        contract=Contract(options=MappingProxyType({"rank": 1}), chart="bayescal.charts:low_rank",
                          units="bayescal.charts:verdicts"),
        cli="low-rank-judges",
        card="models/low_rank_judges.md",
        score="consensus",  # the consensus direction μ, scaled to norm √N: not log-odds
        score_log_odds=False,
        judge_parameters=("consensus_loading", "order_effect"),
        figures=("forest", "leaderboard", "judge_loadings", "order_effects"),
        canonical="bayescal.models.low_rank_judges:canonical_factors",
        features=True,
    ),
    Entry(
        stem="human_calibration",
        title="Human calibration of low-rank judges (DIAL (11)-(12))",
        paper=_DIAL,
        data_type="Comparisons",
        model="bayescal.models.human_calibration",
        twin="bayescal.frequentist.human_calibration",
        identified=("human_ability", "ability", "order_effect", "consensus",
                    "consensus_loading", "consensus_loading_mean", "calibration_consensus"),
        information=_BTL_KINDS,
        cluster_keys=_PAIR_KEYS,
        features=True,
        options=(
            Option("rank", int, 1, "number of disagreement factors r of the judge model",
                   ("build", "fit", "loglik")),
            Option("space", str, "consensus", "calibration basis: the consensus direction or "
                   "the judges' whole score space", ("build", "fit", "loglik"),
                   ("consensus", "full")),
            Option("llm_weight", float, float("inf"), "weight λ of the LLM verdicts (0: human "
                   "only; inf: anchored on the LLM-only fit)", ("build", "fit", "loglik"),
                   defaults=MappingProxyType({"build": 1.0, "loglik": REQUIRED}),
                   words=MappingProxyType({"gacv": "λ chosen by GACV over DIAL's grid (for "
                                           "MAP and NUTS: the twin's choice)"}),
                   cli_default="gacv"),
            Option("order_effects", bool, True, "estimate an order effect per judge (false: "
                   "DIAL-noPos)",
                   ("build", "fit", "loglik")),
            Option("anchored", str, "joint", "intervals at λ = inf: joint (with the LLM fit's "
                   "error) or fixed (the calibration space taken as known, DIAL's authors)",
                   ("fit",), ("joint", "fixed")),
        ),
        simulation=Simulation(_simulate_human_calibration, MappingProxyType({
            "default": {}, "misspecified": {"misspecified": 0.5}})),
        contract=Contract(options=MappingProxyType({"llm_weight": 4.0}),
                          chart="bayescal.charts:human_calibration",
                          units="bayescal.charts:human_verdicts", observed_block="llm",
                          likelihood_potentials=("llm_tempered",),
                          estimate_loglik=MappingProxyType({"llm_weight": 0.0})),
        cli="human-calibration",
        card="models/human_calibration.md",
        score="human_ability",
        judge_parameters=("consensus_loading", "order_effect"),
        figures=("forest", "leaderboard", "win_probabilities", "order_effects"),
        initvals="bayescal.models.human_calibration:initvals",
    ),
    Entry(
        stem="misclassification",
        title="Misclassification model of noisy binary judges",
        paper=_CHEN,
        data_type="Labels",
        model="bayescal.models.misclassification",
        twin="bayescal.frequentist.misclassification",
        identified=("prevalence", "specificity", "sensitivity"),
        information=("expected", "observed", "sandwich"),
        cluster_keys=(),
        options=(
            Option("judges", list, None, "the judges to use, in this order (default all)",
                   ("build", "fit", "loglik")),
            Option("kappa", str, "nonzero", "sign of each judge's q0 + q1 - 1: either "
                   "(fixed by the labels) or positive (judges known to beat chance)",
                   choices=("nonzero", "positive")),
            Option("algorithm", str, "newton", "optimizer of the twin", ("fit",),
                   ("newton", "em")),
        ),
        simulation=Simulation(_simulate_misclassification, MappingProxyType({
            "default": {}, "one_judge": {"n_judges": 1}})),
        contract=Contract(options=MappingProxyType({}), chart="bayescal.charts:misclassification",
                          units="bayescal.charts:label_items"),
        cli="misclassification",
        card="models/misclassification.md",
        judge_parameters=("sensitivity", "specificity"),
        figures=("forest", "judges"),
    ),
    Entry(
        stem="misclassification_dependent",
        title="Misclassification model of noisy binary judges with an item effect shared by "
              "the judges",
        paper=_CHEN,
        data_type="Labels",
        model="bayescal.models.misclassification_dependent",
        twin="bayescal.frequentist.misclassification_dependent",
        # σ_y is positive in the PyMC model (half-normal) and |σ̂_y| in the twin (its
        # likelihood is even in σ_y): identified, as are the median item's rates
        identified=("prevalence", "specificity", "sensitivity", "item_sd"),
        information=("expected", "observed", "sandwich"),
        cluster_keys=(),
        options=(
            Option("judges", list, None, "the judges to use, in this order (default all; at "
                   "least two)", ("build", "fit", "loglik")),
            Option("nodes", int, 64, "Gauss–Hermite nodes of the integral over the item "
                   "effect", ("build", "fit", "loglik")),
        ),
        # three judges with correlated errors in both classes (σ_0 = 1, σ_1 = 0.7), and four
        simulation=Simulation(_simulate_misclassification, MappingProxyType({
            "default": {"n_judges": 3, "n_items": 800, "item_sd": (1.0, 0.7)},
            "four_judges": {"n_judges": 4, "n_items": 800, "item_sd": (1.0, 0.7)}})),
        contract=Contract(options=MappingProxyType({}),
                          chart="bayescal.charts:misclassification_dependent",
                          units="bayescal.charts:label_items"),
        cli="misclassification-dependent",
        card="models/misclassification.md",
        judge_parameters=("sensitivity", "specificity"),
        figures=("forest", "judges"),
    ),
    Entry(
        stem="score_calibration",
        title="Monotone ordinal calibration of judge scores",
        paper=Paper("Subasic, Rabinovich, Chen", 2026, "Quantiles, Not Points: Streaming "
                    "Quantile Matching for Ordinal-Aware LLM-as-a-Judge Calibration",
                    arxiv="2611.00447"),
        data_type="Ratings",
        model="bayescal.models.score_calibration",
        twin="bayescal.frequentist.score_calibration",
        identified=("cutpoint_first", "cutpoint_log_gap", "log_increment", "cutpoint",
                    "level_effect", "calibrated_probability", "calibrated_mean"),
        information=("expected", "observed", "sandwich"),
        cluster_keys=(),
        options=(),
        simulation=Simulation(_simulate_score_calibration, MappingProxyType({
            "default": {}, "with_targets": {"n_targets": 50}})),
        contract=Contract(options=MappingProxyType({}),
                          chart="bayescal.charts:score_calibration",
                          units="bayescal.charts:anchors"),
        cli="score-calibration",
        card="models/score_calibration.md",
        figures=("forest", "calibration_map"),
    ),
)})


def get(stem: str) -> Entry:
    """The entry of a model stem (``judge_discrimination_btl``)."""
    try:
        return ENTRIES[stem]
    except KeyError:
        raise KeyError(f"unknown model {stem!r}; models are {list(ENTRIES)}") from None


def by_cli(name: str) -> Entry:
    """The entry of a command-line name (``judge-discrimination-btl``)."""
    for entry in ENTRIES.values():
        if entry.cli == name:
            return entry
    raise KeyError(f"unknown model {name!r}; models are {[e.cli for e in ENTRIES.values()]}")


def entries() -> Iterator[Entry]:
    """Every entry, in registry order."""
    return iter(ENTRIES.values())
