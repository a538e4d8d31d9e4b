"""Host evidence -> the ``host.*`` and ``gpu.*`` facts rules read (factspec.HOST_FACTS).

Each fact has one derivation function below, registered with the snapshot parts it
reads; its docstring says which nvidia-smi field / NVML call the inputs come from and
how they are combined. A fact whose inputs no evidence reported is ``None``; ``gpu.*``
facts are the worst case over the host's GPUs.

"Busy" (for the PCIe generation and clock facts) means utilisation >= 50 % or power draw
>= 50 % of the enforced limit: GPUs drop link generation and clocks when idle to save
power, so idle readings say nothing about what the hardware can sustain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from statistics import mean

from gpuadvisor.errors import InternalError
from gpuadvisor.evidence.xid import XID_BUS, XID_ECC, XID_GSP, XID_NVLINK
from gpuadvisor.factspec import HOST_FACTS
from gpuadvisor.host import Gpu, HostSnapshot, ReasonState, ThrottleReason

FactValue = float | int | bool | str | None
Derivation = Callable[[HostSnapshot], FactValue]

BUSY_UTIL_PCT = 50.0
BUSY_POWER_RATIO = 0.5
THERMAL_REASONS: tuple[ThrottleReason, ...] = ("sw_thermal_slowdown", "hw_thermal_slowdown")
POWER_REASONS: tuple[ThrottleReason, ...] = ("sw_power_cap", "hw_power_brake_slowdown")
#: topo -m paths, best first.
LINK_ORDER = ("NV", "PIX", "PXB", "PHB", "NODE", "SYS")
EVENT_SOURCES = frozenset({"kernel-log", "dcgm-prom"})


@dataclass(frozen=True)
class HostFacts:
    """Every host fact's value (None when unknown) and the evidence files behind it."""

    values: dict[str, FactValue]
    sources: dict[str, tuple[str, ...]]


_REGISTRY: dict[str, tuple[Derivation, tuple[str, ...]]] = {}


def _fact(name: str, *parts: str) -> Callable[[Derivation], Derivation]:
    def register(function: Derivation) -> Derivation:
        _REGISTRY[name] = (function, parts)
        return function

    return register


def derive_host_facts(snapshot: HostSnapshot | None) -> HostFacts:
    names = [spec.name for spec in HOST_FACTS]
    missing = [n for n in names if n not in _REGISTRY and n != "host.evidence_present"]
    if missing:
        raise InternalError(f"host facts without a derivation: {', '.join(missing)}")
    if snapshot is None:
        values: dict[str, FactValue] = dict.fromkeys(names)
        values["host.evidence_present"] = False
        return HostFacts(values=values, sources={})
    values = {"host.evidence_present": True}
    sources: dict[str, tuple[str, ...]] = {
        "host.evidence_present": tuple(s.file for s in snapshot.sources)
    }
    for name in names:
        if name == "host.evidence_present":
            continue
        function, parts = _REGISTRY[name]
        value = function(snapshot)
        values[name] = round(value, 3) if isinstance(value, float) else value
        if value is not None:
            sources[name] = _files(snapshot, parts)
    return HostFacts(values=values, sources=sources)


def _files(snapshot: HostSnapshot, parts: Iterable[str]) -> tuple[str, ...]:
    """Files that filled any of ``parts``; all files when the snapshot keeps no
    provenance (a probe, or a hand-written host/v1 file)."""
    if not snapshot.provenance:
        return tuple(sorted({s.file for s in snapshot.sources}))
    found: set[str] = set()
    for part in parts:
        found.update(snapshot.provenance.get(part, ()))
    return tuple(sorted(found))


# --- helpers ------------------------------------------------------------------------


def _util(gpu: Gpu) -> float | None:
    """Mean of the time series when there is one, else the snapshot's Utilization.Gpu."""
    series = [s.util_pct for s in gpu.samples or () if s.util_pct is not None]
    if series:
        return mean(series)
    return gpu.utilisation.gpu_pct


def _draw(gpu: Gpu) -> float | None:
    if gpu.power.draw_w is not None:
        return gpu.power.draw_w
    if gpu.power.draw_instant_w is not None:
        return gpu.power.draw_instant_w
    series = [s.power_w for s in gpu.samples or () if s.power_w is not None]
    return mean(series) if series else None


def _limit(gpu: Gpu) -> float | None:
    return gpu.power.enforced_limit_w or gpu.power.limit_w


def _busy(gpu: Gpu) -> bool | None:
    util, draw, limit = gpu.utilisation.gpu_pct, _draw(gpu), _limit(gpu)
    if util is not None and util >= BUSY_UTIL_PCT:
        return True
    if draw is not None and limit and draw / limit >= BUSY_POWER_RATIO:
        return True
    if util is None and (draw is None or not limit):
        return None
    return False


def _fraction(state: ReasonState | None) -> float | None:
    if state is None:
        return None
    if state.fraction is not None:
        return state.fraction
    return None if state.active is None else float(state.active)


def _limited(gpu: Gpu, reasons: tuple[ThrottleReason, ...]) -> float | None:
    fractions = [f for r in reasons if (f := _fraction(gpu.throttle_reasons.get(r))) is not None]
    return max(fractions) if fractions else None


def _any(values: Iterable[bool | None]) -> bool | None:
    known = [v for v in values if v is not None]
    return any(known) if known else None


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _max(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _min(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _compute_processes(gpu: Gpu) -> int | None:
    """Compute processes: type C or M+C (not graphics: on Windows every desktop app shows
    as C+G); sources that list compute apps only give no type and all count."""
    if gpu.processes is None:
        return None
    return sum(1 for p in gpu.processes if p.type is None or ("C" in p.type and "G" not in p.type))


# --- host.* ------------------------------------------------------------------------


@_fact("host.gpu_count", "gpus.index", "gpus.name", "gpus.uuid", "gpus.pci_bus_id")
def _gpu_count(s: HostSnapshot) -> FactValue:
    """GPUs the evidence lists (nvidia-smi -q / -x / table / -L / csv / topo rows, NVML
    nvmlDeviceGetCount), merged by bus id / UUID / index. None when no source lists GPUs."""
    return len(s.gpus) if s.gpus else None


@_fact("host.gpu_util_mean_pct", "gpus.utilisation", "gpus.samples")
def _util_mean(s: HostSnapshot) -> FactValue:
    """Mean of Utilization.Gpu (NVML nvmlDeviceGetUtilizationRates) over every GPU and
    every sample (dmon sm / probe samples); a snapshot counts as one sample."""
    points: list[float] = []
    for gpu in s.gpus:
        series = [x.util_pct for x in gpu.samples or () if x.util_pct is not None]
        if series:
            points += series
        elif gpu.utilisation.gpu_pct is not None:
            points.append(gpu.utilisation.gpu_pct)
    return mean(points) if points else None


@_fact("host.gpu_util_max_pct", "gpus.utilisation", "gpus.samples")
def _util_max(s: HostSnapshot) -> FactValue:
    """Highest per-GPU mean utilisation (see host.gpu_util_mean_pct)."""
    return _max(_util(g) for g in s.gpus)


@_fact("host.gpu_util_min_pct", "gpus.utilisation", "gpus.samples")
def _util_min(s: HostSnapshot) -> FactValue:
    """Lowest per-GPU mean utilisation."""
    return _min(_util(g) for g in s.gpus)


@_fact("host.gpu_idle_beside_busy", "gpus.utilisation", "gpus.samples")
def _idle_beside_busy(s: HostSnapshot) -> FactValue:
    """A GPU under 10 % mean utilisation while another is above 60 %."""
    utils = [u for g in s.gpus if (u := _util(g)) is not None]
    if not utils:
        return None
    return min(utils) < 10 and max(utils) > 60


@_fact("host.processes_max_per_gpu", "gpus.processes")
def _processes_max(s: HostSnapshot) -> FactValue:
    """Most compute processes on one GPU (-q Processes, pmon, --query-compute-apps;
    NVML nvmlDeviceGetComputeRunningProcesses)."""
    counts = [c for g in s.gpus if (c := _compute_processes(g)) is not None]
    return max(counts) if counts else None


@_fact("host.gpus_without_process", "gpus.processes")
def _gpus_without_process(s: HostSnapshot) -> FactValue:
    """GPUs with no compute process while at least one other GPU has one (else 0)."""
    counts = [c for g in s.gpus if (c := _compute_processes(g)) is not None]
    if not counts:
        return None
    return sum(1 for c in counts if c == 0) if any(counts) else 0


@_fact("host.memory_used_spread_pct", "gpus.memory_used_mib", "gpus.memory_total_mib")
def _memory_spread(s: HostSnapshot) -> FactValue:
    """max - min of FB Memory Usage Used / Total (NVML nvmlDeviceGetMemoryInfo), in %."""
    used = [_used_pct(g) for g in s.gpus]
    known = [u for u in used if u is not None]
    return max(known) - min(known) if known else None


def _used_pct(gpu: Gpu) -> float | None:
    if gpu.memory_used_mib is None or not gpu.memory_total_mib:
        return None
    return 100.0 * gpu.memory_used_mib / gpu.memory_total_mib


@_fact("host.iowait_pct", "host.cpu_util", "host.iowait_pct")
def _iowait(s: HostSnapshot) -> FactValue:
    """mpstat 'all' %iowait, else iostat avg-cpu %iowait (both: share of CPU time idle
    with I/O outstanding)."""
    if s.host.cpu_util.iowait_pct is not None:
        return s.host.cpu_util.iowait_pct
    return s.host.iowait_pct


@_fact("host.cpu_util_mean_pct", "host.cpu_util")
def _cpu_mean(s: HostSnapshot) -> FactValue:
    """mpstat 'all': 100 - %idle (mean over per-CPU rows when 'all' is missing)."""
    util = s.host.cpu_util
    if util.mean_busy_pct is not None:
        return util.mean_busy_pct
    return mean(c.busy_pct for c in util.per_core) if util.per_core else None


@_fact("host.cpu_saturated_cores", "host.cpu_util")
def _cpu_saturated(s: HostSnapshot) -> FactValue:
    """mpstat -P ALL rows with 100 - %idle >= 95."""
    cores = s.host.cpu_util.per_core
    return sum(1 for c in cores if c.busy_pct >= 95) if cores else None


@_fact("host.cpu_cores", "host.cpu")
def _cpu_cores(s: HostSnapshot) -> FactValue:
    """lscpu CPU(s), or the '(N CPU)' of a sysstat banner: logical CPUs."""
    return s.host.cpu.logical_cpus


@_fact("host.cpu_sockets", "host.cpu")
def _cpu_sockets(s: HostSnapshot) -> FactValue:
    """lscpu Socket(s)."""
    return s.host.cpu.sockets


@_fact("host.numa_nodes", "host.cpu")
def _numa_nodes(s: HostSnapshot) -> FactValue:
    """lscpu NUMA node(s), else the count of 'NUMA nodeN CPU(s)' lines."""
    cpu = s.host.cpu
    return cpu.numa_nodes or (len(cpu.numa_node_cpus) or None)


@_fact("host.disk_util_max_pct", "host.disks")
def _disk_util(s: HostSnapshot) -> FactValue:
    """iostat -x %util of the busiest device (share of time the device had I/O in
    flight; near 100 % a device without internal parallelism is saturated)."""
    return _max(d.util_pct for d in s.host.disks)


@_fact("host.disk_await_max_ms", "host.disks")
def _disk_await(s: HostSnapshot) -> FactValue:
    """iostat -x r_await / w_await (ms per request, queueing included), highest."""
    return _max([*(d.r_await for d in s.host.disks), *(d.w_await for d in s.host.disks)])


@_fact("host.net_util_max_pct", "host.net")
def _net_util(s: HostSnapshot) -> FactValue:
    """sar -n DEV %ifutil (throughput against the interface's line rate), busiest
    interface other than loopback; None when sar printed no %ifutil."""
    return _max(n.util_pct for n in s.host.net if n.iface != "lo")


def _gpu_nodes(s: HostSnapshot) -> set[int]:
    nodes = {g.numa_node for g in s.gpus if g.numa_node is not None}
    nodes |= {int(v) for v in s.topology.numa_affinity.values() if v and v.isdigit()}
    return nodes


@_fact(
    "host.numa_binding_remote",
    "host.numa_binding",
    "gpus.numa_node",
    "topology.numa_affinity",
)
def _binding_remote(s: HostSnapshot) -> FactValue:
    """numactl --show nodebind (else membind) against the GPUs' topo -m NUMA Affinity:
    True when the binding holds none of the GPUs' nodes, False when it holds all of them,
    None when it holds some (which GPU the process drives is not known) or either side
    is missing."""
    binding = s.host.numa_binding
    bound = binding.nodebind if binding.nodebind is not None else binding.membind
    gpu_nodes = _gpu_nodes(s)
    if bound is None or not gpu_nodes:
        return None
    if gpu_nodes.isdisjoint(bound):
        return True
    return False if gpu_nodes.issubset(bound) else None


def _xids(s: HostSnapshot, keep: Callable[[int, str | None], bool]) -> FactValue:
    """Count of Xid events passing ``keep(code, class)``; None when no kernel log (or
    DCGM scrape) was among the evidence."""
    scanned = "events" in s.provenance or any(src.kind in EVENT_SOURCES for src in s.sources)
    if not scanned and not s.events:
        return None
    return sum(
        1 for e in s.events if e.kind == "xid" and e.code is not None and keep(e.code, e.xid_class)
    )


def _register_xid_facts() -> None:
    """Xid counts by group (classes and groups: gpuadvisor.evidence.xid)."""

    def counter(keep: Callable[[int, str | None], bool]) -> Derivation:
        return lambda s: _xids(s, keep)

    groups: dict[str, Callable[[int, str | None], bool]] = {
        "host.xid_count": lambda code, cls: True,
        "host.xid_hardware_count": lambda code, cls: cls == "hardware",
        "host.xid_bus_count": lambda code, cls: code in XID_BUS,
        "host.xid_ecc_count": lambda code, cls: code in XID_ECC,
        "host.xid_nvlink_count": lambda code, cls: code in XID_NVLINK,
        "host.xid_gsp_count": lambda code, cls: code in XID_GSP,
        "host.xid_driver_count": lambda code, cls: cls == "driver",
        "host.xid_application_count": lambda code, cls: cls == "application",
    }
    for name, keep in groups.items():
        _fact(name, "events")(counter(keep))


_register_xid_facts()


def _aer(s: HostSnapshot, corrected: bool) -> FactValue:
    scanned = "events" in s.provenance or any(src.kind == "kernel-log" for src in s.sources)
    if not scanned and not s.events:
        return None
    return sum(1 for e in s.events if e.kind == "aer" and (e.severity == "corrected") == corrected)


@_fact("host.aer_corrected_count", "events")
def _aer_corrected(s: HostSnapshot) -> FactValue:
    """Kernel log 'PCIe Bus Error: severity=Corrected' events."""
    return _aer(s, corrected=True)


@_fact("host.aer_uncorrected_count", "events")
def _aer_uncorrected(s: HostSnapshot) -> FactValue:
    """Kernel log 'PCIe Bus Error: severity=Uncorrected (Non-Fatal | Fatal)' events."""
    return _aer(s, corrected=False)


@_fact("host.gpu_pair_worst_link", "topology.pairs")
def _worst_link(s: HostSnapshot) -> FactValue:
    """Worst topo -m path between two GPUs (NIC pairs ignored); NV# reads as NV.
    NVML equivalent: nvmlDeviceGetTopologyCommonAncestor."""
    links = [
        "NV" if p.link == "NV#" else p.link
        for p in s.topology.pairs
        if p.a.startswith("GPU") and p.b.startswith("GPU") and p.link != "X"
    ]
    return max(links, key=LINK_ORDER.index) if links else None


@_fact("host.p2p_ok", "topology.p2p")
def _p2p_ok(s: HostSnapshot) -> FactValue:
    """Every GPU pair in topo -p2p shows OK (NVML nvmlDeviceGetP2PStatus)."""
    pairs = [p for p in s.topology.p2p if p.a.startswith("GPU") and p.b.startswith("GPU")]
    return all(p.status == "OK" for p in pairs) if pairs else None


@_fact("host.persistence_off_count", "gpus.persistence_mode")
def _persistence_off(s: HostSnapshot) -> FactValue:
    """GPUs whose Persistence Mode is Disabled (NVML nvmlDeviceGetPersistenceMode);
    Windows reports N/A, which is not counted."""
    known = [g.persistence_mode for g in s.gpus if g.persistence_mode is not None]
    return sum(1 for p in known if not p) if known else None


# --- gpu.* (worst GPU) ---------------------------------------------------------------


@_fact("gpu.pcie_width_degraded", "gpus.pcie")
def _width_degraded(s: HostSnapshot) -> FactValue:
    """PCI > GPU Link Info > Link Width: Current below Max on any GPU (NVML
    nvmlDeviceGetCurrPcieLinkWidth / ...MaxPcieLinkWidth). Judged idle or busy: the
    width does not drop to save power the way the generation does."""
    return _any(
        g.pcie.width_current < g.pcie.width_max
        for g in s.gpus
        if g.pcie.width_current is not None and g.pcie.width_max is not None
    )


@_fact("gpu.pcie_width_current_min", "gpus.pcie")
def _width_min(s: HostSnapshot) -> FactValue:
    """Narrowest Link Width > Current, lanes."""
    widths = [g.pcie.width_current for g in s.gpus if g.pcie.width_current is not None]
    return min(widths) if widths else None


@_fact("gpu.pcie_gen_degraded_under_load", "gpus.pcie", "gpus.utilisation", "gpus.power")
def _gen_degraded(s: HostSnapshot) -> FactValue:
    """PCIe Generation Current below Max on a busy GPU (NVML
    nvmlDeviceGetCurrPcieLinkGeneration / ...MaxPcieLinkGeneration). Idle GPUs are not
    judged: they train the link down on purpose. None when no GPU was busy."""
    judged = [
        g.pcie.gen_current < g.pcie.gen_max
        for g in s.gpus
        if _busy(g) and g.pcie.gen_current is not None and g.pcie.gen_max is not None
    ]
    return any(judged) if judged else None


@_fact("gpu.thermal_limited_fraction", "gpus.throttle_reasons")
def _thermal(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW / HW Thermal Slowdown (NVML
    nvmlDeviceGetCurrentClocksEventReasons): share of samples with either active, the
    larger of the two per GPU; a single snapshot is one sample (1.0 or 0.0). dmon tviol
    gives a measured share. Worst GPU."""
    return _max(_limited(g, THERMAL_REASONS) for g in s.gpus)


@_fact("gpu.power_limited_fraction", "gpus.throttle_reasons")
def _power(s: HostSnapshot) -> FactValue:
    """Clocks Event Reasons SW Power Cap / HW Power Brake Slowdown, as for the thermal
    fraction (dmon pviol gives a measured share). Worst GPU."""
    return _max(_limited(g, POWER_REASONS) for g in s.gpus)


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


@_fact("gpu.temp_margin_c", "gpus.temperature", "gpus.samples")
def _temp_margin(s: HostSnapshot) -> FactValue:
    """GPU Slowdown Temp minus the hottest GPU Current Temp seen (NVML
    nvmlDeviceGetTemperatureThreshold(SLOWDOWN) - nvmlDeviceGetTemperature); on Ada and
    later, GPU T.Limit Temp minus GPU Slowdown T.Limit Temp. Smallest over GPUs."""
    return _min(_margin(g) for g in s.gpus)


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
    if _busy(gpu) and gpu.clocks.sm_mhz is not None:
        return gpu.clocks.sm_mhz / top
    return None


@_fact("gpu.sm_clock_ratio_busy", "gpus.clocks", "gpus.utilisation", "gpus.power", "gpus.samples")
def _sm_ratio(s: HostSnapshot) -> FactValue:
    """Clocks SM / Max Clocks SM (NVML nvmlDeviceGetClockInfo / nvmlDeviceGetMaxClockInfo
    for NVML_CLOCK_SM) while busy: mean over busy samples, or the snapshot when the GPU
    was busy. Lowest over GPUs; None when no GPU was busy."""
    return _min(_clock_ratio(g) for g in s.gpus)


@_fact("gpu.power_draw_ratio", "gpus.power", "gpus.samples")
def _power_ratio(s: HostSnapshot) -> FactValue:
    """Power Draw (average where given, else instantaneous, else the sample mean) over
    the enforced power limit (NVML nvmlDeviceGetPowerUsage /
    nvmlDeviceGetEnforcedPowerLimit). Highest over GPUs."""
    return _max(
        draw / limit for g in s.gpus if (draw := _draw(g)) is not None and (limit := _limit(g))
    )


@_fact("gpu.memory_used_max_pct", "gpus.memory_used_mib", "gpus.memory_total_mib")
def _memory_max(s: HostSnapshot) -> FactValue:
    """FB Memory Usage Used / Total, fullest GPU (NVML nvmlDeviceGetMemoryInfo)."""
    return _max(_used_pct(g) for g in s.gpus)


@_fact("gpu.memory_total_max_gib", "gpus.memory_total_mib")
def _memory_total(s: HostSnapshot) -> FactValue:
    """FB Memory Usage Total of the largest GPU, MiB / 1024."""
    totals = [g.memory_total_mib for g in s.gpus if g.memory_total_mib]
    return max(totals) / 1024 if totals else None


def _ecc_capable(s: HostSnapshot) -> list[str]:
    return [g.ecc_mode for g in s.gpus if g.ecc_mode in ("enabled", "disabled")]


@_fact("gpu.ecc_enabled_all", "gpus.ecc_mode")
def _ecc_all(s: HostSnapshot) -> FactValue:
    """ECC Mode Current is Enabled on every GPU that has ECC (NVML
    nvmlDeviceGetEccMode); None when no GPU reports an ECC mode it supports."""
    modes = _ecc_capable(s)
    return all(m == "enabled" for m in modes) if modes else None


@_fact("gpu.ecc_supported_any", "gpus.ecc_mode")
def _ecc_any(s: HostSnapshot) -> FactValue:
    """Any GPU has ECC (mode Enabled or Disabled); False when every GPU that reports a
    mode reports N/A (not supported)."""
    if _ecc_capable(s):
        return True
    return False if any(g.ecc_mode == "unsupported" for g in s.gpus) else None


@_fact("gpu.ecc_uncorrectable_total", "gpus.ecc_errors")
def _ecc_uncorrectable(s: HostSnapshot) -> FactValue:
    """ECC Errors, uncorrectable (double-bit / DRAM + SRAM uncorrectable), NVML
    nvmlDeviceGetTotalEccErrors(UNCORRECTED): per GPU the larger of the volatile and
    aggregate counters (aggregate already includes what volatile counted since the
    driver loaded, so adding them would count errors twice), summed over GPUs."""
    per_gpu = [
        _max([g.ecc_errors.volatile_uncorrectable, g.ecc_errors.aggregate_uncorrectable])
        for g in s.gpus
    ]
    return _sum(int(v) if v is not None else None for v in per_gpu)


@_fact("gpu.ecc_correctable_aggregate", "gpus.ecc_errors")
def _ecc_correctable(s: HostSnapshot) -> FactValue:
    """ECC Errors > Aggregate, correctable (single-bit), summed over GPUs."""
    return _sum(g.ecc_errors.aggregate_correctable for g in s.gpus)


@_fact("gpu.retired_pages_total", "gpus.retired_pages")
def _retired_total(s: HostSnapshot) -> FactValue:
    """Retired Pages Single Bit ECC + Double Bit ECC (NVML nvmlDeviceGetRetiredPages),
    summed over GPUs. Ampere and later remap rows instead and report N/A here."""
    return _sum(_sum([g.retired_pages.single_bit, g.retired_pages.double_bit]) for g in s.gpus)


@_fact("gpu.retired_pages_pending", "gpus.retired_pages")
def _retired_pending(s: HostSnapshot) -> FactValue:
    """Retired Pages Pending Page Blacklist / Retirement is Yes on any GPU."""
    return _any(g.retired_pages.pending for g in s.gpus)


@_fact("gpu.remap_pending", "gpus.remapped_rows")
def _remap_pending(s: HostSnapshot) -> FactValue:
    """Remapped Rows Pending is Yes on any GPU (NVML nvmlDeviceGetRemappedRows
    isPending): a reset is needed to finish the remap."""
    return _any(g.remapped_rows.pending for g in s.gpus)


@_fact("gpu.remap_failure", "gpus.remapped_rows")
def _remap_failure(s: HostSnapshot) -> FactValue:
    """Remapped Rows Remapping Failure Occurred is Yes on any GPU (NVML
    nvmlDeviceGetRemappedRows failureOccurred)."""
    return _any(g.remapped_rows.failure for g in s.gpus)
