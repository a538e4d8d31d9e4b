"""``nvidia-smi dmon``: a per-GPU time series (power, temperatures, SM and memory %,
encoder and decoder %, clocks, and with ``-s v`` the power and thermal violation
columns).

Each sample goes into ``Gpu.samples``; the GPU's own readings are what the series says
over its window, as for a probe: means of SM % (``utilisation.gpu_pct``, with its 95th
percentile and minimum), memory % (``utilisation.memory_pct``, likewise), encoder and
decoder %, power (``pwr``), GPU and memory temperature (``gtemp``, ``mtemp``), processor
and memory clock (``pclk``, ``mclk``). A column every sample leaves at ``-`` (SM % under
MIG, memory temperature on GDDR cards) stays null.
"""

from __future__ import annotations

import math
from datetime import datetime
from statistics import mean

from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.evidence._monitor import mean_of, row_record, table
from gpuadvisor.host.schema import (
    Clocks,
    Gpu,
    HostSnapshot,
    Power,
    ReasonState,
    Sample,
    Temperature,
    ThrottleReason,
    Utilisation,
)
from gpuadvisor.nvidia.values import integer, number

#: dmon -s v columns, NVML nvmlDeviceGetViolationStatus: pviol is the % of the interval
#: the power policy held clocks below target, tviol whether the thermal policy did (a
#: bool per sample). Over the samples each becomes a share of time for the reason it
#: stands for.
_VIOLATIONS: dict[str, tuple[ThrottleReason, float]] = {
    "pviol": ("sw_power_cap", 100.0),
    "tviol": ("sw_thermal_slowdown", 1.0),
}


def _share(records: list[dict[str, str]], column: str, full: float) -> float | None:
    values = [v for r in records if (v := number(r.get(column))) is not None]
    if not values:
        return None
    return round(min(1.0, mean(min(v, full) / full for v in values)), 3)


def _values(records: list[dict[str, str]], column: str) -> list[float]:
    return [v for r in records if (v := number(r.get(column))) is not None]


def _p95(records: list[dict[str, str]], column: str) -> float | None:
    """95th percentile, nearest rank (as the probe's summary computes it)."""
    ordered = sorted(_values(records, column))
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else None


def _min(records: list[dict[str, str]], column: str) -> float | None:
    values = _values(records, column)
    return min(values) if values else None


def _stamp(record: dict[str, str]) -> datetime | None:
    """``-o T`` / ``-o DT`` time stamps (HH:MM:SS, YYYYMMDD)."""
    if "time" not in record:
        return None
    try:
        return datetime.strptime(
            f"{record.get('date', '19700101')} {record['time']}", "%Y%m%d %H:%M:%S"
        )
    except ValueError:
        return None


def _offsets(records: list[dict[str, str]]) -> list[float | None]:
    stamps = [_stamp(r) for r in records]
    first = next((s for s in stamps if s is not None), None)
    return [
        (s - first).total_seconds() if s is not None and first is not None and s >= first else None
        for s in stamps
    ]


def parse(text: str, name: str) -> HostSnapshot:
    columns, rows = table(text)
    series: dict[int, list[dict[str, str]]] = {}
    for tokens in rows:
        record = row_record(columns, tokens)
        gpu = integer(record.get("gpu"))
        if gpu is not None:
            series.setdefault(gpu, []).append(record)
    check_gpus(len(series))
    gpus = []
    for gpu, records in sorted(series.items()):
        reasons = {
            reason: ReasonState(fraction=share)
            for column, (reason, full) in _VIOLATIONS.items()
            if (share := _share(records, column, full)) is not None
        }
        gpus.append(
            Gpu(
                index=gpu,
                samples=[
                    Sample(
                        t_s=t_s,
                        util_pct=number(r.get("sm")),
                        sm_clock_mhz=number(r.get("pclk")),
                        temp_c=number(r.get("gtemp")),
                        power_w=number(r.get("pwr")),
                    )
                    for r, t_s in zip(records, _offsets(records), strict=True)
                ],
                throttle_reasons=reasons,
                utilisation=Utilisation(
                    gpu_pct=mean_of(records, "sm"),
                    gpu_p95_pct=_p95(records, "sm"),
                    gpu_min_pct=_min(records, "sm"),
                    memory_pct=mean_of(records, "mem"),
                    memory_p95_pct=_p95(records, "mem"),
                    memory_min_pct=_min(records, "mem"),
                    encoder_pct=mean_of(records, "enc"),
                    decoder_pct=mean_of(records, "dec"),
                ),
                clocks=Clocks(sm_mhz=mean_of(records, "pclk"), mem_mhz=mean_of(records, "mclk")),
                temperature=Temperature(
                    gpu_c=mean_of(records, "gtemp"), memory_c=mean_of(records, "mtemp")
                ),
                power=Power(draw_w=mean_of(records, "pwr")),
            )
        )
    return HostSnapshot(gpus=gpus)
