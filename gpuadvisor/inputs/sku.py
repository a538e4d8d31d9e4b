"""One GPU SKU as the catalog describes it (CONTRACT §5 and §6): the :class:`Sku` model,
the fields a decision turns on (:data:`CITED_FIELDS`), and the lint codes a SKU file may
acknowledge in its ``[lint]`` table (:data:`LINT_CODES`). Loading, overlays and filters
are in :mod:`gpuadvisor.inputs.catalog`; lint in :mod:`gpuadvisor.inputs.catalog_lint`.
"""

import datetime as dt
import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuadvisor.errors import did_you_mean
from gpuadvisor.inputs.certification import Certification
from gpuadvisor.vocabulary import Cooling, PriceKind, Segment, SkuStatus, VgpuEdition

#: Warnings of ``catalog lint`` that a maintainer may acknowledge, in a SKU's (or an
#: accessory's) ``[lint]`` table, with the reason it stays: ``catalog lint`` then prints
#: it as a reviewed note with that reason instead of a warning.
LintCode = Literal["price-age", "current-undated", "reseller-kind", "unpriced"]
LINT_CODES: tuple[LintCode, ...] = get_args(LintCode)
#: An acknowledgement says why in at least this many characters ("ok" is not a reason).
LINT_REASON_MIN_CHARS = 20


def check_lint_reasons(value: dict[LintCode, str]) -> dict[LintCode, str]:
    """Every acknowledged warning gives a reason a reviewer can check."""
    for code, reason in value.items():
        if len(reason.strip()) < LINT_REASON_MIN_CHARS:
            raise ValueError(
                f"lint.{code}: say why the warning stays (at least "
                f"{LINT_REASON_MIN_CHARS} characters)"
            )
    return value


def check_price(kind: str, usd: float | None, date: dt.date | None, source: str | None) -> None:
    """A quote-needed item has no price; any other kind needs a price, a date and a source."""
    if kind == "quote-needed":
        if usd is not None:
            raise ValueError("price_kind 'quote-needed' means no price: drop price_usd")
    elif usd is None or date is None or source is None:
        raise ValueError(
            f"a {kind} price needs price_usd, price_date and price_source "
            "(an item without a price is price_kind = 'quote-needed')"
        )


def unpriced_is_quote_needed(data: Any) -> Any:
    """An entry stated without a price is quote-needed, whatever its default kind."""
    if isinstance(data, dict) and data.get("price_usd") is None and "price_kind" not in data:
        return {**data, "price_kind": "quote-needed"}
    return data


def check_sources(value: tuple[str, ...]) -> tuple[str, ...]:
    for url in value:
        if not url.startswith("https://"):
            raise ValueError(f"source {url!r} must be an https:// URL")
    return value


def check_cites(model: BaseModel, cite: dict[str, str], sources: tuple[str, ...]) -> None:
    """Each ``cite`` key names a field of the model and each URL is one of its sources."""
    fields = type(model).model_fields
    for name, url in cite.items():
        if name not in fields:
            hint = did_you_mean(name, list(fields))
            raise ValueError(f"cite names unknown field {name!r}" + (f"; {hint}" if hint else ""))
        if url not in sources:
            raise ValueError(f"cite.{name} URL is not listed in sources")


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
    nvdec: int | None = Field(
        None,
        ge=0,
        le=32,
        description="Hardware video decoders (NVDEC engines) on the board; None where no "
        "cited page gives the count.",
    )
    av1_decode: bool | None = Field(
        None, description="NVDEC decodes AV1 (per architecture, NVIDIA's NVDEC application note)."
    )
    displays_4k60: int | None = Field(
        None,
        ge=0,
        le=16,
        description="Displays the card drives at once at 4K (4096 x 2160 or 3840 x 2160) "
        "60 Hz, per its datasheet; None where unknown.",
    )
    displays_8k60: int | None = Field(
        None,
        ge=0,
        le=16,
        description="Displays the card drives at once at 8K (7680 x 4320) 60 Hz; None "
        "where unknown.",
    )
    certified_for: tuple[Certification, ...] = Field(
        (), strict=False, description="ISV applications that list this card, with sources."
    )
    weak_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Field -> why its value rests on one weak source (named in reports).",
    )
    lint: dict[LintCode, str] = Field(
        default_factory=dict,
        description="catalog lint warnings a maintainer reviewed -> why each stays.",
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
        return check_sources(value)

    @field_validator("lint")
    @classmethod
    def _check_lint(cls, value: dict[LintCode, str]) -> dict[LintCode, str]:
        return check_lint_reasons(value)

    @model_validator(mode="after")
    def _check_cites(self) -> "Sku":
        check_cites(self, self.cite, self.sources)
        return self

    @model_validator(mode="before")
    @classmethod
    def _unpriced_is_quote_needed(cls, data: Any) -> Any:
        return unpriced_is_quote_needed(data)

    @model_validator(mode="after")
    def _check_price(self) -> "Sku":
        check_price(self.price_kind, self.price_usd, self.price_date, self.price_source)
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
