"""The decision, ``gpuadvisor/decision/v1`` (CONTRACT §4): what every report renders.

Field names of the contract are kept exactly; everything else is an extension.
"""

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuadvisor.vocabulary import Category, GpuClass, Severity, Shape, SizingSource

DECISION_SCHEMA: Final = "gpuadvisor/decision/v1"


class _Out(BaseModel):
    """Output models: validated when built (the engine's values are checked against the
    published schema on every decision), frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class FactValue(_Out):
    name: str
    value: float | int | bool | str | None
    unit: str = ""
    source: str = Field(description="'profile', 'catalog', or the evidence file(s).")


class Capacity(_Out):
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


class ExistingCards(_Out):
    """Cards the evidence shows in the host, grouped by model."""

    name: str
    count: int
    kept: bool = Field(description="The recommendation keeps these cards.")
    sku: str | None = Field(None, description="The catalog entry they were matched to.")


class Recommendation(_Out):
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
    existing: tuple[ExistingCards, ...] = Field(
        (), description="What the evidence shows in the host."
    )


class FixFirst(_Out):
    rule: str
    category: Category
    title: str
    evidence: str
    action: str
    rationale: str
    facts: tuple[FactValue, ...] = ()


class Finding(_Out):
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


class PickSpeed(_Out):
    """Bounds on how fast one instance of the language model runs on this purchase
    (decode by memory bandwidth, prefill by compute): what it cannot beat, not a forecast."""

    cards: int = Field(description="Cards one model instance spans.")
    sequences: int = Field(description="Sequences in flight on the instance.")
    prompt_tokens: int = Field(description="Prompt length the prefill bound is for.")
    decode_ms_per_token: float = Field(description="At least this long between two tokens.")
    decode_tokens_per_s: float = Field(description="At most this many tokens/s per sequence.")
    decode_tokens_per_s_total: float = Field(
        description="At most this many tokens/s over all sequences in flight."
    )
    prefill_s: float = Field(description="At least this long to read one full-length prompt.")
    answer_tokens_within_slo: int | None = Field(
        None,
        description="At most this many answer tokens fit in workload.latency_slo_ms after a "
        "full-length prompt (0: the prompt alone is slower); null without a target.",
    )


class LineItem(_Out):
    """One thing bought, over every host: the cards first; sync boards and bridges after."""

    name: str
    count: int = Field(ge=0, description="How many, over every host the purchase equips.")
    usd: float | None = Field(description="Their price together; null when on quote.")


class Pick(_Out):
    sku: str
    name: str
    count: int = Field(description="Cards bought for each host (see hosts).")
    jobs_served: int = Field(
        1, description="Concurrent jobs this purchase holds at once, over every host."
    )
    price_usd: float | None = Field(description="Per card; null when the price is on quote.")
    total_price_usd: float | None = Field(
        description="Every card bought, for every host; null when on quote."
    )
    # CONTRACT §7: seats and hosts
    hosts: int = Field(1, ge=1, description="Identical hosts the pick equips (platform.hosts).")
    hosts_words: str = Field(
        "",
        description="The purchase over its hosts, in words ('1 card in each of 5 "
        "workstations, 5 cards'); empty for one host.",
    )
    line_items: tuple[LineItem, ...] = Field(
        (),
        description="What is bought, over every host: the cards first, then sync boards "
        "and NVLink bridges where the pick needs them; empty when nothing is bought.",
    )
    energy_cost_usd: float = Field(description="Electricity over the service life, every host.")
    licence_cost_usd: float = Field(0.0, description="vGPU licences over the service life.")
    licence_edition: str | None = Field(
        None,
        description="The vGPU edition licence_cost_usd prices (vPC, vWS, vCS; None: no "
        "vGPU): vWS where Virtual PC was assumed and the card supports vWS, not vPC.",
    )
    lifecycle_cost_usd: float | None
    price_date: str | None
    price_kind: str
    why: str
    segment: str
    vram_gib: float
    gpus_per_board: int = Field(
        1,
        ge=1,
        description="GPUs on the card's board (the A16 carries four): vram_gib and "
        "memory_bandwidth_gbs are the board's, and a job sees one GPU's share.",
    )
    memory_bandwidth_gbs: float
    ecc: bool
    frame_lock: bool
    vgpu: bool
    cooling: str
    slot_width: float
    tdp_w: float
    vram_per_job_gib: float | None = Field(
        None,
        description="Memory one job can use on this option: one card's memory, or the "
        "usable total of a model-parallel group after sharding overhead.",
    )
    # CONTRACT §6
    usable_vram_gib: float | None = Field(
        None,
        description="What one job can allocate (reserved and ECC overhead taken off; its "
        "share of a shared card; pooled over a split model).",
    )
    headroom_gib: float | None = Field(None, description="usable_vram_gib minus the job's need.")
    slots_total: float | None = Field(
        None, description="Slot positions all cards of one host occupy (kept cards included)."
    )
    action: Literal["new", "add", "replace", "keep"] = "new"
    kept_count: int = Field(0, description="Cards already in the host this option keeps.")
    kept_name: str = Field("", description="Their model.")
    cards_total: int = Field(
        1, description="Cards the option runs on in each host: bought and kept."
    )
    jobs_wanted: int = Field(1, description="workload.concurrent_jobs.")
    board_power_w: float | None = Field(
        None, description="Board power of every card the option runs on in one host."
    )
    power_limit_w: float | None = Field(
        None, description="The per-card power limit to set (nvidia-smi -pl) so it fits."
    )
    speed_cost_pct: float | None = Field(
        None, description="Expected speed lost to that power limit, per cent."
    )
    vgpu_profile_gib: float | None = Field(
        None,
        description="The vGPU profile each job or desktop gets (memory_basis "
        "vgpu-profile); usable_vram_gib is what a process can allocate in it.",
    )
    memory_basis: Literal["usable", "vgpu-profile"] = Field(
        "usable",
        description="usable: what a process can allocate; vgpu-profile: a share of the "
        "board's frame buffer cut by the vGPU manager (VDI).",
    )
    speed: PickSpeed | None = Field(
        None, description="Decode and prefill bounds, for a language model being served."
    )
    # -- market and catalog reality (CONTRACT §6) ------------------------------------
    status: Literal["current", "discontinued", "eol", "unknown"] = Field(
        "unknown", description="Whether the card can still be bought new."
    )
    status_date: str | None = Field(None, description="When the status was stated (YYYY-MM).")
    price_age_days: int | None = Field(
        None, description="Days from the price's date to the decision's date."
    )
    vgpu_editions: tuple[str, ...] = Field((), description="vGPU editions: vpc, vws, vcs.")
    price_floor_usd: float | None = Field(
        None,
        description="Priced on quote, but it outclasses a priced card of its segment: the "
        "least it costs, per card (held to the budget).",
    )
    price_floor_name: str = Field("", description="The card price_floor_usd is the price of.")
    fp64_tflops: float | None = None


class Alternative(_Out):
    """The best option of a shape and class that was not chosen, or why none exists."""

    shape: Shape
    class_: GpuClass = Field(alias="class")
    score: int
    best: Pick | None
    eliminated_by: tuple[str, ...] = Field(
        (), description="Constraint rules that removed every option of this kind."
    )


class EnoughCard(_Out):
    """The cheapest option that meets every requirement and serves as many jobs as the
    recommendation, beside the ranked picks."""

    pick: Pick
    same_as_top: bool = Field(description="The recommendation is itself that option.")
    extra_usd: float | None = Field(
        description="What the recommendation costs more, purchase price; null when either "
        "price is on quote."
    )
    text: str = Field(description="The comparison in one sentence.")


class Rejected(_Out):
    option: str
    because: tuple[str, ...]
    reason: str


class Sensitivity(_Out):
    input: str
    current: float | int | bool | str | None
    flips_at: float | int | bool | str
    to: str
    direction: Literal["up", "down", "change"]


class Sample(_Out):
    """One measurement of one GPU at one moment; what the source did not report is null."""

    t_s: float = Field(description="Seconds since the GPU's first sample.")
    gpu_util_pct: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    power_w: float | None = None


class MeasuredGpu(_Out):
    """What the evidence says about one GPU: point values and, when sampled, a series."""

    index: int | None = None
    name: str = ""
    pci_bus_id: str | None = None
    values: tuple[FactValue, ...] = ()
    series: tuple[Sample, ...] = ()
    series_source: str = Field("", description="The evidence file the samples came from.")


class Sizing(_Out):
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


class EvidenceRef(_Out):
    file: str
    kind: str
    sha256: str


class Inputs(_Out):
    profile_sha256: str
    profile_file: str = ""
    evidence: tuple[EvidenceRef, ...] = ()


class Provenance(_Out):
    gpuadvisor: str
    catalog: str
    rules: str
    generated_at: str = Field(
        description="The report date, YYYY-MM-DD: from SOURCE_DATE_EPOCH when it is set, "
        "else the day the decision was made."
    )


class ConflictingValue(_Out):
    """What one evidence file said about a value other files report differently."""

    file: str
    value: str | float | int | bool


class EvidenceConflict(_Out):
    """Evidence files that disagree on one value (CONTRACT §6): the first file's value
    is used, or, when they disagree on which card sits at a bus id, both cards are kept."""

    gpu: str | None = Field(
        description="The GPU's bus id (else UUID or 'index N'); null for a host-wide value."
    )
    field: str = Field(description="The value's path inside the GPU (or the host/v1 file).")
    values: tuple[ConflictingValue, ...]


class Meta(_Out):
    title: str
    requester: str
    notes: str
    isv_apps: tuple[str, ...] = ()


class Decision(_Out):
    schema_: Literal["gpuadvisor/decision/v1"] = Field(DECISION_SCHEMA, alias="schema")
    meta: Meta
    recommendation: Recommendation
    fix_first: tuple[FixFirst, ...]
    findings: tuple[Finding, ...]
    picks: tuple[Pick, ...]
    rejected: tuple[Rejected, ...]
    alternatives: tuple[Alternative, ...]
    sensitivity: tuple[Sensitivity, ...]
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
