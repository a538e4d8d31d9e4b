"""Issue #33, evidence part: new real shapes of kernel logs and looped CSV queries.

- One Xid 79 logged with its companion line ("NVRM: GPU 0000:01:00.0: GPU has fallen
  off the bus.") is one event, not two.
- A lost GPU has one representation in every driver's wording: an Xid line stays the
  Xid as logged; every "fallen off the bus" message without one is a ``gpu-lost``
  event; ``host.gpu_lost_count`` counts each lost GPU once, from either kind.
- A short kernel log with a pasted "[...snip...]" line is still a kernel log.
- A looped ``--query-gpu`` CSV without identity columns is one GPU's series (or, where
  the time stamps come in bursts, one series per GPU), not one GPU per row.

The fixtures (tests/fixtures/evidence, see its SOURCES.md) have the exact shapes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _detect, detect, load_evidence, parse_text
from gpuadvisor.evidence.merge import merge
from gpuadvisor.host.schema import Event, HostSnapshot, Source
from gpuadvisor.pipeline import advise

from .conftest import REPO
from .evidence_support import FIXTURES

XID79_AND_COMPANION = FIXTURES / "dmesg-T_xid79-with-companion_550.log"
ONE_LINE_OLD = FIXTURES / "kern-log_fallen-off-bus-one-line_old-driver.log"
THREE_LINES_570 = FIXTURES / "dmesg-fallen-off-bus-three-lines_570.158.01.log"
SNIPPED = FIXTURES / "dmesg-short_pasted-snip.log"
LMS_ONE_GPU = FIXTURES / "query-gpu-lms250_one-gpu_no-identity.csv"
NO_TIMESTAMP = FIXTURES / "query-gpu-l1_no-timestamp_no-identity.csv"
FOUR_GPUS = FIXTURES / "query-gpu-l1_four-gpus_no-identity.csv"

LOST_FACTS = ("host.xid_count", "host.xid_bus_count", "host.xid_hardware_count")


def _facts(*paths: Path) -> dict[str, object]:
    return derive_host_facts(load_evidence(list(paths))).values


def _events(snapshot: HostSnapshot) -> list[tuple[str, int | None, str | None]]:
    return [(e.kind, e.code, e.pci_bus_id) for e in snapshot.events]


def _kernel_log(text: str) -> HostSnapshot:
    source = Source(file="k.log", kind="kernel-log", sha256="0" * 64)
    return merge([(source, parse_text(text, "k.log"))])


# -- Xid 79 and its companion line ----------------------------------------------------


def test_an_xid_79_and_its_companion_line_are_one_event() -> None:
    snapshot = load_evidence([XID79_AND_COMPANION])
    assert _events(snapshot) == [("xid", 79, "00000000:01:00.0")]
    [event] = snapshot.events
    assert (event.pid, event.process, event.time) == (48211, "python3", "2026-03-10T14:22:06")
    facts = derive_host_facts(snapshot).values
    assert [facts[name] for name in LOST_FACTS] == [1, 1, 1]
    assert facts["host.gpu_lost_count"] == 1


def test_the_companion_of_another_gpu_is_that_gpus_loss() -> None:
    """Older drivers' companion is the one-line wording, after a blank stamped line; a
    companion naming another GPU is that GPU's loss."""
    old = (
        "[ 8659.726062] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n"
        "[ 8659.726062] \n"
        "[ 8659.726067] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n"
    )
    assert _events(_kernel_log(old)) == [("xid", 79, "00000000:01:00.0")]
    text = (
        "[ 812.004113] NVRM: Xid (PCI:0000:01:00): 79, pid=7, name=python3, "
        "GPU has fallen off the bus.\n"
        "[ 812.004120] NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.\n"
        "[ 812.004871] NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.\n"
    )
    snapshot = _kernel_log(text)
    assert _events(snapshot) == [
        ("xid", 79, "00000000:01:00.0"),
        ("gpu-lost", None, "00000000:41:00.0"),
    ]
    assert derive_host_facts(snapshot).values["host.gpu_lost_count"] == 2


# -- one meaning, one representation ----------------------------------------------------


def test_fallen_off_the_bus_without_an_xid_is_a_lost_gpu_in_every_wording() -> None:
    """The old one line (said twice in the old driver's log) and the 570+ three lines read alike."""
    for path, bus in ((ONE_LINE_OLD, "00000000:02:00.0"), (THREE_LINES_570, "00000000:B3:00.0")):
        snapshot = load_evidence([path])
        assert _events(snapshot) == [("gpu-lost", None, bus)], path.name
        facts = derive_host_facts(snapshot).values
        assert [facts[name] for name in LOST_FACTS] == [0, 0, 0]  # no Xid is made up
        assert facts["host.gpu_lost_count"] == 1


def test_the_one_line_message_is_read_as_the_driver_prints_it() -> None:
    [event] = load_evidence([ONE_LINE_OLD]).events
    assert event.text == "NVRM: GPU at 0000:02:00.0 has fallen off the bus."
    assert (event.time, event.xid_class) == ("Nov  2 21:14:37", None)
    assert event.source is not None and event.source.endswith(f"{ONE_LINE_OLD.name}:1")


def test_every_wording_of_a_loss_fires_the_same_findings(
    tmp_path: Path, rulebase: RuleBase
) -> None:
    """Before, the one-line wording fired HW-001 and XID-001 (as an Xid 79) and the
    570+ wording only HW-002; the Xid 79 with its companion counted 2 Xid events."""
    profile = REPO / "examples" / "second-rtx-4090.toml"  # a 2-card platform, 1 card in it
    q = REPO / "examples" / "evidence" / "second-rtx-4090" / "nvidia-smi-q.txt"

    def fix_first(log: Path) -> dict[str, str]:
        decision: Decision = advise(profile, evidence=(q, log), sensitivity=False, rules=rulebase)
        return {f.rule: f.evidence for f in decision.fix_first if f.rule.startswith("HW-")}

    one_line, three_lines = fix_first(ONE_LINE_OLD), fix_first(THREE_LINES_570)
    assert set(one_line) == set(three_lines) == {"HW-001", "HW-002"}
    assert all("host.gpu_lost_count = 1" in text for text in (*one_line.values(),))
    decision = advise(profile, evidence=(q, XID79_AND_COMPANION), sensitivity=False, rules=rulebase)
    evidence = {f.rule: f.evidence for f in decision.fix_first}
    assert set(evidence) == {"HW-001", "HW-002", "XID-001"}
    assert evidence["XID-001"].startswith("host.xid_hardware_count = 1 ")


def test_a_gpu_lost_in_a_later_boot_is_lost_again() -> None:
    """One loss per GPU and boot: journalctl's boot marker and dmesg's seconds going back
    end a boot, so a message after it is not the earlier Xid's companion."""
    xid = "NVRM: Xid (PCI:0000:01:00): 79, pid=7, name=x, GPU has fallen off the bus."
    lost = "NVRM: GPU at 0000:01:00.0 has fallen off the bus."
    journal = (
        f"Mar 10 14:22:06 node kernel: {xid}\n"
        "-- Boot 0c1f3e5a9b7d4c2e8f6a1b3c5d7e9f01 --\n"
        "Mar 10 15:02:44 node kernel: Linux version 6.8.0-49-generic\n"
        f"Mar 10 15:40:17 node kernel: {lost}\n"
    )
    dmesg = f"[ 5231.410532] {xid}\n[ 2210.118204] {lost}\n[ 2210.118227] {lost}\n"
    for text in (journal, dmesg):
        snapshot = _kernel_log(text)
        assert _events(snapshot) == [
            ("xid", 79, "00000000:01:00.0"),
            ("gpu-lost", None, "00000000:01:00.0"),
        ]
        facts = derive_host_facts(snapshot).values
        assert (facts["host.xid_bus_count"], facts["host.gpu_lost_count"]) == (1, 1)


def test_gpus_lost_count_each_gpu_once_whatever_reported_it() -> None:
    """A probe reports NVML's GPU_IS_LOST beside the Xid 79 NVML gives: one GPU."""
    probe = HostSnapshot(
        events=[
            Event(kind="gpu-lost", pci_bus_id="00000000:C1:00.0", text="NVML: lost"),
            Event(kind="xid", code=79, pci_bus_id="00000000:C1:00.0", text="Xid 79"),
            Event(kind="xid", code=79, pci_bus_id="00000000:17:00.0", text="Xid 79"),
            Event(kind="xid", code=48, pci_bus_id="00000000:65:00.0", text="Xid 48"),
        ],
        provenance={"events": ["nvml probe"]},
    )
    assert derive_host_facts(probe).values["host.gpu_lost_count"] == 2
    quiet = derive_host_facts(load_evidence([SNIPPED])).values
    assert quiet["host.gpu_lost_count"] == 0  # a kernel log was read: none lost, not unknown
    assert derive_host_facts(HostSnapshot()).values["host.gpu_lost_count"] is None


# -- short kernel logs ------------------------------------------------------------------


def test_a_short_kernel_log_with_a_pasted_snip_line_is_a_kernel_log() -> None:
    snapshot = load_evidence([SNIPPED])
    assert snapshot.sources[0].kind == "kernel-log"
    assert snapshot.events == [] and snapshot.notes == []
    assert derive_host_facts(snapshot).values["host.xid_count"] == 0


@pytest.mark.parametrize(
    "marker",
    ["[...snip...]", "...", "…", "-- snip --", "<cut>", "[ 42 lines omitted ]", "[...]"],
)
def test_a_cut_mark_counts_neither_way(marker: str) -> None:
    lines = ["[    0.000000] Linux version 6.8.0", marker, "[    1.201337] usb 1-1: new device"]
    assert detect("\n".join(lines) + "\n") == "kernel-log"
    assert _detect.pasted_marker(marker)


def test_one_foreign_line_beside_two_kernel_lines_is_allowed_and_no_more() -> None:
    text = "$ sudo dmesg | tail -2\n[ 4.1] nvidia: loading\n[ 5.2] usb 1-1: new device\n"
    assert detect(text) == "kernel-log"
    for other in (
        "[1.0] a\nsome other text\nmore\n",  # one kernel line of three
        "[...snip...]\n...\n",  # marks only
        "2024-11-15 10:00:00 app started\n[...snip...]\nserving on :8080\n",
        "[ 4.1] nvidia: loading\nfirst pasted line\nsecond pasted line\n[ 5.2] usb 1-1: up\n",
    ):
        with pytest.raises(InputError, match="unrecognised"):
            detect(other)


def test_a_long_line_of_dots_is_no_cut_mark() -> None:
    assert not _detect.pasted_marker("." * 200)
    assert not _detect.pasted_marker("[ 12.3] snip")


# -- looped --query-gpu CSVs ------------------------------------------------------------


def test_a_looped_query_without_identity_columns_is_one_gpus_window() -> None:
    snapshot = load_evidence([LMS_ONE_GPU])
    [gpu] = snapshot.gpus
    samples = gpu.samples or []
    assert [s.t_s for s in samples] == [0.0, 0.251, 0.501, 0.752, 1.002, 1.253, 1.503, 1.754]
    assert [s.util_pct for s in samples] == [97, 98, 96, 12, 0, 91, 99, 98]
    assert samples[0].sm_clock_mhz == 2730 and samples[0].power_w == 431.27
    assert gpu.utilisation.gpu_pct == 73.88  # the mean over the window, not the first row
    assert (gpu.utilisation.gpu_p95_pct, gpu.utilisation.gpu_min_pct) == (99, 0)
    assert gpu.memory_used_mib == 22306  # the high-water mark
    assert gpu.memory_total_mib == 24564
    facts = derive_host_facts(snapshot).values
    assert (facts["host.gpu_count"], facts["host.util_samples"]) == (1, 8)
    assert facts["host.gpu_util_basis"] == "window"
    [note] = snapshot.notes
    assert "8 rows were read as one GPU's samples" in note and "over 1.754 s" in note


def test_a_looped_query_without_a_timestamp_is_one_gpus_window_with_a_note() -> None:
    snapshot = load_evidence([NO_TIMESTAMP])
    [gpu] = snapshot.gpus
    assert [s.util_pct for s in gpu.samples or []] == [84, 87, 0, 79, 88, 86]
    assert all(s.t_s is None for s in gpu.samples or [])
    assert gpu.power.draw_w == pytest.approx(216.95, abs=0.01)
    [note] = snapshot.notes
    assert "one GPU's samples" in note and "add index to --query-gpu" in note
    assert derive_host_facts(snapshot).values["host.gpu_util_basis"] == "window"
    # Rows of different cards are never one GPU's samples: a one-off query of a mixed
    # host without identity columns is one GPU per row, as before.
    text = (
        "name, memory.total [MiB], utilization.gpu [%]\n"
        "NVIDIA GeForce RTX 4090, 24564 MiB, 97 %\n"
        "NVIDIA RTX A5000, 24564 MiB, 3 %\n"
    )
    snapshot = parse_text(text, "q.csv")
    assert [(g.name, g.samples) for g in snapshot.gpus] == [
        ("NVIDIA GeForce RTX 4090", None),
        ("NVIDIA RTX A5000", None),
    ]
    assert snapshot.notes == []


def test_a_looped_query_of_four_gpus_is_told_apart_by_its_bursts() -> None:
    """nvidia-smi stamps each row when it reads that GPU: a loop over four GPUs prints
    four rows milliseconds apart, then waits the interval."""
    snapshot = load_evidence([FOUR_GPUS])
    assert len(snapshot.gpus) == 4
    busy = [g.utilisation.gpu_pct for g in snapshot.gpus]
    assert busy == [99.67, 99.33, 99.67, 0.0]
    assert [len(g.samples or []) for g in snapshot.gpus] == [3, 3, 3, 3]
    assert [s.t_s for s in snapshot.gpus[3].samples or []] == [0.0, 1.027, 2.054]
    facts = derive_host_facts(snapshot).values
    assert (facts["host.gpu_count"], facts["host.gpu_idle_beside_busy"]) == (4, True)
    [note] = snapshot.notes
    assert "bursts of 4 rows" in note and "lines 2-13" in note


def test_rows_of_one_stamp_per_loop_are_the_gpus_of_that_loop() -> None:
    """Where each loop's rows carry one time stamp, the repeats say how many GPUs."""
    rows = [
        "2025/07/05 15:01:02.123, 56 %",
        "2025/07/05 15:01:02.123, 42 %",
        "2025/07/05 15:01:03.123, 60 %",
        "2025/07/05 15:01:03.123, 48 %",
        "2025/07/05 15:01:04.124, 58 %",  # the capture was stopped within this loop
    ]
    text = "timestamp, utilization.gpu [%]\n" + "\n".join(rows) + "\n"
    gpus = parse_text(text, "q.csv").gpus
    assert [[s.util_pct for s in g.samples or []] for g in gpus] == [[56, 60, 58], [42, 48]]


def test_rows_with_an_identity_column_are_one_window_per_gpu() -> None:
    text = (
        "timestamp, index, utilization.gpu [%]\n"
        "2025/07/05 15:01:02.123, 0, 56 %\n"
        "2025/07/05 15:01:02.130, 1, 42 %\n"
        "2025/07/05 15:01:03.124, 0, 60 %\n"
        "2025/07/05 15:01:03.131, 1, 48 %\n"
    )
    snapshot = _merged(text)
    assert [(g.index, g.utilisation.gpu_pct) for g in snapshot.gpus] == [(0, 58.0), (1, 45.0)]
    assert snapshot.conflicts == [] and snapshot.notes == []  # no row disagrees with itself
    # One row per GPU reads as before: snapshots, no samples.
    text = "index, name, utilization.gpu [%]\n0, NVIDIA A10, 30 %\n1, NVIDIA A10, 70 %\n"
    gpus = parse_text(text, "q.csv").gpus
    assert [(g.index, g.utilisation.gpu_pct, g.samples) for g in gpus] == [
        (0, 30.0, None),
        (1, 70.0, None),
    ]


def test_clock_event_reasons_of_a_window_are_shares_of_its_rows() -> None:
    text = (
        "timestamp, utilization.gpu [%], clocks_event_reasons.sw_power_cap\n"
        "2026/03/10 14:20:01.000, 99 %, Active\n"
        "2026/03/10 14:20:02.000, 99 %, Not Active\n"
        "2026/03/10 14:20:03.000, 98 %, Active\n"
        "2026/03/10 14:20:04.000, 97 %, Active\n"
    )
    [gpu] = parse_text(text, "q.csv").gpus
    state = gpu.throttle_reasons["sw_power_cap"]
    assert (state.fraction, state.active) == (0.75, None)


def test_a_loop_longer_than_a_host_has_gpus_is_read() -> None:
    """Before, 1,025 rows were refused as 1,025 GPUs."""
    rows = "".join(f"{i % 100} %, 1000 MiB\n" for i in range(1100))
    [gpu] = parse_text("utilization.gpu [%], memory.used [MiB]\n" + rows, "q.csv").gpus
    assert len(gpu.samples or []) == 1100


def test_an_aliases_disagreement_is_noted_once_for_a_window() -> None:
    text = "clocks.sm [MHz], clocks.current.sm [MHz]\n" + "1500 MHz, 1400 MHz\n" * 5
    snapshot = parse_text(text, "q.csv")
    assert sum("disagrees with" in n for n in snapshot.notes) == 1


def _merged(text: str) -> HostSnapshot:
    source = Source(file="q.csv", kind="nvidia-smi-csv", sha256="0" * 64)
    return merge([(source, parse_text(text, "q.csv"))])


def test_a_looped_csv_is_a_window_beside_a_snapshot() -> None:
    """A looped --query-gpu CSV samples over time like dmon: beside a -q snapshot of the
    same GPU, its window's figures are used and the snapshot's are named, not kept as a
    conflict between two equal sources."""
    from pathlib import Path

    from gpuadvisor.evidence import load_evidence

    here = Path(__file__).parent / "fixtures" / "evidence"
    looped = here / "query-gpu-lms250_one-gpu_no-identity.csv"
    snapshot = load_evidence([here / "judge-rtx-4090-util34-q.txt", looped])
    assert len(snapshot.gpus) == 1
    assert any(
        "utilisation.gpu_pct" in note and f"over the window sampled in {looped}" in note
        for note in snapshot.notes
    ), snapshot.notes
    assert not [c for c in snapshot.conflicts if "gpu_pct" in c.field]
