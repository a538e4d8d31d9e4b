"""The sample outputs printed in the seed articles (../shared/seeds), copied verbatim into
tests/fixtures/evidence/seed-*. Two of the articles show real command layouts; the
third lost its whitespace in publishing ("flat"), which the parsers also read.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.evidence import load_evidence

from .evidence_support import FIXTURES, pick

SEEDS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "seed-smi-L.txt": (
        "nvidia-smi-list",
        2,
        {"gpus[1].name": "NVIDIA A10", "gpus[1].uuid": "GPU-ffffffff-1111-2222-3333-444444444444"},
    ),
    "seed-q-pci.txt": (
        "nvidia-smi-q",
        2,
        {
            "gpus[0].pci_bus_id": "00000000:65:00.0",
            "gpus[0].pcie.width_current": 8,
            "gpus[0].pcie.width_max": 16,
            "gpus[0].pcie.gen_current": 4,
            "gpus[1].pci_bus_id": "00000000:B3:00.0",
            "gpus[1].pcie.width_current": 16,
            "gpus[0].index": None,  # the excerpt has no "Attached GPUs" line
        },
    ),
    "seed-topo-m-sys.txt": (
        "nvidia-smi-topo",
        2,
        {
            "topology.pairs[0].link": "SYS",
            "topology.cpu_affinity.GPU1": "32-63",
            "gpus[1].numa_node": 1,
        },
    ),
    "seed-topo-p2p.txt": (
        "nvidia-smi-p2p",
        2,  # one GPU record per matrix row, as topo -m gives
        {"topology.p2p[0].status": "OK", "gpus[0].index": 0, "gpus[1].index": 1},
    ),
    "seed-query-clocks.csv": (
        "nvidia-smi-csv",
        2,
        {
            "gpus[0].temperature.gpu_c": 84.0,
            "gpus[0].power.draw_w": 147.23,
            "gpus[0].power.limit_w": 150.0,
            "gpus[0].clocks.sm_mhz": 1410.0,  # clocks.current.sm, not its alias clocks.sm
            "gpus[1].clocks.mem_mhz": 5001.0,
            "len:notes": 2,
        },
    ),
    "seed-q-ecc.txt": (
        "nvidia-smi-q",
        1,
        {
            "gpus[0].ecc_mode": "enabled",
            "gpus[0].ecc_errors.aggregate_correctable": 2,
            "gpus[0].ecc_errors.volatile_uncorrectable": 0,
            "gpus[0].ecc_errors.aggregate_uncorrectable": None,  # cut off by sed
        },
    ),
    "seed-dmesg-T-xid31-bus.log": (
        "kernel-log",
        0,
        {
            "events[0].code": 31,
            "events[0].time": "2026-01-13T09:41:02",
            # "GPU has fallen off the bus" without an Xid 79 line: a lost GPU, no Xid.
            "events[1].kind": "gpu-lost",
            "events[1].code": None,
            "events[1].pci_bus_id": "00000000:65:00.0",
        },
    ),
    "seed-mpstat.txt": (
        "mpstat",
        0,
        {
            "host.cpu_util.mean_busy_pct": 83.9,
            "host.cpu_util.iowait_pct": 0.4,
            "host.cpu_util.per_core[1].cpu": 32,
            "host.cpu_util.per_core[1].busy_pct": 100.0,
            "host.cpu.logical_cpus": 64,
        },
    ),
    "seed-iostat-xz.txt": (
        "iostat",
        0,
        {
            "host.iowait_pct": 18.7,
            "host.disks[0].device": "nvme0n1",
            "host.disks[0].util_pct": 92.0,
            "host.disks[0].r_await": 5.1,
            "host.disks[0].w_await": 7.8,
        },
    ),
    "seed-sar-dev.txt": (
        "sar-net",
        0,
        {
            "host.net[0].iface": "eth0",
            "host.net[0].rx_kBps": 930000.0,
            "host.net[0].util_pct": None,
        },
    ),
    "seed-pmon.txt": (
        "nvidia-smi-pmon",
        2,
        {"len:gpus[0].processes": 2, "gpus[0].processes[1].sm_pct": 69.0, "gpus[1].processes": []},
    ),
    "seed-query-memory.csv": (
        "nvidia-smi-csv",
        2,
        {"gpus[0].memory_used_mib": 23890, "gpus[1].memory_total_mib": 24564},
    ),
    "seed-numactl.txt": (
        "numactl",
        0,
        {"host.numa_binding.membind": [0], "host.numa_binding.physcpubind": list(range(16))},
    ),
    "seed-flat-table.txt": (
        "nvidia-smi-table",
        1,
        {
            "driver_version": "550.54.14",
            "gpus[0].name": "NVIDIA RTX A5000",
            "gpus[0].utilisation.gpu_pct": 78.0,
            "gpus[0].power.draw_w": 155.0,
            "gpus[0].power.enforced_limit_w": 230.0,
            "gpus[0].memory_used_mib": 18432,
            "gpus[0].fan_pct": 35.0,
        },
    ),
    "seed-flat-dmon.txt": (
        "nvidia-smi-dmon",
        1,
        {"len:gpus[0].samples": 2, "gpus[0].samples[1].sm_clock_mhz": 1710.0},
    ),
    "seed-flat-q-pci.txt": (
        "nvidia-smi-q",
        1,
        {
            "gpus[0].pci_bus_id": "00000000:65:00.0",
            "gpus[0].pcie.gen_current": 3,
            "gpus[0].pcie.gen_max": 4,
            "gpus[0].pcie.width_current": 8,
        },
    ),
    "seed-dmesg-T-xid31-13.log": (
        "kernel-log",
        0,
        {"events[1].code": 13, "events[1].pid": 24819, "events[1].process": "python"},
    ),
    "seed-flat-q-ecc.txt": (
        "nvidia-smi-q",
        1,
        {"gpus[0].ecc_mode": "enabled", "gpus[0].ecc_errors.aggregate_correctable": 2},
    ),
    "seed-flat-q-power.txt": (
        "nvidia-smi-q",
        1,
        {"gpus[0].power.draw_w": 228.45, "gpus[0].power.enforced_limit_w": 230.0},
    ),
    "seed-flat-q-temperature.txt": (
        "nvidia-smi-q",
        1,
        {"gpus[0].temperature.gpu_c": 83.0, "gpus[0].temperature.slowdown_c": 91.0},
    ),
    "seed-lscpu.txt": (
        "lscpu",
        0,
        {"host.cpu.sockets": 2, "host.cpu.numa_nodes": 2, "host.cpu.numa_node_cpus.node1": "32-63"},
    ),
    "seed-flat-topo-m.txt": (
        "nvidia-smi-topo",
        1,
        {"topology.cpu_affinity.GPU0": "0-31", "gpus[0].numa_node": 0},
    ),
    "seed-flat-iostat-x.txt": (
        "iostat",
        0,
        {"host.iowait_pct": 9.84, "host.disks[0].util_pct": 92.5, "host.disks[0].r_await": 4.2},
    ),
    "seed-journalctl-aer.log": (
        "kernel-log",
        0,
        {
            "len:events": 1,
            "events[0].kind": "aer",
            "events[0].severity": "corrected",
            "events[0].pci_bus_id": "00000000:40:01.0",
            "events[0].time": "Jan 21 09:57:01",
        },
    ),
}


def test_every_seed_fixture_has_a_row() -> None:
    assert {p.name for p in FIXTURES.glob("seed-*")} == set(SEEDS)


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_sample_imports(name: str) -> None:
    kind, gpus, values = SEEDS[name]
    snapshot = load_evidence([FIXTURES / name])
    assert snapshot.sources[0].kind == kind
    assert len(snapshot.gpus) == gpus
    for path, value in values.items():
        assert pick(snapshot, path) == value, path


def test_pro_card_article_session_is_one_host() -> None:
    """Every capture of the professional-card article's checklist, merged."""
    names = [
        "seed-flat-table.txt",
        "seed-flat-dmon.txt",
        "seed-flat-q-pci.txt",
        "seed-dmesg-T-xid31-13.log",
        "seed-flat-q-ecc.txt",
        "seed-flat-q-power.txt",
        "seed-flat-q-temperature.txt",
        "seed-lscpu.txt",
        "seed-flat-topo-m.txt",
        "seed-flat-iostat-x.txt",
        "seed-journalctl-aer.log",
    ]
    snapshot = load_evidence([FIXTURES / n for n in names])
    assert len(snapshot.gpus) == 1
    facts = derive_host_facts(snapshot).values
    assert facts["gpu.pcie_gen_degraded_under_load"] is True  # Gen3 of Gen4 at 78 %
    assert facts["gpu.pcie_width_degraded"] is True
    assert facts["host.disk_util_max_pct"] == 92.5
    assert facts["host.xid_application_count"] == 2
    assert facts["host.aer_corrected_count"] == 1
    assert facts["gpu.ecc_correctable_aggregate"] == 2
    # The table (67 C) and the later -q excerpt (83 C) are two moments; the dmon capture
    # of the same session is a window, so its figure is used and each moment is named in
    # a note rather than reported as a conflict between files.
    fields = {c.field for c in snapshot.conflicts}
    assert "gpus[00000000:65:00.0].temperature.gpu_c" not in fields
    temperature_notes = [n for n in snapshot.notes if "temperature.gpu_c" in n]
    assert any("seed-flat-table.txt read 67" in n for n in temperature_notes)
    assert any("seed-flat-q-temperature.txt read 83" in n for n in temperature_notes)
    assert snapshot.gpus[0].provenance["temperature.gpu_c"].endswith("seed-flat-dmon.txt")
    # So do the article's table (ECC "N/A": no ECC) and its -q excerpt (ECC Enabled).
    assert "gpus[00000000:65:00.0].ecc_mode" in fields


def test_two_gpu_article_session_is_one_host() -> None:
    names = [
        "seed-smi-L.txt",
        "seed-topo-m-sys.txt",
        "seed-topo-p2p.txt",
        "seed-query-clocks.csv",
        "seed-query-memory.csv",
        "seed-pmon.txt",
        "seed-dmesg-T-xid31-bus.log",
        "seed-mpstat.txt",
        "seed-iostat-xz.txt",
        "seed-sar-dev.txt",
        "seed-numactl.txt",
    ]
    snapshot = load_evidence([FIXTURES / n for n in names])
    assert [g.index for g in snapshot.gpus] == [0, 1]
    facts = derive_host_facts(snapshot).values
    assert facts["host.gpu_count"] == 2
    assert facts["host.gpu_pair_worst_link"] == "SYS"
    assert facts["host.p2p_ok"] is True
    assert facts["host.processes_max_per_gpu"] == 2
    assert facts["host.gpus_without_process"] == 1
    assert facts["host.memory_used_spread_pct"] == pytest.approx(92.37, abs=0.01)
    assert facts["host.cpu_saturated_cores"] == 2
    assert facts["host.iowait_pct"] == 0.4  # mpstat first, iostat's 18.7 second
    # The log's "fallen off the bus" line has no Xid 79 line: one GPU lost, no Xid 79.
    assert (facts["host.xid_bus_count"], facts["host.gpu_lost_count"]) == (0, 1)
    assert facts["host.numa_binding_remote"] is None  # bound to node 0; GPUs on 0 and 1
    assert facts["gpu.temp_margin_c"] is None  # no slowdown threshold in these captures
