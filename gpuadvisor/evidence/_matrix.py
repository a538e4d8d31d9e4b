"""The square device matrix ``nvidia-smi topo -m`` and ``topo -p2p`` both print, and what
their cells say. Shared by those two parsers and by detection, so it imports none of
the models.

Cells are tab separated; recent drivers wrap the header in ANSI underline escapes and
leave an empty cell before ``GPU NUMA ID``; Windows prints empty affinity cells. Text
whose tabs became spaces is read by whitespace, the affinity columns last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuadvisor.evidence._limits import MAX_DEVICES, TooMany, lines, tick
from gpuadvisor.nvidia.values import clean, strip_ansi, whole

if TYPE_CHECKING:
    from gpuadvisor.host.schema import TopoLink

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

#: ``topo -p2p`` cells: the values of :data:`gpuadvisor.host.schema.P2PStatus`, written out so
#: that detection does not import the models (tests/test_evidence_lazy.py keeps the two
#: equal).
P2P_STATUSES: frozenset[str] = frozenset({"X", "OK", "NS", "CNS", "GNS", "TNS", "DR", "U"})


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


def link(cell: str) -> tuple[TopoLink, int | None] | None:
    """A ``topo -m`` cell: the path between two devices, and the NVLink count of NV#."""
    nv = _NV.match(cell)
    if nv:
        return "NV#", whole(nv.group(1))
    found = _LINKS.get(cell)
    return (found, None) if found else None
