"""A host snapshot's per-GPU readings and its evidence conflicts, as the decision carries
them to the reports.

Pure: host/v1 models in, :class:`~gpuadvisor.decision.model.MeasuredGpu` and
:class:`~gpuadvisor.decision.model.EvidenceConflict` out. Each value names the evidence
file it came from (the GPU's own provenance, field by field), so a report can show
"88 °C (nvidia-smi-q.txt)" next to the conclusion it supports, and not every file that
said anything about the GPU.
"""

from __future__ import annotations

from gpuadvisor.decision.model import (
    ConflictingValue,
    EvidenceConflict,
    FactValue,
    MeasuredGpu,
    Sample,
)
from gpuadvisor.decision.words import format_share
from gpuadvisor.host.schema import Gpu, HostSnapshot


def _source(snapshot: HostSnapshot, gpu: Gpu, paths: tuple[str, ...], part: str) -> str:
    """The file(s) the shown value came from: the GPU's record for each field path it
    shows; else (a snapshot made without merging) the files that filled the part, else
    every evidence file."""
    cited = [gpu.provenance[p] for p in paths if p in gpu.provenance]
    if cited:
        return ", ".join(dict.fromkeys(cited))
    files = snapshot.provenance.get(f"gpus.{part}") or [s.file for s in snapshot.sources]
    return ", ".join(files)


Row = tuple[str, float | int | bool | str | None, str, tuple[str, ...]]


def _rows(gpu: Gpu) -> list[Row]:
    """(name, value, unit, the field paths the value is made of)."""
    limit_path = "power.enforced_limit_w" if gpu.power.enforced_limit_w else "power.limit_w"
    reasons, reason_paths = _reasons(gpu)
    return [
        ("memory total", _gib(gpu.memory_total_mib), "GiB", ("memory_total_mib",)),
        ("memory used", _gib(gpu.memory_used_mib), "GiB", ("memory_used_mib",)),
        ("utilisation", gpu.utilisation.gpu_pct, "%", ("utilisation.gpu_pct",)),
        ("temperature", gpu.temperature.gpu_c, "°C", ("temperature.gpu_c",)),
        (
            "slowdown temperature",
            gpu.temperature.slowdown_c,
            "°C",
            ("temperature.slowdown_c",),
        ),
        (
            "shutdown temperature",
            gpu.temperature.shutdown_c,
            "°C",
            ("temperature.shutdown_c",),
        ),
        ("power draw", gpu.power.draw_w, "W", ("power.draw_w",)),
        ("power limit", gpu.power.enforced_limit_w or gpu.power.limit_w, "W", (limit_path,)),
        ("SM clock", gpu.clocks.sm_mhz, "MHz", ("clocks.sm_mhz",)),
        ("max SM clock", gpu.clocks.max_sm_mhz, "MHz", ("clocks.max_sm_mhz",)),
        (
            "PCIe generation",
            _pair(gpu.pcie.gen_current, gpu.pcie.gen_max),
            "current/max",
            ("pcie.gen_current", "pcie.gen_max"),
        ),
        (
            "PCIe width",
            _pair(gpu.pcie.width_current, gpu.pcie.width_max),
            "lanes current/max",
            ("pcie.width_current", "pcie.width_max"),
        ),
        ("ECC mode", gpu.ecc_mode, "", ("ecc_mode",)),
        ("persistence mode", gpu.persistence_mode, "", ("persistence_mode",)),
        ("clock-event reasons active", reasons, "", reason_paths),
    ]


def _values(gpu: Gpu, snapshot: HostSnapshot) -> tuple[FactValue, ...]:
    return tuple(
        FactValue(
            name=name,
            value=value,
            unit=unit,
            # The part a path lies in (``temperature``) is where the fallback looks.
            source=_source(snapshot, gpu, paths, paths[0].split(".")[0]),
        )
        for name, value, unit, paths in _rows(gpu)
        if value is not None
    )


def _gib(mib: int | None) -> float | None:
    return None if mib is None else round(mib / 1024, 2)


def _pair(current: int | None, maximum: int | None) -> str | None:
    if current is None and maximum is None:
        return None
    return f"{current if current is not None else '?'}/{maximum if maximum is not None else '?'}"


def _reasons(gpu: Gpu) -> tuple[str | None, tuple[str, ...]]:
    """The active clock-event reasons, each with what it rests on: the share of a sampled
    window (dmon -s v, a probe) or the one snapshot that showed it active."""
    active: list[str] = []
    paths: list[str] = []
    for name, state in gpu.throttle_reasons.items():
        if state.fraction is not None and state.fraction > 0:
            active.append(f"{name} ({format_share(state.fraction)} of the window)")
            paths.append(f"throttle_reasons.{name}.fraction")
        elif state.active:
            active.append(f"{name} (in the snapshot)")
            paths.append(f"throttle_reasons.{name}.active")
    return (", ".join(active) if active else None), tuple(paths) or ("throttle_reasons",)


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
                series_source=_source(snapshot, gpu, ("samples",), "samples") if series else "",
            )
        )
    return tuple(gpus)


def evidence_conflicts(snapshot: HostSnapshot | None) -> tuple[EvidenceConflict, ...]:
    """Each value the evidence files disagree on, with every file's value (CONTRACT §6:
    ``[{gpu, field, values: [{file, value}]}]``); the field is the path inside the GPU
    for a GPU's value, the host/v1 path for a host-wide one."""
    if snapshot is None:
        return ()
    found = []
    for conflict in snapshot.conflicts:
        field = conflict.field
        prefix = f"gpus[{conflict.gpu}]."
        if conflict.gpu is not None and field.startswith(prefix):
            field = field[len(prefix) :]
        found.append(
            EvidenceConflict(
                gpu=conflict.gpu,
                field=field,
                values=tuple(ConflictingValue(file=v.file, value=v.value) for v in conflict.values),
            )
        )
    return tuple(found)
