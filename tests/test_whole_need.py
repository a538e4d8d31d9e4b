"""A budget is a budget for the whole need (issue #30 §2): an option whose cards for all
the hosts it needs to serve every wanted job cost more than the budget does not beat one
whose cards for every host needed fit it, and the headline says what the shortfall costs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.decision.headline import confidence
from gpuadvisor.engine.core import Engine, PairResult
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.policy import bundled_policy
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.engine.wholeneed import hosts_needed, whole_need_usd, within_budget
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import load_profile
from gpuadvisor.pipeline import advise

from .conftest import REPO

SWEEP = REPO / "examples" / "hyperparameter-sweep.toml"


def test_the_sweep_buys_cards_whose_two_hosts_fit_the_budget() -> None:
    """Eight 14 GiB runs, four cards a tower, $8,000: four RTX PRO 4000 ($6,000) serve
    four runs but the two towers' cards cost $12,000; four RTX 2000 Ada serve four as
    well, and both towers' cards ($5,000) fit the budget."""
    decision = advise(SWEEP, sensitivity=False)
    top = decision.picks[0]
    assert (top.sku, top.count) == ("rtx-2000-ada", 4)
    capacity = decision.recommendation.capacity
    assert capacity is not None and capacity.shortfall
    assert capacity.hosts_needed == 2
    assert capacity.hosts_cards_usd == pytest.approx(5000.0)
    assert capacity.whole_need_within_budget is True
    assert "about $5,000 in cards, within the $8,000 budget" in decision.recommendation.headline
    assert decision.recommendation.confidence == "high"


def test_an_option_over_the_whole_need_budget_ranks_after_those_within() -> None:
    catalog, rules = load_catalog(), load_rules()
    engine = Engine(catalog, rules)
    facts = build_facts(load_profile(SWEEP), catalog).values
    core = engine.run(facts)
    ranked = core.chosen.ranked
    pro_4000 = next(o for o in ranked if o.sku.id == "rtx-pro-4000-blackwell" and o.count == 4)
    assert pro_4000.jobs_served == ranked[0].jobs_served == 4
    assert hosts_needed(pro_4000, 8) == 2 and whole_need_usd(pro_4000, 8) == 12000.0
    assert not within_budget(pro_4000, core.facts)
    first_outside = next(i for i, o in enumerate(ranked) if not within_budget(o, core.facts))
    assert all(within_budget(o, core.facts) for o in ranked[:first_outside])
    assert not any(within_budget(o, core.facts) for o in ranked[first_outside:])
    # With the budget for both towers' RTX PRO 4000 cards, it is the pick again.
    richer = engine.run({**facts, "budget.max_usd": 12000.0})
    assert richer.top is not None and richer.top.sku.id == "rtx-pro-4000-blackwell"


def test_a_pick_over_the_whole_need_budget_is_not_headlined_at_high_confidence() -> None:
    """Where another kind of purchase serves the whole need within the budget, a pick
    whose hosts' cards exceed it is at most medium, however it came first."""
    catalog, rules = load_catalog(), load_rules()
    engine = Engine(catalog, rules)
    core = engine.run(build_facts(load_profile(SWEEP), catalog).values)
    outside = next(o for o in core.chosen.ranked if not within_budget(o, core.facts))
    chosen = core.chosen
    forced = PairResult(
        chosen.shape,
        chosen.class_,
        chosen.score + 10,
        (outside, *chosen.ranked),
        chosen.verdicts,
        chosen.within,
    )
    others = tuple(p for p in core.pairs if p is not chosen)
    runner = max((p for p in others if p.ranked), key=lambda p: p.score)
    assert any(p.ranked and within_budget(p.ranked[0], core.facts) for p in others)
    forced_core = replace(core, chosen=forced, runner_up=runner, pairs=(forced, *others))
    level, _ = confidence(forced_core, bundled_policy())
    assert level != "high"


def test_the_headline_of_a_shortfall_over_budget_states_its_cost() -> None:
    """Forty 24 GiB replicas at $10,000: no option serves them within the budget; the
    headline says what the hosts that serve them all cost at least."""
    decision = advise(REPO / "examples" / "demand-beyond-one-host.toml", sensitivity=False)
    headline = decision.recommendation.headline
    assert "10 workstations like this serve all 40" in headline
    assert "at least $90,000 in cards" in headline
    assert "the budget is $10,000" in headline


_RACK = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 8.0
concurrent_jobs = 4

[platform]
chassis = "rack-2u"
airflow = "front-to-back"
gpu_count_max = 1
psu_headroom_w = 1600

[budget]
max_usd = 3000.0
"""


def test_a_kind_whose_hosts_fit_the_budget_beats_a_favoured_one_that_does_not(
    tmp_path: Path,
) -> None:
    """Four 8 GiB runs, one card a server, $3,000: an L4 ($2,500) fits one server's
    budget and is favoured for server airflow, but four servers of them cost $10,000;
    four RTX 2000 Ada cost $2,500 for all four. The pair order and the reason the
    data-center kind lost both say so."""
    path = tmp_path / "rack.toml"
    path.write_text(_RACK, encoding="utf-8")
    decision = advise(path, sensitivity=False)
    assert decision.picks[0].sku == "rtx-2000-ada"
    assert decision.recommendation.class_ == "professional"
    lost = next(r for r in decision.rejected if r.option == "datacenter")
    assert "cards of the 4 hosts it needs" in lost.reason
    assert "about $10,000, more than the $3,000 budget" in lost.reason
