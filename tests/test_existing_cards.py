"""The cards already in the host: facts from the evidence (engine/hostfacts/_existing.py)
and what the decision makes of them (keep, add, replace, the conflicts).

On real captures (``../shared/fixtures/real``) and the bundled examples' captures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.evidence import load_evidence
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.pipeline import advise_profile

from .conftest import REPO
from .evidence_support import MISSING_REAL, real_fixtures_dir

REAL = real_fixtures_dir()
needs_real = pytest.mark.skipif(REAL is None, reason=MISSING_REAL)


def _facts(*paths: Path) -> dict[str, object]:
    return dict(derive_host_facts(load_evidence(list(paths))).values)


@needs_real
def test_eight_rtx_4090_are_one_model_with_their_memory() -> None:
    assert REAL is not None
    facts = _facts(REAL / "smi-text" / "8x-rtx-4090_535.154.05_q.txt")
    assert facts["host.gpu_count"] == 8
    assert facts["host.gpu_model"] == "NVIDIA GeForce RTX 4090"
    assert facts["host.gpu_models_distinct"] == 1
    assert facts["host.gpu_memory_total_min_mib"] == 24564.0
    assert facts["host.gpu_memory_reserved_max_mib"] == 346.0


@needs_real
def test_two_different_models_have_no_single_model() -> None:
    assert REAL is not None
    facts = _facts(
        REAL / "smi-xml" / "2x-rtx-a5000_590.44.01_v13.xml",
        REAL / "smi-xml" / "rtx-3090_590.44.01_v13.xml",
    )
    assert facts["host.gpu_model"] is None
    assert facts["host.gpu_models_distinct"] == 2


def test_a_capture_without_names_leaves_the_model_unknown() -> None:
    facts = _facts(REPO / "examples" / "evidence" / "input-bound-host" / "nvidia-smi-dmon.txt")
    assert facts["host.gpu_count"] == 2
    assert facts["host.gpu_model"] is None
    assert facts["host.gpu_models_distinct"] is None


PROFILE = """
schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 18.0
concurrent_jobs = {jobs}
[platform]
chassis = "workstation"
gpu_count_max = {count_max}
psu_headroom_w = 1000
[budget]
max_usd = 4000.0
"""


def _decide(evidence: list[Path], jobs: int = 2, count_max: int = 2) -> Decision:
    profile = parse_profile(PROFILE.format(jobs=jobs, count_max=count_max))
    return advise_profile(
        profile, profile_sha256="0" * 64, profile_file="p.toml", evidence=evidence
    )


@needs_real
def test_evidence_with_more_gpus_than_the_chassis_takes_is_flagged() -> None:
    """The issue's case: evidence showing 8 GPUs against gpu_count_max = 2."""
    assert REAL is not None
    decision = _decide([REAL / "smi-text" / "8x-rtx-4090_535.154.05_q.txt"])
    fired = {f.rule: f for f in decision.findings}
    assert "EXIST-001" in fired and fired["EXIST-001"].severity == "warning"
    # Keeping eight cards in a chassis that takes two is no option: they are replaced.
    assert decision.recommendation.action == "replace"
    assert decision.picks and decision.picks[0].cards_total <= 2


def test_one_job_on_a_card_that_holds_it_buys_nothing() -> None:
    capture = REPO / "examples" / "evidence" / "second-rtx-4090" / "nvidia-smi-q.txt"
    decision = _decide([capture], jobs=1)
    r = decision.recommendation
    assert (r.action, r.gpu_count) == ("keep", 0)
    assert r.headline.startswith("Buy nothing: the 1 × NVIDIA GeForce RTX 4090")
    assert [e.kept for e in r.existing] == [True]


def test_a_card_too_small_for_the_job_is_replaced_not_kept() -> None:
    capture = REPO / "examples" / "evidence" / "second-rtx-4090" / "nvidia-smi-q.txt"
    profile = parse_profile(
        PROFILE.format(jobs=1, count_max=2).replace("18.0", "40.0").replace("4000.0", "9000.0")
    )
    decision = advise_profile(
        profile, profile_sha256="0" * 64, profile_file="p.toml", evidence=[capture]
    )
    r = decision.recommendation
    assert r.action == "replace" and r.gpu_count == 1
    assert decision.picks[0].usable_vram_gib is not None
    assert decision.picks[0].usable_vram_gib >= 42.0
    assert [e.kept for e in r.existing] == [False]


def test_unknown_models_are_named_in_a_finding() -> None:
    capture = REPO / "examples" / "evidence" / "input-bound-host" / "nvidia-smi-dmon.txt"
    decision = _decide([capture])
    finding = next(f for f in decision.findings if f.rule == "ENGINE-EXISTING-001")
    assert "does not name the model" in finding.evidence
    assert decision.recommendation.existing[0].name == "GPU (model not reported)"
