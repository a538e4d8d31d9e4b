"""The decision, ``gpuadvisor/decision/v1`` (CONTRACT §4): what every report renders.

Field names of the contract are kept exactly; everything else is an extension.
"""

from typing import Final, Literal

from pydantic import Field

from gpuadvisor.decision.model_base import FactValue, OutModel
from gpuadvisor.decision.model_pick import LineItem, Pick, PickSpeed
from gpuadvisor.vocabulary import (
    Category,
    GpuClass,
    LeverKind,
    Severity,
    Shape,
    SizingSource,
)

DECISION_SCHEMA: Final = "gpuadvisor/decision/v1"

__all__ = ["DECISION_SCHEMA", "FactValue", "LineItem", "Pick", "PickSpeed"]


class Capacity(OutModel):
    """Jobs (or desktop users) wanted against those the recommended purchase serves."""

    jobs_wanted: int = Field(description="workload.concurrent_jobs, over every host.")
    jobs_served: int = Field(
        description="The whole purchase, every host and the kept cards included."
    )
    cards: int = Field(description="Cards serving them, in every host: bought and kept.")
    hosts: int = Field(1, description="Hosts the purchase equips (platform.hosts).")
    cards_per_host: int = Field(1, description="Cards in each of those hosts.")
    hosts_needed: int = Field(
        description="Hosts of the profile's platform that would serve every wanted job "
        "with this pick (the hosts the purchase equips when it does)."
    )
    shortfall: bool = Field(description="The purchase serves fewer jobs than wanted.")
    hosts_cards_usd: float | None = Field(
        None,
        description="On a shortfall: the cards of hosts_needed hosts like these, this "
        "purchase included (None: no shortfall, or priced on quote); compare with "
        "budget.max_usd, the budget for the whole need.",
    )
    whole_need_within_budget: bool | None = Field(
        None,
        description="On a shortfall: whether hosts_cards_usd is within budget.max_usd "
        "(None: no shortfall, or priced on quote).",
    )
    unit: str = Field("jobs", description="What is counted: jobs, or users for VDI.")
    summary: str = Field("", description="The capacity in one sentence.")


class ExistingCards(OutModel):
    """Cards the evidence shows in the host, grouped by model."""

    name: str
    count: int
    kept: bool = Field(description="The recommendation keeps these cards.")
    sku: str | None = Field(None, description="The catalog entry they were matched to.")


class Recommendation(OutModel):
    shape: Shape
    class_: GpuClass = Field(alias="class")
    gpu_count: int
    headline: str
    confidence: Literal["high", "medium", "low"]
    near_tie: str | None = Field(None, description="The runner-up when the margin is small.")
    ranking: str = Field(description="How picks of this shape and class were ordered.")
    # CONTRACT §6
    action: Literal["new", "add", "replace", "keep"] = Field(
        "new",
        description="new: no GPUs known on the host; add: keep the cards in the evidence "
        "and buy more; replace: the cards in the evidence go; keep: the cards in the "
        "evidence already meet the need, buy nothing.",
    )
    capacity: Capacity | None = Field(None, description="Null when nothing can be picked.")
    meets_target: bool | None = Field(
        None,
        description="Whether the recommended pick meets the stated latency target "
        "(CONTRACT §7; null: no target, or nothing to bound it with).",
    )
    existing: tuple[ExistingCards, ...] = Field(
        (), description="What the evidence shows in the host."
    )


class FixFirst(OutModel):
    rule: str
    category: Category
    title: str
    evidence: str
    action: str
    rationale: str
    facts: tuple[FactValue, ...] = ()


class Finding(OutModel):
    rule: str
    category: Category
    severity: Severity
    title: str
    evidence: str
    rationale: str
    action: str
    effect: str = Field(description="How the rule moved the decision, in words.")
    kind: Literal["preference", "constraint", "engine"] = Field(
        "preference",
        description="preference: moved shape/class scores; constraint: excluded options; "
        "engine: a conclusion of the decision procedure itself.",
    )
    facts: tuple[FactValue, ...] = ()


class Alternative(OutModel):
    """The best option of a shape and class that was not chosen, or why none exists."""

    shape: Shape
    class_: GpuClass = Field(alias="class")
    score: int
    best: Pick | None
    eliminated_by: tuple[str, ...] = Field(
        (), description="Constraint rules that removed every option of this kind."
    )


class EnoughCard(OutModel):
    """The cheapest option that meets every requirement and serves as many jobs as the
    recommendation, beside the ranked picks."""

    pick: Pick
    same_as_top: bool = Field(description="The recommendation is itself that option.")
    extra_usd: float | None = Field(
        description="What the recommendation costs more, purchase price; null when either "
        "price is on quote."
    )
    text: str = Field(description="The comparison in one sentence.")


class Rejected(OutModel):
    option: str
    because: tuple[str, ...]
    reason: str


class Sensitivity(OutModel):
    input: str
    current: float | int | bool | str | None
    flips_at: float | int | bool | str
    to: str
    direction: Literal["up", "down", "change"]


class Lever(OutModel):
    """One change a buyer can make that changes the answer (CONTRACT §7 ``levers``): in
    their words, with the card it brings and its price. ``inputs`` holds the same change
    in machine form, by profile field (``workload.model.*`` for the model described)."""

    change: str = Field(description="What the buyer would change, in their words.")
    pick: str = Field(description="The card and count it brings (cards kept in the host named).")
    total_usd: float | None = Field(
        description="What the cards it brings cost; null: on quote, or rented (see usd_per_hour)."
    )
    short: str = Field(
        "",
        description="When the purchase it brings still serves fewer jobs than wanted: how "
        "many it serves and what the cards for all of them cost; empty otherwise.",
    )
    kind: LeverKind
    inputs: dict[str, float | int | bool | str | None] = Field(
        default_factory=dict,
        description="The profile fields the change sets, and their values; empty for a "
        "change no field states (an 8-bit optimizer, renting).",
    )
    current: dict[str, float | int | bool | str | None] = Field(
        default_factory=dict, description="Those fields' values now."
    )
    sku: str | None = Field(None, description="The catalog entry of the card it brings.")
    count: int = Field(0, description="Cards it buys (rented, for kind rent).")
    vram_need_gib: float | None = Field(
        None, description="The memory one job needs then, when the change re-sizes the model."
    )
    usd_per_hour: float | None = Field(None, description="Rent: the rate of one GPU.")
    break_even_hours_per_month: float | None = Field(
        None, description="Rent: GPU hours a month on each card above which buying pays."
    )
    source: str | None = Field(None, description="Where a rate or an assumed server comes from.")


class Sample(OutModel):
    """One measurement of one GPU at one moment; what the source did not report is null."""

    t_s: float = Field(description="Seconds since the GPU's first sample.")
    gpu_util_pct: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    power_w: float | None = None


class MeasuredGpu(OutModel):
    """What the evidence says about one GPU: point values and, when sampled, a series."""

    index: int | None = None
    name: str = ""
    pci_bus_id: str | None = None
    values: tuple[FactValue, ...] = ()
    series: tuple[Sample, ...] = ()
    series_source: str = Field("", description="The evidence file the samples came from.")


class Sizing(OutModel):
    """The memory one job needs and where the figure comes from (CONTRACT §6)."""

    vram_need_gib: float | None = Field(description="The figure the decision used.")
    source: SizingSource = Field(
        description="stated: vram_need_gib from the profile; derived: estimated from "
        "[workload.model]."
    )
    breakdown: dict[str, float] = Field(
        description="weights_gib, kv_cache_gib, activations_gib, gradients_gib, "
        "optimizer_gib, overhead_gib; empty when the profile describes no model."
    )
    assumptions: tuple[str, ...] = ()
    estimate_gib: float | None = Field(
        None, description="The estimate from [workload.model] (shown beside a stated figure)."
    )
    model: str = Field("", description="The model described, in one line.")
    formula: str = Field("", description="The breakdown as one sum, for reports.")


class EvidenceRef(OutModel):
    file: str
    kind: str
    sha256: str


class Inputs(OutModel):
    profile_sha256: str
    profile_file: str = ""
    evidence: tuple[EvidenceRef, ...] = ()


class Provenance(OutModel):
    gpuadvisor: str
    catalog: str
    rules: str
    generated_at: str = Field(
        description="The report date, YYYY-MM-DD: from SOURCE_DATE_EPOCH when it is set, "
        "else the day the decision was made."
    )


class ConflictingValue(OutModel):
    """What one evidence file said about a value other files report differently."""

    file: str
    value: str | float | int | bool


class EvidenceConflict(OutModel):
    """Evidence files that disagree on one value (CONTRACT §6): the first file's value
    is used, or, when they disagree on which card sits at a bus id, both cards are kept."""

    gpu: str | None = Field(
        description="The GPU's bus id (else UUID or 'index N'); null for a host-wide value."
    )
    field: str = Field(description="The value's path inside the GPU (or the host/v1 file).")
    values: tuple[ConflictingValue, ...]


class Meta(OutModel):
    title: str
    requester: str
    notes: str
    isv_apps: tuple[str, ...] = ()


class Decision(OutModel):
    schema_: Literal["gpuadvisor/decision/v1"] = Field(DECISION_SCHEMA, alias="schema")
    meta: Meta
    recommendation: Recommendation
    fix_first: tuple[FixFirst, ...]
    findings: tuple[Finding, ...]
    picks: tuple[Pick, ...]
    rejected: tuple[Rejected, ...]
    alternatives: tuple[Alternative, ...]
    sensitivity: tuple[Sensitivity, ...]
    levers: tuple[Lever, ...] = Field(
        (),
        description="What would change the answer, in the buyer's terms, each with the card "
        "it brings and its price (CONTRACT §7); the inputs behind them are in sensitivity. "
        "Empty without the what-would-change scan.",
    )
    scores: dict[str, dict[str, int]]
    assumptions: tuple[str, ...]
    measured: tuple[FactValue, ...] = Field(
        (), description="Every host fact the evidence reported, with its source file."
    )
    gpus: tuple[MeasuredGpu, ...] = Field(
        (), description="Per-GPU measured values and time series, when the evidence has them."
    )
    vram_need_gib: float | None = Field(
        None, description="workload.vram_need_gib, the memory one job needs (for reports)."
    )
    lifecycle_years: float | None = Field(
        None, description="requirements.lifecycle_years, the span of lifecycle costs."
    )
    inputs: Inputs
    provenance: Provenance
    enough: EnoughCard | None = Field(
        None,
        description="The cheapest option that meets every requirement (CONTRACT §6 item "
        "'enough card'); null when nothing fits.",
    )
    evidence_conflicts: tuple[EvidenceConflict, ...] = Field(
        (),
        description="Values on which the evidence files disagree, each with every file's "
        "value; [] when they agree.",
    )
    sizing: Sizing = Field(description="The memory one job needs, and how it was arrived at.")

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2) + "\n"
