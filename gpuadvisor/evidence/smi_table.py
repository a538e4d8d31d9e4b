"""Plain ``nvidia-smi``: the summary table (narrow pre-R545 and wide layouts) and its
process table.

Cells are found between ``|`` separators and read by their place in the cell, so the
column widths of each driver release do not matter. Names the table truncated
("NVIDIA GeForce ...") are not reported as names.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence._limits import check_gpus, lines
from gpuadvisor.host.schema import (
    EccErrors,
    Gpu,
    HostSnapshot,
    Power,
    Process,
    Temperature,
    Utilisation,
)
from gpuadvisor.nvidia.values import (
    bus_id,
    clean,
    integer,
    number,
    pstate,
    whole,
    whole_or_none,
    yes_no,
)

_DRIVER = re.compile(r"(?:Driver|KMD) Version:\s*(\S+)")
_CUDA = re.compile(r"CUDA (?:UMD )?Version:\s*(\S+)")
_INDEX = re.compile(r"\s*(\d+)\s")
_MODES = ("On", "Off", "WDDM", "TCC", "MCDM")
_SLASH = re.compile(r"^\s*(\S+)\s*/\s*(\S+)\s*$")


def parse(text: str, name: str) -> HostSnapshot:
    driver = _DRIVER.search(text)
    cuda = _CUDA.search(text)
    groups, process_rows, process_header = _sections(text)
    notes: list[str] = []
    check_gpus(len(groups))
    gpus = [gpu for rows in groups if (gpu := _gpu(rows, name, notes)) is not None]
    if process_header is not None:
        processes = _processes(process_rows, process_header)
        gpus = [
            gpu.model_copy(update={"processes": [p for i, p in processes if i == gpu.index]})
            for gpu in gpus
        ]
    return HostSnapshot(
        driver_version=driver.group(1) if driver else None,
        cuda_version=cuda.group(1) if cuda else None,
        gpus=gpus,
        notes=notes,
    )


def _cells(line: str) -> list[str]:
    return line.strip().strip("|").split("|")


def _sections(text: str) -> tuple[list[list[list[str]]], list[str], str | None]:
    """GPU row groups (each a list of rows of cells), process rows, process header."""
    groups: list[list[list[str]]] = []
    process_rows: list[str] = []
    process_header: str | None = None
    state = "banner"
    current: list[list[str]] = []
    for raw in lines(text):
        line = raw.strip()
        if "Processes:" in line:
            state = "process-header"
            continue
        if "MIG devices:" in line:
            state = "other"
            continue
        if line.startswith(("|=", "+=")):
            state = {"banner": "gpus", "process-header": "processes"}.get(state, state)
            continue
        if state == "process-header" and "PID" in line:
            process_header = line
        elif state == "gpus":
            if line.startswith("|"):
                current.append(_cells(line))
            elif current:
                groups.append(current)
                current = []
            if not line:
                state = "other"
        elif state == "processes" and line.startswith("|"):
            process_rows.append(line)
    if current:
        groups.append(current)
    return groups, process_rows, process_header


def _first_cell(cell: str) -> tuple[str, str, str] | None:
    """``   0  NVIDIA A100-SXM4-80GB          On`` -> index, name, mode.

    Split by hand: the pattern ``\\d+\\s+(.*?)\\s+(On|Off)\\s*$`` it replaces backtracks
    quadratically over a long run of blanks.
    """
    index = _INDEX.match(cell)
    if index is None:
        return None
    parts = cell[index.end() :].rsplit(None, 1)
    if len(parts) != 2 or parts[1] not in _MODES:
        return None
    return index.group(1), parts[0].strip(), parts[1]


def _gpu(rows: list[list[str]], name: str, notes: list[str]) -> Gpu | None:
    first = _first_cell(rows[0][0]) if rows and rows[0] else None
    if first is None or len(rows[0]) < 3:
        return None
    index, gpu_name_text, mode = first
    gpu_name: str | None = gpu_name_text
    if gpu_name and gpu_name.endswith("..."):
        notes.append(f"{name}: GPU {index} name truncated by nvidia-smi: {gpu_name!r}")
        gpu_name = None
    bus = rows[0][1].split()
    ecc = integer(rows[0][2])
    second = rows[1] if len(rows) > 1 and len(rows[1]) >= 3 else ["", "", ""]
    fan, temp, perf, power = _first_row_parts(second[0])
    used, total = _pair(second[1])
    util_mode = second[2].split(None, 1)
    draw, cap = _pair(power)
    return Gpu(
        index=whole(index),
        name=gpu_name,
        pci_bus_id=bus_id(bus[0]) if bus else None,
        persistence_mode=yes_no(mode) if mode in ("On", "Off") else None,
        driver_model=mode if mode not in ("On", "Off") else None,
        fan_pct=number(fan),
        pstate=pstate(perf),
        memory_used_mib=integer(used),
        memory_total_mib=integer(total),
        compute_mode=clean(util_mode[1]) if len(util_mode) > 1 else None,
        utilisation=Utilisation(gpu_pct=number(util_mode[0]) if util_mode else None),
        temperature=Temperature(gpu_c=number(temp)),
        power=Power(draw_w=number(draw), enforced_limit_w=number(cap)),
        ecc_errors=EccErrors(volatile_uncorrectable=ecc),
    )


def _first_row_parts(cell: str) -> tuple[str | None, str | None, str | None, str | None]:
    """``N/A   27C    P0   72W /  700W`` -> fan, temperature, perf state, power."""
    tokens = cell.split()
    if len(tokens) < 3:
        return None, None, None, None
    return tokens[0], tokens[1], tokens[2], " ".join(tokens[3:]) or None


def _pair(cell: str | None) -> tuple[str | None, str | None]:
    match = _SLASH.match(cell or "")
    return (match.group(1), match.group(2)) if match else (None, None)


def _processes(rows: list[str], header: str) -> list[tuple[int, Process]]:
    has_instances = " GI " in header
    found: list[tuple[int, Process]] = []
    for row in rows:
        tokens = row.strip("|").split()
        fixed = 6 if has_instances else 4
        gpu = whole_or_none(tokens[0]) if tokens else None
        if len(tokens) < fixed or gpu is None:
            continue
        gi, ci = (tokens[1], tokens[2]) if has_instances else (None, None)
        rest = tokens[3:] if has_instances else tokens[1:]
        found.append(
            (
                gpu,
                Process(
                    pid=integer(rest[0]),
                    type=clean(rest[1]),
                    name=" ".join(rest[2:-1]) or None,
                    used_memory_mib=integer(rest[-1]),
                    gpu_instance_id=integer(gi),
                    compute_instance_id=integer(ci),
                ),
            )
        )
    return found
