"""Measured facts: ``host.*`` and ``gpu.*``, filled by :mod:`gpuadvisor.engine.hostfacts`."""

from __future__ import annotations

from gpuadvisor.engine.factspec._base import FactSpec, _b, _basis, _n

#: Measured facts. The evidence layer fills what its sources report; the rest stay null.
HOST_FACTS: tuple[FactSpec, ...] = (
    FactSpec("host.evidence_present", "bool", "Any host evidence was attached.", source="evidence"),
    _n("host.gpu_count", "GPUs the evidence shows on the host."),
    _n("host.gpu_util_mean_pct", "Mean GPU utilisation over GPUs and samples.", "%"),
    _n(
        "host.util_samples",
        "Utilisation samples behind the means (fewest of any GPU; a snapshot counts as 1).",
    ),
    _n("host.gpu_util_max_pct", "Highest per-GPU mean utilisation.", "%"),
    _n("host.gpu_util_min_pct", "Lowest per-GPU mean utilisation.", "%"),
    _b("host.gpu_idle_beside_busy", "One GPU idles (<10%) while another is busy (>60%)."),
    _n("host.processes_max_per_gpu", "Most compute processes on one GPU."),
    _n("host.gpus_without_process", "GPUs with no compute process while others have some."),
    _n("host.memory_used_spread_pct", "Largest minus smallest memory use, % of capacity."),
    _n("host.iowait_pct", "CPU time waiting on I/O (mpstat / iostat average).", "%"),
    _n("host.cpu_util_mean_pct", "Mean busy CPU time over all cores.", "%"),
    _n("host.cpu_saturated_cores", "Cores at 95% busy or more."),
    _n("host.cpu_cores", "Logical CPUs."),
    _n("host.cpu_sockets", "CPU sockets reported by lscpu."),
    _n("host.numa_nodes", "NUMA nodes."),
    _b("host.numa_binding_remote", "A process is bound to a NUMA node other than its GPU's."),
    _n("host.disk_util_max_pct", "Busiest block device's %util (iostat -x).", "%"),
    _n(
        "host.disk_await_max_ms",
        "Highest average I/O wait per request (iostat r_await/w_await).",
        "ms",
    ),
    _n("host.net_util_max_pct", "Busiest network interface against its line rate.", "%"),
    _n("host.xid_count", "Xid events in the kernel log."),
    _n(
        "host.xid_hardware_count",
        "Xid events that point at hardware (79, 48, 94, 95, 63, 64, 74, 92, ...).",
    ),
    _n("host.xid_bus_count", "Xid 79: the GPU fell off the bus."),
    _n("host.xid_ecc_count", "Xid 48, 63, 64, 94, 95: memory errors and row remapping."),
    _n("host.xid_nvlink_count", "Xid 74: NVLink errors."),
    _n("host.xid_gsp_count", "Xid 119, 120: GSP firmware timeouts or errors."),
    _n("host.xid_driver_count", "Xid events that point at the driver or firmware."),
    _n("host.xid_application_count", "Xid 13, 31, 43, 45: usually the application's fault."),
    _n(
        "host.gpu_lost_count",
        "GPUs that fell off the bus or stopped answering (Xid 79, the driver's "
        "'fallen off the bus' message, NVML GPU_IS_LOST), each once.",
    ),
    _n("host.aer_corrected_count", "PCIe AER corrected errors in the kernel log."),
    _n("host.aer_uncorrected_count", "PCIe AER uncorrected (fatal or non-fatal) errors."),
    FactSpec(
        "host.gpu_pair_worst_link",
        "string",
        "Worst GPU-to-GPU path in nvidia-smi topo -m terms.",
        choices=("NV", "PIX", "PXB", "PHB", "NODE", "SYS"),
        nullable=True,
        source="evidence",
    ),
    _b("host.p2p_ok", "Peer-to-peer works between every GPU pair (topo -p2p n: OK)."),
    _n("host.persistence_off_count", "GPUs with persistence mode disabled (Linux)."),
    _b("gpu.pcie_width_degraded", "A GPU's PCIe link runs narrower than its maximum."),
    _n("gpu.pcie_width_current_min", "Narrowest current PCIe link width.", "lanes"),
    _b(
        "gpu.pcie_gen_degraded_under_load",
        "A busy GPU's PCIe generation is below its maximum (idle GPUs are not judged).",
    ),
    _n(
        "gpu.pcie_replays_per_min_max",
        "PCIe replays per minute over the window, the GPU whose link retried most.",
        "per minute",
    ),
    _n(
        "gpu.thermal_limited_fraction",
        "Share of samples with thermal slowdown active (worst GPU).",
        "share",
    ),
    _n(
        "gpu.power_limited_fraction",
        "Share of samples with SW Power Cap or HW Power Brake active (worst GPU).",
        "share",
    ),
    _n("gpu.temp_margin_c", "Slowdown temperature minus the hottest reading (smallest).", "°C"),
    _n("gpu.sm_clock_ratio_busy", "SM clock / max SM clock while busy (lowest).", "ratio"),
    _n("gpu.power_draw_ratio", "Power draw / enforced limit (highest).", "ratio"),
    _n("gpu.memory_used_max_pct", "Fullest GPU's memory use.", "%"),
    _n("gpu.memory_total_max_gib", "Largest GPU memory present.", "GiB"),
    _b("gpu.ecc_enabled_all", "ECC is enabled on every GPU that supports it."),
    _b("gpu.ecc_supported_any", "At least one GPU supports ECC."),
    _n(
        "gpu.ecc_uncorrectable_total",
        "Uncorrectable (double-bit) ECC errors, volatile + aggregate.",
    ),
    _n("gpu.ecc_correctable_aggregate", "Aggregate correctable (single-bit) ECC errors."),
    _n("gpu.retired_pages_total", "Retired memory pages over all GPUs."),
    _b("gpu.retired_pages_pending", "A page retirement waits for a reset."),
    _b("gpu.remap_pending", "A row remap waits for a GPU reset."),
    _b("gpu.remap_failure", "Row remapping has failed on a GPU."),
    # What measured values rest on, and the judgements of issue #15 built on that.
    _basis(
        "host.gpu_util_basis", "What GPU utilisation rests on: a sampled window or one snapshot."
    ),
    _basis("host.cpu_util_basis", "What CPU busy and iowait rest on (mpstat / iostat: a window)."),
    _n("host.cpu_busy_min_pct", "The least busy CPU's busy time (mpstat -P ALL).", "%"),
    _basis("gpu.thermal_basis", "What gpu.thermal_limited_fraction rests on."),
    _n(
        "gpu.power_cap_fraction",
        "Share of readings at the GPU's own power cap (SW Power Cap; worst GPU).",
        "share",
    ),
    _basis("gpu.power_cap_basis", "What gpu.power_cap_fraction rests on."),
    _n(
        "gpu.power_cap_draw_ratio",
        "That GPU's power draw under load / its enforced limit.",
        "ratio",
    ),
    _n(
        "gpu.power_brake_fraction",
        "Share of readings with the external HW Power Brake on a busy GPU (worst).",
        "share",
    ),
    _basis("gpu.power_brake_basis", "What the HW Power Brake readings rest on."),
    _b("gpu.power_brake_idle", "The HW Power Brake is asserted on an idle GPU."),
    _n(
        "gpu.clock_held_fraction",
        "Share of readings in which a busy GPU reported a reason holding its clocks down.",
        "share",
    ),
    _n(
        "gpu.sm_clock_sustained_ratio",
        "Mean busy SM clock / the highest busy SM clock in the same window (lowest).",
        "ratio",
    ),
    _basis("gpu.clock_basis", "What the clock judgement rests on."),
)

#: The cards the evidence shows, as options that keep them need them
#: (:mod:`gpuadvisor.engine.hostfacts._existing`).
EXISTING_GPU_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "host.gpu_model",
        "string",
        "The product name every GPU in the evidence reports (null when they differ).",
        nullable=True,
        source="evidence",
    ),
    _n("host.gpu_models_distinct", "Different GPU product names in the evidence."),
    _n("host.gpu_memory_total_min_mib", "Smallest FB Memory Usage > Total of any GPU.", "MiB"),
    _n(
        "host.gpu_memory_reserved_max_mib",
        "Largest FB Memory Usage > Reserved of any GPU (driver reserve).",
        "MiB",
    ),
)
HOST_FACTS = (*HOST_FACTS, *EXISTING_GPU_FACTS)
