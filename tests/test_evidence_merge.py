"""Several files, one host: GPU matching, conflicts, provenance, event de-duplication."""

from __future__ import annotations

import hashlib
from pathlib import Path

from gpuadvisor.evidence import load_evidence
from gpuadvisor.evidence.merge import same_gpu
from gpuadvisor.host.schema import Gpu

from .evidence_support import FIXTURES

Q = FIXTURES / "two-gpu-q.txt"
DCGM = FIXTURES / "two-gpu-dcgm.prom"
TOPO = FIXTURES / "two-gpu-topo-nvlink-nic.txt"
P2P = FIXTURES / "two-gpu-p2p-cns.txt"
DMON = FIXTURES / "two-gpu-dmon-violations.txt"


def test_sources_record_kind_and_hash_in_order() -> None:
    snapshot = load_evidence([Q, DCGM])
    assert [s.kind for s in snapshot.sources] == ["nvidia-smi-q", "dcgm-prom"]
    assert snapshot.sources[0].file == str(Q)
    assert snapshot.sources[1].sha256 == hashlib.sha256(DCGM.read_bytes()).hexdigest()


def test_gpus_matched_by_bus_id_in_either_spelling() -> None:
    """-q writes 00000000:17:00.0, dcgm-exporter's label 0000:17:00.0: one GPU."""
    snapshot = load_evidence([Q, DCGM])
    assert [g.pci_bus_id for g in snapshot.gpus] == ["00000000:17:00.0", "00000000:65:00.0"]
    first = snapshot.gpus[0]
    assert first.temperature.slowdown_c == 95.0  # from both, equal
    assert first.ecc_errors.aggregate_uncorrectable == 1  # from dcgm only
    assert first.processes is not None and first.processes[0].pid == 4242  # from -q only


def test_conflicting_values_are_reported_not_overwritten() -> None:
    snapshot = load_evidence([Q, DCGM])
    assert snapshot.gpus[0].utilisation.gpu_pct == 97.0  # first file's value kept
    [conflict] = snapshot.conflicts
    assert conflict.field == "gpus[00000000:17:00.0].utilisation.gpu_pct"
    assert [(v.file, v.value) for v in conflict.values] == [(str(Q), 97.0), (str(DCGM), 91.0)]


def test_conflict_keeps_the_first_file_whatever_the_order() -> None:
    snapshot = load_evidence([DCGM, Q])
    assert snapshot.gpus[0].utilisation.gpu_pct == 91.0
    assert [v.file for v in snapshot.conflicts[0].values] == [str(DCGM), str(Q)]


def test_index_only_sources_attach_to_the_gpu_with_that_index() -> None:
    """topo -m and dmon name GPUs by index only; -q with 'Attached GPUs' gives indices."""
    snapshot = load_evidence([Q, TOPO, P2P, DMON])
    assert len(snapshot.gpus) == 2
    assert snapshot.gpus[1].numa_node == 1
    assert snapshot.gpus[1].cpu_affinity == "32-63"
    assert snapshot.gpus[0].samples is not None and len(snapshot.gpus[0].samples) == 2
    assert snapshot.gpus[0].throttle_reasons["sw_power_cap"].active is True  # -q
    assert snapshot.gpus[0].throttle_reasons["sw_power_cap"].fraction == 0.5  # dmon
    assert [p.status for p in snapshot.topology.p2p] == ["CNS"]
    assert [(n.label, n.device) for n in snapshot.topology.nics] == [("NIC0", "mlx5_0")]


def test_provenance_names_the_files_behind_each_part() -> None:
    snapshot = load_evidence([Q, DCGM, TOPO])
    assert snapshot.provenance["gpus.pcie"] == [str(Q)]
    assert snapshot.provenance["gpus.utilisation"] == sorted([str(Q), str(DCGM)])
    assert snapshot.provenance["topology.pairs"] == [str(TOPO)]
    assert snapshot.provenance["events"] == [str(DCGM)]


def test_the_same_log_twice_does_not_double_events(tmp_path: Path) -> None:
    log = FIXTURES / "seed-dmesg-T-xid31-13.log"
    copy = tmp_path / "again.log"
    copy.write_bytes(log.read_bytes())
    assert len(load_evidence([log, copy]).events) == 2
    assert load_evidence([log, copy]).conflicts == []


def test_repeated_identical_lines_in_one_log_all_count(tmp_path: Path) -> None:
    line = (
        "[Mon Jan 13 09:41:02 2026] NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus.\n"
    )
    log = tmp_path / "dmesg.log"
    log.write_text(line * 3)
    assert len(load_evidence([log]).events) == 3


def test_excerpt_without_identity_joins_a_single_gpu_host() -> None:
    files = [FIXTURES / "seed-flat-table.txt", FIXTURES / "seed-flat-q-temperature.txt"]
    snapshot = load_evidence(files)
    assert len(snapshot.gpus) == 1
    assert snapshot.gpus[0].temperature.slowdown_c == 91.0
    assert any("taken to be the host's only GPU" in note for note in snapshot.notes)


def test_excerpt_without_identity_stays_apart_on_a_multi_gpu_host() -> None:
    snapshot = load_evidence([Q, FIXTURES / "seed-flat-q-temperature.txt"])
    assert len(snapshot.gpus) == 3
    assert snapshot.gpus[2].index is None


def test_same_gpu_rules() -> None:
    bus = "00000000:17:00.0"
    assert same_gpu(Gpu(pci_bus_id=bus, index=0), Gpu(pci_bus_id=bus, index=3))
    assert not same_gpu(
        Gpu(pci_bus_id=bus, uuid="GPU-a"), Gpu(pci_bus_id="00000000:18:00.0", uuid="GPU-a")
    )
    assert same_gpu(Gpu(uuid="GPU-a"), Gpu(uuid="GPU-a", index=1))
    assert not same_gpu(Gpu(uuid="GPU-a", index=0), Gpu(uuid="GPU-b", index=0))
    assert same_gpu(Gpu(index=2), Gpu(pci_bus_id=bus, index=2))
    masked = "GPU-00000000-0000-0000-0000-000000000000"
    assert not same_gpu(Gpu(uuid=masked), Gpu(uuid=masked))  # collectors mask UUIDs
    assert not same_gpu(Gpu(), Gpu())


def test_host_sections_merge_and_disagree(tmp_path: Path) -> None:
    lscpu = FIXTURES / "seed-lscpu.txt"
    mpstat = FIXTURES / "seed-mpstat.txt"
    other = tmp_path / "lscpu-other.txt"
    other.write_text(lscpu.read_text().replace("CPU(s): 64", "CPU(s): 32"))
    snapshot = load_evidence([lscpu, mpstat, other])
    assert snapshot.host.cpu.logical_cpus == 64  # lscpu and mpstat's "(64 CPU)" agree
    assert snapshot.host.cpu_util.mean_busy_pct == 83.9
    [conflict] = snapshot.conflicts
    assert conflict.field == "host.cpu.logical_cpus"
    assert [v.value for v in conflict.values] == [64, 32]


def test_a_sampled_window_and_a_snapshot_are_not_a_conflict() -> None:
    """dmon's window means and -q's one moment measure different things: in either file
    order the window's figure is kept, the snapshot's value is named in a note, and the
    decision's "Conflicting evidence" stays empty."""
    from pathlib import Path

    from gpuadvisor.evidence import load_evidence

    folder = (
        Path(__file__).parent.parent / "examples" / "evidence" / "thermal-throttled-workstation"
    )
    files = [folder / "nvidia-smi-dmon.txt", folder / "nvidia-smi-q.txt"]
    for order in (files, files[::-1]):
        snapshot = load_evidence(order)
        assert snapshot.conflicts == []
        gpu = snapshot.gpus[0]
        assert gpu.temperature.gpu_c == 84.12
        assert gpu.power.draw_w == 360.88
        assert gpu.provenance["temperature.gpu_c"].endswith("nvidia-smi-dmon.txt")
        assert any("the snapshot in" in n and "read 88" in n for n in snapshot.notes)
