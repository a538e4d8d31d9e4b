"""``nvidia-smi --query-gpu=... --format=csv`` (with its header line), and the
``--query-compute-apps`` and ``--query-retired-pages`` variants.

Columns are found by name, in any order and any subset; a unit suffix in the header
(``memory.used [MiB]``) and units in the values (``--format=csv`` without ``nounits``)
are both accepted. Short aliases nvidia-smi documents (``clocks.sm`` for
``clocks.current.sm``) are read when the full name is absent.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from typing import Any

from gpuadvisor.errors import InputError
from gpuadvisor.evidence._limits import check_gpus, lines
from gpuadvisor.evidence._values import (
    active,
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
from gpuadvisor.host import THROTTLE_BITS, Gpu, HostSnapshot, Process, RetiredPages

Convert = Callable[[str | None], Any]
_HEADER_NAME = re.compile(r"^[a-z][a-zA-Z0-9_.]*(?: \[[^\]]+\])?$")


def _text(value: str | None) -> str | None:
    return clean(value)


def _mode(value: str | None) -> Any:
    return mode(value)


#: Column name -> (place in Gpu, converter). Names follow ``nvidia-smi --help-query-gpu``.
_COLUMNS: dict[str, tuple[tuple[str, ...], Convert]] = {
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
_ALIASES = {
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
_REASON_PREFIXES = ("clocks_event_reasons.", "clocks_throttle_reasons.")


def header(text: str) -> list[str] | None:
    """Column names without unit suffixes, when the first line is a query header."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    names = [part.strip() for part in first.split(",")]
    if not names or not all(_HEADER_NAME.match(n) for n in names):
        return None
    bare = [n.split(" [")[0] for n in names]
    known = set(_COLUMNS) | set(_ALIASES) | {"pid", "retired_pages.address", "driver_version"}
    return bare if any(n in known or n.startswith(_REASON_PREFIXES) for n in bare) else None


def looks_like(text: str) -> bool:
    return header(text) is not None


def parse(text: str, name: str) -> HostSnapshot:
    columns = header(text)
    if columns is None:
        raise InputError("not an nvidia-smi --query-* CSV with a header line", file=name)
    reader = csv.reader(lines(text), skipinitialspace=True)
    try:
        rows = [
            (number_, dict(zip(columns, row, strict=False)))
            for number_, row in enumerate(reader, 1)
            if number_ > 1 and row
        ]
    except csv.Error as exc:  # a field over csv's size limit (128 KiB), a NUL byte
        raise InputError(f"invalid CSV: {exc}", file=name, line=reader.line_num) from None
    notes: list[str] = []
    if "pid" not in columns and "retired_pages.address" not in columns:
        check_gpus(len(rows))  # one row per GPU
    if "pid" in columns:
        gpus = _apps(rows)
    elif "retired_pages.address" in columns:
        gpus = _retired(rows)
    else:
        gpus = [_gpu(row, name, line, notes) for line, row in rows]
    drivers = {d for _, row in rows if (d := clean(row.get("driver_version")))}
    return HostSnapshot(
        driver_version=sorted(drivers)[0] if len(drivers) == 1 else None, gpus=gpus, notes=notes
    )


def _gpu(row: dict[str, str], name: str, line: int, notes: list[str]) -> Gpu:
    data: dict[str, Any] = {}
    for column, raw in row.items():
        canonical = _ALIASES.get(column, column)
        if canonical != column and canonical in row:
            if number(raw) != number(row[canonical]):
                notes.append(
                    f"{name}:{line}: {column}={raw!r} disagrees with {canonical}="
                    f"{row[canonical]!r}; {canonical} used (nvidia-smi documents them as one)"
                )
            continue
        entry = _COLUMNS.get(canonical)
        if entry is None:
            continue
        place, convert = entry
        value = convert(raw)
        if value is None:
            continue
        target = data
        for step in place[:-1]:
            target = target.setdefault(step, {})
        target.setdefault(place[-1], value)
    reasons = _reasons(row)
    if reasons:
        data["throttle_reasons"] = {k: {"active": v} for k, v in reasons.items()}
    return Gpu.model_validate(data)


def _reasons(row: dict[str, str]) -> dict[str, bool]:
    reasons: dict[str, bool] = {}
    for column, raw in row.items():
        if not column.startswith(_REASON_PREFIXES):
            continue
        short = column.split(".", 1)[1]
        state = active(raw)
        if short in THROTTLE_BITS and state is not None:
            reasons[short] = state
    mask = _hex(row.get("clocks_event_reasons.active") or row.get("clocks_throttle_reasons.active"))
    supported = _hex(
        row.get("clocks_event_reasons.supported") or row.get("clocks_throttle_reasons.supported")
    )
    if mask is not None:
        for reason, bit in THROTTLE_BITS.items():
            if supported is None or supported & bit:
                reasons.setdefault(reason, bool(mask & bit))
    return reasons


def _hex(value: str | None) -> int | None:
    text = clean(value)
    try:
        return int(text, 16) if text else None
    except ValueError:
        return None


def _key(row: dict[str, str]) -> dict[str, Any]:
    return {
        "pci_bus_id": bus_id(row.get("gpu_bus_id") or row.get("pci.bus_id")),
        "uuid": clean(row.get("gpu_uuid") or row.get("uuid")),
        "name": clean(row.get("gpu_name") or row.get("name")),
    }


def _apps(rows: list[tuple[int, dict[str, str]]]) -> list[Gpu]:
    """--query-compute-apps: one row per process; grouped by GPU."""
    by_gpu: dict[tuple[Any, ...], list[Process]] = {}
    for _, row in rows:
        key = tuple(_key(row).items())
        by_gpu.setdefault(key, []).append(
            Process(
                pid=integer(row.get("pid")),
                name=clean(row.get("process_name") or row.get("name")),
                used_memory_mib=integer(row.get("used_gpu_memory") or row.get("used_memory")),
            )
        )
    check_gpus(len(by_gpu))
    return [Gpu(**dict(key), processes=procs) for key, procs in by_gpu.items()]


def _retired(rows: list[tuple[int, dict[str, str]]]) -> list[Gpu]:
    """--query-retired-pages: rows with no address mean the GPU cannot report any."""
    counts: dict[tuple[Any, ...], dict[str, int | None]] = {}
    for _, row in rows:
        key = tuple(_key(row).items())
        entry = counts.setdefault(key, {"single_bit": None, "double_bit": None})
        if clean(row.get("retired_pages.address")) is None:
            continue
        cause = (clean(row.get("retired_pages.cause")) or "").lower()
        field = "double_bit" if "double" in cause else "single_bit"
        entry[field] = (entry[field] or 0) + 1
    check_gpus(len(counts))
    gpus = []
    for key, entry in counts.items():
        if any(count is not None for count in entry.values()):
            entry = {cause: count or 0 for cause, count in entry.items()}
        retired = RetiredPages(single_bit=entry["single_bit"], double_bit=entry["double_bit"])
        gpus.append(Gpu(**dict(key), retired_pages=retired))
    return gpus
