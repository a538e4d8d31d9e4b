"""``nvidia-smi topo -p2p <r|w|n|a|p>``: the peer-to-peer status matrix.

Status codes from nvidia-smi's legend: OK, CNS (chipset not supported), GNS (GPU not
supported), TNS (topology not supported), NS (not supported), DR (disabled by regkey),
U (unknown), X (self).
"""

from __future__ import annotations

from gpuadvisor.evidence._limits import tick
from gpuadvisor.evidence._matrix import P2P_STATUSES, read_matrix
from gpuadvisor.host.schema import HostSnapshot, P2PPair, Topology


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
                if status in P2P_STATUSES:
                    pairs.append(P2PPair(a=a, b=b, status=status))
                else:
                    notes.append(f"{name}: unknown P2P status {status!r} between {a} and {b}")
    return HostSnapshot(topology=Topology(p2p=pairs), notes=notes)
