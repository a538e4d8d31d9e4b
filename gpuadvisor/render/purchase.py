"""The purchase's part of the report view: the comparison table's columns and rows, the
capacity and physical fit of each compared purchase, and the purchase in lines (capacity,
memory, fit, the cards already in the host, the cheapest option that would do)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gpuadvisor.decision.model import Decision, Pick
from gpuadvisor.decision.words import frame_buffer_words, profile_words
from gpuadvisor.vocabulary import format_value

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


#: What a recommendation that buys nothing is called where a kind of purchase would be.
KEEP_LABEL = "buy nothing: keep the cards in the host"


def keeps(pick: Pick) -> bool:
    """The option buys nothing: it keeps the cards already in the host."""
    return pick.count == 0 and pick.kept_count > 0


def chosen_label(decision: Decision) -> str:
    """The recommendation's kind in words: a shape and class, buying nothing, or that
    nothing fits (the header, the summary's key facts)."""
    r = decision.recommendation
    if not decision.picks:
        return "nothing fits"
    if keeps(decision.picks[0]):
        return KEEP_LABEL
    return pick_label(decision.picks[0], r.shape, r.class_)


def pick_label(pick: Pick, shape: str, class_: str, *, short: bool = False) -> str:
    """The kind of one pick: its own words where a need other than memory or jobs set
    its cards (``3 cards to drive 12 displays · professional``), else the shape's."""
    if pick.kind_words:
        return f"{pick.kind_words} · {class_}"
    return option_label(shape, class_, short=short)


def signoff_line(decision: Decision) -> str:
    """The recommendation in one line, as it is signed."""
    if not decision.picks:
        return "nothing fits"
    top = decision.picks[0]
    if keeps(top):
        return f"buy nothing, keep the {top.kept_count} × {top.kept_name} in the host, $0"
    total = top.total_price_usd
    price = "on quote" if total is None else f"${total:,.0f}"
    if total is not None and any(item.usd is None for item in top.line_items[1:]):
        price += " plus accessories on quote"
    return f"{chosen_label(decision)}: {top.count} × {top.name}, {price}"


class Column(NamedTuple):
    """One purchase in the comparison: a pick, or the best option of a rejected kind."""

    role: str
    option: str
    pick: Pick
    chosen: bool
    short_option: str = ""
    """The kind in the charts' short words (``model split · professional``)."""

    @property
    def card(self) -> str:
        pick = self.pick
        if pick.kept_count and not pick.count:
            return f"keep {pick.kept_count} × {pick.kept_name}"
        each = f" in each of {pick.hosts} hosts" if pick.hosts > 1 else ""
        if pick.kept_count:
            return f"{pick.count} × {pick.name} + {pick.kept_count} kept{each}"
        return f"{pick.count} × {pick.name}{each}"

    @property
    def job_memory_gib(self) -> float:
        return self.pick.vram_per_job_gib or self.pick.vram_gib


class Row(NamedTuple):
    label: str
    cells: tuple[str, ...]


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

    several = any(p.hosts > 1 for p in picks)
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
            "Cards in each host" if several else "Cards in the host",
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
    if several:
        rows.insert(4, Row("Hosts", tuple(format_value(p.hosts) for p in picks)))
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
        size = top.vgpu_profile_gib or top.usable_vram_gib
        one = "job" if r.capacity is not None and r.capacity.unit == "jobs" else "user"
        lines.append(
            f"Memory: {profile_words(size, top.usable_vram_gib, one)} for a need of "
            f"{format_value(decision.vram_need_gib)} GiB (vGPU profiles "
            f"divide {frame_buffer_words(top.vram_gib, top.gpus_per_board)})."
        )
    elif top is not None and top.usable_vram_gib is not None and top.headroom_gib is not None:
        need = format_value(decision.vram_need_gib)
        lines.append(
            f"Memory: {format_value(round(top.usable_vram_gib, 2))} GiB usable per job for a "
            f"need of {need} GiB ({format_value(round(top.headroom_gib, 2))} GiB headroom)."
        )
    if top is not None and (top.hosts > 1 or len(top.line_items) > 1):
        lines.append(f"Bought: {line_items_text(top)}.")
    if top is not None and top.slots_total is not None and top.board_power_w is not None:
        cards = top.cards_total
        where = "in each host" if top.hosts > 1 else "in the host"
        lines.append(
            f"Fit: {cards} card{'s' if cards != 1 else ''} {where} "
            f"{'takes' if cards == 1 else 'take'} "
            f"{format_value(top.slots_total)} slot position"
            f"{'' if top.slots_total == 1 else 's'} and "
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


def line_items_text(pick: Pick) -> str:
    """What is bought, item by item: ``5 × NVIDIA RTX A2000 12GB ($2,245)``."""
    return "; ".join(
        f"{item.count} × {item.name} ("
        + ("on quote" if item.usd is None else f"${item.usd:,.0f}")
        + ")"
        for item in pick.line_items
    )


def buy_text(decision: Decision) -> str:
    top = decision.picks[0] if decision.picks else None
    if top is None:
        return "nothing fits"
    if top.count == 0:
        return "nothing (keep the cards in the host)"
    if top.hosts > 1:
        return f"{top.count} × {top.name} in each of {top.hosts} hosts"
    return f"{top.count} × {top.name}"
