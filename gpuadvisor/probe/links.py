"""GPU pairs and Xid events under ``gpuadvisor probe``.

Pairs (``nvidia-smi topo -m`` and ``topo -p2p r``):

- path: ``NV#`` when NVLink is up between the two (``nvmlDeviceGetNvLinkState`` per link,
  the peer from ``nvmlDeviceGetNvLinkRemotePciInfo``; links that end on a device that is
  not one of this host's GPUs are NVSwitch links, and two GPUs that both have them talk
  through the switch); otherwise ``nvmlDeviceGetTopologyCommonAncestor``, whose levels
  are what topo -m prints: SINGLE = PIX, MULTIPLE = PXB, HOSTBRIDGE = PHB, NODE = NODE,
  SYSTEM = SYS (INTERNAL, two GPUs on one board, reads as PIX);
- P2P: ``nvmlDeviceGetP2PStatus(READ)``, the capability CUDA peer access needs, in
  topo -p2p's codes.

Xid events: an NVML event set (``nvmlEventSetCreate``, ``nvmlDeviceRegisterEvents`` for
``nvmlEventTypeXidCriticalError`` where ``nvmlDeviceGetSupportedEventTypes`` has it,
polled with ``nvmlEventSetWait`` and a zero timeout once per sample).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any, Final

from gpuadvisor.host.schema import Event, P2PPair, P2PStatus, TopoLink, TopoPair
from gpuadvisor.nvidia.xid import classify
from gpuadvisor.probe.gpu import GpuProbe
from gpuadvisor.probe.nvml import (
    EVENT_XID_CRITICAL_ERROR,
    P2P_CAPS_INDEX_READ,
    GpuLost,
    NotAvailable,
    Nvml,
)

#: nvmlGpuTopologyLevel_t -> topo -m path.
TOPOLOGY_LEVELS: Final[dict[int, TopoLink]] = {
    0: "PIX",
    10: "PIX",
    20: "PXB",
    30: "PHB",
    40: "NODE",
    50: "SYS",
}
#: nvmlGpuP2PStatus_t -> topo -p2p code.
P2P_STATUSES: Final[dict[int, P2PStatus]] = {
    0: "OK",
    1: "CNS",
    2: "GNS",
    3: "TNS",
    4: "DR",
    5: "NS",
    6: "U",
}
#: Events read per poll at most, so an Xid storm cannot stall sampling.
MAX_EVENTS_PER_POLL: Final = 256


def nvlinks_between(a: GpuProbe, b: GpuProbe, local: set[str]) -> int:
    """Active NVLinks from ``a`` to ``b``: direct links, else the links both have to an
    NVSwitch (a peer that is not one of the ``local`` GPUs), as nvidia-smi counts NV#."""
    direct = sum(1 for peer in a.nvlink_peers if peer is not None and peer == b.bus_id)
    if direct:
        return direct
    switched_a = sum(1 for peer in a.nvlink_peers if peer is not None and peer not in local)
    switched_b = sum(1 for peer in b.nvlink_peers if peer is not None and peer not in local)
    return min(switched_a, switched_b)


def read_pairs(
    nvml: Nvml, gpus: Sequence[GpuProbe]
) -> tuple[list[TopoPair], list[P2PPair], list[str]]:
    """Path and P2P status of every pair of GPUs still answering; notes say what could
    not be read."""
    pairs: list[TopoPair] = []
    p2p: list[P2PPair] = []
    notes: list[str] = []
    alive = [g for g in gpus if g.lost is None]
    local = {g.bus_id for g in alive if g.bus_id}
    for a, b in combinations(alive, 2):
        where = f"{a.label}-{b.label}"
        try:
            links = nvlinks_between(a, b, local)
            if links:
                pairs.append(TopoPair(a=a.label, b=b.label, link="NV#", nvlinks=links))
            else:
                level = nvml.call("nvmlDeviceGetTopologyCommonAncestor", a.handle, b.handle)
                if isinstance(level, NotAvailable):
                    notes.append(f"nvml probe: topology {where}: {level}")
                elif level in TOPOLOGY_LEVELS:
                    pairs.append(TopoPair(a=a.label, b=b.label, link=TOPOLOGY_LEVELS[level]))
                else:
                    notes.append(f"nvml probe: topology {where}: unknown level {level!r}")
            status = nvml.call("nvmlDeviceGetP2PStatus", a.handle, b.handle, P2P_CAPS_INDEX_READ)
        except GpuLost as lost:
            notes.append(f"nvml probe: pair {where}: {lost}")
            continue
        if isinstance(status, NotAvailable):
            notes.append(f"nvml probe: P2P {where}: {status}")
        else:
            p2p.append(P2PPair(a=a.label, b=b.label, status=P2P_STATUSES.get(status, "U")))
    return pairs, p2p, notes


class XidWatch:
    """Xid events of the GPUs whose driver reports them, while the probe runs."""

    def __init__(self, nvml: Nvml, gpus: Sequence[GpuProbe]) -> None:
        self.nvml = nvml
        self.gpus = list(gpus)
        self.notes: list[str] = []
        self.watched: set[int] = set()
        self.event_set: Any = nvml.call("nvmlEventSetCreate")
        if isinstance(self.event_set, NotAvailable):
            self.notes.append(f"nvml probe: Xid events not watched: {self.event_set}")
            return
        for gpu in self.gpus:
            try:
                self._register(gpu)
            except GpuLost as lost:
                self.notes.append(f"nvml probe: Xid events not watched on {gpu.label}: {lost}")

    def _register(self, gpu: GpuProbe) -> None:
        if gpu.lost is not None:
            return
        supported = self.nvml.call("nvmlDeviceGetSupportedEventTypes", gpu.handle)
        if not isinstance(supported, NotAvailable) and not supported & EVENT_XID_CRITICAL_ERROR:
            supported = NotAvailable("nvmlDeviceGetSupportedEventTypes", "no Xid events")
        if not isinstance(supported, NotAvailable):
            supported = self.nvml.call(
                "nvmlDeviceRegisterEvents", gpu.handle, EVENT_XID_CRITICAL_ERROR, self.event_set
            )
        if isinstance(supported, NotAvailable):
            self.notes.append(f"nvml probe: Xid events not watched on {gpu.label}: {supported}")
        else:
            self.watched.add(gpu.index)

    @property
    def complete(self) -> bool:
        """Every GPU was watched: no event seen means none happened."""
        return bool(self.gpus) and self.watched == {g.index for g in self.gpus}

    def poll(self, now: Callable[[], str]) -> list[Event]:
        """The Xid events waiting in the set, without blocking."""
        if not self.watched:
            return []
        events: list[Event] = []
        for _ in range(MAX_EVENTS_PER_POLL):
            try:
                data = self.nvml.call("nvmlEventSetWait", self.event_set, 0)
                if isinstance(data, NotAvailable):  # Timeout: nothing waiting
                    break
                index = self.nvml.call("nvmlDeviceGetIndex", data.device)
            except GpuLost:
                break  # the sampling of that GPU reports the loss
            if not data.eventType & EVENT_XID_CRITICAL_ERROR:
                continue
            gpu = next((g for g in self.gpus if g.index == index), None)
            code = int(data.eventData)
            label = gpu.label if gpu else "an unknown GPU"
            events.append(
                Event(
                    kind="xid",
                    code=code,
                    pci_bus_id=gpu.bus_id if gpu else None,
                    time=now(),
                    text=f"NVML Xid {code} event on {label}",
                    xid_class=classify(code),
                    source="nvml event set",
                )
            )
        return events

    def close(self) -> None:
        if not isinstance(self.event_set, NotAvailable):
            with contextlib.suppress(GpuLost):
                self.nvml.call("nvmlEventSetFree", self.event_set)
