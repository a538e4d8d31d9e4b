"""The visual check: page 1 of the PDF and the HTML page, for two examples, rendered to
PNG, and held to "no text overflows its box".

- PDF: ``pdftoppm`` draws page 1; ``pdftotext -bbox-layout`` gives every word's box on
  every page, which must lie inside the text column and overlap no other word (text
  pushed out of a table cell or a summary box lands on its neighbour or in the margin).
  The summary's own measurements (Typst ``measure``) are in tests/test_report_layout.py.
- HTML: headless Chromium (Debian's ``chromium``) screenshots the page, and loads it once
  more with ``tests/visual/overflow.js`` injected, which writes what it finds into the
  page for ``--dump-dom``: boxes whose content sticks out, words broken across lines,
  chart text outside its chart, and the width of every chart text as drawn (held to the
  estimate in :mod:`gpuadvisor.render.textwidth`).

The PNGs and the pages go to ``tests/visual/out/`` (ignored by git) to be looked at.
Without chromium or poppler-utils these tests skip and say so; ``.ci/run`` installs both.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render
from gpuadvisor.render.textwidth import text_width

from .conftest import REPO, TESTS

OUT = TESTS / "visual" / "out"
SCRIPT = TESTS / "visual" / "overflow.js"
#: A fix-first case with a real capture (long fact names, per-GPU tables, a rejected
#: alternative in the memory chart), and several cards for virtual desktops.
EXAMPLES = ("thermal-throttled-workstation", "vdi-many-users")
#: A desktop window, and a narrow one (half a laptop screen, a tablet).
WINDOW = (1200, 1000)
WIDTHS = (1200, 760)
#: A4 in points and the bundled template's side margins (18 mm).
PAGE_WIDTH = 595.28
MARGIN = 18 / 25.4 * 72


def _tool(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        f"{names[0]} is not installed, so this visual check did not run "
        "(apt-get install poppler-utils chromium; .ci/run installs them)"
    )


@pytest.fixture(scope="module")
def out() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    return OUT


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request: pytest.FixtureRequest) -> tuple[str, Decision]:
    name = str(request.param)
    folder = REPO / "examples" / "evidence" / name
    evidence = sorted(p.resolve() for p in folder.iterdir()) if folder.is_dir() else []
    # The bundled catalog: its card names are the long ones readers see.
    decision = advise(REPO / "examples" / f"{name}.toml", evidence=evidence, sensitivity=False)
    return name, decision


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# -- PDF ------------------------------------------------------------------------------


class Word(NamedTuple):
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str


def _words(bbox_html: str) -> list[Word]:
    words = []
    for page, body in enumerate(re.split(r"<page ", bbox_html)[1:], start=1):
        for m in re.finditer(
            r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
            body,
        ):
            x0, y0, x1, y1 = (float(v) for v in m.groups()[:4])
            words.append(Word(page, x0, y0, x1, y1, html.unescape(m.group(5))))
    return words


def _overlaps(words: list[Word]) -> list[str]:
    """Pairs of words on one page whose boxes overlap (beyond glyph-edge rounding)."""
    found = []
    for page in {w.page for w in words}:
        on_page = sorted((w for w in words if w.page == page), key=lambda w: w.x0)
        for i, a in enumerate(on_page):
            for b in on_page[i + 1 :]:
                if b.x0 >= a.x1 - 0.5:
                    break
                across = min(a.x1, b.x1) - max(a.x0, b.x0)
                down = min(a.y1, b.y1) - max(a.y0, b.y0)
                if across > 0.5 and down > 0.4 * min(a.y1 - a.y0, b.y1 - b.y0):
                    found.append(f"page {page}: {a.text!r} overlaps {b.text!r}")
    return found


def test_pdf_page_one_png_and_no_text_outside_its_box(
    example: tuple[str, Decision], out: Path, tmp_path: Path
) -> None:
    pdftoppm = _tool("pdftoppm")
    pdftotext = _tool("pdftotext")
    name, decision = example
    pdf = out / f"{name}.pdf"
    pdf.write_bytes(render(decision, "pdf"))
    page_one = ["-png", "-r", "100", "-f", "1", "-l", "1", "-singlefile"]
    subprocess.run(
        [pdftoppm, *page_one, str(pdf), str(out / f"{name}-pdf-page1")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    width, height = _png_size(out / f"{name}-pdf-page1.png")
    assert abs(height / width - 297 / 210) < 0.01

    boxes = tmp_path / "words.html"
    subprocess.run(
        [pdftotext, "-bbox-layout", str(pdf), str(boxes)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    words = _words(boxes.read_text(encoding="utf-8"))
    assert len(words) > 500 and decision.recommendation.confidence.upper() in {
        w.text for w in words if w.page == 1
    }
    outside = [
        f"page {w.page}: {w.text!r} at x {w.x0:.1f} to {w.x1:.1f}"
        for w in words
        if w.x0 < MARGIN - 1 or w.x1 > PAGE_WIDTH - MARGIN + 1
    ]
    assert outside == [], "text outside the text column:\n" + "\n".join(outside[:20])
    overlapping = _overlaps(words)
    assert overlapping == [], "text over other text:\n" + "\n".join(overlapping[:20])


# -- HTML -----------------------------------------------------------------------------


def _chromium(*args: str, page: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    browser = _tool("chromium", "chromium-browser")
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",  # run as root in CI containers; the page is our own file
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            *args,
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _layout(
    page: str, out: Path, name: str, profile: Path, width: int = WINDOW[0]
) -> dict[str, Any]:
    probe = out / f"{name}-probe.html"
    script = SCRIPT.read_text(encoding="utf-8")
    probe.write_text(page.replace("</body>", f"<script>{script}</script>\n</body>"), "utf-8")
    done = _chromium(
        f"--window-size={width},{WINDOW[1]}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page=probe,
        profile=profile,
    )
    found = re.findall(r'<pre id="gpuadvisor-layout">(.*?)</pre>', done.stdout, re.S)
    assert found, "the layout probe did not run:\n" + done.stderr[-2000:]
    result: dict[str, Any] = json.loads(html.unescape(found[-1]))
    return result


def test_html_png_and_no_text_outside_its_box(
    example: tuple[str, Decision], out: Path, tmp_path: Path
) -> None:
    name, decision = example
    page = render(decision, "html")
    layouts = {width: _layout(page, out, name, tmp_path / "profile", width) for width in WIDTHS}
    for width, layout in layouts.items():
        assert layout["findings"] == [], f"{width}px window:\n" + "\n".join(layout["findings"][:30])

    report = out / f"{name}.html"
    report.write_text(page, encoding="utf-8")
    height = min(int(layouts[WINDOW[0]]["height"]) + 20, 16000)
    shot = out / f"{name}-html.png"
    shot.unlink(missing_ok=True)
    _chromium(
        f"--window-size={WINDOW[0]},{height}",
        f"--screenshot={shot}",
        page=report,
        profile=tmp_path / "profile",
    )
    assert _png_size(shot)[0] == WINDOW[0]


def test_chart_label_widths_are_upper_bounds_of_what_the_browser_draws(
    example: tuple[str, Decision], out: Path, tmp_path: Path
) -> None:
    """The charts break labels by estimated widths; the browser's must not be wider."""
    name, decision = example
    layout = _layout(render(decision, "html"), out, name, tmp_path / "profile")
    labels = layout["svgText"]
    assert len(labels) > 20
    wider = [
        f"{t['text']!r}: drawn {t['width']:.1f}px, estimated "
        f"{text_width(t['text'], t['size'], bold=t['bold']):.1f}px"
        for t in labels
        if t["width"] > text_width(t["text"], t["size"], bold=t["bold"]) + 0.5
    ]
    assert wider == [], f"fonts: {layout['fonts']}\n" + "\n".join(wider[:20])
