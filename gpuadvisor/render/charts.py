"""Chart geometry for the SVG templates under ``reports/charts/``.

Hand-made SVG, no plotting library: this module turns a Decision into coordinates and
labels, the templates draw them. Coordinates are rounded to 0.1 px and written with a
fixed format, so the same decision always gives the same bytes. Imported only for the
formats that draw charts (HTML and PDF); records are ``NamedTuple`` as in the view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gpuadvisor.decision.model import Decision
from gpuadvisor.render.view import Column, SeriesStats, option_label
from gpuadvisor.vocabulary import format_value

WIDTH = 720
LABEL_RIGHT = 228.0
PLOT_LEFT = 240.0
ROW_HEIGHT = 24.0
BAR_HEIGHT = 14.0
#: Beyond this many samples a series is reduced to each bucket's low and high, so spikes
#: and throttling dips survive while the SVG stays small.
MAX_POINTS = 600


def px(value: float) -> str:
    return f"{value:.1f}"


def clip(text: str, limit: int) -> str:
    """Shorten a label to fit its column (the SVG has no text measurement)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class Bar(NamedTuple):
    label: str
    y: str
    text_y: str
    x: str
    width: str
    status: str
    note: str
    note_x: str


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


class Marker(NamedTuple):
    x: str
    label: str
    top: str
    label_y: str


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
    rows: list[tuple[str, int, str, str]] = []
    chosen_score = shape_scores[r.shape] + class_scores[r.class_]
    if decision.picks:
        rows.append(
            (option_label(r.shape, r.class_, short=True), chosen_score, "chosen", "recommended")
        )
    else:
        rows.append(
            (
                option_label(r.shape, r.class_, short=True),
                chosen_score,
                "excluded",
                "no option fits",
            )
        )
    for a in decision.alternatives:
        if a.best is not None:
            status, note = "feasible", f"best: {a.best.count} × {a.best.name}"
        else:
            status, note = "excluded", "excluded by " + ", ".join(a.eliminated_by[:3])
        rows.append((option_label(a.shape, a.class_, short=True), a.score, status, note))
    rows.sort(key=lambda row: -row[1])
    plot_right = 470.0
    lo = min(0, *(score for _, score, _, _ in rows))
    hi = max(0, *(score for _, score, _, _ in rows))
    factor, offset = _scale(lo, hi, PLOT_LEFT, plot_right)
    top = 10.0
    bars = []
    for index, (label, score, status, note) in enumerate(rows):
        y = top + index * ROW_HEIGHT
        start, end = sorted((offset, offset + score * factor))
        bars.append(
            Bar(
                label=clip(label, 38),
                y=px(y + (ROW_HEIGHT - BAR_HEIGHT) / 2),
                text_y=px(y + ROW_HEIGHT / 2 + 4),
                x=px(start),
                width=px(max(end - start, 1.5)),
                status=status,
                note=clip(f"{score:+d} · {note}", 42),
                note_x=px(plot_right + 10),
            )
        )
    bottom = top + len(rows) * ROW_HEIGHT
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
    bars = []
    for index, column in enumerate(columns):
        y = top + index * ROW_HEIGHT
        memory = column.job_memory_gib
        status = ("chosen" if column.chosen else "feasible") if memory >= need_gib else "short"
        bars.append(
            Bar(
                label=clip(f"{column.role}: {column.card}", 38),
                y=px(y + (ROW_HEIGHT - BAR_HEIGHT) / 2),
                text_y=px(y + ROW_HEIGHT / 2 + 4),
                x=px(offset),
                width=px(max(memory * factor, 1.5)),
                status=status,
                note=f"{format_value(memory)} GiB",
                note_x=px(offset + max(memory * factor, 1.5) + 5),
            )
        )
    bottom = top + len(columns) * ROW_HEIGHT
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
