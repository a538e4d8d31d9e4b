"""``numactl --show``: the NUMA policy and CPU/memory binding of the shell that ran it
(and so of the processes it starts)."""

from __future__ import annotations

from gpuadvisor.evidence._limits import lines
from gpuadvisor.evidence._values import cpu_list
from gpuadvisor.host import HostInfo, HostSnapshot, NumaBinding

_KEYS = frozenset({"policy", "preferred node", "physcpubind", "cpubind", "nodebind", "membind"})


def _fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in lines(text):
        key, colon, value = line.partition(":")
        if colon and key.strip() in _KEYS:
            fields[key.strip()] = value.strip()
    return fields


def looks_like(text: str) -> bool:
    fields = _fields(text)
    return "policy" in fields and ("physcpubind" in fields or "membind" in fields)


def parse(text: str, name: str) -> HostSnapshot:
    fields = _fields(text)

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
