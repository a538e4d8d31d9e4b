"""Pin the decision-critical facts of the GPU catalog (catalog/*.toml).

These tests read the TOML files directly so that a careless edit to a single entry
(flipping ECC, dropping a citation, writing ``24`` instead of ``24.0``) fails loudly.
When a fact changes on purpose, update the pinned set here in the same commit and say
why in the commit message, citing the source.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CATALOG = Path(__file__).resolve().parent.parent / "catalog"

# ---------------------------------------------------------------- pinned facts
EXPECTED_IDS = frozenset(
    {
        "a10",
        "a100-80gb-pcie",
        "a16",
        "a2",
        "a30",
        "a40",
        "geforce-rtx-3060",
        "geforce-rtx-3080",
        "geforce-rtx-3090",
        "geforce-rtx-3090-ti",
        "geforce-rtx-4060-ti-16gb",
        "geforce-rtx-4070",
        "geforce-rtx-4070-ti-super",
        "geforce-rtx-4080",
        "geforce-rtx-4080-super",
        "geforce-rtx-4090",
        "geforce-rtx-5050",
        "geforce-rtx-5060",
        "geforce-rtx-5060-ti-16gb",
        "geforce-rtx-5070",
        "geforce-rtx-5070-ti",
        "geforce-rtx-5080",
        "geforce-rtx-5090",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "l4",
        "l40",
        "l40s",
        "rtx-2000-ada",
        "rtx-4000-ada",
        "rtx-4000-sff-ada",
        "rtx-4500-ada",
        "rtx-5000-ada",
        "rtx-6000-ada",
        "rtx-a2000-12gb",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
        "rtx-pro-2000-blackwell",
        "rtx-pro-4000-blackwell",
        "rtx-pro-4000-blackwell-sff",
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-5000-blackwell-72gb",
        "rtx-pro-6000-blackwell-max-q",
        "rtx-pro-6000-blackwell-server",
        "rtx-pro-6000-blackwell-workstation",
    }
)

ECC_TRUE = frozenset(
    {
        "a10",
        "a100-80gb-pcie",
        "a16",
        "a2",
        "a30",
        "a40",
        "geforce-rtx-3090-ti",
        "geforce-rtx-4090",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "l4",
        "l40",
        "l40s",
        "rtx-2000-ada",
        "rtx-4000-ada",
        "rtx-4000-sff-ada",
        "rtx-4500-ada",
        "rtx-5000-ada",
        "rtx-6000-ada",
        "rtx-a2000-12gb",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
        "rtx-pro-2000-blackwell",
        "rtx-pro-4000-blackwell",
        "rtx-pro-4000-blackwell-sff",
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-5000-blackwell-72gb",
        "rtx-pro-6000-blackwell-max-q",
        "rtx-pro-6000-blackwell-server",
        "rtx-pro-6000-blackwell-workstation",
    }
)

FRAME_LOCK_TRUE = frozenset(
    {
        "a40",
        "rtx-4000-ada",
        "rtx-4500-ada",
        "rtx-5000-ada",
        "rtx-6000-ada",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
        "rtx-pro-4000-blackwell",
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-5000-blackwell-72gb",
        "rtx-pro-6000-blackwell-max-q",
        "rtx-pro-6000-blackwell-workstation",
    }
)

VGPU_TRUE = frozenset(
    {
        "a10",
        "a100-80gb-pcie",
        "a16",
        "a2",
        "a30",
        "a40",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "l4",
        "l40",
        "l40s",
        "rtx-5000-ada",
        "rtx-6000-ada",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
        "rtx-pro-6000-blackwell-server",
    }
)

MIG_TRUE = frozenset(
    {
        "a100-80gb-pcie",
        "a30",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-5000-blackwell-72gb",
        "rtx-pro-6000-blackwell-max-q",
        "rtx-pro-6000-blackwell-server",
        "rtx-pro-6000-blackwell-workstation",
    }
)

NVLINK_TRUE = frozenset(
    {
        "a100-80gb-pcie",
        "a30",
        "a40",
        "geforce-rtx-3090",
        "geforce-rtx-3090-ti",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
    }
)

COOLING_PASSIVE = frozenset(
    {
        "a10",
        "a100-80gb-pcie",
        "a16",
        "a2",
        "a30",
        "a40",
        "h100-nvl",
        "h100-pcie",
        "h200-nvl",
        "l4",
        "l40",
        "l40s",
        "rtx-pro-6000-blackwell-server",
    }
)

COOLING_BLOWER = frozenset(
    {
        "rtx-2000-ada",
        "rtx-4000-ada",
        "rtx-4000-sff-ada",
        "rtx-4500-ada",
        "rtx-5000-ada",
        "rtx-6000-ada",
        "rtx-a2000-12gb",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-a6000",
        "rtx-pro-2000-blackwell",
        "rtx-pro-4000-blackwell",
        "rtx-pro-4000-blackwell-sff",
        "rtx-pro-4500-blackwell",
        "rtx-pro-5000-blackwell",
        "rtx-pro-5000-blackwell-72gb",
        "rtx-pro-6000-blackwell-max-q",
    }
)

VRAM_GIB = {
    "geforce-rtx-4090": 24.0,
    "geforce-rtx-5090": 32.0,
    "rtx-6000-ada": 48.0,
    "rtx-pro-6000-blackwell-workstation": 96.0,
    "rtx-pro-6000-blackwell-max-q": 96.0,
    "rtx-pro-6000-blackwell-server": 96.0,
    "h100-nvl": 94.0,
    "h200-nvl": 141.0,
    "a100-80gb-pcie": 80.0,
    "rtx-a6000": 48.0,
    "l40s": 48.0,
    "l4": 24.0,
    "geforce-rtx-4080": 16.0,
    "geforce-rtx-4070": 12.0,
    "geforce-rtx-5070": 12.0,
    "geforce-rtx-5060-ti-16gb": 16.0,
}

# ---------------------------------------------------------------- schema
FLOAT_KEYS = (
    "vram_gib",
    "memory_bandwidth_gbs",
    "tdp_w",
    "slot_width",
    "fp32_tflops",
    "fp16_tensor_tflops",
    "fp64_tflops",
)
INT_KEYS = ("pcie_gen", "pcie_lanes", "display_outputs", "launch_year")
BOOL_KEYS = ("ecc", "nvlink", "frame_lock", "vgpu", "mig")
STR_KEYS = (
    "id",
    "name",
    "vendor",
    "segment",
    "architecture",
    "memory_type",
    "cooling",
    "price_kind",
)
#: A SKU without a price is quote-needed (CONTRACT §6): then it has none of these.
PRICE_KEYS = ("price_usd", "price_date", "price_source")
REQUIRED_KEYS = frozenset(
    FLOAT_KEYS + INT_KEYS + BOOL_KEYS + STR_KEYS + ("sources", "cite", "vgpu_editions")
)
OPTIONAL_KEYS = frozenset(
    {
        "lifecycle_note",
        "disputes",
        *PRICE_KEYS,
        "status",
        "status_date",
        "status_source",
        "nvenc",
        "nvdec",
        "av1_decode",
        "displays_4k60",
        "displays_8k60",
        "lint",
        "vgpu_editions_unverified",
        "certified_for",
        "weak_sources",
        "usable_vram_mib",
        "gpus_per_board",
        "vgpu_profiles_gib",
    }
)
#: Optional values that, where present, cite their source like the decision fields.
OPTIONAL_CITED = frozenset(
    {
        "usable_vram_mib",
        "gpus_per_board",
        "vgpu_profiles_gib",
        "nvdec",
        "av1_decode",
        "displays_4k60",
        "displays_8k60",
    }
)
CITE_KEYS = frozenset(
    {
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
    }
)
#: The CONTRACT §6 fields an entry cites when it states them.
MARKET_CITE_KEYS = frozenset({"status", "vgpu_editions", "fp64_tflops", "nvenc", "price_usd"})
SEGMENTS = frozenset({"consumer", "professional", "datacenter"})
COOLINGS = frozenset({"blower", "open-air", "passive"})
PRICE_KINDS = frozenset({"launch-msrp", "list", "street", "estimate", "quote-needed"})
STATUSES = frozenset({"current", "discontinued", "eol"})
SLOT_WIDTHS = frozenset({1.0, 2.0, 2.5, 3.0, 3.5, 4.0})
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
URL_RE = re.compile(r"^https?://\S+$")


def _load() -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for path in sorted(p for p in CATALOG.glob("*.toml") if not p.name.startswith("_")):
        with path.open("rb") as fh:
            entries[path.stem] = tomllib.load(fh)
    return entries


ENTRIES = _load()


def _ids_where(pred: Any) -> frozenset[str]:
    return frozenset(stem for stem, e in ENTRIES.items() if pred(e))


def _diff(actual: frozenset[str], expected: frozenset[str]) -> str:
    return f"unexpected={sorted(actual - expected)} missing={sorted(expected - actual)}"


# ---------------------------------------------------------------- identity
def test_catalog_has_exactly_the_pinned_ids() -> None:
    actual = frozenset(ENTRIES)
    assert actual == EXPECTED_IDS, _diff(actual, EXPECTED_IDS)


@pytest.mark.parametrize("stem", sorted(ENTRIES))
def test_id_equals_file_stem_and_is_well_formed(stem: str) -> None:
    entry = ENTRIES[stem]
    assert entry.get("id") == stem
    assert ID_RE.match(stem), stem


def test_ids_and_names_are_unique() -> None:
    ids = [e["id"] for e in ENTRIES.values()]
    names = [e["name"] for e in ENTRIES.values()]
    assert len(ids) == len(set(ids))
    assert len(names) == len(set(names))


# ---------------------------------------------------------------- schema and types
@pytest.mark.parametrize("stem", sorted(ENTRIES))
def test_required_keys_and_types(stem: str) -> None:
    e = ENTRIES[stem]
    missing = REQUIRED_KEYS - e.keys()
    assert not missing, f"{stem}: missing keys {sorted(missing)}"
    unknown = e.keys() - REQUIRED_KEYS - OPTIONAL_KEYS
    assert not unknown, f"{stem}: unknown keys {sorted(unknown)}"
    for key in FLOAT_KEYS:
        assert type(e[key]) is float, f"{stem}.{key} must be a float (write 24.0, not 24)"
        assert e[key] > 0, f"{stem}.{key} must be positive"
    for key in INT_KEYS:
        assert type(e[key]) is int, f"{stem}.{key} must be an integer"
    for key in BOOL_KEYS:
        assert type(e[key]) is bool, f"{stem}.{key} must be a boolean"
    for key in STR_KEYS:
        assert type(e[key]) is str, f"{stem}.{key} must be a string"
        assert e[key].strip(), f"{stem}.{key} must not be empty"
    if "lifecycle_note" in e:
        assert type(e["lifecycle_note"]) is str
        assert e["lifecycle_note"].strip()
    assert isinstance(e["sources"], list)
    assert e["sources"], f"{stem}: sources must not be empty"
    assert all(type(u) is str and URL_RE.match(u) for u in e["sources"]), stem
    assert len(e["sources"]) == len(set(e["sources"])), f"{stem}: duplicate sources"


@pytest.mark.parametrize("stem", sorted(ENTRIES))
def test_enums_and_ranges(stem: str) -> None:
    e = ENTRIES[stem]
    assert e["vendor"] == "NVIDIA"
    assert e["name"].startswith("NVIDIA ")
    assert e["segment"] in SEGMENTS
    assert e["cooling"] in COOLINGS
    assert e["price_kind"] in PRICE_KINDS
    assert e["slot_width"] in SLOT_WIDTHS
    assert e["pcie_gen"] in (3, 4, 5, 6)
    assert e["pcie_lanes"] in (4, 8, 16)
    assert 0 <= e["display_outputs"] <= 8
    assert 2018 <= e["launch_year"] <= 2030
    assert 4.0 <= e["vram_gib"] <= 256.0
    assert 100.0 <= e["memory_bandwidth_gbs"] <= 10000.0
    assert 30.0 <= e["tdp_w"] <= 1000.0
    assert 1.0 <= e["fp32_tflops"] <= 200.0
    # Dense FP16 tensor throughput is never below plain FP32 on these architectures.
    assert e["fp16_tensor_tflops"] >= e["fp32_tflops"], stem
    if e["price_kind"] == "quote-needed":
        assert not set(PRICE_KEYS) & e.keys(), f"{stem}: quote-needed SKU states a price"
    else:
        assert set(PRICE_KEYS) <= e.keys(), f"{stem}: a priced SKU needs {PRICE_KEYS}"
        assert type(e["price_usd"]) is float
        assert 100.0 <= e["price_usd"] <= 100000.0
        assert type(e["price_source"]) is str
        dt.date.fromisoformat(e["price_date"])
    assert e.get("status", "current") in STATUSES
    assert set(e["vgpu_editions"]) <= {"vpc", "vws", "vcs"}
    assert 0 < e["fp64_tflops"] <= e["fp32_tflops"], stem


# ---------------------------------------------------------------- citations
@pytest.mark.parametrize("stem", sorted(ENTRIES))
def test_every_decision_field_is_cited_from_sources(stem: str) -> None:
    e = ENTRIES[stem]
    cite = e["cite"]
    assert isinstance(cite, dict)
    # A decision field no page states stays only when weak_sources says so.
    weak = set(e.get("weak_sources", {}))
    missing = CITE_KEYS - set(cite) - weak
    assert not missing, f"{stem}: decision fields without a cite: {sorted(missing)}"
    allowed = CITE_KEYS | MARKET_CITE_KEYS | (OPTIONAL_CITED & e.keys())
    assert set(cite) <= allowed, sorted(set(cite) - allowed)
    for name in OPTIONAL_CITED & e.keys():
        assert name in cite, f"{stem}: {name} cites no source"
    sources = set(e["sources"])
    for field, url in cite.items():
        assert url in sources, f"{stem}: cite.{field} = {url!r} is not listed in sources"
    if "price_source" in e:
        assert e["price_source"] in sources, f"{stem}: price_source is not listed in sources"
        assert URL_RE.match(e["price_source"])


@pytest.mark.parametrize("stem", sorted(ENTRIES))
def test_disputes_name_real_fields_and_a_url(stem: str) -> None:
    disputes = ENTRIES[stem].get("disputes", {})
    assert isinstance(disputes, dict)
    known = REQUIRED_KEYS | OPTIONAL_KEYS
    sources = set(ENTRIES[stem]["sources"])
    for field, text in disputes.items():
        assert field in known, f"{stem}: dispute on unknown field {field!r}"
        assert type(text) is str
        urls = re.findall(r"https?://[^\s;,)]+", text)
        assert urls, f"{stem}: dispute on {field} must name the other source's URL"
        for url in urls:
            assert url in sources, f"{stem}: dispute URL {url!r} missing from sources"


# ---------------------------------------------------------------- decision-critical sets
@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("ecc", ECC_TRUE),
        ("frame_lock", FRAME_LOCK_TRUE),
        ("vgpu", VGPU_TRUE),
        ("mig", MIG_TRUE),
        ("nvlink", NVLINK_TRUE),
    ],
)
def test_boolean_capability_sets_are_pinned(flag: str, expected: frozenset[str]) -> None:
    actual = _ids_where(lambda e: e[flag] is True)
    assert actual == expected, f"{flag}: {_diff(actual, expected)}"


@pytest.mark.parametrize(
    ("cooling", "expected"),
    [("passive", COOLING_PASSIVE), ("blower", COOLING_BLOWER)],
)
def test_cooling_sets_are_pinned(cooling: str, expected: frozenset[str]) -> None:
    actual = _ids_where(lambda e: e["cooling"] == cooling)
    assert actual == expected, f"{cooling}: {_diff(actual, expected)}"


def test_vram_of_flagship_cards_is_pinned() -> None:
    assert set(VRAM_GIB) <= set(ENTRIES), sorted(set(VRAM_GIB) - set(ENTRIES))
    for stem, gib in VRAM_GIB.items():
        assert ENTRIES[stem]["vram_gib"] == gib, stem


# ---------------------------------------------------------------- cross-field invariants
def test_geforce_never_claims_pro_or_datacenter_features() -> None:
    for stem, e in ENTRIES.items():
        if e["segment"] == "consumer":
            assert e["name"].startswith("NVIDIA GeForce "), stem
            assert e["frame_lock"] is False, stem
            assert e["vgpu"] is False, stem
            assert e["mig"] is False, stem
            assert e["cooling"] == "open-air", stem
            assert e["price_kind"] in ("launch-msrp", "street"), stem
            assert e["vgpu_editions"] == [], stem


def test_mig_implies_ecc_and_datacenter_is_passive() -> None:
    for stem, e in ENTRIES.items():
        if e["mig"]:
            assert e["ecc"], stem
        if e["segment"] == "datacenter":
            assert e["cooling"] == "passive", stem


def test_rtx_5090_has_no_ecc_but_4090_does() -> None:
    # NVIDIA dropped the GeForce ECC toggle on the RTX 5090 (notebookcheck, nvtop PR #486).
    if "geforce-rtx-5090" in ENTRIES:
        assert ENTRIES["geforce-rtx-5090"]["ecc"] is False
    if "geforce-rtx-4090" in ENTRIES:
        assert ENTRIES["geforce-rtx-4090"]["ecc"] is True


# ---------------------------------------------------------------- video decode (#30)
#: NVDEC engines per board where a cited page gives them (NVIDIA's Dynamo docs; the RTX
#: PRO 6000 editions from a weak launch-news copy and the A16 from a reseller's copy of
#: its datasheet, named in weak_sources).
NVDEC = {
    "a16": 8,
    "a100-80gb-pcie": 5,
    "h100-pcie": 7,
    "h100-nvl": 7,
    "h200-nvl": 7,
    "l4": 4,
    "l40": 3,
    "l40s": 3,
    "rtx-6000-ada": 3,
    "rtx-pro-6000-blackwell-workstation": 4,
    "rtx-pro-6000-blackwell-max-q": 4,
    "rtx-pro-6000-blackwell-server": 4,
}
#: NVIDIA's NVDEC application note: no AV1 decode on GA100 and Hopper.
NO_AV1_DECODE = frozenset({"a100-80gb-pcie", "a30", "h100-pcie", "h100-nvl", "h200-nvl"})


def test_nvdec_counts_are_pinned() -> None:
    actual = {stem: e["nvdec"] for stem, e in ENTRIES.items() if "nvdec" in e}
    assert actual == NVDEC


def test_every_card_states_av1_decode_by_architecture() -> None:
    assert all(type(e.get("av1_decode")) is bool for e in ENTRIES.values())
    assert _ids_where(lambda e: e["av1_decode"] is False) == NO_AV1_DECODE


def test_a_card_without_outputs_drives_no_display() -> None:
    for stem, e in ENTRIES.items():
        if e["display_outputs"] == 0:
            assert (e.get("displays_4k60"), e.get("displays_8k60")) == (0, 0), stem
