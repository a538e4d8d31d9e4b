"""``iostat -x`` (sysstat), both column sets: sysstat < 11.5 (``Device: rrqm/s wrqm/s
r/s w/s ... await r_await w_await svctm %util``) and newer (``Device r/s rkB/s ...
r_await ... w_await ... %util``). With several reports the first (since boot) is
dropped; ``avg-cpu`` %iowait is kept too.
"""

from __future__ import annotations

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._limits import lines
from gpuadvisor.evidence._sysstat import cpu_count, number, reports, summary
from gpuadvisor.host.schema import CpuInfo, Disk, HostInfo, HostSnapshot


def _avg_cpu(text: str) -> float | None:
    """%iowait of the avg-cpu blocks (all but the first when there are several)."""
    values: list[float] = []
    rows = list(lines(text))
    for at_line, line in enumerate(rows[:-1]):
        tokens = line.split()
        if tokens[:1] == ["avg-cpu:"] and "%iowait" in tokens:
            at = tokens.index("%iowait") - 1
            row = rows[at_line + 1].split()
            if len(row) > at and (value := number(row[at])) is not None:
                values.append(value)
    if len(values) > 1:
        values = values[1:]
    return round(sum(values) / len(values), 3) if values else None


def parse(text: str, name: str) -> HostSnapshot:
    disks = summary(reports(text, _detect.iostat_header), skip_first=True)
    return HostSnapshot(
        host=HostInfo(
            cpu=CpuInfo(logical_cpus=cpu_count(text)),
            iowait_pct=_avg_cpu(text),
            disks=[
                Disk(
                    device=device,
                    util_pct=min(row["%util"], 100.0) if "%util" in row else None,
                    r_await=row.get("r_await"),
                    w_await=row.get("w_await"),
                )
                for device, row in sorted(disks.items())
            ],
        )
    )
