"""``catalog lint``: what loading tolerates but a maintained catalog must not have.

Failures (:func:`lint_catalog`) make ``catalog lint`` exit 2; warnings
(:func:`review_warnings`) are printed and do not. A warning a maintainer has reviewed
is acknowledged in the entry's ``[lint]`` table (code = why it stays) and printed as a
reviewed note with that reason; an unknown status is reviewed by the reason its
``disputes.status`` gives. An acknowledgement whose warning no longer fires fails lint
(like an unused ``noqa``), so a note can never outlive its reason. The limits below are
the documented ones (docs/extending.md, "A SKU"):

- a price older than :data:`PRICE_AGE_WARN_DAYS` is a warning: it may no longer be
  what the card sells for;
- a ``current`` SKU whose only price is a launch MSRP older than
  :data:`LAUNCH_MSRP_MAX_DAYS` fails: the launch price of a card on sale for two years
  says nothing about today's price (find a street or list price, or mark it
  ``quote-needed``);
- every SKU states its ``status`` with a source (or says in ``disputes.status`` why
  none was found), its ``vgpu_editions`` (``[]`` for none) and its ``fp64_tflops``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from gpuadvisor.inputs.accessories import ACCESSORY_CITED_FIELDS, Accessory
from gpuadvisor.inputs.catalog import CITED_FIELDS, Catalog, Sku

#: Optional SKU values that, where stated, cite their source like the decision fields.
OPTIONAL_CITED_FIELDS = ("nvenc", "nvdec", "av1_decode", "displays_4k60", "displays_8k60")

#: Days after which a price is reported as old (a warning).
PRICE_AGE_WARN_DAYS = 365
#: Days after which a current SKU's launch MSRP fails lint (two years).
LAUNCH_MSRP_MAX_DAYS = 730

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
        # A value no page states may stay only when weak_sources says so (it is then
        # named in the report's assumptions whenever it decides a pick).
        missing = [n for n in CITED_FIELDS if n not in sku.cite and n not in sku.weak_sources]
        if missing:
            problems.append(f"{sku.id}: no source cited for {', '.join(missing)}")
        price_urls = (sku.price_source,) if sku.price_source else ()
        for url in dict.fromkeys((*sku.sources, *price_urls)):
            domain = denied_domain(url)
            if domain:
                fields = sorted(k for k, v in sku.cite.items() if v == url)
                if url == sku.price_source:
                    fields.append("price_source")
                used = f" (cited for {', '.join(fields)})" if fields else ""
                problems.append(
                    f"{sku.id}: source on denylisted domain {domain}{used}: {CITE_DENYLIST[domain]}"
                )
        problems += _price_problems(sku, today)
        problems += _status_problems(sku, today)
        problems += _capability_problems(sku)
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
        if sku.vgpu_profiles_gib:
            if "vgpu_profiles_gib" not in sku.cite:
                problems.append(f"{sku.id}: vgpu_profiles_gib cites no vGPU types reference")
            sizes = sku.vgpu_profiles_gib
            if list(sizes) != sorted(set(sizes)) or sizes[-1] > sku.gpu_vram_gib + 1e-9:
                problems.append(
                    f"{sku.id}: vgpu_profiles_gib must rise, without repeats, to at most one "
                    f"GPU's {sku.gpu_vram_gib:g} GB"
                )
        if sku.fp16_tensor_tflops < sku.fp32_tflops * 0.5:
            problems.append(f"{sku.id}: fp16 tensor TFLOPS below half of FP32: check units")
        if sku.segment == "datacenter" and sku.cooling != "passive" and sku.display_outputs:
            problems.append(f"{sku.id}: data-center card with fans and display outputs: check")
    skus = {sku.id: sku for sku in catalog.skus}
    for item in catalog.accessories:
        problems += _accessory_problems(item, skus, today)
    problems += _stale_acknowledgements(catalog, today)
    return problems


def _video_problems(sku: Sku) -> list[str]:
    """Decode and display figures that contradict each other or the card's outputs."""
    problems: list[str] = []
    if sku.nvdec == 0 and sku.av1_decode:
        problems.append(f"{sku.id}: av1_decode = true on a card with no NVDEC engine")
    k4, k8 = sku.displays_4k60, sku.displays_8k60
    if k4 is not None and k8 is not None and k8 > k4:
        problems.append(f"{sku.id}: more displays at 8K 60 Hz ({k8}) than at 4K 60 Hz ({k4})")
    if sku.display_outputs == 0 and any(n for n in (k4, k8) if n is not None):
        problems.append(f"{sku.id}: displays_4k60/displays_8k60 on a card with no display outputs")
    return problems


def _accessory_problems(item: Accessory, skus: dict[str, Sku], today: dt.date) -> list[str]:
    problems: list[str] = []
    for name in ACCESSORY_CITED_FIELDS:
        if getattr(item, name) is not None and name not in item.cite:
            problems.append(f"{item.id}: no source cited for {name}")
    urls = (*item.sources, *((item.price_source,) if item.price_source else ()))
    for url in dict.fromkeys(urls):
        domain = denied_domain(url)
        if domain:
            problems.append(
                f"{item.id}: source on denylisted domain {domain}: {CITE_DENYLIST[domain]}"
            )
    if item.price_source is not None and item.price_source not in item.sources:
        problems.append(f"{item.id}: price_source is not listed in sources")
    if item.price_date is not None and item.price_date > today:
        problems.append(f"{item.id}: price_date {item.price_date} is in the future")
    needs, flag = (
        ("frame_lock", "frame lock") if item.kind == "sync-board" else ("nvlink", "NVLink")
    )
    for sku_id in item.fits:
        sku = skus.get(sku_id)
        if sku is not None and not getattr(sku, needs):
            problems.append(
                f"{item.id}: fits {sku_id}, which the catalog says has no {flag} ({needs} = false)"
            )
    return problems


def _price_problems(sku: Sku, today: dt.date) -> list[str]:
    problems: list[str] = []
    if sku.price_date is None or sku.price_source is None:
        return problems
    if not sku.price_source.startswith("https://"):
        problems.append(f"{sku.id}: price_source must be an https:// URL")
    elif sku.price_source not in sku.sources:
        problems.append(f"{sku.id}: price_source is not listed in sources")
    if sku.price_date > today:
        problems.append(f"{sku.id}: price_date {sku.price_date} is in the future")
    if sku.price_date.year < sku.launch_year:
        problems.append(
            f"{sku.id}: price_date {sku.price_date} is older than the launch year {sku.launch_year}"
        )
    age = (today - sku.price_date).days
    if sku.status == "current" and sku.price_kind == "launch-msrp" and age > LAUNCH_MSRP_MAX_DAYS:
        problems.append(
            f"{sku.id}: current SKU priced only by its launch MSRP of {sku.price_date} "
            f"({age} days old, over {LAUNCH_MSRP_MAX_DAYS}): find a dated street or list "
            "price, or mark it quote-needed"
        )
    return problems


def _status_problems(sku: Sku, today: dt.date) -> list[str]:
    if sku.status is None:
        if sku.disputes.get("status", "").strip():
            return []
        return [
            f"{sku.id}: no status: state status (current, discontinued, eol) with "
            "status_source, or say in disputes.status why no source was found"
        ]
    problems: list[str] = []
    if sku.status_source is None:
        problems.append(f"{sku.id}: status {sku.status!r} has no status_source")
    elif not sku.status_source.startswith("https://"):
        problems.append(f"{sku.id}: status_source must be an https:// URL")
    elif sku.status_source not in sku.sources:
        problems.append(f"{sku.id}: status_source is not listed in sources")
    if sku.status != "current" and sku.status_date is None:
        problems.append(f"{sku.id}: a {sku.status} SKU needs status_date (when production ended)")
    if sku.status_date is not None and sku.status_date[:7] > today.isoformat()[:7]:
        problems.append(f"{sku.id}: status_date {sku.status_date} is in the future")
    return problems


def _capability_problems(sku: Sku) -> list[str]:
    problems: list[str] = []
    editions = sku.vgpu_editions
    if editions is None:
        problems.append(f"{sku.id}: no vgpu_editions: list vpc, vws, vcs ([] for none)")
    else:
        stated = (*editions, *sku.vgpu_editions_unverified)
        if sku.vgpu and not stated:
            problems.append(f"{sku.id}: vgpu = true but no vGPU edition is listed")
        if not sku.vgpu and stated:
            problems.append(f"{sku.id}: vgpu = false but vGPU editions are listed")
        if editions and "vgpu_editions" not in sku.cite:
            problems.append(f"{sku.id}: no source cited for vgpu_editions")
        both = set(editions) & set(sku.vgpu_editions_unverified)
        if both:
            problems.append(
                f"{sku.id}: {', '.join(sorted(both))} listed as both verified and unverified"
            )
    if sku.fp64_tflops is None:
        problems.append(f"{sku.id}: no fp64_tflops (double-precision TFLOPS)")
    else:
        if "fp64_tflops" not in sku.cite:
            problems.append(f"{sku.id}: no source cited for fp64_tflops")
        if sku.fp64_tflops > sku.fp32_tflops * 1.01:
            problems.append(f"{sku.id}: fp64_tflops above fp32_tflops: check units")
    for name in OPTIONAL_CITED_FIELDS:
        if getattr(sku, name) is not None and name not in sku.cite:
            problems.append(f"{sku.id}: no source cited for {name}")
    problems += _video_problems(sku)
    for name in sku.weak_sources:
        if name not in Sku.model_fields:
            problems.append(f"{sku.id}: weak_sources names unknown field {name!r}")
    return problems


@dataclass(frozen=True)
class LintWarning:
    """One warning about a SKU or an accessory, with the reason it stays if reviewed."""

    item: str
    code: str
    text: str
    #: Why it stays, from the entry's ``[lint]`` table (or ``disputes.status``); None
    #: when nobody has reviewed it.
    reason: str | None = None

    @property
    def reviewed(self) -> bool:
        return self.reason is not None

    def __str__(self) -> str:
        return f"{self.item}: {self.text}"


def _price_age(item: Sku | Accessory, today: dt.date) -> Iterable[tuple[str, str]]:
    if item.price_date is not None:
        age = (today - item.price_date).days
        if age > PRICE_AGE_WARN_DAYS:
            yield (
                "price-age",
                f"{item.price_kind} price of {item.price_date} is {age} days old "
                f"(over {PRICE_AGE_WARN_DAYS})",
            )
    if item.price_kind == "reseller":
        yield "reseller-kind", "price_kind 'reseller' is read as a street price: write 'street'"


def _fired(item: Sku | Accessory, today: dt.date) -> list[tuple[str, str]]:
    """(code, text) of every warning ``item`` raises, reviewed or not."""
    fired = list(_price_age(item, today))
    if isinstance(item, Accessory):
        if not item.priced:
            fired.append(("unpriced", "no dated price: it is priced on quote"))
        return fired
    if item.status == "current" and item.status_date is None:
        fired.append(("current-undated", "status 'current' is undated"))
    if item.status is None:
        fired.append(("status-unknown", "status unknown"))
    return fired


def _entries(catalog: Catalog) -> list[Sku | Accessory]:
    return [*catalog.skus, *catalog.accessories]


def review_warnings(catalog: Catalog, *, today: dt.date | None = None) -> list[LintWarning]:
    """Every warning, each with the reason it stays where a maintainer gave one."""
    today = today or dt.date.today()
    found: list[LintWarning] = []
    for item in _entries(catalog):
        for code, text in _fired(item, today):
            if code == "status-unknown" and isinstance(item, Sku):
                reason: str | None = item.disputes.get("status", "").strip() or None
            else:
                reason = next((why for key, why in item.lint.items() if key == code), None)
            found.append(LintWarning(item.id, code, text, reason))
    return found


def _stale_acknowledgements(catalog: Catalog, today: dt.date) -> list[str]:
    problems: list[str] = []
    for item in _entries(catalog):
        fired = {code for code, _ in _fired(item, today)}
        for code in item.lint:
            if code not in fired:
                problems.append(
                    f"{item.id}: lint.{code} acknowledges a warning that no longer fires: remove it"
                )
    return problems


def lint_warnings(catalog: Catalog, *, today: dt.date | None = None) -> list[str]:
    """What a maintainer should look at and has not reviewed yet (no failure)."""
    return [str(w) for w in review_warnings(catalog, today=today) if not w.reviewed]
