"""A probed GPU's readings -> the host/v1 :class:`~gpuadvisor.host.schema.Gpu`, without NVML.

Values read once arrive as ``{field path: value}``; samples as ``(t_s, {key: number or
None})``. Each sampled quantity becomes its field through the rule in :data:`SUMMARY`;
clock event reasons become the share of samples in which each was active; every
sample also goes into ``Gpu.samples`` for the report's charts. A quantity no sample
could read keeps NVML's reason in ``Gpu.unavailable``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import mean
from typing import Any, Final

from pydantic import ValidationError

from gpuadvisor.host.schema import THROTTLE_BITS, Gpu, ReasonState, Sample

Reading = dict[str, float | None]


def p95(values: list[float]) -> float:
    """95th percentile, nearest rank: the smallest sample >= 95 % of the samples."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def _mean(values: list[float]) -> float:
    return round(mean(values), 2)


#: (sample key, field, how the samples become the field's value). Means describe the
#: window; the memory high-water mark is what an OOM depends on; the PCIe link is
#: judged by the best it reached, because idle GPUs train their links down on purpose.
SUMMARY: Final[tuple[tuple[str, str, Callable[[list[float]], float]], ...]] = (
    ("util_gpu", "utilisation.gpu_pct", _mean),
    ("util_gpu", "utilisation.gpu_p95_pct", p95),
    ("util_gpu", "utilisation.gpu_min_pct", min),
    ("util_mem", "utilisation.memory_pct", _mean),
    ("util_mem", "utilisation.memory_p95_pct", p95),
    ("util_mem", "utilisation.memory_min_pct", min),
    ("mem_used_mib", "memory_used_mib", max),
    ("sm_mhz", "clocks.sm_mhz", _mean),
    ("mem_mhz", "clocks.mem_mhz", _mean),
    ("temp_c", "temperature.gpu_c", _mean),
    ("power_w", "power.draw_w", _mean),
    ("gen", "pcie.gen_current", max),
    ("width", "pcie.width_current", max),
    ("tx_kBps", "pcie.tx_kBps", _mean),
    ("rx_kBps", "pcie.rx_kBps", _mean),
)
_INTEGERS: Final = frozenset({"memory_used_mib", "pcie.gen_current", "pcie.width_current"})


def summarise(
    values: dict[str, Any],
    unavailable: dict[str, str],
    samples: list[tuple[float, Reading]],
    why: dict[str, str],
) -> Gpu:
    """The Gpu: ``values`` read once, ``samples`` summarised; ``why`` holds NVML's reason
    for each sample key that was not available."""
    values = dict(values)
    unavailable = dict(unavailable)
    for key, path, reduce in SUMMARY:
        series = [v for _, reading in samples if (v := reading[key]) is not None]
        if series:
            result = reduce(series)
            values[path] = int(result) if path in _INTEGERS else result
        elif key in why:
            unavailable[path] = why[key]
    masks = [int(m) for _, reading in samples if (m := reading["reasons"]) is not None]
    if masks:
        values["throttle_reasons"] = {
            name: ReasonState(fraction=round(sum(1 for m in masks if m & bit) / len(masks), 4))
            for name, bit in THROTTLE_BITS.items()
        }
    elif "reasons" in why:
        unavailable["throttle_reasons"] = why["reasons"]
    if samples:
        values["samples"] = [
            Sample(
                t_s=round(t_s, 3),
                util_pct=reading["util_gpu"],
                sm_clock_mhz=reading["sm_mhz"],
                temp_c=reading["temp_c"],
                power_w=reading["power_w"],
            )
            for t_s, reading in samples
        ]
    return _validated(values, unavailable)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for path, value in flat.items():
        *parents, leaf = path.split(".")
        target = nested
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return nested


def _validated(values: dict[str, Any], unavailable: dict[str, str]) -> Gpu:
    """The Gpu model; a value NVML gave outside the model's range (a garbage threshold,
    say) is dropped and its reason recorded rather than failing the whole probe."""
    while True:
        try:
            return Gpu.model_validate(
                {**_nest(values), "unavailable": dict(sorted(unavailable.items()))}
            )
        except ValidationError as exc:
            for error in exc.errors():
                path = ".".join(str(part) for part in error["loc"])
                owner = next((p for p in values if path == p or path.startswith(f"{p}.")), None)
                if owner is None:
                    raise
                unavailable[owner] = f"NVML value rejected: {error['msg']}"
                values.pop(owner)
