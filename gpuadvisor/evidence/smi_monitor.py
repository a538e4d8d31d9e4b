"""``nvidia-smi pmon`` (processes per GPU) and ``nvidia-smi dmon`` (device time series).

Both print a ``#`` header naming the columns, an optional ``#`` units line, then one
row per GPU (dmon) or per process (pmon) and sample. Columns are found by name, so
``-s`` selections, ``-o DT`` time stamps and the jpg/ofa columns of newer drivers read
the same.
"""

from __future__ import annotations

from datetime import datetime
from statistics import mean

from gpuadvisor.evidence._values import clean, integer, number
from gpuadvisor.host import Gpu, HostSnapshot, Process, ReasonState, Sample, ThrottleReason


def _table(text: str) -> tuple[list[str], list[list[str]]]:
    """Header names and data rows (tokens)."""
    columns: list[str] = []
    rows: list[list[str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            names = stripped.lstrip("#").split()
            if not columns and "gpu" in [n.lower() for n in names]:
                columns = [n.lower() for n in names]
            continue
        if columns:
            rows.append(stripped.split())
    return columns, rows


def looks_like_pmon(text: str) -> bool:
    columns, _ = _table(text)
    return "pid" in columns and "command" in columns


def looks_like_dmon(text: str) -> bool:
    columns, rows = _table(text)
    return bool(rows) and "pid" not in columns and ("sm" in columns or "pwr" in columns)


def _record(columns: list[str], tokens: list[str]) -> dict[str, str]:
    record = dict(zip(columns, tokens, strict=False))
    if "command" in columns and len(tokens) >= len(columns):
        record["command"] = " ".join(tokens[len(columns) - 1 :])
    return record


def parse_pmon(text: str, name: str) -> HostSnapshot:
    columns, rows = _table(text)
    seen: dict[int, dict[int, list[dict[str, str]]]] = {}
    for tokens in rows:
        record = _record(columns, tokens)
        gpu = integer(record.get("gpu"))
        if gpu is None:
            continue
        per_gpu = seen.setdefault(gpu, {})
        pid = integer(record.get("pid"))
        if pid is not None:
            per_gpu.setdefault(pid, []).append(record)
    gpus = [
        Gpu(index=gpu, processes=[_process(pid, records) for pid, records in sorted(procs.items())])
        for gpu, procs in sorted(seen.items())
    ]
    return HostSnapshot(gpus=gpus)


def _mean(records: list[dict[str, str]], column: str) -> float | None:
    values = [v for r in records if (v := number(r.get(column))) is not None]
    return round(mean(values), 2) if values else None


def _process(pid: int, records: list[dict[str, str]]) -> Process:
    """One process over all samples: mean sm/mem %, largest framebuffer use."""
    memory = [m for r in records if (m := integer(r.get("fb") or r.get("mem_mib"))) is not None]
    return Process(
        pid=pid,
        name=clean(records[-1].get("command")),
        type=clean(records[-1].get("type")),
        sm_pct=_mean(records, "sm"),
        mem_pct=_mean(records, "mem"),
        used_memory_mib=max(memory) if memory else None,
    )


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


def parse_dmon(text: str, name: str) -> HostSnapshot:
    columns, rows = _table(text)
    series: dict[int, list[dict[str, str]]] = {}
    for tokens in rows:
        record = _record(columns, tokens)
        gpu = integer(record.get("gpu"))
        if gpu is not None:
            series.setdefault(gpu, []).append(record)
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
            )
        )
    return HostSnapshot(gpus=gpus)
