"""The host side of ``gpuadvisor probe``: CPU, disks and network from /proc and /sys.

Each measurement is a pure function over the text the kernel exposes, and
:class:`HostReader` is the thin shell that reads the files. Utilisations are deltas of
kernel counters between two readings (the start and the end of the probe window), the
way ``mpstat``, ``iostat`` and ``sar`` compute theirs, and are stored where those tools'
values go in host/v1 so rules read them the same:

- CPU busy % per core and overall = 100 - %idle (``mpstat``'s definition: time in
  iowait counts as busy), iowait % beside it (/proc/stat);
- disk %util = share of wall time the device had I/O in flight (/proc/diskstats
  io_ticks, ``iostat -x`` %util), r_await / w_await = ms per completed request;
- network kB/s (kB = 1024 bytes, as sysstat) per interface (/proc/net/dev), and %ifutil
  = the busier direction against the line rate in /sys/class/net/IFACE/speed (``sar -n
  DEV``); null when the interface reports no speed (virtual, down).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor.host.schema import CoreUtil, CpuInfo, CpuUtil, Disk, HostInfo, NetIface
from gpuadvisor.nvidia.values import cpu_list

_KEY = re.compile(r"^(?P<key>[^:]+?)\s*:\s*(?P<value>.*)$")
#: Block devices that are never storage a dataset is read from.
_PSEUDO_DISKS = ("loop", "ram", "zram", "fd")


@dataclass(frozen=True)
class CpuTimes:
    """One /proc/stat ``cpu`` line, in clock ticks."""

    idle: int
    iowait: int
    total: int


@dataclass(frozen=True)
class DiskCounters:
    """One /proc/diskstats line (fields as in Documentation/admin-guide/iostats.rst)."""

    reads: int
    read_ms: int
    writes: int
    write_ms: int
    io_ticks_ms: int


@dataclass(frozen=True)
class Counters:
    """The kernel's cumulative counters at one instant; None where a file was unreadable."""

    stat: str | None
    diskstats: str | None
    netdev: str | None


# --- pure parsers -------------------------------------------------------------------


def parse_cpuinfo(text: str) -> CpuInfo:
    """Model name, logical CPUs, sockets (distinct ``physical id``), cores per socket
    (``cpu cores``) and threads per core (``siblings`` / ``cpu cores``) from
    /proc/cpuinfo. Fields a kernel does not print (Arm has no ``physical id``) stay null."""
    processors = 0
    sockets: set[str] = set()
    first: dict[str, str] = {}
    for line in text.splitlines():
        match = _KEY.match(line.strip())
        if not match:
            continue
        key, value = match.group("key").strip(), match.group("value").strip()
        if key == "processor":
            processors += 1
        elif key == "physical id":
            sockets.add(value)
        first.setdefault(key, value)
    cores = _int(first.get("cpu cores"))
    siblings = _int(first.get("siblings"))
    threads = siblings // cores if cores and siblings and siblings % cores == 0 else None
    return CpuInfo(
        model_name=first.get("model name") or None,
        logical_cpus=processors or None,
        sockets=len(sockets) or None,
        cores_per_socket=cores or None,
        threads_per_core=threads or None,
    )


def parse_node_cpulists(cpulists: dict[int, str]) -> dict[str, str]:
    """``{0: "0-31,64-95\\n"}`` (/sys/devices/system/node/nodeN/cpulist) -> the
    ``{"node0": "0-31,64-95"}`` lscpu gives; nodes without CPUs (memory-only, a GPU's own
    memory on coherent systems) are left out."""
    return {
        f"node{node}": text.strip()
        for node, text in sorted(cpulists.items())
        if text.strip() and cpu_list(text.strip())
    }


def parse_proc_stat(text: str) -> dict[str, CpuTimes]:
    """``cpu`` (all) and ``cpuN`` lines of /proc/stat. Total is user + nice + system +
    idle + iowait + irq + softirq + steal; guest time is already inside user and nice."""
    found: dict[str, CpuTimes] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu") or len(parts) < 6:
            continue
        ticks = [int(p) for p in parts[1:9] if p.isdigit()]
        if len(ticks) < 5:
            continue
        found[parts[0]] = CpuTimes(idle=ticks[3], iowait=ticks[4], total=sum(ticks))
    return found


def cpu_util(before: str, after: str) -> CpuUtil:
    """Busy and iowait % per core and overall between two /proc/stat readings."""
    start, end = parse_proc_stat(before), parse_proc_stat(after)
    overall = _shares(start.get("cpu"), end.get("cpu"))
    cores: list[CoreUtil] = []
    for name, last in end.items():
        shares = _shares(start.get(name), last)
        if name == "cpu" or shares is None or not name[3:].isdigit():
            continue
        cores.append(CoreUtil(cpu=int(name[3:]), busy_pct=shares[0], iowait_pct=shares[1]))
    return CpuUtil(
        mean_busy_pct=overall[0] if overall else None,
        iowait_pct=overall[1] if overall else None,
        per_core=sorted(cores, key=lambda core: core.cpu),
    )


def _shares(start: CpuTimes | None, end: CpuTimes | None) -> tuple[float, float] | None:
    if start is None or end is None or end.total <= start.total:
        return None
    elapsed = end.total - start.total
    idle = max(0, end.idle - start.idle)
    iowait = max(0, end.iowait - start.iowait)
    return _pct(elapsed - idle, elapsed), _pct(iowait, elapsed)


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """/proc/diskstats: reads completed (field 4), ms reading (7), writes completed (8),
    ms writing (11), ms with I/O in flight (13, io_ticks), by device name."""
    found: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 14 or not all(p.isdigit() for p in parts[3:14]):
            continue
        values = [int(p) for p in parts[3:14]]
        found[parts[2]] = DiskCounters(
            reads=values[0],
            read_ms=values[3],
            writes=values[4],
            write_ms=values[7],
            io_ticks_ms=values[9],
        )
    return found


def disk_util(
    before: str, after: str, elapsed_s: float, devices: set[str] | None = None
) -> list[Disk]:
    """%util, r_await and w_await per device over ``elapsed_s``. ``devices`` keeps whole
    disks (the names in /sys/block); without it partitions are listed too. Loop, RAM and
    zram devices are always left out."""
    start, end = parse_diskstats(before), parse_diskstats(after)
    disks: list[Disk] = []
    for name, last in sorted(end.items()):
        first = start.get(name)
        if first is None or name.startswith(_PSEUDO_DISKS) or elapsed_s <= 0:
            continue
        if devices is not None and name not in devices:
            continue
        reads, writes = last.reads - first.reads, last.writes - first.writes
        busy_ms = max(0, last.io_ticks_ms - first.io_ticks_ms)
        disks.append(
            Disk(
                device=name,
                util_pct=min(100.0, _pct(busy_ms, elapsed_s * 1000)),
                r_await=round((last.read_ms - first.read_ms) / reads, 2) if reads > 0 else None,
                w_await=round((last.write_ms - first.write_ms) / writes, 2) if writes > 0 else None,
            )
        )
    return disks


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """/proc/net/dev: (received bytes, transmitted bytes) by interface."""
    found: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or len(fields) < 9 or not (fields[0].isdigit() and fields[8].isdigit()):
            continue
        found[name.strip()] = (int(fields[0]), int(fields[8]))
    return found


def net_util(
    before: str, after: str, elapsed_s: float, speeds_mbps: dict[str, int]
) -> list[NetIface]:
    """kB/s each way per interface (loopback left out) and %ifutil against the line
    rate (Mb/s from /sys/class/net/IFACE/speed; missing or <= 0 means unknown)."""
    start, end = parse_net_dev(before), parse_net_dev(after)
    found: list[NetIface] = []
    for name, (rx, tx) in sorted(end.items()):
        if name == "lo" or name not in start or elapsed_s <= 0:
            continue
        rx_kbps = max(0, rx - start[name][0]) / 1024 / elapsed_s
        tx_kbps = max(0, tx - start[name][1]) / 1024 / elapsed_s
        speed = speeds_mbps.get(name, 0)
        busier_bits = max(rx_kbps, tx_kbps) * 1024 * 8
        util = min(100.0, _pct(busier_bits, speed * 1_000_000)) if speed > 0 else None
        found.append(
            NetIface(
                iface=name, rx_kBps=round(rx_kbps, 2), tx_kBps=round(tx_kbps, 2), util_pct=util
            )
        )
    return found


def host_info(
    cpu: CpuInfo,
    before: Counters,
    after: Counters,
    elapsed_s: float,
    *,
    disks: set[str] | None = None,
    speeds_mbps: dict[str, int] | None = None,
) -> HostInfo:
    """Everything the host side measured over one window."""
    return HostInfo(
        cpu=cpu,
        cpu_util=cpu_util(before.stat, after.stat) if before.stat and after.stat else CpuUtil(),
        disks=(
            disk_util(before.diskstats, after.diskstats, elapsed_s, disks)
            if before.diskstats and after.diskstats
            else []
        ),
        net=(
            net_util(before.netdev, after.netdev, elapsed_s, speeds_mbps or {})
            if before.netdev and after.netdev
            else []
        ),
    )


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 2) if whole > 0 else 0.0


# --- the thin reader ------------------------------------------------------------------


class HostReader:
    """Reads the files under ``root`` (``/`` on a live host; a captured tree in tests)."""

    def __init__(self, root: Path = Path("/")) -> None:
        self.root = root

    def _text(self, relative: str) -> str | None:
        try:
            return (self.root / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def cpu(self) -> CpuInfo:
        """/proc/cpuinfo and /sys/devices/system/node/node*/cpulist."""
        info = parse_cpuinfo(self._text("proc/cpuinfo") or "")
        cpulists: dict[int, str] = {}
        for path in (self.root / "sys/devices/system/node").glob("node[0-9]*/cpulist"):
            text = self._text(str(path.relative_to(self.root)))
            if text is not None and path.parent.name[4:].isdigit():
                cpulists[int(path.parent.name[4:])] = text
        nodes = parse_node_cpulists(cpulists)
        return info.model_copy(update={"numa_nodes": len(nodes) or None, "numa_node_cpus": nodes})

    def counters(self) -> Counters:
        return Counters(
            stat=self._text("proc/stat"),
            diskstats=self._text("proc/diskstats"),
            netdev=self._text("proc/net/dev"),
        )

    def block_devices(self) -> set[str] | None:
        """Whole disks: the entries of /sys/block."""
        folder = self.root / "sys/block"
        return {p.name for p in folder.iterdir()} if folder.is_dir() else None

    def link_speeds(self) -> dict[str, int]:
        """Mb/s per interface; reading fails (EINVAL) for interfaces without a speed."""
        speeds: dict[str, int] = {}
        for path in sorted((self.root / "sys/class/net").glob("*/speed")):
            text = (self._text(str(path.relative_to(self.root))) or "").strip()
            if text.lstrip("-").isdigit():
                speeds[path.parent.name] = int(text)
        return speeds
