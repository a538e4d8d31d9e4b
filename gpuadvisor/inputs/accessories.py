"""Priced accessories a purchase may need beside its cards: frame-lock sync boards and
NVLink bridges (issue #30). One TOML file per accessory under ``catalog/accessories/``,
each value cited like a SKU's; an overlay folder's ``accessories/`` adds or replaces one
(a full entry) or changes its price or notes (``patch = true``), as SKU overlays do.

The model holds only what the catalog can source: which SKUs an accessory works with
(``fits``), how many cards one unit serves (``cards_per_unit``: the GPUs one sync board
synchronises, the cards one bridge links), the slot spacing a bridge spans, and a dated
price. What a decision does with them is the decision layer's.
"""

import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.cache import Document
from gpuadvisor.inputs.sku import (
    LintCode,
    check_cites,
    check_lint_reasons,
    check_price,
    check_sources,
    unpriced_is_quote_needed,
)
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.vocabulary import PriceKind

AccessoryKind = Literal["sync-board", "nvlink-bridge"]
#: The folder, inside a catalog folder, that holds one file per accessory.
ACCESSORY_FOLDER = "accessories"
#: Values an accessory decision turns on; each must cite one of the entry's sources.
ACCESSORY_CITED_FIELDS = ("fits", "cards_per_unit", "slot_spacing")
#: What a ``patch = true`` overlay entry may change.
ACCESSORY_PATCHABLE = frozenset(
    {"price_usd", "price_date", "price_kind", "price_source", "notes", "lint"}
)

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")


class Accessory(BaseModel):
    """One accessory as sold: a sync board or an NVLink bridge (strict, like ``Sku``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)

    id: str = Field(description="Stable identifier, lowercase with hyphens.")
    name: str = Field(min_length=3, max_length=120, description="As the vendor names it.")
    vendor: str = Field(min_length=1, max_length=40)
    kind: AccessoryKind
    fits: tuple[str, ...] = Field(
        min_length=1, strict=False, description="Catalog SKU ids a cited page says it works with."
    )
    cards_per_unit: int = Field(
        ge=1,
        le=8,
        description="Cards one unit serves: GPUs one sync board synchronises, cards one "
        "bridge links.",
    )
    slot_spacing: int | None = Field(
        None,
        ge=1,
        le=6,
        description="NVLink bridge: slot positions from one card's slot to the next card's "
        "(2: adjacent double-width cards). None for a sync board.",
    )
    price_usd: float | None = Field(None, gt=0, le=100_000)
    price_date: dt.date | None = Field(None, strict=False)
    price_kind: PriceKind = "street"
    price_source: str | None = Field(None, min_length=8)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)
    cite: dict[str, str] = Field(default_factory=dict)
    disputes: dict[str, str] = Field(default_factory=dict)
    notes: str = ""
    lint: dict[LintCode, str] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must be lowercase letters, digits and hyphens")
        return value

    @field_validator("sources")
    @classmethod
    def _check_sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_sources(value)

    @field_validator("lint")
    @classmethod
    def _check_lint(cls, value: dict[LintCode, str]) -> dict[LintCode, str]:
        return check_lint_reasons(value)

    @model_validator(mode="before")
    @classmethod
    def _unpriced_is_quote_needed(cls, data: Any) -> Any:
        return unpriced_is_quote_needed(data)

    @model_validator(mode="after")
    def _check_entry(self) -> "Accessory":
        check_cites(self, self.cite, self.sources)
        check_price(self.price_kind, self.price_usd, self.price_date, self.price_source)
        if self.kind == "nvlink-bridge" and self.slot_spacing is None:
            raise ValueError("an nvlink-bridge states its slot_spacing")
        if self.kind == "sync-board" and self.slot_spacing is not None:
            raise ValueError("slot_spacing is a bridge's; a sync-board has none")
        if len(set(self.fits)) != len(self.fits):
            raise ValueError("fits names a SKU more than once")
        return self

    @property
    def priced(self) -> bool:
        return self.price_usd is not None


def accessory_files(folder: Path) -> list[Path]:
    """The accessory files of a catalog (or overlay) folder; none when it has no folder."""
    sub = folder / ACCESSORY_FOLDER
    if not sub.is_dir():
        return []
    return sorted(p for p in sub.glob("*.toml") if not p.name.startswith("_"))


def _validate(data: dict[str, Any], path: Path, text: str, *, patch: bool = False) -> Accessory:
    try:
        item = Accessory.model_validate(data)
    except ValidationError as exc:
        raise input_error(
            exc, file=str(path), text=text, known_names=lambda loc: Accessory.model_fields
        ) from None
    if not patch and item.id != path.stem:
        raise InputError(
            f"id {item.id!r} differs from the file name; name the file {item.id}.toml",
            file=str(path),
            field="id",
        )
    return item


def load_accessories(
    folder: Path,
    by_id: dict[str, Accessory],
    origins: dict[str, tuple[Path, str]],
    *,
    read: Callable[[Path], Document] = load_document,
    overlay: bool = False,
) -> None:
    """Add (or, from an overlay, replace or patch) the accessories of ``folder``;
    ``origins`` keeps the file (path and text) each entry came from, for messages."""
    for path in accessory_files(folder):
        data, text = read(path)
        patch = data.get("patch", False)
        if not isinstance(patch, bool) or (patch and not overlay):
            raise InputError(
                "patch = true belongs in an overlay folder"
                if isinstance(patch, bool)
                else f"patch must be true or false, got {patch!r}",
                file=str(path),
                line=locate_field(text, ("patch",)),
                field="patch",
            )
        if not patch:
            item = _validate({k: v for k, v in data.items() if k != "patch"}, path, text)
            by_id[item.id] = item
            origins[item.id] = (path, text)
            continue
        item_id = data.get("id")
        if not isinstance(item_id, str) or item_id not in by_id:
            raise InputError(
                f"patch for unknown accessory id {item_id!r}",
                file=str(path),
                line=locate_field(text, ("id",)),
                field="id",
                hint=did_you_mean(str(item_id), by_id),
            )
        changes = {k: v for k, v in data.items() if k not in ("patch", "id")}
        for key in changes:
            if key not in ACCESSORY_PATCHABLE:
                raise InputError(
                    "an accessory patch may change only " + ", ".join(sorted(ACCESSORY_PATCHABLE)),
                    file=str(path),
                    line=locate_field(text, (key,)),
                    field=key,
                    hint="write a full entry (without patch = true) to replace the accessory",
                )
        merged = by_id[item_id].model_dump() | changes
        if "price_usd" in changes and "price_kind" not in changes:
            merged["price_kind"] = "negotiated"
        by_id[item_id] = _validate(merged, path, text, patch=True)


def check_fits(
    items: Mapping[str, Accessory], origins: Mapping[str, tuple[Path, str]], sku_ids: set[str]
) -> None:
    """Every SKU an accessory names is in the catalog (a typo would silently fit nothing)."""
    for item in items.values():
        for sku_id in item.fits:
            if sku_id not in sku_ids:
                path, text = origins[item.id]
                raise InputError(
                    f"fits names unknown SKU {sku_id!r}",
                    file=str(path),
                    line=locate_field(text, ("fits",)),
                    field="fits",
                    hint=did_you_mean(sku_id, sorted(sku_ids)),
                )
