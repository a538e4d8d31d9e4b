"""Captures that used to be misread (issue #15), each pinned on a capture of that exact
shape under tests/fixtures/evidence (where each comes from: its SOURCES.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _detect, load_evidence, parse_text
from gpuadvisor.host.schema import HostSnapshot

from .evidence_support import FIXTURES


def _load(name: str) -> HostSnapshot:
    return load_evidence([FIXTURES / name])


# -- encodings --------------------------------------------------------------------------

UTF16 = "table-rtx-2080-super_591.86_windows_powershell-utf16le.txt"


def test_a_powershell_utf16_capture_is_read() -> None:
    """PowerShell 5.1's ``nvidia-smi > table.txt``: UTF-16 LE with a BOM, CRLF."""
    data = (FIXTURES / UTF16).read_bytes()
    assert data[:2] == b"\xff\xfe"
    snapshot = _load(UTF16)
    assert snapshot.sources[0].kind == "nvidia-smi-table"
    [gpu] = snapshot.gpus
    assert (gpu.pci_bus_id, gpu.driver_model, gpu.memory_total_mib) == (
        "00000000:0C:00.0",
        "WDDM",
        8192,
    )
    assert snapshot.driver_version == "591.86"
    assert gpu.processes is not None and len(gpu.processes) == 10
    # The same capture written as UTF-8 reads the same.
    text = data[2:].decode("utf-16-le")
    assert parse_text(text, "t.txt") == parse_text(text.encode("utf-8").decode(), "t.txt")


@pytest.mark.parametrize("encoding", ["utf-16-be", "utf-32-le"])
def test_other_byte_order_marks_are_read(tmp_path: Path, encoding: str) -> None:
    text = (FIXTURES / "seed-smi-L.txt").read_text(encoding="utf-8")
    path = tmp_path / "list.txt"
    path.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
    assert [g.name for g in load_evidence([path]).gpus] == ["NVIDIA A10", "NVIDIA A10"]


def test_binary_without_a_byte_order_mark_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes("GPU 0: NVIDIA A10 (UUID: GPU-1)\n".encode("utf-16-le"))
    with pytest.raises(InputError) as caught:
        load_evidence([path])
    assert "binary" in caught.value.message
    assert caught.value.hint is not None and "Out-File -Encoding utf8" in caught.value.hint
    assert caught.value.exit_code == 2


def test_a_truncated_utf16_capture_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xff\xfe" + "a\nb\n".encode("utf-16-le") + b"\x00\xd8")  # lone surrogate
    with pytest.raises(InputError, match="not valid UTF-16-LE") as caught:
        load_evidence([path])
    assert caught.value.line == 3


def test_profiles_stay_utf8_only(tmp_path: Path) -> None:
    """TOML and JSON are UTF-8 by their specifications; only captures get BOM decoding."""
    from gpuadvisor.pipeline import read_profile

    path = tmp_path / "p.toml"
    path.write_bytes('schema = "gpuadvisor/profile/v1"\n'.encode("utf-16"))
    with pytest.raises(InputError, match="binary"):
        read_profile(path)


# -- PCIe AER ---------------------------------------------------------------------------

AER = "dmesg-aer-correctable-uncorrectable_6.11.log"


def test_aer_correctable_is_corrected_and_uncorrectable_keeps_its_kind() -> None:
    """Linux 6.x: "severity=Correctable" and "Uncorrectable (Fatal)"; the aer_event
    trace lines repeat the same two errors and are not counted again."""
    snapshot = _load(AER)
    assert [(e.kind, e.severity, e.pci_bus_id) for e in snapshot.events] == [
        ("aer", "corrected", "00000000:0C:00.0"),
        ("aer", "uncorrected-fatal", "00000000:0C:00.0"),
    ]
    facts = derive_host_facts(snapshot).values
    assert (facts["host.aer_corrected_count"], facts["host.aer_uncorrected_count"]) == (1, 1)


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("AER: Correctable error message received from 0000:07:00.0", "corrected"),
        ("AER: Corrected error received: 0000:07:00.0", "corrected"),
        (
            "AER: Uncorrectable (Non-Fatal) error message received from 0000:07:00.0",
            "uncorrected-nonfatal",
        ),
        ("AER: Uncorrected (Fatal) error received: 0000:07:00.0", "uncorrected-fatal"),
    ],
)
def test_received_only_lines_in_either_wording(line: str, severity: str) -> None:
    text = f"[   17.765394] pcieport 0000:00:1c.4: {line}\n"
    [event] = parse_text(text, "k.log").events
    assert (event.severity, event.pci_bus_id) == (severity, "00000000:07:00.0")


def test_an_unknown_aer_severity_is_kept_without_one_and_noted() -> None:
    text = "[1.0] nvidia 0000:01:00.0: PCIe Bus Error: severity=Weird, type=Physical Layer\n"
    snapshot = parse_text(text, "k.log")
    assert [e.severity for e in snapshot.events] == [None]
    assert "not one the kernel prints" in snapshot.notes[0]


# -- a GPU lost without an Xid -----------------------------------------------------------

LOST = "dmesg-fallen-off-bus-three-lines_570.158.01.log"


def test_the_three_line_fallen_off_the_bus_message_is_a_lost_gpu() -> None:
    snapshot = _load(LOST)
    assert snapshot.sources[0].kind == "kernel-log"
    [event] = snapshot.events
    assert (event.kind, event.pci_bus_id, event.time) == (
        "gpu-lost",
        "00000000:B3:00.0",
        "1843.308145",
    )
    assert event.text == (
        "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has "
        "fallen off the bus and is not responding to commands."
    )
    assert derive_host_facts(snapshot).values["host.gpu_lost_count"] == 1


def test_continuation_lines_do_not_count_against_the_kernel_log_shape() -> None:
    """Three stamped lines and two indented continuations: the shape alone (no Xid, no
    AER) is a kernel log's, as it was not when continuations counted as foreign."""
    text = (FIXTURES / LOST).read_text(encoding="utf-8")
    assert _detect.kernel_shaped(text)
    assert not _detect.kernel_shaped("[1.0] a\nsome other text\nmore\n")


def test_journalctl_lines_of_one_lost_gpu_message_and_its_repeats() -> None:
    """journalctl prefixes each line; the probe retries print it again: one GPU lost."""
    lines = [
        "NVRM: The NVIDIA GPU 0000:b3:00.0",
        "NVRM: (PCI ID: 10de:26b5) installed in this system has",
        "NVRM: fallen off the bus and is not responding to commands.",
        "nvidia: probe of 0000:b3:00.0 failed with error -1",
    ]
    text = "".join(f"Feb 14 05:03:4{i % 2} node kernel: {line}\n" for i, line in enumerate(lines))
    events = parse_text(text * 3, "j.log").events
    assert [(e.kind, e.pci_bus_id, e.time) for e in events] == [
        ("gpu-lost", "00000000:B3:00.0", "Feb 14 05:03:40")
    ]


def test_a_lost_gpu_already_reported_by_xid_79_is_one_loss() -> None:
    text = "[10.0] NVRM: Xid (PCI:0000:b3:00): 79, pid=1, name=x, GPU has fallen off the bus.\n" + (
        FIXTURES / LOST
    ).read_text(encoding="utf-8")
    assert [(e.kind, e.code) for e in parse_text(text, "k.log").events] == [("xid", 79)]


def test_a_start_line_without_its_end_is_no_event() -> None:
    text = "[1.0] NVRM: The NVIDIA GPU 0000:b3:00.0\n[1.1] usb 1-1: new device\n"
    assert parse_text(text, "k.log").events == []


# -- time stamps in other languages --------------------------------------------------------


def test_journal_stamps_with_russian_month_names() -> None:
    snapshot = _load("journalctl-k_ru-locale_xid79-aer.log")
    assert [(e.kind, e.time) for e in snapshot.events] == [
        ("xid", "May 14 10:12:44"),
        ("aer", "May 14 09:57:01"),
    ]
    [note] = snapshot.notes
    assert "'мая', read as May" in note


def test_a_real_russian_journal_is_a_kernel_log() -> None:
    snapshot = _load("journalctl-k_ru-locale_kernel-bug.log")
    assert snapshot.sources[0].kind == "kernel-log" and snapshot.events == []
    assert derive_host_facts(snapshot).values["host.xid_count"] == 0


XID = "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x, GPU has fallen off the bus."


@pytest.mark.parametrize(
    ("prefix", "time"),
    [
        ("[Вт мая 14 10:12:44 2024] ", "2024-05-14T10:12:44"),  # dmesg -T, ru_RU
        ("[Di Mär  5 10:12:44 2024] ", "2024-03-05T10:12:44"),  # de_DE
        ("[mar. janv. 16 10:12:44 2024] ", "2024-01-16T10:12:44"),  # fr_FR
        ("Mär 05 10:12:44 node kernel: ", "Mar 05 10:12:44"),  # journalctl, de_DE
        ("paź 05 10:12:44.123456 node kernel: ", "Oct 05 10:12:44.123456"),  # pl_PL
        (" 7月 27 14:08:03 node kernel: ", "Jul 27 14:08:03"),  # ja_JP
        ("7月 27 14:08:03 node kernel: ", "Jul 27 14:08:03"),  # zh_CN
    ],
)
def test_month_names_of_other_languages(prefix: str, time: str) -> None:
    snapshot = parse_text(prefix + XID + "\n", "k.log")
    [event] = snapshot.events
    assert event.time == time
    assert len(snapshot.notes) == 1 and "read as" in snapshot.notes[0]


def test_english_stamps_are_kept_as_printed_without_a_note() -> None:
    snapshot = parse_text("Mar  3 10:00:00 node kernel: " + XID + "\n", "k.log")
    assert [e.time for e in snapshot.events] == ["Mar  3 10:00:00"]
    assert snapshot.notes == []


def test_a_word_that_is_no_month_keeps_the_stamp_and_says_so() -> None:
    snapshot = parse_text("Zzz 27 14:08:03 node kernel: " + XID + "\n", "k.log")
    assert [e.time for e in snapshot.events] == ["Zzz 27 14:08:03"]
    assert "not a month name gpuadvisor knows" in snapshot.notes[0]


# -- Xid 13 over several lines ---------------------------------------------------------------


def test_an_xid_13_printed_over_three_lines_is_one_event() -> None:
    snapshot = _load("dmesg-ctime_xid13-three-lines.log")
    assert Counter(e.code for e in snapshot.events) == {13: 1, 109: 1}
    first = snapshot.events[0]
    assert (first.time, first.source and first.source.endswith(":2")) == (
        "2024-08-30T11:43:09",
        True,
    )
    assert "Illegal Instruction Parameter" in first.text and "ESR 0x57c730" in first.text
    assert derive_host_facts(snapshot).values["host.xid_application_count"] == 1


def test_each_sm_report_of_an_xid_13_burst_is_its_own_event() -> None:
    """A new Warp Exception line starts a new report; a line of another process, GPU or
    Xid in between ends the one before."""
    head = "[1.0] NVRM: Xid (PCI:0000:01:00): 13, pid='<unknown>', name=<unknown>, "
    parts = [
        "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
        "Graphics SM Global Exception on (GPC 0, TPC 0, SM 0): Multiple Warp Errors",
        "Graphics Exception: ESR 0x1=0x2",
    ]
    report = "".join(head + p + "\n" for p in parts)
    other = "[1.1] NVRM: Xid (PCI:0000:02:00): 13, pid=7, name=y, Graphics Exception: ESR 0x3\n"
    events = parse_text(report + report + other + head + parts[2] + "\n", "k.log").events
    assert [e.pci_bus_id[-7:-5] for e in events if e.pci_bus_id] == ["01", "01", "02", "01"]


# -- the default nvidia-smi table ----------------------------------------------------------

MIG_TABLE = "table-h100-mig_590.48.01_mig-devices.txt"


def test_the_mig_devices_block_and_the_mig_and_ecc_columns_are_read() -> None:
    snapshot = _load(MIG_TABLE)
    [gpu] = snapshot.gpus
    assert (gpu.ecc_mode, gpu.mig_mode) == ("enabled", "enabled")  # ECC "On", MIG "Enabled"
    assert gpu.ecc_errors.volatile_uncorrectable is None  # per instance under MIG
    assert gpu.mig_devices is not None
    assert [
        (m.index, m.gpu_instance_id, m.compute_instance_id, m.multiprocessor_count)
        for m in gpu.mig_devices
    ] == [(0, 2, 0, 60), (1, 3, 0, 32), (2, 9, 0, 16), (3, 10, 0, 16)]
    assert [(m.memory_used_mib, m.memory_total_mib) for m in gpu.mig_devices] == [
        (11091, 40448),
        (17, 20096),
        (9, 9984),
        (9, 9984),
    ]
    assert gpu.processes is not None and [p.gpu_instance_id for p in gpu.processes] == [2, 2, 2]


def test_the_table_and_the_q_report_of_one_mig_gpu_agree_on_its_instances() -> None:
    """The same four instances from -q (idle) and from the table (under load): one list."""
    from .evidence_support import real_fixtures_dir

    real = real_fixtures_dir()
    if real is None:
        pytest.skip("real captures not found")
    q = real / "smi-text" / "h100-80gb-hbm3_590.48.01_q_mig-4-instances.txt"
    snapshot = load_evidence([q, FIXTURES / MIG_TABLE])
    [gpu] = snapshot.gpus
    assert gpu.mig_devices is not None and len(gpu.mig_devices) == 4
    assert not any(c.field.endswith("multiprocessor_count") for c in snapshot.conflicts)


TABLE_ROW = (
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 525.125.06   Driver Version: 525.125.06   CUDA Version: 12.0     |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
    "|                               |                      |               MIG M. |\n"
    "|===============================+======================+======================|\n"
    "|   0  NVIDIA RTX A5000     Off | 00000000:65:00.0 Off | {ecc:>20} |\n"
    "| 30%   40C    P8    20W / 230W |      1MiB / 24564MiB |      0%      Default |\n"
    "|                               |                      | {mig:>20} |\n"
    "+-------------------------------+----------------------+----------------------+\n"
)


@pytest.mark.parametrize(
    ("ecc", "mig", "modes", "count"),
    [
        ("0", "Disabled", ("enabled", "disabled"), 0),
        ("3", "N/A", ("enabled", "unsupported"), 3),
        ("Off", "N/A", ("disabled", "unsupported"), None),
        ("N/A", "N/A", ("unsupported", "unsupported"), None),
        ("On", "Enabled", ("enabled", "enabled"), None),
    ],
)
def test_ecc_and_mig_cells(ecc: str, mig: str, modes: tuple[str, str], count: int | None) -> None:
    [gpu] = parse_text(TABLE_ROW.format(ecc=ecc, mig=mig), "t.txt").gpus
    assert (gpu.ecc_mode, gpu.mig_mode) == modes
    assert gpu.ecc_errors.volatile_uncorrectable == count
    # MIG enabled with no MIG devices table printed: not reported, not "none".
    assert gpu.mig_devices is None


def test_mig_enabled_and_no_mig_devices_found() -> None:
    text = TABLE_ROW.format(ecc="On", mig="Enabled") + (
        "\n+-----------------------------------------------------------------------------+\n"
        "| MIG devices:                                                                |\n"
        "+------------------+----------------------+-----------+-----------------------+\n"
        "| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |\n"
        "|      ID  ID  Dev |           BAR1-Usage | SM     Unc| CE  ENC  DEC  OFA  JPG|\n"
        "|                  |                      |        ECC|                       |\n"
        "|==================+======================+===========+=======================|\n"
        "|  No MIG devices found                                                       |\n"
        "+-----------------------------------------------------------------------------+\n"
    )
    [gpu] = parse_text(text, "t.txt").gpus
    assert gpu.mig_devices == []


# -- dmon --------------------------------------------------------------------------------------


def test_dmon_fills_the_gpu_readings_over_its_window() -> None:
    """Five samples of an H100 under gpu-burn: mtemp, mem and mclk kept; the GPU's own
    utilisation, power and temperature are the window's."""
    [gpu] = _load("dmon-h100_590.48.01_load.txt").gpus
    assert gpu.samples is not None and len(gpu.samples) == 5
    assert (gpu.utilisation.gpu_pct, gpu.utilisation.gpu_min_pct) == (100.0, 100.0)
    assert (gpu.utilisation.memory_pct, gpu.utilisation.memory_p95_pct) == (9.4, 10.0)
    assert gpu.utilisation.memory_min_pct == 9.0
    assert (gpu.utilisation.encoder_pct, gpu.utilisation.decoder_pct) == (0.0, 0.0)
    assert gpu.power.draw_w == 633.6
    assert (gpu.temperature.gpu_c, gpu.temperature.memory_c) == (63.8, 58.2)
    assert (gpu.clocks.sm_mhz, gpu.clocks.mem_mhz) == (1980.0, 2619.0)


def test_dmon_columns_left_at_dash_stay_null() -> None:
    """Under MIG dmon prints "-" for SM and memory %; GDDR cards have no memory
    temperature."""
    text = (
        "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n"
        "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz\n"
        "    0     70     42      -      -      -      -      -      -      -   2619    345\n"
        "    0     72     43      -      -      -      -      -      -      -   2619    345\n"
    )
    [gpu] = parse_text(text, "dmon.txt").gpus
    assert (gpu.utilisation.gpu_pct, gpu.utilisation.memory_pct) == (None, None)
    assert gpu.temperature.memory_c is None
    assert (gpu.power.draw_w, gpu.temperature.gpu_c, gpu.clocks.mem_mhz) == (71.0, 42.5, 2619.0)


# -- numactl --hardware and topo -p2p ----------------------------------------------------------


def test_numactl_hardware_alone_is_accepted() -> None:
    snapshot = _load("numactl-hardware-2node_apache-hadoop.txt")
    assert snapshot.sources[0].kind == "numactl"
    cpu = snapshot.host.cpu
    assert cpu.numa_nodes == 2
    # Written as lscpu writes "NUMA nodeN CPU(s)", so the two captures agree when merged.
    assert cpu.numa_node_cpus == {"node0": "0-23,48-71", "node1": "24-47,72-95"}
    assert snapshot.host.numa_binding.policy is None
    [note] = snapshot.notes
    assert "node memory sizes and node distances" in note
    assert derive_host_facts(snapshot).values["host.numa_nodes"] == 2


def test_numactl_show_and_hardware_in_one_capture() -> None:
    snapshot = _load("numactl-show-and-hardware.txt")
    binding, cpu = snapshot.host.numa_binding, snapshot.host.cpu
    assert (binding.policy, binding.nodebind, binding.membind) == ("default", [0, 1], [0, 1])
    assert cpu.numa_nodes == 2
    assert cpu.numa_node_cpus["node1"].startswith("1,3,5,")


def test_numactl_hardware_and_lscpu_of_one_host_agree(tmp_path: Path) -> None:
    lscpu = tmp_path / "lscpu.txt"
    lscpu.write_text(
        "Architecture: x86_64\nCPU(s): 96\nSocket(s): 2\nNUMA node(s): 2\n"
        "NUMA node0 CPU(s): 0-23,48-71\nNUMA node1 CPU(s): 24-47,72-95\n",
        encoding="utf-8",
    )
    snapshot = load_evidence([lscpu, FIXTURES / "numactl-hardware-2node_apache-hadoop.txt"])
    assert snapshot.conflicts == []


@pytest.mark.parametrize(
    ("ids", "written"),
    [([0, 1, 2, 3, 8, 10, 11], "0-3,8,10,11"), ([5], "5"), ([0, 2, 4], "0,2,4"), ([1, 2], "1,2")],
)
def test_cpu_lists_are_written_as_lscpu_writes_them(ids: list[int], written: str) -> None:
    from gpuadvisor.evidence.numactl import cpu_ranges

    assert cpu_ranges(ids) == written


def test_a_memory_only_numa_node_lists_no_cpus() -> None:
    text = (
        "available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 3\nnode 0 size: 63678 MB\n"
        "node 1 cpus:\nnode 1 size: 16122 MB\n"
    )
    cpu = parse_text(text, "n.txt").host.cpu
    assert (cpu.numa_nodes, cpu.numa_node_cpus) == (2, {"node0": "0-3"})


def test_topo_p2p_alone_yields_its_gpus() -> None:
    snapshot = _load("two-gpu-p2p-cns.txt")
    assert [g.index for g in snapshot.gpus] == [0, 1]
    assert derive_host_facts(snapshot).values["host.gpu_count"] == 2
