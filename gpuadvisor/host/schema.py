"""Measured host evidence, ``gpuadvisor/host/v1`` (CONTRACT §2).

What ``probe`` measures through NVML and what ``import`` reads from captured tool
outputs both land in :class:`HostSnapshot`. Every value is optional: a value the source
did not report is ``None`` (``null`` in JSON), never a zero or a guess. The docstrings
name the nvidia-smi field and NVML call each value corresponds to, so a reader can check
a number against the tool they know.

This module holds the snapshot and what is not one GPU's (sources, topology, events,
the host's CPUs, disks and network, conflicts); :mod:`.gpu` holds :class:`Gpu` and its
parts, :mod:`.base` the base model and shared vocabularies. Every host/v1 name is
importable from here.
"""

from typing import Final, Literal

from pydantic import AliasChoices, Field

from gpuadvisor.host.base import (
    MAX_MEASURE,
    MAX_WHOLE,
    THROTTLE_BITS,
    HostModel,
    Mode,
    ThrottleReason,
    new_list,
)
from gpuadvisor.host.gpu import (
    Clocks,
    EccErrors,
    Gpu,
    MigDevice,
    Pcie,
    Power,
    Process,
    ReasonState,
    RemappedRows,
    RetiredPages,
    Sample,
    Temperature,
    Utilisation,
)

#: The models of :mod:`.base` and :mod:`.gpu` are offered here too, so that
#: ``from gpuadvisor.host.schema import ...`` reaches every host/v1 name.
__all__ = [
    "HOST_SCHEMA",
    "MAX_MEASURE",
    "MAX_WHOLE",
    "THROTTLE_BITS",
    "AerSeverity",
    "Clocks",
    "Conflict",
    "ConflictValue",
    "CoreUtil",
    "CpuInfo",
    "CpuUtil",
    "Disk",
    "EccErrors",
    "Event",
    "EvidenceKind",
    "Gpu",
    "HostInfo",
    "HostModel",
    "HostSnapshot",
    "MigDevice",
    "Mode",
    "NetIface",
    "Nic",
    "NumaBinding",
    "P2PPair",
    "P2PStatus",
    "Pcie",
    "Power",
    "Process",
    "ReasonState",
    "RemappedRows",
    "RetiredPages",
    "Sample",
    "Source",
    "Temperature",
    "ThrottleReason",
    "TopoLink",
    "TopoPair",
    "Topology",
    "Utilisation",
    "XidClass",
]

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
    "prometheus-query",
]

TopoLink = Literal["NV#", "PIX", "PXB", "PHB", "NODE", "SYS", "X"]
P2PStatus = Literal["X", "OK", "NS", "CNS", "GNS", "TNS", "DR", "U"]
XidClass = Literal["hardware", "driver", "application", "unknown"]
AerSeverity = Literal["corrected", "uncorrected-nonfatal", "uncorrected-fatal"]


class Source(HostModel):
    """One evidence file that went into the snapshot."""

    file: str = Field(description="The file's name as given on the command line.")
    kind: EvidenceKind = Field(description="Format detected from the content.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the file's bytes.")


class TopoPair(HostModel):
    """One cell of ``nvidia-smi topo -m``: the path between two devices."""

    a: str = Field(description="Device label as topo prints it: GPU0, NIC1, ...")
    b: str
    link: TopoLink
    nvlinks: int | None = Field(default=None, ge=1, description="The # of NV#.")


class P2PPair(HostModel):
    """One cell of ``nvidia-smi topo -p2p``."""

    a: str
    b: str
    status: P2PStatus


class Nic(HostModel):
    label: str = Field(description="NIC0, NIC1, ...")
    device: str | None = Field(default=None, description="mlx5_0, ... from the NIC Legend.")


class Topology(HostModel):
    pairs: list[TopoPair] = Field(default_factory=new_list)
    p2p: list[P2PPair] = Field(default_factory=new_list)
    cpu_affinity: dict[str, str | None] = Field(default_factory=dict)
    numa_affinity: dict[str, str | None] = Field(default_factory=dict)
    nics: list[Nic] = Field(default_factory=new_list)


class Event(HostModel):
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


class CpuInfo(HostModel):
    """``lscpu`` (and the CPU count in mpstat's banner)."""

    model_name: str | None = None
    logical_cpus: int | None = Field(default=None, ge=1)
    sockets: int | None = Field(default=None, ge=1)
    cores_per_socket: int | None = Field(default=None, ge=1)
    threads_per_core: int | None = Field(default=None, ge=1)
    numa_nodes: int | None = Field(default=None, ge=1)
    numa_node_cpus: dict[str, str] = Field(default_factory=dict)


class CoreUtil(HostModel):
    cpu: int = Field(ge=0)
    busy_pct: float = Field(ge=0, le=100)
    iowait_pct: float | None = Field(default=None, ge=0, le=100)


class CpuUtil(HostModel):
    """``mpstat -P ALL``: busy = 100 - %idle."""

    mean_busy_pct: float | None = Field(default=None, ge=0, le=100)
    iowait_pct: float | None = Field(default=None, ge=0, le=100)
    per_core: list[CoreUtil] = Field(default_factory=new_list)


class Disk(HostModel):
    """``iostat -x`` device row."""

    device: str
    util_pct: float | None = Field(default=None, ge=0, le=100)
    r_await: float | None = Field(default=None, ge=0, description="ms")
    w_await: float | None = Field(default=None, ge=0, description="ms")


class NetIface(HostModel):
    """``sar -n DEV`` interface row."""

    iface: str
    rx_kBps: float | None = Field(default=None, ge=0)
    tx_kBps: float | None = Field(default=None, ge=0)
    util_pct: float | None = Field(default=None, ge=0, le=100, description="%ifutil")


class NumaBinding(HostModel):
    """``numactl --show``."""

    policy: str | None = None
    physcpubind: list[int] | None = None
    cpubind: list[int] | None = None
    nodebind: list[int] | None = None
    membind: list[int] | None = None


class HostInfo(HostModel):
    cpu: CpuInfo = Field(default_factory=lambda: CpuInfo())
    cpu_util: CpuUtil = Field(default_factory=lambda: CpuUtil())
    iowait_pct: float | None = Field(
        default=None, ge=0, le=100, description="iostat avg-cpu %iowait."
    )
    disks: list[Disk] = Field(default_factory=new_list)
    net: list[NetIface] = Field(default_factory=new_list)
    numa_binding: NumaBinding = Field(default_factory=lambda: NumaBinding())


class ConflictValue(HostModel):
    file: str
    value: str | float | int | bool


class Conflict(HostModel):
    """Two evidence files disagree on one value; the first file's value is kept. When
    they disagree on which card sits at a bus id (name, UUID, serial), they describe two
    cards, which are kept apart."""

    field: str
    values: list[ConflictValue]
    gpu: str | None = Field(
        default=None,
        description="The GPU the value belongs to (bus id, else UUID, else 'index N'); "
        "null for a host-wide value.",
    )


class HostSnapshot(HostModel):
    """A whole host: what every evidence file said, merged."""

    schema_: Literal["gpuadvisor/host/v1"] = Field(default=HOST_SCHEMA, alias="schema")
    sources: list[Source] = Field(default_factory=new_list)
    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: list[Gpu] = Field(default_factory=new_list)
    topology: Topology = Field(default_factory=lambda: Topology())
    events: list[Event] = Field(default_factory=new_list)
    host: HostInfo = Field(default_factory=lambda: HostInfo())
    conflicts: list[Conflict] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list, description="What the import could not use.")
    provenance: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Which evidence files filled each part (gpus[0].pcie, host.disks, ...).",
    )
