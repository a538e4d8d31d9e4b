"""``mpstat -P ALL`` (sysstat): busy = 100 - %idle, per CPU and for ``all``; the
``Average:`` rows when present, else the mean of the intervals."""

from __future__ import annotations

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._sysstat import cpu_count, reports, summary
from gpuadvisor.host.schema import CoreUtil, CpuInfo, CpuUtil, HostInfo, HostSnapshot
from gpuadvisor.nvidia.values import whole_or_none


def parse(text: str, name: str) -> HostSnapshot:
    rows = summary(reports(text, _detect.mpstat_header))
    everything = rows.get("all", {})
    cores = [
        CoreUtil(
            cpu=cpu,
            busy_pct=round(max(0.0, 100.0 - row["%idle"]), 3),
            iowait_pct=row.get("%iowait"),
        )
        for label, row in rows.items()
        if (cpu := whole_or_none(label)) is not None and "%idle" in row
    ]
    return HostSnapshot(
        host=HostInfo(
            cpu=CpuInfo(logical_cpus=cpu_count(text)),
            cpu_util=CpuUtil(
                mean_busy_pct=(
                    round(max(0.0, 100.0 - everything["%idle"]), 3)
                    if "%idle" in everything
                    else None
                ),
                iowait_pct=everything.get("%iowait"),
                per_core=sorted(cores, key=lambda core: core.cpu),
            ),
        )
    )
