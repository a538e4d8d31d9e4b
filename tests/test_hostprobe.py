"""The host side of the probe: pure parsers over captured /proc and /sys text.

``fixtures/hostprobe/vm-2cpu`` is a real capture from a 2-CPU VM (counters read twice,
about two seconds apart, around a direct-I/O write and a busy loop); the two-socket and
network texts below are written by hand in the kernel's formats, marked as such.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.probe.host import (
    Counters,
    HostReader,
    cpu_util,
    disk_util,
    host_info,
    net_util,
    parse_cpuinfo,
    parse_diskstats,
    parse_node_cpulists,
    parse_proc_stat,
)

HOST_CAPTURES = Path(__file__).resolve().parent / "fixtures" / "hostprobe"
VM = HOST_CAPTURES / "vm-2cpu"

# Hand-written: two sockets, two cores each, two threads per core (8 logical CPUs).
TWO_SOCKETS = "\n\n".join(
    f"processor\t: {cpu}\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
    f"physical id\t: {cpu // 4}\nsiblings\t: 4\ncore id\t\t: {cpu % 2}\ncpu cores\t: 2"
    for cpu in range(8)
)

# Hand-written in /proc/net/dev's layout: eth0 receives 1.25 GB in 2 s on a 10 Gb/s link.
HAND = HOST_CAPTURES / "hand-written"
NET_BEFORE = (HAND / "net-dev-before.txt").read_text(encoding="utf-8")
NET_AFTER = (HAND / "net-dev-after.txt").read_text(encoding="utf-8")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_cpuinfo_of_a_vm() -> None:
    info = parse_cpuinfo(_read(VM / "proc/cpuinfo"))
    assert (info.model_name, info.logical_cpus, info.sockets) == ("AMD EPYC", 2, 1)
    assert (info.cores_per_socket, info.threads_per_core) == (2, 1)


def test_cpuinfo_of_two_sockets() -> None:
    info = parse_cpuinfo(TWO_SOCKETS)
    assert (info.logical_cpus, info.sockets, info.cores_per_socket, info.threads_per_core) == (
        8,
        2,
        2,
        2,
    )


def test_cpuinfo_without_physical_id_leaves_sockets_unknown() -> None:
    info = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\n")
    assert (info.logical_cpus, info.sockets, info.model_name) == (2, None, None)


def test_node_cpulists() -> None:
    nodes = parse_node_cpulists({1: "32-63,96-127\n", 0: "0-31,64-95\n", 2: "\n"})
    assert nodes == {"node0": "0-31,64-95", "node1": "32-63,96-127"}


def test_cpu_util_from_two_proc_stat_readings() -> None:
    util = cpu_util(_read(VM / "proc/stat"), _read(VM / "after/proc/stat"))
    # cpu: 449 ticks, 268 idle, 11 iowait; cpu0: 222 ticks, 216 idle; cpu1: 225, 52, 10.
    assert (util.mean_busy_pct, util.iowait_pct) == (40.31, 2.45)
    assert [(c.cpu, c.busy_pct, c.iowait_pct) for c in util.per_core] == [
        (0, 2.7, 0.0),
        (1, 76.89, 4.44),
    ]


def test_proc_stat_ignores_other_lines() -> None:
    times = parse_proc_stat("intr 1 2 3\nctxt 77\ncpu  1 2 3 4 5 6 7 8 9 10\nbtime 1700000000\n")
    assert list(times) == ["cpu"]
    assert (times["cpu"].idle, times["cpu"].iowait, times["cpu"].total) == (4, 5, 36)


def test_disk_util_from_two_diskstats_readings() -> None:
    disks = disk_util(
        _read(VM / "proc/diskstats"), _read(VM / "after/proc/diskstats"), 2.0, {"vda", "loop0"}
    )
    # vda: io_ticks 7072 -> 7204 ms; 603 writes in 230 ms; 16 reads in 2 ms.
    assert [(d.device, d.util_pct, d.r_await, d.w_await) for d in disks] == [
        ("vda", 6.6, 0.12, 0.38)
    ]


def test_diskstats_keeps_partitions_unless_told_the_whole_disks() -> None:
    line = "259 0 nvme0n1 {r} 0 0 {rms} {w} 0 0 {wms} 0 {io} 0 0 0 0 0 0 0\n"
    part = "259 1 nvme0n1p1 {r} 0 0 {rms} {w} 0 0 {wms} 0 {io} 0 0 0 0 0 0 0\n"
    before = line.format(r=0, rms=0, w=0, wms=0, io=0) + part.format(r=0, rms=0, w=0, wms=0, io=0)
    after = line.format(r=10, rms=50, w=0, wms=0, io=1900) + part.format(
        r=10, rms=50, w=0, wms=0, io=1900
    )
    assert set(parse_diskstats(after)) == {"nvme0n1", "nvme0n1p1"}
    disks = disk_util(before, after, 2.0)
    assert [(d.device, d.util_pct, d.r_await, d.w_await) for d in disks] == [
        ("nvme0n1", 95.0, 5.0, None),
        ("nvme0n1p1", 95.0, 5.0, None),
    ]
    assert [d.device for d in disk_util(before, after, 2.0, {"nvme0n1"})] == ["nvme0n1"]


def test_net_util_against_the_line_rate() -> None:
    found = net_util(NET_BEFORE, NET_AFTER, 2.0, {"eth0": 10_000, "ib0": -1})
    assert [(n.iface, n.rx_kBps, n.tx_kBps, n.util_pct) for n in found] == [
        ("eth0", 610351.56, 1000.0, 50.0),
        ("ib0", 1.0, 0.0, None),
    ]


def test_host_reader_over_a_captured_tree() -> None:
    reader = HostReader(VM)
    cpu = reader.cpu()
    assert (cpu.numa_nodes, cpu.numa_node_cpus) == (1, {"node0": "0-1"})
    assert {"vda", "loop0", "zram0"} <= (reader.block_devices() or set())
    assert reader.link_speeds() == {"eth0": -1}
    counters = reader.counters()
    assert counters.stat is not None and counters.stat.startswith("cpu ")
    info = host_info(
        cpu,
        counters,
        Counters(
            stat=_read(VM / "after/proc/stat"),
            diskstats=_read(VM / "after/proc/diskstats"),
            netdev=_read(VM / "after/proc/net/dev"),
        ),
        2.0,
        disks=reader.block_devices(),
        speeds_mbps=reader.link_speeds(),
    )
    assert [d.device for d in info.disks] == ["vda"]  # loop and zram left out
    assert [n.iface for n in info.net] == ["eth0", "ifb0", "ifb1"]  # no loopback
    assert info.net[0].util_pct is None  # a virtual NIC without a speed


def test_host_reader_without_proc_or_sys(tmp_path: Path) -> None:
    reader = HostReader(tmp_path)
    assert reader.cpu().logical_cpus is None
    assert reader.counters() == Counters(stat=None, diskstats=None, netdev=None)
    assert reader.block_devices() is None
    assert reader.link_speeds() == {}
    info = host_info(reader.cpu(), reader.counters(), reader.counters(), 5.0)
    assert (info.cpu_util.mean_busy_pct, info.disks, info.net) == (None, [], [])


@pytest.mark.parametrize("elapsed", [0.0, -1.0])
def test_no_elapsed_time_measures_nothing(elapsed: float) -> None:
    assert net_util(NET_BEFORE, NET_AFTER, elapsed, {}) == []
    assert disk_util(_read(VM / "proc/diskstats"), _read(VM / "proc/diskstats"), elapsed) == []
