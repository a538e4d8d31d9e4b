"""Layout without a browser: chart labels that fit and tell picks apart, the PDF
summary's boxes measured by Typst, fact names that do not break inside a word.

What a browser and poppler see is checked in tests/test_report_visual.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.pipeline import advise
from gpuadvisor.render import charts
from gpuadvisor.render.report import render, render_source
from gpuadvisor.render.textwidth import ELLIPSIS, fit_lines, text_width
from gpuadvisor.render.view import comparison_columns
from gpuadvisor.resources import data_dir

from .conftest import REPO

typst = pytest.importorskip("typst")

#: Examples whose comparisons hold cards with long, similar names in the bundled
#: catalog ("RTX PRO 4000 Blackwell" beside "RTX PRO 4500 Blackwell"), a fix-first case
#: and one with no fitting option.
EXAMPLES = (
    "thermal-throttled-workstation",
    "vdi-many-users",
    "virtual-production-genlock",
    "big-model-no-sharding",
    "cad-certified",
)
LABEL_WIDTH = charts.LABEL_RIGHT - charts.LABEL_LEFT


def _decision(name: str) -> Decision:
    folder = REPO / "examples" / "evidence" / name
    evidence = sorted(folder.iterdir()) if folder.is_dir() else []
    return advise(REPO / "examples" / f"{name}.toml", evidence=evidence, sensitivity=False)


@pytest.fixture(scope="module")
def decisions() -> dict[str, Decision]:
    return {name: _decision(name) for name in EXAMPLES}


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return load_catalog()


# -- fitting text ---------------------------------------------------------------------


def test_text_width_grows_with_text_size_and_weight() -> None:
    assert text_width("", 11) == 0
    assert text_width("iiii", 11) < text_width("MMMM", 11)
    assert text_width("RTX PRO", 11) < text_width("RTX PRO", 11, bold=True)
    assert text_width("RTX PRO", 10) < text_width("RTX PRO", 11)
    assert text_width("\u4e2d", 10) == pytest.approx(10 * 1.04)  # unknown: a whole em


def test_fit_lines_breaks_at_spaces_and_cuts_only_what_cannot_fit() -> None:
    text = "1 × RTX PRO 6000 Blackwell Server Edition"
    lines = fit_lines(text, 160, 11, bold=True)
    assert len(lines) == 2 and " ".join(lines) == text
    assert all(text_width(line, 11, bold=True) <= 160 for line in lines)
    assert fit_lines(text, 1000, 11) == (text,)
    cut = fit_lines(text, 60, 11, max_lines=2)
    assert len(cut) == 2 and cut[-1].endswith(ELLIPSIS)
    assert all(text_width(line, 11) <= 60 for line in cut)
    assert fit_lines("Supercalifragilistic", 40, 11)[0].endswith(ELLIPSIS)


def test_every_catalog_card_label_fits_without_cutting(bundled: Catalog) -> None:
    for sku in bundled.skus:
        for count in (1, 8):
            label = charts.card_label(count, sku.name)
            lines = fit_lines(label, LABEL_WIDTH, charts.FONT_SIZE, bold=True)
            assert len(lines) <= 2 and not lines[-1].endswith(ELLIPSIS), sku.name
            assert " ".join(lines) == label


def test_card_label_drops_only_the_shared_vendor() -> None:
    assert charts.card_label(2, "NVIDIA RTX PRO 4000 Blackwell") == "2 × RTX PRO 4000 Blackwell"
    assert charts.card_label(1, "NVIDIA") == "1 × NVIDIA"
    assert charts.card_label(1, "Acme X1") == "1 × Acme X1"


# -- charts ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES)
def test_memory_chart_labels_fit_and_tell_every_bar_apart(
    name: str, decisions: dict[str, Decision]
) -> None:
    decision = decisions[name]
    columns = comparison_columns(decision)
    chart = charts.memory_chart(columns, decision.vram_need_gib)
    if chart is None:
        pytest.skip(f"{name}: nothing to compare")
    shown = [" ".join(line.text for line in bar.lines) for bar in chart.bars]
    assert len(set(shown)) == len(shown), shown
    for bar, column in zip(chart.bars, columns, strict=True):
        for line in bar.lines:
            size = charts.ROLE_SIZE if line.role else charts.FONT_SIZE
            bold = column.chosen and not line.role
            assert text_width(line.text, size, bold=bold) <= LABEL_WIDTH, line.text
            assert not line.text.endswith(ELLIPSIS), line.text
        # the model number and edition stay in view, the full name is the tooltip
        assert charts.pick_label(column.pick) in " ".join(shown)
        assert column.card in bar.title
    rows = [float(b.y) for b in chart.bars]
    assert rows == sorted(rows) and float(chart.plot_bottom) > rows[-1]


@pytest.mark.parametrize("name", EXAMPLES)
def test_score_chart_notes_fit_right_of_the_plot(name: str, decisions: dict[str, Decision]) -> None:
    chart = charts.scores_chart(decisions[name])
    assert chart is not None
    for bar in chart.bars:
        for line in bar.notes:
            right = float(bar.note_x) + text_width(line.text, charts.FONT_SIZE)
            assert right <= chart.width, line.text
        for line in bar.lines:
            assert text_width(line.text, charts.FONT_SIZE, bold=True) <= LABEL_WIDTH


def test_chart_bars_carry_their_full_label_as_a_tooltip(decisions: dict[str, Decision]) -> None:
    page = render(decisions["thermal-throttled-workstation"], "html")
    titles = re.findall(r'<g class="bar">\s*<title>([^<]+)</title>', page)
    assert any("Rejected: one larger GPU · professional: 1 × NVIDIA RTX PRO" in t for t in titles)
    assert any(t.startswith("Pick #1: keep 1 × NVIDIA GeForce RTX 4090") for t in titles)


# -- the PDF summary, measured by Typst ------------------------------------------------


def _fits(decision: Decision) -> list[dict[str, float | str]]:
    source = render_source(decision, "pdf").encode("utf-8")
    found = typst.query(
        source,
        "<gpuadvisor-fit>",
        field="value",
        root=str(data_dir("reports")),
        ignore_system_fonts=True,
    )
    import json

    result: list[dict[str, float | str]] = json.loads(found)
    return result


@pytest.mark.parametrize("name", EXAMPLES)
def test_pdf_summary_boxes_hold_their_widest_word(
    name: str, decisions: dict[str, Decision]
) -> None:
    """Each key fact of page 1 reports its widest unbreakable piece (a word, the
    confidence badge) against the width its column got; none may be wider."""
    fits = _fits(decisions[name])
    names = [f["name"] for f in fits]
    assert "Recommended" in names and "Confidence" in names
    too_wide = [f for f in fits if float(f["need"]) > float(f["avail"]) + 0.01]
    assert too_wide == []


def test_pdf_summary_with_a_long_card_name_still_fits(
    decisions: dict[str, Decision],
) -> None:
    decision = decisions["vdi-many-users"]
    long_name = "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"
    picks = (decision.picks[0].model_copy(update={"name": long_name, "count": 16}),)
    fits = _fits(decision.model_copy(update={"picks": picks}))
    assert all(float(f["need"]) <= float(f["avail"]) + 0.01 for f in fits), fits


# -- HTML fact names ------------------------------------------------------------------


def test_html_fact_names_do_not_break_inside_words(decisions: dict[str, Decision]) -> None:
    page = render(decisions["thermal-throttled-workstation"], "html")
    assert '<code class="fact">gpu.thermal_limited_fraction</code>' in page
    css = (Path(data_dir("reports")) / "report.css").read_text(encoding="utf-8")
    rule = re.search(r"table\.facts code\.fact \{([^}]*)\}", css)
    assert rule and "overflow-wrap: normal" in rule.group(1)
