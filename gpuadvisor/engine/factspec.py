"""The facts namespace: every name a rule condition may read, with type and meaning.

- ``workload.*``, ``requirements.*``, ``platform.*``, ``team.*``, ``budget.*``: the
  profile's answers, generated from the profile model so they can never drift.
- ``host.*`` (whole host) and ``gpu.*`` (worst case over the host's GPUs): derived from
  evidence by :mod:`gpuadvisor.engine.hostfacts`; null when no evidence reports them.
- ``catalog.*``: what the catalog offers, independent of the option evaluated.
- ``option.*`` and ``sku.*``: the purchase under evaluation (constraint rules only).

``gpuadvisor rules facts`` prints this table; the README links to it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args, get_origin

from pydantic import BaseModel

from gpuadvisor.engine.expr import FactType
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.inputs.profile import SECTIONS
from gpuadvisor.vocabulary import SHAPES

Scope = Literal["global", "option"]


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: Literal["number", "bool", "string"]
    description: str
    unit: str = ""
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    scope: Scope = "global"
    source: str = ""

    def as_type(self) -> FactType:
        return FactType(self.type, self.choices)


def _annotation_type(annotation: object) -> tuple[str, tuple[str, ...] | None, bool] | None:
    """(type, choices, nullable) of a pydantic field annotation, None when unsupported."""
    nullable = False
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(get_args(annotation))
        if len(args) != 1:
            return None
        annotation = args[0]
        origin = get_origin(annotation)
    if origin is Literal:
        return "string", tuple(str(a) for a in get_args(annotation)), nullable
    if annotation is bool:
        return "bool", None, nullable
    if annotation in (int, float):
        return "number", None, nullable
    if annotation is str:
        return "string", None, nullable
    return None


def _model_facts(prefix: str, model: type[BaseModel], scope: Scope, source: str) -> list[FactSpec]:
    specs: list[FactSpec] = []
    for name, info in model.model_fields.items():
        described = _annotation_type(info.annotation)
        if described is None:
            continue
        kind, choices, nullable = described
        specs.append(
            FactSpec(
                name=f"{prefix}.{name}",
                type=kind,  # type: ignore[arg-type]
                description=info.description or name.replace("_", " "),
                choices=choices,
                nullable=nullable,
                scope=scope,
                source=source,
            )
        )
    return specs


def _n(name: str, description: str, unit: str = "", source: str = "evidence") -> FactSpec:
    return FactSpec(name, "number", description, unit=unit, nullable=True, source=source)


def _b(name: str, description: str, source: str = "evidence") -> FactSpec:
    return FactSpec(name, "bool", description, nullable=True, source=source)


def _basis(name: str, description: str) -> FactSpec:
    return FactSpec(
        name,
        "string",
        description,
        choices=("window", "snapshot"),
        nullable=True,
        source="evidence",
    )


#: Measured facts. The evidence layer fills what its sources report; the rest stay null.
HOST_FACTS: tuple[FactSpec, ...] = (
    FactSpec("host.evidence_present", "bool", "Any host evidence was attached.", source="evidence"),
    _n("host.gpu_count", "GPUs the evidence shows on the host."),
    _n("host.gpu_util_mean_pct", "Mean GPU utilisation over GPUs and samples.", "%"),
    _n(
        "host.util_samples",
        "Utilisation samples behind the means (fewest of any GPU; a snapshot counts as 1).",
    ),
    _n("host.gpu_util_max_pct", "Highest per-GPU mean utilisation.", "%"),
    _n("host.gpu_util_min_pct", "Lowest per-GPU mean utilisation.", "%"),
    _b("host.gpu_idle_beside_busy", "One GPU idles (<10%) while another is busy (>60%)."),
    _n("host.processes_max_per_gpu", "Most compute processes on one GPU."),
    _n("host.gpus_without_process", "GPUs with no compute process while others have some."),
    _n("host.memory_used_spread_pct", "Largest minus smallest memory use, % of capacity."),
    _n("host.iowait_pct", "CPU time waiting on I/O (mpstat / iostat average).", "%"),
    _n("host.cpu_util_mean_pct", "Mean busy CPU time over all cores.", "%"),
    _n("host.cpu_saturated_cores", "Cores at 95% busy or more."),
    _n("host.cpu_cores", "Logical CPUs."),
    _n("host.cpu_sockets", "CPU sockets reported by lscpu."),
    _n("host.numa_nodes", "NUMA nodes."),
    _b("host.numa_binding_remote", "A process is bound to a NUMA node other than its GPU's."),
    _n("host.disk_util_max_pct", "Busiest block device's %util (iostat -x).", "%"),
    _n(
        "host.disk_await_max_ms",
        "Highest average I/O wait per request (iostat r_await/w_await).",
        "ms",
    ),
    _n("host.net_util_max_pct", "Busiest network interface against its line rate.", "%"),
    _n("host.xid_count", "Xid events in the kernel log."),
    _n(
        "host.xid_hardware_count",
        "Xid events that point at hardware (79, 48, 94, 95, 63, 64, 74, 92, ...).",
    ),
    _n("host.xid_bus_count", "Xid 79: the GPU fell off the bus."),
    _n("host.xid_ecc_count", "Xid 48, 63, 64, 94, 95: memory errors and row remapping."),
    _n("host.xid_nvlink_count", "Xid 74: NVLink errors."),
    _n("host.xid_gsp_count", "Xid 119, 120: GSP firmware timeouts or errors."),
    _n("host.xid_driver_count", "Xid events that point at the driver or firmware."),
    _n("host.xid_application_count", "Xid 13, 31, 43, 45: usually the application's fault."),
    _n("host.gpu_lost_count", "GPUs lost (stopped answering NVML) during a live probe."),
    _n("host.aer_corrected_count", "PCIe AER corrected errors in the kernel log."),
    _n("host.aer_uncorrected_count", "PCIe AER uncorrected (fatal or non-fatal) errors."),
    FactSpec(
        "host.gpu_pair_worst_link",
        "string",
        "Worst GPU-to-GPU path in nvidia-smi topo -m terms.",
        choices=("NV", "PIX", "PXB", "PHB", "NODE", "SYS"),
        nullable=True,
        source="evidence",
    ),
    _b("host.p2p_ok", "Peer-to-peer works between every GPU pair (topo -p2p n: OK)."),
    _n("host.persistence_off_count", "GPUs with persistence mode disabled (Linux)."),
    _b("gpu.pcie_width_degraded", "A GPU's PCIe link runs narrower than its maximum."),
    _n("gpu.pcie_width_current_min", "Narrowest current PCIe link width.", "lanes"),
    _b(
        "gpu.pcie_gen_degraded_under_load",
        "A busy GPU's PCIe generation is below its maximum (idle GPUs are not judged).",
    ),
    _n(
        "gpu.thermal_limited_fraction",
        "Share of samples with thermal slowdown active (worst GPU).",
        "share",
    ),
    _n(
        "gpu.power_limited_fraction",
        "Share of samples with SW Power Cap or HW Power Brake active (worst GPU).",
        "share",
    ),
    _n("gpu.temp_margin_c", "Slowdown temperature minus the hottest reading (smallest).", "°C"),
    _n("gpu.sm_clock_ratio_busy", "SM clock / max SM clock while busy (lowest).", "ratio"),
    _n("gpu.power_draw_ratio", "Power draw / enforced limit (highest).", "ratio"),
    _n("gpu.memory_used_max_pct", "Fullest GPU's memory use.", "%"),
    _n("gpu.memory_total_max_gib", "Largest GPU memory present.", "GiB"),
    _b("gpu.ecc_enabled_all", "ECC is enabled on every GPU that supports it."),
    _b("gpu.ecc_supported_any", "At least one GPU supports ECC."),
    _n(
        "gpu.ecc_uncorrectable_total",
        "Uncorrectable (double-bit) ECC errors, volatile + aggregate.",
    ),
    _n("gpu.ecc_correctable_aggregate", "Aggregate correctable (single-bit) ECC errors."),
    _n("gpu.retired_pages_total", "Retired memory pages over all GPUs."),
    _b("gpu.retired_pages_pending", "A page retirement waits for a reset."),
    _b("gpu.remap_pending", "A row remap waits for a GPU reset."),
    _b("gpu.remap_failure", "Row remapping has failed on a GPU."),
    # What measured values rest on, and the judgements of issue #15 built on that.
    _basis(
        "host.gpu_util_basis", "What GPU utilisation rests on: a sampled window or one snapshot."
    ),
    _basis("host.cpu_util_basis", "What CPU busy and iowait rest on (mpstat / iostat: a window)."),
    _n("host.cpu_busy_min_pct", "The least busy CPU's busy time (mpstat -P ALL).", "%"),
    _basis("gpu.thermal_basis", "What gpu.thermal_limited_fraction rests on."),
    _n(
        "gpu.power_cap_fraction",
        "Share of readings at the GPU's own power cap (SW Power Cap; worst GPU).",
        "share",
    ),
    _basis("gpu.power_cap_basis", "What gpu.power_cap_fraction rests on."),
    _n(
        "gpu.power_cap_draw_ratio",
        "That GPU's power draw under load / its enforced limit.",
        "ratio",
    ),
    _n(
        "gpu.power_brake_fraction",
        "Share of readings with the external HW Power Brake on a busy GPU (worst).",
        "share",
    ),
    _basis("gpu.power_brake_basis", "What the HW Power Brake readings rest on."),
    _b("gpu.power_brake_idle", "The HW Power Brake is asserted on an idle GPU."),
    _n(
        "gpu.clock_held_fraction",
        "Share of readings in which a busy GPU reported a reason holding its clocks down.",
        "share",
    ),
    _n(
        "gpu.sm_clock_sustained_ratio",
        "Mean busy SM clock / the highest busy SM clock in the same window (lowest).",
        "ratio",
    ),
    _basis("gpu.clock_basis", "What the clock judgement rests on."),
)

#: The cards the evidence shows, as options that keep them need them
#: (:mod:`gpuadvisor.engine.hostfacts._existing`).
EXISTING_GPU_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "host.gpu_model",
        "string",
        "The product name every GPU in the evidence reports (null when they differ).",
        nullable=True,
        source="evidence",
    ),
    _n("host.gpu_models_distinct", "Different GPU product names in the evidence."),
    _n("host.gpu_memory_total_min_mib", "Smallest FB Memory Usage > Total of any GPU.", "MiB"),
    _n(
        "host.gpu_memory_reserved_max_mib",
        "Largest FB Memory Usage > Reserved of any GPU (driver reserve).",
        "MiB",
    ),
)
HOST_FACTS = (*HOST_FACTS, *EXISTING_GPU_FACTS)

#: Facts the engine works out from the others with the policy file (rules/_policy.toml)
#: and the catalog; worked out again whenever a fact they come from changes.
DERIVED_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "workload.vram_need_with_headroom_gib",
        "number",
        "Memory one job needs with the headroom it keeps (rules/_policy.toml).",
        "GiB",
        source="policy",
    ),
    FactSpec(
        "workload.shares_cards",
        "bool",
        "Jobs of this kind share a card side by side (VDI, inference, media, visualization).",
        source="policy",
    ),
    FactSpec(
        "platform.gpu_slots_available",
        "number",
        "Slot positions the GPUs may occupy: gpu_slots_total, or the usual spacing when 0.",
        "slots",
        source="policy",
    ),
    FactSpec(
        "platform.gpu_power_budget_w",
        "number",
        "Board power the GPUs may draw from the supply: psu_headroom_w less the margin "
        "for transients.",
        "W",
        source="policy",
    ),
    FactSpec(
        "platform.circuit_gpu_budget_w",
        "number",
        "Board power the GPUs may draw from the wall circuit (null when circuit_w is 0).",
        "W",
        nullable=True,
        source="policy",
    ),
    FactSpec(
        "host.gpu_catalog_sku",
        "string",
        "The catalog entry the host's GPUs are (null when not one model or not in the catalog).",
        nullable=True,
        source="catalog",
    ),
    FactSpec(
        "host.gpu_usable_gib",
        "number",
        "What one job can allocate on the host's smallest GPU (total less reserve).",
        "GiB",
        nullable=True,
        source="evidence",
    ),
)

CATALOG_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "catalog.max_vram_gib", "number", "Largest card in the catalog.", "GiB", source="catalog"
    ),
    FactSpec(
        "catalog.max_consumer_vram_gib", "number", "Largest consumer card.", "GiB", source="catalog"
    ),
    FactSpec(
        "catalog.max_professional_vram_gib",
        "number",
        "Largest professional card.",
        "GiB",
        source="catalog",
    ),
    FactSpec(
        "catalog.approved_list_active",
        "bool",
        "An overlay restricts picks to approved SKUs.",
        source="catalog",
    ),
)

OPTION_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "option.shape",
        "string",
        "Shape of the purchase under evaluation.",
        choices=SHAPES,
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.gpu_count",
        "number",
        "Cards the option runs on: those bought and those kept in the host.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.total_price_usd", "number", "Cards × price.", "USD", scope="option", source="option"
    ),
    FactSpec(
        "option.total_power_w",
        "number",
        "Board power of every card the option runs on (kept cards included).",
        "W",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.vram_per_job_gib",
        "number",
        "Usable memory one job can allocate: its share of one card, or the pooled memory "
        "of a split model (reserve, ECC and sharding overhead taken off).",
        "GiB",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.total_slots",
        "number",
        "Slot positions all cards occupy (kept cards included).",
        "slots",
        scope="option",
        source="option",
    ),
    FactSpec("option.new_gpu_count", "number", "Cards bought.", scope="option", source="option"),
    FactSpec(
        "option.kept_gpu_count",
        "number",
        "Cards already in the host that the option keeps.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.open_air_cards",
        "number",
        "Open-air cards in the host after the purchase (kept ones included).",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.jobs_served",
        "number",
        "Concurrent jobs (or users) the option serves at once.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.cards_per_job",
        "number",
        "Cards one job spans (1, or the cards of a split model or data-parallel job).",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.card_is_kept",
        "bool",
        "The card being judged is one already in the host, not one to buy.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.mixed_models",
        "bool",
        "The option runs on two card models (a new one beside the kept one).",
        scope="option",
        source="option",
    ),
)


#: SKU facts derived from catalog fields the expression language cannot read directly
#: (a list, a ratio), each with the field it comes from.
SKU_DERIVED_FACTS: tuple[tuple[FactSpec, str], ...] = (
    (
        FactSpec(
            "sku.vgpu_vpc",
            "bool",
            "NVIDIA Virtual PC (office desktops) runs on this card (a cited page says so).",
            nullable=True,
            scope="option",
            source="catalog",
        ),
        "vgpu_editions",
    ),
    (
        FactSpec(
            "sku.vgpu_vws",
            "bool",
            "RTX Virtual Workstation (professional graphics) runs on this card.",
            nullable=True,
            scope="option",
            source="catalog",
        ),
        "vgpu_editions",
    ),
    (
        FactSpec(
            "sku.vgpu_vcs",
            "bool",
            "Virtual Compute Server (compute VMs) runs on this card.",
            nullable=True,
            scope="option",
            source="catalog",
        ),
        "vgpu_editions",
    ),
    (
        FactSpec(
            "sku.fp64_ratio",
            "number",
            "FP64 rate as a share of FP32 (1/2 on A100/H100; 1/64 on GeForce and RTX).",
            unit="ratio",
            nullable=True,
            scope="option",
            source="catalog",
        ),
        "fp64_tflops",
    ),
    (
        FactSpec(
            "sku.certified_apps",
            "string",
            "ISV applications whose published hardware list names the card (a name list: "
            "test it with covers()).",
            scope="option",
            source="catalog",
        ),
        "certified_for",
    ),
)

#: Not facts: text, sources and dates only reports show.
_SKU_NOT_FACTS = (
    "sku.price_source",
    "sku.lifecycle_note",
    "sku.status_source",
    "sku.status_date",
    "sku.price_floor_name",
)


def sku_fact_specs() -> list[FactSpec]:
    specs = _model_facts("sku", Sku, "option", "catalog")
    return [s for s in specs if s.name not in _SKU_NOT_FACTS]


def _profile_facts() -> list[FactSpec]:
    specs: list[FactSpec] = []
    for section, model in SECTIONS.items():
        if section == "meta":
            continue
        specs.extend(_model_facts(section, model, "global", "profile"))
    specs.append(
        FactSpec(
            "requirements.isv_app_count",
            "number",
            "How many ISV applications the profile names.",
            source="profile",
        )
    )
    specs.append(
        FactSpec(
            "requirements.isv_known_apps",
            "string",
            "The named ISV applications whose hardware list the catalog holds (a name list: "
            "test it with covers()).",
            source="profile",
        )
    )
    specs.append(
        FactSpec(
            "requirements.isv_known_app_count",
            "number",
            "How many named ISV applications have a hardware list in the catalog.",
            source="profile",
        )
    )
    return specs


ALL_FACTS: tuple[FactSpec, ...] = (
    *_profile_facts(),
    *DERIVED_FACTS,
    *HOST_FACTS,
    *CATALOG_FACTS,
    *OPTION_FACTS,
    *sku_fact_specs(),
    *(spec for spec, _ in SKU_DERIVED_FACTS),
)
FACTS_BY_NAME: dict[str, FactSpec] = {spec.name: spec for spec in ALL_FACTS}


_SCHEMAS: dict[str, Mapping[str, FactType]] = {}


def schema_for(scope: Scope) -> Mapping[str, FactType]:
    """Fact types a condition of this scope may read (option scope sees everything).

    Built once per scope: every rule's conditions are checked against it at load.
    """
    schema = _SCHEMAS.get(scope)
    if schema is None:
        schema = _SCHEMAS[scope] = MappingProxyType(
            {
                spec.name: spec.as_type()
                for spec in ALL_FACTS
                if scope == "option" or spec.scope == "global"
            }
        )
    return schema
