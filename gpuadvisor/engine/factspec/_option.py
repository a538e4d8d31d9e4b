"""Facts of the purchase under evaluation: ``option.*`` and ``sku.*``."""

from __future__ import annotations

from gpuadvisor.engine.factspec._base import FactSpec, _model_facts
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import SHAPES

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
        "Cards the option runs on in each host: those bought and those kept.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.total_price_usd",
        "number",
        "Cards × price, for every host the purchase equips (platform.hosts), plus the "
        "priced sync boards and NVLink bridges bought beside them.",
        "USD",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.accessories_on_quote",
        "bool",
        "A sync board or NVLink bridge the option needs is priced on quote: "
        "option.total_price_usd counts only the priced part.",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.total_power_w",
        "number",
        "Board power of every card the option runs on in one host (kept cards included).",
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
        "Slot positions all cards of one host occupy (kept cards included).",
        "slots",
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.new_gpu_count",
        "number",
        "Cards bought for each host.",
        scope="option",
        source="option",
    ),
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
        "Concurrent jobs (or users) the option serves at once, over every host.",
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
    FactSpec(
        "option.display_outputs",
        "number",
        "Display outputs of every card of one host (bought and kept).",
        "displays",
        nullable=True,
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.displays_4k60",
        "number",
        "Displays one host's cards drive at once at 4K 60 Hz (a card without a catalog "
        "figure counts its outputs: engine/displays.py).",
        "displays",
        nullable=True,
        scope="option",
        source="option",
    ),
    FactSpec(
        "option.displays_8k60",
        "number",
        "Displays one host's cards drive at once at 8K 60 Hz; unknown when a card's "
        "figure is not in the catalog.",
        "displays",
        nullable=True,
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
