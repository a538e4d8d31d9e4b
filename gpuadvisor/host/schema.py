"""Measured host evidence, ``gpuadvisor/host/v1`` (CONTRACT §2).

What ``probe`` measures through NVML and what ``import`` reads from captured tool
outputs both land in :class:`HostSnapshot`. Every value is optional: a value the source
did not report is ``None`` (``null`` in JSON), never a zero or a guess. The docstrings
name the nvidia-smi field and NVML call each value corresponds to, so a reader can check
a number against the tool they know.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

HOST_SCHEMA: Final = "gpuadvisor/host/v1"

EvidenceKind = Literal[
    "gpuadvisor-host",
    "nvidia-smi-xml",
    "nvidia-smi-q",
    "nvidia-smi-table",
    "nvidia-smi-list",
    "nvidia-smi-topo",
    "nvidia-smi-p2p",
    "nvidia-smi-csv",
    "nvidia-smi-pmon",
    "nvidia-smi-dmon",
    "kernel-log",
    "iostat",
    "mpstat",
    "sar-net",
    "lscpu",
    "numactl",
    "dcgm-prom",
    "nvml-probe",
]

#: Clock event ("throttle") reasons, named as nvidia-smi's XML names them without the
#: ``clocks_event_reason_`` prefix. NVML: ``nvmlDeviceGetCurrentClocksEventReasons``.
ThrottleReason = Literal[
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
]

#: NVML bit of each reason (``nvmlClocksEventReason*``), for bitmask sources
#: (``clocks_event_reasons.active`` in --query-gpu, DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
THROTTLE_BITS: Final[dict[ThrottleReason, int]] = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clocks_setting": 0x100,
}

Mode = Literal["enabled", "disabled", "unsupported"]
TopoLink = Literal["NV#", "PIX", "PXB", "PHB", "NODE", "SYS", "X"]
P2PStatus = Literal["X", "OK", "NS", "CNS", "GNS", "TNS", "DR", "U"]
XidClass = Literal["hardware", "driver", "application", "unknown"]
AerSeverity = Literal["corrected", "uncorrected-nonfatal", "uncorrected-fatal"]


#: Largest whole number a snapshot holds: NVML counters are unsigned 64-bit. Python's
#: ints are unbounded, so without this a host/v1 file could carry a 4000-digit "index"
#: that every later float() or sum chokes on.
MAX_WHOLE = 2**64 - 1
#: Largest magnitude of a measured decimal value, in any field's unit (W, MHz, KB/s, s,
#: ms, %): 1e12 is beyond every real reading, and keeps sums and means of a series of
#: them finite (1e308 twice overflows).
MAX_MEASURE = 1e12


class _Model(BaseModel):
    # protected_namespaces: ``model_name`` (MIG devices) would make pydantic before 2.10
    # warn on every run.
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        populate_by_name=True,
        protected_namespaces=(),
    )

    @field_validator("*")
    @classmethod
    def _bounded_whole_numbers(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else (value,)
        for item in items:
            if isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_WHOLE:
                raise ValueError(f"a whole number larger than {MAX_WHOLE} is not a measurement")
            if isinstance(item, float) and abs(item) > MAX_MEASURE:
                raise ValueError(f"{item:g} is beyond any real measurement (limit {MAX_MEASURE:g})")
        return value


class Source(_Model):
    """One evidence file that went into the snapshot."""

    file: str = Field(description="The file's name as given on the command line.")
    kind: EvidenceKind = Field(description="Format detected from the content.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the file's bytes.")


class Pcie(_Model):
    """PCIe link. nvidia-smi -q ``PCI > GPU Link Info``; NVML
    ``nvmlDeviceGetCurrPcieLinkGeneration``, ``...MaxPcieLinkGeneration``,
    ``...CurrPcieLinkWidth``, ``...MaxPcieLinkWidth``."""

    gen_current: int | None = Field(default=None, ge=1, le=8)
    gen_max: int | None = Field(default=None, ge=1, le=8, description="Max the link can reach.")
    width_current: int | None = Field(default=None, ge=1, le=32, description="Lanes.")
    width_max: int | None = Field(default=None, ge=1, le=32, description="Lanes.")
    replay_counter: int | None = Field(default=None, ge=0, description="Replays Since Reset.")
    tx_kBps: float | None = Field(default=None, ge=0, description="Tx Throughput, KB/s.")
    rx_kBps: float | None = Field(default=None, ge=0, description="Rx Throughput, KB/s.")


class Utilisation(_Model):
    """nvidia-smi ``Utilization``; NVML ``nvmlDeviceGetUtilizationRates``.

    From a time series (``probe``) ``gpu_pct`` and ``memory_pct`` are the mean over the
    samples, and the ``*_p95_pct`` / ``*_min_pct`` values say how steady it was.
    """

    gpu_pct: float | None = Field(default=None, ge=0, le=100)
    memory_pct: float | None = Field(default=None, ge=0, le=100)
    gpu_p95_pct: float | None = Field(default=None, ge=0, le=100)
    gpu_min_pct: float | None = Field(default=None, ge=0, le=100)
    memory_p95_pct: float | None = Field(default=None, ge=0, le=100)
    memory_min_pct: float | None = Field(default=None, ge=0, le=100)
    encoder_pct: float | None = Field(default=None, ge=0, le=100)
    decoder_pct: float | None = Field(default=None, ge=0, le=100)


class Clocks(_Model):
    """nvidia-smi ``Clocks`` and ``Max Clocks``; NVML ``nvmlDeviceGetClockInfo`` /
    ``nvmlDeviceGetMaxClockInfo``. MHz."""

    graphics_mhz: float | None = Field(default=None, ge=0)
    sm_mhz: float | None = Field(default=None, ge=0)
    mem_mhz: float | None = Field(default=None, ge=0)
    max_graphics_mhz: float | None = Field(default=None, ge=0)
    max_sm_mhz: float | None = Field(default=None, ge=0)
    max_mem_mhz: float | None = Field(default=None, ge=0)


class Temperature(_Model):
    """nvidia-smi ``Temperature``; NVML ``nvmlDeviceGetTemperature`` and
    ``nvmlDeviceGetTemperatureThreshold``. °C.

    Ada and later GPUs report thresholds relative to T.Limit instead: ``tlimit_margin_c``
    is how far the GPU is below T.Limit (``GPU T.Limit Temp``) and the ``*_tlimit_c``
    values are offsets from T.Limit at which the GPU slows down / shuts down.
    """

    gpu_c: float | None = Field(default=None, ge=-50, le=200, description="GPU Current Temp.")
    memory_c: float | None = Field(default=None, ge=-50, le=200, description="Memory Current Temp.")
    slowdown_c: float | None = Field(default=None, ge=0, le=200, description="GPU Slowdown Temp.")
    shutdown_c: float | None = Field(default=None, ge=0, le=200, description="GPU Shutdown Temp.")
    max_operating_c: float | None = Field(
        default=None, ge=0, le=200, description="GPU Max Operating Temp."
    )
    target_c: float | None = Field(
        default=None, ge=0, le=200, description="GPU Target Temperature."
    )
    tlimit_margin_c: float | None = Field(
        default=None, ge=-100, le=200, description="GPU T.Limit Temp."
    )
    slowdown_tlimit_c: float | None = Field(default=None, ge=-100, le=100)
    shutdown_tlimit_c: float | None = Field(default=None, ge=-100, le=100)
    max_operating_tlimit_c: float | None = Field(default=None, ge=-100, le=100)


class Power(_Model):
    """nvidia-smi ``Power Readings`` / ``GPU Power Readings``; NVML
    ``nvmlDeviceGetPowerUsage``, ``nvmlDeviceGetEnforcedPowerLimit``. Watts."""

    draw_w: float | None = Field(
        default=None, ge=0, description="Power Draw (average where given)."
    )
    draw_instant_w: float | None = Field(
        default=None, ge=0, description="Instantaneous Power Draw."
    )
    limit_w: float | None = Field(
        default=None, ge=0, description="Power Limit / Current Power Limit."
    )
    enforced_limit_w: float | None = Field(default=None, ge=0, description="Enforced Power Limit.")
    default_limit_w: float | None = Field(default=None, ge=0)
    min_limit_w: float | None = Field(default=None, ge=0)
    max_limit_w: float | None = Field(default=None, ge=0)


class ReasonState(_Model):
    """One clock event reason: active in a single snapshot, or the share of samples in
    which it was active (a time series), or both."""

    active: bool | None = None
    fraction: float | None = Field(default=None, ge=0, le=1, description="Share of samples active.")


class EccErrors(_Model):
    """nvidia-smi ``ECC Errors``; NVML ``nvmlDeviceGetTotalEccErrors``. Sums over the
    memory locations the source lists (DRAM + SRAM, or device memory + caches)."""

    volatile_correctable: int | None = Field(default=None, ge=0)
    volatile_uncorrectable: int | None = Field(default=None, ge=0)
    aggregate_correctable: int | None = Field(default=None, ge=0)
    aggregate_uncorrectable: int | None = Field(default=None, ge=0)


class RetiredPages(_Model):
    """nvidia-smi ``Retired Pages``; NVML ``nvmlDeviceGetRetiredPages`` (pre-Ampere)."""

    single_bit: int | None = Field(default=None, ge=0)
    double_bit: int | None = Field(default=None, ge=0)
    pending: bool | None = None


class RemappedRows(_Model):
    """nvidia-smi ``Remapped Rows``; NVML ``nvmlDeviceGetRemappedRows`` (Ampere+)."""

    correctable: int | None = Field(default=None, ge=0)
    uncorrectable: int | None = Field(default=None, ge=0)
    pending: bool | None = None
    failure: bool | None = None


class Process(_Model):
    """A process on a GPU (nvidia-smi ``Processes``, ``pmon``; NVML
    ``nvmlDeviceGetComputeRunningProcesses``)."""

    pid: int | None = Field(default=None, ge=0)
    name: str | None = None
    type: str | None = Field(default=None, description="C, G, C+G, M, ... as nvidia-smi prints it.")
    used_memory_mib: int | None = Field(default=None, ge=0)
    gpu_instance_id: int | None = Field(default=None, ge=0)
    compute_instance_id: int | None = Field(default=None, ge=0)
    sm_pct: float | None = Field(default=None, ge=0, le=100, description="pmon sm %.")
    mem_pct: float | None = Field(default=None, ge=0, le=100, description="pmon mem %.")


class MigDevice(_Model):
    """A MIG instance (nvidia-smi ``MIG Device``; NVML ``nvmlDeviceGetMigDeviceHandleByIndex``)."""

    index: int | None = Field(default=None, ge=0)
    gpu_instance_id: int | None = Field(default=None, ge=0)
    compute_instance_id: int | None = Field(default=None, ge=0)
    profile: str | None = Field(default=None, description="e.g. 3g.40gb, when the source names it.")
    uuid: str | None = None
    multiprocessor_count: int | None = Field(default=None, ge=0)
    memory_total_mib: int | None = Field(default=None, ge=0)
    memory_used_mib: int | None = Field(default=None, ge=0)


class Sample(_Model):
    """One point of a time series (``probe``, ``nvidia-smi dmon``)."""

    t_s: float | None = Field(default=None, ge=0, description="Seconds since the first sample.")
    util_pct: float | None = Field(default=None, ge=0, le=100)
    sm_clock_mhz: float | None = Field(default=None, ge=0)
    temp_c: float | None = Field(default=None, ge=-50, le=200)
    power_w: float | None = Field(default=None, ge=0)


class Gpu(_Model):
    """One physical GPU."""

    index: int | None = Field(
        default=None,
        ge=0,
        description="nvidia-smi / NVML index (nvmlDeviceGetHandleByIndex order).",
    )
    name: str | None = Field(default=None, description="Product Name, as NVIDIA spells it.")
    uuid: str | None = None
    pci_bus_id: str | None = Field(
        default=None,
        pattern=r"^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]$",
        description="Canonical form 00000000:17:00.0 (8-digit domain, upper case).",
    )
    serial: str | None = None
    vbios_version: str | None = None
    architecture: str | None = None
    brand: str | None = None
    driver_model: str | None = Field(default=None, description="Windows only: WDDM, TCC or MCDM.")
    persistence_mode: bool | None = None
    compute_mode: str | None = None
    pstate: str | None = Field(default=None, pattern=r"^P\d{1,2}$")
    fan_pct: float | None = Field(default=None, ge=0, le=100)
    memory_total_mib: int | None = Field(default=None, ge=0, description="FB Memory Usage > Total.")
    memory_used_mib: int | None = Field(default=None, ge=0, description="FB Memory Usage > Used.")
    memory_reserved_mib: int | None = Field(default=None, ge=0)
    ecc_mode: Mode | None = Field(
        default=None, description="ECC Mode > Current; 'unsupported' when the GPU has no ECC."
    )
    ecc_mode_pending: Mode | None = None
    mig_mode: Mode | None = None
    numa_node: int | None = Field(default=None, ge=0, description="topo -m NUMA Affinity.")
    cpu_affinity: str | None = Field(default=None, description="topo -m CPU Affinity, e.g. 0-31.")
    pcie: Pcie = Field(default_factory=lambda: Pcie())
    utilisation: Utilisation = Field(default_factory=lambda: Utilisation())
    clocks: Clocks = Field(default_factory=lambda: Clocks())
    temperature: Temperature = Field(default_factory=lambda: Temperature())
    power: Power = Field(default_factory=lambda: Power())
    throttle_reasons: dict[ThrottleReason, ReasonState] = Field(default_factory=dict)
    ecc_errors: EccErrors = Field(default_factory=lambda: EccErrors())
    retired_pages: RetiredPages = Field(default_factory=lambda: RetiredPages())
    remapped_rows: RemappedRows = Field(default_factory=lambda: RemappedRows())
    processes: list[Process] | None = Field(
        default=None, description="null when not reported; [] when the source says none run."
    )
    mig_devices: list[MigDevice] | None = None
    nvlink_active_links: int | None = Field(
        default=None, ge=0, description="NVLink links up (NVML nvmlDeviceGetNvLinkState)."
    )
    samples: list[Sample] | None = None
    unavailable: dict[str, str] = Field(
        default_factory=dict,
        description="Why a value is null, by field path (temperature.slowdown_c, ...), "
        "where the source said why: 'nvmlDeviceGetTotalEccErrors: Not Supported'.",
    )

    @field_validator("throttle_reasons")
    @classmethod
    def _sorted_reasons(
        cls, value: dict[ThrottleReason, ReasonState]
    ) -> dict[ThrottleReason, ReasonState]:
        return dict(sorted(value.items()))


class TopoPair(_Model):
    """One cell of ``nvidia-smi topo -m``: the path between two devices."""

    a: str = Field(description="Device label as topo prints it: GPU0, NIC1, ...")
    b: str
    link: TopoLink
    nvlinks: int | None = Field(default=None, ge=1, description="The # of NV#.")


class P2PPair(_Model):
    """One cell of ``nvidia-smi topo -p2p``."""

    a: str
    b: str
    status: P2PStatus


class Nic(_Model):
    label: str = Field(description="NIC0, NIC1, ...")
    device: str | None = Field(default=None, description="mlx5_0, ... from the NIC Legend.")


class Topology(_Model):
    pairs: list[TopoPair] = Field(default_factory=list)
    p2p: list[P2PPair] = Field(default_factory=list)
    cpu_affinity: dict[str, str | None] = Field(default_factory=dict)
    numa_affinity: dict[str, str | None] = Field(default_factory=dict)
    nics: list[Nic] = Field(default_factory=list)


class Event(_Model):
    """A kernel log event: an NVIDIA Xid or a PCIe AER error; or a GPU that stopped
    answering NVML during a probe (``gpu-lost``: NVML_ERROR_GPU_IS_LOST)."""

    kind: Literal["xid", "aer", "gpu-lost"]
    code: int | None = Field(default=None, ge=0, description="Xid number; null for AER.")
    pci_bus_id: str | None = None
    time: str | None = Field(
        default=None,
        description="ISO 8601 when the log gives a full date, else the log's own stamp.",
    )
    text: str = Field(max_length=500)
    xid_class: XidClass | None = Field(
        default=None,
        validation_alias=AliasChoices("class", "xid_class"),
        serialization_alias="class",
        description="Xid: who is usually at fault (gpuadvisor.nvidia.xid); AER: hardware.",
    )
    severity: AerSeverity | None = None
    pid: int | None = None
    process: str | None = None
    source: str | None = Field(default=None, description="Evidence file and line.")


class CpuInfo(_Model):
    """``lscpu`` (and the CPU count in mpstat's banner)."""

    model_name: str | None = None
    logical_cpus: int | None = Field(default=None, ge=1)
    sockets: int | None = Field(default=None, ge=1)
    cores_per_socket: int | None = Field(default=None, ge=1)
    threads_per_core: int | None = Field(default=None, ge=1)
    numa_nodes: int | None = Field(default=None, ge=1)
    numa_node_cpus: dict[str, str] = Field(default_factory=dict)


class CoreUtil(_Model):
    cpu: int = Field(ge=0)
    busy_pct: float = Field(ge=0, le=100)
    iowait_pct: float | None = Field(default=None, ge=0, le=100)


class CpuUtil(_Model):
    """``mpstat -P ALL``: busy = 100 - %idle."""

    mean_busy_pct: float | None = Field(default=None, ge=0, le=100)
    iowait_pct: float | None = Field(default=None, ge=0, le=100)
    per_core: list[CoreUtil] = Field(default_factory=list)


class Disk(_Model):
    """``iostat -x`` device row."""

    device: str
    util_pct: float | None = Field(default=None, ge=0, le=100)
    r_await: float | None = Field(default=None, ge=0, description="ms")
    w_await: float | None = Field(default=None, ge=0, description="ms")


class NetIface(_Model):
    """``sar -n DEV`` interface row."""

    iface: str
    rx_kBps: float | None = Field(default=None, ge=0)
    tx_kBps: float | None = Field(default=None, ge=0)
    util_pct: float | None = Field(default=None, ge=0, le=100, description="%ifutil")


class NumaBinding(_Model):
    """``numactl --show``."""

    policy: str | None = None
    physcpubind: list[int] | None = None
    cpubind: list[int] | None = None
    nodebind: list[int] | None = None
    membind: list[int] | None = None


class HostInfo(_Model):
    cpu: CpuInfo = Field(default_factory=lambda: CpuInfo())
    cpu_util: CpuUtil = Field(default_factory=lambda: CpuUtil())
    iowait_pct: float | None = Field(
        default=None, ge=0, le=100, description="iostat avg-cpu %iowait."
    )
    disks: list[Disk] = Field(default_factory=list)
    net: list[NetIface] = Field(default_factory=list)
    numa_binding: NumaBinding = Field(default_factory=lambda: NumaBinding())


class ConflictValue(_Model):
    file: str
    value: str | float | int | bool


class Conflict(_Model):
    """Two evidence files disagree on one value; the first file's value is kept."""

    field: str
    values: list[ConflictValue]


class HostSnapshot(_Model):
    """A whole host: what every evidence file said, merged."""

    schema_: Literal["gpuadvisor/host/v1"] = Field(default=HOST_SCHEMA, alias="schema")
    sources: list[Source] = Field(default_factory=list)
    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: list[Gpu] = Field(default_factory=list)
    topology: Topology = Field(default_factory=lambda: Topology())
    events: list[Event] = Field(default_factory=list)
    host: HostInfo = Field(default_factory=lambda: HostInfo())
    conflicts: list[Conflict] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="What the import could not use.")
    provenance: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Which evidence files filled each part (gpus[0].pcie, host.disks, ...).",
    )
