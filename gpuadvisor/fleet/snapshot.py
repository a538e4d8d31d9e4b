"""One host's reading -> a ``gpuadvisor/host/v1`` snapshot the engine judges as it judges
any evidence.

Every value is a window aggregate, and the snapshot says so: its ``sources`` are the
queries that answered for the host (kind ``prometheus-query``, each named by its
PromQL and window, with the sha256 of Prometheus's answer), its ``provenance`` names
the queries behind each part, and the GPUs carry ``samples`` (one per sub-window) and
clock-event shares (``fraction``), which the facts read as a window, not a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpuadvisor.fleet.readings import HostReading
from gpuadvisor.host.schema import (
    Conflict,
    ConflictValue,
    CoreUtil,
    CpuInfo,
    CpuUtil,
    Disk,
    Event,
    Gpu,
    HostInfo,
    HostSnapshot,
    NetIface,
    Source,
)
from gpuadvisor.nvidia.xid import classify

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Context:
    """What every host of a run shares: where the queries went and what they were."""

    url: str
    window: str
    at_iso: str
    #: query name -> (sha256 of its answer, the part of host/v1 it fills)
    queries: dict[str, tuple[str, str]]

    def source_name(self, query: str) -> str:
        return f"prometheus: {query}"


def snapshot_of(reading: HostReading, context: Context) -> HostSnapshot:
    notes = [
        f"window aggregates over {context.window} ending {context.at_iso}, from "
        f"{context.url} (gpuadvisor fleet)",
        *reading.notes,
    ]
    answered = sorted(reading.answered)
    sources = [
        Source(file=context.source_name(q), kind="prometheus-query", sha256=context.queries[q][0])
        for q in answered
        if q in context.queries
    ]
    provenance: dict[str, list[str]] = {}
    for q in answered:
        if q in context.queries:
            provenance.setdefault(context.queries[q][1], []).append(context.source_name(q))
    gpus = [_gpu(reading, index, notes) for index in _gpu_order(reading)]
    drivers = sorted(reading.drivers)
    conflicts = []
    if len(drivers) > 1:
        conflicts.append(
            Conflict(
                field="driver_version",
                values=[
                    ConflictValue(file=f"prometheus ({reading.host})", value=d) for d in drivers
                ],
            )
        )
    return HostSnapshot(
        sources=sources,
        driver_version=drivers[-1] if drivers else None,
        gpus=gpus,
        events=_events(reading, gpus, context),
        host=_host(reading, notes),
        conflicts=conflicts,
        notes=notes,
        provenance={part: sorted(files) for part, files in sorted(provenance.items())},
    )


def _gpu_order(reading: HostReading) -> list[str]:
    def key(index: str) -> tuple[int, str]:
        return (int(index), "") if index.isdigit() and len(index) < 6 else (1 << 30, index)

    return sorted(reading.gpus, key=key)


def _gpu(reading: HostReading, index: str, notes: list[str]) -> Gpu:
    data = dict(reading.gpus[index])
    points = reading.samples.get(index)
    if points:
        first = min(points)
        data["samples"] = [
            {"t_s": round(stamp - first, 3), **values} for stamp, values in sorted(points.items())
        ]
    return _validated(Gpu, data, f"GPU {index}", notes)


def _events(reading: HostReading, gpus: list[Gpu], context: Context) -> list[Event]:
    bus = {str(g.index): g.pci_bus_id for g in gpus if g.index is not None}
    events = []
    for index, seen in sorted(reading.xids.items()):
        codes = {seen.get("max_over_time", 0), seen.get("last_over_time", 0)} - {0}
        for code in sorted(codes):
            if code < 0:
                continue
            how = "the last" if code == seen.get("last_over_time") else "the highest"
            events.append(
                Event(
                    kind="xid",
                    code=code,
                    pci_bus_id=bus.get(index),
                    text=f"DCGM_FI_DEV_XID_ERRORS on GPU {index}: {how} Xid it reported "
                    f"over {context.window} was {code}",
                    xid_class=classify(code),
                    source=f"prometheus ({reading.host})",
                )
            )
    return events


def _host(reading: HostReading, notes: list[str]) -> HostInfo:
    node = reading.node
    cpu: dict[str, Any] = {}
    if "logical_cpus" in node and node["logical_cpus"] >= 1:
        cpu["logical_cpus"] = round(node["logical_cpus"])
    util: dict[str, Any] = {k: node[k] for k in ("mean_busy_pct", "iowait_pct") if k in node}
    # Only the saturated CPUs and the least busy one are asked for (a fleet's every core
    # would be most of the answer): enough for the facts, which count the first and
    # read the lowest.
    util["per_core"] = [CoreUtil(cpu=c, busy_pct=b) for c, b in sorted(reading.cores.items())]
    disks = []
    for device, values in sorted(reading.disks.items()):
        disk = {"device": device, **{k: round(v, 3) for k, v in values.items()}}
        disks.append(_validated(Disk, disk, f"disk {device}", notes))
    nets = []
    for device, values in sorted(reading.nets.items()):
        nets.append(_validated(NetIface, _net(device, values), f"interface {device}", notes))
    return HostInfo(
        cpu=_validated(CpuInfo, cpu, "CPUs", notes),
        cpu_util=_validated(CpuUtil, util, "CPU use", notes),
        disks=disks,
        net=nets,
    )


def _net(device: str, values: dict[str, float]) -> dict[str, Any]:
    """sar -n DEV's figures from byte rates: kB/s (of 1024 bytes, as sar counts) and
    %ifutil, the busier direction against the line rate (full duplex)."""
    data: dict[str, Any] = {"iface": device}
    rx, tx, speed = values.get("rx_Bps"), values.get("tx_Bps"), values.get("speed_Bps")
    if rx is not None:
        data["rx_kBps"] = round(rx / 1024, 3)
    if tx is not None:
        data["tx_kBps"] = round(tx / 1024, 3)
    busiest = max((v for v in (rx, tx) if v is not None), default=None)
    if busiest is not None and speed:
        data["util_pct"] = round(min(100.0, 100.0 * busiest / speed), 3)
    return data


def _validated(model: type[M], data: dict[str, Any], what: str, notes: list[str]) -> M:
    """``model`` of ``data``; a value host/v1 refuses (out of its bounds) is dropped with
    a note, never a failed run."""
    for _ in range(50):
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = [str(p) for p in error["loc"]]
            notes.append(f"{what}: {'.'.join(loc)} dropped: {error['msg']}")
            if not _drop(data, error["loc"]):
                break
    return model()


def _holds(target: Any, step: Any) -> bool:
    if isinstance(target, dict):
        return step in target
    return isinstance(target, list) and isinstance(step, int) and 0 <= step < len(target)


def _drop(data: Any, loc: tuple[Any, ...]) -> bool:
    """Remove the value at ``loc``; False when there is none."""
    if not loc:
        return False
    target = data
    for step in loc[:-1]:
        if not _holds(target, step):
            return False
        target = target[step]
    if not _holds(target, loc[-1]):
        return False
    del target[loc[-1]]
    return True
