"""The GPU SKU catalog (CONTRACT §5): model, loading, overlays, filtering, lint.

One TOML file per SKU. Every decision-relevant value cites a public URL in ``[cite]``.
Organisations overlay the bundled catalog with ``--catalog DIR``: a full entry adds a
SKU or replaces one with the same id; an entry with ``patch = true`` changes only the
fields it names (a negotiated price, ``approved = true``) of an existing SKU.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.cache import Document, bundled_documents
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import Cooling, PriceKind, Segment

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
    price_usd: float = Field(gt=0, le=1_000_000)
    price_date: dt.date = Field(strict=False)
    price_kind: PriceKind = "launch-msrp"
    price_source: str = Field(min_length=8)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)
    cite: dict[str, str] = Field(default_factory=dict)
    disputes: dict[str, str] = Field(default_factory=dict)
    lifecycle_note: str = ""
    approved: bool | None = Field(
        None, description="Set by an organisation overlay: on the approved-purchase list."
    )
    usable_vram_mib: float | None = Field(
        None,
        gt=0,
        le=1_048_576,
        description="Memory one process can allocate, MiB, as a real capture of this model "
        "shows it (nvidia-smi FB Memory Usage: Total minus Reserved) in the model's default "
        "ECC state; cite the capture.",
    )

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
    def _check_cites(self) -> Sku:
        for name, url in self.cite.items():
            if name not in type(self).model_fields:
                hint = did_you_mean(name, CITED_FIELDS)
                raise ValueError(
                    f"cite names unknown field {name!r}" + (f"; {hint}" if hint else "")
                )
            if url not in self.sources:
                raise ValueError(f"cite.{name} URL is not listed in sources")
        return self

    @property
    def label(self) -> str:
        return self.name


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

    def get(self, sku_id: str) -> Sku:
        for sku in self.skus:
            if sku.id == sku_id:
                return sku
        raise InputError(
            f"no SKU with id {sku_id!r} in the catalog",
            hint=did_you_mean(sku_id, [s.id for s in self.skus]),
        )

    @property
    def approved_list_active(self) -> bool:
        """An overlay marked some SKUs approved: only those may be picked."""
        return any(sku.approved for sku in self.skus)


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
            self.max_price_usd is None or sku.price_usd <= self.max_price_usd,
        )
        return all(checks)


def filter_skus(skus: Iterable[Sku], wanted: SkuFilter) -> list[Sku]:
    return [sku for sku in skus if wanted.accepts(sku)]


#: Domains a maintained catalog must not cite: spam blogs that republish spun or
#: machine-translated copies of hardware articles under unrelated URLs, reseller
#: "datasheet" mirrors that copy NVIDIA text without provenance, AI-generated
#: encyclopedias and web proxies that re-host other sites. A buyer's manager signs a
#: document citing these URLs, so a value that only such a page states has to be
#: re-sourced (or left with a note in ``disputes``). A domain matches itself and every
#: subdomain (``wccftech-com.nproxy.org`` matches ``nproxy.org``).
CITE_DENYLIST: dict[str, str] = {
    "relationship-nepal.org": "unrelated site re-hosting reseller spec sheets",
    "ecer.com": "B2B marketplace copying datasheets without provenance",
    "ferreiradozezere.net": "spam blog with machine-translated copies of news articles",
    "grokipedia.com": "AI-generated encyclopedia, not a primary or reviewed source",
    "aiwiki.ai": "AI-generated wiki, not a primary or reviewed source",
    "torrentinvites.org": "torrent forum re-posting news articles",
    "nproxy.org": "web proxy mirroring other sites",
    "gtool.pro": "web proxy mirroring other sites",
    "http3.lol": "web proxy mirroring other sites",
    "paperai.life": "web proxy mirroring other sites",
}

#: Plausible ranges for the unit-bearing fields (catches GB vs GiB, MB/s vs GB/s, kW).
PLAUSIBLE: dict[str, tuple[float, float]] = {
    "vram_gib": (1.0, 512.0),
    "memory_bandwidth_gbs": (50.0, 10_000.0),
    "tdp_w": (20.0, 1500.0),
}


def denied_domain(url: str) -> str | None:
    """The denylisted domain ``url`` belongs to, or None."""
    host = urlsplit(url).hostname or ""
    for domain in CITE_DENYLIST:
        if host == domain or host.endswith("." + domain):
            return domain
    return None


def lint_catalog(catalog: Catalog, *, today: dt.date | None = None) -> list[str]:
    """Problems that loading tolerates but a maintained catalog must not have."""
    problems: list[str] = []
    today = today or dt.date.today()
    seen_ids: set[str] = set()
    seen_names: dict[str, str] = {}
    for sku in catalog.skus:
        if sku.id in seen_ids:
            problems.append(f"{sku.id}: id used by more than one SKU")
        seen_ids.add(sku.id)
        other = seen_names.get(sku.name.casefold())
        if other is not None and other != sku.id:
            problems.append(f"{sku.id}: name {sku.name!r} also used by {other}")
        seen_names.setdefault(sku.name.casefold(), sku.id)
        missing = [name for name in CITED_FIELDS if name not in sku.cite]
        if missing:
            problems.append(f"{sku.id}: no source cited for {', '.join(missing)}")
        for url in dict.fromkeys((*sku.sources, sku.price_source)):
            domain = denied_domain(url)
            if domain:
                fields = sorted(k for k, v in sku.cite.items() if v == url)
                if url == sku.price_source:
                    fields.append("price_source")
                used = f" (cited for {', '.join(fields)})" if fields else ""
                problems.append(
                    f"{sku.id}: source on denylisted domain {domain}{used}: {CITE_DENYLIST[domain]}"
                )
        if not sku.price_source.startswith("https://"):
            problems.append(f"{sku.id}: price_source must be an https:// URL")
        elif sku.price_source not in sku.sources:
            problems.append(f"{sku.id}: price_source is not listed in sources")
        if sku.price_date > today:
            problems.append(f"{sku.id}: price_date {sku.price_date} is in the future")
        if sku.price_date.year < sku.launch_year:
            problems.append(
                f"{sku.id}: price_date {sku.price_date} is older than the launch year "
                f"{sku.launch_year}"
            )
        if sku.price_kind == "estimate" and not (
            sku.disputes.get("price_usd", "").strip() or sku.lifecycle_note.strip()
        ):
            problems.append(
                f"{sku.id}: an estimated price must say how it was estimated in "
                "disputes.price_usd or lifecycle_note (TOML comments are not kept)"
            )
        for name, (low, high) in PLAUSIBLE.items():
            value = getattr(sku, name)
            if not low <= value <= high:
                problems.append(
                    f"{sku.id}: {name} = {value:g} is outside the plausible {low:g}-{high:g}: "
                    "check units"
                )
        if sku.usable_vram_mib is not None:
            if "usable_vram_mib" not in sku.cite:
                problems.append(f"{sku.id}: usable_vram_mib cites no capture")
            label_mib = sku.vram_gib * 1024
            if not 0.85 * label_mib <= sku.usable_vram_mib <= label_mib:
                problems.append(
                    f"{sku.id}: usable_vram_mib = {sku.usable_vram_mib:g} is not within 85-100% "
                    f"of the {label_mib:g} MiB on the card: check units"
                )
        if sku.fp16_tensor_tflops < sku.fp32_tflops * 0.5:
            problems.append(f"{sku.id}: fp16 tensor TFLOPS below half of FP32: check units")
        if sku.segment == "datacenter" and sku.cooling != "passive" and sku.display_outputs:
            problems.append(f"{sku.id}: data-center card with fans and display outputs: check")
    return problems
