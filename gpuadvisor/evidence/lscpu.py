"""``lscpu``: sockets, cores, threads, NUMA nodes and their CPU lists.

Plain ``Key: value`` lines; lscpu from util-linux 2.38+ indents keys under section
titles, which changes nothing here.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence import _detect
from gpuadvisor.host.schema import CpuInfo, HostInfo, HostSnapshot
from gpuadvisor.nvidia.values import integer

_NODE = re.compile(r"^NUMA node(\d+) CPU\(s\)$")


def parse(text: str, name: str) -> HostSnapshot:
    fields = _detect.lscpu_fields(text)
    nodes = {
        f"node{m.group(1)}": value
        for key, value in fields.items()
        if (m := _NODE.match(key)) and value.strip()
    }
    return HostSnapshot(
        host=HostInfo(
            cpu=CpuInfo(
                model_name=fields.get("Model name") or None,
                logical_cpus=integer(fields.get("CPU(s)")),
                sockets=integer(fields.get("Socket(s)")),
                cores_per_socket=integer(fields.get("Core(s) per socket")),
                threads_per_core=integer(fields.get("Thread(s) per core")),
                numa_nodes=integer(fields.get("NUMA node(s)")),
                numa_node_cpus=dict(sorted(nodes.items())),
            )
        )
    )
