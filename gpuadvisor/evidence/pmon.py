"""``nvidia-smi pmon``: the processes on each GPU, per sample (-s um adds fb, MB)."""

from __future__ import annotations

from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.evidence._monitor import mean_of, row_record, table
from gpuadvisor.host.schema import Gpu, HostSnapshot, Process
from gpuadvisor.nvidia.values import clean, integer


def parse(text: str, name: str) -> HostSnapshot:
    columns, rows = table(text)
    seen: dict[int, dict[int, list[dict[str, str]]]] = {}
    for tokens in rows:
        record = row_record(columns, tokens)
        gpu = integer(record.get("gpu"))
        if gpu is None:
            continue
        per_gpu = seen.setdefault(gpu, {})
        pid = integer(record.get("pid"))
        if pid is not None:
            per_gpu.setdefault(pid, []).append(record)
    check_gpus(len(seen))
    gpus = [
        Gpu(index=gpu, processes=[_process(pid, records) for pid, records in sorted(procs.items())])
        for gpu, procs in sorted(seen.items())
    ]
    return HostSnapshot(gpus=gpus)


def _process(pid: int, records: list[dict[str, str]]) -> Process:
    """One process over all samples: mean sm/mem %, largest framebuffer use."""
    memory = [m for r in records if (m := integer(r.get("fb") or r.get("mem_mib"))) is not None]
    return Process(
        pid=pid,
        name=clean(records[-1].get("command")),
        type=clean(records[-1].get("type")),
        sm_pct=mean_of(records, "sm"),
        mem_pct=mean_of(records, "mem"),
        used_memory_mib=max(memory) if memory else None,
    )
