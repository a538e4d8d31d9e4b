"""A host snapshot's per-GPU readings, as the decision carries them to the reports.

Pure: host/v1 models in, :class:`~gpuadvisor.decision.model.MeasuredGpu` out. Each value names
the evidence file(s) it came from (the snapshot's provenance), so a report can show
"88 °C (nvidia-smi-q.txt)" next to the conclusion it supports.
"""

from __future__ import annotations

from gpuadvisor.decision.model import FactValue, MeasuredGpu, Sample
from gpuadvisor.decision.words import format_share
from gpuadvisor.host.schema import Gpu, HostSnapshot


def _source(snapshot: HostSnapshot, part: str) -> str:
    files = snapshot.provenance.get(f"gpus.{part}") or [s.file for s in snapshot.sources]
    return ", ".join(files)


def _values(gpu: Gpu, snapshot: HostSnapshot) -> tuple[FactValue, ...]:
    rows: list[tuple[str, float | int | bool | str | None, str, str]] = [
        ("memory total", _gib(gpu.memory_total_mib), "GiB", "memory_total_mib"),
        ("memory used", _gib(gpu.memory_used_mib), "GiB", "memory_used_mib"),
        ("utilisation", gpu.utilisation.gpu_pct, "%", "utilisation"),
        ("temperature", gpu.temperature.gpu_c, "°C", "temperature"),
        ("slowdown temperature", gpu.temperature.slowdown_c, "°C", "temperature"),
        ("shutdown temperature", gpu.temperature.shutdown_c, "°C", "temperature"),
        ("power draw", gpu.power.draw_w, "W", "power"),
        ("power limit", gpu.power.enforced_limit_w or gpu.power.limit_w, "W", "power"),
        ("SM clock", gpu.clocks.sm_mhz, "MHz", "clocks"),
        ("max SM clock", gpu.clocks.max_sm_mhz, "MHz", "clocks"),
        ("PCIe generation", _pair(gpu.pcie.gen_current, gpu.pcie.gen_max), "current/max", "pcie"),
        (
            "PCIe width",
            _pair(gpu.pcie.width_current, gpu.pcie.width_max),
            "lanes current/max",
            "pcie",
        ),
        ("ECC mode", gpu.ecc_mode, "", "ecc_mode"),
        ("persistence mode", gpu.persistence_mode, "", "persistence_mode"),
        ("clock-event reasons active", _reasons(gpu), "", "throttle_reasons"),
    ]
    return tuple(
        FactValue(name=name, value=value, unit=unit, source=_source(snapshot, part))
        for name, value, unit, part in rows
        if value is not None
    )


def _gib(mib: int | None) -> float | None:
    return None if mib is None else round(mib / 1024, 2)


def _pair(current: int | None, maximum: int | None) -> str | None:
    if current is None and maximum is None:
        return None
    return f"{current if current is not None else '?'}/{maximum if maximum is not None else '?'}"


def _reasons(gpu: Gpu) -> str | None:
    """The active clock-event reasons, each with what it rests on: the share of a sampled
    window (dmon -s v, a probe) or the one snapshot that showed it active."""
    active = []
    for name, state in gpu.throttle_reasons.items():
        if state.fraction is not None and state.fraction > 0:
            active.append(f"{name} ({format_share(state.fraction)} of the window)")
        elif state.active:
            active.append(f"{name} (in the snapshot)")
    return ", ".join(active) if active else None


def measured_gpus(snapshot: HostSnapshot | None) -> tuple[MeasuredGpu, ...]:
    if snapshot is None:
        return ()
    gpus = []
    for gpu in snapshot.gpus:
        series = tuple(
            Sample(
                t_s=s.t_s if s.t_s is not None else float(n),
                gpu_util_pct=s.util_pct,
                temperature_c=s.temp_c,
                sm_clock_mhz=s.sm_clock_mhz,
                power_w=s.power_w,
            )
            for n, s in enumerate(gpu.samples or ())
        )
        gpus.append(
            MeasuredGpu(
                index=gpu.index,
                name=gpu.name or "",
                pci_bus_id=gpu.pci_bus_id,
                values=_values(gpu, snapshot),
                series=series,
                series_source=_source(snapshot, "samples") if series else "",
            )
        )
    return tuple(gpus)
