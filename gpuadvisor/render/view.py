"""What every format shows, computed once from a Decision.

Templates only display. Whatever needs a choice (which options go in the comparison,
which runbook items apply, how a value is written with its unit) is made here, the same
for Markdown, HTML and PDF, so the formats cannot drift apart.

The view's records are ``NamedTuple``: immutable values like frozen dataclasses, but
several times cheaper to define, which every ``advise`` run pays at import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from gpuadvisor.decision.model import Alternative, Decision, Finding, MeasuredGpu, Pick, Sample
from gpuadvisor.errors import InputError
from gpuadvisor.vocabulary import Category, GpuClass, Shape, format_value

#: Rejected alternatives shown beside the picks in the comparison table.
ALTERNATIVES_COMPARED = 3

SHAPE_LABELS: dict[str, str] = {
    "single-larger-gpu": "one larger GPU",
    "two-independent-jobs": "several GPUs, independent jobs",
    "multi-gpu-model-parallel": "several GPUs, model split",
    "multi-gpu-data-parallel": "several GPUs, one data-parallel job",
}


SHAPE_SHORT: dict[str, str] = {
    "single-larger-gpu": "one larger GPU",
    "two-independent-jobs": "independent jobs",
    "multi-gpu-model-parallel": "model split",
    "multi-gpu-data-parallel": "data-parallel job",
}


def option_label(shape: str, class_: str, *, short: bool = False) -> str:
    names = SHAPE_SHORT if short else SHAPE_LABELS
    return f"{names.get(shape, shape)} · {class_}"


# -- rich text: `code` runs in runbook and template data -------------------------------


class Run(NamedTuple):
    text: str
    code: bool


def runs(text: str) -> tuple[Run, ...]:
    """Split text at backticks: odd segments are commands, shown as code in every format."""
    parts = re.split(r"`([^`]*)`", " ".join(text.split()))
    return tuple(Run(part, index % 2 == 1) for index, part in enumerate(parts) if part)


# -- the runbook ---------------------------------------------------------------------


class RunbookItem(BaseModel):
    """One operating task; shown when it is ``always`` relevant or a finding of one of its
    ``categories`` fired, or the recommendation has one of its ``shapes``/``classes``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    title: str
    why: str
    steps: tuple[str, ...]
    always: bool = False
    categories: tuple[Category, ...] = ()
    shapes: tuple[Shape, ...] = ()
    classes: tuple[GpuClass, ...] = ()


class Runbook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    item: tuple[RunbookItem, ...]


def parse_runbook(data: dict[str, object], name: str) -> Runbook:
    try:
        return Runbook.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(first["msg"], file=name, field=field) from None


class RunbookEntry(NamedTuple):
    id: str
    title: str
    why: tuple[Run, ...]
    steps: tuple[tuple[Run, ...], ...]
    because: tuple[str, ...]
    """Rule ids that made this item relevant; empty for items that always apply."""


def _counts_for_runbook(finding: Finding) -> bool:
    # Constraints of severity "info" (the fit checks: memory, slots, power, budget) are
    # active in every decision and already met by the picks; they tailor nothing.
    return not (finding.kind == "constraint" and finding.severity == "info")


def select_runbook(runbook: Runbook, decision: Decision) -> tuple[RunbookEntry, ...]:
    fired: list[tuple[str, str]] = [(f.category, f.rule) for f in decision.fix_first]
    fired += [(f.category, f.rule) for f in decision.findings if _counts_for_runbook(f)]
    shape = decision.recommendation.shape
    class_ = decision.recommendation.class_
    entries = []
    for item in runbook.item:
        because = tuple(dict.fromkeys(rule for cat, rule in fired if cat in item.categories))
        if not (item.always or because or shape in item.shapes or class_ in item.classes):
            continue
        entries.append(
            RunbookEntry(
                id=item.id,
                title=item.title,
                why=runs(item.why),
                steps=tuple(runs(step) for step in item.steps),
                because=because,
            )
        )
    return tuple(entries)


# -- the comparison table ------------------------------------------------------------


class Column(NamedTuple):
    """One purchase in the comparison: a pick, or the best option of a rejected kind."""

    role: str
    option: str
    pick: Pick
    chosen: bool

    @property
    def card(self) -> str:
        pick = self.pick
        if pick.kept_count and not pick.count:
            return f"keep {pick.kept_count} × {pick.kept_name}"
        if pick.kept_count:
            return f"{pick.count} × {pick.name} + {pick.kept_count} kept"
        return f"{pick.count} × {pick.name}"

    @property
    def job_memory_gib(self) -> float:
        return self.pick.vram_per_job_gib or self.pick.vram_gib


class Row(NamedTuple):
    label: str
    cells: tuple[str, ...]


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def comparison_columns(decision: Decision) -> tuple[Column, ...]:
    r = decision.recommendation
    chosen = option_label(r.shape, r.class_)
    columns = [
        Column(role=f"Pick #{rank}", option=chosen, pick=pick, chosen=True)
        for rank, pick in enumerate(decision.picks, start=1)
    ]
    alternatives = [a for a in decision.alternatives if a.best is not None]
    for alternative in alternatives[:ALTERNATIVES_COMPARED]:
        assert alternative.best is not None
        columns.append(
            Column(
                role="Rejected",
                option=option_label(alternative.shape, alternative.class_),
                pick=alternative.best,
                chosen=False,
            )
        )
    return tuple(columns)


def comparison_rows(columns: Sequence[Column], lifecycle_years: float | None) -> tuple[Row, ...]:
    def row(label: str, values: Iterable[str]) -> Row:
        return Row(label, tuple(values))

    span = f" ({format_value(lifecycle_years)} years)" if lifecycle_years else ""
    picks = [c.pick for c in columns]
    return (
        row("Kind", (c.option for c in columns)),
        row("Memory per card", (f"{format_value(p.vram_gib)} GiB" for p in picks)),
        row("Bandwidth per card", (f"{format_value(p.memory_bandwidth_gbs)} GB/s" for p in picks)),
        row("ECC", (_yes(p.ecc) for p in picks)),
        row("Frame lock", (_yes(p.frame_lock) for p in picks)),
        row("vGPU", (_yes(p.vgpu) for p in picks)),
        row("Cooling", (p.cooling for p in picks)),
        row("Slots per card", (format_value(p.slot_width) for p in picks)),
        row("Board power, all cards", (f"{format_value(p.tdp_w * p.count)} W" for p in picks)),
        row("Unit price", (f"${p.price_usd:,.0f} ({p.price_kind}, {p.price_date})" for p in picks)),
        row("Total price", (f"${p.total_price_usd:,.0f}" for p in picks)),
        row(f"Lifecycle cost{span}", (f"${p.lifecycle_cost_usd:,.0f}" for p in picks)),
    )


def fit_rows(columns: Sequence[Column], need_gib: float | None) -> tuple[Row, ...]:
    """Capacity and physical fit of each compared purchase (CONTRACT §6)."""
    picks = [c.pick for c in columns]

    def usable(p: Pick) -> str:
        if p.usable_vram_gib is None:
            return "–"
        need = f" / {format_value(need_gib)}" if need_gib is not None else ""
        return f"{format_value(round(p.usable_vram_gib, 2))}{need} GiB"

    def limit(p: Pick) -> str:
        if p.power_limit_w is None:
            return "none needed"
        return f"{format_value(p.power_limit_w)} W (about {format_value(p.speed_cost_pct)}% slower)"

    rows = [
        Row("Jobs served", tuple(f"{p.jobs_served} of {p.jobs_wanted}" for p in picks)),
        Row("Usable / needed per job", tuple(usable(p) for p in picks)),
        Row(
            "Headroom per job",
            tuple(
                "–" if p.headroom_gib is None else f"{format_value(round(p.headroom_gib, 2))} GiB"
                for p in picks
            ),
        ),
        Row(
            "Cards in the host",
            tuple(
                f"{p.cards_total}" + (f" ({p.kept_count} kept)" if p.kept_count else "")
                for p in picks
            ),
        ),
        Row(
            "Slots, all cards",
            tuple("–" if p.slots_total is None else format_value(p.slots_total) for p in picks),
        ),
    ]
    if any(p.power_limit_w is not None for p in picks):
        rows.append(Row("Power limit per card", tuple(limit(p) for p in picks)))
    return tuple(rows)


def purchase_lines(decision: Decision) -> tuple[str, ...]:
    """The purchase's capacity, memory, fit, the cards already in the host and the
    cheapest option that would do, one line each (every format shows them)."""
    r = decision.recommendation
    top = decision.picks[0] if decision.picks else None
    lines = []
    if r.capacity is not None:
        lines.append(f"Capacity: {r.capacity.summary}")
    if top is not None and top.usable_vram_gib is not None and top.memory_basis != "usable":
        lines.append(
            f"Memory: a {format_value(round(top.usable_vram_gib, 2))} GiB vGPU profile per "
            f"user for a need of {format_value(decision.vram_need_gib)} GiB (vGPU profiles "
            f"divide the board's {format_value(top.vram_gib)} GiB frame buffer)."
        )
    elif top is not None and top.usable_vram_gib is not None and top.headroom_gib is not None:
        need = format_value(decision.vram_need_gib)
        lines.append(
            f"Memory: {format_value(round(top.usable_vram_gib, 2))} GiB usable per job for a "
            f"need of {need} GiB ({format_value(round(top.headroom_gib, 2))} GiB headroom)."
        )
    if top is not None and top.slots_total is not None and top.board_power_w is not None:
        cards = top.cards_total
        lines.append(
            f"Fit: {cards} card{'s' if cards != 1 else ''} in the host "
            f"{'takes' if cards == 1 else 'take'} "
            f"{format_value(top.slots_total)} slot positions and "
            f"{format_value(top.board_power_w)} W of board power."
        )
    if top is not None and top.power_limit_w is not None:
        lines.append(
            f"Power limit: set each card to {format_value(top.power_limit_w)} W "
            f"(nvidia-smi -pl {format_value(top.power_limit_w)}); expect it about "
            f"{format_value(top.speed_cost_pct)}% slower."
        )
    if r.existing:
        held = "; ".join(
            f"{e.count} × {e.name}, {'kept' if e.kept else 'not kept'}" for e in r.existing
        )
        lines.append(f"In the host now ({r.action}): {held}.")
    if decision.enough is not None:
        lines.append(decision.enough.text)
    return tuple(lines)


def buy_text(decision: Decision) -> str:
    top = decision.picks[0] if decision.picks else None
    if top is None:
        return "nothing fits"
    if top.count == 0:
        return "nothing (keep the cards in the host)"
    return f"{top.count} × {top.name}"


# -- measured evidence ---------------------------------------------------------------

#: Series a report can chart, in panel order: (Sample field, label, unit).
SERIES_METRICS: tuple[tuple[str, str, str], ...] = (
    ("sm_clock_mhz", "SM clock", "MHz"),
    ("memory_clock_mhz", "Memory clock", "MHz"),
    ("temperature_c", "Temperature", "°C"),
    ("gpu_util_pct", "Utilisation", "%"),
    ("power_w", "Power", "W"),
)


class SeriesStats(NamedTuple):
    field: str
    label: str
    unit: str
    minimum: str
    mean: str
    maximum: str
    points: tuple[tuple[float, float], ...]
    """(seconds, value) for every sample that reported this metric."""


def series_stats(samples: Sequence[Sample]) -> tuple[SeriesStats, ...]:
    stats = []
    for field, label, unit in SERIES_METRICS:
        points = tuple((s.t_s, float(v)) for s in samples if (v := getattr(s, field)) is not None)
        if len(points) < 2:
            continue
        values = [v for _, v in points]
        stats.append(
            SeriesStats(
                field=field,
                label=label,
                unit=unit,
                minimum=format_value(round(min(values), 1)),
                # statistics.fmean's arithmetic, without importing statistics
                mean=format_value(round(math.fsum(values) / len(values), 1)),
                maximum=format_value(round(max(values), 1)),
                points=points,
            )
        )
    return tuple(stats)


class GpuView(NamedTuple):
    gpu: MeasuredGpu
    title: str
    series: tuple[SeriesStats, ...]
    duration: str


def gpu_view(gpu: MeasuredGpu) -> GpuView:
    parts = [f"GPU {gpu.index}" if gpu.index is not None else "GPU"]
    if gpu.name:
        parts[0] += ":"
        parts.append(gpu.name)
    if gpu.pci_bus_id:
        parts.append(f"({gpu.pci_bus_id})")
    times = [s.t_s for s in gpu.series]
    duration = format_value(round(max(times) - min(times), 1)) + " s" if times else ""
    return GpuView(gpu, " ".join(parts), series_stats(gpu.series), duration)


# -- the whole view ------------------------------------------------------------------


class ReportView(NamedTuple):
    d: Decision
    date: str | None
    top: Pick | None
    reasons: tuple[Finding, ...]
    """Preference and engine findings: why the recommendation is what it is."""
    requirements: tuple[Finding, ...]
    """Constraint findings: what every option had to meet."""
    excluded: tuple[Alternative, ...]
    """Kinds of purchase with no option left, and the rules that removed them."""
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    flips: tuple[str, ...]
    gpus: tuple[GpuView, ...]
    runbook: tuple[RunbookEntry, ...]
    chosen_option: str
    purchase: tuple[str, ...] = ()
    """Capacity, memory, fit, the cards in the host, the cheapest option (CONTRACT §6)."""
    buy: str = ""
    """What is bought, in a few words."""


def build_view(decision: Decision, runbook: Runbook, date: str | None) -> ReportView:
    from gpuadvisor.decision.words import describe_flip

    columns = comparison_columns(decision)
    r = decision.recommendation
    return ReportView(
        d=decision,
        date=date,
        top=decision.picks[0] if decision.picks else None,
        reasons=tuple(f for f in decision.findings if f.kind != "constraint"),
        requirements=tuple(f for f in decision.findings if f.kind == "constraint"),
        excluded=tuple(a for a in decision.alternatives if a.best is None),
        columns=columns,
        rows=comparison_rows(columns, decision.lifecycle_years)
        + fit_rows(columns, decision.vram_need_gib),
        flips=tuple(describe_flip(s) for s in decision.sensitivity),
        gpus=tuple(gpu_view(g) for g in decision.gpus),
        runbook=select_runbook(runbook, decision),
        chosen_option=option_label(r.shape, r.class_) if decision.picks else "nothing fits",
        purchase=purchase_lines(decision),
        buy=buy_text(decision),
    )
