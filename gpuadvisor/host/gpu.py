"""One physical GPU in ``gpuadvisor/host/v1``: :class:`Gpu` and the parts it is made
of (PCIe link, utilisation, clocks, temperatures, power, clock event reasons, ECC,
retired pages and remapped rows, processes, MIG devices, samples).

The docstrings name the nvidia-smi field and NVML call each value corresponds to.
"""

from pydantic import Field, field_validator

from gpuadvisor.host.base import HostModel, Mode, ThrottleReason


class Pcie(HostModel):
    """PCIe link. nvidia-smi -q ``PCI > GPU Link Info``; NVML
    ``nvmlDeviceGetCurrPcieLinkGeneration``, ``...MaxPcieLinkGeneration``,
    ``...CurrPcieLinkWidth``, ``...MaxPcieLinkWidth``."""

    gen_current: int | None = Field(default=None, ge=1, le=8)
    gen_max: int | None = Field(default=None, ge=1, le=8, description="Max the link can reach.")
    width_current: int | None = Field(default=None, ge=1, le=32, description="Lanes.")
    width_max: int | None = Field(default=None, ge=1, le=32, description="Lanes.")
    replay_counter: int | None = Field(default=None, ge=0, description="Replays Since Reset.")
    replays_per_min: float | None = Field(
        default=None,
        ge=0,
        description="PCIe replays per minute over the snapshot's window: the growth of "
        "Replays Since Reset between two readings (the probe's start and end, or "
        "Prometheus's rate over the window) divided by the minutes between them.",
    )
    tx_kBps: float | None = Field(default=None, ge=0, description="Tx Throughput, KB/s.")
    rx_kBps: float | None = Field(default=None, ge=0, description="Rx Throughput, KB/s.")


class Utilisation(HostModel):
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


class Clocks(HostModel):
    """nvidia-smi ``Clocks`` and ``Max Clocks``; NVML ``nvmlDeviceGetClockInfo`` /
    ``nvmlDeviceGetMaxClockInfo``. MHz."""

    graphics_mhz: float | None = Field(default=None, ge=0)
    sm_mhz: float | None = Field(default=None, ge=0)
    mem_mhz: float | None = Field(default=None, ge=0)
    max_graphics_mhz: float | None = Field(default=None, ge=0)
    max_sm_mhz: float | None = Field(default=None, ge=0)
    max_mem_mhz: float | None = Field(default=None, ge=0)


class Temperature(HostModel):
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


class Power(HostModel):
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


class ReasonState(HostModel):
    """One clock event reason: active in a single snapshot, or the share of samples in
    which it was active (a time series), or both."""

    active: bool | None = None
    fraction: float | None = Field(default=None, ge=0, le=1, description="Share of samples active.")


class EccErrors(HostModel):
    """nvidia-smi ``ECC Errors``; NVML ``nvmlDeviceGetTotalEccErrors``. Sums over the
    memory locations the source lists (DRAM + SRAM, or device memory + caches)."""

    volatile_correctable: int | None = Field(default=None, ge=0)
    volatile_uncorrectable: int | None = Field(default=None, ge=0)
    aggregate_correctable: int | None = Field(default=None, ge=0)
    aggregate_uncorrectable: int | None = Field(default=None, ge=0)


class RetiredPages(HostModel):
    """nvidia-smi ``Retired Pages``; NVML ``nvmlDeviceGetRetiredPages`` (pre-Ampere)."""

    single_bit: int | None = Field(default=None, ge=0)
    double_bit: int | None = Field(default=None, ge=0)
    pending: bool | None = None


class RemappedRows(HostModel):
    """nvidia-smi ``Remapped Rows``; NVML ``nvmlDeviceGetRemappedRows`` (Ampere+)."""

    correctable: int | None = Field(default=None, ge=0)
    uncorrectable: int | None = Field(default=None, ge=0)
    pending: bool | None = None
    failure: bool | None = None


class Process(HostModel):
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


class MigDevice(HostModel):
    """A MIG instance (nvidia-smi ``MIG Device``; NVML ``nvmlDeviceGetMigDeviceHandleByIndex``)."""

    index: int | None = Field(default=None, ge=0)
    gpu_instance_id: int | None = Field(default=None, ge=0)
    compute_instance_id: int | None = Field(default=None, ge=0)
    profile: str | None = Field(default=None, description="e.g. 3g.40gb, when the source names it.")
    uuid: str | None = None
    multiprocessor_count: int | None = Field(default=None, ge=0)
    memory_total_mib: int | None = Field(default=None, ge=0)
    memory_used_mib: int | None = Field(default=None, ge=0)


class Sample(HostModel):
    """One point of a time series (``probe``, ``nvidia-smi dmon``)."""

    t_s: float | None = Field(default=None, ge=0, description="Seconds since the first sample.")
    util_pct: float | None = Field(default=None, ge=0, le=100)
    sm_clock_mhz: float | None = Field(default=None, ge=0)
    temp_c: float | None = Field(default=None, ge=-50, le=200)
    power_w: float | None = Field(default=None, ge=0)


class Gpu(HostModel):
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
    provenance: dict[str, str] = Field(
        default_factory=dict,
        description="Which evidence file gave each value, by field path (temperature.gpu_c, "
        "throttle_reasons.sw_power_cap.active, samples, ...): the file whose value was kept "
        "when several reported it. Filled when evidence files are merged.",
    )

    @field_validator("throttle_reasons")
    @classmethod
    def _sorted_reasons(
        cls, value: dict[ThrottleReason, ReasonState]
    ) -> dict[ThrottleReason, ReasonState]:
        return dict(sorted(value.items()))
