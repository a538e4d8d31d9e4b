"""What every format shows, computed once from a Decision.

Templates only display. Whatever needs a choice (which options go in the comparison,
which runbook items apply, how a value is written with its unit) is made here, the same
for Markdown, HTML and PDF, so the formats cannot drift apart.

The view's records are ``NamedTuple``: immutable values like frozen dataclasses, but
several times cheaper to define, which every ``advise`` run pays at import.
"""

import math
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from gpuadvisor.decision.model import Alternative, Decision, Finding, MeasuredGpu, Pick, Sample
from gpuadvisor.decision.words import bandwidth_words, memory_words
from gpuadvisor.errors import InputError
from gpuadvisor.render.provenance import (
    EvidenceFile,
    PriceUsed,
    Shortener,
    prices_used,
    shortener,
)
from gpuadvisor.render.purchase import (
    KEEP_LABEL,
    Column,
    Row,
    buy_text,
    chosen_label,
    fit_rows,
    keeps,
    option_label,
    pick_label,
    purchase_lines,
    signoff_line,
)
from gpuadvisor.render.sections import (
    ConflictRow,
    SizingView,
    conflict_rows,
    sizing_view,
)
from gpuadvisor.vocabulary import Category, GpuClass, Shape, format_value

#: Rejected alternatives shown beside the picks in the comparison table.
ALTERNATIVES_COMPARED = 3

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


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def comparison_columns(decision: Decision) -> tuple[Column, ...]:
    r = decision.recommendation
    chosen = option_label(r.shape, r.class_)
    short = option_label(r.shape, r.class_, short=True)
    if decision.picks and keeps(decision.picks[0]):
        chosen, short = KEEP_LABEL, f"keep · {r.class_}"
    columns = [
        Column(
            role=f"Pick #{rank}",
            option=pick_label(pick, r.shape, r.class_) if pick.kind_words else chosen,
            pick=pick,
            chosen=True,
            short_option=short,
        )
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
                short_option=option_label(alternative.shape, alternative.class_, short=True),
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
        row("Memory per card", (memory_words(p.vram_gib, p.gpus_per_board) for p in picks)),
        row("Bandwidth per card", (bandwidth_words(p) for p in picks)),
        *speed_rows(picks),
        row("ECC", (_yes(p.ecc) for p in picks)),
        row("Frame lock", (_yes(p.frame_lock) for p in picks)),
        row("vGPU", (_yes(p.vgpu) for p in picks)),
        row("Cooling", (p.cooling for p in picks)),
        row("Slots per card", (format_value(p.slot_width) for p in picks)),
        row("Board power, all cards", (f"{format_value(_board_power(p))} W" for p in picks)),
        row("Unit price", (unit_price(p) for p in picks)),
        row(
            "Total price",
            ("$0 (nothing bought)" if keeps(p) else _money(p.total_price_usd) for p in picks),
        ),
        row(f"Lifecycle cost{span}", (_money(p.lifecycle_cost_usd) for p in picks)),
        row("Availability", (availability(p) for p in picks)),
        row("vGPU editions", (", ".join(p.vgpu_editions) or "none" for p in picks)),
        row("FP64", (_tflops(p.fp64_tflops) for p in picks)),
    )


def _board_power(pick: Pick) -> float:
    """Board power of every card the option runs on, the host's kept ones included (a
    decision written before ``board_power_w`` existed: the cards bought)."""
    return pick.tdp_w * pick.count if pick.board_power_w is None else pick.board_power_w


def speed_rows(picks: Sequence[Pick]) -> tuple[Row, ...]:
    """Decode and prefill bounds, when the decision has them (a language model served)."""
    speeds = [p.speed for p in picks]
    if not any(speeds):
        return ()
    decode = (
        f"{format_value(round(s.decode_ms_per_token, 1))} ms/token" if s else "–" for s in speeds
    )
    prefill = (f"{format_value(round(s.prefill_s, 2))} s" if s else "–" for s in speeds)
    return (
        Row("Decode, at best", tuple(decode)),
        Row("Full-length prompt, at least", tuple(prefill)),
    )


# -- market: price kind and age, availability (CONTRACT §6) ---------------------------


def _money(value: float | None) -> str:
    return "on quote" if value is None else f"${value:,.0f}"


def _tflops(value: float | None) -> str:
    return "unknown" if value is None else f"{format_value(round(value, 2))} TFLOPS"


def unit_price(pick: Pick) -> str:
    """``$1,599 (launch-msrp, 2022-09-20, 1,533 days old)``, or ``on quote``; nothing
    for cards kept in the host and not bought."""
    if keeps(pick):
        return "– (kept, not bought)"
    if pick.price_usd is None:
        return "on quote (quote-needed)"
    age = f", {price_age(pick.price_age_days)}" if pick.price_age_days is not None else ""
    return f"${pick.price_usd:,.0f} ({pick.price_kind}, {pick.price_date}{age})"


def price_age(days: int) -> str:
    return "today" if days == 0 else f"{format_value(days)} day{'s' if days != 1 else ''} old"


def availability(pick: Pick) -> str:
    when = f" {pick.status_date}" if pick.status_date else ""
    return f"{pick.status}{when}"


class PickFlags(NamedTuple):
    """What a buyer must know about one pick's market before ordering it."""

    card: str
    flags: tuple[str, ...]


def market_flags(columns: Sequence[Column]) -> tuple[PickFlags, ...]:
    from gpuadvisor.decision.words import pick_flags

    out = []
    for column in columns:
        if column.chosen and (flags := pick_flags(column.pick)):
            out.append(PickFlags(f"{column.role}: {column.card}", flags))
    return tuple(out)


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
    """Sensitivity sentences, by field name: the report's appendix."""
    gpus: tuple[GpuView, ...]
    runbook: tuple[RunbookEntry, ...]
    chosen_option: str
    purchase: tuple[str, ...] = ()
    """Capacity, memory, fit, the cards in the host, the cheapest option (CONTRACT §6)."""
    buy: str = ""
    """What is bought, in a few words."""
    prices: tuple[PriceUsed, ...] = ()
    """The picks' unit prices, their kind, date and age at the report date."""
    evidence: tuple[EvidenceFile, ...] = ()
    """The evidence files with the names the tables use for them."""
    short: Shortener = Shortener({}, None)
    """``v.short(text)``: the text with evidence paths shortened to those names."""
    conflicts: tuple[ConflictRow, ...] = ()
    """Values the evidence files disagree on (the "Conflicting evidence" section)."""
    sizing: SizingView | None = None
    """The memory breakdown, when the profile describes its model."""
    market: tuple[PickFlags, ...] = ()
    """Per pick: availability, price kind and age, budget not checked (CONTRACT §6)."""
    top_cost: str = ""
    """The summary's sentence on what the first pick costs."""
    signoff: str = ""
    """The recommendation in one line, as the sign-off states it."""
    levers: tuple[str, ...] = ()
    """What would change the answer in the buyer's terms, with card and price."""


def build_view(decision: Decision, runbook: Runbook, date: str | None) -> ReportView:
    from gpuadvisor.decision.words import describe_flip, describe_lever, pick_cost_sentence

    columns = comparison_columns(decision)
    short = shortener(decision)
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
        chosen_option=chosen_label(decision),
        signoff=signoff_line(decision),
        purchase=purchase_lines(decision),
        buy=buy_text(decision),
        prices=prices_used(decision),
        evidence=tuple(EvidenceFile(short(e.file), e) for e in decision.inputs.evidence),
        short=short,
        conflicts=conflict_rows(decision),
        sizing=sizing_view(decision),
        market=market_flags(columns),
        top_cost=pick_cost_sentence(decision.picks[0]) if decision.picks else "",
        levers=tuple(describe_lever(lever) for lever in decision.levers),
    )
