"""The GPU SKU catalog (CONTRACT §5 and §6): loading, overlays, filtering (the model:
:mod:`gpuadvisor.inputs.sku`; accessories: :mod:`gpuadvisor.inputs.accessories`; lint:
:mod:`gpuadvisor.inputs.catalog_lint`).

One TOML file per SKU. Every decision-relevant value cites a public URL in ``[cite]``.
Organisations overlay the bundled catalog with ``--catalog DIR``: a full entry adds a
SKU or replaces one with the same id; an entry with ``patch = true`` changes only the
fields it names (a negotiated price, ``approved = true``) of an existing SKU. Priced
accessories (sync boards, NVLink bridges) live in the folder's ``accessories/``.
"""

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.accessories import Accessory, check_fits, load_accessories
from gpuadvisor.inputs.cache import Document, bundled_documents
from gpuadvisor.inputs.certification import app_key
from gpuadvisor.inputs.price_floor import price_floors
from gpuadvisor.inputs.sku import CITED_FIELDS, LINT_CODES, Sku
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import Cooling, Segment, SkuStatus, VgpuEdition

__all__ = [
    "CITED_FIELDS",
    "LINT_CODES",
    "Accessory",
    "Catalog",
    "Sku",
    "SkuFilter",
    "filter_skus",
    "load_catalog",
]


class _Meta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: str
    date: dt.date
    description: str = ""


@dataclass(frozen=True)
class Catalog:
    skus: tuple[Sku, ...]
    version: str
    overlays: tuple[str, ...] = field(default=())
    #: Priced accessories (sync boards, NVLink bridges), by id order.
    accessories: tuple[Accessory, ...] = field(default=())
    #: Every application some SKU's certification list names, as :func:`app_key` matches
    #: names (worked out once: each decision looks the profile's applications up here).
    certified_app_keys: frozenset[str] = field(init=False, repr=False, compare=False)
    #: The largest memory of any SKU (under "") and of each segment's SKUs, in GiB.
    largest_vram_gib: Mapping[str, float] = field(init=False, repr=False, compare=False)
    #: An overlay marked some SKUs approved: only those may be picked.
    approved_list_active: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        floors = price_floors(self.skus)
        skus = tuple(_with_floor(sku, floors.get(sku.id, (None, ""))) for sku in self.skus)
        object.__setattr__(self, "skus", skus)
        keys = frozenset(app_key(c.app) for sku in self.skus for c in sku.certified_for)
        object.__setattr__(self, "certified_app_keys", keys)
        largest: dict[str, float] = {}
        for sku in self.skus:
            for group in ("", sku.segment):
                largest[group] = max(largest.get(group, 0.0), sku.vram_gib)
        object.__setattr__(self, "largest_vram_gib", largest)
        object.__setattr__(self, "approved_list_active", any(sku.approved for sku in self.skus))

    def get(self, sku_id: str) -> Sku:
        for sku in self.skus:
            if sku.id == sku_id:
                return sku
        raise InputError(
            f"no SKU with id {sku_id!r} in the catalog",
            hint=did_you_mean(sku_id, [s.id for s in self.skus]),
        )


def _with_floor(sku: Sku, floor: tuple[float | None, str]) -> Sku:
    if (sku.price_floor_usd, sku.price_floor_name) == floor:
        return sku
    return sku.model_copy(update={"price_floor_usd": floor[0], "price_floor_name": floor[1]})


def _validate(data: dict[str, Any], path: Path, text: str, *, patch: bool = False) -> Sku:
    try:
        sku = Sku.model_validate(data)
    except ValidationError as exc:
        raise input_error(
            exc, file=str(path), text=text, known_names=lambda loc: Sku.model_fields
        ) from None
    if not patch and sku.id != path.stem:
        raise InputError(
            f"id {sku.id!r} differs from the file name; name the file {sku.id}.toml",
            file=str(path),
            field="id",
        )
    return sku


def _entries(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise InputError("catalog folder not found", file=str(folder))
    return sorted(p for p in folder.glob("*.toml") if not p.name.startswith("_"))


def _meta(folder: Path, read: Callable[[Path], Document] = load_document) -> _Meta | None:
    path = folder / "_catalog.toml"
    if not path.is_file():
        return None
    data, _ = read(path)
    try:
        return _Meta.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            first["msg"], file=str(path), field=".".join(str(p) for p in first["loc"])
        ) from None


_PATCHABLE = {
    "price_usd",
    "price_date",
    "price_kind",
    "price_source",
    "approved",
    "lifecycle_note",
    "status",
    "status_date",
    "status_source",
    "certified_for",
}


def load_catalog(overlays: Sequence[Path] = (), base: Path | None = None) -> Catalog:
    """The bundled catalog (or ``base``) with each overlay folder applied in order."""
    folder = base or data_dir("catalog")
    # The bundled entries' parsed TOML is cached per user (validation still runs).
    documents = bundled_documents() if base is None else None
    read = documents.read if documents is not None else load_document
    by_id: dict[str, Sku] = {}
    for path in _entries(folder):
        data, text = read(path)
        sku = _validate(data, path, text)
        by_id[sku.id] = sku
    accessories: dict[str, Accessory] = {}
    origins: dict[str, tuple[Path, str]] = {}
    load_accessories(folder, accessories, origins, read=read)
    meta = _meta(folder, read)
    if documents is not None:
        documents.flush()
    version = f"{meta.version} ({meta.date.isoformat()})" if meta else "unversioned"
    names: list[str] = []
    for overlay in overlays:
        _apply_overlay(by_id, overlay)
        load_accessories(overlay, accessories, origins, overlay=True)
        overlay_meta = _meta(overlay)
        names.append(overlay_meta.version if overlay_meta else overlay.name)
    if not by_id:
        raise InputError("the catalog holds no SKU", file=str(folder))
    check_fits(accessories, origins, set(by_id))
    if names:
        version += " + " + " + ".join(names)
    skus = tuple(sorted(by_id.values(), key=lambda s: s.id))
    return Catalog(
        skus=skus,
        version=version,
        overlays=tuple(str(p) for p in overlays),
        accessories=tuple(accessories[k] for k in sorted(accessories)),
    )


def _apply_overlay(by_id: dict[str, Sku], folder: Path) -> None:
    for path in _entries(folder):
        data, text = load_document(path)
        patch = data.get("patch", False)
        if not isinstance(patch, bool):
            raise InputError(
                f"patch must be true or false, got {patch!r}",
                file=str(path),
                line=locate_field(text, ("patch",)),
                field="patch",
            )
        if patch:
            sku_id = data.get("id")
            if not isinstance(sku_id, str) or sku_id not in by_id:
                raise InputError(
                    f"patch for unknown SKU id {sku_id!r}",
                    file=str(path),
                    line=locate_field(text, ("id",)),
                    field="id",
                    hint=did_you_mean(str(sku_id), by_id),
                )
            changes = {k: v for k, v in data.items() if k not in ("patch", "id")}
            for key in changes:
                if key not in _PATCHABLE:
                    raise InputError(
                        "a patch may change only " + ", ".join(sorted(_PATCHABLE)),
                        file=str(path),
                        line=locate_field(text, (key,)),
                        field=key,
                        hint="write a full entry (without patch = true) to replace the SKU",
                    )
            merged = by_id[sku_id].model_dump() | changes
            if "certified_for" in changes:
                # An organisation's own ISV list adds to the published ones.
                merged["certified_for"] = [
                    *by_id[sku_id].model_dump()["certified_for"],
                    *_as_list(changes["certified_for"]),
                ]
            if "price_usd" in changes and "price_kind" not in changes:
                merged["price_kind"] = "negotiated"
            by_id[sku_id] = _validate(merged, path, text, patch=True)
        else:
            data = {k: v for k, v in data.items() if k != "patch"}
            sku = _validate(data, path, text)
            by_id[sku.id] = sku


@dataclass(frozen=True)
class SkuFilter:
    """What ``catalog list`` filters on; every part optional."""

    segment: Segment | None = None
    min_vram_gib: float | None = None
    ecc: bool | None = None
    frame_lock: bool | None = None
    vgpu: bool | None = None
    mig: bool | None = None
    cooling: Cooling | None = None
    max_slot_width: float | None = None
    max_tdp_w: float | None = None
    max_price_usd: float | None = None
    status: SkuStatus | None = None
    vgpu_edition: VgpuEdition | None = None

    def accepts(self, sku: Sku) -> bool:
        checks = (
            self.segment is None or sku.segment == self.segment,
            self.min_vram_gib is None or sku.vram_gib >= self.min_vram_gib,
            self.ecc is None or sku.ecc == self.ecc,
            self.frame_lock is None or sku.frame_lock == self.frame_lock,
            self.vgpu is None or sku.vgpu == self.vgpu,
            self.mig is None or sku.mig == self.mig,
            self.cooling is None or sku.cooling == self.cooling,
            self.max_slot_width is None or sku.slot_width <= self.max_slot_width,
            self.max_tdp_w is None or sku.tdp_w <= self.max_tdp_w,
            # An unpriced SKU is not known to be under a price cap: it is left out.
            self.max_price_usd is None
            or (sku.price_usd is not None and sku.price_usd <= self.max_price_usd),
            self.status is None or sku.status == self.status,
            self.vgpu_edition is None or self.vgpu_edition in (sku.vgpu_editions or ()),
        )
        return all(checks)


def filter_skus(skus: Iterable[Sku], wanted: SkuFilter) -> list[Sku]:
    return [sku for sku in skus if wanted.accepts(sku)]


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else [value]
