"""One GPU under ``gpuadvisor probe``: what is read once, what every sample, what at the
end of the window, and how the samples become the host/v1 :class:`~gpuadvisor.host.schema.Gpu`.

Every value comes from the NVML call named beside it (nvidia-smi shows the same call's
answer under the field in brackets). A call that answers "not available" leaves the
field null and records why in ``Gpu.unavailable``, keyed by the field's path.

Read once, at the start:
  name [Product Name]                nvmlDeviceGetName
  uuid [GPU UUID]                    nvmlDeviceGetUUID
  pci_bus_id [Bus Id]                nvmlDeviceGetPciInfo .busId
  memory_total_mib [FB Total]        nvmlDeviceGetMemoryInfo .total
  clocks.max_sm_mhz / max_mem_mhz    nvmlDeviceGetMaxClockInfo(SM | MEM)
  temperature.slowdown_c / shutdown_c / max_operating_c
                                     nvmlDeviceGetTemperatureThreshold(SLOWDOWN | SHUTDOWN
                                     | GPU_MAX)
  power.enforced_limit_w / limit_w / default_limit_w / min_limit_w / max_limit_w
                                     nvmlDeviceGetEnforcedPowerLimit, ...PowerManagementLimit,
                                     ...PowerManagementDefaultLimit,
                                     ...PowerManagementLimitConstraints
  pcie.gen_max / width_max           nvmlDeviceGetMaxPcieLinkGeneration / ...MaxPcieLinkWidth
  ecc_mode / ecc_mode_pending        nvmlDeviceGetEccMode ("unsupported" on NotSupported)
  mig_mode, mig_devices              nvmlDeviceGetMigMode; nvmlDeviceGetMaxMigDeviceCount,
                                     nvmlDeviceGetMigDeviceHandleByIndex, then UUID,
                                     MemoryInfo, GpuInstanceId, ComputeInstanceId of each
  persistence_mode                   nvmlDeviceGetPersistenceMode
  numa_node [topo -m NUMA Affinity]  nvmlDeviceGetMemoryAffinity(scope NODE), one node
  cpu_affinity [topo -m CPU Affinity] nvmlDeviceGetCpuAffinity
  nvlink_active_links                nvmlDeviceGetNvLinkState per link (and
                                     nvmlDeviceGetNvLinkRemotePciInfo for the peer)

Every sample (summarised over the window by :mod:`gpuadvisor.probe.summary`):
  utilisation                        nvmlDeviceGetUtilizationRates .gpu / .memory
  memory_used_mib                    nvmlDeviceGetMemoryInfo .used
  clocks.sm_mhz / mem_mhz            nvmlDeviceGetClockInfo(SM | MEM)
  temperature.gpu_c                  nvmlDeviceGetTemperature(GPU)
  power.draw_w                       nvmlDeviceGetPowerUsage
  throttle_reasons                   nvmlDeviceGetCurrentClocksEventReasons (drivers before
                                     R535: ...CurrentClocksThrottleReasons)
  pcie.gen_current / width_current   nvmlDeviceGetCurrPcieLinkGeneration / ...Width
  pcie.tx_kBps / rx_kBps             nvmlDeviceGetPcieThroughput(TX | RX)

At the end:
  ecc_errors                         nvmlDeviceGetTotalEccErrors(CORRECTED | UNCORRECTED,
                                     VOLATILE | AGGREGATE)
  retired_pages                      nvmlDeviceGetRetiredPages(cause),
                                     nvmlDeviceGetRetiredPagesPendingStatus
  remapped_rows                      nvmlDeviceGetRemappedRows
  pcie.replay_counter                nvmlDeviceGetPcieReplayCounter (also read as the window
                                     starts: pcie.replays_per_min is its growth per minute)
  processes                          nvmlDeviceGetComputeRunningProcesses (drivers before
                                     R510: ..._v2), nvmlSystemGetProcessName
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, Final

from gpuadvisor.host.schema import Gpu, Mode
from gpuadvisor.nvidia.values import bus_id
from gpuadvisor.probe.nvml import (
    AFFINITY_SCOPE_NODE,
    CLOCK_MEM,
    CLOCK_SM,
    COUNTER_AGGREGATE,
    COUNTER_VOLATILE,
    ERROR_CORRECTED,
    ERROR_UNCORRECTED,
    FEATURE_ENABLED,
    NVLINK_MAX_LINKS,
    PCIE_RX_BYTES,
    PCIE_TX_BYTES,
    RETIRED_DOUBLE_BIT,
    RETIRED_MULTIPLE_SINGLE_BIT,
    TEMPERATURE_GPU,
    THRESHOLD_GPU_MAX,
    THRESHOLD_SHUTDOWN,
    THRESHOLD_SLOWDOWN,
    VALUE_NOT_AVAILABLE_UINT,
    NotAvailable,
    Nvml,
)
from gpuadvisor.probe.summary import Reading, summarise

MIB: Final = 1024 * 1024
_FINAL_FIELDS = (
    "ecc_errors",
    "retired_pages",
    "remapped_rows",
    "pcie.replay_counter",
    "pcie.replays_per_min",
    "processes",
)


def _mode(value: Any) -> Mode:
    return "enabled" if value == FEATURE_ENABLED else "disabled"


def _watts(milliwatts: Any) -> float:
    return round(float(milliwatts) / 1000, 3)


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _bits(mask: Any) -> list[int]:
    """Set bit positions of an NVML bitmask array (64 bits per element)."""
    return [i * 64 + b for i, word in enumerate(mask) for b in range(64) if int(word) >> b & 1]


def cpu_ranges(cpus: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8", as nvidia-smi topo -m prints CPU Affinity."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{low}-{high}" if high > low else str(low) for low, high in runs)


class GpuProbe:
    """The readings of one GPU, and the model they make."""

    def __init__(self, nvml: Nvml, index: int, handle: Any) -> None:
        self.nvml = nvml
        self.index = index
        self.handle = handle
        self.values: dict[str, Any] = {"index": index}
        self.unavailable: dict[str, str] = {}
        self.samples: list[tuple[float, Reading]] = []
        self.lost: str | None = None
        #: Bus ids at the far end of each active NVLink (None where NVML did not say).
        self.nvlink_peers: list[str | None] = []
        self._why: dict[str, str] = {}
        self._gave_up: dict[tuple[Any, ...], NotAvailable] = {}
        #: Replays Since Reset as the window started, and when (monotonic seconds).
        self._replays_at_start: tuple[int, float] | None = None

    @property
    def label(self) -> str:
        return f"GPU{self.index}"

    @property
    def bus_id(self) -> str | None:
        value = self.values.get("pci_bus_id")
        return value if isinstance(value, str) else None

    def put(self, path: str, result: Any, convert: Callable[[Any], Any] = lambda v: v) -> Any:
        """Store ``convert(result)`` at ``path``, or the reason it is not available."""
        if isinstance(result, NotAvailable):
            self.unavailable[path] = str(result)
            return None
        value = convert(result)
        self.values[path] = value
        return value

    def call(self, name: str, *args: Any) -> Any:
        return self.nvml.call(name, self.handle, *args)

    # --- once ------------------------------------------------------------------------

    def read_static(self) -> None:
        self.put("name", self.call("nvmlDeviceGetName"), _text)
        self.put("uuid", self.call("nvmlDeviceGetUUID"), _text)
        self.put("pci_bus_id", self.call("nvmlDeviceGetPciInfo"), lambda p: bus_id(_text(p.busId)))
        self.put("memory_total_mib", self.call("nvmlDeviceGetMemoryInfo"), lambda m: m.total // MIB)
        self.put("clocks.max_sm_mhz", self.call("nvmlDeviceGetMaxClockInfo", CLOCK_SM))
        self.put("clocks.max_mem_mhz", self.call("nvmlDeviceGetMaxClockInfo", CLOCK_MEM))
        for path, threshold in (
            ("temperature.slowdown_c", THRESHOLD_SLOWDOWN),
            ("temperature.shutdown_c", THRESHOLD_SHUTDOWN),
            ("temperature.max_operating_c", THRESHOLD_GPU_MAX),
        ):
            self.put(path, self.call("nvmlDeviceGetTemperatureThreshold", threshold))
        self.put("power.enforced_limit_w", self.call("nvmlDeviceGetEnforcedPowerLimit"), _watts)
        self.put("power.limit_w", self.call("nvmlDeviceGetPowerManagementLimit"), _watts)
        self.put(
            "power.default_limit_w", self.call("nvmlDeviceGetPowerManagementDefaultLimit"), _watts
        )
        constraints = self.call("nvmlDeviceGetPowerManagementLimitConstraints")
        self.put("power.min_limit_w", constraints, lambda c: _watts(c[0]))
        self.put("power.max_limit_w", constraints, lambda c: _watts(c[1]))
        self.put("pcie.gen_max", self.call("nvmlDeviceGetMaxPcieLinkGeneration"))
        self.put("pcie.width_max", self.call("nvmlDeviceGetMaxPcieLinkWidth"))
        self._modes()
        self.put("persistence_mode", self.call("nvmlDeviceGetPersistenceMode"), _enabled)
        self._affinity()
        self._nvlinks()

    def _modes(self) -> None:
        ecc = self.call("nvmlDeviceGetEccMode")
        if isinstance(ecc, NotAvailable) and ecc.not_supported:
            self.values["ecc_mode"] = self.values["ecc_mode_pending"] = "unsupported"
        else:
            self.put("ecc_mode", ecc, lambda m: _mode(m[0]))
            self.put("ecc_mode_pending", ecc, lambda m: _mode(m[1]))
        mig = self.call("nvmlDeviceGetMigMode")
        if isinstance(mig, NotAvailable) and mig.not_supported:
            self.values["mig_mode"] = "unsupported"
        elif self.put("mig_mode", mig, lambda m: _mode(m[0])) == "enabled":
            self._mig_devices()

    def _mig_devices(self) -> None:
        count = self.call("nvmlDeviceGetMaxMigDeviceCount")
        if isinstance(count, NotAvailable):
            self.unavailable["mig_devices"] = str(count)
            return
        devices: list[dict[str, Any]] = []
        for slot in range(int(count)):
            handle = self.call("nvmlDeviceGetMigDeviceHandleByIndex", slot)
            if isinstance(handle, NotAvailable):
                continue  # NotFound: an empty slot
            device: dict[str, Any] = {"index": slot}
            for key, name in (
                ("uuid", "nvmlDeviceGetUUID"),
                ("memory", "nvmlDeviceGetMemoryInfo"),
                ("gpu_instance_id", "nvmlDeviceGetGpuInstanceId"),
                ("compute_instance_id", "nvmlDeviceGetComputeInstanceId"),
            ):
                value = self.nvml.call(name, handle)
                if not isinstance(value, NotAvailable):
                    device[key] = _text(value) if key == "uuid" else value
            memory = device.pop("memory", None)
            if memory is not None:
                device["memory_total_mib"] = memory.total // MIB
                device["memory_used_mib"] = memory.used // MIB
            devices.append(device)
        self.values["mig_devices"] = devices

    def _affinity(self) -> None:
        words = max(1, math.ceil((os.cpu_count() or 1) / 64))
        nodes = self.call("nvmlDeviceGetMemoryAffinity", words, AFFINITY_SCOPE_NODE)
        if not isinstance(nodes, NotAvailable) and len(_bits(nodes)) != 1:
            found = ", ".join(map(str, _bits(nodes))) or "none"
            nodes = NotAvailable("nvmlDeviceGetMemoryAffinity", f"not one NUMA node: {found}")
        self.put("numa_node", nodes, lambda mask: _bits(mask)[0])
        cpus = self.call("nvmlDeviceGetCpuAffinity", words)
        self.put("cpu_affinity", cpus, lambda mask: cpu_ranges(_bits(mask)) or None)

    def _nvlinks(self) -> None:
        for link in range(NVLINK_MAX_LINKS):
            state = self.call("nvmlDeviceGetNvLinkState", link)
            if isinstance(state, NotAvailable):
                if link == 0:
                    self.unavailable["nvlink_active_links"] = str(state)
                    return
                break
            if state == FEATURE_ENABLED:
                remote = self.call("nvmlDeviceGetNvLinkRemotePciInfo", link)
                peer = None if isinstance(remote, NotAvailable) else bus_id(_text(remote.busId))
                self.nvlink_peers.append(peer)
        self.values["nvlink_active_links"] = len(self.nvlink_peers)

    def read_replays_at_start(self, now_s: float) -> None:
        """Replays Since Reset as the window starts; read_final's reading gives the rate."""
        found = self.call("nvmlDeviceGetPcieReplayCounter")
        if not isinstance(found, NotAvailable):
            self._replays_at_start = (int(found), now_s)

    # --- every sample ----------------------------------------------------------------

    def _sampled(self, name: str, *args: Any) -> Any:
        """A per-sample call; one that proved unsupported is not asked again."""
        key = (name, *args)
        if key in self._gave_up:
            return self._gave_up[key]
        result = self.call(name, *args)
        if isinstance(result, NotAvailable) and result.permanent:
            self._gave_up[key] = result
        return result

    def _take(self, key: str, result: Any, pick: Callable[[Any], float]) -> float | None:
        if isinstance(result, NotAvailable):
            self._why[key] = str(result)
            return None
        return pick(result)

    def sample(self, t_s: float) -> None:
        util = self._sampled("nvmlDeviceGetUtilizationRates")
        memory = self._sampled("nvmlDeviceGetMemoryInfo")
        reasons = self._take(
            "reasons",
            self.nvml.first(
                "nvmlDeviceGetCurrentClocksEventReasons",
                "nvmlDeviceGetCurrentClocksThrottleReasons",
                args=(self.handle,),
            ),
            int,
        )
        reading: Reading = {
            "util_gpu": self._take("util_gpu", util, lambda u: float(u.gpu)),
            "util_mem": self._take("util_mem", util, lambda u: float(u.memory)),
            "mem_used_mib": self._take("mem_used_mib", memory, lambda m: float(m.used // MIB)),
            "sm_mhz": self._take(
                "sm_mhz", self._sampled("nvmlDeviceGetClockInfo", CLOCK_SM), float
            ),
            "mem_mhz": self._take(
                "mem_mhz", self._sampled("nvmlDeviceGetClockInfo", CLOCK_MEM), float
            ),
            "temp_c": self._take(
                "temp_c", self._sampled("nvmlDeviceGetTemperature", TEMPERATURE_GPU), float
            ),
            "power_w": self._take("power_w", self._sampled("nvmlDeviceGetPowerUsage"), _watts),
            "reasons": reasons,
            "gen": self._take("gen", self._sampled("nvmlDeviceGetCurrPcieLinkGeneration"), float),
            "width": self._take("width", self._sampled("nvmlDeviceGetCurrPcieLinkWidth"), float),
            "tx_kBps": self._take(
                "tx_kBps", self._sampled("nvmlDeviceGetPcieThroughput", PCIE_TX_BYTES), float
            ),
            "rx_kBps": self._take(
                "rx_kBps", self._sampled("nvmlDeviceGetPcieThroughput", PCIE_RX_BYTES), float
            ),
        }
        self.samples.append((t_s, reading))

    # --- at the end ------------------------------------------------------------------

    def read_final(self, now_s: float | None = None) -> None:
        """The counters at the end of the window; ``now_s`` (monotonic seconds) dates
        the replay counter's second reading for pcie.replays_per_min."""
        if self.lost is not None:
            for path in _FINAL_FIELDS:
                self.unavailable[path] = self.lost
            return
        for path, kind, counter in (
            ("ecc_errors.volatile_correctable", ERROR_CORRECTED, COUNTER_VOLATILE),
            ("ecc_errors.volatile_uncorrectable", ERROR_UNCORRECTED, COUNTER_VOLATILE),
            ("ecc_errors.aggregate_correctable", ERROR_CORRECTED, COUNTER_AGGREGATE),
            ("ecc_errors.aggregate_uncorrectable", ERROR_UNCORRECTED, COUNTER_AGGREGATE),
        ):
            self.put(path, self.call("nvmlDeviceGetTotalEccErrors", kind, counter), int)
        self.put(
            "retired_pages.single_bit",
            self.call("nvmlDeviceGetRetiredPages", RETIRED_MULTIPLE_SINGLE_BIT),
            len,
        )
        self.put(
            "retired_pages.double_bit",
            self.call("nvmlDeviceGetRetiredPages", RETIRED_DOUBLE_BIT),
            len,
        )
        self.put(
            "retired_pages.pending", self.call("nvmlDeviceGetRetiredPagesPendingStatus"), _enabled
        )
        rows = self.call("nvmlDeviceGetRemappedRows")  # (corrected, uncorrected, pending, failed)
        self.put("remapped_rows.correctable", rows, lambda r: int(r[0]))
        self.put("remapped_rows.uncorrectable", rows, lambda r: int(r[1]))
        self.put("remapped_rows.pending", rows, lambda r: bool(r[2]))
        self.put("remapped_rows.failure", rows, lambda r: bool(r[3]))
        replays = self.put("pcie.replay_counter", self.call("nvmlDeviceGetPcieReplayCounter"))
        self._replay_rate(replays, now_s)
        processes = self.nvml.first(
            "nvmlDeviceGetComputeRunningProcesses",
            "nvmlDeviceGetComputeRunningProcesses_v2",  # drivers before R510
            args=(self.handle,),
        )
        self.put("processes", processes, self._processes)

    def _replay_rate(self, replays: Any, now_s: float | None) -> None:
        """pcie.replays_per_min: the counter's growth over the minutes between its two
        readings; unknown when either is missing, no time passed, or the counter went
        back (reset during the window)."""
        start = self._replays_at_start
        if start is None or replays is None or now_s is None:
            return
        minutes = (now_s - start[1]) / 60
        grown = int(replays) - start[0]
        if minutes <= 0:
            return
        if grown < 0:
            self.unavailable["pcie.replays_per_min"] = (
                f"Replays Since Reset went back from {start[0]} to {replays} during the "
                "window (reset): no rate"
            )
            return
        self.values["pcie.replays_per_min"] = round(grown / minutes, 3)

    def _processes(self, found: list[Any]) -> list[dict[str, Any]]:
        processes: list[dict[str, Any]] = []
        for process in found:
            name = self.nvml.call("nvmlSystemGetProcessName", process.pid)
            used = process.usedGpuMemory
            gi, ci = (getattr(process, k, None) for k in ("gpuInstanceId", "computeInstanceId"))
            processes.append(
                {
                    "pid": process.pid,
                    "name": None if isinstance(name, NotAvailable) else _text(name),
                    "type": "C",
                    "used_memory_mib": None if used is None else used // MIB,
                    "gpu_instance_id": None if gi in (None, VALUE_NOT_AVAILABLE_UINT) else gi,
                    "compute_instance_id": None if ci in (None, VALUE_NOT_AVAILABLE_UINT) else ci,
                }
            )
        return sorted(processes, key=lambda p: p["pid"])

    # --- the model -------------------------------------------------------------------

    def gpu(self) -> Gpu:
        return summarise(self.values, self.unavailable, self.samples, self._why)


def _enabled(value: Any) -> bool:
    return bool(value == FEATURE_ENABLED)
