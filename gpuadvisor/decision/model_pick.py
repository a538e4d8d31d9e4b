"""A pick of the decision document: one purchase option with its cards, line items, hosts,
prices, memory, fit, speed and market facts (:mod:`gpuadvisor.decision.model` publishes it)."""

from typing import Literal

from pydantic import Field

from gpuadvisor.decision.model_base import OutModel


class PickSpeed(OutModel):
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


class LineItem(OutModel):
    """One thing bought, over every host: the cards first; sync boards and bridges after."""

    name: str
    count: int = Field(ge=0, description="How many, over every host the purchase equips.")
    usd: float | None = Field(description="Their price together; null when on quote.")


class Pick(OutModel):
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
    kind_words: str = Field(
        "",
        description="What the pick is when a need other than memory or jobs sets its "
        "cards (such as '3 cards to drive 12 displays'); empty otherwise.",
    )
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
    meets_target: bool | None = Field(
        None,
        description="Whether the card's speed bound meets workload.latency_slo_ms (null: "
        "no target, or no described language model to bound); a pick that misses ranks "
        "after every one that meets it.",
    )
    launch_year: int | None = Field(None, description="The year the card was launched.")
    availability_risk: bool = Field(
        False,
        description="A card whose production status nobody could source and that "
        "launched long enough ago to be near its end, bought for a long service or a "
        "fleet (rules/_policy.toml [ranking]): ranked after current cards.",
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
