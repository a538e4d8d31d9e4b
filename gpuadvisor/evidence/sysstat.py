"""``iostat -x``, ``mpstat -P ALL`` and ``sar -n DEV`` (sysstat).

- iostat: both column sets (sysstat < 11.5: ``Device: rrqm/s wrqm/s r/s w/s ... await
  r_await w_await svctm %util``; newer: ``Device r/s rkB/s ... r_await ... w_await ...
  %util``). With several reports the first (since boot) is dropped.
- mpstat: busy = 100 - %idle, per CPU and for ``all``; ``Average:`` rows when present.
- sar -n DEV: rx/tx kB/s per interface and ``%ifutil`` (sysstat 10.1+; the share of the
  line rate, null when the column is absent).
"""

from __future__ import annotations

from gpuadvisor.evidence._sysstat import cpu_count, reports, summary
from gpuadvisor.host import CoreUtil, CpuInfo, CpuUtil, Disk, HostInfo, HostSnapshot, NetIface


def _iostat_header(tokens: list[str]) -> str | None:
    first = tokens[0].rstrip(":")
    return first if first == "Device" and "%util" in tokens else None


def _avg_cpu(text: str) -> float | None:
    """%iowait of the avg-cpu blocks (all but the first when there are several)."""
    values: list[float] = []
    lines = text.splitlines()
    for number, line in enumerate(lines[:-1]):
        tokens = line.split()
        if tokens[:1] == ["avg-cpu:"] and "%iowait" in tokens:
            at = tokens.index("%iowait") - 1
            row = lines[number + 1].split()
            if len(row) > at:
                try:
                    values.append(float(row[at].replace(",", ".")))
                except ValueError:
                    continue
    if len(values) > 1:
        values = values[1:]
    return round(sum(values) / len(values), 3) if values else None


def looks_like_iostat(text: str) -> bool:
    return "avg-cpu:" in text or bool(reports(text, _iostat_header))


def parse_iostat(text: str, name: str) -> HostSnapshot:
    disks = summary(reports(text, _iostat_header), skip_first=True)
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


def _mpstat_header(tokens: list[str]) -> str | None:
    return "CPU" if "CPU" in tokens and "%idle" in tokens and "%usr" in tokens else None


def looks_like_mpstat(text: str) -> bool:
    return bool(reports(text, _mpstat_header))


def parse_mpstat(text: str, name: str) -> HostSnapshot:
    rows = summary(reports(text, _mpstat_header))
    everything = rows.get("all", {})
    cores = [
        CoreUtil(
            cpu=int(label),
            busy_pct=round(max(0.0, 100.0 - row["%idle"]), 3),
            iowait_pct=row.get("%iowait"),
        )
        for label, row in rows.items()
        if label.isdigit() and "%idle" in row
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


def _sar_header(tokens: list[str]) -> str | None:
    return "IFACE" if "IFACE" in tokens and "rxkB/s" in tokens else None


def looks_like_sar(text: str) -> bool:
    return bool(reports(text, _sar_header))


def parse_sar(text: str, name: str) -> HostSnapshot:
    rows = summary(reports(text, _sar_header))
    return HostSnapshot(
        host=HostInfo(
            cpu=CpuInfo(logical_cpus=cpu_count(text)),
            net=[
                NetIface(
                    iface=iface,
                    rx_kBps=row.get("rxkB/s"),
                    tx_kBps=row.get("txkB/s"),
                    util_pct=min(row["%ifutil"], 100.0) if "%ifutil" in row else None,
                )
                for iface, row in sorted(rows.items())
            ],
        )
    )
