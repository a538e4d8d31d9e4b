"""What every host fact derivation shares: the registry and small helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from statistics import mean

from gpuadvisor.host.schema import Gpu, HostSnapshot, ReasonState, ThrottleReason

FactValue = float | int | bool | str | None
Derivation = Callable[[HostSnapshot], FactValue]

BUSY_UTIL_PCT = 50.0
BUSY_POWER_RATIO = 0.5
THERMAL_REASONS: tuple[ThrottleReason, ...] = ("sw_thermal_slowdown", "hw_thermal_slowdown")
POWER_REASONS: tuple[ThrottleReason, ...] = ("sw_power_cap", "hw_power_brake_slowdown")
#: topo -m paths, best first.
LINK_ORDER = ("NV", "PIX", "PXB", "PHB", "NODE", "SYS")
EVENT_SOURCES = frozenset({"kernel-log", "dcgm-prom"})


REGISTRY: dict[str, tuple[Derivation, tuple[str, ...]]] = {}


def fact(name: str, *parts: str) -> Callable[[Derivation], Derivation]:
    def register(function: Derivation) -> Derivation:
        REGISTRY[name] = (function, parts)
        return function

    return register


def gpu_util(gpu: Gpu) -> float | None:
    """Mean of the time series when there is one, else the snapshot's Utilization.Gpu."""
    series = [s.util_pct for s in gpu.samples or () if s.util_pct is not None]
    if series:
        return mean(series)
    return gpu.utilisation.gpu_pct


def power_draw(gpu: Gpu) -> float | None:
    if gpu.power.draw_w is not None:
        return gpu.power.draw_w
    if gpu.power.draw_instant_w is not None:
        return gpu.power.draw_instant_w
    series = [s.power_w for s in gpu.samples or () if s.power_w is not None]
    return mean(series) if series else None


def power_limit(gpu: Gpu) -> float | None:
    return gpu.power.enforced_limit_w or gpu.power.limit_w


def is_busy(gpu: Gpu) -> bool | None:
    util, draw, limit = gpu.utilisation.gpu_pct, power_draw(gpu), power_limit(gpu)
    if util is not None and util >= BUSY_UTIL_PCT:
        return True
    if draw is not None and limit and draw / limit >= BUSY_POWER_RATIO:
        return True
    if util is None and (draw is None or not limit):
        return None
    return False


def reason_fraction(state: ReasonState | None) -> float | None:
    if state is None:
        return None
    if state.fraction is not None:
        return state.fraction
    return None if state.active is None else float(state.active)


def limited_fraction(gpu: Gpu, reasons: tuple[ThrottleReason, ...]) -> float | None:
    fractions = [
        f for r in reasons if (f := reason_fraction(gpu.throttle_reasons.get(r))) is not None
    ]
    return max(fractions) if fractions else None


def any_known(values: Iterable[bool | None]) -> bool | None:
    known = [v for v in values if v is not None]
    return any(known) if known else None


def sum_known(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def max_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def min_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def compute_processes(gpu: Gpu) -> int | None:
    """Compute processes: type C or M+C (not graphics: on Windows every desktop app shows
    as C+G); sources that list compute apps only give no type and all count."""
    if gpu.processes is None:
        return None
    return sum(1 for p in gpu.processes if p.type is None or ("C" in p.type and "G" not in p.type))


def used_pct(gpu: Gpu) -> float | None:
    if gpu.memory_used_mib is None or not gpu.memory_total_mib:
        return None
    return 100.0 * gpu.memory_used_mib / gpu.memory_total_mib
