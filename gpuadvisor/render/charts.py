"""Chart geometry for the SVG templates under ``reports/charts/``.

Hand-made SVG, no plotting library: this module turns a Decision into coordinates and
labels, the templates draw them. Coordinates are rounded to 0.1 px and written with a
fixed format, so the same decision always gives the same bytes. Imported only for the
formats that draw charts (HTML and PDF); records are ``NamedTuple`` as in the view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gpuadvisor.decision.model import Decision, Pick
from gpuadvisor.render.purchase import Column, option_label
from gpuadvisor.render.textwidth import fit_lines
from gpuadvisor.render.view import SeriesStats
from gpuadvisor.vocabulary import format_value

WIDTH = 720
LABEL_RIGHT = 252.0
PLOT_LEFT = 264.0
ROW_HEIGHT = 24.0
BAR_HEIGHT = 14.0
#: Label text: size in px and the distance between the baselines of wrapped lines.
FONT_SIZE = 11.0
ROLE_SIZE = 10.0
LINE_HEIGHT = 12.5
#: Label lines start this far right of the chart's left edge.
LABEL_LEFT = 4.0
#: Beyond this many samples a series is reduced to each bucket's low and high, so spikes
#: and throttling dips survive while the SVG stays small.
MAX_POINTS = 600
#: Every card the catalog lists is NVIDIA's: the word tells one bar from no other.
VENDOR = "NVIDIA "


def px(value: float) -> str:
    return f"{value:.1f}"


def clip(text: str, limit: int) -> str:
    """Shorten a label to ``limit`` characters (the one-line ``Bar.label``)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def card_label(count: int, name: str) -> str:
    """``2 × RTX PRO 4000 Blackwell``: the count and the card, without the vendor every
    card shares, so what tells cards apart (model number, edition) stays in view."""
    short = name[len(VENDOR) :] if name.startswith(VENDOR) and len(name) > len(VENDOR) else name
    return f"{count} × {short}"


def pick_label(pick: Pick) -> str:
    """:func:`card_label` of what a pick runs on: the cards bought and those kept."""
    if pick.kept_count and not pick.count:
        return "keep " + card_label(pick.kept_count, pick.kept_name)
    label = card_label(pick.count, pick.name)
    return f"{label} + {pick.kept_count} kept" if pick.kept_count else label


class Line(NamedTuple):
    """One line of a label: its text, baseline, and whether it is the small role line."""

    text: str
    y: str
    role: bool


class Bar(NamedTuple):
    label: str
    """The label on one line, shortened (kept for templates that draw one line)."""
    y: str
    text_y: str
    x: str
    width: str
    status: str
    note: str
    note_x: str
    title: str = ""
    """The full label and value, unshortened: the tooltip (SVG ``<title>``)."""
    lines: tuple[Line, ...] = ()
    """The label set on lines that fit left of the plot."""
    notes: tuple[Line, ...] = ()
    """The note set on lines that fit right of the bar."""


class Tick(NamedTuple):
    x: str
    label: str


class BarChart(NamedTuple):
    title: str
    width: int
    height: str
    plot_left: str
    plot_right: str
    plot_top: str
    plot_bottom: str
    plot_width: str
    plot_height: str
    tick_y: str
    label_right: str
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    marker: Marker | None
    """A vertical reference line (the memory need), or None."""
    label_left: str = px(LABEL_LEFT)


class Marker(NamedTuple):
    x: str
    label: str
    top: str
    label_y: str


class _Row(NamedTuple):
    """A bar before it is placed: its label lines ((text, is_role)), note lines, value."""

    label: list[tuple[str, bool]]
    note: list[str]
    status: str
    value: float
    one_line: str
    title: str


def _label_lines(role: str | None, text: str, *, bold: bool) -> list[tuple[str, bool]]:
    width = LABEL_RIGHT - LABEL_LEFT
    lines = [(line, True) for line in fit_lines(role, width, ROLE_SIZE)] if role else []
    return lines + [(line, False) for line in fit_lines(text, width, FONT_SIZE, bold=bold)]


def _place(
    rows: Sequence[_Row], top: float, factor: float, offset: float, notes_at: float | None
) -> tuple[list[Bar], float]:
    """Rows stacked from ``top``, each as tall as its label or note needs; notes start
    at ``notes_at``, or just right of their bar when it is None."""
    bars = []
    y = top
    for row in rows:
        lines = max(len(row.label), len(row.note), 1)
        height = max(ROW_HEIGHT, lines * LINE_HEIGHT + 8)
        middle = y + height / 2
        start, end = sorted((offset, offset + row.value * factor))
        width = max(end - start, 1.5)
        note_x = notes_at if notes_at is not None else start + width + 5

        label_lines = tuple(
            Line(text, px(b), role)
            for (text, role), b in zip(row.label, _baselines(middle, len(row.label)), strict=True)
        )
        note_lines = tuple(
            Line(text, px(b), False)
            for text, b in zip(row.note, _baselines(middle, len(row.note)), strict=True)
        )
        bars.append(
            Bar(
                label=row.one_line,
                y=px(middle - BAR_HEIGHT / 2),
                text_y=px(middle + 4),
                x=px(start),
                width=px(width),
                status=row.status,
                note=" ".join(row.note),
                note_x=px(note_x),
                title=row.title,
                lines=label_lines,
                notes=note_lines,
            )
        )
        y += height
    return bars, y


def _baselines(middle: float, count: int) -> list[float]:
    """Baselines of ``count`` lines centred on ``middle``."""
    first = middle - (count - 1) * LINE_HEIGHT / 2 + 4
    return [first + i * LINE_HEIGHT for i in range(count)]


def _bar_chart(
    title: str,
    top: float,
    bottom: float,
    plot_right: float,
    bars: Sequence[Bar],
    ticks: tuple[Tick, ...],
    marker: Marker | None,
) -> BarChart:
    return BarChart(
        title=title,
        width=WIDTH,
        height=px(bottom + 24),
        plot_left=px(PLOT_LEFT),
        plot_right=px(plot_right),
        plot_top=px(top),
        plot_bottom=px(bottom),
        plot_width=px(plot_right - PLOT_LEFT),
        plot_height=px(bottom - top),
        tick_y=px(bottom + 14),
        label_right=px(LABEL_RIGHT),
        bars=tuple(bars),
        ticks=ticks,
        marker=marker,
    )


def _scale(lo: float, hi: float, left: float, right: float) -> tuple[float, float]:
    if hi == lo:
        hi = lo + 1
    factor = (right - left) / (hi - lo)
    return factor, left - lo * factor


def scores_chart(decision: Decision) -> BarChart | None:
    """Every (shape, class) pair's score; the chosen one, the ones with a fitting option,
    and the ones no option survived."""
    r = decision.recommendation
    shape_scores = decision.scores.get("shape", {})
    class_scores = decision.scores.get("class", {})
    if r.shape not in shape_scores or r.class_ not in class_scores:
        return None
    entries: list[tuple[str, int, str, str, str]] = []
    chosen_score = shape_scores[r.shape] + class_scores[r.class_]
    chosen_note = "recommended" if decision.picks else "no option fits"
    if r.action == "keep":
        chosen_note = "kept in the host: buy nothing"
    chosen_status = "chosen" if decision.picks else "excluded"
    label = option_label(r.shape, r.class_, short=True)
    entries.append((label, chosen_score, chosen_status, chosen_note, chosen_note))
    for a in decision.alternatives:
        if a.best is not None:
            status = "feasible"
            note = f"best: {card_label(a.best.count, a.best.name)}"
            full = f"best: {a.best.count} × {a.best.name}"
        else:
            status, note = "excluded", "excluded by " + ", ".join(a.eliminated_by[:3])
            full = "excluded by " + ", ".join(a.eliminated_by)
        entries.append((option_label(a.shape, a.class_, short=True), a.score, status, note, full))
    entries.sort(key=lambda e: -e[1])
    plot_right = 470.0
    note_left = plot_right + 10
    note_width = WIDTH - note_left - LABEL_LEFT
    rows = [
        _Row(
            label=_label_lines(None, label, bold=status == "chosen"),
            note=list(fit_lines(f"{score:+d} · {note}", note_width, FONT_SIZE, bold=False)),
            status=status,
            value=float(score),
            one_line=clip(label, 38),
            title=f"{label}: {score:+d} · {full}",
        )
        for label, score, status, note, full in entries
    ]
    lo = min(0, *(score for _, score, _, _, _ in entries))
    hi = max(0, *(score for _, score, _, _, _ in entries))
    factor, offset = _scale(lo, hi, PLOT_LEFT, plot_right)
    top = 10.0
    bars, bottom = _place(rows, top, factor, offset, note_left)
    ticks = tuple(
        Tick(px(offset + value * factor), f"{value:+d}" if value else "0")
        for value in sorted({lo, 0, hi})
    )
    return _bar_chart(
        "Score of each kind of purchase (shape + class rule weights)",
        top,
        bottom,
        plot_right,
        bars,
        ticks,
        None,
    )


def memory_chart(columns: Sequence[Column], need_gib: float | None) -> BarChart | None:
    """Memory one job can use on each compared option, against the stated need."""
    if need_gib is None or not columns:
        return None
    plot_right = 610.0
    hi = max(need_gib, *(c.job_memory_gib for c in columns)) * 1.08
    factor, offset = _scale(0, hi, PLOT_LEFT, plot_right)
    top = 22.0
    rows = []
    for column in columns:
        memory = column.job_memory_gib
        status = ("chosen" if column.chosen else "feasible") if memory >= need_gib else "short"
        # Two rejected kinds may offer the same card: their kind tells the bars apart.
        role = column.role if column.chosen else f"{column.role}: {column.short_option}"
        rows.append(
            _Row(
                label=_label_lines(role, pick_label(column.pick), bold=column.chosen),
                note=[f"{format_value(memory)} GiB"],
                status=status,
                value=memory,
                one_line=clip(f"{column.role}: {column.card}", 38),
                title=f"{role}: {column.card}, {format_value(memory)} GiB for one job",
            )
        )
    bars, bottom = _place(rows, top, factor, offset, None)
    step = _nice_step(hi)
    ticks = tuple(
        Tick(px(offset + value * factor), format_value(float(value)))
        for value in range(0, int(hi) + 1, step)
    )
    marker = Marker(
        x=px(offset + need_gib * factor),
        label=f"needs {format_value(need_gib)} GiB",
        top=px(top - 6),
        label_y=px(top - 9),
    )
    return _bar_chart(
        "Memory one job can use, against the need", top, bottom, plot_right, bars, ticks, marker
    )


def _nice_step(span: float, target_ticks: int = 6) -> int:
    raw = max(span / target_ticks, 1)
    for step in (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024):
        if step >= raw:
            return step
    return int(raw)


class Panel(NamedTuple):
    title: str
    title_y: str
    top: str
    bottom: str
    height: str
    points: str
    y_max: str
    y_max_y: str
    y_min: str


class SeriesChart(NamedTuple):
    title: str
    width: int
    height: str
    plot_left: str
    plot_right: str
    plot_width: str
    label_right: str
    panels: tuple[Panel, ...]
    x_start: str
    x_end: str
    axis_y: str


def _reduce(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_POINTS:
        return list(points)
    size = -(-len(points) * 2 // MAX_POINTS)
    reduced: list[tuple[float, float]] = []
    for start in range(0, len(points), size):
        bucket = points[start : start + size]
        low = min(bucket, key=lambda p: p[1])
        high = max(bucket, key=lambda p: p[1])
        reduced.extend(sorted({low, high}))
    return reduced


def series_chart(title: str, series: Sequence[SeriesStats]) -> SeriesChart | None:
    """One panel per metric over a shared time axis."""
    if not series:
        return None
    t_min = min(t for s in series for t, _ in s.points)
    t_max = max(t for s in series for t, _ in s.points)
    left, right = 64.0, float(WIDTH - 12)
    x_factor, x_offset = _scale(t_min, t_max, left, right)
    panel_height, gap = 64.0, 30.0
    panels = []
    for index, stats in enumerate(series):
        top = 8.0 + index * (panel_height + gap) + 18
        bottom = top + panel_height
        values = [v for _, v in stats.points]
        lo, hi = (0.0, 100.0) if stats.unit == "%" else (min(values), max(values))
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        y_factor = (bottom - top) / (hi - lo)
        points = " ".join(
            f"{px(x_offset + t * x_factor)},{px(bottom - (v - lo) * y_factor)}"
            for t, v in _reduce(stats.points)
        )
        panels.append(
            Panel(
                title=(
                    f"{stats.label} ({stats.unit}): min {stats.minimum} · mean {stats.mean}"
                    f" · max {stats.maximum}"
                ),
                title_y=px(top - 6),
                top=px(top),
                bottom=px(bottom),
                height=px(panel_height),
                points=points,
                y_max=format_value(round(hi, 1)),
                y_max_y=px(top + 9),
                y_min=format_value(round(lo, 1)),
            )
        )
    axis_y = 8.0 + len(panels) * (panel_height + gap) + 18 - gap + 16
    return SeriesChart(
        title=title,
        width=WIDTH,
        height=px(axis_y + 8),
        plot_left=px(left),
        plot_right=px(right),
        plot_width=px(right - left),
        label_right=px(left - 6),
        panels=tuple(panels),
        x_start=f"{format_value(round(t_min, 1))} s",
        x_end=f"{format_value(round(t_max, 1))} s",
        axis_y=px(axis_y),
    )
