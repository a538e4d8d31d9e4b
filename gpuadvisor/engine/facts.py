"""Profile + host evidence + catalog -> the flat, typed facts the rules read.

Facts are a plain ``dict`` from dotted name to value; :mod:`gpuadvisor.engine.factspec` says
what each name means. Host facts come from :mod:`gpuadvisor.engine.hostfacts` and are passed in
already derived, so this module stays free of any parsing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.factspec import HOST_FACTS, sku_fact_specs
from gpuadvisor.engine.namelist import name_list
from gpuadvisor.inputs.catalog import Catalog, Sku, app_key
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


def profile_facts(profile: Profile) -> dict[str, Value]:
    values: dict[str, Value] = {}
    for section in SECTIONS:
        if section == "meta":
            continue
        model = getattr(profile, section)
        for name in type(model).model_fields:
            value = getattr(model, name)
            if isinstance(value, (bool, int, float, str)) or value is None:
                values[f"{section}.{name}"] = value
    values["requirements.isv_app_count"] = len(profile.requirements.isv_apps)
    return values


def _catalog_apps(catalog: Catalog) -> set[str]:
    return {app_key(c.app) for sku in catalog.skus for c in sku.certified_for}


def isv_apps_known(apps: Iterable[str], catalog: Catalog) -> tuple[str, ...]:
    """The named applications (as named) whose hardware list the catalog holds."""
    held = _catalog_apps(catalog)
    return tuple(dict.fromkeys(a for a in apps if app_key(a) in held))


def isv_apps_unknown(apps: Iterable[str], catalog: Catalog) -> tuple[str, ...]:
    """The named applications the catalog holds no hardware list for."""
    held = _catalog_apps(catalog)
    return tuple(dict.fromkeys(a for a in apps if app_key(a) not in held))


def isv_facts(profile: Profile, catalog: Catalog) -> dict[str, Value]:
    """What the certification constraint reads: the named applications the catalog knows."""
    known = isv_apps_known(profile.requirements.isv_apps, catalog)
    return {
        "requirements.isv_known_apps": name_list(app_key(a) for a in known),
        "requirements.isv_known_app_count": len(known),
    }


def catalog_facts(catalog: Catalog) -> dict[str, Value]:
    def largest(segment: str | None) -> float:
        sizes = [s.vram_gib for s in catalog.skus if segment is None or s.segment == segment]
        return max(sizes, default=0.0)

    return {
        "catalog.max_vram_gib": largest(None),
        "catalog.max_consumer_vram_gib": largest("consumer"),
        "catalog.max_professional_vram_gib": largest("professional"),
        "catalog.approved_list_active": catalog.approved_list_active,
    }


def empty_host_facts() -> dict[str, Value]:
    values: dict[str, Value] = {spec.name: None for spec in HOST_FACTS}
    values["host.evidence_present"] = False
    return values


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


def build_facts(
    profile: Profile,
    catalog: Catalog,
    host_values: Mapping[str, Value] | None = None,
    host_sources: Mapping[str, tuple[str, ...]] | None = None,
    sizing: MemoryEstimate | None = None,
) -> FactSet:
    values: dict[str, Value] = {}
    sources: dict[str, str] = {}
    for name, value in profile_facts(profile).items():
        values[name] = value
        sources[name] = "profile"
    for name, value in catalog_facts(catalog).items():
        values[name] = value
        sources[name] = "catalog"
    for name, value in isv_facts(profile, catalog).items():
        values[name] = value
        sources[name] = "profile"
    host = empty_host_facts()
    if host_values is not None:
        unknown = set(host_values) - set(host)
        if unknown:
            raise ValueError(f"host facts not in the facts namespace: {sorted(unknown)}")
        host.update(host_values)
    values.update(host)
    for name, files in (host_sources or {}).items():
        sources[name] = ", ".join(files)
    estimate = _sizing_of(profile, sizing)
    if estimate is not None and profile.workload.vram_need_gib is None:
        values["workload.vram_need_gib"] = round(estimate.total_gib, 2)
        sources["workload.vram_need_gib"] = DERIVED_SOURCE
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
