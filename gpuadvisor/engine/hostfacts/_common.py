"""What every host fact derivation shares: the registry and small helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from statistics import fmean
from typing import Literal

from gpuadvisor.host.schema import Gpu, HostSnapshot, ReasonState, Sample, ThrottleReason

FactValue = float | int | bool | str | None
Derivation = Callable[[HostSnapshot], FactValue]

#: What a measured value rests on: a sampled ``window`` (a dmon series, a probe, an
#: mpstat / iostat interval) or one ``snapshot`` (nvidia-smi -q, -x, a CSV row), which
#: may fall between two jobs. The ``*_basis`` facts say which; rules judge with it.
Basis = Literal["window", "snapshot"]
WINDOW: Basis = "window"
SNAPSHOT: Basis = "snapshot"
#: Readings that make a window.
WINDOW_SAMPLES = 2

BUSY_UTIL_PCT = 50.0
BUSY_POWER_RATIO = 0.5
THERMAL_REASONS: tuple[ThrottleReason, ...] = ("sw_thermal_slowdown", "hw_thermal_slowdown")
POWER_REASONS: tuple[ThrottleReason, ...] = ("sw_power_cap", "hw_power_brake_slowdown")
#: Reasons that hold a busy card's clocks below what it would otherwise run: heat, the
#: board's HW Slowdown, the GPU's own power cap, the external power brake. (Not Idle,
#: Sync Boost, or an application or display clock someone set.)
HOLDING_REASONS: tuple[ThrottleReason, ...] = (
    *THERMAL_REASONS,
    "hw_slowdown",
    *POWER_REASONS,
)
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
        return fmean(series)
    return gpu.utilisation.gpu_pct


def power_draw(gpu: Gpu) -> float | None:
    if gpu.power.draw_w is not None:
        return gpu.power.draw_w
    if gpu.power.draw_instant_w is not None:
        return gpu.power.draw_instant_w
    series = [s.power_w for s in gpu.samples or () if s.power_w is not None]
    return fmean(series) if series else None


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


def reason_share(gpu: Gpu, reasons: tuple[ThrottleReason, ...]) -> tuple[float, Basis] | None:
    """Share of readings in which any of ``reasons`` was active, and what it rests on.

    A sampled window (dmon -s v pviol / tviol, a probe) governs: its share is measured
    over time, where a snapshot (-q, -x, a CSV row) is one instant, 1.0 or 0.0. So when
    any of the reasons comes with a window share, the largest window share is the answer
    and the snapshot's flags are not mixed in (a -q showing HW Thermal Slowdown active
    beside a dmon window thermal 5 of 8 samples is 62.5 %, not 100 %)."""
    states = [state for r in reasons if (state := gpu.throttle_reasons.get(r)) is not None]
    shares = [state.fraction for state in states if state.fraction is not None]
    if shares:
        return max(shares), WINDOW
    flags = [state.active for state in states if state.active is not None]
    if flags:
        return float(any(flags)), SNAPSHOT
    return None


def limited_fraction(gpu: Gpu, reasons: tuple[ThrottleReason, ...]) -> float | None:
    share = reason_share(gpu, reasons)
    return None if share is None else share[0]


def worst(
    readings: Iterable[tuple[float, Basis] | None], *, lowest: bool = False
) -> tuple[float, Basis] | None:
    """The highest (or lowest) reading over GPUs with the basis it rests on; between
    GPUs that tie, the snapshot, so that a finding never claims more than its weakest
    reading."""
    known = [r for r in readings if r is not None]
    if not known:
        return None
    if lowest:
        return min(known, key=lambda r: (r[0], r[1] != SNAPSHOT))
    return max(known, key=lambda r: (r[0], r[1] == SNAPSHOT))


def basis_of_count(samples: int | None) -> Basis | None:
    """A value behind which stand ``samples`` readings: two or more are a window."""
    if samples is None:
        return None
    return WINDOW if samples >= WINDOW_SAMPLES else SNAPSHOT


def was_busy(gpu: Gpu) -> bool | None:
    """Busy over its window when it has one (mean of the utilisation samples), else in
    its snapshot (:func:`is_busy`)."""
    series = [s.util_pct for s in gpu.samples or () if s.util_pct is not None]
    if len(series) >= WINDOW_SAMPLES:
        return fmean(series) >= BUSY_UTIL_PCT
    return is_busy(gpu)


def busy_samples(gpu: Gpu) -> list[Sample]:
    """Samples taken while the GPU was busy (utilisation >= 50 %)."""
    return [s for s in gpu.samples or () if s.util_pct is not None and s.util_pct >= BUSY_UTIL_PCT]


def load_draw_ratio(gpu: Gpu) -> float | None:
    """Power drawn under load over the enforced limit: the mean over busy samples when
    there are two or more, else the snapshot's draw."""
    limit = power_limit(gpu)
    if not limit:
        return None
    series = [s.power_w for s in busy_samples(gpu) if s.power_w is not None]
    if len(series) >= WINDOW_SAMPLES:
        return fmean(series) / limit
    draw = power_draw(gpu)
    return None if draw is None else draw / limit


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
