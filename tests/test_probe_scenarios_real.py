"""The stand-in's tables agree with the real nvidia-smi captures they were recorded from:
probing a scenario and comparing it with its ``nvidia-smi -q -x`` through
``benchmarks/compare_probe_smi.py`` (the script the device check runs) finds no
mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.compare_probe_smi import compare
from gpuadvisor.evidence import parse_text
from tests.probe_support import run_scenario


def _real_captures() -> Path | None:
    for base in Path(__file__).resolve().parents[1:]:
        candidate = base / "shared" / "fixtures" / "real" / "smi-xml"
        if candidate.is_dir():
            return candidate
    return None


REAL = _real_captures()


@pytest.mark.skipif(REAL is None, reason="../shared/fixtures/real not found")
@pytest.mark.parametrize(
    ("scenario", "capture"),
    [
        ("consumer-no-ecc", "rtx-3090_590.44.01_v13.xml"),
        ("datacenter-ecc-mig", "a100-sxm4-80gb_535.54.03_mig-ecc_v12.xml"),
        ("two-gpu-sys-no-p2p", "2x-rtx-a5000_590.44.01_v13.xml"),
    ],
)
def test_scenario_matches_its_capture(scenario: str, capture: str) -> None:
    assert REAL is not None
    probed = run_scenario(scenario).result.snapshot.gpus
    smi = parse_text((REAL / capture).read_text(encoding="utf-8"), capture).gpus
    lines, mismatches = compare(probed, smi)
    assert mismatches == 0, "\n".join(lines)
    assert sum(" match " in line for line in lines) == 20 * len(probed)
