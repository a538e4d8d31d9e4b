"""Golden files for report tests, and the decisions those tests render.

A golden file is the reviewed output of a renderer. ``pytest --update-golden`` rewrites
them from the current output; review the diff (``git diff tests/golden``) like code.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import pytest

from gpuadvisor.decision.model import Decision, EvidenceRef, FactValue, MeasuredGpu, Sample
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.pipeline import advise

from .conftest import REPO, TESTS

GOLDEN = TESTS / "golden"
EXAMPLES = REPO / "examples"

#: Worked examples rendered to golden files: a plain pick, fix-first, several cards for
#: virtual desktops, and professional display sync.
GOLDEN_EXAMPLES = (
    "llm-latency-endpoint",
    "input-bound-training",
    "vdi-many-users",
    "virtual-production-genlock",
    "video-wall",
)


@dataclass(frozen=True)
class Golden:
    update: bool

    @classmethod
    def from_request(cls, request: pytest.FixtureRequest) -> Golden:
        return cls(update=bool(request.config.getoption("--update-golden")))

    def check(self, name: str, actual: str) -> None:
        path = GOLDEN / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8", newline="")
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing: run pytest --update-golden, review it")
        expected = path.read_text(encoding="utf-8")
        if actual != expected:
            diff = "".join(
                list(
                    difflib.unified_diff(
                        expected.splitlines(keepends=True),
                        actual.splitlines(keepends=True),
                        f"golden/{name}",
                        "rendered",
                        n=2,
                    )
                )[:80]
            )
            pytest.fail(
                f"{name} differs from its golden file (pytest --update-golden rewrites it; "
                f"review the diff):\n{diff}",
                pytrace=False,
            )


def example_decision(name: str, catalog: Catalog, rules: RuleBase) -> Decision:
    return advise(EXAMPLES / f"{name}.toml", catalog=catalog, rules=rules)


def with_evidence(decision: Decision) -> Decision:
    """The decision as if host captures had been attached, with a sampled GPU series:
    ten minutes in which the card heats up and its clock drops (thermal throttling)."""
    samples = []
    for step in range(121):
        temperature = min(45 + step * 0.4, 86.0)
        samples.append(
            Sample(
                t_s=float(step * 5),
                gpu_util_pct=float(97 if step % 7 else 35),
                temperature_c=temperature,
                sm_clock_mhz=float(1980 - max(0.0, temperature - 80) * 45),
                power_w=round(180 + (step % 11) * 6.5, 1),
            )
        )
    gpu = MeasuredGpu(
        index=0,
        name="NVIDIA RTX A5000",
        pci_bus_id="00000000:17:00.0",
        values=(
            FactValue(name="gpu.memory_used_mib", value=17320, unit="MiB", source="smi-q.xml"),
            FactValue(name="gpu.temperature_max_c", value=86.0, unit="°C", source="smi.csv"),
        ),
        series=tuple(samples),
        series_source="smi.csv",
    )
    measured = (
        FactValue(name="host.gpu_util_mean_pct", value=87.5, unit="%", source="smi.csv"),
        FactValue(name="host.iowait_pct", value=1.2, unit="%", source="iostat.txt"),
    )
    evidence = (
        EvidenceRef(file="smi-q.xml", kind="nvidia-smi-xml", sha256="a" * 64),
        EvidenceRef(file="smi.csv", kind="nvidia-smi-csv", sha256="b" * 64),
        EvidenceRef(file="iostat.txt", kind="iostat", sha256="c" * 64),
    )
    inputs = decision.inputs.model_copy(update={"evidence": evidence})
    return decision.model_copy(update={"measured": measured, "gpus": (gpu,), "inputs": inputs})
