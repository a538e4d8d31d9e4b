"""``sar -n DEV`` (sysstat): rx/tx kB/s per interface and ``%ifutil`` (sysstat 10.1+:
the share of the line rate; null when the column is absent)."""

from __future__ import annotations

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._sysstat import cpu_count, reports, summary
from gpuadvisor.host.schema import CpuInfo, HostInfo, HostSnapshot, NetIface


def parse(text: str, name: str) -> HostSnapshot:
    rows = summary(reports(text, _detect.sar_header))
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
