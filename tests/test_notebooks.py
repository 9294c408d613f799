"""Every notebook (jupytext py:percent script) runs top to bottom in a real kernel.

Notebooks only call the library, so running them checks that the documented workflow works.
Sampling sizes are kept small through environment variables the notebooks read. Notebooks are
tutorials and hold no ``assert``: the facts each one shows are checked by the blocks of
``tests/notebook_checks/<stem>.py``, each run right after the notebook cell named by its
``# %% after: <line>`` header, when the notebook executes.

Running all six takes minutes (12-42 s each), so the executions are slow tests
(``pytest -m slow``, and ``tools/sync_notebooks.py --execute`` when a notebook changes). The fast
suite checks that each rendered ``.ipynb`` holds its script's cells, executed, with outputs and
without an error: a notebook whose pinned facts failed at its last execution cannot be shipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import shared_data_dir

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))
CHECKS = Path(__file__).resolve().parent / "notebook_checks"
_AFTER = "# %% after: "


def _checks(stem: str) -> list[tuple[str, str]]:
    """(anchor line, check code) blocks of ``tests/notebook_checks/<stem>.py``, in order."""
    path = CHECKS / f"{stem}.py"
    if not path.exists():
        return []
    blocks: list[tuple[str, list[str]]] = []
    for line in path.read_text().splitlines():
        if line.startswith(_AFTER):
            blocks.append((line[len(_AFTER):], []))
        elif blocks:
            blocks[-1][1].append(line)
    return [(anchor, "\n".join(code).strip()) for anchor, code in blocks]


def _with_checks(notebook, stem: str):
    """The notebook with each check block inserted as a code cell after its anchor's cell."""
    import nbformat

    for anchor, code in reversed(_checks(stem)):
        hits = [i for i, c in enumerate(notebook.cells)
                if c.cell_type == "code" and anchor in c.source]
        assert len(hits) == 1, f"{stem}: check anchor found {len(hits)} times: {anchor!r}"
        notebook.cells.insert(hits[0] + 1, nbformat.v4.new_code_cell(code))
    return notebook


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    nbclient = pytest.importorskip("nbclient")
    data = shared_data_dir()
    if data is None:
        pytest.skip("real datasets not found: set BAYESCAL_DATA")
    monkeypatch.setenv("BAYESCAL_DATA", str(data))
    monkeypatch.setenv("NOTEBOOK_OUT", str(tmp_path))
    monkeypatch.setenv("BAYESCAL_NB_DRAWS", os.environ.get("BAYESCAL_NB_DRAWS", "200"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = _with_checks(jupytext.read(path), path.stem)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()


def _sources(path: Path) -> list[tuple[str, str]]:
    jupytext = pytest.importorskip("jupytext")
    return [(cell.cell_type, cell.source.strip()) for cell in jupytext.read(path).cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_has_an_executed_twin_with_the_same_cells(path):
    """The .ipynb that renders on the repository page shows this script's code, with outputs.

    Catches an edited script whose rendered notebook still shows the old code, a missing
    .ipynb, and an .ipynb committed without having been run (no outputs, no figures)."""
    twin = path.with_suffix(".ipynb")
    fix = f"run `python tools/sync_notebooks.py --execute {path.relative_to(path.parents[1])}`"
    assert twin.exists(), f"{twin.name} is missing: {fix}"
    assert _sources(path) == _sources(twin), f"{twin.name} differs from {path.name}: {fix}"
    import json

    cells = json.loads(twin.read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert outputs, f"{twin.name} has no outputs: {fix}"
    assert not any(o.get("output_type") == "error" for o in outputs), f"{twin.name} failed: {fix}"
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    if "plt." in path.read_text() or "bc.plots" in path.read_text():
        assert images, f"{twin.name} shows no figure inline: {fix}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_rendered_notebook_shows_no_sampler_failure_or_machine_path(path):
    """The rendered notebook is what users read: a NUTS run printed with failed diagnostics
    (its intervals not earned) or a warning carrying the executing machine's file paths must
    not be shipped."""
    import json

    twin = path.with_suffix(".ipynb")
    if not twin.exists():
        pytest.skip(f"{twin.name} is missing (checked by the pairing test)")
    text = "".join(
        "".join(o.get("text", ""))
        for c in json.loads(twin.read_text())["cells"] if c["cell_type"] == "code"
        for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert "sampler diagnostics failed" not in text, twin.name
    assert "site-packages" not in text and "ipykernel_" not in text, twin.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_a_tutorial_and_its_checks_find_their_cells(path):
    """Catches an ``assert`` put back into a notebook (tutorials show, tests check), a check
    block whose anchor line was edited away (it would never run, or run after the wrong cell),
    and a check block that is not valid Python."""
    import ast

    jupytext = pytest.importorskip("jupytext")
    notebook = jupytext.read(path)
    for cell in notebook.cells:
        if cell.cell_type == "code" and "assert" in cell.source:
            tree = ast.parse("\n".join(line for line in cell.source.splitlines()
                                       if not line.lstrip().startswith(("%", "!"))))
            found = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)]
            assert not found, f"{path.name} has an assert; move it to {CHECKS.name}/{path.stem}.py"
    for anchor, code in _checks(path.stem):
        hits = [c for c in notebook.cells if c.cell_type == "code" and anchor in c.source]
        assert len(hits) == 1, f"{path.stem}: check anchor found {len(hits)} times: {anchor!r}"
        compile(code, f"{CHECKS.name}/{path.stem}.py", "exec")


# ------------------------------------------------- the notebooks' facts, fast, through the API
ROOT = Path(__file__).resolve().parents[1]


def _real_data(monkeypatch):
    data = shared_data_dir()
    if data is None:
        pytest.skip("real datasets not found: set BAYESCAL_DATA")
    monkeypatch.setenv("BAYESCAL_DATA", str(data))


def test_quickstart_facts_hold_on_the_shipped_verdicts():
    """The quickstart's statements without running it: the shipped file identifies the model,
    the flat-prior MAP is the MLE (the PyMC model and the twin are one model), the default
    priors barely move the mode, and claude-3.5 leads. Catches a shipped file, a prior or a
    model change that makes the quickstart's prose false."""
    import pandas as pd

    import bayescal as bc
    from bayescal import identify
    from bayescal.frequentist import judge_discrimination_btl as jd_f
    from bayescal.models import judge_discrimination_btl as jd

    data = bc.Comparisons.from_frame(pd.read_csv(ROOT / "tests" / "data" / "verdicts.csv"),
                                     humans=["human"])
    ident = identify.check(data)
    assert ident.connected and ident.mle_exists
    mle = jd_f.fit(data)
    est = mle.summary(0.95)["estimate"]
    flat = bc.summarize(bc.fit(jd.build(data, priors=jd.Priors.flat()), method="map"), 0.95)
    prior = bc.summarize(bc.fit(jd.build(data), method="map"), 0.95)
    assert (flat["estimate"] - est).abs().max() < 1e-5
    assert 0 < (prior["estimate"] - est).abs().max() < 0.05
    assert mle.params["ability"].to_series().idxmax() == "claude-3.5"


def test_arena_notebook_facts_identification_and_covariances(monkeypatch):
    """judge_discrimination_btl notebook, its MLE-only facts: Chatbot Arena identifies the
    model, observed and expected information agree within 10 %, the sandwich is narrower for
    every ability (the crowd's and the judges' ties) and not for the judge that never ties.
    Catches a loader or covariance change that would make the notebook's prose false."""
    _real_data(monkeypatch)
    import pandas as pd

    import bayescal as bc
    from bayescal import identify
    from bayescal.frequentist import judge_discrimination_btl as jd_f

    data = bc.Comparisons.from_frame(bc.datasets.ppr_chatbot_arena(), humans=["human"])
    ident = identify.check(data)
    assert ident.connected and ident.mle_exists
    se = pd.DataFrame({info: jd_f.fit(data, information=info).se
                       for info in ("expected", "observed", "sandwich")})
    assert (se["observed"] / se["expected"]).between(0.9, 1.1).all()
    ability = se.index.str.startswith("ability[")
    assert (se.loc[ability, "sandwich"] / se.loc[ability, "expected"] < 1).all()
    ratio = se.loc["discrimination[gpt35_turbo]", "sandwich"] / se.loc[
        "discrimination[gpt35_turbo]", "expected"]
    assert abs(ratio - 1) < 0.05


def test_features_notebook_facts_every_llmbar_judge_rewards_length(monkeypatch):
    """features notebook, its headline: on LLMBar's curated subsets every judge's length effect
    against the gold label has a 95 % cluster-robust interval above zero, LLaMA2's is the
    largest and GPT-4's is 0.305, and ignoring the length lowers every judge's gold gap s_gold −
    s_other (the gold output is the shorter one more often). Catches a loader whose lengths are
    attached to the wrong output, and a change that makes the notebook's prose false."""
    _real_data(monkeypatch)
    import warnings

    import numpy as np
    import pandas as pd

    import bayescal as bc
    from bayescal.frequentist import order_effect_btl as oef

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        raw = bc.datasets.llmbar(strategies="Vanilla_NoRules", lengths=True)
    raw = raw[~raw["subset"].str.startswith("Processed")]
    gold_first = raw["gold"].to_numpy() == 1.0
    frame = pd.DataFrame({
        "item_a": "gold", "item_b": "other", "judge": raw["judge"],
        "outcome": np.where(gold_first, raw["outcome"], 1.0 - raw["outcome"]),
        "order": np.where(gold_first, 1, -1), "question": raw["question"],
        "loglen_a": np.log(np.where(gold_first, raw["length_a"], raw["length_b"])),
        "loglen_b": np.log(np.where(gold_first, raw["length_b"], raw["length_a"]))})
    fit = oef.fit(bc.Comparisons.from_frame(frame, features=[("loglen_a", "loglen_b")],
                                            cluster="question"), information="cluster")
    table = fit.summary(0.95)
    beta = table[table["parameter"] == "feature_effect"]
    assert (beta["lower"] > 0).all()
    assert beta["estimate"].idxmax() == "feature_effect[LLaMA2, loglen]"
    assert beta.loc["feature_effect[GPT-4, loglen]", "estimate"] == pytest.approx(0.305,
                                                                                abs=1e-3)
    plain = oef.fit(bc.Comparisons.from_frame(frame, cluster="question"),
                    information="cluster")

    def gap(est):
        s = est.params["ability"]
        return (s.sel(item="gold") - s.sel(item="other")).to_series()

    assert (gap(fit) > gap(plain)).all()


def test_prd_notebook_facts_every_reviewer_identified(monkeypatch):
    """order_effect_btl notebook: on PRD Vicuna80 every reviewer's (s_k, b_k) is identified, by
    the fast criterion and by the matrix rank alike, and no reviewer is separated. Catches a
    loader that loses one display order, and a disagreement between the two criteria."""
    _real_data(monkeypatch)
    import bayescal as bc
    from bayescal import identify

    data = bc.Comparisons.from_frame(bc.datasets.prd_vicuna80(include_humans=False))
    assert all(v.identified for v in identify.order_effect(data).values())
    assert identify.order_effect_rank(data) == {k: True for k in data.judges}
    assert not identify.order_separation(data)


@pytest.mark.filterwarnings("ignore:debias_judge_results:UserWarning")
def test_misclassification_notebook_facts_the_vignette(monkeypatch):
    """misclassification notebook, section 1a: the two judge files share items and human
    labels, only GPT-4o-mini's picks fit the R vignette's counts, and a split with those
    counts reproduces the five published 90 % intervals to their 3 printed decimals. Catches
    a loader or estimator change that breaks the reproduction the notebook shows."""
    _real_data(monkeypatch)
    import numpy as np

    import bayescal as bc
    from bayescal.frequentist import judge_mean as jm

    files = {j: bc.datasets.debias_judge_results(opponent="gemini-2.5-pro", judge=j,
                                                 target="claude")
             for j in ("gpt-4o-mini", "gpt-5.2")}
    assert files["gpt-4o-mini"]["id"].equals(files["gpt-5.2"]["id"])
    assert files["gpt-4o-mini"]["human"].equals(files["gpt-5.2"]["human"])
    arena = files["gpt-4o-mini"].rename(columns={"judge": "gpt-4o-mini"})
    vignette = {"N11": 1, "N10": 3, "N01": 3, "N00": 21, "T1": 40, "T0": 208}
    needed = vignette["N11"] + vignette["N01"] + vignette["T1"]
    assert int(arena["gpt-4o-mini"].sum()) == needed != int(files["gpt-5.2"]["judge"].sum())
    cal = np.zeros(len(arena), dtype=bool)
    for (y, yhat), name in {(1, 1): "N11", (1, 0): "N10", (0, 1): "N01", (0, 0): "N00"}.items():
        cal[np.flatnonzero((arena["human"] == y) & (arena["gpt-4o-mini"] == yhat))[
            : vignette[name]]] = True
    labels = bc.Labels.from_frame(arena.assign(labelled=cal), human="human",
                                  judge="gpt-4o-mini", labelled="labelled")
    counts = jm.LevelStats.from_arrays(labels.y_cal, *labels.judge()).binary_counts()
    assert {k: int(v) for k, v in counts.items()} == vignette
    fits = {"PPI": jm.ppi(labels, "gpt-4o-mini"), "PPI++": jm.ppi_plus_plus(labels, "gpt-4o-mini"),
            "EIF, test p": jm.eif(labels, "gpt-4o-mini", p_hat="test"),
            "MLE": jm.mle(labels, "gpt-4o-mini"),
            "RG, smoothed": jm.rogan_gladen(labels, "gpt-4o-mini", smoothed=True, prob=0.9)}
    published = {"PPI": (0.161, 0.059, 0.371), "PPI++": (0.145, 0.065, 0.292),
                 "EIF, test p": (0.145, 0.066, 0.291), "MLE": (0.145, 0.066, 0.291),
                 "RG, smoothed": (0.062, 0.000, 1.000)}
    for name, fit in fits.items():
        row = bc.summarize(fit, 0.9).loc["prevalence"]
        got = row[["estimate", "lower", "upper"]].to_numpy(dtype=float)
        assert np.allclose(got, published[name], atol=5.1e-4), (name, got)
