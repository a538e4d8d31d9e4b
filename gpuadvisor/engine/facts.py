"""Profile + host evidence + catalog -> the flat, typed facts the rules read.

Facts are a plain ``dict`` from dotted name to value; :mod:`gpuadvisor.engine.factspec` says
what each name means. Host facts come from :mod:`gpuadvisor.engine.hostfacts` and are passed in
already derived, so this module stays free of any parsing.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuadvisor.clock import report_date
from gpuadvisor.engine.capacity import MIB_PER_GIB, catalog_match, existing_usable_gib
from gpuadvisor.engine.decode import derived as decode_facts
from gpuadvisor.engine.displays import cards_set_by_need
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.factspec import HOST_FACTS, SIZING_FACTS, sku_fact_specs
from gpuadvisor.engine.namelist import name_list
from gpuadvisor.engine.policy import Policy, bundled_policy
from gpuadvisor.inputs.catalog import Catalog, Sku
from gpuadvisor.inputs.certification import app_key
from gpuadvisor.inputs.profile import SECTIONS, Profile

if TYPE_CHECKING:  # the estimator is imported only by profiles that describe a model
    from gpuadvisor.sizing.estimate import MemoryEstimate

SKU_FACT_FIELDS: tuple[str, ...] = tuple(spec.name.split(".", 1)[1] for spec in sku_fact_specs())


@dataclass(frozen=True)
class FactSet:
    """Facts and where each came from (``profile``, ``catalog`` or evidence file names)."""

    values: dict[str, Value]
    sources: dict[str, str] = field(default_factory=dict)
    sizing: MemoryEstimate | None = None
    """The memory estimate of the profile's [workload.model], when it describes one."""


#: Each section's fields with their fact names, in order.
_FIELDS = {
    section: tuple((name, f"{section}.{name}") for name in model.model_fields)
    for section, model in SECTIONS.items()
    if section != "meta"
}
_SCALARS = (bool, int, float, str, type(None))


def profile_facts(profile: Profile) -> dict[str, Value]:
    values: dict[str, Value] = {}
    for section, fields in _FIELDS.items():
        held = getattr(profile, section).__dict__  # a model's field values, by name
        for name, fact in fields:
            value = held[name]
            if isinstance(value, _SCALARS):
                values[fact] = value
    values["requirements.isv_app_count"] = len(profile.requirements.isv_apps)
    streams = profile.workload.decode_streams
    values["workload.decode_stream_count"] = None if streams is None else streams.count
    values["workload.decode_codec"] = None if streams is None else streams.codec
    values["workload.decode_resolution"] = None if streams is None else streams.resolution
    return values


def isv_apps_known(apps: Iterable[str], catalog: Catalog) -> tuple[str, ...]:
    """The named applications (as named) whose hardware list the catalog holds."""
    held = catalog.certified_app_keys
    return tuple(dict.fromkeys(a for a in apps if app_key(a) in held))


def isv_apps_unknown(apps: Iterable[str], catalog: Catalog) -> tuple[str, ...]:
    """The named applications the catalog holds no hardware list for."""
    held = catalog.certified_app_keys
    return tuple(dict.fromkeys(a for a in apps if app_key(a) not in held))


def isv_facts(profile: Profile, catalog: Catalog) -> dict[str, Value]:
    """What the certification constraint reads: the named applications the catalog knows."""
    known = isv_apps_known(profile.requirements.isv_apps, catalog)
    return {
        "requirements.isv_known_apps": name_list(app_key(a) for a in known),
        "requirements.isv_known_app_count": len(known),
    }


def catalog_facts(catalog: Catalog, as_of: dt.date | None = None) -> dict[str, Value]:
    largest = catalog.largest_vram_gib
    if as_of is None:
        as_of = dt.date.fromisoformat(report_date())
    return {
        "catalog.max_vram_gib": largest.get("", 0.0),
        "catalog.max_consumer_vram_gib": largest.get("consumer", 0.0),
        "catalog.max_professional_vram_gib": largest.get("professional", 0.0),
        "catalog.approved_list_active": catalog.approved_list_active,
        "catalog.as_of_year": as_of.year,
    }


def sizing_facts(estimate: MemoryEstimate | None) -> dict[str, Value]:
    """The card-independent part of the described model's speed bounds (null for work
    that is not language-model serving)."""
    inputs = None
    if estimate is not None:
        from gpuadvisor.sizing.speed import speed_inputs

        inputs = speed_inputs(estimate)
    if inputs is None:
        return dict.fromkeys(_SIZING_NAMES)
    return {
        "workload.decode_gb_per_step": inputs.bytes_per_step / 1e9,
        "workload.prefill_tflop": inputs.prefill_flops / 1e12,
        "workload.prefill_fp8": inputs.fp8,
    }


_SIZING_NAMES = tuple(spec.name for spec in SIZING_FACTS)


_EMPTY_HOST: dict[str, Value] = {spec.name: None for spec in HOST_FACTS}
_EMPTY_HOST["host.evidence_present"] = False


def empty_host_facts() -> dict[str, Value]:
    return dict(_EMPTY_HOST)


def _num(values: Mapping[str, Value], name: str) -> float:
    value = values[name]
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    return float(value)


def _stated(values: Mapping[str, Value], name: str) -> float | None:
    """A number the profile may leave unstated (None)."""
    value = values.get(name)
    return None if value is None else _num(values, name)


#: The facts :func:`derive_facts` reads; a change to any of them is worked out again.
DERIVED_READS = (
    "workload.kind",
    "workload.concurrent_jobs",
    "platform.hosts",
    "requirements.vgpu",
    "workload.vram_need_gib",
    "platform.gpu_slots_total",
    "platform.chassis",
    "platform.gpu_count_max",
    "platform.max_gpu_slot_width",
    "platform.psu_headroom_w",
    "platform.psu_w",
    "platform.cpu_w",
    "platform.system_w",
    "platform.cpu_sockets",
    "platform.circuit_w",
    "host.gpu_model",
    "host.gpu_memory_total_min_mib",
    "host.gpu_memory_reserved_max_mib",
    "gpu.ecc_enabled_all",
    "requirements.ecc",
    "requirements.silent_corruption_unacceptable",
    "workload.decode_stream_count",
    "workload.decode_codec",
    "workload.decode_resolution",
    "requirements.displays",
    "requirements.display_mode",
)


def derive_facts(values: Mapping[str, Value], policy: Policy, catalog: Catalog) -> dict[str, Value]:
    """The facts of :data:`factspec.DERIVED_FACTS` for these values (the numbers come from
    the policy file; the host's cards are matched to the catalog by product name)."""
    kind = str(values["workload.kind"])
    need = _num(values, "workload.vram_need_gib")
    stated_slots = _num(values, "platform.gpu_slots_total")
    slots = stated_slots or policy.default_slots(
        str(values["platform.chassis"]),
        int(_num(values, "platform.gpu_count_max")),
        int(_num(values, "platform.max_gpu_slot_width")),
    )
    host_w = policy.host_draw_w(
        _stated(values, "platform.cpu_w"),
        _stated(values, "platform.system_w"),
        int(_num(values, "platform.cpu_sockets")),
    )
    available = policy.gpu_power_available_w(
        _num(values, "platform.psu_headroom_w"), _num(values, "platform.psu_w"), host_w
    )
    circuit = policy.circuit_budget_w(_num(values, "platform.circuit_w"), host_w)
    model = values.get("host.gpu_model")
    sku = catalog_match(catalog, model if isinstance(model, str) else None)
    usable: float | None = None
    if sku is not None:
        usable = existing_usable_gib(values, sku, policy)
    else:
        total = values.get("host.gpu_memory_total_min_mib")
        if isinstance(total, (int, float)) and not isinstance(total, bool):
            reserved = values.get("host.gpu_memory_reserved_max_mib")
            if not isinstance(reserved, (int, float)) or isinstance(reserved, bool):
                reserved = policy.reserve_mib(float(total) / MIB_PER_GIB)
            usable = round((float(total) - float(reserved)) / MIB_PER_GIB, 3)
    hosts = values.get("platform.hosts", 1)
    per_host = math.ceil(_num(values, "workload.concurrent_jobs") / max(1, int(hosts or 1)))
    derived: dict[str, Value] = {
        "workload.jobs_per_host": max(1, per_host),
        "workload.vram_need_with_headroom_gib": round(need + policy.headroom_gib(kind, need), 4),
        "workload.shares_cards": policy.shares_cards(kind, values.get("requirements.vgpu") is True),
        "platform.gpu_slots_available": float(slots),
        "platform.host_draw_w": round(host_w, 3),
        "platform.gpu_power_available_w": round(available, 3),
        "platform.gpu_power_budget_w": round(policy.psu_budget_w(available), 3),
        "platform.slot_power_w": policy.power.slot_power_w,
        "platform.circuit_gpu_budget_w": None if circuit is None else round(circuit, 3),
        "host.gpu_catalog_sku": sku.id if sku is not None else None,
        "host.gpu_usable_gib": usable,
        **decode_facts(
            values,
            policy.decode,
            max(1, int(hosts or 1)),
            catalog.skus,
            _stated(values, "platform.max_gpu_slot_width"),
        ),
    }
    # More than one card per host set by a need other than memory or jobs: the displays
    # (engine.displays) or the video streams to decode (engine.decode).
    for_io = derived["workload.cards_needed_for_io"]
    derived["workload.cards_set_by_need"] = cards_set_by_need(catalog.skus, values) or (
        isinstance(for_io, int) and for_io >= 2
    )
    return derived


#: Where a derived ``workload.vram_need_gib`` comes from, as findings cite it.
DERIVED_SOURCE = "derived from workload.model"


def _sizing_of(profile: Profile, given: MemoryEstimate | None) -> MemoryEstimate | None:
    """The estimate of the profile's model: ``given`` (the pipeline read its hf_config),
    else computed here for a profile that names no file."""
    model = profile.workload.model
    if model is None or given is not None:
        return given
    if model.hf_config is not None:
        raise ValueError("a profile with hf_config needs its estimate (gpuadvisor.sizing)")
    from gpuadvisor.sizing.estimate import estimate_memory

    return estimate_memory(model)


def estimate_facts(estimate: MemoryEstimate) -> dict[str, Value]:
    """The facts a model's estimate sets when the profile does not state its memory
    need (the need, and its speed bounds' inputs: :func:`sizing_facts`): the one place
    they are made, so a lever that re-sizes the model (:mod:`gpuadvisor.engine.levers`)
    sets the same facts a profile would."""
    return {"workload.vram_need_gib": round(estimate.total_gib, 2), **sizing_facts(estimate)}


def build_facts(
    profile: Profile,
    catalog: Catalog,
    host_values: Mapping[str, Value] | None = None,
    host_sources: Mapping[str, tuple[str, ...]] | None = None,
    policy: Policy | None = None,
    sizing: MemoryEstimate | None = None,
    as_of: dt.date | None = None,
) -> FactSet:
    """The facts of a decision; ``as_of`` is its date (default: :func:`report_date`)."""
    values = profile_facts(profile)
    sources = dict.fromkeys(values, "profile")
    found = catalog_facts(catalog, as_of)
    values.update(found)
    sources.update(dict.fromkeys(found, "catalog"))
    found = isv_facts(profile, catalog)
    values.update(found)
    sources.update(dict.fromkeys(found, "profile"))
    host = empty_host_facts()
    if host_values is not None:
        host.update(host_values)
        if len(host) != len(_EMPTY_HOST):  # it holds every host fact: a name is not one
            unknown = set(host_values) - _EMPTY_HOST.keys()
            raise ValueError(f"host facts not in the facts namespace: {sorted(unknown)}")
    values.update(host)
    for name, files in (host_sources or {}).items():
        sources[name] = ", ".join(files)
    estimate = _sizing_of(profile, sizing)
    found = sizing_facts(estimate)
    values.update(found)
    sources.update(dict.fromkeys(found, DERIVED_SOURCE))
    if estimate is not None and profile.workload.vram_need_gib is None:
        if not estimate.complete:  # pipeline.size_profile refuses these with a message
            raise ValueError(f"the estimate lacks {', '.join(estimate.missing)}: no need to size")
        found = estimate_facts(estimate)
        values.update(found)
        sources.update(dict.fromkeys(found, DERIVED_SOURCE))
    # Derived after the estimate: the headroom reads the memory need it may have set.
    for name, value in derive_facts(values, policy or bundled_policy(), catalog).items():
        values[name] = value
        sources[name] = "rules/_policy.toml"
    sources["workload.jobs_per_host"] = "profile"  # the profile's jobs over its hosts
    sources["workload.decode_streams_per_host"] = "profile"  # its streams over its hosts
    sources["workload.decode_codec_name"] = "profile"
    sources["workload.cards_needed_for_io"] = "catalog"  # the catalog's decoders per card
    sources["workload.cards_set_by_need"] = "profile and catalog"  # displays or decoders
    if not values["platform.psu_w"]:  # the profile's own psu_headroom_w
        sources["platform.gpu_power_available_w"] = "profile"
    if values["host.gpu_catalog_sku"] is not None:
        sources["host.gpu_catalog_sku"] = "catalog"
    if values["host.gpu_usable_gib"] is not None:
        sources["host.gpu_usable_gib"] = sources.get("host.gpu_memory_total_min_mib", "evidence")
    return FactSet(values=values, sources=sources, sizing=estimate)


def sku_facts(sku: Sku) -> dict[str, Value]:
    values: dict[str, Value] = {f"sku.{name}": getattr(sku, name) for name in SKU_FACT_FIELDS}
    editions = sku.vgpu_editions
    for edition in ("vpc", "vws", "vcs"):
        values[f"sku.vgpu_{edition}"] = None if editions is None else edition in editions
    fp64 = sku.fp64_tflops
    values["sku.fp64_ratio"] = None if fp64 is None else fp64 / sku.fp32_tflops
    values["sku.certified_apps"] = name_list(app_key(c.app) for c in sku.certified_for)
    return values
