"""``nvidia-smi topo -p2p <r|w|n|a|p>``: the peer-to-peer status matrix.

Status codes from nvidia-smi's legend: OK, CNS (chipset not supported), GNS (GPU not
supported), TNS (topology not supported), NS (not supported), DR (disabled by regkey),
U (unknown), X (self).

Each GPU row is also a GPU record (its index), as ``topo -m`` gives: a capture of the
matrix alone says how many GPUs the host has.
"""

from __future__ import annotations

from gpuadvisor.evidence._limits import tick
from gpuadvisor.evidence._matrix import P2P_STATUSES, read_matrix
from gpuadvisor.host.schema import Gpu, HostSnapshot, P2PPair, Topology
from gpuadvisor.nvidia.values import whole


def parse(text: str, name: str) -> HostSnapshot:
    matrix = read_matrix(text)
    pairs: list[P2PPair] = []
    notes: list[str] = []
    gpus: list[Gpu] = []
    if matrix is not None:
        gpus = [
            Gpu(index=whole(label[3:]))
            for label in matrix.labels
            if label.startswith("GPU") and label in matrix.cells
        ]
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
    return HostSnapshot(gpus=gpus, topology=Topology(p2p=pairs), notes=notes)
