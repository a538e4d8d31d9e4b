"""The host's own power (issue #30 §2): ``platform.cpu_w`` and ``platform.system_w`` (else
the policy's assumption, stated) come off the wall circuit and, where the profile gives
the supply's rating (``platform.psu_w``), off that rating; ``psu_headroom_w`` keeps its
meaning, the power left for GPUs. And an edge card built for the 75 W slot is not
excluded by the margin meant for high-power cards' spikes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.pipeline import advise

CATALOG = load_catalog()

_WORKSTATION = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 20.0
concurrent_jobs = 4

[platform]
chassis = "tower"
gpu_count_max = 4
{power}

[budget]
max_usd = 30000.0
"""


def _facts(power: str) -> dict[str, object]:
    return dict(build_facts(parse_profile(_WORKSTATION.format(power=power)), CATALOG).values)


def _advise(tmp_path: Path, text: str) -> Decision:
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8")
    return advise(path, sensitivity=False)


def test_a_fifteen_amp_circuit_is_1440_w_for_everything() -> None:
    """1,800 W × 80 % = 1,440 W at the wall, 1,296 W through a 90 % supply; a 350 W
    Threadripper and 150 W of drives and fans leave 796 W for the GPUs."""
    stated = _facts("psu_headroom_w = 2000\ncircuit_w = 1800\ncpu_w = 350\nsystem_w = 150")
    assert stated["platform.host_draw_w"] == 500.0
    assert stated["platform.circuit_gpu_budget_w"] == pytest.approx(796.0)
    assumed = _facts("psu_headroom_w = 2000\ncircuit_w = 1800")
    assert assumed["platform.host_draw_w"] == 250.0  # 150 W per socket and 100 W
    assert assumed["platform.circuit_gpu_budget_w"] == pytest.approx(1046.0)
    two_sockets = _facts("psu_headroom_w = 2000\ncircuit_w = 1800\ncpu_sockets = 2")
    assert two_sockets["platform.circuit_gpu_budget_w"] == pytest.approx(896.0)


def _alive_powers(power: str) -> set[float]:
    """The board power of every option that meets every requirement."""
    engine = Engine(CATALOG, load_rules())
    core = engine.run(_facts(power))
    eliminated = 0
    for verdict in core.verdicts:
        eliminated |= verdict.mask
    alive = core.options.full & ~eliminated
    return {o.total_power_w for i, o in enumerate(core.options.options) if alive >> i & 1}


def test_the_circuit_check_counts_a_stated_cpu(tmp_path: Path) -> None:
    """Cards drawing 800-1,046 W fit what a 15 A circuit leaves beside the assumed 250 W
    host, not beside a stated 350 W CPU and 150 W of the rest (796 W)."""
    power = "psu_headroom_w = 2000\ncircuit_w = 1800\nmax_gpu_slot_width = 2"
    roomy = _alive_powers(power)
    tight = _alive_powers(power + "\ncpu_w = 350\nsystem_w = 150")
    assert any(796.0 < w <= 1046.0 for w in roomy)
    assert max(tight) <= 796.0
    decision = _advise(tmp_path, _WORKSTATION.format(power=power + "\ncpu_w = 350\nsystem_w = 150"))
    fit = next(f for f in decision.findings if f.rule == "FIT-007")
    assert "500 W" in fit.rationale and "796 W" in fit.rationale


def test_a_supply_rating_feeds_the_host_first() -> None:
    """A 1,000 W supply: 750 W for the GPUs beside the assumed 250 W host, 675 W of board
    power with the margin for spikes; psu_headroom_w keeps meaning the power for GPUs."""
    rated = _facts("psu_w = 1000")
    assert rated["platform.gpu_power_available_w"] == 750.0
    assert rated["platform.gpu_power_budget_w"] == pytest.approx(675.0)
    headroom = _facts("psu_headroom_w = 1000")
    assert headroom["platform.gpu_power_available_w"] == 1000.0
    assert headroom["platform.gpu_power_budget_w"] == pytest.approx(900.0)


def test_a_supply_rating_and_a_headroom_together_are_refused() -> None:
    with pytest.raises(InputError) as raised:
        parse_profile(_WORKSTATION.format(power="psu_w = 1000\npsu_headroom_w = 600"), "p.toml")
    assert raised.value.field == "platform"
    assert "psu_w" in str(raised.value) and "psu_headroom_w" in str(raised.value)
    assert "delete the other line" in (raised.value.hint or "")  # templates write both


def test_the_assumed_host_draw_is_stated_in_the_report(tmp_path: Path) -> None:
    decision = _advise(
        tmp_path, _WORKSTATION.format(power="psu_headroom_w = 2000\ncircuit_w = 1800")
    )
    stated = [a for a in decision.assumptions if "host's own draw" in a]
    assert len(stated) == 1
    assert "150 W for the CPUs" in stated[0] and "100 W for the board" in stated[0]
    assert "250 W in all" in stated[0]
    quiet = _advise(tmp_path, _WORKSTATION.format(power="psu_headroom_w = 2000"))
    assert not [a for a in quiet.assumptions if "host's own draw" in a]  # nothing used it


_EDGE = """schema = "gpuadvisor/profile/v1"
[meta]
title = "Edge video analytics box"

[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 16.0

[platform]
chassis = "rack-1u"
airflow = "front-to-back"
max_gpu_slot_width = 1
gpu_count_max = 1
psu_headroom_w = 75          # the one x16 slot, no auxiliary power cable

[budget]
max_usd = 4000.0
"""


def test_an_l4_fits_the_75_w_slot_it_is_built_for(tmp_path: Path) -> None:
    """The L4 draws 72 W from the slot alone; holding it to 90 % of the slot's 75 W
    (67.5 W) would exclude the card built for exactly this slot."""
    decision = _advise(tmp_path, _EDGE)
    assert decision.picks, decision.recommendation.headline
    assert decision.picks[0].sku == "l4"
    assert decision.picks[0].power_limit_w is None


def test_two_slot_powered_cards_share_the_power_left_and_others_keep_the_margin(
    tmp_path: Path,
) -> None:
    """Two L4 (144 W) fit the 150 W left for GPUs, where the margin would allow 135 W;
    the control: a card on an auxiliary cable keeps the margin (every such option
    within 90 % of the power left)."""
    text = (
        _EDGE.replace("psu_headroom_w = 75 ", "psu_headroom_w = 150")
        .replace("gpu_count_max = 1", "gpu_count_max = 2")
        .replace("vram_need_gib = 16.0", "vram_need_gib = 16.0\nconcurrent_jobs = 2")
        .replace("max_usd = 4000.0", "max_usd = 6000.0")
    )
    decision = _advise(tmp_path, text)
    assert (decision.picks[0].sku, decision.picks[0].count) == ("l4", 2)
    assert decision.picks[0].board_power_w == 144.0 and decision.picks[0].power_limit_w is None
    engine = Engine(CATALOG, load_rules())
    core = engine.run(build_facts(parse_profile(text), CATALOG).values)
    eliminated = 0
    for verdict in core.verdicts:
        eliminated |= verdict.mask
    alive = core.options.full & ~eliminated
    cabled = [
        o
        for i, o in enumerate(core.options.options)
        if alive >> i & 1 and any(s.tdp_w > 75 for s in o.skus)
    ]
    assert all(o.total_power_w <= 135.0 for o in cabled)
