"""``rules/_policy.toml``: the engine's numbers, each section checked by its own examples.

Like a rule's ``[[examples]]``, the examples in the policy file are its tests: every
memory estimate against a real capture, every headroom, power, scaling and slot example
against the arithmetic of :mod:`gpuadvisor.engine.policy`. One parametrised case each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.engine.capacity import cutting, profile_gib, profile_within_gib
from gpuadvisor.engine.policy import POLICY_FILE, DisplaysExample, bundled_policy
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.resources import data_dir

POLICY = bundled_policy()


@pytest.mark.parametrize("example", POLICY.memory.examples, ids=lambda e: e.name)
def test_usable_memory_estimate_never_exceeds_a_real_capture(example: object) -> None:
    from gpuadvisor.engine.policy import MemoryExample

    assert isinstance(example, MemoryExample)
    estimate = POLICY.estimated_usable_mib(example.vram_gib, example.memory_type, example.ecc_on)
    assert estimate <= example.capture_mib
    assert estimate >= 0.97 * example.capture_mib


def test_ecc_on_gddr_costs_a_sixteenth_and_hbm_nothing() -> None:
    off = POLICY.estimated_usable_mib(48.0, "GDDR6", False)
    on = POLICY.estimated_usable_mib(48.0, "GDDR6", True)
    assert off - on == pytest.approx(48 * 1024 / 16)
    assert POLICY.estimated_usable_mib(80.0, "HBM3", True) == POLICY.estimated_usable_mib(
        80.0, "HBM3", False
    )


def test_a_capture_wins_and_turning_ecc_on_from_its_default_costs_the_share() -> None:
    assert POLICY.usable_mib(24.0, "GDDR6X", False, 24218.0, False) == 24218.0
    assert POLICY.usable_mib(24.0, "GDDR6", True, 24114.0, False) == 24114.0 - 1536.0
    assert POLICY.usable_mib(48.0, "GDDR6", True, 45459.0, True) == 45459.0


@pytest.mark.parametrize("example", POLICY.headroom.examples, ids=lambda e: e.name)
def test_headroom_examples(example: object) -> None:
    from gpuadvisor.engine.policy import HeadroomExample

    assert isinstance(example, HeadroomExample)
    jobs = POLICY.jobs_per_card(example.kind, example.need_gib, example.usable_gib)
    assert jobs == example.jobs


@pytest.mark.parametrize("example", POLICY.headroom.profiles.examples, ids=lambda e: e.name)
def test_vgpu_profile_examples(example: object) -> None:
    """Desktops get whole profiles that cut one GPU's frame buffer: the smallest that
    holds the need, or, for fewer desktops than fit, the largest that gives each one."""
    from gpuadvisor.engine.policy import ProfileExample

    assert isinstance(example, ProfileExample)
    fb = example.frame_buffer_gib
    sizes = POLICY.headroom.profiles.sizes_gib
    profiles = cutting(sizes, fb)
    held = POLICY.jobs_in(fb, profile_gib(profiles, example.need_gib, fb))
    desktops = min(held, example.desktops_wanted)
    assert desktops == example.desktops
    given = profile_within_gib(profiles, fb / max(desktops, 1))
    assert given == example.profile_gib
    assert given >= example.need_gib and fb / given == round(fb / given)


def test_a_need_above_every_profile_gets_the_whole_frame_buffer() -> None:
    sizes = POLICY.headroom.profiles.sizes_gib
    profiles = cutting(sizes, 16.0)
    assert profile_gib(profiles, 20.0, 16.0) == 20.0  # does not fit: counted as one, too small
    assert profile_gib(profiles, 16.0, 16.0) == 16.0
    assert profile_within_gib(profiles, 0.5) == 0.5  # below the smallest profile: as is


@pytest.mark.parametrize("basis", [8.0, 21.95, 23.45, 48.0, 94.9])
@pytest.mark.parametrize("footprint", [0.5, 2.0, 5.25, 8.4, 21.0, 24.0])
def test_the_capacity_job_count_is_the_policys(basis: float, footprint: float) -> None:
    from gpuadvisor.engine.capacity import _jobs_in

    assert _jobs_in(basis, footprint) == POLICY.jobs_in(basis, footprint)


def test_an_exact_fit_is_not_a_fit() -> None:
    assert POLICY.jobs_per_card("training", 24.0, 24.0) == 0
    assert POLICY.headroom_gib("training", 24.0) == pytest.approx(1.2)
    assert POLICY.headroom_gib("training", 4.0) == 0.5


@pytest.mark.parametrize("example", POLICY.power.examples, ids=lambda e: e.name)
def test_power_examples(example: object) -> None:
    from gpuadvisor.engine.policy import PowerExample

    assert isinstance(example, PowerExample)
    host = POLICY.host_draw_w(example.cpu_w, example.system_w, example.cpu_sockets)
    available = POLICY.gpu_power_available_w(example.psu_headroom_w, example.psu_w, host)
    cut = POLICY.power_cut(
        example.board_w,
        POLICY.psu_budget_w(available),
        POLICY.circuit_budget_w(example.circuit_w, host),
    )
    assert cut == pytest.approx(example.cut, abs=1e-3)


def test_a_fifteen_amp_circuit_leaves_about_a_kilowatt_for_gpus() -> None:
    assert POLICY.circuit_budget_w(1800.0) == pytest.approx(1800 * 0.8 * 0.9 - 250)
    # 1,440 W for everything: a stated 350 W CPU and 150 W beside it come off first.
    assert POLICY.circuit_budget_w(1800.0, POLICY.host_draw_w(350.0, 150.0)) == pytest.approx(
        1800 * 0.8 * 0.9 - 500
    )
    assert POLICY.host_draw_w(sockets=2) == pytest.approx(400.0)
    assert POLICY.gpu_power_available_w(800.0, 1000.0, 250.0) == 750.0
    assert POLICY.gpu_power_available_w(800.0, 0.0, 250.0) == 800.0
    assert POLICY.circuit_budget_w(0.0) is None
    assert POLICY.speed_kept(0.2) == pytest.approx(0.95)


@pytest.mark.parametrize("example", POLICY.data_parallel.examples, ids=lambda e: e.name)
def test_data_parallel_examples(example: object) -> None:
    from gpuadvisor.engine.policy import DataParallelExample

    assert isinstance(example, DataParallelExample)
    assert POLICY.scaling_kept(example.link, example.sync_heavy) == pytest.approx(example.keeps)


def test_geforce_40_and_50_have_no_p2p_professional_cards_do() -> None:
    assert not POLICY.has_p2p("consumer", "Ada Lovelace")
    assert not POLICY.has_p2p("consumer", "Blackwell")
    assert POLICY.has_p2p("professional", "Ada Lovelace")
    assert POLICY.has_p2p("consumer", "Ampere")


@pytest.mark.parametrize("example", POLICY.slots.examples, ids=lambda e: e.name)
def test_slot_examples(example: object) -> None:
    from gpuadvisor.engine.policy import SlotsExample

    assert isinstance(example, SlotsExample)
    slots = POLICY.default_slots(example.chassis, example.gpu_count_max, example.max_gpu_slot_width)
    assert slots == example.slots


def test_every_section_has_examples_reasons_and_sources() -> None:
    sections = (POLICY.memory, POLICY.headroom, POLICY.power, POLICY.data_parallel)
    for section in (*sections, POLICY.headroom.profiles):
        assert section.examples and section.why.strip()
        assert all(url.startswith("https://") for url in section.sources)
    assert POLICY.slots.examples


def test_the_policy_file_is_not_a_rule_and_travels_with_the_rule_base() -> None:
    assert (data_dir("rules") / POLICY_FILE).is_file()
    base = load_rules()
    assert all(Path(rule.path).name != POLICY_FILE for rule in base.rules)
    assert base.policy == POLICY


def test_an_overlay_policy_replaces_the_values_it_names(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_text("[headroom]\nmin_gib = 2.0\n", encoding="utf-8")
    policy = load_rules([tmp_path]).policy
    assert policy.headroom.min_gib == 2.0
    assert policy.headroom.share == POLICY.headroom.share
    assert policy.power == POLICY.power


def test_a_bad_overlay_policy_names_its_file_and_field(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_text("[power]\ntransient_margin = 3\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_rules([tmp_path])
    assert str(tmp_path / POLICY_FILE) in str(caught.value)
    assert "transient_margin" in str(caught.value)


@pytest.mark.parametrize("example", POLICY.ranking.target_examples, ids=lambda e: e.name)
def test_latency_target_examples(example: object) -> None:
    from gpuadvisor.engine.policy_ranking import TargetExample
    from gpuadvisor.sizing.speed import answer_tokens_within

    assert isinstance(example, TargetExample)
    tokens = answer_tokens_within(
        example.latency_slo_ms, example.prefill_s, example.decode_ms_per_token / 1000
    )
    assert tokens == example.answer_tokens
    assert POLICY.ranking.meets_target(tokens) is example.meets


@pytest.mark.parametrize("example", POLICY.ranking.cost_band_examples, ids=lambda e: e.name)
def test_cost_band_examples(example: object) -> None:
    from gpuadvisor.engine.policy_ranking import CostBandExample

    assert isinstance(example, CostBandExample)
    assert POLICY.ranking.in_cost_band(example.cost_usd, example.cheapest_usd) is example.in_band


@pytest.mark.parametrize("example", POLICY.ranking.stale_examples, ids=lambda e: e.name)
def test_stale_card_examples(example: object) -> None:
    from gpuadvisor.engine.policy_ranking import StaleExample

    assert isinstance(example, StaleExample)
    stale = POLICY.ranking.stale(
        example.status,
        example.launch_year,
        example.as_of_year,
        example.lifecycle_years,
        example.fleet,
    )
    assert stale is example.stale


@pytest.mark.parametrize("example", POLICY.ranking.outclass_examples, ids=lambda e: e.name)
def test_outclass_examples(example: object) -> None:
    from gpuadvisor.engine.policy_ranking import OutclassExample

    assert isinstance(example, OutclassExample)
    outclassed = POLICY.ranking.outclasses(
        example.gpu_class,
        example.other_class,
        example.cost_usd,
        example.other_cost_usd,
        example.compute_ratio,
        example.bandwidth_ratio,
        example.ecc,
        example.other_ecc,
    )
    assert outclassed is example.outclassed


def test_the_ranking_section_has_each_kind_of_example() -> None:
    ranking = POLICY.ranking
    assert ranking.target_examples and ranking.cost_band_examples and ranking.stale_examples
    assert ranking.outclass_examples
    assert ranking.why.strip() and all(url.startswith("https://") for url in ranking.sources)


@pytest.mark.parametrize("example", POLICY.displays.examples, ids=lambda e: e.name)
def test_sync_board_examples(example: object) -> None:
    """Genlock or frame lock asked: a board even for one card; several cards of
    independent screens: none (rules/_policy.toml [displays])."""
    from gpuadvisor.engine.displays import Outfit, accessory_needs, outfit_of

    assert isinstance(example, DisplaysExample)
    assert POLICY.displays.board_wanted(example.display_sync, example.cards) is example.board
    facts = {"requirements.display_sync": example.display_sync}
    outfit = outfit_of(facts, POLICY)
    assert isinstance(outfit, Outfit)
    sku = next(s for s in load_catalog().skus if s.id == "rtx-a6000")
    shape = "single-larger-gpu"
    boards = accessory_needs(sku, shape, example.cards, example.cards, 1, 1, outfit, ())
    assert bool(boards) is example.board
