"""Format details the real captures do not cover, each pinned on a small sample."""

from __future__ import annotations

import pytest

from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.errors import InputError
from gpuadvisor.evidence import detect, parse_text
from gpuadvisor.evidence.merge import merge
from gpuadvisor.host.schema import Source
from gpuadvisor.nvidia.values import bus_id, clean, cpu_list, link_width, mode, number

from .evidence_support import FIXTURES


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("00000000:17:00.0", "00000000:17:00.0"),
        ("0000:17:00.0", "00000000:17:00.0"),
        ("PCI:0000:9b:00", "00000000:9B:00.0"),
        ("17:00.0", "00000000:17:00.0"),
        ("00000001:c1:00.1", "00000001:C1:00.1"),
        ("N/A", None),
        ("garbage", None),
    ],
)
def test_bus_ids_normalise(raw: str, canonical: str | None) -> None:
    assert bus_id(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    [
        "N/A",
        "[N/A]",
        "[Not Supported]",
        "ERR!",
        "Unknown Error",
        "",
        "  ",
        "[Requested functionality has been deprecated]",
        "Not available in WDDM driver model",
    ],
)
def test_not_reported_spellings_are_none(raw: str) -> None:
    assert clean(raw) is None
    assert number(raw) is None


def test_value_helpers() -> None:
    assert number("67.03 W") == 67.03
    assert number("-2 C") == -2.0
    assert link_width("x16") == link_width("16x") == link_width("16") == 16
    assert mode("N/A") == "unsupported" and mode(None) is None and mode("ERR!") is None
    assert cpu_list("0-3,8 10") == [0, 1, 2, 3, 8, 10]
    assert cpu_list("0-x") is None


def test_windows_line_endings_and_bom() -> None:
    text = "\ufeff" + (
        "==============NVSMI LOG==============\r\n\r\nDriver Version : 591.86\r\n"
        "Attached GPUs : 1\r\nGPU 00000000:0C:00.0\r\n"
        "    Product Name : NVIDIA GeForce RTX 2080\r\n"
        "    Driver Model\r\n        Current : WDDM\r\n"
    )
    snapshot = parse_text(text, "win.txt")
    assert snapshot.driver_version == "591.86"
    assert snapshot.gpus[0].driver_model == "WDDM"
    assert snapshot.gpus[0].index == 0


OLD_Q = """
==============NVSMI LOG==============

Driver Version                      : 470.82.01
Attached GPUs                       : 1
GPU 00000000:3B:00.0
    Product Name                    : Tesla V100-PCIE-32GB
    Clocks Throttle Reasons
        Idle                        : Not Active
        Applications Clocks Setting : Not Active
        SW Power Cap                : Not Active
        HW Slowdown                 : Active
            HW Thermal Slowdown     : Active
            HW Power Brake Slowdown : Not Active
        Sync Boost                  : Not Active
        SW Thermal Slowdown         : Not Active
    Retired Pages
        Single Bit ECC              : 2
        Double Bit ECC              : 1
        Pending Page Blacklist      : Yes
    Power Readings
        Power Management            : Supported
        Power Draw                  : 250.10 W
        Power Limit                 : 250.00 W
        Enforced Power Limit        : 250.00 W
    Processes
        Process ID                  : 3412
            Type                    : C
            Name                    : python
            Used GPU Memory         : 30000 MiB
"""


def test_old_text_layout() -> None:
    gpu = parse_text(OLD_Q, "old.txt").gpus[0]
    assert gpu.throttle_reasons["hw_thermal_slowdown"].active is True
    assert gpu.throttle_reasons["sw_thermal_slowdown"].active is False
    assert (gpu.retired_pages.single_bit, gpu.retired_pages.double_bit) == (2, 1)
    assert gpu.retired_pages.pending is True
    assert (gpu.power.draw_w, gpu.power.limit_w, gpu.power.enforced_limit_w) == (250.1, 250, 250)
    assert gpu.processes is not None and gpu.processes[0].used_memory_mib == 30000


TABLE_WITH_PROCESSES = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.15              Driver Version: 570.86.15      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA RTX A5000               Off |   00000000:17:00.0 Off |                  Off |
| 30%   71C    P2            201W /  230W |   17320MiB /  24564MiB |     95%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA RTX A5000               Off |   00000000:65:00.0 Off |                  Off |
| 30%   33C    P8             19W /  230W |       4MiB /  24564MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A            4242      C   python3 train.py                      17310MiB |
|    0   N/A  N/A            4243      C   python3                                   10MiB |
+-----------------------------------------------------------------------------------------+
"""


def test_table_with_processes() -> None:
    snapshot = parse_text(TABLE_WITH_PROCESSES, "smi.txt")
    first, second = snapshot.gpus
    assert first.processes is not None
    assert [(p.pid, p.name, p.used_memory_mib) for p in first.processes] == [
        (4242, "python3 train.py", 17310),
        (4243, "python3", 10),
    ]
    assert second.processes == []
    assert first.ecc_errors.volatile_uncorrectable is None  # "Off"
    assert second.power.draw_w == 19.0


def test_list_with_mig_devices() -> None:
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c)\n"
        "  MIG 3g.40gb     Device  0: (UUID: MIG-b3fd3b7a-2ff6-5c7a-9f9b-1b2a3f6a2c11)\n"
        "  MIG 1g.10gb     Device  1: (UUID: MIG-13c7f0d6-5e0a-5f27-93d5-86f1b1c0e0aa)\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-9b2c0f1e-7d1c-4c5a-8d3b-2a1e0c9f8e7d)\n"
    )
    assert detect(text) == "nvidia-smi-list"
    first, second = parse_text(text, "l.txt").gpus
    assert first.mig_devices is not None
    assert [m.profile for m in first.mig_devices] == ["3g.40gb", "1g.10gb"]
    assert second.mig_devices is None


def test_compute_apps_csv() -> None:
    text = (
        "pid, process_name, gpu_bus_id, used_gpu_memory [MiB]\n"
        "4242, python3, 00000000:17:00.0, 17310 MiB\n"
        "4243, python3, 00000000:17:00.0, 10 MiB\n"
    )
    [gpu] = parse_text(text, "apps.csv").gpus
    assert gpu.pci_bus_id == "00000000:17:00.0"
    assert gpu.processes is not None and [p.pid for p in gpu.processes] == [4242, 4243]


def test_retired_pages_csv_counts_addresses() -> None:
    text = (
        "gpu_bus_id, retired_pages.address, retired_pages.cause\n"
        "00000000:04:00.0, 0x000000000123b000, Single Bit ECC\n"
        "00000000:04:00.0, 0x000000000456c000, Double Bit ECC\n"
        "00000000:04:00.0, 0x000000000789d000, Single Bit ECC\n"
    )
    [gpu] = parse_text(text, "rp.csv").gpus
    assert (gpu.retired_pages.single_bit, gpu.retired_pages.double_bit) == (2, 1)


def test_headerless_csv_is_not_accepted() -> None:
    with pytest.raises(InputError, match="unrecognised"):
        detect("0, NVIDIA A10, 24564 MiB\n", "noheader.csv")


def test_throttle_bitmask_column() -> None:
    text = "index, clocks_event_reasons.active\n0, 0x0000000000000044\n"
    reasons = parse_text(text, "q.csv").gpus[0].throttle_reasons
    assert reasons["sw_power_cap"].active is True
    assert reasons["hw_thermal_slowdown"].active is True
    assert reasons["gpu_idle"].active is False


def test_dcgm_mig_instances() -> None:
    labels = 'gpu="0",UUID="GPU-1",pci_bus_id="00000000:07:00.0",modelName="NVIDIA A100"'
    text = (
        "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
        f'DCGM_FI_DEV_FB_USED{{{labels},GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"}} 1200\n'
        f'DCGM_FI_DEV_FB_USED{{{labels},GPU_I_PROFILE="1g.10gb",GPU_I_ID="9"}} 30\n'
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        f"DCGM_FI_DEV_GPU_TEMP{{{labels}}} 41\n"
    )
    [gpu] = parse_text(text, "mig.prom").gpus
    assert gpu.memory_used_mib is None  # instance figures are not the GPU's
    assert gpu.temperature.gpu_c == 41.0
    assert gpu.mig_devices is not None
    assert [(m.gpu_instance_id, m.profile, m.memory_used_mib) for m in gpu.mig_devices] == [
        (1, "3g.40gb", 1200),
        (9, "1g.10gb", 30),
    ]


def test_pmon_with_time_stamps_and_framebuffer() -> None:
    text = (FIXTURES / "pmon-dt-fb.txt").read_text()
    first, second = parse_text(text, "pmon.txt").gpus
    assert first.processes is not None
    [process] = first.processes
    assert (process.pid, process.sm_pct, process.used_memory_mib) == (4242, 96.0, 17320)
    assert second.processes == []


XID79 = "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x, GPU has fallen off the bus."


@pytest.mark.parametrize(
    ("prefix", "time"),
    [
        ("[ 8372.123456] ", "8372.123456"),
        ("2025-01-21T09:57:01+0000 host kernel: ", "2025-01-21T09:57:01+0000"),
        ("Jan 21 09:57:01.123456 host kernel: ", "Jan 21 09:57:01.123456"),
        ("kern  :err   : [ 8372.123456] ", "8372.123456"),
        ("kern  :warn  : [Fri Aug  4 11:44:30 2023] ", "2023-08-04T11:44:30"),
    ],
)
def test_kernel_log_time_stamps(prefix: str, time: str) -> None:
    [event] = parse_text(prefix + XID79 + "\n", "k.log").events
    assert (event.code, event.time, event.pci_bus_id) == (79, time, "00000000:01:00.0")
    assert event.xid_class == "hardware"


def test_aer_severities_and_received_only_logs() -> None:
    detail = (
        "Mar 03 10:00:00 h kernel: pcieport 0000:00:01.0: AER: Uncorrected (Non-Fatal) error "
        "received: 0000:01:00.0\n"
        "Mar 03 10:00:00 h kernel: nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected "
        "(Non-Fatal), type=Transaction Layer, (Requester ID)\n"
        "Mar 03 10:00:01 h kernel: nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected "
        "(Fatal), type=Data Link Layer, (Receiver ID)\n"
    )
    events = parse_text(detail, "j.log").events
    assert [(e.severity, e.pci_bus_id) for e in events] == [
        ("uncorrected-nonfatal", "00000000:01:00.0"),
        ("uncorrected-fatal", "00000000:01:00.0"),
    ]
    received = (
        "Mar 03 10:00:00 h kernel: pcieport 0000:00:01.0: "
        "AER: Multiple Corrected error received: 0000:01:00.0\n"
    )
    [event] = parse_text(received, "r.log").events
    assert (event.kind, event.severity, event.pci_bus_id) == (
        "aer",
        "corrected",
        "00000000:01:00.0",
    )


def test_unknown_xid_codes_are_kept_as_unknown() -> None:
    [event] = parse_text(
        "[1.0] NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed\n", "k"
    ).events
    assert (event.code, event.xid_class) == (154, "unknown")


def test_topology_old_names_and_unknown_cells() -> None:
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSOC\t0-7\nGPU1\tSOC\t X \t8-15\n"
    snapshot = parse_text(text, "topo.txt")
    assert [p.link for p in snapshot.topology.pairs] == ["SYS"]
    odd = parse_text(text.replace("SOC", "ZZZ"), "topo.txt")
    assert odd.topology.pairs == [] and "unknown path" in odd.notes[0]


def test_sysstat_averages_and_reports() -> None:
    net = parse_text((FIXTURES / "sar-ifutil-average.txt").read_text(), "sar.txt").host.net
    assert [(n.iface, n.util_pct) for n in net] == [("eth0", 92.16)]  # Average rows only
    mpstat = (FIXTURES / "mpstat-2cpu.txt").read_text()
    util = parse_text(mpstat, "mpstat.txt").host.cpu_util
    assert (util.mean_busy_pct, util.iowait_pct) == (60.0, 10.0)
    assert [c.busy_pct for c in util.per_core] == [100.0, 21.0]


def test_iostat_drops_the_since_boot_report() -> None:
    host = parse_text((FIXTURES / "iostat-3-reports.txt").read_text(), "iostat.txt").host
    assert host.iowait_pct == 25.0
    assert (host.disks[0].util_pct, host.disks[0].r_await) == (96.0, 8.0)


def test_lscpu_with_sections_and_numactl_binding() -> None:
    lscpu = (
        "Architecture:             x86_64\n"
        "CPU(s):                   128\n"
        "Vendor ID:                AuthenticAMD\n"
        "  Model name:             AMD EPYC 9354 32-Core Processor\n"
        "    Thread(s) per core:   2\n"
        "    Core(s) per socket:   32\n"
        "    Socket(s):            2\n"
        "NUMA:\n"
        "  NUMA node(s):           2\n"
        "  NUMA node0 CPU(s):      0-31,64-95\n"
        "  NUMA node1 CPU(s):      32-63,96-127\n"
    )
    cpu = parse_text(lscpu, "lscpu.txt").host.cpu
    assert (cpu.logical_cpus, cpu.sockets, cpu.numa_nodes) == (128, 2, 2)
    assert cpu.model_name == "AMD EPYC 9354 32-Core Processor"
    numactl = (
        "policy: bind\npreferred node: 1\nphyscpubind: 32 33\ncpubind: 1\nnodebind: 1\nmembind: 1\n"
    )
    binding = parse_text(numactl, "n.txt").host.numa_binding
    assert (binding.policy, binding.nodebind, binding.membind) == ("bind", [1], [1])


@pytest.mark.parametrize(
    "text",
    [
        "[    0.000000] Linux version 6.5.0\n[    0.100000] Command line: BOOT_IMAGE=/vmlinuz\n",
        "[Mon Jan 13 09:41:02 2026] usb 1-1: new device\n[Mon Jan  3 09:41:03 2026] eth0: up\n",
        "-- Logs begin at Mon 2025-03-03 10:00:00 UTC. --\n"
        "Mar 03 10:00:00 node1 kernel: Linux version 6.5.0\n",
        "2024-11-15T05:39:15,491363+00:00 nvidia-peermem nv_get_p2p_free_callback:127 ERROR\n",
        "kern  :info  : [    0.000000] Linux version 6.5.0\n",
    ],
    ids=["dmesg", "dmesg-T", "journalctl", "dmesg-iso", "dmesg-decode"],
)
def test_a_healthy_kernel_log_is_evidence_of_no_xid(text: str) -> None:
    assert detect(text) == "kernel-log"
    source = Source(file="k.log", kind="kernel-log", sha256="0" * 64)
    snapshot = merge([(source, parse_text(text, "k.log"))])
    assert snapshot.events == []
    assert derive_host_facts(snapshot).values["host.xid_count"] == 0


def test_an_application_log_is_not_a_kernel_log() -> None:
    with pytest.raises(InputError, match="unrecognised"):
        detect("2024-11-15 10:00:00 app started\nserving on :8080\n")
