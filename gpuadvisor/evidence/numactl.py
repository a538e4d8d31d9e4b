"""``numactl --show``: the NUMA policy and CPU/memory binding of the shell that ran it
(and so of the processes it starts); ``numactl --hardware``: the host's NUMA nodes and
the CPUs of each. A capture may hold either or both (``numactl --show; numactl -H``).

``--hardware`` also prints each node's memory size and free memory and the node
distance table; host/v1 has no field for those, so they are named in a note.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._limits import lines
from gpuadvisor.host.schema import CpuInfo, HostInfo, HostSnapshot, NumaBinding
from gpuadvisor.nvidia.values import cpu_list, whole

_AVAILABLE = re.compile(_detect.NUMACTL_AVAILABLE)
_NODE = re.compile(_detect.NUMACTL_NODE)


def parse(text: str, name: str) -> HostSnapshot:
    fields = _detect.numactl_fields(text)

    def ids(key: str) -> list[int] | None:
        value = fields.get(key)
        return cpu_list(value) if value else None

    count, cpus, dropped = _hardware(text)
    notes = (
        [
            f"{name}: numactl --hardware {' and '.join(dropped)} not kept "
            "(host/v1 has no field for them)"
        ]
        if dropped
        else []
    )
    return HostSnapshot(
        host=HostInfo(
            cpu=CpuInfo(numa_nodes=count, numa_node_cpus=cpus),
            numa_binding=NumaBinding(
                policy=fields.get("policy") or None,
                physcpubind=ids("physcpubind"),
                cpubind=ids("cpubind"),
                nodebind=ids("nodebind"),
                membind=ids("membind"),
            ),
        ),
        notes=notes,
    )


def _hardware(text: str) -> tuple[int | None, dict[str, str], list[str]]:
    """``--hardware``'s node count, each node's CPUs (``node0`` -> ``0-23,48-71``, as
    lscpu writes them, so that the two agree), and what was read but cannot be kept."""
    count: int | None = None
    cpus: dict[str, str] = {}
    sizes = distances = False
    for line in lines(text):
        available = _AVAILABLE.match(line)
        if available:
            count = whole(available.group("count")) or None
            continue
        node = _NODE.match(line.rstrip())
        if node is None:
            distances |= line.startswith("node distances:")
            continue
        if node.group("what") != "cpus":
            sizes = True
            continue
        listed = cpu_list(node.group("value"))
        if listed:  # a node with memory only (CXL, HBM) lists no CPU
            cpus[f"node{whole(node.group('node'))}"] = cpu_ranges(listed)
    dropped = [
        what for what, seen in (("node memory sizes", sizes), ("node distances", distances)) if seen
    ]
    return count, dict(sorted(cpus.items())), dropped


def cpu_ranges(ids: list[int]) -> str:
    """``[0, 1, 2, 3, 8, 10, 11]`` -> ``"0-3,8,10,11"``: util-linux's cpulist_create,
    which lscpu prints ``NUMA nodeN CPU(s)`` with (a run of two is written as two)."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j == i:
            parts.append(str(ordered[i]))
        elif j == i + 1:
            parts.append(f"{ordered[i]},{ordered[j]}")
        else:
            parts.append(f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
