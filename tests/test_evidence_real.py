"""Every real capture in ../shared/fixtures/real imports, with pinned values.

The table below is the expected reading of each file (see that folder's SOURCES.md for
what each capture is). A file added there without a row here fails
``test_every_real_capture_has_a_row``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import load_evidence

from .evidence_support import MISSING_REAL, pick, real_fixtures_dir


@dataclass(frozen=True)
class Expected:
    kind: str
    gpus: int
    names: tuple[str, ...] = ()
    driver: str | None = None
    xids: dict[int, int] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)


H100 = "NVIDIA H100 80GB HBM3"

EXPECTED: dict[str, Expected] = {
    # --- nvidia-smi -q -x --------------------------------------------------------------
    "smi-xml/2x-rtx-2080_590.44.01_v13.xml": Expected(
        "nvidia-smi-xml",
        2,
        ("NVIDIA GeForce RTX 2080",),
        "590.44.01",
        values={
            "gpus[0].pci_bus_id": "00000000:01:00.0",
            "gpus[1].pci_bus_id": "00000000:02:00.0",
            "gpus[1].index": 1,
            "gpus[0].pcie.gen_current": 1,
            "gpus[0].pcie.gen_max": 3,
            "gpus[1].pcie.width_current": 8,
            "gpus[1].pcie.width_max": 16,
            "gpus[0].ecc_mode": "unsupported",
            "gpus[0].power.draw_w": None,  # average_power_draw N/A
            "gpus[0].power.draw_instant_w": 1.0,
            "gpus[0].throttle_reasons.gpu_idle.active": True,
        },
    ),
    "smi-xml/2x-rtx-a5000_590.44.01_v13.xml": Expected(
        "nvidia-smi-xml",
        2,
        ("NVIDIA RTX A5000",),
        "590.44.01",
        values={
            "gpus[0].ecc_mode": "disabled",
            "gpus[0].memory_used_mib": 22437,
            "gpus[0].processes[0].pid": 100477,
            "gpus[0].processes[0].used_memory_mib": 22430,
            "gpus[0].temperature.slowdown_c": 95.0,
            "gpus[0].temperature.shutdown_c": 98.0,
            "gpus[0].temperature.max_operating_c": 90.0,
            "gpus[0].power.enforced_limit_w": 230.0,
            "gpus[0].remapped_rows.pending": False,
        },
    ),
    "smi-xml/a100-sxm4-40gb_510.47.03_mig-ecc_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA A100-SXM4-40GB",),
        "510.47.03",
        values={
            "gpus[0].ecc_mode": "enabled",
            "gpus[0].mig_mode": "enabled",
            "gpus[0].mig_devices[1].gpu_instance_id": 2,
            "gpus[0].utilisation.gpu_pct": None,  # N/A under MIG
            "gpus[0].ecc_errors.aggregate_uncorrectable": 0,
            "gpus[0].ecc_errors.volatile_uncorrectable": None,
            "gpus[0].power.enforced_limit_w": 400.0,
            "gpus[0].remapped_rows.pending": None,  # <remapped_rows>N/A
        },
    ),
    "smi-xml/a100-sxm4-80gb_535.54.03_mig-ecc_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA A100-SXM4-80GB",),
        "535.54.03",
        values={
            "gpus[0].index": None,  # attached_gpus=4, one <gpu> kept
            "len:gpus[0].mig_devices": 4,
            "gpus[0].memory_total_mib": 81920,
        },
    ),
    "smi-xml/a10g_515.105.01_ecc_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA A10G",),
        "515.105.01",
        values={
            "gpus[0].pci_bus_id": "00000000:00:1E.0",
            "gpus[0].pcie.gen_current": 1,
            "gpus[0].pcie.width_current": 8,
            "gpus[0].ecc_mode": "enabled",
            "gpus[0].processes[0].type": "G",
        },
    ),
    "smi-xml/geforce-gt-1030_470.74_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce GT 1030",),
        "470.74",
        values={"gpus[0].pcie.width_max": 4, "gpus[0].temperature.max_operating_c": None},
    ),
    "smi-xml/grid-p4-1q-vgpu_513.46_windows-wddm_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("GRID P4-1Q",),
        "513.46",
        values={
            "gpus[0].driver_model": "WDDM",
            "gpus[0].pcie.gen_current": None,
            "gpus[0].pcie.width_max": None,
            "gpus[0].temperature.slowdown_c": None,
        },
    ),
    "smi-xml/gtx-1660ti-graphics-device_418.43_nodoctype.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("Graphics Device",),
        "418.43",
        values={"gpus[0].mig_mode": None, "gpus[0].remapped_rows.failure": None},
    ),
    "smi-xml/quadro-p2000_525.125.06_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("Quadro P2000",),
        "525.125.06",
        values={"gpus[0].pcie.width_current": 8, "gpus[0].power.enforced_limit_w": 75.0},
    ),
    "smi-xml/quadro-p400_418.43_nodoctype.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("Quadro P400",),
        "418.43",
        values={"gpus[0].power.draw_w": None, "gpus[0].temperature.slowdown_c": 100.0},
    ),
    "smi-xml/rtx-2080_516.59_windows-wddm_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 2080",),
        "516.59",
        values={"gpus[0].driver_model": "WDDM", "gpus[0].processes[0].used_memory_mib": None},
    ),
    "smi-xml/rtx-3060-laptop_515.65.01_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3060 Laptop GPU",),
        "515.65.01",
        values={"gpus[0].fan_pct": None, "gpus[0].pcie.width_current": 8},
    ),
    "smi-xml/rtx-3060_570.124.04_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3060",),
        "570.124.04",
        values={"gpus[0].power.draw_w": 11.6},
    ),
    "smi-xml/rtx-3080_536.40_windows-wddm_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3080",),
        "536.40",
        values={"gpus[0].pcie.gen_current": 4, "gpus[0].driver_model": "WDDM"},
    ),
    "smi-xml/rtx-3080_595.58.03_v13.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3080",),
        "595.58.03",
        values={"gpus[0].pstate": "P2", "gpus[0].utilisation.gpu_pct": 65.0},
    ),
    "smi-xml/rtx-3090_525.147.05_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3090",),
        "525.147.05",
        values={"gpus[0].throttle_reasons.gpu_idle.active": True},
    ),
    "smi-xml/rtx-3090_590.44.01_v13.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 3090",),
        "590.44.01",
        values={
            "gpus[0].throttle_reasons.sw_power_cap.active": True,
            "gpus[0].throttle_reasons.hw_thermal_slowdown.active": False,
        },
    ),
    "smi-xml/rtx-4000-sff-ada_595.84_v13.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA RTX 4000 SFF Ada Generation",),
        "595.84",
        values={
            "gpus[0].ecc_mode": "disabled",
            "gpus[0].temperature.tlimit_margin_c": 49.0,
            "gpus[0].temperature.slowdown_tlimit_c": -2.0,
            "gpus[0].temperature.slowdown_c": None,
            "len:gpus[0].processes": 4,
        },
    ),
    "smi-xml/rtx-4090_535.86.05_v12.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA GeForce RTX 4090",),
        "535.86.05",
        values={"gpus[0].ecc_mode": "disabled", "gpus[0].temperature.tlimit_margin_c": 43.0},
    ),
    "smi-xml/rtx-pro-6000-blackwell-maxq_590.44.01_v13.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",),
        "590.44.01",
        values={"gpus[0].memory_total_mib": 97887, "gpus[0].architecture": "Blackwell"},
    ),
    "smi-xml/tesla-p100-pcie_510.47.03_ecc_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("Tesla P100-PCIE-16GB",),
        "510.47.03",
        values={
            "gpus[0].ecc_errors.aggregate_correctable": 3,
            "gpus[0].ecc_errors.aggregate_uncorrectable": 0,
            "gpus[0].retired_pages.single_bit": 0,
            "gpus[0].temperature.slowdown_c": 82.0,
        },
    ),
    "smi-xml/tesla-t4_515.105.01_ecc_v11.xml": Expected(
        "nvidia-smi-xml",
        1,
        ("Tesla T4",),
        "515.105.01",
        values={"gpus[0].pcie.width_current": 8, "gpus[0].power.enforced_limit_w": 70.0},
    ),
    # --- nvidia-smi -q (text) and the default table ------------------------------------
    "smi-text/8x-h100-80gb-hbm3_535.161.08_q.txt": Expected(
        "nvidia-smi-q",
        8,
        (H100,),
        "535.161.08",
        values={
            "gpus[7].index": 7,
            "gpus[0].pci_bus_id": "00000000:19:00.0",
            "gpus[0].uuid": "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa",
            "gpus[0].throttle_reasons.hw_slowdown.active": True,
            "gpus[0].throttle_reasons.hw_power_brake_slowdown.active": True,
            "gpus[0].throttle_reasons.hw_thermal_slowdown.active": False,
            "gpus[0].processes": [],
            "gpus[0].pcie.replay_counter": 67,
        },
    ),
    "smi-text/8x-h100-80gb-hbm3_535.183.01_q.txt": Expected(
        "nvidia-smi-q",
        8,
        (H100,),
        "535.183.01",
        values={"gpus[0].pci_bus_id": "00000000:53:00.0"},
    ),
    "smi-text/8x-rtx-4090_535.154.05_q.txt": Expected(
        "nvidia-smi-q",
        8,
        ("NVIDIA GeForce RTX 4090",),
        "535.154.05",
        values={
            "gpus[0].processes[0].pid": 2010222,
            "gpus[0].processes[0].used_memory_mib": 6724,
            "gpus[0].ecc_mode": "disabled",
        },
    ),
    "smi-text/8x-rtx-4090_535.154.05_q_leading-blank-lines.txt": Expected(
        "nvidia-smi-q",
        8,
        ("NVIDIA GeForce RTX 4090",),
        "535.154.05",
        values={"gpus[1].utilisation.gpu_pct": 100.0, "gpus[1].pcie.gen_current": 4},
    ),
    "smi-text/a10_535.129.03_q_remap-pending.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA A10",),
        "535.129.03",
        values={
            "gpus[0].remapped_rows.pending": True,
            "gpus[0].remapped_rows.uncorrectable": 4,
            "gpus[0].remapped_rows.failure": False,
        },
    ),
    "smi-text/titan-v_560.35.03_q.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA TITAN V",),
        "560.35.03",
        values={
            "gpus[0].ecc_mode": "unsupported",
            "gpus[0].remapped_rows.pending": None,
            "gpus[0].temperature.slowdown_c": 97.0,
        },
    ),
    "smi-text/8x-h100_550.90.07_default-table.txt": Expected(
        "nvidia-smi-table",
        8,
        (H100,),
        "550.90.07",
        values={
            "cuda_version": "12.4",
            "gpus[4].pci_bus_id": "00000000:9B:00.0",
            "gpus[0].memory_total_mib": 81559,
            "gpus[0].power.enforced_limit_w": 700.0,
            "gpus[0].processes": [],
            "gpus[0].ecc_mode": "enabled",  # "Volatile Uncorr. ECC" shows a count: 0
            "gpus[0].ecc_errors.volatile_uncorrectable": 0,
            "gpus[7].mig_mode": "disabled",
            "gpus[0].mig_devices": None,
        },
    ),
    "smi-text/geforce_525.125.06_default-table_fan-err.txt": Expected(
        "nvidia-smi-table",
        1,
        (),
        "525.125.06",
        values={
            "gpus[0].name": None,  # truncated "NVIDIA GeForce ..."
            "gpus[0].fan_pct": None,  # ERR!
            "gpus[0].compute_mode": "E. Process",
            "gpus[0].memory_used_mib": 2021,
            "gpus[0].processes": None,
            "gpus[0].ecc_mode": "enabled",  # a count, 0, and 23028 MiB of 24564
            "gpus[0].mig_mode": "unsupported",  # MIG M. N/A
        },
    ),
    "smi-text/h100-80gb-hbm3_590.48.01_q_idle.txt": Expected(
        "nvidia-smi-q",
        1,
        (H100,),
        "590.48.01",
        values={"gpus[0].throttle_reasons.gpu_idle.active": True},
    ),
    "smi-text/h100-80gb-hbm3_590.48.01_q_load.txt": Expected(
        "nvidia-smi-q",
        1,
        (H100,),
        "590.48.01",
        values={
            "gpus[0].utilisation.gpu_pct": 100.0,
            "gpus[0].power.draw_w": 629.45,
            "gpus[0].clocks.sm_mhz": 1980.0,
            "gpus[0].processes[2].name": "./gpu_burn",
            "gpus[0].temperature.tlimit_margin_c": 26.0,
        },
    ),
    "smi-text/h100-80gb-hbm3_590.48.01_q_mig-4-instances.txt": Expected(
        "nvidia-smi-q",
        1,
        (H100,),
        "590.48.01",
        values={
            "gpus[0].mig_mode": "enabled",
            "gpus[0].mig_devices[0].memory_total_mib": 40448,
            "gpus[0].mig_devices[3].index": 3,
            "gpus[0].ecc_errors.volatile_uncorrectable": 0,
        },
    ),
    "smi-text/h200_590.48.01_q_mig.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA H200",),
        "590.48.01",
        values={"gpus[0].memory_total_mib": 143771, "gpus[0].pci_bus_id": "00000000:83:00.0"},
    ),
    "smi-text/l40s_595.80_q_idle.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA L40S",),
        "595.80",
        values={"gpus[0].persistence_mode": False, "gpus[0].pcie.gen_max": 4},
    ),
    "smi-text/rtx-4080-super_595.71.05_q_idle.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA GeForce RTX 4080 SUPER",),
        "595.71.05",
        values={"gpus[0].processes[1].type": "G"},
    ),
    "smi-text/rtx-2080-super_610.57.04_q_idle.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA GeForce RTX 2080 SUPER",),
        "610.57.04",
        values={
            "cuda_version": "13.3",
            "gpus[0].power.enforced_limit_w": 250.0,  # moved under GPU Ceiling Power Limit
            "gpus[0].power.draw_instant_w": 38.89,
        },
    ),
    "smi-text/rtx-2080-super_591.86_windows-wddm_q_idle.txt": Expected(
        "nvidia-smi-q",
        1,
        ("NVIDIA GeForce RTX 2080 SUPER",),
        "591.86",
        values={
            "gpus[0].driver_model": "WDDM",
            "gpus[0].persistence_mode": None,
            "gpus[0].processes[0].type": "C+G",
            "gpus[0].processes[0].used_memory_mib": None,  # Not available in WDDM
        },
    ),
    # --- topology ----------------------------------------------------------------------
    "topo/h100-single_590.48.01_topo-m_ansi.txt": Expected(
        "nvidia-smi-topo",
        1,
        values={
            "topology.cpu_affinity.GPU0": "0-19",
            "topology.numa_affinity.GPU0": "0",
            "gpus[0].numa_node": 0,
            "topology.pairs": [],
        },
    ),
    "topo/rtx-2080-super_610.62_windows_topo-m_empty-affinity.txt": Expected(
        "nvidia-smi-topo",
        1,
        values={"topology.cpu_affinity.GPU0": None, "gpus[0].numa_node": None},
    ),
    # --- --query-gpu CSV ---------------------------------------------------------------
    "query-csv/tesla-p100-pcie_510.47.03_query-gpu.csv": Expected(
        "nvidia-smi-csv",
        1,
        ("Tesla P100-PCIE-16GB",),
        values={
            "gpus[0].uuid": "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6",
            "gpus[0].fan_pct": None,
            "gpus[0].memory_reserved_mib": 103,
            "gpus[0].power.draw_w": 28.16,
            "gpus[0].clocks.sm_mhz": 405.0,
        },
    ),
    "query-csv/h100-mig_590.48.01_query-gpu-all-fields.csv": Expected(
        "nvidia-smi-csv",
        1,
        (H100,),
        "590.48.01",
        values={
            "gpus[0].mig_mode": "enabled",
            "gpus[0].utilisation.gpu_pct": None,
            "gpus[0].pcie.width_max": 16,
            "gpus[0].throttle_reasons.gpu_idle.active": True,
            "gpus[0].remapped_rows.pending": None,
        },
    ),
    "query-csv/l40s_595.80_query-gpu-all-fields.csv": Expected(
        "nvidia-smi-csv",
        1,
        ("NVIDIA L40S",),
        "595.80",
        values={"gpus[0].utilisation.gpu_pct": 100.0, "gpus[0].mig_mode": "unsupported"},
    ),
    "query-csv/rtx-2080-super_591.86_windows_query-gpu-all-fields.csv": Expected(
        "nvidia-smi-csv",
        1,
        ("NVIDIA GeForce RTX 2080 SUPER",),
        "591.86",
        values={"gpus[0].driver_model": "WDDM", "gpus[0].ecc_mode": "unsupported"},
    ),
    "query-csv/rtx-2080-super_610.57.04_load_query-gpu-all-fields.csv": Expected(
        "nvidia-smi-csv",
        1,
        ("NVIDIA GeForce RTX 2080 SUPER",),
        "610.57.04",
        values={"gpus[0].utilisation.encoder_pct": 100.0, "gpus[0].clocks.sm_mhz": 2070.0},
    ),
    "query-csv/h100-mig_590.48.01_query-retired-pages.csv": Expected(
        "nvidia-smi-csv",
        1,
        (H100,),
        values={"gpus[0].retired_pages.single_bit": None, "gpus[0].retired_pages.double_bit": None},
    ),
    # --- kernel logs -------------------------------------------------------------------
    "kernel-log/dmesg-ctime_xid119-gsp-timeout_h100-xe9680.log": Expected(
        "kernel-log",
        0,
        xids={119: 5},
        values={
            "events[0].pci_bus_id": "00000000:9B:00.0",
            "events[0].time": "2025-02-23T16:24:18",
            "events[0].xid_class": "driver",
            "events[0].pid": 2024380,
            "events[0].process": "nvidia-smi",
            "events[4].process": "gpud",
        },
    ),
    "kernel-log/dmesg-iso_xid48-63-94_dbe-rowremap.log": Expected(
        "kernel-log",
        0,
        xids={48: 1, 63: 1, 94: 9},
        values={
            "events[0].time": "2024-11-15T12:02:03.470068+00:00",
            "events[0].xid_class": "hardware",
            "events[0].pid": None,
            "events[3].process": "python3.10",
        },
    ),
    "kernel-log/dmesg-decode-iso_xid13-flood.log": Expected(
        "kernel-log",
        0,
        # 629 Xid 13 lines, one report per SM fault: Warp Exception, Global Exception and
        # ESR lines (two with a ChID line too, three without the Global line).
        xids={13: 210, 43: 7},
        values={
            "events[0].pci_bus_id": "00000000:38:00.0",
            "events[0].xid_class": "application",
            "events[1].time": "2025-01-21T02:21:33.498965+00:00",  # line 4 starts report 2
        },
    ),
    # --- dcgm-exporter -----------------------------------------------------------------
    "dcgm-prom/2x-tesla-t4_460.106.00+470.182.03_datadog-serve.prom": Expected(
        "dcgm-prom",
        2,
        ("Tesla T4",),
        "460.106.00",
        values={
            "gpus[0].uuid": "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e",
            "gpus[0].clocks.sm_mhz": 300.0,
            "gpus[0].power.draw_w": 8.969,
            "gpus[0].pcie.replay_counter": 0,  # a counter: parsed as ..._total
            "gpus[1].temperature.slowdown_c": 93.0,
            "gpus[1].power.limit_w": 70.0,
            "gpus[1].pstate": "P8",
            "gpus[1].throttle_reasons.gpu_idle.active": True,
            "conflicts[0].field": "driver_version",
        },
    ),
}

#: nvidia-smi's own error output is not evidence.
REFUSED = {
    "topo/rtx-2080-super_591.86_windows_topo-m_error.txt": "error message from nvidia-smi",
}


def _real() -> Path:
    folder = real_fixtures_dir()
    if folder is None:
        pytest.skip(MISSING_REAL)
    return folder


def test_every_real_capture_has_a_row() -> None:
    folder = _real()
    files = {
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.suffix != ".md"
    }
    assert files == set(EXPECTED) | set(REFUSED)


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_real_capture_imports(relative: str) -> None:
    expected = EXPECTED[relative]
    snapshot = load_evidence([_real() / relative])
    assert snapshot.sources[0].kind == expected.kind
    assert len(snapshot.gpus) == expected.gpus
    assert tuple(sorted({g.name for g in snapshot.gpus if g.name})) == expected.names
    if expected.driver is not None:
        assert snapshot.driver_version == expected.driver
    xids = Counter(e.code for e in snapshot.events if e.kind == "xid")
    assert dict(xids) == expected.xids
    for path, value in expected.values.items():
        assert pick(snapshot, path) == value, path


@pytest.mark.parametrize("relative", sorted(REFUSED))
def test_nvidia_smi_error_output_is_refused(relative: str) -> None:
    with pytest.raises(InputError) as caught:
        load_evidence([_real() / relative])
    assert REFUSED[relative] in str(caught.value)
    assert caught.value.file is not None and caught.value.file.endswith(relative.split("/")[-1])
    assert "accepted formats" in str(caught.value)
    assert caught.value.exit_code == 2
