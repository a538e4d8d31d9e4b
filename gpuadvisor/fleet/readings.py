"""Prometheus's answers, folded into what each host showed: :class:`HostReading`.

A reading is plain data (dicts of numbers), so it travels to the worker processes that
judge the hosts; :mod:`gpuadvisor.fleet.snapshot` turns it into a host/v1 snapshot
there. Series are told apart by the host label (``instance`` by default, its port taken
off, so that dcgm-exporter on :9400 and node-exporter on :9100 of one machine are one
host) and dcgm-exporter's ``gpu`` index.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from gpuadvisor.evidence.dcgm import METRICS
from gpuadvisor.fleet.client import Answer, Series
from gpuadvisor.fleet.queries import GPU_LABEL, HOLDING_FROM, REASONS, REPLAY_RATE, Query
from gpuadvisor.nvidia.values import BadValue, bus_id

_PORT: Final = re.compile(r"^(.+?)(?::\d+)?$")
#: Utilisation and CPU figures are percentages; a rate over a window can come out a
#: hair above 100 from counter timing.
_PERCENT: Final = (0.0, 100.0)


def host_key(labels: dict[str, str], label: str) -> str | None:
    """The host a series belongs to; for ``instance`` without its port."""
    value = labels.get(label)
    if not value:
        return None
    if label == "instance":
        found = _PORT.match(value)
        return found.group(1) if found else value
    return value


@dataclass
class HostReading:
    """What the queries said about one host, before it becomes a snapshot."""

    host: str
    gpus: dict[str, dict[str, Any]] = field(default_factory=dict)
    samples: dict[str, dict[float, dict[str, float]]] = field(default_factory=dict)
    xids: dict[str, dict[str, int]] = field(default_factory=dict)
    node: dict[str, float] = field(default_factory=dict)
    cores: dict[int, float] = field(default_factory=dict)
    disks: dict[str, dict[str, float]] = field(default_factory=dict)
    nets: dict[str, dict[str, float]] = field(default_factory=dict)
    drivers: set[str] = field(default_factory=set)
    #: The host label's values on this host's dcgm-exporter series (with the port).
    names: set[str] = field(default_factory=set)
    #: Reasons bitmask metric -> GPUs whose bitmask reached HOLDING_FROM.
    flagged: dict[str, set[str]] = field(default_factory=dict)
    #: Names of the queries that answered for this host.
    answered: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def gpu(self, index: str) -> dict[str, Any]:
        entry = self.gpus.get(index)
        if entry is None:
            entry = self.gpus[index] = {}
            if index.isascii() and index.isdigit() and len(index) < 6:
                entry["index"] = int(index)
        return entry


@dataclass
class Fold:
    """Folds answers into readings, one host at a time; hosts are made on first sight."""

    host_label: str
    node_host_label: str
    hosts: dict[str, HostReading] = field(default_factory=dict)
    #: Series that named no host (the host label missing), by query name.
    unlabelled: dict[str, int] = field(default_factory=dict)

    def reading(self, host: str) -> HostReading:
        found = self.hosts.get(host)
        if found is None:
            found = self.hosts[host] = HostReading(host)
        return found

    def add(self, query: Query, answer: Answer, *, only: set[str] | None = None) -> None:
        """Fold ``answer`` to ``query`` in; with ``only``, hosts outside it are skipped."""
        label = self.node_host_label if query.role == "node" else self.host_label
        for series in answer.series:
            host = host_key(series.labels, label)
            if host is None:
                self.unlabelled[query.name] = self.unlabelled.get(query.name, 0) + 1
                continue
            if only is not None and host not in only:
                continue
            reading = self.reading(host)
            if query.role == "identity":
                reading.names.add(series.labels[label])
            if _put(reading, query, series):
                reading.answered.add(query.name)

    def flagged(self, only: set[str]) -> dict[str, list[str]]:
        """Reasons bitmask metric -> the host label's values of the hosts in ``only``
        whose GPUs need the shares."""
        found: dict[str, set[str]] = {}
        for host, reading in self.hosts.items():
            if host not in only:
                continue
            for metric, gpus in reading.flagged.items():
                if gpus:
                    found.setdefault(metric, set()).update(reading.names)
        return {metric: sorted(names) for metric, names in found.items()}


def _put(reading: HostReading, query: Query, series: Series) -> bool:
    """Put one series' value where it belongs; False when it held no usable value."""
    labels = series.labels
    if query.role == "identity":
        _identity(reading, labels)
        return True
    if query.scope == "gpu":
        index = labels.get(GPU_LABEL)
        if not index:
            return False
        if query.role == "sample":
            points = reading.samples.setdefault(index, {})
            for stamp, value in series.values:
                if math.isfinite(value):
                    points.setdefault(stamp, {})[query.target] = value
            return bool(points)
        value = series.value
        if not math.isfinite(value):
            return False
        return _gpu_value(reading, index, query, value)
    value = series.value
    if not math.isfinite(value) or value < 0:
        return False
    return _node_value(reading, query, labels, value)


def _identity(reading: HostReading, labels: dict[str, str]) -> None:
    index = labels.get(GPU_LABEL)
    if not index:
        return
    gpu = reading.gpu(index)
    uuid = labels.get("UUID")
    if uuid and gpu.get("uuid") not in (None, uuid):
        reading.notes.append(
            f"GPU {index} of {reading.host} is reported under two UUIDs "
            f"({gpu['uuid']}, {uuid}): two exporters share the host label; the first is kept"
        )
        return
    if uuid:
        gpu["uuid"] = uuid
    if labels.get("modelName"):
        gpu["name"] = labels["modelName"]
    if labels.get("pci_bus_id"):
        try:
            gpu["pci_bus_id"] = bus_id(labels["pci_bus_id"])
        except BadValue:
            reading.notes.append(
                f"GPU {index}: pci_bus_id {labels['pci_bus_id']!r} is not a bus id"
            )
    if labels.get("DCGM_FI_DRIVER_VERSION"):
        reading.drivers.add(labels["DCGM_FI_DRIVER_VERSION"])


def _gpu_value(reading: HostReading, index: str, query: Query, value: float) -> bool:
    gpu = reading.gpu(index)
    if query.role == "reason":
        gpu.setdefault("throttle_reasons", {})[query.target] = {
            "fraction": round(min(1.0, max(0.0, value)), 4)
        }
        return True
    if query.role == "mask":
        if value >= HOLDING_FROM:
            reading.flagged.setdefault(query.target, set()).add(index)
        else:  # no reason that holds clocks was active at any time in the window
            reasons = gpu.setdefault("throttle_reasons", {})
            for reason in REASONS:
                reasons.setdefault(reason, {"fraction": 0.0})
        return True
    if query.role == "xid":
        if abs(value) > 2**31:
            return False
        reading.xids.setdefault(index, {})[query.target] = round(value)
        return True
    if query.target in ("gpu_p95_pct", "gpu_min_pct"):
        _place(gpu, ("utilisation", query.target), _clamp(value, _PERCENT))
        return True
    if query.target == REPLAY_RATE:
        _place(gpu, ("pcie", REPLAY_RATE), round(max(0.0, value), 3))
        return True
    place, convert = METRICS[query.target]
    if place[0] == "utilisation":
        value = _clamp(value, _PERCENT)
    try:
        _place(gpu, place, convert(value))
    except BadValue as exc:
        reading.notes.append(f"GPU {index}: {query.name}: {exc.shown} {exc.problem}")
        return False
    return True


def _node_value(reading: HostReading, query: Query, labels: dict[str, str], value: float) -> bool:
    if query.scope == "host":
        reading.node[query.target] = (
            value if query.target == "logical_cpus" else _clamp(value, _PERCENT)
        )
        return True
    if query.scope == "core":
        cpu = labels.get("cpu", "")
        if not (cpu.isascii() and cpu.isdigit() and len(cpu) < 7):
            return False
        reading.cores[int(cpu)] = _clamp(value, _PERCENT)
        return True
    device = labels.get("device")
    if not device:
        return False
    table = reading.disks if query.scope == "disk" else reading.nets
    table.setdefault(device, {})[query.target] = value
    return True


def _place(data: dict[str, Any], place: Iterable[str], value: Any) -> None:
    *path, last = place
    target = data
    for step in path:
        target = target.setdefault(step, {})
    target[last] = value


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return round(min(bounds[1], max(bounds[0], value)), 3)
