"""A data-parallel job is built for a number of cards (``workload.gpus_per_job``): the
decision gives it those cards where it can, and says what running it on fewer costs
where it cannot. Wrong answers an expert review caught, pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase, load_rules
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.pipeline import advise

from .conftest import REPO
from .test_decide import advise_text

EIGHT_CARD_JOB = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 40
parallelism = "data-parallel"
gpus_per_job = 8
sync_heavy = true
[platform]
chassis = "rack-4u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 8
psu_headroom_w = 4000
[team]
multi_gpu_experience = "expert"
[budget]
max_usd = {budget}
"""

FOUR_CARD_JOB = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 16.0
parallelism = "data-parallel"
gpus_per_job = 4
[platform]
chassis = "workstation"
airflow = "open"
max_gpu_slot_width = 2
gpu_count_max = 4
psu_headroom_w = 1200
[team]
multi_gpu_experience = "expert"
[budget]
max_usd = {budget}
"""

A5000_HOST = REPO / "examples" / "evidence" / "add-two-rtx-a5000" / "nvidia-smi-q.xml"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def rules() -> RuleBase:
    return load_rules()


def _rules_fired(decision: Decision) -> set[str]:
    return {f.rule for f in decision.findings}


def test_a_sync_heavy_job_built_for_eight_cards_gets_eight(
    catalog: Catalog, rules: RuleBase
) -> None:
    """An expert team's DDP job over 8 cards (sync-heavy, PCIe) was told to buy one card:
    the sync rules' "a second card's gain" argument outscored the job's own shape. By
    the policy's shares, 8 cards over PCIe keep 6.4 times one card's speed."""
    decision = advise_text(EIGHT_CARD_JOB.format(budget=100000), catalog, rules)
    top = decision.picks[0]
    assert decision.recommendation.shape == "multi-gpu-data-parallel"
    assert top.cards_total == 8
    assert not {"SYNC-001", "SYNC-002"} & _rules_fired(decision)
    assert "ENGINE-CAPACITY-002" not in _rules_fired(decision)
    # The enough card gives the job its 8 cards too.
    enough = decision.enough
    assert enough is not None and enough.pick.cards_total == 8


def test_a_job_given_fewer_cards_than_it_is_built_for_is_told_the_cost(
    catalog: Catalog, rules: RuleBase
) -> None:
    """On a budget that buys no 8 priced cards, one card is the pick; the report said
    "1 card serves 1 of 1 job" and nothing of the 8 the job is built for."""
    decision = advise_text(EIGHT_CARD_JOB.format(budget=20000), catalog, rules)
    top = decision.picks[0]
    assert top.cards_total == 1
    finding = next(f for f in decision.findings if f.rule == "ENGINE-CAPACITY-002")
    assert finding.severity == "warning"
    # sync-heavy over PCIe peer-to-peer keeps 80 %: 8 cards = 6.4 times one card.
    assert "about 6.4 times one card's speed" in finding.rationale
    assert "80% of ideal scaling" in finding.rationale
    assert "8 times as many steps" in finding.rationale


def _host_decision(tmp_path: Path, budget: float) -> Decision:
    profile = tmp_path / "four-card-job.toml"
    profile.write_text(FOUR_CARD_JOB.format(budget=budget), encoding="utf-8")
    return advise(profile, evidence=[A5000_HOST], sensitivity=False)


def test_two_kept_cards_are_not_enough_for_a_job_built_for_four(tmp_path: Path) -> None:
    """A host with 2 × RTX A5000 and a DDP job built for 4 cards was told to buy
    nothing ("the cards already in the host meet the need"), running it at half speed
    with $7,000 to spend. Now the job gets 4 cards, and the enough card gives it 4."""
    decision = _host_decision(tmp_path, 7000.0)
    top = decision.picks[0]
    assert top.count > 0 and top.cards_total == 4
    assert "ENGINE-KEEP-001" not in _rules_fired(decision)
    enough = decision.enough
    assert enough is not None and enough.pick.cards_total == 4
    assert "buying nothing" not in enough.text


def test_kept_cards_short_of_the_job_are_not_called_enough(tmp_path: Path) -> None:
    """When nothing that gives the job its cards can be bought, keeping the two is the
    answer, but not "they meet the need"."""
    decision = _host_decision(tmp_path, 1000.0)
    top = decision.picks[0]
    assert top.count == 0 and top.cards_total == 2
    assert decision.recommendation.headline.startswith("Buy nothing yet:")
    assert "2 of the 4 cards it is built for" in decision.recommendation.headline
    keep = next(f for f in decision.findings if f.rule == "ENGINE-KEEP-001")
    assert "fewer than the job is built for" in keep.title
    assert "ENGINE-CAPACITY-002" in _rules_fired(decision)
