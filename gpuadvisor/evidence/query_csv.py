"""``nvidia-smi --query-gpu=... --format=csv`` (with its header line), and the
``--query-compute-apps`` and ``--query-retired-pages`` variants.

Columns are found by name, in any order and any subset; a unit suffix in the header
(``memory.used [MiB]``) and units in the values (``--format=csv`` without ``nounits``)
are both accepted. Short aliases nvidia-smi documents (``clocks.sm`` for
``clocks.current.sm``) are read when the full name is absent.

A ``--query-gpu`` row is one GPU's reading. A looped query (``-l``, ``-lms``) prints a
row per GPU every interval: :mod:`._query_series` tells which rows are which GPU's (by
index, UUID or bus id; else by the bursts of the time stamps; else as one GPU's
samples, with a note), and a GPU with several rows becomes a window of samples.
"""

from __future__ import annotations

import csv
from typing import Any

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _query_series
from gpuadvisor.evidence._limits import check_gpus, lines
from gpuadvisor.evidence._query_columns import ALIASES, COLUMNS, REASON_PREFIXES, header
from gpuadvisor.host.schema import THROTTLE_BITS, Gpu, HostSnapshot, Process, RetiredPages
from gpuadvisor.nvidia.values import active, bus_id, clean, integer, number


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
    if "pid" in columns:
        gpus = _apps(rows)
    elif "retired_pages.address" in columns:
        gpus = _retired(rows)
    else:
        gpus = _gpus(columns, rows, name, notes)
    drivers = {d for _, row in rows if (d := clean(row.get("driver_version")))}
    return HostSnapshot(
        driver_version=sorted(drivers)[0] if len(drivers) == 1 else None, gpus=gpus, notes=notes
    )


def _gpus(
    columns: list[str], rows: list[tuple[int, dict[str, str]]], name: str, notes: list[str]
) -> list[Gpu]:
    """One Gpu per GPU the rows describe: a snapshot from one row, a window from several."""
    times = _query_series.stamps(rows)
    groups, note = _query_series.group(columns, rows, times, name)
    check_gpus(len(groups))
    if note:
        notes.append(note)
    gpus = []
    for group in groups:
        if len(group) == 1:
            line, row = rows[group[0]]
            gpus.append(Gpu.model_validate(_data(row, name, line, notes)))
            continue
        noted: set[str] = set()  # a disagreement between aliases is noted once, not per row
        readings = [_data(rows[at][1], name, rows[at][0], notes, noted) for at in group]
        data = _query_series.window(readings, [times[at] for at in group])
        gpus.append(Gpu.model_validate(data))
    return gpus


def _data(
    row: dict[str, str], name: str, line: int, notes: list[str], noted: set[str] | None = None
) -> dict[str, Any]:
    """One row's values, in the shape of Gpu; a disagreement between a column and its
    alias is noted once per column in ``noted``."""
    data: dict[str, Any] = {}
    for column, raw in row.items():
        canonical = ALIASES.get(column, column)
        if canonical != column and canonical in row:
            if number(raw) != number(row[canonical]) and column not in (noted or ()):
                if noted is not None:
                    noted.add(column)
                notes.append(
                    f"{name}:{line}: {column}={raw!r} disagrees with {canonical}="
                    f"{row[canonical]!r}; {canonical} used (nvidia-smi documents them as one)"
                )
            continue
        entry = COLUMNS.get(canonical)
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
    return data


def _reasons(row: dict[str, str]) -> dict[str, bool]:
    reasons: dict[str, bool] = {}
    for column, raw in row.items():
        if not column.startswith(REASON_PREFIXES):
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
