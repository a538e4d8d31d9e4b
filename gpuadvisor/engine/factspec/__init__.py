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

from collections.abc import Mapping
from types import MappingProxyType

from gpuadvisor.engine.expr import FactType
from gpuadvisor.engine.factspec._base import FactSpec, Scope, _model_facts
from gpuadvisor.engine.factspec._decode import DECODE_DERIVED_FACTS, DECODE_PROFILE_FACTS
from gpuadvisor.engine.factspec._host import EXISTING_GPU_FACTS, HOST_FACTS
from gpuadvisor.engine.factspec._option import OPTION_FACTS, SKU_DERIVED_FACTS, sku_fact_specs
from gpuadvisor.inputs.profile import SECTIONS

__all__ = [
    "ALL_FACTS",
    "CATALOG_FACTS",
    "DERIVED_FACTS",
    "EXISTING_GPU_FACTS",
    "FACTS_BY_NAME",
    "HOST_FACTS",
    "OPTION_FACTS",
    "SIZING_FACTS",
    "SKU_DERIVED_FACTS",
    "FactSpec",
    "Scope",
    "schema_for",
    "sku_fact_specs",
]

#: Facts the engine works out from the others with the policy file (rules/_policy.toml)
#: and the catalog; worked out again whenever a fact they come from changes.
DERIVED_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "workload.cards_set_by_need",
        "bool",
        "Every purchase's card count is set by a need other than memory or jobs: the "
        "displays (requirements.displays at requirements.display_mode) take more than one "
        "card per host even on the catalog's card with the most outputs, so each card "
        "drives its own panels.",
        source="catalog",
    ),
    FactSpec(
        "workload.jobs_per_host",
        "number",
        "The wanted jobs one host serves: workload.concurrent_jobs spread over "
        "platform.hosts (the jobs themselves with one host).",
        source="profile",
    ),
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
        "platform.host_draw_w",
        "number",
        "What the host draws beside the GPUs: cpu_w and system_w, or the policy's "
        "assumption for what is not stated.",
        "W",
        source="policy",
    ),
    FactSpec(
        "platform.gpu_power_available_w",
        "number",
        "Power the supply leaves for the GPUs: psu_headroom_w, or psu_w less the host's "
        "own draw when the rating is stated.",
        "W",
        source="policy",
    ),
    FactSpec(
        "platform.gpu_power_budget_w",
        "number",
        "Board power the GPUs may draw from the supply: the power it leaves for them "
        "(gpu_power_available_w) less the margin for transients.",
        "W",
        source="policy",
    ),
    FactSpec(
        "platform.slot_power_w",
        "number",
        "The most a card may draw from the x16 slot alone (PCIe CEM, 75 W): a card of at "
        "most this board power has no auxiliary power cable.",
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
    *DECODE_DERIVED_FACTS,
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
    FactSpec(
        "catalog.as_of_year",
        "number",
        "The year of the decision's date (SOURCE_DATE_EPOCH, else today): card ages are "
        "counted to it.",
        source="catalog",
    ),
)

#: What a language model's speed bounds depend on, card aside (``sizing.speed``), from
#: the model the profile describes; null for other work.
SIZING_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "workload.decode_gb_per_step",
        "number",
        "Bytes one decode step of the described model reads (active weights and every "
        "sequence's KV cache), in GB.",
        "GB",
        nullable=True,
        source="sizing",
    ),
    FactSpec(
        "workload.prefill_tflop",
        "number",
        "Compute to read one prompt as long as the whole context, in TFLOP.",
        "TFLOP",
        nullable=True,
        source="sizing",
    ),
    FactSpec(
        "workload.prefill_fp8",
        "bool",
        "The described model computes in FP8 (the FP8 tensor rate on cards that have it).",
        nullable=True,
        source="sizing",
    ),
)


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
    specs.extend(DECODE_PROFILE_FACTS)
    return specs


ALL_FACTS: tuple[FactSpec, ...] = (
    *_profile_facts(),
    *DERIVED_FACTS,
    *SIZING_FACTS,
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
