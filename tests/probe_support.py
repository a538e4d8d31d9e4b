"""Running ``run_probe`` against the NVML stand-in, with fake time and a captured host."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.probe.host import Counters, HostReader
from gpuadvisor.probe.sampler import Clock, ProbeResult, run_probe
from tests.nvml_standin import FakeTime, StandIn, load_scenario

HOST_CAPTURES = Path(__file__).resolve().parent / "fixtures" / "hostprobe"


class CapturedHost(HostReader):
    """A host captured from a 2-CPU VM: its files, with a second set of /proc counters
    (``after/``) read at the end of the window."""

    def __init__(self, name: str = "vm-2cpu") -> None:
        super().__init__(HOST_CAPTURES / name)
        self.reads = 0

    def counters(self) -> Counters:
        root = self.root if self.reads == 0 else self.root / "after"
        self.reads += 1
        return Counters(
            stat=(root / "proc/stat").read_text(encoding="utf-8"),
            diskstats=(root / "proc/diskstats").read_text(encoding="utf-8"),
            netdev=(root / "proc/net/dev").read_text(encoding="utf-8"),
        )


@dataclass
class Run:
    result: ProbeResult
    nvml: StandIn
    time: FakeTime
    progress: list[tuple[float, float]] = field(default_factory=list)


def fake_clock(time: FakeTime) -> Clock:
    return Clock(monotonic=time.monotonic, sleep=time.sleep, wall=time.wall)


def run_scenario(
    scenario: str | dict[str, Any],
    seconds: float = 5,
    interval_s: float = 1,
    *,
    time: FakeTime | None = None,
) -> Run:
    """Probe the named scenario (or a scenario dict) for ``seconds`` of fake time."""
    time = time or FakeTime()
    data = load_scenario(scenario) if isinstance(scenario, str) else scenario
    nvml = StandIn(data, time)
    progress: list[tuple[float, float]] = []
    result = run_probe(
        seconds,
        interval_s,
        nvml_module=nvml,
        clock=fake_clock(time),
        host=CapturedHost(),
        progress=lambda elapsed, total: progress.append((elapsed, total)),
    )
    return Run(result, nvml, time, progress)
