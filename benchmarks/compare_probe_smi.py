"""Compare ``gpuadvisor probe`` output with ``nvidia-smi -q -x`` of the same host.

    python benchmarks/compare_probe_smi.py probe.json smi.xml

Both files go through the evidence parsers (host/v1 JSON and nvidia-smi XML), GPUs are
paired by PCI bus id / UUID / index as the evidence merge pairs them, and the values
both tools read from the same NVML calls are compared field by field. Prints one line
per field: ``match``, ``MISMATCH`` or ``missing`` (null on one side, with the probe's
recorded reason when it kept one). Exit status 1 when anything mismatches.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuadvisor.evidence import parse_text
from gpuadvisor.evidence.merge import same_gpu
from gpuadvisor.host.schema import Gpu
from gpuadvisor.inputs.textio import read_text

#: Fields both sides read from the same NVML answer (nvidia-smi prints what NVML says).
FIELDS = (
    "name",
    "uuid",
    "pci_bus_id",
    "memory_total_mib",
    "ecc_mode",
    "ecc_mode_pending",
    "mig_mode",
    "persistence_mode",
    "pcie.gen_max",
    "pcie.width_max",
    "power.limit_w",
    "power.enforced_limit_w",
    "power.default_limit_w",
    "power.min_limit_w",
    "power.max_limit_w",
    "temperature.slowdown_c",
    "temperature.shutdown_c",
    "temperature.max_operating_c",
    "clocks.max_sm_mhz",
    "clocks.max_mem_mhz",
)


def pick(gpu: Gpu, path: str) -> Any:
    value: Any = gpu
    for part in path.split("."):
        value = getattr(value, part)
    return value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= max(0.01, 0.005 * abs(float(b)))
    return bool(a == b)


def compare(probe: list[Gpu], smi: list[Gpu]) -> tuple[list[str], int]:
    lines: list[str] = []
    mismatches = 0
    for gpu in probe:
        other = next((g for g in smi if same_gpu(gpu, g)), None)
        label = f"GPU{gpu.index} {gpu.pci_bus_id}"
        if other is None:
            lines.append(f"{label}: not in the nvidia-smi capture")
            mismatches += 1
            continue
        for path in FIELDS:
            ours, theirs = pick(gpu, path), pick(other, path)
            if ours is None or theirs is None:
                why = gpu.unavailable.get(path, "")
                verdict = f"missing  probe={ours!r} smi={theirs!r}" + (f" ({why})" if why else "")
            elif same(ours, theirs):
                verdict = f"match    {ours!r}"
            else:
                verdict = f"MISMATCH probe={ours!r} smi={theirs!r}"
                mismatches += 1
            lines.append(f"{label} {path:28} {verdict}")
    return lines, mismatches


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    probe = parse_text(read_text(Path(argv[0])), argv[0]).gpus
    smi = parse_text(read_text(Path(argv[1])), argv[1]).gpus
    lines, mismatches = compare(probe, smi)
    print("\n".join(lines))
    print(f"{len(probe)} GPU(s) compared, {mismatches} mismatch(es)")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
