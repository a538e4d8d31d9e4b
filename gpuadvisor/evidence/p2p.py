"""``nvidia-smi topo -p2p <r|w|n|a|p>``: the peer-to-peer status matrix.

Status codes from nvidia-smi's legend: OK, CNS (chipset not supported), GNS (GPU not
supported), TNS (topology not supported), NS (not supported), DR (disabled by regkey),
U (unknown), X (self).
"""

from __future__ import annotations

from typing import get_args

from gpuadvisor.evidence._limits import tick
from gpuadvisor.evidence.topo import read_matrix
from gpuadvisor.host import HostSnapshot, P2PPair, P2PStatus, Topology

_STATUSES: frozenset[str] = frozenset(get_args(P2PStatus))


def looks_like(text: str) -> bool:
    matrix = read_matrix(text)
    if matrix is None or not matrix.cells or "CPU Affinity" in matrix.extra:
        return False
    values = {cell for row in matrix.cells.values() for cell in row}
    return "Status Ok" in text or (values <= _STATUSES and values != {"X"})


def parse(text: str, name: str) -> HostSnapshot:
    matrix = read_matrix(text)
    pairs: list[P2PPair] = []
    notes: list[str] = []
    if matrix is not None:
        for i, a in enumerate(matrix.labels):
            row = matrix.cells.get(a)
            if row is None:
                continue
            for j in range(i + 1, len(matrix.labels)):
                tick()
                b = matrix.labels[j]
                status = row[j]
                if status in _STATUSES:
                    pairs.append(P2PPair(a=a, b=b, status=status))
                else:
                    notes.append(f"{name}: unknown P2P status {status!r} between {a} and {b}")
    return HostSnapshot(topology=Topology(p2p=pairs), notes=notes)
