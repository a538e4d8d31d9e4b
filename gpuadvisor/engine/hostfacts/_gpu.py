"""Facts about the host's GPUs, worst case: ``gpu.*``."""

from __future__ import annotations

from statistics import fmean

from gpuadvisor.engine.hostfacts._common import (
    BUSY_UTIL_PCT,
    HOLDING_REASONS,
    POWER_REASONS,
    SNAPSHOT,
    THERMAL_REASONS,
    WINDOW,
    WINDOW_SAMPLES,
    Basis,
    FactValue,
    any_known,
    busy_samples,
    fact,
    is_busy,
    limited_fraction,
    load_draw_ratio,
    max_known,
    min_known,
    power_draw,
    power_limit,
    reason_share,
    sum_known,
    used_pct,
    was_busy,
    worst,
)
from gpuadvisor.host.schema import Gpu, HostSnapshot


@fact("gpu.pcie_width_degraded", "gpus.pcie")
def _width_degraded(s: HostSnapshot) -> FactValue:
    """PCI > GPU Link Info > Link Width: Current below Max on any GPU (NVML
    nvmlDeviceGetCurrPcieLinkWidth / ...MaxPcieLinkWidth). Judged idle or busy: the
    width does not drop to save power the way the generation does."""
    return any_known(
        g.pcie.width_current < g.pcie.width_max
        for g in s.gpus
        if g.pcie.width_current is not None and g.pcie.width_max is not None
    )


@fact("gpu.pcie_width_current_min", "gpus.pcie")
def _width_min(s: HostSnapshot) -> FactValue:
    """Narrowest Link Width > Current, lanes."""
    widths = [g.pcie.width_current for g in s.gpus if g.pcie.width_current is not None]
    return min(widths) if widths else None


@fact("gpu.pcie_gen_degraded_under_load", "gpus.pcie", "gpus.utilisation", "gpus.power")
def _gen_degraded(s: HostSnapshot) -> FactValue:
    """PCIe Generation Current below Max on a busy GPU (NVML
    nvmlDeviceGetCurrPcieLinkGeneration / ...MaxPcieLinkGeneration). Idle GPUs are not
    judged: they train the link down on purpose. None when no GPU was busy."""
    judged = [
        g.pcie.gen_current < g.pcie.gen_max
        for g in s.gpus
        if is_busy(g) and g.pcie.gen_current is not None and g.pcie.gen_max is not None
    ]
    return any(judged) if judged else None


@fact("gpu.pcie_replays_per_min_max", "gpus.pcie")
def _replays(s: HostSnapshot) -> FactValue:
    """pcie.replays_per_min (the growth of Replays Since Reset, NVML
    nvmlDeviceGetPcieReplayCounter, over the window), the highest of any GPU."""
    return max_known(g.pcie.replays_per_min for g in s.gpus)


@fact("gpu.thermal_limited_fraction", "gpus.throttle_reasons")
def _thermal(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW / HW Thermal Slowdown (NVML
    nvmlDeviceGetCurrentClocksEventReasons): share of samples with either active, the
    larger of the two per GPU; a single snapshot is one sample (1.0 or 0.0). dmon tviol
    gives a measured share, which governs when there is one (see reason_share). Worst
    GPU."""
    return max_known(limited_fraction(g, THERMAL_REASONS) for g in s.gpus)


@fact("gpu.thermal_basis", "gpus.throttle_reasons")
def _thermal_basis(s: HostSnapshot) -> FactValue:
    """What gpu.thermal_limited_fraction rests on: window or snapshot."""
    return _basis(worst(reason_share(g, THERMAL_REASONS) for g in s.gpus))


@fact("gpu.power_limited_fraction", "gpus.throttle_reasons")
def _power(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW Power Cap / HW Power Brake Slowdown, as for the thermal
    fraction (dmon pviol gives a measured share). Worst GPU. It mixes the GPU's own cap
    with the external brake; the power rules read gpu.power_cap_* and gpu.power_brake_*."""
    return max_known(limited_fraction(g, POWER_REASONS) for g in s.gpus)


def _basis(reading: tuple[float, Basis] | None) -> Basis | None:
    return None if reading is None else reading[1]


def _capped(s: HostSnapshot) -> tuple[float, Basis, float | None] | None:
    """The GPU most often at its own power cap (SW Power Cap; dmon pviol): its share,
    what the share rests on, and its draw under load over its enforced limit. Between
    GPUs with the same share, the one drawing closest to its limit."""
    found: list[tuple[float, Basis, float | None]] = []
    for gpu in s.gpus:
        share = reason_share(gpu, ("sw_power_cap",))
        if share is not None:
            found.append((*share, load_draw_ratio(gpu)))
    if not found:
        return None
    return max(found, key=lambda f: (f[0], -1.0 if f[2] is None else f[2], f[1] == SNAPSHOT))


@fact("gpu.power_cap_fraction", "gpus.throttle_reasons")
def _power_cap(s: HostSnapshot) -> FactValue:
    """Clocks Event Reason SW Power Cap alone (the GPU's own power limit; NVML
    nvmlClocksEventReasonSwPowerCap; dmon pviol over a window): share of readings, worst
    GPU. Not the HW Power Brake, which is an external signal."""
    capped = _capped(s)
    return None if capped is None else capped[0]


@fact("gpu.power_cap_basis", "gpus.throttle_reasons")
def _power_cap_basis(s: HostSnapshot) -> FactValue:
    """What gpu.power_cap_fraction rests on: window or snapshot."""
    capped = _capped(s)
    return None if capped is None else capped[1]


@fact("gpu.power_cap_draw_ratio", "gpus.throttle_reasons", "gpus.power", "gpus.samples")
def _power_cap_draw(s: HostSnapshot) -> FactValue:
    """For the GPU of gpu.power_cap_fraction: Power Draw under load over its Enforced
    Power Limit (mean over busy samples, else the snapshot). Near 1 the cap is the card
    pulling its full budget; far below it the card is idle, whatever the flag says."""
    capped = _capped(s)
    return None if capped is None else capped[2]


def _braked(s: HostSnapshot, *, busy: bool) -> list[tuple[float, Basis]]:
    return [
        share
        for g in s.gpus
        if was_busy(g) is busy
        and (share := reason_share(g, ("hw_power_brake_slowdown",))) is not None
    ]


@fact(
    "gpu.power_brake_fraction",
    "gpus.throttle_reasons",
    "gpus.utilisation",
    "gpus.power",
    "gpus.samples",
)
def _power_brake(s: HostSnapshot) -> FactValue:
    """Clocks Event Reason HW Power Brake Slowdown on GPUs that were busy (NVML
    nvmlClocksEventReasonHwPowerBrakeSlowdown): share of readings, worst busy GPU. The
    brake is asserted from outside the GPU (the board, the PSU, the BMC), not by the
    GPU's power limit. None when no busy GPU reports it."""
    return _share(worst(_braked(s, busy=True)))


@fact("gpu.power_brake_basis", "gpus.throttle_reasons", "gpus.utilisation", "gpus.samples")
def _power_brake_basis(s: HostSnapshot) -> FactValue:
    """What the power brake readings rest on, window or snapshot: those of the busy
    GPUs (gpu.power_brake_fraction) when any reports the reason, else the idle GPUs'."""
    return _basis(worst(_braked(s, busy=True)) or worst(_braked(s, busy=False)))


@fact(
    "gpu.power_brake_idle",
    "gpus.throttle_reasons",
    "gpus.utilisation",
    "gpus.power",
    "gpus.samples",
)
def _power_brake_idle(s: HostSnapshot) -> FactValue:
    """HW Power Brake Slowdown reported active on a GPU that was idle (utilisation and
    draw under half; an idle HGX H100 at 67 of 700 W with the brake asserted). None
    when no idle GPU reports the reason."""
    shares = _braked(s, busy=False)
    return any(share > 0 for share, _ in shares) if shares else None


def _share(reading: tuple[float, Basis] | None) -> float | None:
    return None if reading is None else reading[0]


def _held(s: HostSnapshot) -> list[tuple[float, Basis]]:
    return [
        share
        for g in s.gpus
        if was_busy(g) and (share := reason_share(g, HOLDING_REASONS)) is not None
    ]


@fact(
    "gpu.clock_held_fraction",
    "gpus.throttle_reasons",
    "gpus.utilisation",
    "gpus.power",
    "gpus.samples",
)
def _clock_held(s: HostSnapshot) -> FactValue:
    """Share of readings in which a busy GPU reported a clock-event reason that holds
    its clocks down (SW / HW Thermal Slowdown, HW Slowdown, SW Power Cap, HW Power
    Brake): the card's own word on why it runs slower, worst busy GPU. A GeForce card
    with every reason "Not Active" is 0, however far its clock is below Max Clocks."""
    return _share(worst(_held(s)))


def _sustained(gpu: Gpu) -> float | None:
    clocks = [x.sm_clock_mhz for x in busy_samples(gpu) if x.sm_clock_mhz is not None]
    if len(clocks) < WINDOW_SAMPLES or not max(clocks):
        return None
    return fmean(clocks) / max(clocks)


@fact("gpu.sm_clock_sustained_ratio", "gpus.samples")
def _sm_sustained(s: HostSnapshot) -> FactValue:
    """Over a sampled window (dmon pclk, probe samples): the mean SM clock while busy
    over the highest SM clock the same card held while busy in that window; lowest over
    GPUs. The card is its own reference: a drop from the clock it reached under load
    is throttling, where Max Clocks is a figure GeForce cards never sustain. None
    without two busy samples."""
    return min_known(_sustained(g) for g in s.gpus)


@fact(
    "gpu.clock_basis",
    "gpus.samples",
    "gpus.throttle_reasons",
    "gpus.utilisation",
    "gpus.power",
)
def _clock_basis(s: HostSnapshot) -> FactValue:
    """What the clock judgement rests on: window when a sampled series shows the busy
    clocks (gpu.sm_clock_sustained_ratio), else the basis of the clock-event reasons of
    the busy GPUs."""
    if _sm_sustained(s) is not None:
        return WINDOW
    return _basis(worst(_held(s)))


def _margin(gpu: Gpu) -> float | None:
    t = gpu.temperature
    temps = [x.temp_c for x in gpu.samples or () if x.temp_c is not None]
    hottest = max([*temps, *([t.gpu_c] if t.gpu_c is not None else [])], default=None)
    if t.slowdown_c is not None and hottest is not None:
        return t.slowdown_c - hottest
    if t.tlimit_margin_c is not None and t.slowdown_tlimit_c is not None:
        # Ada and later: T.Limit Temp is the distance below T.Limit now; slowdown starts
        # at slowdown_tlimit_c relative to T.Limit.
        hotter_later = 0.0
        if hottest is not None and t.gpu_c is not None:
            hotter_later = max(0.0, hottest - t.gpu_c)
        return t.tlimit_margin_c - t.slowdown_tlimit_c - hotter_later
    return None


@fact("gpu.temp_margin_c", "gpus.temperature", "gpus.samples")
def _temp_margin(s: HostSnapshot) -> FactValue:
    """GPU Slowdown Temp minus the hottest GPU Current Temp seen (NVML
    nvmlDeviceGetTemperatureThreshold(SLOWDOWN) - nvmlDeviceGetTemperature); on Ada and
    later, GPU T.Limit Temp minus GPU Slowdown T.Limit Temp. Smallest over GPUs."""
    return min_known(_margin(g) for g in s.gpus)


def _clock_ratio(gpu: Gpu) -> float | None:
    top = gpu.clocks.max_sm_mhz
    if not top:
        return None
    series = [
        x.sm_clock_mhz / top
        for x in gpu.samples or ()
        if x.util_pct is not None and x.util_pct >= BUSY_UTIL_PCT and x.sm_clock_mhz is not None
    ]
    if series:
        return fmean(series)
    if is_busy(gpu) and gpu.clocks.sm_mhz is not None:
        return gpu.clocks.sm_mhz / top
    return None


@fact("gpu.sm_clock_ratio_busy", "gpus.clocks", "gpus.utilisation", "gpus.power", "gpus.samples")
def _sm_ratio(s: HostSnapshot) -> FactValue:
    """Clocks SM / Max Clocks SM (NVML nvmlDeviceGetClockInfo / nvmlDeviceGetMaxClockInfo
    for NVML_CLOCK_SM) while busy: mean over busy samples, or the snapshot when the GPU
    was busy. Lowest over GPUs; None when no GPU was busy."""
    return min_known(_clock_ratio(g) for g in s.gpus)


@fact("gpu.power_draw_ratio", "gpus.power", "gpus.samples")
def _power_ratio(s: HostSnapshot) -> FactValue:
    """Power Draw (average where given, else instantaneous, else the sample mean) over
    the enforced power limit (NVML nvmlDeviceGetPowerUsage /
    nvmlDeviceGetEnforcedPowerLimit). Highest over GPUs."""
    return max_known(
        draw / limit
        for g in s.gpus
        if (draw := power_draw(g)) is not None and (limit := power_limit(g))
    )


@fact("gpu.memory_used_max_pct", "gpus.memory_used_mib", "gpus.memory_total_mib")
def _memory_max(s: HostSnapshot) -> FactValue:
    """FB Memory Usage Used / Total, fullest GPU (NVML nvmlDeviceGetMemoryInfo)."""
    return max_known(used_pct(g) for g in s.gpus)


@fact("gpu.memory_total_max_gib", "gpus.memory_total_mib")
def _memory_total(s: HostSnapshot) -> FactValue:
    """FB Memory Usage Total of the largest GPU, MiB / 1024."""
    totals = [g.memory_total_mib for g in s.gpus if g.memory_total_mib]
    return max(totals) / 1024 if totals else None


def _ecc_capable(s: HostSnapshot) -> list[str]:
    return [g.ecc_mode for g in s.gpus if g.ecc_mode in ("enabled", "disabled")]


@fact("gpu.ecc_enabled_all", "gpus.ecc_mode")
def _ecc_all(s: HostSnapshot) -> FactValue:
    """ECC Mode Current is Enabled on every GPU that has ECC (NVML
    nvmlDeviceGetEccMode); None when no GPU reports an ECC mode it supports."""
    modes = _ecc_capable(s)
    return all(m == "enabled" for m in modes) if modes else None


@fact("gpu.ecc_supported_any", "gpus.ecc_mode")
def _ecc_any(s: HostSnapshot) -> FactValue:
    """Any GPU has ECC (mode Enabled or Disabled); False when every GPU that reports a
    mode reports N/A (not supported)."""
    if _ecc_capable(s):
        return True
    return False if any(g.ecc_mode == "unsupported" for g in s.gpus) else None


@fact("gpu.ecc_uncorrectable_total", "gpus.ecc_errors")
def _ecc_uncorrectable(s: HostSnapshot) -> FactValue:
    """ECC Errors, uncorrectable (double-bit / DRAM + SRAM uncorrectable), NVML
    nvmlDeviceGetTotalEccErrors(UNCORRECTED): per GPU the larger of the volatile and
    aggregate counters (aggregate already includes what volatile counted since the
    driver loaded, so adding them would count errors twice), summed over GPUs."""
    per_gpu = [
        max_known([g.ecc_errors.volatile_uncorrectable, g.ecc_errors.aggregate_uncorrectable])
        for g in s.gpus
    ]
    return sum_known(int(v) if v is not None else None for v in per_gpu)


@fact("gpu.ecc_correctable_aggregate", "gpus.ecc_errors")
def _ecc_correctable(s: HostSnapshot) -> FactValue:
    """ECC Errors > Aggregate, correctable (single-bit), summed over GPUs."""
    return sum_known(g.ecc_errors.aggregate_correctable for g in s.gpus)


@fact("gpu.retired_pages_total", "gpus.retired_pages")
def _retired_total(s: HostSnapshot) -> FactValue:
    """Retired Pages Single Bit ECC + Double Bit ECC (NVML nvmlDeviceGetRetiredPages),
    summed over GPUs. Ampere and later remap rows instead and report N/A here."""
    return sum_known(
        sum_known([g.retired_pages.single_bit, g.retired_pages.double_bit]) for g in s.gpus
    )


@fact("gpu.retired_pages_pending", "gpus.retired_pages")
def _retired_pending(s: HostSnapshot) -> FactValue:
    """Retired Pages Pending Page Blacklist / Retirement is Yes on any GPU."""
    return any_known(g.retired_pages.pending for g in s.gpus)


@fact("gpu.remap_pending", "gpus.remapped_rows")
def _remap_pending(s: HostSnapshot) -> FactValue:
    """Remapped Rows Pending is Yes on any GPU (NVML nvmlDeviceGetRemappedRows
    isPending): a reset is needed to finish the remap."""
    return any_known(g.remapped_rows.pending for g in s.gpus)


@fact("gpu.remap_failure", "gpus.remapped_rows")
def _remap_failure(s: HostSnapshot) -> FactValue:
    """Remapped Rows Remapping Failure Occurred is Yes on any GPU (NVML
    nvmlDeviceGetRemappedRows failureOccurred)."""
    return any_known(g.remapped_rows.failure for g in s.gpus)
