"""Facts about the host's GPUs, worst case: ``gpu.*``."""

from __future__ import annotations

from statistics import mean

from gpuadvisor.engine.hostfacts._common import (
    BUSY_UTIL_PCT,
    POWER_REASONS,
    THERMAL_REASONS,
    FactValue,
    any_known,
    fact,
    is_busy,
    limited_fraction,
    max_known,
    min_known,
    power_draw,
    power_limit,
    sum_known,
    used_pct,
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


@fact("gpu.thermal_limited_fraction", "gpus.throttle_reasons")
def _thermal(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW / HW Thermal Slowdown (NVML
    nvmlDeviceGetCurrentClocksEventReasons): share of samples with either active, the
    larger of the two per GPU; a single snapshot is one sample (1.0 or 0.0). dmon tviol
    gives a measured share. Worst GPU."""
    return max_known(limited_fraction(g, THERMAL_REASONS) for g in s.gpus)


@fact("gpu.power_limited_fraction", "gpus.throttle_reasons")
def _power(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW Power Cap / HW Power Brake Slowdown, as for the thermal
    fraction (dmon pviol gives a measured share). Worst GPU."""
    return max_known(limited_fraction(g, POWER_REASONS) for g in s.gpus)


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
        return mean(series)
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
