"""Facts about the whole host: ``host.*``."""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean

from gpuadvisor.engine.hostfacts._common import (
    EVENT_SOURCES,
    LINK_ORDER,
    WINDOW,
    Derivation,
    FactValue,
    basis_of_count,
    compute_processes,
    fact,
    gpu_util,
    max_known,
    min_known,
    used_pct,
)
from gpuadvisor.host.schema import HostSnapshot
from gpuadvisor.nvidia.xid import XID_BUS, XID_ECC, XID_GSP, XID_NVLINK


@fact("host.gpu_count", "gpus.index", "gpus.name", "gpus.uuid", "gpus.pci_bus_id")
def _gpu_count(s: HostSnapshot) -> FactValue:
    """GPUs the evidence lists (nvidia-smi -q / -x / table / -L / csv / topo rows, NVML
    nvmlDeviceGetCount), merged by bus id / UUID / index. None when no source lists GPUs."""
    return len(s.gpus) if s.gpus else None


@fact("host.gpu_util_mean_pct", "gpus.utilisation", "gpus.samples")
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
    return fmean(points) if points else None


@fact("host.util_samples", "gpus.utilisation", "gpus.samples")
def _util_samples(s: HostSnapshot) -> FactValue:
    """Utilisation samples behind the means: the fewest any GPU has (probe samples,
    dmon rows); a one-off snapshot (nvidia-smi -q, -x, a CSV row) counts as one. Rules
    that judge utilisation ask for a series, since one instant says little."""
    counts: list[int] = []
    for gpu in s.gpus:
        series = [x for x in gpu.samples or () if x.util_pct is not None]
        if series:
            counts.append(len(series))
        elif gpu.utilisation.gpu_pct is not None:
            counts.append(1)
    return min(counts) if counts else None


@fact("host.gpu_util_basis", "gpus.utilisation", "gpus.samples")
def _util_basis(s: HostSnapshot) -> FactValue:
    """What the utilisation facts rest on: window when every GPU's utilisation comes
    from two or more samples (a dmon series, a probe), snapshot when one GPU's is a
    single reading (nvidia-smi -q, -x, a CSV row), which may fall between two jobs."""
    samples = _util_samples(s)
    return basis_of_count(samples if isinstance(samples, int) else None)


@fact("host.gpu_util_max_pct", "gpus.utilisation", "gpus.samples")
def _util_max(s: HostSnapshot) -> FactValue:
    """Highest per-GPU mean utilisation (see host.gpu_util_mean_pct)."""
    return max_known(gpu_util(g) for g in s.gpus)


@fact("host.gpu_util_min_pct", "gpus.utilisation", "gpus.samples")
def _util_min(s: HostSnapshot) -> FactValue:
    """Lowest per-GPU mean utilisation."""
    return min_known(gpu_util(g) for g in s.gpus)


@fact("host.gpu_idle_beside_busy", "gpus.utilisation", "gpus.samples")
def _idle_beside_busy(s: HostSnapshot) -> FactValue:
    """A GPU under 10 % mean utilisation while another is above 60 %."""
    utils = [u for g in s.gpus if (u := gpu_util(g)) is not None]
    if not utils:
        return None
    return min(utils) < 10 and max(utils) > 60


@fact("host.processes_max_per_gpu", "gpus.processes")
def _processes_max(s: HostSnapshot) -> FactValue:
    """Most compute processes on one GPU (-q Processes, pmon, --query-compute-apps;
    NVML nvmlDeviceGetComputeRunningProcesses)."""
    counts = [c for g in s.gpus if (c := compute_processes(g)) is not None]
    return max(counts) if counts else None


@fact("host.gpus_without_process", "gpus.processes")
def _gpus_without_process(s: HostSnapshot) -> FactValue:
    """GPUs with no compute process while at least one other GPU has one (else 0)."""
    counts = [c for g in s.gpus if (c := compute_processes(g)) is not None]
    if not counts:
        return None
    return sum(1 for c in counts if c == 0) if any(counts) else 0


@fact("host.memory_used_spread_pct", "gpus.memory_used_mib", "gpus.memory_total_mib")
def _memory_spread(s: HostSnapshot) -> FactValue:
    """max - min of FB Memory Usage Used / Total (NVML nvmlDeviceGetMemoryInfo), in %."""
    used = [used_pct(g) for g in s.gpus]
    known = [u for u in used if u is not None]
    return max(known) - min(known) if known else None


@fact("host.iowait_pct", "host.cpu_util", "host.iowait_pct")
def _iowait(s: HostSnapshot) -> FactValue:
    """mpstat 'all' %iowait, else iostat avg-cpu %iowait (both: share of CPU time idle
    with I/O outstanding)."""
    if s.host.cpu_util.iowait_pct is not None:
        return s.host.cpu_util.iowait_pct
    return s.host.iowait_pct


@fact("host.cpu_util_mean_pct", "host.cpu_util")
def _cpu_mean(s: HostSnapshot) -> FactValue:
    """mpstat 'all': 100 - %idle (mean over per-CPU rows when 'all' is missing)."""
    util = s.host.cpu_util
    if util.mean_busy_pct is not None:
        return util.mean_busy_pct
    return fmean(c.busy_pct for c in util.per_core) if util.per_core else None


@fact("host.cpu_saturated_cores", "host.cpu_util")
def _cpu_saturated(s: HostSnapshot) -> FactValue:
    """mpstat -P ALL rows with 100 - %idle >= 95."""
    cores = s.host.cpu_util.per_core
    return sum(1 for c in cores if c.busy_pct >= 95) if cores else None


@fact("host.cpu_busy_min_pct", "host.cpu_util")
def _cpu_least_busy(s: HostSnapshot) -> FactValue:
    """mpstat -P ALL: 100 - %idle of the least busy CPU. At 90 or more, every CPU of
    the host is busy: no idle core is left to feed another GPU."""
    cores = s.host.cpu_util.per_core
    return min(c.busy_pct for c in cores) if cores else None


@fact("host.cpu_util_basis", "host.cpu_util", "host.iowait_pct")
def _cpu_basis(s: HostSnapshot) -> FactValue:
    """What the CPU and iowait facts rest on. mpstat and iostat never print an instant:
    each figure is an average over an interval (the one asked for, or since boot when
    none was), and the probe reads /proc/stat over its window; so window whenever they
    are known."""
    util = s.host.cpu_util
    known = util.mean_busy_pct is not None or util.per_core or util.iowait_pct is not None
    return WINDOW if known or s.host.iowait_pct is not None else None


@fact("host.cpu_cores", "host.cpu")
def _cpu_cores(s: HostSnapshot) -> FactValue:
    """lscpu CPU(s), or the '(N CPU)' of a sysstat banner: logical CPUs."""
    return s.host.cpu.logical_cpus


@fact("host.cpu_sockets", "host.cpu")
def _cpu_sockets(s: HostSnapshot) -> FactValue:
    """lscpu Socket(s)."""
    return s.host.cpu.sockets


@fact("host.numa_nodes", "host.cpu")
def _numa_nodes(s: HostSnapshot) -> FactValue:
    """lscpu NUMA node(s), else the count of 'NUMA nodeN CPU(s)' lines."""
    cpu = s.host.cpu
    return cpu.numa_nodes or (len(cpu.numa_node_cpus) or None)


@fact("host.disk_util_max_pct", "host.disks")
def _disk_util(s: HostSnapshot) -> FactValue:
    """iostat -x %util of the busiest device (share of time the device had I/O in
    flight; near 100 % a device without internal parallelism is saturated)."""
    return max_known(d.util_pct for d in s.host.disks)


@fact("host.disk_await_max_ms", "host.disks")
def _disk_await(s: HostSnapshot) -> FactValue:
    """iostat -x r_await / w_await (ms per request, queueing included), highest."""
    return max_known([*(d.r_await for d in s.host.disks), *(d.w_await for d in s.host.disks)])


@fact("host.net_util_max_pct", "host.net")
def _net_util(s: HostSnapshot) -> FactValue:
    """sar -n DEV %ifutil (throughput against the interface's line rate), busiest
    interface other than loopback; None when sar printed no %ifutil."""
    return max_known(n.util_pct for n in s.host.net if n.iface != "lo")


def _gpu_nodes(s: HostSnapshot) -> set[int]:
    nodes = {g.numa_node for g in s.gpus if g.numa_node is not None}
    # ASCII digits only: "²".isdigit() is true and int() refuses it.
    nodes |= {
        int(v)
        for v in s.topology.numa_affinity.values()
        if v and v.isascii() and v.isdigit() and len(v) <= 6
    }
    return nodes


@fact(
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
    """Xid counts by group (classes and groups: gpuadvisor.nvidia.xid)."""

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
        fact(name, "events")(counter(keep))


_register_xid_facts()


@fact("host.gpu_lost_count", "events")
def _gpus_lost(s: HostSnapshot) -> FactValue:
    """GPUs that fell off the bus or stopped answering, each counted once however the
    evidence says it: an Xid 79 (kernel log, DCGM, the probe's NVML event watch), a
    kernel log's "fallen off the bus" message in any driver's wording, or a live probe's
    NVML_ERROR_GPU_IS_LOST (reported beside the Xid 79 NVML gives). GPUs are told apart
    by bus id; an event without one counts on its own. None when no kernel log, DCGM
    scrape or probe was among the evidence."""
    scanned = "events" in s.provenance or any(src.kind in EVENT_SOURCES for src in s.sources)
    if not scanned and not s.events:
        return None
    lost = [
        e.pci_bus_id
        for e in s.events
        if e.kind == "gpu-lost" or (e.kind == "xid" and e.code in XID_BUS)
    ]
    return len({bus for bus in lost if bus}) + sum(1 for bus in lost if not bus)


def _aer(s: HostSnapshot, corrected: bool) -> FactValue:
    scanned = "events" in s.provenance or any(src.kind == "kernel-log" for src in s.sources)
    if not scanned and not s.events:
        return None
    return sum(1 for e in s.events if e.kind == "aer" and (e.severity == "corrected") == corrected)


@fact("host.aer_corrected_count", "events")
def _aer_corrected(s: HostSnapshot) -> FactValue:
    """Kernel log 'PCIe Bus Error: severity=Corrected' events."""
    return _aer(s, corrected=True)


@fact("host.aer_uncorrected_count", "events")
def _aer_uncorrected(s: HostSnapshot) -> FactValue:
    """Kernel log 'PCIe Bus Error: severity=Uncorrected (Non-Fatal | Fatal)' events."""
    return _aer(s, corrected=False)


@fact("host.gpu_pair_worst_link", "topology.pairs")
def _worst_link(s: HostSnapshot) -> FactValue:
    """Worst topo -m path between two GPUs (NIC pairs ignored); NV# reads as NV.
    NVML equivalent: nvmlDeviceGetTopologyCommonAncestor."""
    links = [
        "NV" if p.link == "NV#" else p.link
        for p in s.topology.pairs
        if p.a.startswith("GPU") and p.b.startswith("GPU") and p.link != "X"
    ]
    return max(links, key=LINK_ORDER.index) if links else None


@fact("host.p2p_ok", "topology.p2p")
def _p2p_ok(s: HostSnapshot) -> FactValue:
    """Every GPU pair in topo -p2p shows OK (NVML nvmlDeviceGetP2PStatus)."""
    pairs = [p for p in s.topology.p2p if p.a.startswith("GPU") and p.b.startswith("GPU")]
    return all(p.status == "OK" for p in pairs) if pairs else None


@fact("host.persistence_off_count", "gpus.persistence_mode")
def _persistence_off(s: HostSnapshot) -> FactValue:
    """GPUs whose Persistence Mode is Disabled (NVML nvmlDeviceGetPersistenceMode);
    Windows reports N/A, which is not counted."""
    known = [g.persistence_mode for g in s.gpus if g.persistence_mode is not None]
    return sum(1 for p in known if not p) if known else None
