"""How wide a chart label is, and how to set it on lines that fit.

SVG cannot wrap text or tell how wide a string is, and the charts are drawn before a
browser or Typst sees them, so label widths are estimated here from font metrics. The
widths are DejaVu Sans's (the advance widths of its regular and bold faces, per 1000
units of the em): the widest sans-serif a reader's browser is likely to fall back to
(Debian's ``system-ui``), wider than Segoe UI, San Francisco, Roboto, Helvetica and the
Libertinus Serif of the PDF. A label that fits by this estimate fits in every one of
them; ``tests/test_report_visual.py`` holds the estimate to what Chromium measures.
"""

from __future__ import annotations

from typing import Final

_ASCII: Final = (
    # DejaVu Sans Book, U+0020 to U+007E
    "318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 636 636 636 636 636 "
    "636 636 636 636 636 337 337 838 838 838 531 1000 684 686 698 770 632 575 775 752 295 "
    "295 656 557 863 748 787 603 787 695 635 611 732 684 989 685 611 685 390 337 390 838 "
    "500 500 613 635 550 635 615 352 635 634 278 278 579 278 974 634 612 635 635 411 521 "
    "392 634 592 818 592 592 525 636 337 636 838",
    # DejaVu Sans Bold
    "348 456 521 838 696 1002 872 306 457 457 523 838 380 415 380 365 696 696 696 696 696 "
    "696 696 696 696 696 400 400 838 838 838 580 1000 774 762 734 830 683 683 821 837 372 "
    "372 775 637 995 837 850 733 850 770 720 682 812 774 1103 771 724 725 457 365 457 838 "
    "500 500 675 716 593 716 678 435 716 712 343 343 665 343 1042 712 687 716 716 493 595 "
    "478 712 652 924 645 652 582 712 365 712 838",
)
_OTHER: Final = (
    {"×": 838, "…": 1000, "·": 318, "–": 500, "—": 1000, "°": 500, "µ": 636, "’": 318},
    {"×": 838, "…": 1000, "·": 380, "–": 500, "—": 1000, "°": 500, "µ": 736, "’": 380},
)
_TABLES: Final = tuple(
    ({chr(32 + i): int(w) for i, w in enumerate(table.split())} | other)
    for table, other in zip(_ASCII, _OTHER, strict=True)
)
#: Any other character counts as a full em: wide, so the estimate stays an upper bound.
_UNKNOWN: Final = 1000
#: Kept free beyond the metrics: rounding and hinting at small sizes.
SAFETY: Final = 1.04
ELLIPSIS: Final = "…"


def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """Width in px of ``text`` set at ``size`` px (an upper bound, see the module)."""
    table = _TABLES[bold]
    return sum(table.get(ch, _UNKNOWN) for ch in text) * size / 1000 * SAFETY


def fit_lines(
    text: str, width: float, size: float, *, bold: bool = False, max_lines: int = 3
) -> tuple[str, ...]:
    """``text`` broken at spaces onto lines no wider than ``width`` px, at most
    ``max_lines`` of them. Only when the words still do not fit is the last line cut,
    with an ellipsis; every line is then within ``width``."""
    lines: list[str] = []
    words = text.split()
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and text_width(f"{line} {words[0]}", size, bold=bold) <= width:
            line = f"{line} {words.pop(0)}"
        lines.append(line)
    if words:
        lines[-1] = f"{lines[-1]} {' '.join(words)}"
    if lines and (words or text_width(lines[-1], size, bold=bold) > width):
        lines[-1] = _cut(lines[-1], width, size, bold=bold)
    return tuple(_cut(line, width, size, bold=bold) for line in lines)


def _cut(line: str, width: float, size: float, *, bold: bool) -> str:
    if text_width(line, size, bold=bold) <= width:
        return line
    while line and text_width(line + ELLIPSIS, size, bold=bold) > width:
        line = line[:-1]
    return line.rstrip() + ELLIPSIS
