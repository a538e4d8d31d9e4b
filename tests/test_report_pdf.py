"""The PDF report: what a reader sees, that page 1 holds the summary, reproducibility;
and, for every bundled example, a file qpdf and poppler read without a complaint, no
table row broken across two pages, and no page 1 left part empty.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.pipeline import advise
from gpuadvisor.render.pdf import compile_pdf
from gpuadvisor.render.report import render, render_source
from gpuadvisor.resources import data_dir

from .conftest import REPO, TEST_DATE, CliResult
from .golden_util import example_decision, with_evidence

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("typst")


@pytest.fixture(scope="module")
def fix_first(test_catalog: Catalog, rulebase: RuleBase) -> Decision:
    return with_evidence(example_decision("input-bound-training", test_catalog, rulebase))


@pytest.fixture(scope="module")
def pdf(fix_first: Decision) -> bytes:
    return render(fix_first, "pdf")


def pages(pdf: bytes) -> list[str]:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return [" ".join(page.extract_text().split()) for page in reader.pages]


def test_page_one_holds_the_summary(pdf: bytes, fix_first: Decision) -> None:
    first = pages(pdf)[0]
    top = fix_first.picks[0]
    assert first.index(fix_first.meta.title) < first.index("Summary")
    assert " ".join(fix_first.recommendation.headline.split()) in first
    assert f"{top.count} × {top.name}" in first
    assert f"${top.price_usd:,.0f}" in first and f"${top.total_price_usd:,.0f}" in first
    assert f"Confidence is {fix_first.recommendation.confidence}" in first
    assert first.index("Summary") < first.index("Fix this first")


def test_pdf_holds_picks_findings_and_every_section(pdf: bytes, fix_first: Decision) -> None:
    text = " ".join(pages(pdf))
    for pick in fix_first.picks:
        assert pick.name in text
    for finding in (*fix_first.fix_first, *fix_first.findings):
        assert finding.rule in text
        assert " ".join(finding.title.split()) in text
    positions = [
        text.index(section)
        for section in (
            "Summary",
            "Fix this first",
            "Why",
            "Options rejected",
            "How the options compare",
            "What would change the recommendation",
            "Measured evidence",
            "Operating runbook",
            "Inputs and provenance",
            "Prices used",
            "Sign-off",
        )
    ]
    assert positions == sorted(positions)
    assert "GPU 0: NVIDIA RTX A5000" in text
    assert "121 samples over 600 s from smi.csv" in text


def test_bundled_typst_template_compiles_without_warnings(fix_first: Decision) -> None:
    source = render_source(fix_first, "pdf")
    _, warnings = compile_pdf(source, root=data_dir("reports"))
    assert warnings == ()


def test_same_decision_same_pdf_bytes(pdf: bytes, fix_first: Decision) -> None:
    assert render(fix_first, "pdf") == pdf


def test_same_pdf_bytes_in_a_fresh_process(tmp_path: Path) -> None:
    """Typst caches nothing between runs that could leak into the bytes."""
    script = (
        "import sys; from pathlib import Path;"
        "from gpuadvisor.inputs.catalog import load_catalog;"
        "from gpuadvisor.pipeline import advise;"
        "from gpuadvisor.render.report import render;"
        "c = load_catalog(base=Path('tests/fixtures/catalog'));"
        "d = advise(Path('examples/llm-latency-endpoint.toml'), catalog=c, sensitivity=False);"
        "sys.stdout.buffer.write(render(d, 'pdf'))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # SOURCE_DATE_EPOCH: conftest's
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, check=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].startswith(b"%PDF-")


def test_document_date_is_the_decisions_date(
    pdf: bytes, fix_first: Decision, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    assert fix_first.provenance.generated_at == TEST_DATE
    assert reader.metadata is not None
    assert str(reader.metadata["/CreationDate"]).startswith("D:20261201")
    assert TEST_DATE in pages(pdf)[0]
    other_day = fix_first.model_copy(
        update={
            "provenance": fix_first.provenance.model_copy(update={"generated_at": "2026-01-01"})
        }
    )
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1")  # rendering never reads it
    dated = pypdf.PdfReader(io.BytesIO(render(other_day, "pdf")))
    assert dated.metadata is not None
    assert str(dated.metadata["/CreationDate"]).startswith("D:20260101")
    assert render(fix_first, "pdf") == pdf


def test_page_one_renders_to_an_image(pdf: bytes, tmp_path: Path) -> None:
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed; page rendering not checked")
    source = tmp_path / "report.pdf"
    source.write_bytes(pdf)
    subprocess.run(
        [pdftoppm, "-png", "-r", "40", "-f", "1", "-l", "1", str(source), str(tmp_path / "p")],
        check=True,
        capture_output=True,
    )
    (image,) = tmp_path.glob("p*.png")
    data = image.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert abs(height / width - 297 / 210) < 0.01  # A4 portrait
    assert len(data) > 5000  # not a blank page


def test_pdf_needs_an_output_file(cli: Callable[..., CliResult]) -> None:
    profile = REPO / "examples" / "llm-latency-endpoint.toml"
    result = cli("advise", str(profile), "--format", "pdf")
    assert result.exit_code == 2
    assert "PDF output needs a file: add -o FILE.pdf" in result.stderr
    assert result.stdout == ""


# -- every bundled example ------------------------------------------------------------

EXAMPLES = [name for name, _ in list_examples()]
#: A4 and the bundled template's page margins (20 mm top, 18 mm bottom), in points.
PAGE_HEIGHT = 841.89
TOP_MARGIN = 20 / 25.4 * 72
BOTTOM_MARGIN = 18 / 25.4 * 72
#: How much of page 1's text area may stay empty at its foot when the report goes on:
#: what the tallest piece that must not break leaves (a label with its few lines of
#: text, a table row, a heading kept with its rule line and first row), about nine lines.
PAGE_ONE_EMPTY_AT_MOST = 0.15


@pytest.fixture(scope="module")
def bundled_pdfs() -> dict[str, bytes]:
    """Each bundled example as ``gpuadvisor advise --format pdf`` writes it: the bundled
    catalog, the captures shipped in examples/evidence/NAME/ (named relative to the
    checkout, as a reader would give them), the what-would-change scan."""
    reports = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        for name in EXAMPLES:
            folder = Path("examples") / "evidence" / name
            evidence = sorted(folder.iterdir()) if folder.is_dir() else []
            decision = advise(Path("examples") / f"{name}.toml", evidence=evidence)
            reports[name] = render(decision, "pdf")
    return reports


def _tools(*names: str) -> dict[str, str]:
    found = {name: shutil.which(name) for name in names}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed, so the PDF was not read by qpdf and "
            "poppler (apt-get install qpdf poppler-utils; .ci/run installs them)"
        )
    return {name: path for name, path in found.items() if path is not None}


def _complaints(pdf: bytes, folder: Path) -> list[str]:
    """What qpdf --check, pdfinfo, pdftotext and pdftoppm (every page) say about ``pdf``
    beyond their normal output: any warning or error, on either stream."""
    tools = _tools("qpdf", "pdfinfo", "pdftotext", "pdftoppm")
    path = folder / "report.pdf"
    path.write_bytes(pdf)
    said = []
    for command in (
        [tools["qpdf"], "--check", str(path)],
        [tools["pdfinfo"], str(path)],
        [tools["pdftotext"], "-layout", str(path), str(folder / "report.txt")],
        [tools["pdftoppm"], "-png", "-r", "20", str(path), str(folder / "page")],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        name = Path(command[0]).name
        if done.returncode != 0:
            said.append(f"{name} exited with {done.returncode}")
        said += [f"{name}: {line}" for line in done.stderr.splitlines() if line.strip()]
        if name == "qpdf":
            said += [f"qpdf: {line}" for line in done.stdout.splitlines() if "WARNING" in line]
            if "No syntax or stream encoding errors found" not in done.stdout:
                said.append("qpdf: " + done.stdout.strip().replace("\n", " / "))
    assert len(list(folder.glob("page*.png"))) == len(pypdf.PdfReader(path).pages)
    return said


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_bundled_report_is_clean_under_qpdf_and_poppler(
    name: str, bundled_pdfs: dict[str, bytes], tmp_path: Path
) -> None:
    assert _complaints(bundled_pdfs[name], tmp_path) == []


def test_an_organisation_template_compiles_as_clean(fix_first: Decision, tmp_path: Path) -> None:
    """--template DIR compiles in a sandboxed child process, with the same options."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "report.typ.j2").write_text(
        '{% extends "bundled/report.typ.j2" %}\n'
        '{% block style %}#let accent = rgb("#7a1f3d"){% endblock %}\n',
        encoding="utf-8",
    )
    pdf = render(fix_first, "pdf", template_dir=overlay)
    assert pdf != render(fix_first, "pdf")  # the overlay's colour
    assert _complaints(pdf, tmp_path) == []


def _row_pages(pdf: bytes) -> list[set[int]]:
    """The pages each table row's content lies on, from the PDF's tags.

    Typst tags the document: every table row is a ``TR`` structure element, and each
    piece of its content names its page (``/Pg``, inherited from the nearest element
    that has one). A row split across pages names two.
    """
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    number = {page.indirect_reference.idnum: i for i, page in enumerate(reader.pages, 1)}
    generic = pypdf.generic

    def pages_of(node: object, page: int) -> set[int]:
        node = node.get_object() if isinstance(node, generic.PdfObject) else node
        if isinstance(node, int):  # a marked-content id on ``page``
            return {page}
        if isinstance(node, list):
            return set().union(*(pages_of(kid, page) for kid in node))
        if not isinstance(node, generic.DictionaryObject):
            return set()
        if "/Pg" in node:
            page = number[node.raw_get("/Pg").idnum]
        if node.get("/Type") in ("/MCR", "/OBJR"):
            return {page}
        return pages_of(node["/K"], page) if "/K" in node else set()

    rows: list[set[int]] = []

    def walk(node: object, page: int) -> None:
        node = node.get_object() if isinstance(node, generic.PdfObject) else node
        if isinstance(node, list):
            for kid in node:
                walk(kid, page)
        elif isinstance(node, generic.DictionaryObject):
            if "/Pg" in node:
                page = number[node.raw_get("/Pg").idnum]
            if node.get("/S") == "/TR":
                rows.append(pages_of(node.get("/K", []), page))
            elif "/K" in node:
                walk(node["/K"], page)

    walk(reader.trailer["/Root"]["/StructTreeRoot"], 0)
    return rows


@pytest.mark.parametrize("name", EXAMPLES)
def test_no_table_row_is_split_across_pages(name: str, bundled_pdfs: dict[str, bytes]) -> None:
    rows = _row_pages(bundled_pdfs[name])
    assert len(rows) > 20  # the rows were found: the requirements, options, facts...
    split = [sorted(pages) for pages in rows if len(pages) > 1]
    assert split == [], f"{len(split)} table rows run across pages: {split}"


def _lowest_baseline(page: Any) -> float:
    """How far down the page (points from its top) the last line of body text sits;
    the footer, in the bottom margin, is left out."""
    height = float(page.mediabox.height)
    depths = []

    def visit(text: str, cm: list[float], tm: list[float], *_: object) -> None:
        if text.strip():
            depths.append(height - (tm[4] * cm[1] + tm[5] * cm[3] + cm[5]))

    page.extract_text(visitor_text=visit)
    body = [d for d in depths if d < height - BOTTOM_MARGIN]
    assert body, "no text on the page"
    return max(body)


@pytest.mark.parametrize("name", EXAMPLES)
def test_page_one_is_filled_when_the_report_goes_on(
    name: str, bundled_pdfs: dict[str, bytes]
) -> None:
    reader = pypdf.PdfReader(io.BytesIO(bundled_pdfs[name]))
    assert len(reader.pages) > 1
    area = PAGE_HEIGHT - TOP_MARGIN - BOTTOM_MARGIN
    empty = (PAGE_HEIGHT - BOTTOM_MARGIN - _lowest_baseline(reader.pages[0])) / area
    assert empty <= PAGE_ONE_EMPTY_AT_MOST, (
        f"page 1 leaves {empty:.0%} of its height empty at the foot, and the report goes on"
    )
