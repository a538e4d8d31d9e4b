"""Plain ``nvidia-smi``: the summary table (narrow pre-R545 and wide layouts), its
"MIG devices" table and its process table.

Cells are found between ``|`` separators and read by their place in the cell, so the
column widths of each driver release do not matter. Names the table truncated
("NVIDIA GeForce ...") are not reported as names.

The "Volatile Uncorr. ECC" cell says the ECC mode too: a count when ECC is on (``On``
instead under MIG, where the counts are per instance), ``Off`` when the GPU has ECC
turned off, ``N/A`` when it has none. The cell under it is the MIG mode.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence._limits import check_gpus, lines
from gpuadvisor.host.schema import (
    EccErrors,
    Gpu,
    HostSnapshot,
    MigDevice,
    Mode,
    Power,
    Process,
    Temperature,
    Utilisation,
)
from gpuadvisor.nvidia.values import (
    bus_id,
    clean,
    integer,
    mode,
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
    sections = _sections(text)
    groups, process_rows, process_header = sections.gpus, sections.processes, sections.header
    notes: list[str] = []
    check_gpus(len(groups))
    gpus = [gpu for rows in groups if (gpu := _gpu(rows, name, notes)) is not None]
    if sections.mig_block:
        migs = _mig_devices(sections.migs)
        gpus = [
            gpu.model_copy(update={"mig_devices": migs.get(gpu.index, [])})
            if gpu.index in migs or gpu.mig_mode == "enabled"
            else gpu
            for gpu in gpus
        ]
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


class _Sections:
    """The table's parts: GPU row groups (each a list of rows of cells), MIG device row
    groups, whether a MIG devices table was printed, process rows and their header."""

    __slots__ = ("gpus", "header", "mig_block", "migs", "processes")

    def __init__(self) -> None:
        self.gpus: list[list[list[str]]] = []
        self.migs: list[list[list[str]]] = []
        self.mig_block = False
        self.processes: list[str] = []
        self.header: str | None = None


def _sections(text: str) -> _Sections:
    found = _Sections()
    state = "banner"
    current: list[list[str]] = []
    for raw in lines(text):
        line = raw.strip()
        if "Processes:" in line:
            state = "process-header"
            continue
        if "MIG devices:" in line:
            state = "mig-header"
            found.mig_block = True
            continue
        if line.startswith(("|=", "+=")):
            state = {"banner": "gpus", "process-header": "processes", "mig-header": "mig"}.get(
                state, state
            )
            continue
        if state == "process-header" and "PID" in line:
            found.header = line
        elif state in ("gpus", "mig"):
            groups = found.gpus if state == "gpus" else found.migs
            if line.startswith("|"):
                current.append(_cells(line))
            elif current:
                groups.append(current)
                current = []
            if not line:
                state = "other"
        elif state == "processes" and line.startswith("|"):
            found.processes.append(line)
    if current:
        (found.gpus if state == "gpus" else found.migs).append(current)
    return found


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
    index, gpu_name_text, persistence = first
    gpu_name: str | None = gpu_name_text
    if gpu_name and gpu_name.endswith("..."):
        notes.append(f"{name}: GPU {index} name truncated by nvidia-smi: {gpu_name!r}")
        gpu_name = None
    bus = rows[0][1].split()
    ecc_cell = rows[0][2].strip()
    ecc = integer(ecc_cell)
    second = rows[1] if len(rows) > 1 and len(rows[1]) >= 3 else ["", "", ""]
    third = rows[2] if len(rows) > 2 and len(rows[2]) >= 3 else None
    fan, temp, perf, power = _first_row_parts(second[0])
    used, total = _pair(second[1])
    util_mode = second[2].split(None, 1)
    draw, cap = _pair(power)
    return Gpu(
        index=whole(index),
        name=gpu_name,
        pci_bus_id=bus_id(bus[0]) if bus else None,
        persistence_mode=yes_no(persistence) if persistence in ("On", "Off") else None,
        driver_model=persistence if persistence not in ("On", "Off") else None,
        fan_pct=number(fan),
        pstate=pstate(perf),
        memory_used_mib=integer(used),
        memory_total_mib=integer(total),
        compute_mode=clean(util_mode[1]) if len(util_mode) > 1 else None,
        utilisation=Utilisation(gpu_pct=number(util_mode[0]) if util_mode else None),
        temperature=Temperature(gpu_c=number(temp)),
        power=Power(draw_w=number(draw), enforced_limit_w=number(cap)),
        ecc_errors=EccErrors(volatile_uncorrectable=ecc),
        ecc_mode=_ecc_mode(ecc_cell, ecc),
        mig_mode=mode(third[2]) if third is not None else None,
    )


def _ecc_mode(cell: str, count: int | None) -> Mode | None:
    """The ECC mode the "Volatile Uncorr. ECC" cell implies."""
    if count is not None or cell == "On":
        return "enabled"
    if cell == "Off":
        return "disabled"
    return mode(cell)


def _mig_devices(groups: list[list[list[str]]]) -> dict[int | None, list[MigDevice]]:
    """MIG device rows by GPU index: ``| 0  2  0  0 | 11091MiB / 40448MiB | 60  0 | ...``
    (GPU, GPU instance, compute instance, MIG device; memory used / total; SM count and
    the instance's volatile uncorrectable ECC count), the BAR1 row under it skipped."""
    found: dict[int | None, list[MigDevice]] = {}
    for rows in groups:
        first = rows[0]
        ids = first[0].split()
        if len(first) < 3 or len(ids) != 4 or not all(whole_or_none(i) is not None for i in ids):
            continue
        gpu, gi, ci, dev = (whole_or_none(i) for i in ids)
        used, total = _pair(first[1])
        sm = first[2].split()
        found.setdefault(gpu, []).append(
            MigDevice(
                index=dev,
                gpu_instance_id=gi,
                compute_instance_id=ci,
                multiprocessor_count=integer(sm[0]) if sm else None,
                memory_used_mib=integer(used),
                memory_total_mib=integer(total),
            )
        )
    return found


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
