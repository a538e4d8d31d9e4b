"""Each wrong answer issue #17 caught, as a decision on the fixture catalog (or the
bundled one where the card matters), pinned so it cannot come back."""

from __future__ import annotations

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.ranking import LATENCY_BAND
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog, load_catalog

from .test_decide import advise_text

PARTIAL = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 20
concurrent_jobs = 4
[platform]
chassis = "rack-4u"
airflow = "front-to-back"
gpu_count_max = 4
psu_headroom_w = 3000
[budget]
max_usd = {budget}
"""


def test_partial_scale_out_is_weighed(test_catalog: Catalog, rulebase: RuleBase) -> None:
    """A budget that buys three cards for four jobs: three cards serving three, stated
    as a shortfall, not one card serving one."""
    decision = advise_text(PARTIAL.format(budget=7000), test_catalog, rulebase)
    r = decision.recommendation
    assert (r.shape, r.gpu_count) == ("two-independent-jobs", 3)
    assert r.capacity is not None and r.capacity.shortfall
    assert (r.capacity.jobs_served, r.capacity.hosts_needed) == (3, 2)
    assert "serves 3 of 4 jobs: 2 servers like this serve all 4" in r.headline
    # Four cards for both servers ($9,000: the second holds the one job left) are over
    # the budget: the headline says so.
    assert "about $9,000 in cards against a budget of $7,000" in r.headline


def test_one_card_that_holds_every_desktop_is_one_card(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    """Sharing work used to get at least two cards even when one hosts every user."""
    text = """
[workload]
kind = "vdi"
objective = "fleet-simplicity"
vram_need_gib = 2
concurrent_jobs = 8
[requirements]
vgpu = true
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 2
[budget]
max_usd = 20000
"""
    decision = advise_text(text, test_catalog, rulebase)
    r = decision.recommendation
    assert (r.shape, r.gpu_count) == ("single-larger-gpu", 1)
    assert r.capacity is not None and r.capacity.jobs_served == 8


def test_board_power_keeps_a_margin_and_a_power_limit_is_named(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    """1,800 W of board power against exactly 1,800 W of headroom left no margin for
    transients. Here four 300 W cards (1,200 W) against 1,300 W: over the 90 % budget
    (1,170 W), so they do not fit; with power limiting allowed they do, and the report
    names the limit to set and its speed cost."""
    text = """
[workload]
kind = "rendering"
objective = "throughput"
vram_need_gib = 40
concurrent_jobs = 4
[platform]
chassis = "rack-4u"
airflow = "front-to-back"
gpu_count_max = 4
psu_headroom_w = 1300
{limit}
[budget]
max_usd = 40000
"""
    strict = advise_text(text.format(limit=""), test_catalog, rulebase)
    assert strict.picks
    assert all(p.board_power_w is not None and p.board_power_w <= 1170 for p in strict.picks)
    assert strict.recommendation.capacity is not None
    assert strict.recommendation.capacity.shortfall
    limited = advise_text(text.format(limit="power_limit_ok = true"), test_catalog, rulebase)
    top = limited.picks[0]
    assert (top.cards_total, top.jobs_served) == (4, 4)
    assert top.power_limit_w is not None and top.speed_cost_pct is not None
    assert top.power_limit_w * top.cards_total <= 1170 + 1e-6
    assert 0 < top.speed_cost_pct <= 5
    assert f"power-limited to {top.power_limit_w:,.0f} W per card" in top.why


def test_latency_texts_say_what_the_band_says() -> None:
    """'Among the fastest cards (within 25 % of the fastest eligible)' was said of a
    360 GB/s card beside a 1,792 GB/s one: each why now states its own bandwidth and
    whether it is inside the band of the fastest of its kind."""
    text = """
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = 10
[platform]
gpu_count_max = 1
psu_headroom_w = 800
[budget]
max_usd = 20000
"""
    catalog = load_catalog()
    from gpuadvisor.engine.rules import load_rules

    decision = advise_text(text, catalog, load_rules())
    fastest = max(p.memory_bandwidth_gbs for p in decision.picks)
    for pick in decision.picks:
        inside = f"within {1 - LATENCY_BAND:.0%} of the fastest of this kind" in pick.why
        outside = f"outside {1 - LATENCY_BAND:.0%} of the fastest of this kind" in pick.why
        assert inside != outside, pick.why
        if inside:
            assert pick.memory_bandwidth_gbs >= LATENCY_BAND * fastest


@pytest.mark.parametrize("need", [8.0, 14.0])
def test_the_cheapest_card_that_would_do_is_shown(need: float) -> None:
    """The buyer of an 8 GiB job saw only a $1,999 card."""
    from gpuadvisor.engine.rules import load_rules

    text = f"""
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = {need}
[budget]
max_usd = 10000
"""
    decision: Decision = advise_text(text, load_catalog(), load_rules())
    enough = decision.enough
    assert enough is not None and decision.picks
    assert enough.pick.total_price_usd <= decision.picks[0].total_price_usd
    if not enough.same_as_top:
        assert enough.pick.name in enough.text and "costs $" in enough.text
        assert enough.extra_usd == pytest.approx(
            decision.picks[0].total_price_usd - enough.pick.total_price_usd
        )


FP64_THROUGHPUT = """
[workload]
kind = "{kind}"
objective = "throughput"
vram_need_gib = 30
needs_fp64 = {fp64}
[requirements]
ecc = "required"
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 1
psu_headroom_w = 900
[budget]
max_usd = 60000
"""


@pytest.mark.parametrize(
    ("kind", "fp64", "unit", "field"),
    [
        ("simulation", "true", "FP64 TFLOPS", "fp64_tflops"),
        ("simulation", "false", "FP32 TFLOPS", "fp32_tflops"),
        ("training", "false", "FP16 tensor TFLOPS", "fp16_tensor_tflops"),
    ],
)
def test_throughput_per_dollar_names_and_counts_the_precision_the_work_computes_in(
    rulebase: RuleBase, kind: str, fp64: str, unit: str, field: str
) -> None:
    """A double-precision solver's picks were ranked and described by FP32 TFLOPS per
    $1,000 (a sentence that said only "TFLOPS"): the figure is now the card's FP64 rate
    for such work, and every throughput sentence names what it counts."""
    catalog = load_catalog()
    decision = advise_text(FP64_THROUGHPUT.format(kind=kind, fp64=fp64), catalog, rulebase)
    assert decision.picks
    top = decision.picks[0]
    assert top.lifecycle_cost_usd is not None
    sku = next(s for s in catalog.skus if s.id == top.sku)
    rate = getattr(sku, field)
    assert rate is not None
    per_k = round(1000 * rate * top.count / top.lifecycle_cost_usd, 2)
    assert f" {unit} per $1,000 of lifecycle cost" in top.why
    shown = top.why.split(f" {unit} per $1,000")[0].rsplit(" ", 1)[-1]
    assert abs(float(shown.replace(",", "")) - per_k) <= 0.011, (shown, per_k)
