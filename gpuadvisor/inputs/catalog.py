"""The GPU SKU catalog (CONTRACT §5 and §6): model, loading, overlays, filtering (lint:
:mod:`gpuadvisor.inputs.catalog_lint`).

One TOML file per SKU. Every decision-relevant value cites a public URL in ``[cite]``.
Organisations overlay the bundled catalog with ``--catalog DIR``: a full entry adds a
SKU or replaces one with the same id; an entry with ``patch = true`` changes only the
fields it names (a negotiated price, ``approved = true``) of an existing SKU.
"""

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.cache import Document, bundled_documents
from gpuadvisor.inputs.certification import Certification, app_key
from gpuadvisor.inputs.price_floor import price_floors
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import Cooling, PriceKind, Segment, SkuStatus, VgpuEdition

#: Values a buyer's decision turns on; each must cite one of the entry's sources.
CITED_FIELDS = (
    "vram_gib",
    "memory_bandwidth_gbs",
    "ecc",
    "tdp_w",
    "cooling",
    "slot_width",
    "pcie_gen",
    "nvlink",
    "frame_lock",
    "vgpu",
    "mig",
    "fp32_tflops",
    "fp16_tensor_tflops",
    "display_outputs",
)

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")


class Sku(BaseModel):
    """One GPU model as sold.

    Strict types: in catalog data "yes" is not a boolean and "24" is not a number; a
    sloppy value is an error, not a silent conversion. Dates may be TOML dates or ISO
    strings.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)

    id: str = Field(description="Stable identifier, lowercase with hyphens.")
    name: str = Field(min_length=3, max_length=120, description="As NVIDIA names it.")
    vendor: str = Field(min_length=1, max_length=40)
    segment: Segment
    architecture: str = Field(min_length=1, max_length=40)
    vram_gib: float = Field(gt=0, le=1024, description="Memory on the card, GiB.")
    memory_type: str = Field(min_length=1, max_length=20)
    memory_bandwidth_gbs: float = Field(gt=0, le=20_000, description="GB/s.")
    gpus_per_board: int = Field(
        1,
        ge=1,
        le=8,
        description="GPUs on one board (the A16 carries four). Memory and bandwidth are the "
        "board's; each GPU has its share, and one job sees one GPU.",
    )
    ecc: bool = Field(description="Memory ECC can be enabled on this model.")
    tdp_w: float = Field(gt=0, le=2000, description="Total board power, W.")
    cooling: Cooling
    slot_width: float = Field(ge=1, le=5, description="Slots the reference design occupies.")
    pcie_gen: int = Field(ge=1, le=6)
    pcie_lanes: int = Field(ge=1, le=32)
    nvlink: bool
    frame_lock: bool = Field(description="Frame Lock / Genlock through a sync board.")
    vgpu: bool = Field(description="Listed as supported by NVIDIA vGPU software.")
    mig: bool = Field(description="Multi-Instance GPU partitioning.")
    display_outputs: int = Field(ge=0, le=16)
    fp32_tflops: float = Field(gt=0, le=10_000)
    fp16_tensor_tflops: float = Field(gt=0, le=100_000, description="Dense, FP32 accumulate.")
    launch_year: int = Field(ge=2010, le=2100)
    # A SKU may have no price (CONTRACT §6): it is then a candidate marked quote-needed.
    price_usd: float | None = Field(None, gt=0, le=1_000_000)
    price_date: dt.date | None = Field(None, strict=False)
    price_kind: PriceKind = "launch-msrp"
    price_source: str | None = Field(None, min_length=8)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)
    cite: dict[str, str] = Field(default_factory=dict)
    disputes: dict[str, str] = Field(default_factory=dict)
    lifecycle_note: str = ""
    approved: bool | None = Field(
        None, description="Set by an organisation overlay: on the approved-purchase list."
    )
    # -- market and catalog reality (CONTRACT §6) ------------------------------------
    status: SkuStatus | None = Field(
        None, description="Whether the SKU can still be bought new: current, discontinued, eol."
    )
    status_date: str | None = Field(
        None,
        pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        description="When the status was stated (production end for discontinued), YYYY-MM.",
    )
    status_source: str | None = Field(None, min_length=8)
    vgpu_editions: tuple[VgpuEdition, ...] | None = Field(
        None,
        strict=False,
        description="NVIDIA vGPU editions a cited page supports: vpc, vws, vcs (empty: none).",
    )
    vgpu_editions_unverified: tuple[VgpuEdition, ...] = Field(
        (),
        strict=False,
        description="Editions believed supported but not confirmed on a citable page; "
        "shown, never used for a decision.",
    )
    fp64_tflops: float | None = Field(None, gt=0, le=10_000, description="FP64, TFLOPS.")
    nvenc: int | None = Field(None, ge=0, le=16, description="Hardware video encoders.")
    certified_for: tuple[Certification, ...] = Field(
        (), strict=False, description="ISV applications that list this card, with sources."
    )
    weak_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Field -> why its value rests on one weak source (named in reports).",
    )
    usable_vram_mib: float | None = Field(
        None,
        gt=0,
        le=1_048_576,
        description="Memory one process can allocate, MiB, as a real capture of this model "
        "shows it (nvidia-smi FB Memory Usage: Total minus Reserved) in the model's default "
        "ECC state; cite the capture.",
    )

    #: vGPU type sizes of one GPU, GB, from NVIDIA's types reference (empty: the policy's).
    vgpu_profiles_gib: tuple[float, ...] = Field((), strict=False)
    price_floor_usd: float | None = Field(
        None,
        description="Set on load for a card on quote: the dearest priced card of its segment "
        "and architecture that it outclasses (memory, bandwidth, FP32), which it costs at least.",
    )
    price_floor_name: str = Field("", description="The card that floor is the price of.")

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must be lowercase letters, digits and hyphens")
        return value

    @field_validator("sources")
    @classmethod
    def _check_sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for url in value:
            if not url.startswith("https://"):
                raise ValueError(f"source {url!r} must be an https:// URL")
        return value

    @model_validator(mode="after")
    def _check_cites(self) -> "Sku":
        for name, url in self.cite.items():
            if name not in type(self).model_fields:
                hint = did_you_mean(name, CITED_FIELDS)
                raise ValueError(
                    f"cite names unknown field {name!r}" + (f"; {hint}" if hint else "")
                )
            if url not in self.sources:
                raise ValueError(f"cite.{name} URL is not listed in sources")
        return self

    @model_validator(mode="before")
    @classmethod
    def _unpriced_is_quote_needed(cls, data: Any) -> Any:
        """A SKU stated without a price is quote-needed, whatever its default kind."""
        if isinstance(data, dict) and data.get("price_usd") is None and "price_kind" not in data:
            return {**data, "price_kind": "quote-needed"}
        return data

    @model_validator(mode="after")
    def _check_price(self) -> "Sku":
        if self.price_kind == "quote-needed":
            if self.price_usd is not None:
                raise ValueError("price_kind 'quote-needed' means no price: drop price_usd")
        elif self.price_usd is None or self.price_date is None or self.price_source is None:
            raise ValueError(
                f"a {self.price_kind} price needs price_usd, price_date and price_source "
                "(a SKU without a price is price_kind = 'quote-needed')"
            )
        return self

    @property
    def label(self) -> str:
        return self.name

    @property
    def priced(self) -> bool:
        return self.price_usd is not None

    @property
    def gpu_vram_gib(self) -> float:
        """The memory of one GPU of the board (all of it on a one-GPU card)."""
        return self.vram_gib / self.gpus_per_board

    @property
    def gpu_bandwidth_gbs(self) -> float:
        """The memory bandwidth one GPU of the board has (a job runs at its pace)."""
        return self.memory_bandwidth_gbs / self.gpus_per_board


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
    meta = _meta(folder, read)
    if documents is not None:
        documents.flush()
    version = f"{meta.version} ({meta.date.isoformat()})" if meta else "unversioned"
    names: list[str] = []
    for overlay in overlays:
        _apply_overlay(by_id, overlay)
        overlay_meta = _meta(overlay)
        names.append(overlay_meta.version if overlay_meta else overlay.name)
    if not by_id:
        raise InputError("the catalog holds no SKU", file=str(folder))
    if names:
        version += " + " + " + ".join(names)
    skus = tuple(sorted(by_id.values(), key=lambda s: s.id))
    return Catalog(skus=skus, version=version, overlays=tuple(str(p) for p in overlays))


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
