"""``nvidia-smi topo -m``: the device-to-device path matrix, CPU and NUMA affinity.

The matrix is read by :mod:`._matrix` (shared with ``topo -p2p``); the check that tells
this format from others is :func:`gpuadvisor.evidence._detect.topo`.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence._limits import lines, tick
from gpuadvisor.evidence._matrix import link, read_matrix
from gpuadvisor.host.schema import Gpu, HostSnapshot, Nic, Topology, TopoPair
from gpuadvisor.nvidia.values import whole, whole_or_none

_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


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
            path = link(row[j])
            if path is None:
                notes.append(f"{name}: unknown path {row[j]!r} between {a} and {b}")
                continue
            pairs.append(TopoPair(a=a, b=b, link=path[0], nvlinks=path[1]))
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
