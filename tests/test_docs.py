"""The documentation stands on its own: no reference a user of this repository cannot follow.

Docstrings, comments, cards, the README and the notebooks cite papers by authors, year and arXiv
id, and put the mathematics in the repository's own words (the cards in ``models/``). They must
not point at files only the developers had (an internal specification cited by section, notes,
paper files numbered by their place in a folder) or at paths on one machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".toml", ".ipynb", ".cfg", ".txt", ".yml", ".yaml", ".sh"}
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "build", "dist", ".ipynb_checkpoints",
             "node_modules", ".pytest_cache", ".ruff_cache"}

# Papers the repository cites, by arXiv id. A new citation gets its id added here after the id
# has been checked against the paper (authors, title, year).
KNOWN_ARXIV = {
    "2601.05420": "Chen, Lu, Li, Guo & Li (2026), efficient inference for noisy LLM-judge means",
    "2307.02762": "Li, Patel & Du (2023), PRD: peer rank and discussion (PRD Vicuna80 data)",
    "2406.12624": "Thakur et al. (2024), judging the judges (TriviaQA judges data)",
    "2601.21817": "Xu, Tan, Wu & Zhou (2026), judge-aware ranking",
    "2605.05073": "Yu et al. (2026), heterogeneous judge-aware ranking (HJA)",
    "2611.00447": "Subasic, Rabinovich & Chen (2026), streaming quantile matching",
    "2002.03217": "Zhang, Janson & Murphy (2020), inference for batched bandits (BOLS)",
    "2306.05685": "Zheng et al. (2023), judging LLM-as-a-judge with MT-Bench and Chatbot Arena",
    "2310.07641": "Zeng, Yu, Gao, Meng, Goyal & Chen (2023), LLMBar (ICLR 2024)",
    "2402.17826": "Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez (2024), prediction-powered "
                  "ranking (Chatbot Arena human and LLM verdicts)",
    "1804.06788": "Talts, Betancourt, Simpson, Vehtari & Gelman (2018), simulation-based "
                  "calibration",
}

# (pattern, what it is, what to write instead). Built from pieces so this file does not match.
FORBIDDEN = [
    (r"\bSP" r"EC\b", "the internal specification",
     "the paper's own section or equation number, or the reason in your own words"),
    ("\u00a7", "a section sign (ambiguous: which document?)",
     "'the paper's Section 5.2' / 'Sec. 5.2' or 'this card's Section 6'"),
    (r"\bnotes" r"/", "a notes folder users do not have", "the fact itself, or a card section"),
    (r"\breferences\.md\b|\breferences D\d", "the internal reference notes",
     "the worked case itself"),
    (r"\b[Ss]eed[ -]0\d\d\b|\bthe seed's\b|\bseed paper", "a paper cited by its file number",
     "authors, year and arXiv id, e.g. 'Chen et al. (2026, arXiv:2601.05420)'"),
    (r"\.\./sha" r"red", "a path outside the checkout", "'BAYESCAL_DATA' (the data folder)"),
    (r"(?<![\w.])/(?:wo" r"rk|tmp|home|root|Users)/[\w.-]",
     "a path on one machine", "a path relative to the repository, or an environment variable"),
]
ARXIV = re.compile(r"(?:arXiv[:\s]\s*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5})", re.I)


def _files() -> list[Path]:
    out = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        if path.suffix in SUFFIXES and path != Path(__file__).resolve():
            out.append(path)
    return out


def _text(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of what a reader sees; for a notebook (cell number, line) of its cell
    sources and text outputs."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return list(enumerate(raw.splitlines(), 1))
    lines: list[tuple[int, str]] = []
    for n, cell in enumerate(json.loads(raw)["cells"], 1):
        parts = ["".join(cell.get("source", ""))]
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            parts.append("".join(output.get("data", {}).get("text/plain", "")))
        lines += [(n, line) for part in parts for line in part.splitlines()]
    return lines


FILES = _files()


def test_the_scan_sees_the_documentation():
    """Catches a scan that silently looks at nothing (a wrong root or suffix list would make the
    other tests pass on any text)."""
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "ARCHITECTURE.md", "models/README.md", "pyproject.toml"} <= names
    assert any(n.startswith("bayescal/") and n.endswith(".py") for n in names)
    assert any(n.startswith("notebooks/") and n.endswith(".ipynb") for n in names)


@pytest.mark.parametrize("pattern, what, instead", FORBIDDEN, ids=[w for _, w, _ in FORBIDDEN])
def test_no_reference_a_user_cannot_follow(pattern, what, instead):
    """Catches docs that cite the internal specification by section, notes, papers by their file
    number, or machine paths: a user of the repository has none of them."""
    rx = re.compile(pattern)
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:120]}"
            for p in FILES for n, line in _text(p) if rx.search(line)]
    assert not hits, (f"{len(hits)} line(s) cite {what}; write {instead} instead:\n"
                      + "\n".join(hits[:40]))


def test_every_arxiv_id_is_a_known_paper():
    """Catches a mistyped or invented arXiv id (a citation the reader cannot find, or finds the
    wrong paper under)."""
    unknown = [f"{p.relative_to(ROOT)}:{n}: arXiv {m}"
               for p in FILES for n, line in _text(p) for m in ARXIV.findall(line)
               if m not in KNOWN_ARXIV]
    assert not unknown, ("arXiv ids not among the papers the repository cites "
                         f"({sorted(KNOWN_ARXIV)}):\n" + "\n".join(unknown))


def test_the_patterns_catch_what_they_are_for():
    """Catches a forbidden pattern that no longer matches the references it exists to stop."""
    samples = {
        "the internal specification": "see SP" "EC 4.7",
        "a section sign (ambiguous: which document?)": "(\u00a74.2)",
        "a notes folder users do not have": "notes" "/stack.md",
        "the internal reference notes": "references.md D1.1",
        "a paper cited by its file number": "the design of seed 002 and the seed's R package",
        "a path outside the checkout": "../sha" "red/data",
        "a path on one machine": "/wo" "rk/main/x.py",
    }
    for pattern, what, _ in FORBIDDEN:
        assert re.search(pattern, samples[what]), what
    assert not re.search(FORBIDDEN[-1][0], "tests/data/verdicts.csv, https://arxiv.org/abs/1")
    assert ARXIV.findall("arXiv:2601.05420, arXiv 2601.21817, arxiv.org/abs/2611.00447") == [
        "2601.05420", "2601.21817", "2611.00447"]


def test_every_card_is_linked_from_the_card_index_and_the_readme():
    """Catches a model card users cannot reach from the README or the card index."""
    index = (ROOT / "models" / "README.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for card in sorted((ROOT / "models").glob("*.md")):
        if card.name == "README.md":
            continue
        assert f"]({card.name})" in index, f"models/README.md does not link {card.name}"
        assert f"](models/{card.name})" in readme, f"README.md does not link models/{card.name}"


def test_every_notebook_is_listed_in_the_readme_quickstart_first():
    """Catches a notebook missing from the README's list, and a list that does not start with
    the quickstart (the one notebook that needs no download)."""
    readme = (ROOT / "README.md").read_text()
    listed = re.findall(r"\]\(notebooks/(\w+)\.ipynb\)", readme)
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("*.py"))
    assert sorted(set(listed)) == stems
    assert listed[0] == "quickstart"
