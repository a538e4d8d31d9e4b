"""What one probe sample costs, against running ``nvidia-smi --query-gpu`` once.

    python -m benchmarks.bench_probe [--gpus 1 2 4 8] [--repeat 200] [--real]

The first table drives the probe's own sampling code (``GpuProbe.sample`` for every
GPU) through the pynvml stand-in of the tests, so it measures gpuadvisor's Python
overhead per sample and counts the NVML calls one sample makes. It says nothing about
NVML itself: a real NVML call costs what the driver takes to answer it (from
microseconds for cached values to about 20 ms for nvmlDeviceGetPcieThroughput, which
samples the link), and that is only measurable on real hardware: ``--real`` times the
same sample against this machine's GPUs through the real pynvml.

The last line is the cost of one ``nvidia-smi --query-gpu=...`` run (a new process that
initialises NVML each time) when nvidia-smi is on PATH. This is a benchmark, not a test:
nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuadvisor.probe.gpu import GpuProbe
from gpuadvisor.probe.nvml import Nvml
from tests.nvml_standin import StandIn, load_scenario

QUERY = (
    "index,utilization.gpu,utilization.memory,memory.used,clocks.sm,clocks.mem,"
    "temperature.gpu,power.draw,clocks_event_reasons.active,pcie.link.gen.current,"
    "pcie.link.width.current"
)


def _scenario(gpus: int) -> dict[str, Any]:
    """The consumer-card scenario with ``gpus`` copies of its GPU on distinct buses."""
    scenario = load_scenario("consumer-no-ecc")
    template = scenario["gpus"][0]
    scenario["gpus"] = []
    for index in range(gpus):
        gpu = copy.deepcopy(template)
        gpu["nvmlDeviceGetPciInfo"] = {"busId": f"00000000:{index + 1:02X}:00.0"}
        scenario["gpus"].append(gpu)
    return scenario


def _time_samples(module: Any, count: int, repeat: int) -> tuple[float, float]:
    """(median seconds per sample of all GPUs, NVML calls per sample)."""
    nvml = Nvml(module)
    nvml.call("nvmlInit")
    try:
        gpus = [GpuProbe(nvml, i, nvml.call("nvmlDeviceGetHandleByIndex", i)) for i in range(count)]
        for gpu in gpus:
            gpu.read_static()
            gpu.sample(0.0)  # warm-up: unsupported calls are dropped after the first sample
        before = nvml.calls
        times: list[float] = []
        for n in range(repeat):
            start = time.perf_counter()
            for gpu in gpus:
                gpu.sample(float(n))
            times.append(time.perf_counter() - start)
        return median(times), (nvml.calls - before) / repeat
    finally:
        nvml.call("nvmlShutdown")


def _real(repeat: int) -> str:
    """The same sample through the real pynvml, or why it cannot run here."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            count = pynvml.nvmlDeviceGetCount()
        finally:
            pynvml.nvmlShutdown()
    except (ImportError, OSError) as exc:
        return f"real NVML: not available here ({exc})"
    except Exception as exc:  # pynvml.NVMLError, without importing it at the top
        return f"real NVML: not available here ({type(exc).__name__}: {exc})"
    seconds, calls = _time_samples(pynvml, count, repeat)
    return (
        f"real NVML, {count} GPU(s): {calls:.0f} calls, {seconds * 1000:.2f} ms per sample "
        f"({seconds * 1e6 / calls:.0f} us per call on average)"
    )


def _nvidia_smi(repeat: int) -> str:
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return "nvidia-smi --query-gpu: nvidia-smi is absent (not on PATH), not measured"
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [binary, f"--query-gpu={QUERY}", "--format=csv,noheader"],
            check=False,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return f"nvidia-smi --query-gpu (one run, all GPUs): {median(times) * 1000:.1f} ms median"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--real", action="store_true", help="also time this host's real NVML")
    args = parser.parse_args(argv)

    print("probe sampling through the pynvml stand-in (gpuadvisor's overhead only;")
    print("real NVML adds its own per-call latency, measured on real hardware with --real)")
    print(f"{'gpus':>4}  {'calls/sample':>12}  {'us/sample':>10}  {'us/call':>8}")
    for count in args.gpus:
        seconds, calls = _time_samples(StandIn(_scenario(count)), count, args.repeat)
        print(f"{count:>4}  {calls:>12.0f}  {seconds * 1e6:>10.1f}  {seconds * 1e6 / calls:>8.2f}")

    if args.real:
        print(_real(max(5, args.repeat // 20)))
    print(_nvidia_smi(max(3, args.repeat // 20)))


if __name__ == "__main__":
    main()
