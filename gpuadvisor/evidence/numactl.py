"""``numactl --show``: the NUMA policy and CPU/memory binding of the shell that ran it
(and so of the processes it starts)."""

from __future__ import annotations

from gpuadvisor.evidence import _detect
from gpuadvisor.host.schema import HostInfo, HostSnapshot, NumaBinding
from gpuadvisor.nvidia.values import cpu_list


def parse(text: str, name: str) -> HostSnapshot:
    fields = _detect.numactl_fields(text)

    def ids(key: str) -> list[int] | None:
        value = fields.get(key)
        return cpu_list(value) if value else None

    return HostSnapshot(
        host=HostInfo(
            numa_binding=NumaBinding(
                policy=fields.get("policy") or None,
                physcpubind=ids("physcpubind"),
                cpubind=ids("cpubind"),
                nodebind=ids("nodebind"),
                membind=ids("membind"),
            )
        )
    )
