"""``gpuadvisor probe``: measure this host live, through NVML, into a host/v1 snapshot.

The only module that imports ``pynvml`` (nvidia-ml-py), and only when a probe runs, so
everything else works on machines without an NVIDIA driver. Every NVML call goes
through the gateway in :mod:`gpuadvisor.probe.nvml`; what is read per GPU is listed in
:mod:`gpuadvisor.probe.gpu`, pairs and Xid events in :mod:`gpuadvisor.probe.links`, the
host side (CPU, disks, network) in :mod:`gpuadvisor.probe.host`.

The window: samples at 0, I, 2I, ... up to S seconds (``--seconds S --interval I``);
when sampling falls behind, missed slots are skipped rather than bunched. Ctrl-C ends
the window early; what was collected is still summarised and returned. Time, sleep and
the wall clock are injected, so tests run a 30-second probe in no time.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from typing import Any, Final

from gpuadvisor.errors import InputError
from gpuadvisor.host.schema import Event, HostSnapshot, Topology
from gpuadvisor.probe.gpu import GpuProbe
from gpuadvisor.probe.host import HostReader, host_info
from gpuadvisor.probe.links import XidWatch, read_pairs
from gpuadvisor.probe.nvml import GpuLost, NotAvailable, Nvml, NvmlUnusable

DEFAULT_SECONDS: Final = 30.0
DEFAULT_INTERVAL_S: Final = 1.0
MIN_SECONDS: Final = 1.0
MAX_SECONDS: Final = 24 * 3600.0
MIN_INTERVAL_S: Final = 0.1
MAX_INTERVAL_S: Final = 60.0
#: Provenance label of what the probe read from NVML itself rather than from a file.
NVML_SOURCE: Final = "nvml"

#: The route without NVML. ``nvidia-smi -q`` text is read by gpuadvisor's own parser
#: alone (no optional package, not even defusedxml), so the capture it names can be
#: read by any installation.
OFFLINE_HINT: Final = (
    "without NVML, capture on the GPU host `nvidia-smi -q > smi.txt` "
    "(with `nvidia-smi topo -m > topo.txt` and `dmesg -T > dmesg.txt`) "
    "and run `gpuadvisor import smi.txt topo.txt dmesg.txt -o host.json`"
)
#: What to do when a dependency that gpuadvisor declares is missing from the installation.
REINSTALL_HINT: Final = "reinstall gpuadvisor (`pip install --force-reinstall gpuadvisor`)"
_UNUSABLE: Final = {
    "LibraryNotFound": "the NVML library (libnvidia-ml.so.1) was not found: "
    "no NVIDIA driver is installed here",
    "DriverNotLoaded": "the NVIDIA kernel driver is not loaded",
    "LibRmVersionMismatch": "the NVML library and the loaded NVIDIA driver differ in version "
    "(the driver was updated without a reboot?)",
}


@dataclass(frozen=True)
class Clock:
    """Where the probe gets time: a monotonic clock, sleep, and the wall clock (for
    event times). Tests pass a fake one."""

    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    wall: Callable[[], float] = time.time

    def iso_now(self) -> str:
        return datetime.fromtimestamp(self.wall(), tz=timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class ProbeResult:
    snapshot: HostSnapshot
    samples: int
    elapsed_s: float
    interrupted: bool


Progress = Callable[[float, float], None]


def check_window(seconds: float, interval_s: float) -> None:
    """InputError unless MIN_SECONDS <= seconds <= MAX_SECONDS and MIN_INTERVAL_S <=
    interval <= min(MAX_INTERVAL_S, seconds)."""
    if not (math.isfinite(seconds) and MIN_SECONDS <= seconds <= MAX_SECONDS):
        raise InputError(
            f"must be between {MIN_SECONDS:g} and {MAX_SECONDS:g} seconds, got {seconds:g}",
            field="--seconds",
        )
    top = min(MAX_INTERVAL_S, seconds)
    if not (math.isfinite(interval_s) and MIN_INTERVAL_S <= interval_s <= top):
        raise InputError(
            f"must be between {MIN_INTERVAL_S:g} and {top:g} seconds "
            f"(at most --seconds), got {interval_s:g}",
            field="--interval",
        )


def load_nvml() -> Any:
    """The ``pynvml`` module, imported now; InputError with the offline route when the
    package is not installed."""
    try:
        import pynvml
    except ImportError:
        raise InputError(
            "the NVML bindings (Python module pynvml, package nvidia-ml-py, a dependency of "
            "gpuadvisor) are missing from this installation",
            hint=f"pip install nvidia-ml-py, or {REINSTALL_HINT}; or, {OFFLINE_HINT}",
        ) from None
    return pynvml


def _unusable(exc: NvmlUnusable) -> InputError:
    message = _UNUSABLE.get(exc.error, f"NVML cannot start: {exc.reason}")
    return InputError(
        f"cannot probe: {message}",
        hint=f"run `gpuadvisor probe` on the GPU host, with its NVIDIA driver loaded; "
        f"or, {OFFLINE_HINT}",
    )


def run_probe(
    seconds: float = DEFAULT_SECONDS,
    interval_s: float = DEFAULT_INTERVAL_S,
    *,
    nvml_module: Any = None,
    clock: Clock | None = None,
    host: HostReader | None = None,
    progress: Progress | None = None,
) -> ProbeResult:
    """Sample every GPU and the host for ``seconds``; the host/v1 snapshot of it all.

    ``nvml_module`` is ``pynvml`` unless a stand-in is given; ``progress(elapsed, total)``
    is called after each sample.
    """
    check_window(seconds, interval_s)
    nvml = Nvml(load_nvml() if nvml_module is None else nvml_module)
    try:
        started = nvml.call("nvmlInit")
    except NvmlUnusable as exc:
        raise _unusable(exc) from None
    if isinstance(started, NotAvailable):
        raise InputError(f"cannot probe: NVML did not start: {started}", hint=OFFLINE_HINT)
    try:
        session = _Session(nvml, clock or Clock(), host or HostReader())
        return session.run(seconds, interval_s, progress)
    except NvmlUnusable as exc:
        raise _unusable(exc) from None
    finally:
        with contextlib.suppress(GpuLost, NvmlUnusable):
            nvml.call("nvmlShutdown")


@dataclass
class _Session:
    nvml: Nvml
    clock: Clock
    host: HostReader
    gpus: list[GpuProbe] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def run(self, seconds: float, interval_s: float, progress: Progress | None) -> ProbeResult:
        driver = self.nvml.call("nvmlSystemGetDriverVersion")
        cuda = self.nvml.call("nvmlSystemGetCudaDriverVersion")
        self._open_gpus()
        for gpu in self.gpus:
            if gpu.lost is None:
                self._guard(gpu, gpu.read_static, 0.0)
        pairs, p2p, pair_notes = read_pairs(self.nvml, self.gpus)
        watch = XidWatch(self.nvml, self.gpus)
        cpu = self.host.cpu()
        before = self.host.counters()
        for gpu in self.gpus:
            if gpu.lost is None:
                self._guard(gpu, partial(gpu.read_replays_at_start, self.clock.monotonic()), 0.0)
        taken, window, interrupted = self._window(seconds, interval_s, watch, progress)
        after = self.host.counters()
        self.events += watch.poll(self.clock.iso_now)
        watch.close()
        for gpu in self.gpus:
            self._guard(gpu, partial(gpu.read_final, self.clock.monotonic()), window)
        summary = f"nvml probe: {taken} sample(s) every {interval_s:g} s over {window:.1f} s"
        if interrupted:
            summary += f", interrupted (asked for {seconds:g} s)"
        if before.stat is None or after.stat is None:
            self.notes.append("host probe: /proc/stat not readable; CPU load not measured")
        models = [gpu.gpu() for gpu in self.gpus]
        snapshot = HostSnapshot(
            driver_version=None if isinstance(driver, NotAvailable) else str(driver),
            cuda_version=None if isinstance(cuda, NotAvailable) else _cuda(cuda),
            gpus=models,
            topology=Topology(
                pairs=pairs,
                p2p=p2p,
                cpu_affinity={f"GPU{m.index}": m.cpu_affinity for m in models if m.cpu_affinity},
                numa_affinity={
                    f"GPU{m.index}": str(m.numa_node) for m in models if m.numa_node is not None
                },
            ),
            events=self.events,
            host=host_info(
                cpu,
                before,
                after,
                window,
                disks=self.host.block_devices(),
                speeds_mbps=self.host.link_speeds(),
            ),
            notes=[summary, *self.notes, *pair_notes, *watch.notes],
            # Xid events were watched on every GPU: none seen means none happened.
            provenance={"events": [NVML_SOURCE]} if watch.complete else {},
        )
        return ProbeResult(snapshot, taken, round(window, 3), interrupted)

    def _window(
        self, seconds: float, interval_s: float, watch: XidWatch, progress: Progress | None
    ) -> tuple[int, float, bool]:
        """Sample every live GPU at 0, I, 2I, ... <= S seconds: (samples taken, seconds
        the window lasted, whether Ctrl-C ended it)."""
        start: float | None = None
        taken, interrupted = 0, False
        try:
            while True:
                now = self.clock.monotonic()
                start = now if start is None else start
                elapsed = now - start
                for gpu in self.gpus:
                    if gpu.lost is None:
                        self._guard(gpu, partial(gpu.sample, elapsed), elapsed)
                self.events += watch.poll(self.clock.iso_now)
                taken += 1
                if progress is not None:
                    progress(min(elapsed, seconds), seconds)
                slot = math.floor((self.clock.monotonic() - start + 1e-6) / interval_s) + 1
                if slot * interval_s > seconds + 1e-6:
                    break
                self.clock.sleep(max(0.0, start + slot * interval_s - self.clock.monotonic()))
        except KeyboardInterrupt:
            interrupted = True
        window = 0.0 if start is None else self.clock.monotonic() - start
        return taken, window, interrupted

    def _open_gpus(self) -> None:
        count = self.nvml.call("nvmlDeviceGetCount")
        if isinstance(count, NotAvailable):
            raise InputError(f"cannot probe: NVML cannot count the GPUs: {count}")
        if count == 0:
            raise InputError("cannot probe: NVML sees no GPU on this host", hint=OFFLINE_HINT)
        for index in range(int(count)):
            gpu = GpuProbe(self.nvml, index, None)
            try:
                gpu.handle = self.nvml.call("nvmlDeviceGetHandleByIndex", index)
            except GpuLost as lost:
                self._lost(gpu, lost, 0.0)
            if isinstance(gpu.handle, NotAvailable):
                self.notes.append(f"nvml probe: GPU{index} skipped: {gpu.handle}")
                continue
            self.gpus.append(gpu)

    def _guard(self, gpu: GpuProbe, action: Callable[[], None], t_s: float) -> None:
        """Run one GPU's reads; a lost GPU becomes a health event and is read no more."""
        try:
            action()
        except GpuLost as lost:
            self._lost(gpu, lost, t_s)

    def _lost(self, gpu: GpuProbe, lost: GpuLost, t_s: float) -> None:
        gpu.lost = f"GPU lost at {t_s:.1f} s of the probe ({lost})"
        self.events.append(
            Event(
                kind="gpu-lost",
                pci_bus_id=gpu.bus_id,
                time=self.clock.iso_now(),
                text=f"NVML: {gpu.label} stopped answering at {t_s:.1f} s: {lost}",
                source="nvml probe",
            )
        )


def _cuda(version: Any) -> str:
    """nvmlSystemGetCudaDriverVersion 12040 -> "12.4"."""
    return f"{int(version) // 1000}.{int(version) % 1000 // 10}"
