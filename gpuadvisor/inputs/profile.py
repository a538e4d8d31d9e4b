"""The workload profile, ``gpuadvisor/profile/v1`` (CONTRACT §1).

Frozen pydantic models; unknown keys are errors. Field descriptions are the single
source of the explanations used by ``init``'s template, ``ask`` and the JSON Schema.
"""

from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.textio import load_document, locate_field, parse_document
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.inputs.workload_model import Model, either_schema, missing_error
from gpuadvisor.vocabulary import (
    Airflow,
    Chassis,
    DisplayMode,
    Experience,
    IoPattern,
    Need,
    Objective,
    Parallelism,
    VgpuEditionNeed,
    WorkloadKind,
)

PROFILE_SCHEMA: Final = "gpuadvisor/profile/v1"

#: A video stream's resolution as a profile states it: a frame size and a frame rate,
#: "1080p30" (``workload.decode_streams.resolution``).
RESOLUTION_PATTERN: Final = r"^(720p|1080p|1440p|2160p|4k)([1-9][0-9]?|1[01][0-9]|120)$"


class _Section(BaseModel):
    """Strict types, as in the catalog: in a profile ``true`` is not 1 GiB and ``"yes"``
    is not a boolean; a value of the wrong type is an error naming the field, never a
    silent conversion. (Whole numbers are accepted where decimals are.)"""

    # protected_namespaces: ``model_parallel_ready`` is a contract name (CONTRACT §1);
    # pydantic before 2.10 would warn about its ``model_`` prefix on every run.
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        validate_default=True,
        strict=True,
        protected_namespaces=(),
    )


class Meta(_Section):
    title: str = Field("", max_length=200, description="Echoed in the report, never interpreted.")
    requester: str = Field("", max_length=200, description="Who asks; echoed in the report.")
    notes: str = Field("", max_length=4000, description="Free text, echoed in the report.")


class DecodeStreams(_Section):
    """Video streams the cards decode at once (CONTRACT §7), against their NVDEC engines."""

    count: int = Field(ge=1, le=100_000, description="Streams decoded at the same time.")
    codec: Literal["h264", "hevc", "av1"] = Field(description="How the streams are encoded.")
    resolution: str = Field(
        pattern=RESOLUTION_PATTERN,
        description="Frame size and frame rate of one stream, such as 1080p30 or 4k30 "
        "(720p, 1080p, 1440p, 2160p or 4k, then frames per second).",
    )


class Workload(_Section):
    model_config = ConfigDict(json_schema_extra=either_schema("vram_need_gib", "model"))

    kind: WorkloadKind = Field(description="What the GPUs will mostly do.")
    objective: Objective = Field(
        description="What success means: fast single answers (latency), many results per "
        "hour (throughput), results that must be right (correctness), or easy operation "
        "of many identical hosts (fleet-simplicity)."
    )
    latency_slo_ms: float | None = Field(
        None, gt=0, le=3_600_000, description="p99 target in milliseconds, for objective = latency."
    )
    interactive: bool = Field(False, description="People wait on each result.")
    vram_need_gib: float | None = Field(
        # 0.01 GiB (10 MiB) is the smallest need that means anything; below it, cards
        # per job divide by almost nothing (5e-324 GiB made the packing count infinite).
        # Required unless [workload.model] is given (then it is derived, see Model); a
        # profile that gives both keeps this stated figure and the report shows both.
        ge=0.01,
        le=4096,
        description="Peak GPU memory of ONE job or model instance, in GiB. May be left out "
        "when [workload.model] describes the model (it is then derived).",
    )
    concurrent_jobs: int = Field(
        1, ge=1, le=1024, description="Independent jobs wanted at the same time."
    )
    parallelism: Parallelism = Field(
        "none", description="What the software does across GPUs today."
    )
    model_parallel_ready: bool = Field(
        False, description="The team can build and operate tensor / pipeline parallelism."
    )
    sync_heavy: bool = Field(
        False,
        description="Frequent collectives: small per-GPU batches, many small tensors.",
    )
    job_hours: float = Field(2.0, gt=0, le=100_000, description="Typical length of one job, hours.")
    frame_pacing_critical: bool = Field(
        False, description="Interactive graphics where frame-time consistency matters."
    )
    io_pattern: IoPattern = Field("local-nvme", description="Where the input data is read from.")
    small_files: bool = Field(False, description="The dataset is many small files.")
    # CONTRACT §6: one job over several cards.
    gpus_per_job: int = Field(
        1,
        ge=1,
        le=16,
        description="Cards ONE job spans today or is meant to span (data- or model-parallel).",
    )
    sharded_data_parallel: bool = Field(
        False,
        description="The data-parallel job shards parameters, gradients and optimizer state "
        "over its cards (FSDP, ZeRO-3), so a card holds its share instead of a full replica.",
    )
    model: Model | None = Field(
        None,
        description="The model one job runs; vram_need_gib is derived from it when not stated.",
    )

    @model_validator(mode="before")
    @classmethod
    def _need_from_model(cls, data: Any) -> Any:
        # With [workload.model] the memory need may be left out: it is derived. Without
        # it, vram_need_gib stays a required key (a missing one is named as such).
        if isinstance(data, dict) and "vram_need_gib" not in data and data.get("model") is not None:
            return {**data, "vram_need_gib": None}
        return data

    @model_validator(mode="after")
    def _need_or_model(self) -> "Workload":
        if self.vram_need_gib is None and self.model is None:
            raise missing_error("vram_need_gib", None)
        return self

    decode_streams: DecodeStreams | None = Field(
        None,
        description="Video streams decoded at once (video analytics): count, codec and "
        "resolution, counted against each card's NVDEC engines.",
    )
    needs_fp64: bool = Field(
        False,
        description="The solver computes in double precision (many CFD, FEA and chemistry "
        "codes); cards that run FP64 at 1/32 or 1/64 of FP32 are excluded.",
    )


class Requirements(_Section):
    ecc: Need = Field("no", description="Error-correcting GPU memory.")
    silent_corruption_unacceptable: bool = Field(
        False, description="A wrong result that nobody notices is worse than a crash."
    )
    certified_drivers: bool = Field(
        False, description="An ISV application is supported only on certified driver branches."
    )
    isv_apps: tuple[str, ...] = Field(
        (),
        max_length=50,
        strict=False,  # a TOML/JSON array is a list; its items are still checked as text
        description="Names of ISV applications; echoed in the report.",
    )
    display_sync: bool = Field(False, description="Frame Lock / Genlock / sync boards needed.")
    # CONTRACT §7: the displays the purchase drives, per host.
    displays: int = Field(
        0,
        ge=0,
        le=64,
        description="Displays (panels, monitors) each host's cards must drive at once; 0 "
        "= no display need beyond what the kind of work asks.",
    )
    display_mode: DisplayMode = Field(
        "any",
        description="What each display runs at: any (the card's plain outputs count), "
        "4k60 or 8k60 (the outputs its datasheet says drive 4K or 8K at 60 Hz at once).",
    )
    vgpu: bool = Field(False, description="vGPU / VDI / multi-tenant sharing of one card.")
    vgpu_edition: VgpuEditionNeed = Field(
        "none",
        description="NVIDIA vGPU edition needed: vpc (office desktops), vws (professional "
        "graphics, CAD), vcs (compute); none leaves it to the kind of work.",
    )
    lifecycle_years: float = Field(3, gt=0, le=20, description="Planned service life, years.")
    fleet_homogeneity: bool = Field(False, description="Identical cards across many hosts matters.")
    downtime_cost_per_hour_usd: float = Field(
        0.0, ge=0, le=1e9, description="What one hour of this system being down costs."
    )
    # CONTRACT §7: a software vendor's stated minimum card.
    min_card_memory_gb: float | None = Field(
        None,
        gt=0,
        le=4096,
        description="The smallest card a software vendor supports, in GB as vendors print "
        "it ('requires a 24 GB GPU'): checked against the card's label, not its usable "
        "memory. Not stated: no vendor minimum.",
    )

    @model_validator(mode="after")
    def _edition_needs_vgpu(self) -> "Requirements":
        if self.vgpu_edition != "none" and not self.vgpu:
            raise ValueError(
                f"vgpu_edition = {self.vgpu_edition!r} needs vgpu = true (a vGPU edition "
                "is a way of sharing a card)"
            )
        return self


class Platform(_Section):
    chassis: Chassis = Field("tower", description="The box the cards go into.")
    airflow: Airflow = Field(
        "open",
        description="open: roomy case with fans; front-to-back: server airflow; "
        "restricted: cramped or dusty.",
    )
    max_gpu_slot_width: int = Field(3, ge=1, le=5, description="Slots one card may occupy.")
    gpu_count_max: int = Field(2, ge=1, le=16, description="Cards the chassis can take.")
    psu_headroom_w: float = Field(800, ge=0, le=100_000, description="Power available for GPUs, W.")
    cpu_sockets: int = Field(1, ge=1, le=8, description="CPU sockets in the host.")
    pcie_gen: int = Field(4, ge=1, le=6, description="PCIe generation of the GPU slots.")
    nvlink_possible: bool = Field(False, description="The chassis can take an NVLink bridge.")
    # CONTRACT §6: physical fit as sums over the cards.
    gpu_slots_total: int = Field(
        0,
        ge=0,
        le=80,
        description="Expansion-slot positions the GPUs may occupy, summed over all cards. "
        "0 = the usual spacing: gpu_count_max x max_gpu_slot_width, but 2 per card "
        "(double-slot spacing, air between the cards) for 3 or more cards in a tower or "
        "workstation.",
    )
    circuit_w: float = Field(
        0,
        ge=0,
        le=100_000,
        description="The wall circuit's rating in W (a 15 A / 120 V circuit is 1800); "
        "0 = not stated.",
    )
    power_limit_ok: bool = Field(
        False,
        description="The owner accepts power-limiting the cards (nvidia-smi -pl) to fit the "
        "power supply, the circuit or the heat.",
    )
    # CONTRACT §7: seats and hosts, and the host's own power.
    hosts: int = Field(
        1,
        ge=1,
        le=1000,
        description="Identical hosts or workstations the purchase equips, each with its own "
        "cards (5 CAD seats: 5). The wanted jobs (workload.concurrent_jobs, over all hosts) "
        "are spread over them; every total, capacity and budget check counts all of them.",
    )
    psu_w: float = Field(
        0,
        ge=0,
        le=100_000,
        description="The power supply's rating in W, when that is what is known rather "
        "than the power left for GPUs: state it instead of psu_headroom_w, and the GPUs get "
        "it less the host's own draw (cpu_w and system_w). 0 = not stated.",
    )
    cpu_w: float | None = Field(
        None,
        ge=0,
        le=10_000,
        description="What the CPUs draw under load, W, all sockets together (for the "
        "circuit check and psu_w). Not stated: the policy's assumption per socket "
        "(rules/_policy.toml), named in the report.",
    )
    system_w: float | None = Field(
        None,
        ge=0,
        le=10_000,
        description="What the rest of the host draws beside the CPUs and GPUs (board, "
        "memory, drives, fans), W. Not stated: the policy's assumption.",
    )

    @model_validator(mode="after")
    def _one_power_figure(self) -> "Platform":
        if self.psu_w > 0 and "psu_headroom_w" in self.model_fields_set:
            raise ValueError(
                "state psu_w (the supply's rating) or psu_headroom_w (the power left for "
                "the GPUs), not both: with psu_w, the GPUs get it less cpu_w and system_w"
            )
        return self


class Team(_Section):
    multi_gpu_experience: Experience = Field(
        "none", description="Experience running and debugging multi-GPU jobs."
    )


class Budget(_Section):
    max_usd: float = Field(10_000.0, gt=0, le=1e9, description="For all cards bought, USD.")
    electricity_usd_per_kwh: float = Field(
        0.15, ge=0, le=10, description="Electricity price, USD per kWh."
    )


class Profile(_Section):
    """A whole workload profile."""

    schema_: Literal["gpuadvisor/profile/v1"] = Field(
        PROFILE_SCHEMA, alias="schema", description="Format version."
    )
    meta: Meta = Field(default_factory=Meta)
    workload: Workload
    requirements: Requirements = Field(default_factory=Requirements)
    platform: Platform = Field(default_factory=Platform)
    team: Team = Field(default_factory=Team)
    budget: Budget = Field(default_factory=Budget)

    model_config = ConfigDict(
        frozen=True, extra="forbid", allow_inf_nan=False, populate_by_name=True, strict=True
    )


#: Sections and their models, in the order the template and the questionnaire use.
SECTIONS: dict[str, type[_Section]] = {
    "meta": Meta,
    "workload": Workload,
    "requirements": Requirements,
    "platform": Platform,
    "team": Team,
    "budget": Budget,
}


def _known_names(loc: tuple[str | int, ...]) -> list[str]:
    """Field names valid at the parent of ``loc``."""
    if len(loc) == 1:
        return ["schema", *SECTIONS]
    section = SECTIONS.get(str(loc[0]))
    if section is not None and len(loc) == 3 and loc[:2] == ("workload", "model"):
        return list(Model.model_fields)
    return list(section.model_fields) if section else []


def _special(error: Any) -> tuple[str, str | None] | None:
    """The profile's own phrasing of a few errors (the rest: gpuadvisor.inputs.validation)."""
    loc = tuple(error["loc"])
    if error["type"] == "literal_error" and loc == ("schema",):
        return (
            f"unsupported schema {error['input']!r}",
            f"this gpuadvisor reads '{PROFILE_SCHEMA}'",
        )
    if error["type"] == "value_error" and loc == ("platform",) and "psu_w" in error["msg"]:
        return (
            str(error["ctx"]["error"]),
            "keep the one you know and delete the other line (a template or `ask` writes "
            "psu_headroom_w with its default)",
        )
    if error["type"] == "tuple_type":
        return 'Input should be a list of names, like ["Ansys Fluent"]', None
    if error["type"] == "missing" and loc == ("workload", "vram_need_gib"):
        return (
            "required field is missing",
            "state the peak memory of one job in GiB, or describe the model in "
            "[workload.model] and gpuadvisor derives it (see `gpuadvisor size`)",
        )
    if error["type"] == "missing" and loc == ("workload", "model", "params_b"):
        return (
            "required field is missing",
            "give the parameters in billions, a model of the table (name = ...; "
            "`gpuadvisor size --list-models`), or a local config.json (hf_config = ...)",
        )
    return None


def profile_from_data(data: dict[str, Any], *, name: str, text: str | None = None) -> Profile:
    """Validate parsed data; the first problem becomes an InputError with its location."""
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise input_error(
            exc, file=name, text=text, known_names=_known_names, special=_special
        ) from None
    _check_hosts(profile, name, text)
    return profile


def _check_hosts(profile: Profile, name: str, text: str | None) -> None:
    """The wanted jobs count over all hosts: fewer jobs than hosts means the jobs were
    counted per host, or the hosts are more than the need (a question, not a guess)."""
    hosts, jobs = profile.platform.hosts, profile.workload.concurrent_jobs
    if jobs >= hosts:
        return
    path = ("platform", "hosts")
    raise InputError(
        f"{hosts} hosts for {jobs} concurrent job{'s' if jobs != 1 else ''}: "
        "workload.concurrent_jobs counts the jobs, seats or users over all hosts",
        file=name,
        line=locate_field(text, path) if text is not None else None,
        field=".".join(path),
        hint=f"5 workstations with one seat each are hosts = 5 and concurrent_jobs = 5; "
        f"state concurrent_jobs = {hosts} or more, or fewer hosts",
    )


def load_profile(path: Path) -> Profile:
    data, text = load_document(path)
    return profile_from_data(data, name=str(path), text=text)


def parse_profile(text: str, name: str = "<profile>") -> Profile:
    return profile_from_data(parse_document(text, name), name=name, text=text)


def profile_to_data(profile: Profile) -> dict[str, Any]:
    """Plain data with the contract's key names (``schema``, not ``schema_``)."""
    return profile.model_dump(mode="json", by_alias=True)
