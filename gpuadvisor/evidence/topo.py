"""``nvidia-smi topo -m``: the device-to-device path matrix, CPU and NUMA affinity.

Cells are tab separated; recent drivers wrap the header in ANSI underline escapes and
leave an empty cell before ``GPU NUMA ID``; Windows prints empty affinity cells. Text
whose tabs became spaces is read by whitespace, the affinity columns last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuadvisor.evidence._limits import MAX_DEVICES, TooMany, lines, tick
from gpuadvisor.evidence._values import clean, strip_ansi, whole, whole_or_none
from gpuadvisor.host import Gpu, HostSnapshot, Nic, TopoLink, Topology, TopoPair

_DEVICE = re.compile(r"^(?:GPU\d+|NIC\d+|mlx\d*_\d+|CPU\d+)$")
_NV = re.compile(r"^NV(\d+)$")
_EXTRA = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_LINKS: dict[str, TopoLink] = {
    "X": "X",
    "PIX": "PIX",
    "PXB": "PXB",
    "PHB": "PHB",
    "NODE": "NODE",
    "SYS": "SYS",
    "SOC": "SYS",  # the name of SYS before R396
}
_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


@dataclass(frozen=True)
class Matrix:
    labels: list[str]
    cells: dict[str, list[str]]
    extra: dict[str, dict[str, str | None]]


def read_matrix(text: str) -> Matrix | None:
    """The square matrix both ``topo -m`` and ``topo -p2p`` print, or None."""
    rows = [strip_ansi(line).rstrip() for line in lines(text)]
    for number, line in enumerate(rows):
        tabbed = "\t" in line
        header = [c.strip() for c in line.split("\t")] if tabbed else _split_header(line)
        while header and not header[0]:
            header.pop(0)
        labels: list[str] = []
        for cell in header:
            if not _DEVICE.match(cell):
                break
            labels.append(cell)
        if not labels or labels[0] != "GPU0":
            continue
        if len(labels) > MAX_DEVICES:
            # Pairs grow with the square of the devices; no host has this many.
            raise TooMany(
                f"the matrix has {len(labels)} devices; at most {MAX_DEVICES} are read",
                line=number + 1,
            )
        extras = [c for c in header[len(labels) :] if c in _EXTRA]
        return _rows(rows[number + 1 :], labels, extras, tabbed)
    return None


def _split_header(line: str) -> list[str]:
    for phrase in _EXTRA:
        line = line.replace(phrase, phrase.replace(" ", "\0"))
    return [token.replace("\0", " ") for token in line.split()]


def _rows(lines: list[str], labels: list[str], extras: list[str], tabbed: bool) -> Matrix:
    cells: dict[str, list[str]] = {}
    extra: dict[str, dict[str, str | None]] = {name: {} for name in extras}
    known = frozenset(labels)
    for line in lines:
        tick()
        parts = [c.strip() for c in line.split("\t")] if tabbed else line.split()
        while parts and not parts[0]:
            parts.pop(0)
        if not parts or parts[0] not in known or parts[0] in cells:
            if cells and not line.strip():
                break
            continue
        label = parts[0]
        row = parts[1 : 1 + len(labels)]
        rest = parts[1 + len(labels) :]
        if len(row) < len(labels):
            continue
        cells[label] = row
        if "GPU NUMA ID" in extras and len(rest) > len(extras) - 1:
            # A blank cell sits before GPU NUMA ID; that column is the last one.
            rest = [*rest[: len(extras) - 1], rest[-1]]
        for name, cell in zip(extras, rest, strict=False):
            extra[name][label] = clean(cell)
    return Matrix(labels, cells, extra)


def looks_like(text: str) -> bool:
    matrix = read_matrix(text)
    if matrix is None or not matrix.cells:
        return False
    if "CPU Affinity" in matrix.extra or "Connection traversing" in text:
        return True
    values = {cell for row in matrix.cells.values() for cell in row}
    return bool(values) and all(_link(cell) is not None for cell in values)


def _link(cell: str) -> tuple[TopoLink, int | None] | None:
    nv = _NV.match(cell)
    if nv:
        return "NV#", whole(nv.group(1))
    link = _LINKS.get(cell)
    return (link, None) if link else None


def parse(text: str, name: str) -> HostSnapshot:
    matrix = read_matrix(text)
    notes: list[str] = []
    pairs: list[TopoPair] = []
    if matrix is None:
        return HostSnapshot(notes=[f"{name}: no topology matrix found"])
    for i, a in enumerate(matrix.labels):
        row = matrix.cells.get(a)
        if row is None:
            continue
        for j in range(i + 1, len(matrix.labels)):
            tick()
            b = matrix.labels[j]
            link = _link(row[j])
            if link is None:
                notes.append(f"{name}: unknown path {row[j]!r} between {a} and {b}")
                continue
            pairs.append(TopoPair(a=a, b=b, link=link[0], nvlinks=link[1]))
    cpu = matrix.extra.get("CPU Affinity", {})
    numa = matrix.extra.get("NUMA Affinity", {})
    gpus = [
        Gpu(
            index=whole(label[3:]),
            cpu_affinity=cpu.get(label),
            numa_node=whole_or_none(numa.get(label)),
        )
        for label in matrix.labels
        if label.startswith("GPU") and label in matrix.cells
    ]
    nics = [
        Nic(label=m.group(1), device=m.group(2))
        for line in lines(text)
        if (m := _NIC_LEGEND.match(line))
    ]
    nics += [
        Nic(label=label)
        for label in matrix.labels
        if not label.startswith("GPU") and label not in {n.label for n in nics}
    ]
    return HostSnapshot(
        gpus=gpus,
        topology=Topology(
            pairs=pairs,
            cpu_affinity={k: v for k, v in cpu.items() if k.startswith("GPU")},
            numa_affinity={k: v for k, v in numa.items() if k.startswith("GPU")},
            nics=nics,
        ),
        notes=notes,
    )
