"""The PDF report: what a reader sees, that page 1 holds the summary, reproducibility."""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog
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
