"""Two report sections' view data, built from the decision alone: the memory one job
needs (when the profile describes its model) and the values the evidence files disagree
on."""

from __future__ import annotations

from typing import NamedTuple

from gpuadvisor.decision.model import Decision
from gpuadvisor.vocabulary import format_value

# -- the memory one job needs ----------------------------------------------------------


class SizingRow(NamedTuple):
    label: str
    gib: str


class SizingView(NamedTuple):
    """The memory breakdown of a described model, as every format shows it."""

    model: str
    formula: str
    rows: tuple[SizingRow, ...]
    total: str
    stated: str | None
    """The stated vram_need_gib (which the decision used), beside the estimate."""
    assumptions: tuple[str, ...]


SIZING_LABELS: dict[str, str] = {
    "weights_gib": "Weights",
    "kv_cache_gib": "KV cache",
    "activations_gib": "Activations",
    "gradients_gib": "Gradients",
    "optimizer_gib": "Optimizer states",
    "overhead_gib": "Overhead (CUDA context, allocator)",
}


def sizing_view(decision: Decision) -> SizingView | None:
    """None when the profile stated its memory need without describing a model."""
    sizing = decision.sizing
    if not sizing.breakdown:
        return None
    rows = tuple(
        SizingRow(SIZING_LABELS.get(key, key), format_value(round(value, 2)))
        for key, value in sizing.breakdown.items()
        if value  # a term the job does not have (gradients when serving) is left out
    )
    estimate = sizing.estimate_gib if sizing.estimate_gib is not None else 0.0
    stated = (
        format_value(sizing.vram_need_gib)
        if sizing.source == "stated" and sizing.vram_need_gib is not None
        else None
    )
    return SizingView(
        model=sizing.model,
        formula=sizing.formula,
        rows=rows,
        total=format_value(round(estimate, 2)),
        stated=stated,
        assumptions=sizing.assumptions,
    )


# -- evidence conflicts --------------------------------------------------------------


class ConflictCell(NamedTuple):
    file: str
    value: str


class ConflictRow(NamedTuple):
    """One value the evidence files disagree on, with what each file said."""

    gpu: str
    """The GPU's bus id (or UUID, or index), or "host" for a host-wide value."""
    field: str
    values: tuple[ConflictCell, ...]


def conflict_rows(decision: Decision) -> tuple[ConflictRow, ...]:
    return tuple(
        ConflictRow(
            gpu=c.gpu or "host",
            field=c.field,
            values=tuple(ConflictCell(v.file, format_value(v.value)) for v in c.values),
        )
        for c in decision.evidence_conflicts
    )
