"""What a pick says about the market: can the card still be bought, what its price is
worth (kind and age), its vGPU editions and FP64 rate, and the assumptions a buyer has
to check (an ISV list the catalog does not hold, a deciding value from one weak source).

Phrasing only: the engine decided; this module words the catalog facts behind it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import isv_apps_known, isv_apps_unknown
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.rules import Rule
from gpuadvisor.inputs.catalog import Catalog, Sku
from gpuadvisor.vocabulary import format_value

#: Catalog fields each objective's ranking reads (see engine.options.RANKING).
RANKING_FIELDS: dict[str, tuple[str, ...]] = {
    "throughput": ("price_usd", "fp16_tensor_tflops", "fp32_tflops"),
    "latency": ("price_usd", "memory_bandwidth_gbs"),
}
#: Read by every ranking and by the memory check.
ALWAYS_DECIDING = ("price_usd", "vram_gib", "status")


def market_fields(sku: Sku, as_of: dt.date | None) -> dict[str, Any]:
    """The Pick fields of CONTRACT §6 for this SKU on the decision's date."""
    age = None
    if as_of is not None and sku.price_date is not None:
        age = max(0, (as_of - sku.price_date).days)
    return {
        "status": sku.status or "unknown",
        "status_date": sku.status_date,
        "price_age_days": age,
        "vgpu_editions": tuple(sku.vgpu_editions or ()),
        "fp64_tflops": sku.fp64_tflops,
        "price_floor_usd": sku.price_floor_usd,
        "price_floor_name": sku.price_floor_name,
        "price_date": sku.price_date.isoformat() if sku.price_date else None,
    }


def _deciding_fields(objective: str, active: Iterable[Rule]) -> tuple[str, ...]:
    fields = [*ALWAYS_DECIDING, *RANKING_FIELDS.get(objective, ())]
    for rule in active:  # require_local_names: the option.* and sku.* names it reads
        fields += [n[4:] for n in rule.require_local_names if n.startswith("sku.")]
    return tuple(dict.fromkeys(fields))


def market_assumptions(
    picks: Iterable[Option],
    active: Iterable[Rule],
    facts: Mapping[str, Value],
    apps: Iterable[str],
    catalog: Catalog,
) -> tuple[str, ...]:
    """Assumptions a buyer must check for this decision: ISV applications whose lists the
    catalog does not hold, and values of the shown picks that rest on one weak source
    while they decide the pick (read by its ranking or by an active constraint)."""
    out: list[str] = []
    certified = facts.get("requirements.certified_drivers") is True
    apps = tuple(apps)
    if certified and apps:  # no applications named: nothing to look up
        for app in isv_apps_unknown(apps, catalog):
            out.append(
                f"Check {app}'s certified list: the catalog holds no hardware list for it, so "
                "the picks are professional cards but not known to be on it."
            )
        known = isv_apps_known(apps, catalog)
        if known:
            out.append(
                "Picks are on the published hardware lists of "
                + ", ".join(known)
                + " (as held in the catalog, with their release); check the release you run."
            )
    skus = [option.sku for option in picks if option.sku.weak_sources]
    if not skus:  # every value of the shown picks rests on a strong source
        return tuple(out)
    deciding = _deciding_fields(str(facts.get("workload.objective")), active)
    seen: set[tuple[str, str]] = set()
    for sku in skus:
        weak = sku.weak_sources
        for field in deciding:
            alias = "vgpu_editions" if field.startswith("vgpu_") else field
            note = weak.get(field) or weak.get(alias)
            if note and (sku.id, alias) not in seen:
                seen.add((sku.id, alias))
                value = format_value(_plain(getattr(sku, alias, None)))
                out.append(f"{sku.name}: {alias} = {value} rests on one weak source: {note}")
    return tuple(out)


def _plain(value: object) -> float | int | bool | str | None:
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) or "none"
    if value is None or isinstance(value, (float, int, bool, str)):
        return value
    return str(value)
