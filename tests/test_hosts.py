"""Seats and hosts (issue #30 §2, ``platform.hosts``): a purchase for N identical hosts
gives each host the same cards, spreads the wanted jobs over them, and counts all of
them in every sentence, total, capacity figure, lifecycle cost and budget check."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.errors import InputError
from gpuadvisor.pipeline import advise

from .conftest import REPO


def _advise(tmp_path: Path, text: str, name: str = "profile.toml") -> Decision:
    path = tmp_path / name
    path.write_text('schema = "gpuadvisor/profile/v1"\n' + text, encoding="utf-8")
    return advise(path, sensitivity=False)


_SEATS = """
[workload]
kind = "cad-cae"
objective = "fleet-simplicity"
interactive = true
vram_need_gib = 12.0
concurrent_jobs = {jobs}
frame_pacing_critical = true

[requirements]
certified_drivers = true
lifecycle_years = 5

[platform]
chassis = "workstation"
hosts = {hosts}
max_gpu_slot_width = 2
gpu_count_max = {cards}
psu_headroom_w = 300

[budget]
max_usd = {budget}
"""


def test_the_cad_seats_example_buys_one_card_for_each_of_five_workstations() -> None:
    """The worked example's answer, pinned: 5 seats are 5 workstations of one card each,
    and every figure is the whole purchase's."""
    decision = advise(REPO / "examples" / "cad-seats.toml", sensitivity=False)
    top = decision.picks[0]
    assert (top.sku, top.count, top.hosts) == ("rtx-2000-ada", 1, 5)
    assert top.total_price_usd == pytest.approx(5 * 625.0)
    assert [(i.name, i.count, i.usd) for i in top.line_items] == [
        ("NVIDIA RTX 2000 Ada Generation", 5, pytest.approx(3125.0))
    ]
    assert top.hosts_words == "1 card in each of 5 workstations, 5 cards"
    capacity = decision.recommendation.capacity
    assert capacity is not None
    assert (capacity.jobs_served, capacity.jobs_wanted, capacity.cards, capacity.hosts) == (
        5,
        5,
        5,
        5,
    )
    assert capacity.hosts_needed == 5 and not capacity.shortfall
    headline = decision.recommendation.headline
    assert "in each of 5 workstations" in headline
    assert "5 cards, about $3,125 in total" in headline
    assert "sharing it" not in headline  # one seat per workstation, not five on one card


def test_the_budget_holds_the_cards_of_every_host(tmp_path: Path) -> None:
    """$4,000 for five seats is $800 a seat: a $1,250 card passes a one-card check but
    its five cards ($6,250) do not fit the budget."""
    decision = _advise(tmp_path, _SEATS.format(jobs=5, hosts=5, cards=1, budget=4000.0))
    assert decision.picks
    for pick in decision.picks:
        if pick.total_price_usd is not None:
            assert pick.total_price_usd <= 4000.0
            assert pick.total_price_usd == pytest.approx(pick.price_usd * pick.count * 5)
    assert "rtx-4000-ada" not in {p.sku for p in decision.picks}
    one_host = _advise(tmp_path, _SEATS.format(jobs=1, hosts=1, cards=1, budget=4000.0), "one")
    assert "rtx-4000-ada" in {p.sku for p in one_host.picks}  # the control: one card fits


def test_electricity_and_lifecycle_count_every_host(tmp_path: Path) -> None:
    five = _advise(tmp_path, _SEATS.format(jobs=5, hosts=5, cards=1, budget=9000.0)).picks[0]
    one = _advise(tmp_path, _SEATS.format(jobs=1, hosts=1, cards=1, budget=9000.0), "o").picks[0]
    assert five.sku == one.sku
    assert five.energy_cost_usd == pytest.approx(5 * one.energy_cost_usd, abs=0.05)
    assert five.lifecycle_cost_usd == pytest.approx(5 * (one.lifecycle_cost_usd or 0), abs=0.05)
    assert five.board_power_w == one.board_power_w  # one host's cards: what its PSU sees


def test_the_wanted_jobs_are_spread_over_the_hosts(tmp_path: Path) -> None:
    """Ten inference replicas over four servers: three in each (the last has room for
    two more), not ten in one box; the shortfall arithmetic counts every server."""
    text = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 10.0
concurrent_jobs = 10

[platform]
chassis = "rack-2u"
airflow = "front-to-back"
hosts = 4
gpu_count_max = 1
psu_headroom_w = 600

[budget]
max_usd = 40000.0
"""
    decision = _advise(tmp_path, text)
    capacity = decision.recommendation.capacity
    assert capacity is not None and capacity.hosts == 4
    assert capacity.jobs_served == 10 and not capacity.shortfall
    top = decision.picks[0]
    assert top.count == 1 and top.line_items[0].count == 4
    assert "3 jobs sharing it" in decision.recommendation.headline
    assert "in each of 4 servers" in decision.recommendation.headline


def test_fewer_jobs_than_hosts_is_a_question_not_a_guess(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        _advise(tmp_path, _SEATS.format(jobs=1, hosts=5, cards=1, budget=4000.0))
    error = raised.value
    assert error.field == "platform.hosts"
    assert (
        error.line is not None
        and "hosts = 5"
        in _SEATS.format(jobs=1, hosts=5, cards=1, budget=4000.0).splitlines()[error.line - 2]
    )
    assert "concurrent_jobs" in str(error)


def test_a_shortfall_over_several_hosts_names_the_hosts_like_these(tmp_path: Path) -> None:
    """Twelve seats over three two-card workstations cannot be served (one seat per
    card): the purchase serves six, six workstations like these serve all twelve."""
    text = _SEATS.format(jobs=12, hosts=3, cards=2, budget=20000.0).replace(
        "frame_pacing_critical = true", "frame_pacing_critical = false"
    )
    decision = _advise(tmp_path, text)
    capacity = decision.recommendation.capacity
    assert capacity is not None and capacity.shortfall
    assert (capacity.jobs_served, capacity.hosts, capacity.hosts_needed) == (6, 3, 6)
    top = decision.picks[0]
    assert capacity.hosts_cards_usd == pytest.approx(top.price_usd * 2 * 6)
    assert "6 workstations like these serve all 12" in decision.recommendation.headline
