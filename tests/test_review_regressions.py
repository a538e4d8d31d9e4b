"""Wrong answers a review of generated purchase questions caught (an expert reading each
report), on the bundled catalog, pinned so they cannot come back."""

from __future__ import annotations

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.capacity import CardFit, fit_rows, per_job_gib, usable_gib
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.options import generate_options
from gpuadvisor.engine.rules import RuleBase, load_rules
from gpuadvisor.inputs.catalog import Catalog, Sku, load_catalog
from gpuadvisor.inputs.profile import parse_profile

from .test_decide import advise_text


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def rules() -> RuleBase:
    return load_rules()


def _sku(catalog: Catalog, sku_id: str) -> Sku:
    return next(s for s in catalog.skus if s.id == sku_id)


# -- the A16 is four GPUs of 16 GB, not one of 64 ------------------------------------


def test_a16_memory_and_bandwidth_are_one_gpus(catalog: Catalog, rules: RuleBase) -> None:
    """A job sees one GPU of the board: 16 GB less the driver's reserve, 200 GB/s."""
    a16 = _sku(catalog, "a16")
    assert a16.gpus_per_board == 4
    assert (a16.gpu_vram_gib, a16.gpu_bandwidth_gbs) == (16.0, 200.0)
    usable = usable_gib(a16, False, rules.policy)
    assert 14.0 < usable < 16.0
    one_gpu_card = _sku(catalog, "geforce-rtx-4060-ti-16gb")
    assert usable == pytest.approx(usable_gib(one_gpu_card, False, rules.policy), abs=1.0)


def test_a16_options_never_give_a_job_more_than_one_gpu(catalog: Catalog, rules: RuleBase) -> None:
    """Every option of the A16 for one 40 GiB job gives it at most one GPU's memory
    (a split model: one GPU's share of each board), so FIT-001 excludes them all."""
    text = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 40
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
gpu_count_max = 2
psu_headroom_w = 2000
[budget]
max_usd = 100000
"""
    decision = advise_text(text, catalog, rules)
    assert all(p.sku != "a16" for p in decision.picks)
    profile = parse_profile('schema = "gpuadvisor/profile/v1"\n' + text)
    facts = build_facts(profile, catalog, None).values
    prepared = Engine(catalog, rules).prepare(facts)
    a16 = [o for o in generate_options(catalog.skus, prepared, rules.policy) if o.sku.id == "a16"]
    assert a16
    one_gpu = usable_gib(_sku(catalog, "a16"), True, rules.policy)
    for option in a16:
        assert option.vram_per_job_gib <= one_gpu * option.cards_per_job, option
        assert option.bandwidth_gbs == 200.0


def test_two_20_gib_jobs_in_a_tight_2u_get_two_l4s_not_one_a16(
    catalog: Catalog, rules: RuleBase
) -> None:
    """The A16 was picked as if two 20 GiB jobs shared its 64 GB; each GPU has 16."""
    text = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 20
concurrent_jobs = 2
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 2
psu_headroom_w = 300
[budget]
max_usd = 10000
"""
    decision = advise_text(text, catalog, rules)
    top = decision.picks[0]
    assert (top.sku, decision.recommendation.gpu_count) == ("l4", 2)
    assert top.jobs_served == 2


def test_desktops_on_an_a16_are_counted_per_gpu(catalog: Catalog, rules: RuleBase) -> None:
    """vGPU profiles divide each GPU's 16 GB: 6 GiB desktops fit two to a GPU, eight to
    the board (not ten, as 64 / 6 would say)."""
    a16 = _sku(catalog, "a16")
    facts = {
        "workload.kind": "vdi",
        "workload.vram_need_gib": 6.0,
        "workload.concurrent_jobs": 40,
    }
    usable = usable_gib(a16, True, rules.policy)
    ((per_card, space, basis, job),) = fit_rows((a16,), (usable,), facts, rules.policy)
    assert (per_card, basis, job) == (8, 16.0, 8.0)
    assert per_job_gib(CardFit(space, basis, per_card, a16.gpus_per_board)) == 8.0


def test_one_gpu_cards_count_as_before() -> None:
    """The board arithmetic leaves a one-GPU card's share exactly as it was."""
    for per_card in range(1, 9):
        assert per_job_gib(CardFit(40.0, 48.0, per_card)) == round(48.0 / per_card, 3)


# -- a graphics seat needs display outputs --------------------------------------------

VIZ = """
[workload]
kind = "{kind}"
objective = "latency"
interactive = {interactive}
vram_need_gib = 70
[requirements]
vgpu = {vgpu}
[platform]
chassis = "rack-4u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 1
psu_headroom_w = 900
[budget]
max_usd = 40000
"""


def _outputs(catalog: Catalog, decision: Decision) -> list[int]:
    return [_sku(catalog, p.sku).display_outputs for p in decision.picks]


@pytest.mark.parametrize("kind", ["visualization", "cad-cae"])
def test_a_graphics_seat_is_never_given_a_card_without_outputs(
    kind: str, catalog: Catalog, rules: RuleBase
) -> None:
    """An H100 NVL was recommended for a designer's monitors (it has no display engine)."""
    decision = advise_text(VIZ.format(kind=kind, interactive="true", vgpu="false"), catalog, rules)
    assert decision.picks
    assert all(n > 0 for n in _outputs(catalog, decision)), [p.name for p in decision.picks]
    enough = decision.enough
    assert enough is None or _sku(catalog, enough.pick.sku).display_outputs > 0
    assert "DISP-001" in {f.rule for f in decision.findings}


def test_a_batch_solver_may_still_use_a_compute_card(catalog: Catalog, rules: RuleBase) -> None:
    """No screen, no display rule: a non-interactive CAE run judges compute cards."""
    decision = advise_text(
        VIZ.format(kind="cad-cae", interactive="false", vgpu="false"), catalog, rules
    )
    assert "DISP-001" not in {f.rule for f in decision.findings}


# -- vGPU desktops get whole profiles -------------------------------------------------

DESKTOPS = """
[workload]
kind = "vdi"
objective = "fleet-simplicity"
interactive = true
vram_need_gib = {need}
concurrent_jobs = {users}
[requirements]
vgpu = true
vgpu_edition = "vws"
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 1
psu_headroom_w = 800
[budget]
max_usd = 20000
"""


def test_5_gib_desktops_get_6_gib_profiles(catalog: Catalog, rules: RuleBase) -> None:
    """19 desktops of 5 GiB were "served" by one 96 GB card with 5.05 GiB profiles; the
    profile is 6 GiB, so the card holds 16 and the report says 3 are left."""
    decision = advise_text(DESKTOPS.format(need=5, users=19), catalog, rules)
    top = decision.picks[0]
    assert top.vram_gib == 96.0 and top.usable_vram_gib == 6.0
    capacity = decision.recommendation.capacity
    assert capacity is not None and capacity.shortfall
    assert (capacity.jobs_served, capacity.hosts_needed) == (16, 2)
    assert "a 6 GiB vGPU profile per user" in top.why


def test_fewer_desktops_than_fit_get_a_real_profile(catalog: Catalog, rules: RuleBase) -> None:
    """Ten desktops on a 96 GB card were given 9.6 GiB each, a size no vGPU offers."""
    decision = advise_text(DESKTOPS.format(need=8, users=10), catalog, rules)
    for pick in decision.picks:
        per_gpu = pick.vram_gib / pick.gpus_per_board
        assert pick.usable_vram_gib is not None
        profile = pick.usable_vram_gib
        assert profile in rules.policy.headroom.profiles.sizes_gib, (pick.name, profile)
        assert per_gpu / profile == round(per_gpu / profile), (pick.name, profile)
    assert "an 8 GiB vGPU profile per user" in decision.picks[0].why


def test_a_data_parallel_job_is_not_told_memory_does_not_add_up(
    catalog: Catalog, rules: RuleBase
) -> None:
    """A DDP job over 8 cards with a 40 GiB replica was told to buy one card because
    "memory does not add up across cards": each replica sits on one card, which FIT-001
    already checks, so VRAM-001's argument is not about this job."""
    text = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 40
parallelism = "data-parallel"
gpus_per_job = 8
[platform]
chassis = "rack-4u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 8
psu_headroom_w = 4000
[team]
multi_gpu_experience = "expert"
[budget]
max_usd = 100000
"""
    decision = advise_text(text, catalog, rules)
    assert "VRAM-001" not in {f.rule for f in decision.findings}
    assert "memory does not add up" not in decision.recommendation.headline.lower()


def tenants(need: float, jobs: int, *, psu_w: int = 1600, budget_usd: int = 60000) -> str:
    """vCS compute tenants of ``need`` GiB each in a 2U server."""
    return f"""
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = {need}
concurrent_jobs = {jobs}
[requirements]
vgpu = true
vgpu_edition = "vcs"
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 2
psu_headroom_w = {psu_w}
[budget]
max_usd = {budget_usd}
"""


def test_vgpu_compute_tenants_share_cards(catalog: Catalog, rules: RuleBase) -> None:
    """Sixteen vCS notebook tenants were given a card each ("8 hosts like this") because
    their kind of work is training; under vGPU each tenant gets a profile of a card."""
    text = tenants(8, 16, psu_w=800, budget_usd=30000)
    decision = advise_text(text, catalog, rules)
    capacity = decision.recommendation.capacity
    assert capacity is not None
    assert capacity.jobs_served >= 8 and capacity.hosts_needed <= 2
    top = decision.picks[0]
    assert top.usable_vram_gib is not None and top.usable_vram_gib >= 8.5  # need + headroom
    assert top.vgpu_profile_gib in rules.policy.headroom.profiles.sizes_gib
    # A process in a profile allocates less than its size (reserve and ECC's share).
    assert top.usable_vram_gib < top.vgpu_profile_gib
    assert "of it usable for a need of 8 GiB" in top.why


# -- a vGPU profile gives a process no more than the GPU does ------------------------


def test_a_whole_gpu_profile_holds_no_more_than_bare_metal(
    catalog: Catalog, rules: RuleBase
) -> None:
    """A whole-GPU 48 GiB profile "held" a 45 GiB compute job (47.25 GiB with its
    headroom) that the same card on bare metal excludes (46.93 GiB usable): a profile
    cannot give a process more than the GPU gives one."""
    decision = advise_text(tenants(45, 1), catalog, rules)
    for pick in decision.picks:
        assert pick.usable_vram_gib is not None and pick.vram_gib / pick.gpus_per_board > 48
        assert pick.usable_vram_gib >= 47.25, pick.name
    facts = build_facts(parse_profile(tenants(45, 1)), catalog, None).values
    for sku in catalog.skus:
        ((_per_card, space, _basis, job),) = fit_rows(
            (sku,), (usable_gib(sku, True, rules.policy),), facts, rules.policy
        )
        assert job is not None and job <= space, sku.id


def test_a_compute_tenant_gets_its_profiles_share_of_usable_memory(
    catalog: Catalog, rules: RuleBase
) -> None:
    """Two 22.8 GiB tenants (23.94 GiB with headroom) on a 48 GB card: a 24 GiB profile
    gives a process about 23.5 GiB there, so each needs a larger profile and the card
    holds one of them, not two."""
    facts = build_facts(parse_profile(tenants(22.8, 2)), catalog, None).values
    sku = _sku(catalog, "rtx-6000-ada")
    space = usable_gib(sku, True, rules.policy)
    ((per_card, _space, basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
    assert (basis, per_card) == (48.0, 1)
    assert job == space
    facts = build_facts(parse_profile(tenants(20, 2)), catalog, None).values
    ((per_card, _space, basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
    assert per_card == 2 and job is not None
    assert job == round(24 * space / 48, 3) and 21.0 <= job < 24.0


def test_a_desktop_profile_is_its_size_below_the_whole_gpu(
    catalog: Catalog, rules: RuleBase
) -> None:
    """Desktops are sized in profiles (an 8 GiB desktop gets an 8 GiB profile), but the
    whole-GPU profile gives a desktop only what the GPU gives a process."""
    for need, users in ((8, 10), (48, 1)):
        facts = build_facts(
            parse_profile(DESKTOPS.format(need=need, users=users)), catalog, None
        ).values
        sku = _sku(catalog, "rtx-6000-ada")
        space = usable_gib(sku, False, rules.policy)
        ((_per_card, _space, _basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
        assert job == (8.0 if need == 8 else space) and space < 48.0


def test_a_card_on_quote_does_not_outrank_a_priced_one_that_serves_as_many(
    catalog: Catalog, rules: RuleBase
) -> None:
    """On a $3,000 budget a 72 GB card with no price (its 48 GB sibling lists at $4,500)
    was the pick over 2 cards at $3,000 serving all three jobs."""
    text = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 11
concurrent_jobs = 3
[platform]
chassis = "tower"
airflow = "open"
max_gpu_slot_width = 3
gpu_count_max = 2
psu_headroom_w = 700
[budget]
max_usd = 3000
"""
    decision = advise_text(text, catalog, rules)
    top = decision.picks[0]
    assert top.total_price_usd is not None and top.total_price_usd <= 3000
    assert top.jobs_served == 3
    reasons = {r.option: r.reason for r in decision.rejected}
    # The 72 GB card is on quote, and it outclasses a $4,500 card: over the budget too.
    reason = reasons["single-larger-gpu"]
    assert "priced on quote" in reason or "serves 2 of 3 jobs" in reason, reason


def test_the_enough_card_says_what_it_leaves_of_a_latency_target(
    catalog: Catalog, rules: RuleBase
) -> None:
    """ "Enough for the need" was said of a card leaving 5 answer tokens within the
    target, against 45 for the pick, without a word on the target."""
    text = """
[workload]
kind = "inference"
objective = "latency"
latency_slo_ms = 1500
interactive = true
[workload.model]
name = "qwen2.5-32b"
precision = "bf16"
context_tokens = 8192
concurrent_sequences = 4
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 2
psu_headroom_w = 800
[budget]
max_usd = 30000
"""
    decision = advise_text(text, catalog, rules)
    enough, top = decision.enough, decision.picks[0]
    assert enough is not None and not enough.same_as_top
    assert top.speed is not None and enough.pick.speed is not None
    mine = top.speed.answer_tokens_within_slo
    theirs = enough.pick.speed.answer_tokens_within_slo
    assert mine is not None and theirs is not None and mine > theirs
    assert f"room for {mine} answer tokens within the 1,500 ms target" in enough.text


def test_a_no_fit_report_lists_only_changes_that_find_a_card(
    catalog: Catalog, rules: RuleBase
) -> None:
    """With no card meeting every requirement, "What would change" listed changes whose
    answer was again "no card meets every requirement"."""
    text = """
[workload]
kind = "simulation"
objective = "throughput"
vram_need_gib = 20
needs_fp64 = true
job_hours = 20
[platform]
chassis = "tower"
airflow = "open"
max_gpu_slot_width = 2
gpu_count_max = 2
psu_headroom_w = 700
[budget]
max_usd = 10000
"""
    decision = advise_text(text, catalog, rules)
    assert not decision.picks
    assert decision.sensitivity
    assert all("no card meets every requirement" not in s.to for s in decision.sensitivity)


def test_one_slot_position_is_singular(catalog: Catalog, rules: RuleBase) -> None:
    """A single-slot card "takes 1 slot positions"."""
    from gpuadvisor.render.purchase import purchase_lines

    text = """
[workload]
kind = "vdi"
objective = "fleet-simplicity"
vram_need_gib = 4
concurrent_jobs = 8
[requirements]
vgpu = true
vgpu_edition = "vws"
[platform]
chassis = "rack-1u"
airflow = "front-to-back"
max_gpu_slot_width = 1
gpu_count_max = 2
psu_headroom_w = 300
[budget]
max_usd = 10000
"""
    decision = advise_text(text, catalog, rules)
    assert decision.picks[0].slots_total == 1
    fits = [line for line in purchase_lines(decision) if line.startswith("Fit:")]
    assert fits == [
        f"Fit: 1 card in the host takes 1 slot position and {fits[0].split(' and ')[1]}"
    ]


# -- a card without Virtual PC is licensed in vWS ------------------------------------


def test_a_desktop_on_a_card_without_vpc_is_costed_with_vws(
    catalog: Catalog, rules: RuleBase
) -> None:
    """Office desktops with no edition stated are assumed Virtual PC; the pick, a card
    NVIDIA supports with vWS but not vPC, was costed at vPC's $50 a user-year."""
    text = DESKTOPS.replace('vgpu_edition = "vws"\n', "").format(need=2, users=48)
    decision = advise_text(text, catalog, rules)
    years = parse_profile(text).requirements.lifecycle_years
    editions: dict[str, str] = {}
    for pick in decision.picks:
        sku = _sku(catalog, pick.sku)
        edition = "vPC" if "vpc" in sku.vgpu_editions else "vWS"
        editions[pick.sku] = edition
        assert pick.licence_edition == edition, pick.name
        rate = 50.0 if edition == "vPC" else 250.0
        assert pick.licence_cost_usd == rate * pick.jobs_served * years, pick.name
    assert "vWS" in editions.values(), editions
    top = decision.picks[0]
    if top.licence_edition == "vWS":
        assert "vWS licences (NVIDIA supports vWS, not vPC, on it)" in top.why


def test_a_seat_given_a_server_board_is_told_its_outputs_rest_on_a_weak_source(
    catalog: Catalog, rules: RuleBase
) -> None:
    """A visualization seat got the RTX PRO 6000 Server Edition on the strength of its
    display outputs, a value from a news copy (and believed disabled by default), with
    no word to check it."""
    text = """
[workload]
kind = "visualization"
objective = "latency"
interactive = true
vram_need_gib = 60
[platform]
chassis = "rack-2u"
airflow = "front-to-back"
max_gpu_slot_width = 2
gpu_count_max = 1
psu_headroom_w = 800
[budget]
max_usd = 20000
"""
    decision = advise_text(text, catalog, rules)
    assert decision.picks[0].sku == "rtx-pro-6000-blackwell-server"
    caveats = [a for a in decision.assumptions if "display_outputs = 4" in a]
    assert caveats and "drives a monitor" in caveats[0]


def test_every_gpu_offers_its_whole_frame_buffer_as_a_profile(
    catalog: Catalog, rules: RuleBase
) -> None:
    """The policy's size list has no 80, 94 or 141 GB profile, so under vGPU an A100 80GB,
    an H100 or an H200 NVL gave a 60 GiB compute tenant 16 GiB at most and FIT-001
    excluded the cards vCS is made for. A whole-GPU profile always exists, and half."""
    facts = build_facts(parse_profile(tenants(60, 2)), catalog, None).values
    for sku_id in ("a100-80gb-pcie", "h100-pcie", "h100-nvl", "h200-nvl"):
        sku = _sku(catalog, sku_id)
        space = usable_gib(sku, True, rules.policy)
        ((per_card, _space, _basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
        assert per_card == (2 if sku_id == "h200-nvl" else 1) and job is not None, sku_id
        assert job >= 63.0, (sku_id, job)  # 60 GiB and its headroom (H200 NVL: 70C)
    facts = build_facts(parse_profile(tenants(30, 2)), catalog, None).values
    sku = _sku(catalog, "h100-pcie")
    space = usable_gib(sku, True, rules.policy)
    ((per_card, _space, _basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
    assert per_card == 2 and job is not None and 31.5 <= job < 40.0  # in 40 GiB profiles


def test_listed_vgpu_types_are_the_profiles_of_their_card(
    catalog: Catalog, rules: RuleBase
) -> None:
    """An H100 NVL's vGPU types are 4, 6, 11, 15, 23, 47 and 94 GB (NVIDIA's types
    reference); the policy's sizes that cut 94 GB whole are only 1, 2 and 47, so eight
    20 GiB tenants got 47 GiB profiles, two to a card, instead of 23 GiB ones, four."""
    facts = build_facts(parse_profile(tenants(20, 8)), catalog, None).values
    sku = _sku(catalog, "h100-nvl")
    assert sku.vgpu_profiles_gib == (4.0, 6.0, 11.0, 15.0, 23.0, 47.0, 94.0)
    space = usable_gib(sku, True, rules.policy)
    ((per_card, _space, _basis, job),) = fit_rows((sku,), (space,), facts, rules.policy)
    assert per_card == 4 and job is not None and 21.0 <= job < 23.0
    h200 = _sku(catalog, "h200-nvl")
    facts = build_facts(parse_profile(tenants(30, 12)), catalog, None).values
    space = usable_gib(h200, True, rules.policy)
    ((per_card, _space, _basis, job),) = fit_rows((h200,), (space,), facts, rules.policy)
    assert per_card == 4 and job is not None and 31.5 <= job < 35.0  # 35C, four per GPU


def test_a_desktop_above_2_gb_is_licensed_in_vws(catalog: Catalog, rules: RuleBase) -> None:
    """Virtual PC licenses B-series profiles (up to 2 GB); 6 GiB desktops with no edition
    stated were costed at vPC's $50 a user-year, and a stated vpc edition was taken as
    is."""
    text = DESKTOPS.replace('vgpu_edition = "vws"\n', "").format(need=6, users=16)
    decision = advise_text(text, catalog, rules)
    years = parse_profile(text).requirements.lifecycle_years
    for pick in decision.picks:
        assert pick.licence_edition == "vWS", pick.name
        assert pick.licence_cost_usd == 250.0 * pick.jobs_served * years
    stated = DESKTOPS.replace('vgpu_edition = "vws"', 'vgpu_edition = "vpc"').format(
        need=6, users=16
    )
    decision = advise_text(stated, catalog, rules)
    assert "VGPU-006" in {f.rule for f in decision.findings}
    small = DESKTOPS.replace('vgpu_edition = "vws"', 'vgpu_edition = "vpc"').format(
        need=2, users=16
    )
    assert "VGPU-006" not in {f.rule for f in advise_text(small, catalog, rules).findings}


# -- a card on quote costs at least the card it outclasses ----------------------------

QUOTED = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 50
[platform]
chassis = "workstation"
airflow = "open"
max_gpu_slot_width = 2
gpu_count_max = 1
psu_headroom_w = 800
[budget]
max_usd = {budget}
"""


def test_a_quoted_card_is_held_to_the_budget_by_the_card_it_outclasses(
    catalog: Catalog, rules: RuleBase
) -> None:
    """The 72 GB RTX PRO 5000 Blackwell (price on quote) was recommended on budgets of
    $428 to $1,498, below the $4,500 of the 48 GB card it outclasses."""
    sku = _sku(catalog, "rtx-pro-5000-blackwell-72gb")
    assert sku.price_usd is None
    assert (sku.price_floor_usd, sku.price_floor_name) == (4500.0, "NVIDIA RTX PRO 5000 Blackwell")
    assert _sku(catalog, "rtx-pro-5000-blackwell").price_floor_usd is None  # priced
    assert _sku(catalog, "a16").price_floor_usd is None  # outclasses no priced card
    under = advise_text(QUOTED.format(budget=4000), catalog, rules)
    assert all(p.sku != sku.id for p in under.picks)
    over = advise_text(QUOTED.format(budget=5000), catalog, rules)
    top = over.picks[0]
    assert top.sku == sku.id and top.price_floor_usd == 4500.0
    assert "at least $4,500, held to the budget" in top.why


def test_what_would_change_tries_dropping_the_fp64_need(catalog: Catalog, rules: RuleBase) -> None:
    """An FP64 solver in a tower was told only "if the airflow were front-to-back"; with
    needs_fp64 = false a $4,500 card in the same tower does, which the scan never tried."""
    text = """
[workload]
kind = "simulation"
objective = "correctness"
vram_need_gib = 35.0
needs_fp64 = true
[requirements]
ecc = "required"
lifecycle_years = 5
[platform]
chassis = "tower"
airflow = "open"
max_gpu_slot_width = 2
gpu_count_max = 2
psu_headroom_w = 900
circuit_w = 1800
[budget]
max_usd = 35000.0
"""
    decision = advise_text(text, catalog, rules)
    assert "workload.needs_fp64" in {s.input for s in decision.sensitivity}
