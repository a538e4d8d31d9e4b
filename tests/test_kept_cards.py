"""The cards already in the host: a purchase that keeps them ranks before one that
throws them away for as many jobs (a third expert review caught the reverse)."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.pipeline import advise

from .conftest import REPO

RTX_4090_HOST = REPO / "examples" / "evidence" / "second-rtx-4090" / "nvidia-smi-q.txt"

SECOND_JOB = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 21.0
concurrent_jobs = 2
parallelism = "none"
[requirements]
lifecycle_years = 2
[platform]
chassis = "workstation"
airflow = "open"
max_gpu_slot_width = 3
gpu_count_max = 2
psu_headroom_w = 880
circuit_w = 1800
[budget]
max_usd = 3500.0
"""


def test_a_working_4090_is_kept_not_replaced_for_a_class_score(tmp_path: Path) -> None:
    """With an 880 W supply a second 4090 does not fit; the report replaced the working
    4090 with 2 × RTX 3090 ($2,998, discontinued) on the consumer class's score, while
    one RTX PRO 4000 beside the 4090 ($1,500) serves both jobs."""
    profile = tmp_path / "second-job.toml"
    profile.write_text(SECOND_JOB, encoding="utf-8")
    decision = advise(profile, evidence=[RTX_4090_HOST], sensitivity=False)
    top = decision.picks[0]
    assert top.action == "add" and top.kept_count == 1, top.why
    assert top.jobs_served == 2
    assert decision.recommendation.action == "add"
    # Keeping the card decided it over a higher-scoring replacement: not "high".
    assert decision.recommendation.confidence == "medium"
