"""One contract for every registered model (``bayescal.registry``); test ids are the stems.

A model missing a piece fails here by name: its PyMC log-likelihood must equal its twin's
``loglik``, its flat-prior MAP the twin's MLE, every covariance kind its twin offers must match
one independent computation from the public ``loglik`` alone (so an SE 20 % off or the wrong
information matrix fails in every twin), its results must have the one table schema and
round-trip through netCDF, ``diagnose`` must see exactly its identified quantities, and its
registered simulation must produce, in every documented mode, data its model and twin accept.
The mutations of ``tests/mutations`` show the covariance checks failing under plausible bugs.

The independent computation (``_Independent``) works in a free chart of each model
(``bayescal.charts``): observed information by finite differences of ``loglik``, the
expected information from the per-outcome scores of one-unit data sets weighted by their
probabilities exp(ℓ), the sandwich and cluster meats from per-verdict scores, all carried to
the identified quantities by the delta method.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr

import bayescal as bc
from bayescal import charts, registry
from bayescal.frequentist._core import Estimate
from bayescal.frequentist.covariance import KINDS
from bayescal.schema import COLUMNS, term_labels

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = list(registry.entries())
STEMS = [e.stem for e in ENTRIES]
SEED = 11
# numerical derivatives of loglik agree with analytic covariances to ~1e-6 here; the
# tolerance is far below the 1.2 factor (+20 %) and the expected-vs-observed gaps (> 1 %)
RTOL = 1e-3
N_CLUSTERS = 120  # > 5 x the free parameters of every model: no few-clusters warning
TIE_FRACTION = 0.15


def _entry(stem: str) -> registry.Entry:
    return registry.get(stem)


# ---------------------------------------------------------------- data with ties and clusters
@cache
def contract_data(stem: str) -> Any:
    """The registered simulation, with ties and a cluster key added to pairwise verdicts.

    Ties make the residuals of a verdict differ from the model's variance, so the sandwich
    differs from the model-based covariances; random battles make the cluster meat differ
    from the per-verdict one.
    """
    entry = _entry(stem)
    data = entry.simulation.draw(random_seed=SEED)
    if entry.data_type != "Comparisons":
        return data
    rng = np.random.default_rng(SEED)
    v = charts.comparison_verdicts(data)
    y = np.where(rng.random(v["outcome"].size) < TIE_FRACTION, 0.5, v["outcome"])
    keys = np.asarray([f"battle_{g:03d}" for g in range(N_CLUSTERS)])
    battle = keys[rng.integers(0, N_CLUSTERS, y.size)]
    return bc.Comparisons.from_codes(data.items, data.judges, judge=v["judge"],
                                     item_a=v["item_i"], item_b=v["item_j"], outcome=y,
                                     order=v["order"], humans=data.humans, cluster=battle)


def _options(entry: registry.Entry, function: str) -> dict[str, Any]:
    return entry.options_for(function, entry.contract.options)


@cache
def twin_fit(stem: str, kind: str, key: str | None = None,
             correction: str | None = None) -> Estimate:
    entry = _entry(stem)
    extra = {} if kind == "auto" else {"information": kind}
    if key is not None:
        extra["cluster"] = key
    if correction is not None:
        extra["correction"] = correction
    return entry.fit(contract_data(stem), **_options(entry, "fit"), **extra)


@cache
def map_fit(stem: str):
    entry = _entry(stem)
    model = entry.build(contract_data(stem), priors=entry.priors.flat(),
                        **_options(entry, "build"))
    return bc.fit(model, "map", **entry.fit_kwargs(model))


@cache
def nuts_fit(stem: str):
    entry = _entry(stem)
    model = entry.build(contract_data(stem), **_options(entry, "build"))
    return bc.fit(model, "nuts", draws=100, tune=150, chains=2, cores=1, nuts_sampler="pymc",
                  random_seed=SEED, check=False, **entry.fit_kwargs(model))


def _reference_fit(stem: str) -> Estimate:
    entry = _entry(stem)
    return twin_fit(stem, entry.information[0])


# ---------------------------------------------------------------- numerical derivatives
def _gradient(f: Callable[[np.ndarray], float], x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    out = np.empty(x.size)
    for a in range(x.size):
        e = np.zeros(x.size)
        e[a] = h
        out[a] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def _hessian(f: Callable[[np.ndarray], float], x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    n = x.size
    out = np.empty((n, n))
    step = np.eye(n) * h
    for a in range(n):
        for b in range(a, n):
            out[a, b] = out[b, a] = (f(x + step[a] + step[b]) - f(x + step[a] - step[b])
                                     - f(x - step[a] + step[b])
                                     + f(x - step[a] - step[b])) / (4 * h * h)
    return out


def _jacobian(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
              h: float = 1e-6) -> np.ndarray:
    cols = []
    for a in range(x.size):
        e = np.zeros(x.size)
        e[a] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.column_stack(cols)


class _Independent:
    """Covariances of one model's MLE from its public ``loglik`` alone (module docstring)."""

    def __init__(self, stem: str) -> None:
        entry = _entry(stem)
        self.entry = entry
        self.data = contract_data(stem)
        self.estimate = _reference_fit(stem)
        opts = dict(entry.contract.options)
        self.chart = registry._resolve(entry.contract.chart)(self.estimate, self.data, opts)
        loglik = functools.partial(entry.loglik, **_options(entry, "loglik"))
        self.units = registry._resolve(entry.contract.units)(self.data, loglik, opts)
        params = self.chart.params

        def ll(x: np.ndarray, data: Any) -> float:
            return float(loglik(params(x), data))

        self.ll = ll
        x = self.chart.x
        self.hessian = -_hessian(lambda z: ll(z, self.data), x)
        scores: dict[int, np.ndarray] = {}

        def score(logp: Callable[[Any], float]) -> np.ndarray:
            if id(logp) not in scores:
                scores[id(logp)] = _gradient(lambda z: logp(params(z)), x)
            return scores[id(logp)]

        self.scores = np.array([score(u.logp) for u in self.units])
        self.weights = np.array([u.weight for u in self.units])
        self.block = np.array([u.block for u in self.units])
        self.block_weight = {}
        for b in np.unique(self.block):
            w = np.unique(self.weights[self.block == b])
            assert w.size == 1, f"{stem}: units of block {b!r} have different weights {w}"
            self.block_weight[str(b)] = float(w[0])
        # expected information per cell: Σ_o P(o) s_o s_oᵀ with P(o) = exp(ℓ_o)
        self.cell_information: dict[Any, np.ndarray] = {}
        self.total_probability: dict[Any, float] = {}
        for u in self.units:
            if u.cell in self.cell_information:
                continue
            probs = [np.exp(out(params(x))) for out in u.outcomes]
            self.cell_information[u.cell] = sum(
                pr * np.outer(score(out), score(out)) for pr, out in zip(probs, u.outcomes,
                                                                         strict=True))
            self.total_probability[u.cell] = float(sum(probs))

    def covariance(self, kind: str, key: str | None = None,
                   correction: str = "CR1") -> tuple[list[str], np.ndarray]:
        """(terms, covariance) of the identified quantities under ``kind``.

        Bread: the expected information for ``expected``, else the observed Hessian H of the
        objective Σ_b w_b ℓ_b. Meat, summed over the blocks (independent samples) with w_b²:
        the expected informations; for ``observed`` the same with one block taking the rest
        of H (its own Hessian depends on the chart); per-verdict scores centred within the
        block (``sandwich``); cluster totals of the block, centred, times G_b/(G_b − 1) for
        CR1 (``cluster``). With one block the scores sum to zero at the estimate and these
        are the textbook forms.
        """
        blocks = self.block_weight
        expected = {b: sum(self.cell_information[u.cell] for u in self.units if u.block == b)
                    for b in blocks}
        if kind == "expected":
            bread = sum(w * expected[b] for b, w in blocks.items())
            meat = sum(w**2 * expected[b] for b, w in blocks.items())
        elif kind == "observed":
            bread = self.hessian
            if len(blocks) == 1:
                meat = bread
            else:
                ref = self.entry.contract.observed_block
                w_ref = blocks[ref]
                meat = w_ref * bread + sum((w**2 - w_ref * w) * expected[b]
                                           for b, w in blocks.items() if b != ref)
        elif kind in ("sandwich", "cluster"):
            bread = self.hessian
            meat = np.zeros_like(bread)
            for b, w in blocks.items():
                rows = self.scores[self.block == b]
                if kind == "sandwich":
                    totals, factor = rows, 1.0
                else:
                    labels = [u.clusters[key] for u in self.units if u.block == b]
                    uniq, code = np.unique(labels, return_inverse=True)
                    totals = np.zeros((uniq.size, rows.shape[1]))
                    np.add.at(totals, code, rows)
                    g = uniq.size
                    factor = g / (g - 1) if correction == "CR1" else 1.0
                centred = totals - totals.mean(axis=0)
                meat += w**2 * factor * centred.T @ centred
        else:
            raise ValueError(kind)
        inv = np.linalg.inv(bread)
        cov_x = inv @ meat @ inv

        def flat(z: np.ndarray) -> np.ndarray:
            return np.concatenate([np.ravel(v) for v in self.chart.quantities(z).values()])

        jac = _jacobian(flat, self.chart.x)
        terms = [t for name in self.chart.quantities(self.chart.x)
                 for t in term_labels(name, self.estimate.params[name])]
        return terms, jac @ cov_x @ jac.T


@cache
def independent(stem: str) -> _Independent:
    return _Independent(stem)


def _assert_covariance_close(est: Estimate, terms: list[str], expected: np.ndarray,
                             what: str) -> None:
    index = [est.terms.index(t) for t in terms]
    got = est.cov[np.ix_(index, index)]
    se_got, se_want = np.sqrt(np.clip(np.diag(got), 0, None)), np.sqrt(np.diag(expected))
    scale = np.sqrt(np.outer(se_want, se_want)) + 1e-12
    worst = np.abs(got - expected) / scale
    bad = np.unravel_index(np.argmax(worst), worst.shape)
    assert worst.max() < RTOL, (
        f"{what}: covariance of {terms[bad[0]]}, {terms[bad[1]]} is {got[bad]:.6g}, the "
        f"independent computation gives {expected[bad]:.6g} (SE ratios "
        f"{np.round(se_got / np.where(se_want > 0, se_want, 1), 4).tolist()[:6]} ...)")


# ---------------------------------------------------------------- parametrisation
def _kind_cases() -> list[Any]:
    cases = []
    for e in ENTRIES:
        for kind in e.information:
            if kind == "cluster":
                cases.append(pytest.param(e.stem, kind, "cluster", None,
                                          id=f"{e.stem}-cluster"))
                cases.append(pytest.param(e.stem, kind, "cluster", "CR0",
                                          id=f"{e.stem}-cluster-CR0"))
                cases += [pytest.param(e.stem, kind, key, None, id=f"{e.stem}-cluster-{key}")
                          for key in e.cluster_keys]
            else:
                cases.append(pytest.param(e.stem, kind, None, None, id=f"{e.stem}-{kind}"))
    return cases


def _simulation_cases() -> list[Any]:
    return [pytest.param(e.stem, mode, id=f"{e.stem}-{mode}")
            for e in ENTRIES for mode in e.simulation.modes]


# ---------------------------------------------------------------- the entry itself
@pytest.mark.parametrize("stem", STEMS)
def test_entry_names_its_parts(stem):
    """Every part an entry names exists: modules, build, Priors, fit, loglik, card, the data
    container; options name real keyword-only arguments with the registry's defaults."""
    entry = _entry(stem)
    assert entry.cli == stem.replace("_", "-")
    assert (ROOT / entry.card).is_file(), f"{stem}: no card at {entry.card}"
    assert (ROOT / "tests" / f"test_{stem}.py").is_file()
    assert entry.data_type in ("Comparisons", "Labels", "Ratings")
    assert entry.paper.arxiv or entry.paper.code
    assert set(entry.information) <= set(KINDS) and entry.information
    assert ("cluster" in entry.information) or not entry.cluster_keys
    for opt in entry.options:
        for function in opt.used_by:
            params = entry.signature(function).parameters
            assert opt.name in params, f"{stem}.{function} has no option {opt.name!r}"
            p = params[opt.name]
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, f"{stem}.{function}({opt.name})"
            default = opt.default_for(function)
            want = inspect.Parameter.empty if default is registry.REQUIRED else default
            assert p.default == want, (f"{stem}.{function}({opt.name}) defaults to "
                                       f"{p.default!r}, the registry says {default!r}")
        if opt.choices is not None:
            assert opt.default in opt.choices


@pytest.mark.parametrize("stem", STEMS)
def test_signatures_are_one_shape(stem):
    """build(data, *, priors=None, ...), fit(data, *, ..., information="auto", cluster=None,
    correction=None[, penalty=None]), loglik(params, data, *, ...): everything after the data
    keyword-only."""
    entry = _entry(stem)
    for function, positional in (("build", ["data"]), ("fit", ["data"]),
                                 ("loglik", ["params", "data"])):
        params = list(entry.signature(function).parameters.values())
        assert [p.name for p in params[: len(positional)]] == positional, (stem, function)
        rest = params[len(positional):]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest), (
            f"{stem}.{function}: {[p.name for p in rest if p.kind is not p.KEYWORD_ONLY]} "
            "are not keyword-only")
    build = entry.signature("build").parameters
    assert build["priors"].default is None
    fit = entry.signature("fit").parameters
    own = set(fit) - {"data", "information", "cluster", "correction", "penalty"}
    missing = own - {o.name for o in entry.options}
    assert not missing, f"{stem}.fit options {sorted(missing)} are not in the registry"
    for name, default in (("information", "auto"), ("cluster", None), ("correction", None)):
        assert name in fit and fit[name].default == default, (stem, name)
    if "penalty" in fit:  # the MAP of the model's priors, where the twin offers it
        assert fit["penalty"].default is None


@pytest.mark.parametrize("stem", STEMS)
def test_priors_are_validated_and_have_flat(stem):
    """Priors is a frozen dataclass, refuses a negative scale when built (a prior sd, a Beta
    parameter), and has flat()."""
    priors = _entry(stem).priors
    assert dataclasses.is_dataclass(priors) and priors.__dataclass_params__.frozen
    flat = priors.flat()
    assert isinstance(flat, priors)
    scales = {f.name: (-1.0, 1.0) if isinstance(f.default, tuple) else -1.0
              for f in dataclasses.fields(priors)
              if f.name.endswith("_sd") or isinstance(f.default, tuple)}
    assert scales, f"{stem}: Priors has no scale to validate"
    for name, bad in scales.items():
        with pytest.raises(ValueError, match=name):
            priors(**{name: bad})


def _imports(path: Path) -> set[str]:
    """Every module a file imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def test_models_never_import_twins():
    """The twins are independent checks of the models: no module of bayescal/models imports
    bayescal.frequentist (nor the contract's charts, which must stay independent too)."""
    for path in sorted((ROOT / "bayescal" / "models").rglob("*.py")):
        bad = {n for n in _imports(path) if n.startswith("bayescal.frequentist")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
    bad = {n for n in _imports(ROOT / "bayescal" / "charts.py")
           if n.startswith("bayescal.frequentist") or n.startswith("bayescal.models")}
    assert not bad, f"bayescal/charts.py imports {sorted(bad)}"


def test_twins_never_import_pymc_and_schema_imports_nothing():
    for path in sorted((ROOT / "bayescal" / "frequentist").rglob("*.py")):
        bad = {n for n in _imports(path)
               if n.split(".")[0] in ("pymc", "pytensor", "arviz", "arviz_stats")
               or n.startswith("bayescal.models")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
    bad = {n for n in _imports(ROOT / "bayescal" / "schema.py") if n.startswith("bayescal")}
    assert not bad, f"bayescal/schema.py imports {sorted(bad)}"


def test_leaves_and_data_import_nothing_above_them():
    """The layers of ARCHITECTURE.md: the leaves import nothing of bayescal, data/ only data/
    and the leaves, fitting/summary/diagnostics/adjust no model and no twin."""
    leaves = {"bayescal.schema", "bayescal.basis", "bayescal.priors", "bayescal.progress",
              "bayescal.environment", "bayescal.predictive", "bayescal.independence"}
    for name in leaves:
        path = ROOT / (name.replace(".", "/") + ".py")
        assert not {n for n in _imports(path) if n.startswith("bayescal")}, name
    for path in sorted((ROOT / "bayescal" / "data").rglob("*.py")):
        bad = {n for n in _imports(path) if n.startswith("bayescal")
               and not n.startswith("bayescal.data") and n not in leaves
               and not any(n.startswith(f"{leaf}.") for leaf in leaves)}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
    for name in ("fitting", "summary", "diagnostics", "adjust"):
        bad = {n for n in _imports(ROOT / "bayescal" / f"{name}.py")
               if n.startswith("bayescal.models")
               or (n.startswith("bayescal.frequentist") and not n.startswith(
                   "bayescal.frequentist._core"))}
        assert not bad, f"bayescal/{name}.py imports {sorted(bad)}"


def test_importing_the_registry_loads_no_numpy():
    """`bayescal --help` and the CLI's model table pay for no numpy, pandas or PyMC import."""
    import subprocess
    import sys

    code = ("import sys, bayescal.registry as r; list(r.entries()); "
            "print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'pymc') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=60).stdout.strip()
    assert out == "[]", out


# ---------------------------------------------------------------- likelihood and estimate
@pytest.mark.parametrize("stem", STEMS)
def test_pymc_loglik_equals_twin_loglik(stem):
    """The PyMC model's log-likelihood (its observed variables) equals the twin's loglik at
    random points: catches a dropped term, a tie counted as a loss, a weight applied twice."""
    entry = _entry(stem)
    data = contract_data(stem)
    model = entry.build(data, **_options(entry, "build"))
    names = list(independent(stem).chart.params(independent(stem).chart.x))
    # FAST_COMPILE: a few evaluations do not repay a full compile
    terms = [model.logp(vars=model.observed_RVs)]
    terms += [model.replace_rvs_by_values([model[name]])[0]
              for name in entry.contract.likelihood_potentials]
    ll_fn = model.compile_fn(sum(terms), inputs=model.value_vars, point_fn=False,
                             on_unused_input="ignore", mode="FAST_COMPILE")
    # the variables as functions of the value variables (model[n] would be random draws)
    by_name = {v.name: v for v in model.unobserved_value_vars}
    values_fn = model.compile_fn([by_name[n] for n in names], inputs=model.value_vars,
                                 point_fn=False, on_unused_input="ignore", mode="FAST_COMPILE")
    rng = np.random.default_rng(SEED)
    start = model.initial_point()
    for _ in range(3):
        point = [start[v.name] + rng.normal(0, 0.3, np.shape(start[v.name]))
                 for v in model.value_vars]
        params = dict(zip(names, values_fn(*point), strict=True))
        want = entry.loglik(params, data, **_options(entry, "loglik"))
        assert float(ll_fn(*point)) == pytest.approx(want, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("stem", STEMS)
def test_flat_prior_map_equals_twin_mle(stem):
    """bc.fit(build(data, priors=Priors.flat()), "map") is the twin's MLE on the identified
    quantities both report: catches a prior left in the flat model or a chart mismatch."""
    entry = _entry(stem)
    est = _reference_fit(stem)
    post = map_fit(stem)["posterior"]
    shared = [n for n in entry.identified if n in post and n in est.params]
    assert shared, f"{stem}: the MAP and the MLE share no identified quantity"
    for name in shared:
        want = est.params[name]
        got = post[name].isel(chain=0, draw=0).transpose(*want.dims)
        np.testing.assert_allclose(got.values, want.values, rtol=1e-4, atol=1e-4,
                                   err_msg=f"{stem}: {name}")


@pytest.mark.parametrize("stem", STEMS)
def test_loglik_at_the_estimate_is_the_estimates(stem):
    """Estimate.loglik is the twin's loglik at the estimate (under the registry's
    ``estimate_loglik`` options), the estimate a stationary point of the objective in the free
    chart (the optimizer converged, and says so), and the units add up to the objective."""
    entry = _entry(stem)
    ind = independent(stem)
    est = ind.estimate
    assert est.converged is True
    reported = entry.loglik(ind.chart.params(ind.chart.x), ind.data,
                            **{**_options(entry, "loglik"), **entry.contract.estimate_loglik})
    assert reported == pytest.approx(est.loglik, rel=1e-8, abs=1e-8)
    value = ind.ll(ind.chart.x, ind.data)
    grad = _gradient(lambda z: ind.ll(z, ind.data), ind.chart.x)
    assert np.abs(grad).max() < 1e-4 * max(1.0, abs(value)) ** 0.5, (stem, grad)
    # the weighted units add up to the objective (up to a constant: a multinomial coefficient)
    x0, x1 = ind.chart.x, ind.chart.x + 0.01
    p0, p1 = ind.chart.params(x0), ind.chart.params(x1)
    total = sum(u.weight * (u.logp(p1) - u.logp(p0)) for u in ind.units)
    assert total == pytest.approx(ind.ll(x1, ind.data) - value, rel=1e-7, abs=1e-7), entry.stem


# ---------------------------------------------------------------- covariance kinds
@pytest.mark.parametrize(("stem", "kind", "key", "correction"), _kind_cases())
def test_information_kind_matches_an_independent_computation(stem, kind, key, correction):
    """Each covariance kind of each twin, through its public fit, equals the independent
    computation on data with ties and non-zero residuals: catches SEs 20 % off, the expected
    information returned for the observed, a dropped G/(G-1), a key ignored."""
    est = twin_fit(stem, kind, key if key != "cluster" else None, correction)
    ref = _reference_fit(stem)
    for name, da in ref.params.data_vars.items():  # information= changes the covariance only
        np.testing.assert_allclose(est.params[name].values, da.values, rtol=1e-10, atol=1e-12)
    assert est.info.get("information") == kind, est.info
    if kind == "cluster":
        assert est.info.get("cluster") == key
        assert est.info.get("correction") == (correction or "CR1")
    terms, cov = independent(stem).covariance(kind, key, correction or "CR1")
    _assert_covariance_close(est, terms, cov, f"{stem} information={kind!r}"
                             + (f" cluster={key!r}" if key else "")
                             + (f" correction={correction!r}" if correction else ""))


@pytest.mark.parametrize("stem", STEMS)
def test_independent_kinds_differ_on_these_data(stem):
    """The kinds differ by much more than the tolerance on the contract data (or coincide by
    theory, as the registry says), so the test above can tell them apart; and P(outcome) of
    every unit sums to one (the unit log-likelihood is a log-probability)."""
    entry = _entry(stem)
    ind = independent(stem)
    for cell, total in ind.total_probability.items():
        assert total == pytest.approx(1.0, abs=1e-8), (stem, cell)
    kinds = [(k, "cluster" if k == "cluster" else None) for k in entry.information]
    ses = {k: np.sqrt(np.diag(ind.covariance(k, key)[1])) for k, key in kinds}
    same = {frozenset(p) for p in entry.contract.same_information}
    for a, b in ((a, b) for i, (a, _) in enumerate(kinds) for b, _ in kinds[i + 1:]):
        gap = np.max(np.abs(ses[a] / np.where(ses[b] > 0, ses[b], 1) - 1) * (ses[b] > 0))
        if frozenset((a, b)) in same:
            assert gap < RTOL, (stem, a, b, gap)
        else:
            assert gap > 10 * RTOL, f"{stem}: {a} and {b} SEs differ by only {gap:.2g}"


@pytest.mark.parametrize("stem", STEMS)
def test_information_is_resolved_and_refused_before_fitting(stem):
    """auto resolves as covariance.request says and is recorded; a kind the model does not
    offer, a key that is not the data's or built in, and a key with a kind that uses none are
    refused (ValueError), never ignored."""
    entry = _entry(stem)
    data = contract_data(stem)
    opts = _options(entry, "fit")
    auto = twin_fit(stem, "auto")
    from bayescal.frequentist import covariance

    key = getattr(data, "cluster_key", None)
    want = covariance.request("auto", supported=entry.information, data_key=key,
                              builtin_keys=entry.cluster_keys,
                              quasi=bool(getattr(data, "quasi_likelihood", False)))
    assert auto.info["information"] == want.kind
    np.testing.assert_allclose(auto.cov, twin_fit(stem, want.kind, want.cluster).cov)
    for kind in set(KINDS) - set(entry.information):
        with pytest.raises(ValueError, match=kind):
            entry.fit(data, **opts, information=kind)
    if "cluster" in entry.information:
        with pytest.raises(ValueError, match="no_such_key"):
            entry.fit(data, **opts, information="cluster", cluster="no_such_key")
    other = next(k for k in entry.information if k != "cluster") \
        if len(entry.information) > 1 else None
    if other is not None and "cluster" in entry.information:
        with pytest.raises(ValueError, match="cluster"):
            entry.fit(data, **opts, information=other, cluster=entry.cluster_keys[0]
                      if entry.cluster_keys else key)
        with pytest.raises(ValueError, match="correction"):
            entry.fit(data, **opts, information=other, correction="CR0")


# ---------------------------------------------------------------- results
@pytest.mark.parametrize("stem", STEMS)
def test_every_result_has_the_one_table_schema(stem):
    """MAP, NUTS and MLE summaries: index ``term``, the schema's columns, 95 % by default."""
    for method, result in (("map", map_fit(stem)), ("nuts", nuts_fit(stem)),
                           ("mle", _reference_fit(stem))):
        table = bc.summarize(result)
        assert table.index.name == "term"
        assert list(table.columns) == COLUMNS
        shown = table[table["interval"] != "none"]
        assert (shown["prob"] == 0.95).all()
        assert len(shown) == 0 if method == "map" else len(shown), (stem, method)
    # the Estimate's own table: the same one default (None resolves to it, as ci_prob does)
    est = _reference_fit(stem)
    assert inspect.signature(Estimate.summary).parameters["prob"].default in (None, 0.95)
    own = est.summary()
    assert (own.loc[own["interval"] != "none", "prob"] == 0.95).all()
    with pytest.raises(ValueError, match="apply to NUTS"):  # refused, never ignored
        bc.fit(_entry(stem).build(contract_data(stem), **_options(_entry(stem), "build")), "map",
               nuts={"max_treedepth": 5})


@pytest.mark.parametrize("stem", STEMS)
def test_estimate_round_trips_through_netcdf(stem, tmp_path):
    """Catches an info entry dropped on save (the low-rank twin's singular values, an array,
    were left out with a warning)."""
    est = _reference_fit(stem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.to_netcdf(tmp_path / "estimate.nc")
    back = Estimate.from_netcdf(tmp_path / "estimate.nc")
    assert set(back.info) == set(est.info)
    assert (back.method, back.terms, dict(back.interval), back.converged) == (
        est.method, est.terms, dict(est.interval), est.converged)
    np.testing.assert_array_equal(back.cov, est.cov)
    assert back.loglik == est.loglik
    for name, da in est.params.data_vars.items():
        np.testing.assert_array_equal(back.params[name].values, da.values)
    assert bc.summarize(back).equals(bc.summarize(est))


@pytest.mark.parametrize("stem", STEMS)
def test_diagnose_checks_the_identified_quantities(stem):
    """diagnose sees exactly the registry's identified quantities (every other posterior
    variable ends in ``_free``), warns naming one that fails, and never warns about a
    rotation-ambiguous free coordinate."""
    entry = _entry(stem)
    post = nuts_fit(stem)
    table = bc.diagnose(post, warn=False)
    checked = set(table.index.get_level_values("parameter")) - {"sampler"}
    assert checked == set(entry.identified), (stem, checked ^ set(entry.identified))
    names = [str(v) for v in post["posterior"].data_vars]
    assert all(n in entry.identified or n.endswith("_free") for n in names), names
    # chain 0 shifted far from chain 1: R-hat far above 1, in one identified variable and in
    # every free coordinate
    broken = post.copy()
    ds = broken["posterior"].to_dataset()
    target = entry.identified[0]
    free = [n for n in names if n.endswith("_free")]
    for n in (target, *free):
        ds[n] = ds[n] + (ds["chain"] == ds["chain"][0]) * (10 * float(ds[n].std()) + 1.0)
    broken["posterior"] = xr.DataTree(ds)
    with pytest.warns(bc.DiagnosticWarning, match=target) as caught:
        bc.diagnose(broken)
    text = " ".join(str(w.message) for w in caught)
    for n in free:
        assert f"{n} r_hat" not in text and f"{n} ess" not in text
    with pytest.raises(ValueError, match="not posterior variables"):
        bc.diagnose(post, var_names=[*entry.identified, "no_such_variable"])


@pytest.mark.parametrize("stem", STEMS)
def test_log_likelihood_cells_are_named_by_labels(stem):
    """Every observed variable's log_likelihood runs over labelled cells (no integer codes),
    and pairwise cells name their judge and items."""
    post = nuts_fit(stem)
    ll = post["log_likelihood"].to_dataset()
    assert len(ll.data_vars)
    for name, da in ll.data_vars.items():
        dims = [d for d in da.dims if d not in ("chain", "draw")]
        assert dims, name
        for d in dims:
            values = da[d].values
            assert values.dtype.kind in "UO", f"{stem}: {name} dim {d} holds codes"
            assert len(set(values.tolist())) == len(values)
    data = contract_data(stem)
    if _entry(stem).data_type == "Comparisons":  # "judge: a vs b (a first)", "a vs b #3"
        cells = [str(v) for da in ll.data_vars.values() for d in da.dims
                 if d not in ("chain", "draw") for v in da[d].values]
        assert all(" vs " in c and sum(f"{i} " in f"{c} " for i in data.items) >= 2
                   for c in cells), cells[:3]


# ---------------------------------------------------------------- simulations
@pytest.mark.parametrize(("stem", "mode"), _simulation_cases())
def test_simulation_modes_give_data_the_model_and_twin_accept(stem, mode):
    """Every documented mode of every registered simulation (e.g. the low-rank simulator's
    both_orders, DIAL's real-data design) gives data that builds and fits."""
    entry = _entry(stem)
    data = entry.simulation.draw(mode, random_seed=SEED + 1)
    assert isinstance(data, entry.data_class)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entry.build(data, **_options(entry, "build"))
        est = entry.fit(data, **_options(entry, "fit"))
    assert np.isfinite(est.cov).all() and np.all(np.diag(est.cov) >= 0)
