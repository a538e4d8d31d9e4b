"""A real Prometheus for the fleet tests and benchmark, filled with recorded series.

The series are generated from two dcgm-exporter scrapes, a real one
(``../shared/fixtures/real/dcgm-prom/2x-tesla-t4_...prom``: its labels, metric names,
driver, power limit, memory and slowdown temperature) and the repository's two-GPU RTX
A5000 scrape (``tests/fixtures/evidence/two-gpu-dcgm.prom``: with ``pci_bus_id``), plus
node-exporter series (CPU, iowait, disk, network). Each host is of a kind: healthy,
idle, CPU-bound, storage-bound, throttling, and failing (Xid 79, uncorrectable ECC, a
failed row remap, a narrowed PCIe link, a link whose replay counter grows 40 a minute);
one host has no node-exporter.

They are written as OpenMetrics and turned into TSDB blocks with ``promtool tsdb
create-blocks-from openmetrics``; Prometheus (Debian's ``prometheus``) is then started on
127.0.0.1 on a free port over that data folder, with retention long enough to keep the
blocks, and stopped after. Nothing is mocked and nothing leaves loopback.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
REAL_T4 = "dcgm-prom/2x-tesla-t4_460.106.00+470.182.03_datadog-serve.prom"
A5000 = ROOT / "tests" / "fixtures" / "evidence" / "two-gpu-dcgm.prom"


def real_fixtures() -> Path | None:
    for base in ROOT.parents:
        candidate = base / "shared" / "fixtures" / "real"
        if candidate.is_dir():
            return candidate
    return None


@dataclass(frozen=True)
class Template:
    """One GPU model as a scrape shows it: its series' labels and its fixed values."""

    model: str
    labels: dict[str, str]
    fb_total_mib: int
    power_limit_w: float
    slowdown_c: float
    max_sm_mhz: float
    pcie_gen: int
    pcie_width: int


def _first_labels(path: Path, metric: str) -> dict[str, str]:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            if sample.name == metric:
                return dict(sample.labels)
    raise AssertionError(f"{path} has no {metric}")


def templates() -> dict[str, Template]:
    """The Tesla T4 of the real scrape (its labels, driver, 70 W limit, 15,109 MiB,
    93 °C slowdown) and the repository's RTX A5000 (with pci_bus_id)."""
    found: dict[str, Template] = {}
    real = real_fixtures()
    if real is not None:
        labels = _first_labels(real / REAL_T4, "DCGM_FI_DEV_SM_CLOCK")
        found["t4"] = Template("Tesla T4", labels, 15109, 70.0, 93.0, 1590.0, 3, 16)
    labels = _first_labels(A5000, "DCGM_FI_DEV_GPU_UTIL")
    found["a5000"] = Template("NVIDIA RTX A5000", labels, 24564, 230.0, 95.0, 2100.0, 4, 16)
    return found


KINDS = (
    "healthy",
    "idle",
    "cpu-bound",
    "io-bound",
    "throttling",
    "xid",
    "ecc",
    "remap",
    "pcie",
    "replays",
    "no-node",
)


@dataclass(frozen=True)
class Host:
    name: str
    kind: str
    template: str
    gpus: int
    labels: dict[str, str] = field(default_factory=dict)


def _gpu_series(
    kind: str, t: Template, gpu: int, n: int, step_s: int = 60
) -> dict[str, list[float]]:
    """metric -> one value per sample (``step_s`` apart), for a GPU of this kind."""

    def const(value: float) -> list[float]:
        return [value] * n

    def wave(mean: float, amp: float) -> list[float]:
        return [round(mean + amp * math.sin(i / 3.0 + gpu), 2) for i in range(n)]

    busy = kind not in ("idle",)
    util = {"idle": const(0.0), "cpu-bound": wave(35, 5), "io-bound": wave(40, 5)}.get(
        kind, wave(88, 6)
    )
    fb_used = const(0.0) if not busy else const(round(t.fb_total_mib * 0.7))
    sm = const(300.0) if not busy else const(t.max_sm_mhz)
    temp = const(31.0) if not busy else wave(62, 3)
    reasons = const(1.0) if not busy else const(0.0)
    if kind == "throttling":
        temp = wave(89, 1.5)
        reasons = [64.0 if i % 2 else 0.0 for i in range(n)]
        sm = [t.max_sm_mhz * (0.7 if i % 2 else 1.0) for i in range(n)]
    power = const(9.0) if not busy else wave(t.power_limit_w * 0.8, 3)
    series = {
        "DCGM_FI_DEV_GPU_UTIL": util,
        "DCGM_FI_DEV_MEM_COPY_UTIL": [round(u / 3, 2) for u in util],
        "DCGM_FI_DEV_ENC_UTIL": const(0.0),
        "DCGM_FI_DEV_DEC_UTIL": const(0.0),
        "DCGM_FI_DEV_SM_CLOCK": sm,
        "DCGM_FI_DEV_MEM_CLOCK": const(5000.0 if busy else 405.0),
        "DCGM_FI_DEV_GPU_TEMP": temp,
        "DCGM_FI_DEV_SLOWDOWN_TEMP": const(t.slowdown_c),
        "DCGM_FI_DEV_POWER_USAGE": power,
        "DCGM_FI_DEV_POWER_MGMT_LIMIT": const(t.power_limit_w),
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": [1000.0 * i for i in range(n)],
        "DCGM_FI_DEV_FB_TOTAL": const(float(t.fb_total_mib)),
        "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_FREE": [t.fb_total_mib - u for u in fb_used],
        "DCGM_FI_DEV_PCIE_LINK_GEN": const(float(t.pcie_gen if busy else 1)),
        "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": const(float(t.pcie_gen)),
        "DCGM_FI_DEV_PCIE_LINK_WIDTH": const(float(t.pcie_width)),
        "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": const(float(t.pcie_width)),
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": const(0.0),
        "DCGM_FI_DEV_XID_ERRORS": const(0.0),
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": const(0.0),
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": const(0.0),
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": const(0.0),
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": const(0.0),
        "DCGM_FI_DEV_ROW_REMAP_FAILURE": const(0.0),
        "DCGM_FI_DEV_PSTATE": const(0.0 if busy else 8.0),
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": reasons,
    }
    if gpu == 0 and kind == "xid":
        series["DCGM_FI_DEV_XID_ERRORS"] = [79.0 if n // 3 <= i < n // 2 else 0.0 for i in range(n)]
    if gpu == 0 and kind == "ecc":
        series["DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"] = [0.0 if i < n // 2 else 2.0 for i in range(n)]
    if gpu == 0 and kind == "remap":
        series["DCGM_FI_DEV_ROW_REMAP_FAILURE"] = [0.0 if i < n // 2 else 1.0 for i in range(n)]
        series["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"] = const(3.0)
    if gpu == 0 and kind == "pcie":
        series["DCGM_FI_DEV_PCIE_LINK_WIDTH"] = const(float(t.pcie_width // 2))
        # Replays since the last reset, long ago, and none in the window: not a rate.
        series["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] = const(67.0)
    if gpu == 0 and kind == "replays":
        # A marginal link at full width: 40 replays a minute, whatever the sample step.
        series["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] = [
            float(1000 + 40 * i * step_s // 60) for i in range(n)
        ]
    return series


def _node_rates(kind: str, cpus: int) -> dict[str, object]:
    """Per-second rates of node-exporter's counters for a host of this kind."""
    busy = {"idle": 0.05, "cpu-bound": 0.35}.get(kind, 0.45)
    iowait = 0.25 if kind == "io-bound" else 0.01
    cores = [busy] * cpus
    if kind == "cpu-bound":
        cores[0] = 1.0  # the loader's core, pinned
    return {
        "cores": cores,
        "iowait": iowait,
        "disk_busy": 0.96 if kind == "io-bound" else 0.2,
        "net": 1.25e8 * (0.1 if kind != "idle" else 0.001),
    }


def write_openmetrics(
    out: TextIO, hosts: list[Host], end: int, samples: int, step_s: int, cpus: int = 4
) -> int:
    """Every host's series, ``samples`` of them ``step_s`` apart ending at ``end``
    (unix seconds); returns the number of sample lines."""
    kinds = templates()
    stamps = [end - (samples - 1 - i) * step_s for i in range(samples)]
    per_gpu: dict[str, list[tuple[str, list[float]]]] = {}
    for host in hosts:
        t = kinds[host.template]
        for gpu in range(host.gpus):
            labels = dict(t.labels)
            labels.update(host.labels)
            labels.update(
                gpu=str(gpu),
                device=f"nvidia{gpu}",
                UUID=_uuid(host.name, gpu),
                Hostname=host.name,
                instance=f"{host.name}:9400",
                job="dcgm-exporter",
            )
            labels.pop("DCGM_FI_PROCESS_NAME", None)
            if "pci_bus_id" in labels:
                labels["pci_bus_id"] = f"0000:{0x17 + 0x10 * gpu:02X}:00.0"
            text = _labels(labels)
            for metric, values in _gpu_series(host.kind, t, gpu, samples, step_s).items():
                per_gpu.setdefault(metric, []).append((text, values))
    lines = 0
    for metric, series in per_gpu.items():
        out.write(f"# TYPE {metric} gauge\n")
        for text, values in series:
            for stamp, value in zip(stamps, values, strict=False):
                out.write(f"{metric}{{{text}}} {value:g} {stamp}\n")
                lines += 1
    lines += _write_node(out, [h for h in hosts if h.kind != "no-node"], stamps, step_s, cpus)
    out.write("# EOF\n")
    return lines


def _write_node(out: TextIO, hosts: list[Host], stamps: list[int], step_s: int, cpus: int) -> int:
    families: dict[str, list[tuple[str, list[float]]]] = {}
    elapsed = [(s - stamps[0]) + 86400 for s in stamps]  # counters that started a day ago
    for host in hosts:
        rates = _node_rates(host.kind, cpus)
        base = {**host.labels, "instance": f"{host.name}:9100", "job": "node"}
        for cpu, busy in enumerate(rates["cores"]):  # type: ignore[arg-type]
            iowait = float(rates["iowait"])  # type: ignore[arg-type]
            modes = {"idle": max(0.0, 1 - busy - iowait), "iowait": iowait, "user": busy}
            for mode, rate in modes.items():
                families.setdefault("node_cpu_seconds", []).append(
                    (_labels({**base, "cpu": str(cpu), "mode": mode}), [rate * e for e in elapsed])
                )
        disk = _labels({**base, "device": "nvme0n1"})
        busy_disk = float(rates["disk_busy"])  # type: ignore[arg-type]
        for family, rate in (
            ("node_disk_io_time_seconds", busy_disk),
            ("node_disk_read_time_seconds", busy_disk * 0.8),
            ("node_disk_reads_completed", 2000.0),
            ("node_disk_write_time_seconds", busy_disk * 0.1),
            ("node_disk_writes_completed", 200.0),
        ):
            families.setdefault(family, []).append((disk, [rate * e for e in elapsed]))
        nic = _labels({**base, "device": "eth0"})
        net = float(rates["net"])  # type: ignore[arg-type]
        families.setdefault("node_network_receive_bytes", []).append(
            (nic, [net * e for e in elapsed])
        )
        families.setdefault("node_network_transmit_bytes", []).append(
            (nic, [net * 0.2 * e for e in elapsed])
        )
        families.setdefault("node_network_speed_bytes", []).append((nic, [1.25e9] * len(stamps)))
    lines = 0
    for family, series in families.items():
        counter = family != "node_network_speed_bytes"
        name = f"{family}_total" if counter else family
        out.write(f"# TYPE {family} {'counter' if counter else 'gauge'}\n")
        for text, values in series:
            for stamp, value in zip(stamps, values, strict=False):
                out.write(f"{name}{{{text}}} {value:.6g} {stamp}\n")
                lines += 1
    return lines


def _uuid(host: str, gpu: int) -> str:
    digest = hashlib.sha256(f"{host}/{gpu}".encode()).hexdigest()
    return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _labels(labels: dict[str, str]) -> str:
    def quote(value: str) -> str:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return ",".join(f'{k}="{quote(v)}"' for k, v in labels.items())


# -- Prometheus -----------------------------------------------------------------------


def tools_missing() -> str | None:
    missing = [tool for tool in ("prometheus", "promtool") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not installed (Debian: apt-get install prometheus)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def create_blocks(openmetrics: Path, data: Path) -> None:
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(data)],
        check=True,
        capture_output=True,
        timeout=1800,
    )


@dataclass
class Running:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


def start(data: Path, folder: Path, *, timeout_s: float = 120.0) -> Running:
    """Prometheus on 127.0.0.1 over ``data``, scraping nothing, until :func:`stop`."""
    config = folder / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    port = free_port()
    log = folder / "prometheus.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
                # The blocks hold recorded hours; keep them whatever their age.
                "--storage.tsdb.retention.time=100y",
                "--query.lookback-delta=10m",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:
                if answer.status == 200:
                    return Running(url, process, log)
        except OSError:
            time.sleep(0.2)
    stop(Running(url, process, log))
    raise RuntimeError(f"prometheus did not become ready: {log.read_text()[-2000:]}")


def stop(running: Running) -> None:
    running.process.terminate()
    try:
        running.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        running.process.kill()
        running.process.wait(timeout=30)


def fleet_hosts() -> Iterator[Host]:
    """The test fleet: every kind on T4 hosts (cluster a), two A5000 hosts (cluster b)."""
    for kind in KINDS:
        yield Host(f"t4-{kind}", kind, "t4", 2, {"cluster": "a"})
    yield Host("t4-idle-2", "idle", "t4", 2, {"cluster": "a"})
    yield Host("a5000-healthy", "healthy", "a5000", 2, {"cluster": "b"})
    yield Host("a5000-idle", "idle", "a5000", 2, {"cluster": "b"})
    yield Host("gpu-elsewhere", "healthy", "a5000", 1, {"cluster": "z"})


# -- the test fleet, as the tests use it ------------------------------------------------

#: Minutes of recorded data (one sample a minute) and the window the tests judge.
MINUTES = 70
WINDOW = "1h"

T4_PROFILE = """\
schema = "gpuadvisor/profile/v1"
[meta]
title = "T4 inference fleet"
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 10
concurrent_jobs = 4
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
gpu_count_max = 4
psu_headroom_w = 1200
[budget]
max_usd = 20000
"""

A5000_PROFILE = """\
schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 18
concurrent_jobs = 4
[platform]
chassis = "workstation"
gpu_count_max = 4
psu_headroom_w = 1600
[budget]
max_usd = 30000
"""

PROFILES = """\
schema = "gpuadvisor/fleet-profiles/v1"
budget_usd = 100000

[[groups]]
name = "inference"
selector = '{cluster="a"}'
profile = "t4.toml"

[[groups]]
name = "training"
selector = '{cluster="b"}'
profile = "a5000.toml"
budget_usd = 40000
"""


@dataclass(frozen=True)
class FleetData:
    url: str
    end: int
    profiles: Path
    folder: Path


def write_profiles(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t4.toml").write_text(T4_PROFILE)
    (folder / "a5000.toml").write_text(A5000_PROFILE)
    path = folder / "fleet.toml"
    path.write_text(PROFILES)
    return path


def running_fleet(folder: Path) -> Iterator[FleetData]:
    """The test fleet in a running Prometheus (a generator: stops it when resumed)."""
    end = int(time.time()) // 60 * 60
    openmetrics = folder / "fleet.om"
    with openmetrics.open("w") as out:
        write_openmetrics(out, list(fleet_hosts()), end, MINUTES, 60)
    data = folder / "data"
    create_blocks(openmetrics, data)
    running = start(data, folder)
    try:
        yield FleetData(running.url, end, write_profiles(folder / "profiles"), folder)
    finally:
        stop(running)
