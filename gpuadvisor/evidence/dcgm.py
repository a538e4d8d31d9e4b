"""A dcgm-exporter scrape: Prometheus text format with ``DCGM_FI_*`` gauges/counters.

Parsed with ``prometheus_client``'s own parser. GPUs are told apart by the ``UUID``
label (falling back to ``pci_bus_id`` and the ``gpu`` index); samples that carry a
``GPU_I_ID`` label describe a MIG instance and are kept as such. A scrape that names
several hosts (``Hostname`` label) is still read as one host, with a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.errors import InputError
from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.host.schema import (
    THROTTLE_BITS,
    Conflict,
    ConflictValue,
    Event,
    Gpu,
    HostSnapshot,
    MigDevice,
)
from gpuadvisor.nvidia.values import MAX_WHOLE, BadValue, bus_id, pstate, whole_or_none
from gpuadvisor.nvidia.xid import classify


def _int(value: float) -> int:
    # Prometheus text allows NaN and +Inf; a count or an id cannot be either.
    if not math.isfinite(value) or abs(value) > MAX_WHOLE:
        raise BadValue(repr(value), "is not a whole number")
    return round(value)


def _bool(value: float) -> bool:
    return value != 0


#: Metric -> (place in Gpu, converter). Field ids from DCGM's dcgm_fields.h. Public:
#: ``gpuadvisor.fleet`` reads the same fields from Prometheus through this table.
METRICS: dict[str, tuple[tuple[str, ...], Callable[[float], Any]]] = {
    "DCGM_FI_DEV_GPU_UTIL": (("utilisation", "gpu_pct"), float),
    "DCGM_FI_DEV_MEM_COPY_UTIL": (("utilisation", "memory_pct"), float),
    "DCGM_FI_DEV_ENC_UTIL": (("utilisation", "encoder_pct"), float),
    "DCGM_FI_DEV_DEC_UTIL": (("utilisation", "decoder_pct"), float),
    "DCGM_FI_DEV_SM_CLOCK": (("clocks", "sm_mhz"), float),
    "DCGM_FI_DEV_MEM_CLOCK": (("clocks", "mem_mhz"), float),
    "DCGM_FI_DEV_MAX_SM_CLOCK": (("clocks", "max_sm_mhz"), float),
    "DCGM_FI_DEV_MAX_MEM_CLOCK": (("clocks", "max_mem_mhz"), float),
    "DCGM_FI_DEV_GPU_TEMP": (("temperature", "gpu_c"), float),
    "DCGM_FI_DEV_MEMORY_TEMP": (("temperature", "memory_c"), float),
    "DCGM_FI_DEV_SLOWDOWN_TEMP": (("temperature", "slowdown_c"), float),
    "DCGM_FI_DEV_SHUTDOWN_TEMP": (("temperature", "shutdown_c"), float),
    "DCGM_FI_DEV_GPU_MAX_OP_TEMP": (("temperature", "max_operating_c"), float),
    "DCGM_FI_DEV_POWER_USAGE": (("power", "draw_w"), float),
    "DCGM_FI_DEV_POWER_MGMT_LIMIT": (("power", "limit_w"), float),
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": (("power", "enforced_limit_w"), float),
    "DCGM_FI_DEV_FB_TOTAL": (("memory_total_mib",), _int),
    "DCGM_FI_DEV_FB_USED": (("memory_used_mib",), _int),
    "DCGM_FI_DEV_FB_RESERVED": (("memory_reserved_mib",), _int),
    "DCGM_FI_DEV_PCIE_LINK_GEN": (("pcie", "gen_current"), _int),
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": (("pcie", "gen_max"), _int),
    "DCGM_FI_DEV_PCIE_LINK_WIDTH": (("pcie", "width_current"), _int),
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": (("pcie", "width_max"), _int),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": (("pcie", "replay_counter"), _int),
    "DCGM_FI_DEV_PSTATE": (("pstate",), lambda v: pstate(str(_int(v)))),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": (("ecc_errors", "volatile_correctable"), _int),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": (("ecc_errors", "volatile_uncorrectable"), _int),
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": (("ecc_errors", "aggregate_correctable"), _int),
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": (("ecc_errors", "aggregate_uncorrectable"), _int),
    "DCGM_FI_DEV_RETIRED_SBE": (("retired_pages", "single_bit"), _int),
    "DCGM_FI_DEV_RETIRED_DBE": (("retired_pages", "double_bit"), _int),
    "DCGM_FI_DEV_RETIRED_PENDING": (("retired_pages", "pending"), _bool),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": (("remapped_rows", "correctable"), _int),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": (("remapped_rows", "uncorrectable"), _int),
    "DCGM_FI_DEV_ROW_REMAP_PENDING": (("remapped_rows", "pending"), _bool),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": (("remapped_rows", "failure"), _bool),
}
#: The clock event reasons bitmask, under its old and its new name.
REASON_METRICS = ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")


def parse(text: str, name: str) -> HostSnapshot:
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:  # a dependency missing from the installation: not a bug
        raise InputError(
            "reading a dcgm-exporter scrape needs the package prometheus-client, a "
            "dependency of gpuadvisor that is missing from this installation",
            file=name,
            hint="pip install prometheus-client, or reinstall gpuadvisor "
            "(`pip install --force-reinstall gpuadvisor`)",
        ) from None
    try:
        # The parser names counter samples <family>_total; DCGM's names are the families'.
        samples = [
            (family.name, s.labels, s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise InputError(f"invalid Prometheus text format: {exc}", file=name) from None
    scrape = _Scrape(name)
    for metric, labels, value in samples:
        try:
            scrape.add(metric, labels, value)
        except BadValue as exc:
            raise InputError(
                f"dcgm-prom: {exc.shown} {exc.problem}", file=name, field=metric
            ) from None
    return scrape.snapshot()


@dataclass
class _Scrape:
    """What the samples say, per GPU, as they are read."""

    name: str
    gpus: dict[str, dict[str, Any]] = field(default_factory=dict)
    migs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    drivers: dict[str, str] = field(default_factory=dict)
    hosts: set[str] = field(default_factory=set)
    events: list[Event] = field(default_factory=list)

    def add(self, metric: str, labels: dict[str, str], value: float) -> None:
        key = labels.get("UUID") or labels.get("pci_bus_id") or labels.get("gpu")
        if not key or not metric.startswith("DCGM_FI_"):
            return
        host = labels.get("Hostname")
        if host:
            self.hosts.add(host)
        if labels.get("DCGM_FI_DRIVER_VERSION"):
            self.drivers.setdefault(labels["DCGM_FI_DRIVER_VERSION"], host or self.name)
        if key not in self.gpus:
            check_gpus(len(self.gpus) + 1)
        data = self.gpus.setdefault(key, _identity(labels))
        if labels.get("GPU_I_ID"):
            _mig(self.migs.setdefault(key, {}), labels, metric, value)
            return
        _apply(data, metric, value)
        if metric == "DCGM_FI_DEV_XID_ERRORS" and value > 0:
            code = _int(value)
            self.events.append(
                Event(
                    kind="xid",
                    code=code,
                    pci_bus_id=data.get("pci_bus_id"),
                    text=f"DCGM_FI_DEV_XID_ERRORS: last Xid on this GPU was {code}",
                    xid_class=classify(code),
                    source=self.name,
                )
            )

    def snapshot(self) -> HostSnapshot:
        for key, instances in self.migs.items():
            self.gpus[key]["mig_devices"] = [
                MigDevice(**fields) for _, fields in sorted(instances.items())
            ]
        notes = []
        if len(self.hosts) > 1:
            notes.append(
                f"{self.name}: the scrape names {len(self.hosts)} hosts "
                f"({', '.join(sorted(self.hosts))}); read as one"
            )
        conflicts = []
        if len(self.drivers) > 1:
            conflicts.append(
                Conflict(
                    field="driver_version",
                    values=[
                        ConflictValue(file=f"{self.name} ({where})", value=v)
                        for v, where in self.drivers.items()
                    ],
                )
            )
        return HostSnapshot(
            driver_version=next(iter(self.drivers), None),
            gpus=[Gpu.model_validate(data) for data in self.gpus.values()],
            events=self.events,
            notes=notes,
            conflicts=conflicts,
        )


def _identity(labels: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    index = whole_or_none(labels.get("gpu"))
    if index is not None:
        data["index"] = index
    for key, label in (("uuid", "UUID"), ("name", "modelName"), ("serial", "DCGM_FI_DEV_SERIAL")):
        if labels.get(label):
            data[key] = labels[label]
    if labels.get("pci_bus_id"):
        data["pci_bus_id"] = bus_id(labels["pci_bus_id"])
    return data


def _apply(data: dict[str, Any], metric: str, value: float) -> None:
    if metric in REASON_METRICS:
        mask = _int(value)
        data["throttle_reasons"] = {
            reason: {"active": bool(mask & bit)} for reason, bit in THROTTLE_BITS.items()
        }
        return
    entry = METRICS.get(metric)
    if entry is None:
        return
    place, convert = entry
    target = data
    for step in place[:-1]:
        target = target.setdefault(step, {})
    target[place[-1]] = convert(value)


def _mig(
    instances: dict[str, dict[str, Any]], labels: dict[str, str], metric: str, value: float
) -> None:
    fields = instances.setdefault(
        labels["GPU_I_ID"],
        {
            "gpu_instance_id": whole_or_none(labels["GPU_I_ID"]),
            "profile": labels.get("GPU_I_PROFILE") or None,
        },
    )
    if metric == "DCGM_FI_DEV_FB_USED":
        fields["memory_used_mib"] = _int(value)
    elif metric == "DCGM_FI_DEV_FB_TOTAL":
        fields["memory_total_mib"] = _int(value)
