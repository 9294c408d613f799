"""The run report (``bayescal report RUN_DIR``, ``fit --report``): one self-contained page that
shows what the run wrote, every item label as typed, no broken image; checked in a real browser
(headless Chromium) where one is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from bayescal.cli import main
from bayescal.report import render, write_report
from bayescal.runs import load_run

VERDICTS = Path(__file__).parent / "data" / "verdicts.csv"
# labels a page can get wrong: markup, an ampersand, mathtext, a non-ASCII letter, a pipe (a
# Markdown table separator), leading zeros
TRICKY = {"claude-3.5": "<b>claude</b>", "gpt-4o": "a & b", "llama-3-70b": "$5 model",
          "gemini-1.5": "café", "mistral-large": "x|y", "qwen-2-72b": "007"}


@pytest.fixture(scope="module")
def tricky_file(tmp_path_factory) -> Path:
    frame = pd.read_csv(VERDICTS, dtype=str)
    for col in ("item_a", "item_b"):
        frame[col] = frame[col].map(TRICKY)
    path = tmp_path_factory.mktemp("report-data") / "verdicts.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, tricky_file) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    code = main(["fit", "judge-discrimination-btl", str(tricky_file), "--method", "mle",
                 "--out", str(out), "--report"])
    assert code == 0
    return out


def test_fit_report_is_part_of_the_run(run_dir):
    """Catches a report written beside the run but not recorded (load_run would then refuse
    the folder as holding foreign files) or recorded with a stale digest."""
    run = load_run(run_dir)
    assert {"report.html", "report.md"} <= set(run.files)
    assert run.meta["data"].startswith("Comparisons(900 verdicts")


def test_page_is_self_contained_and_shows_every_label_as_typed(run_dir):
    """Catches labels pasted into HTML unescaped (``<b>`` rendered as bold, ``&`` broken), a
    figure linked instead of embedded (the page sent round would show broken images), a script
    or a resource fetched from the network."""
    page = (run_dir / "report.html").read_text()
    for label in TRICKY.values():
        assert html.escape(label, quote=False) in page, label
    assert "<b>claude</b>" not in page
    figures = [n for n in load_run(run_dir).files if n.endswith(".png")]
    images = re.findall(r'<img src="([^"]+)"', page)
    assert len(images) == len(figures) >= 3
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert "<script" not in page and not re.search(r'(src|href)="https?:', page)
    for section in ("Inputs", "Warnings and notes", "Leaderboard", "Judges", "Figures"):
        assert f"<h2>{section}</h2>" in page


def test_markdown_has_the_same_tables(run_dir):
    """Catches a Markdown table broken by a label holding ``|``, or a section missing."""
    text = (run_dir / "report.md").read_text()
    assert "x\\|y" in text and "| item | mle | mle rank |" in text
    board = text.split("## Leaderboard")[1].split("\n## ")[0]
    rows = [line for line in board.splitlines() if line.startswith("| ")]
    widths = {line.replace("\\|", "").count("|") for line in rows}
    assert len(rows) == 1 + 1 + 6 and widths == {4}  # the escaped pipe added no column
    for label in TRICKY.values():
        assert label.replace("|", "\\|") in text


def test_report_command_on_a_run_and_refusals(tmp_path, capsys):
    """``bayescal report RUN_DIR`` adds the report to an existing run; a second report replaces
    the first (still one run); a changed run is refused before anything is written; --report
    without --out is refused before any fit."""
    out = tmp_path / "run"
    assert main(["mean", str(_labels_file(tmp_path)), "--human", "human", "--judge", "judge",
                 "--out", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    run = load_run(out)
    assert {"report.html", "report.md", "summary.csv", "estimators.png"} <= set(run.files)
    page = (out / "report.html").read_text()
    assert "ppi_plus_plus" in page and "<details>" not in page  # the table is the result
    capsys.readouterr()
    (out / "summary.csv").write_text("tampered\n")
    assert main(["report", str(out)]) == 2
    assert "changed after the run wrote it" in capsys.readouterr().err
    assert main(["fit", "judge-discrimination-btl", str(VERDICTS), "--method", "mle",
                 "--report"]) == 2
    assert "--report" in capsys.readouterr().err


def _labels_file(folder: Path) -> Path:
    import numpy as np

    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.4
    judge = np.where(rng.random(300) < 0.85, y, ~y)
    human = np.where(np.arange(300) < 80, y.astype(int).astype(str), "")
    path = folder / "labels.csv"
    pd.DataFrame({"human": human, "judge": judge.astype(int)}).to_csv(path, index=False)
    return path


def test_render_reads_the_folder_not_memory(run_dir):
    """The page is a function of the run folder: rendering twice gives the same page."""
    assert render(run_dir) == render(load_run(run_dir))


def test_diagnostics_verdict_sits_under_its_own_heading(run_dir, monkeypatch):
    """Catches the sampler verdict ("every check passed" / "some checks failed") printed above
    the Diagnostics heading, where it reads as the verdict of the judges table before it (seen
    on a NUTS report); in both the HTML page and the Markdown."""
    import bayescal.report as report

    frame = pd.DataFrame({"parameter": ["ability", "sampler"], "check": ["r_hat_max", "divergences"],
                          "value": [1.2, 3.0], "threshold": [1.01, 0.0], "ok": [False, True]})
    shown = report._table(frame, "Diagnostics", "sampler checks", flag="ok")
    monkeypatch.setattr(report, "_diagnostics", lambda run: (shown, False))
    page, text = render(run_dir)
    heading = page.index("<h2>Diagnostics</h2>")
    verdict = page.index("some checks failed")
    assert heading < verdict < page.index("<table>", heading)
    assert page.index("<h2>Judges</h2>") < heading
    assert text.index("Diagnostics") < text.index("Some checks failed")


# ---------------------------------------------------------------- in a real browser
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


_CHECK = """<textarea id="bayescal-check"></textarea><script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  document.getElementById("bayescal-check").textContent = JSON.stringify(
    {images: imgs.length, broken: broken, text: document.body.innerText});
});
</script></body>"""


@pytest.mark.skipif(_chromium() is None, reason="no Chromium installed (Debian: apt-get install "
                    "chromium); the page's HTML is checked without a browser above")
def test_page_renders_in_headless_chromium(run_dir, tmp_path):
    """Catches what only a browser shows: an image that does not decode, a label the page
    does not display (text hidden or mangled by the markup). A copy of the page gets a test
    script that reports what the browser rendered."""
    page = (run_dir / "report.html").read_text().replace("</body>", _CHECK)
    copy = tmp_path / "page.html"
    copy.write_text(page)
    done = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<textarea id="bayescal-check">(.*?)</textarea>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    check = json.loads(html.unescape(found.group(1)))
    assert check["images"] >= 3 and check["broken"] == 0
    for label in TRICKY.values():
        assert label in check["text"], label


def test_write_report_returns_both_files(run_dir):
    paths = write_report(run_dir)
    assert [p.name for p in paths] == ["report.html", "report.md"]
    assert load_run(run_dir)  # still one whole run
