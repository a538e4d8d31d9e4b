"""The columns of ``nvidia-smi --query-gpu=... --format=csv`` and how each is read, and
the header line that names them: what :mod:`.query_csv` parses with and detection
(:func:`gpuadvisor.evidence._detect.query_csv`) checks against, without the models.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuadvisor.nvidia.values import (
    bus_id,
    clean,
    integer,
    link_width,
    mode,
    number,
    pcie_gen,
    pstate,
    yes_no,
)

Convert = Callable[[str | None], Any]
_HEADER_NAME = re.compile(r"^[a-z][a-zA-Z0-9_.]*(?: \[[^\]]+\])?$")


def _text(value: str | None) -> str | None:
    return clean(value)


def _mode(value: str | None) -> Any:
    return mode(value)


#: Column name -> (place in Gpu, converter). Names follow ``nvidia-smi --help-query-gpu``.
COLUMNS: dict[str, tuple[tuple[str, ...], Convert]] = {
    "index": (("index",), integer),
    "name": (("name",), _text),
    "uuid": (("uuid",), _text),
    "pci.bus_id": (("pci_bus_id",), bus_id),
    "serial": (("serial",), _text),
    "vbios_version": (("vbios_version",), _text),
    "persistence_mode": (("persistence_mode",), yes_no),
    "driver_model.current": (("driver_model",), _text),
    "compute_mode": (("compute_mode",), _text),
    "pstate": (("pstate",), pstate),
    "fan.speed": (("fan_pct",), number),
    "memory.total": (("memory_total_mib",), integer),
    "memory.used": (("memory_used_mib",), integer),
    "memory.reserved": (("memory_reserved_mib",), integer),
    "ecc.mode.current": (("ecc_mode",), _mode),
    "ecc.mode.pending": (("ecc_mode_pending",), _mode),
    "mig.mode.current": (("mig_mode",), _mode),
    "pcie.link.gen.current": (("pcie", "gen_current"), pcie_gen),
    "pcie.link.gen.max": (("pcie", "gen_max"), pcie_gen),
    "pcie.link.width.current": (("pcie", "width_current"), link_width),
    "pcie.link.width.max": (("pcie", "width_max"), link_width),
    "utilization.gpu": (("utilisation", "gpu_pct"), number),
    "utilization.memory": (("utilisation", "memory_pct"), number),
    "utilization.encoder": (("utilisation", "encoder_pct"), number),
    "utilization.decoder": (("utilisation", "decoder_pct"), number),
    "temperature.gpu": (("temperature", "gpu_c"), number),
    "temperature.memory": (("temperature", "memory_c"), number),
    "temperature.gpu.tlimit": (("temperature", "tlimit_margin_c"), number),
    "power.draw": (("power", "draw_w"), number),
    "power.draw.average": (("power", "draw_w"), number),
    "power.draw.instant": (("power", "draw_instant_w"), number),
    "power.limit": (("power", "limit_w"), number),
    "enforced.power.limit": (("power", "enforced_limit_w"), number),
    "power.default_limit": (("power", "default_limit_w"), number),
    "power.min_limit": (("power", "min_limit_w"), number),
    "power.max_limit": (("power", "max_limit_w"), number),
    "clocks.current.graphics": (("clocks", "graphics_mhz"), number),
    "clocks.current.sm": (("clocks", "sm_mhz"), number),
    "clocks.current.memory": (("clocks", "mem_mhz"), number),
    "clocks.max.graphics": (("clocks", "max_graphics_mhz"), number),
    "clocks.max.sm": (("clocks", "max_sm_mhz"), number),
    "clocks.max.memory": (("clocks", "max_mem_mhz"), number),
    "ecc.errors.corrected.volatile.total": (("ecc_errors", "volatile_correctable"), integer),
    "ecc.errors.uncorrected.volatile.total": (("ecc_errors", "volatile_uncorrectable"), integer),
    "ecc.errors.corrected.aggregate.total": (("ecc_errors", "aggregate_correctable"), integer),
    "ecc.errors.uncorrected.aggregate.total": (("ecc_errors", "aggregate_uncorrectable"), integer),
    "retired_pages.single_bit_ecc.count": (("retired_pages", "single_bit"), integer),
    "retired_pages.double_bit.count": (("retired_pages", "double_bit"), integer),
    "retired_pages.pending": (("retired_pages", "pending"), yes_no),
    "remapped_rows.correctable": (("remapped_rows", "correctable"), integer),
    "remapped_rows.uncorrectable": (("remapped_rows", "uncorrectable"), integer),
    "remapped_rows.pending": (("remapped_rows", "pending"), yes_no),
    "remapped_rows.failure": (("remapped_rows", "failure"), yes_no),
}
ALIASES = {
    "gpu_name": "name",
    "gpu_uuid": "uuid",
    "gpu_bus_id": "pci.bus_id",
    "gpu_serial": "serial",
    "clocks.gr": "clocks.current.graphics",
    "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory",
    "clocks.max.gr": "clocks.max.graphics",
    "clocks.max.mem": "clocks.max.memory",
}
REASON_PREFIXES = ("clocks_event_reasons.", "clocks_throttle_reasons.")

#: Columns that name one GPU: rows that agree on them are one GPU's (a looped query
#: prints every GPU again each interval), rows that differ are different GPUs.
IDENTITY = ("index", "uuid", "gpu_uuid", "pci.bus_id", "gpu_bus_id", "serial", "gpu_serial")
#: Columns one card never changes: rows that differ in them cannot be one GPU's samples.
FIXED = ("name", "gpu_name", "memory.total", "vbios_version", "power.default_limit")
#: The time stamp column (``YYYY/MM/DD HH:MM:SS.mmm``), one per row: nvidia-smi stamps
#: each row when it reads that GPU.
TIMESTAMP = "timestamp"

#: How the readings of one GPU's rows (a looped query) become its figures over the
#: window, as the probe summarises its samples (gpuadvisor.probe.summary): the mean
#: describes the window; memory used keeps its high-water mark (what an out-of-memory
#: depends on); the PCIe link keeps the best it reached (idle GPUs train their links down
#: on purpose). Place in Gpu -> "mean" or "max". Any other value is the latest row's.
SERIES: dict[tuple[str, ...], str] = {
    ("utilisation", "gpu_pct"): "mean",
    ("utilisation", "memory_pct"): "mean",
    ("utilisation", "encoder_pct"): "mean",
    ("utilisation", "decoder_pct"): "mean",
    ("memory_used_mib",): "max",
    ("fan_pct",): "mean",
    ("clocks", "graphics_mhz"): "mean",
    ("clocks", "sm_mhz"): "mean",
    ("clocks", "mem_mhz"): "mean",
    ("temperature", "gpu_c"): "mean",
    ("temperature", "memory_c"): "mean",
    ("temperature", "tlimit_margin_c"): "mean",
    ("power", "draw_w"): "mean",
    ("power", "draw_instant_w"): "mean",
    ("pcie", "gen_current"): "max",
    ("pcie", "width_current"): "max",
}
#: How steady a reading was over the window: (reading, figure, "p95" or "min").
SPREAD: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("utilisation", "gpu_pct"), ("utilisation", "gpu_p95_pct"), "p95"),
    (("utilisation", "gpu_pct"), ("utilisation", "gpu_min_pct"), "min"),
    (("utilisation", "memory_pct"), ("utilisation", "memory_p95_pct"), "p95"),
    (("utilisation", "memory_pct"), ("utilisation", "memory_min_pct"), "min"),
)


def header(text: str) -> list[str] | None:
    """Column names without unit suffixes, when the first line is a query header."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    names = [part.strip() for part in first.split(",")]
    if not names or not all(_HEADER_NAME.match(n) for n in names):
        return None
    bare = [n.split(" [")[0] for n in names]
    known = set(COLUMNS) | set(ALIASES) | {"pid", "retired_pages.address", "driver_version"}
    return bare if any(n in known or n.startswith(REASON_PREFIXES) for n in bare) else None
