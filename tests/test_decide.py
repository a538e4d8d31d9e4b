"""The decision procedure on the small fixture catalog: scenarios named after what they pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.build import decide
from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.inputs.profile import parse_profile

from .conftest import FIXTURES


def advise_text(text: str, catalog: Catalog, rules: RuleBase, **host: object) -> Decision:
    profile = parse_profile('schema = "gpuadvisor/profile/v1"\n' + text)
    facts = build_facts(profile, catalog, host or None)  # type: ignore[arg-type]
    return decide(profile, Engine(catalog, rules), facts, profile_sha256="0" * 64)


LATENCY_40 = """
[workload]
kind = "inference"
objective = "latency"
latency_slo_ms = 2000
vram_need_gib = 40
"""

SWEEP = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 12
concurrent_jobs = 4
[platform]
gpu_count_max = 4
psu_headroom_w = 2000
"""


def test_big_model_latency_endpoint_gets_one_larger_card(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise_text(LATENCY_40, test_catalog, rulebase)
    assert decision.recommendation.shape == "single-larger-gpu"
    assert decision.recommendation.gpu_count == 1
    assert decision.picks and all(p.vram_gib >= 40 and p.count == 1 for p in decision.picks)
    fired = {f.rule for f in decision.findings}
    assert {"LAT-001", "VRAM-001", "FIT-001"} <= fired
    assert decision.fix_first == ()
    assert decision.recommendation.headline.startswith("Buy one ")


def test_independent_jobs_get_one_card_each(test_catalog: Catalog, rulebase: RuleBase) -> None:
    """Four jobs in a four-GPU tower: four cards, and cards that fit side by side. The
    fixture's consumer cards are open-air (and the 24 GiB one triple-slot): four of them
    stacked in a tower throttle each other, so the blower card wins (it used to be four
    open-air cards, which no build guide would sign)."""
    decision = advise_text(SWEEP, test_catalog, rulebase)
    assert decision.recommendation.shape == "two-independent-jobs"
    assert decision.recommendation.gpu_count == 4
    top = decision.picks[0]
    assert (top.count, top.jobs_served) == (4, 4)
    assert all(p.cooling != "open-air" for p in decision.picks)
    assert all(p.slots_total is not None and p.slots_total <= 8 for p in decision.picks)
    fired = {f.rule for f in decision.findings}
    assert {"JOBS-001", "AIR-004"} <= fired


def test_two_open_air_cards_in_a_two_gpu_tower(test_catalog: Catalog, rulebase: RuleBase) -> None:
    text = SWEEP.replace("gpu_count_max = 4", "gpu_count_max = 2")
    decision = advise_text(text, test_catalog, rulebase)
    r = decision.recommendation
    assert (r.shape, r.class_, r.gpu_count) == ("two-independent-jobs", "consumer", 2)
    assert r.capacity is not None and r.capacity.shortfall
    assert (r.capacity.jobs_served, r.capacity.hosts_needed) == (2, 2)


@pytest.mark.parametrize(
    ("extra", "check"),
    [
        ("[requirements]\necc = 'required'\n", lambda p: p.ecc),
        ("[requirements]\nsilent_corruption_unacceptable = true\n", lambda p: p.ecc),
        ("[requirements]\ndisplay_sync = true\n", lambda p: p.frame_lock),
        (
            "[requirements]\nvgpu = true\n[platform]\nchassis = 'rack-2u'\nairflow = 'front-to-back'\n",
            lambda p: p.vgpu,
        ),
        (
            "[platform]\nchassis = 'rack-2u'\nairflow = 'front-to-back'\n",
            lambda p: p.cooling != "open-air",
        ),
        ("[platform]\nmax_gpu_slot_width = 2\n", lambda p: p.slot_width <= 2),
        # 10 % of the headroom is held back for transients (rules/_policy.toml)
        ("[platform]\npsu_headroom_w = 340\n", lambda p: p.tdp_w * p.count <= 340 * 0.9),
        ("[budget]\nmax_usd = 7000\n", lambda p: p.total_price_usd <= 7000),
    ],
)
def test_hard_requirements_hold_for_every_pick(
    extra: str, check: object, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise_text(LATENCY_40 + extra, test_catalog, rulebase)
    assert decision.picks, decision.recommendation.headline
    assert all(check(p) for p in decision.picks)  # type: ignore[operator]


def test_no_fit_is_a_finding_never_a_relaxed_requirement(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise_text(LATENCY_40.replace("= 40", "= 200"), test_catalog, rulebase)
    assert decision.picks == ()
    assert decision.recommendation.gpu_count == 0
    nofit = [f for f in decision.findings if f.rule == "ENGINE-NOFIT-001"]
    assert nofit and nofit[0].severity == "blocker" and "FIT-001" in nofit[0].evidence
    assert "No card" in decision.recommendation.headline
    assert decision.recommendation.confidence == "low"


def test_fix_first_from_answers_keeps_the_purchase_as_after_that(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    text = SWEEP + "\n[workload_extra]\n"
    text = SWEEP.replace(
        "concurrent_jobs = 4", "concurrent_jobs = 4\nsmall_files = true\nio_pattern = 'network-fs'"
    )
    decision = advise_text(text, test_catalog, rulebase)
    assert [f.rule for f in decision.fix_first] == ["IO-001"]
    assert decision.recommendation.headline.startswith("Fix first: many small files")
    assert "After that: buy" in decision.recommendation.headline
    assert decision.picks


def test_fix_first_from_measurements(test_catalog: Catalog, rulebase: RuleBase) -> None:
    decision = advise_text(
        SWEEP,
        test_catalog,
        rulebase,
        **{
            "host.evidence_present": True,
            "host.util_samples": 60,
            "host.gpu_util_mean_pct": 31.0,
            "host.iowait_pct": 24.0,
            "host.disk_util_max_pct": 98.0,
        },
    )
    assert "IO-002" in [f.rule for f in decision.fix_first]
    fix = next(f for f in decision.fix_first if f.rule == "IO-002")
    assert "host.iowait_pct = 24 %" in fix.evidence
    assert {m.name for m in decision.measured} >= {"host.gpu_util_mean_pct", "host.iowait_pct"}


def test_one_idle_snapshot_is_not_judged_as_idle_gpus(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise_text(
        SWEEP,
        test_catalog,
        rulebase,
        **{"host.evidence_present": True, "host.util_samples": 1, "host.gpu_util_mean_pct": 0.0},
    )
    assert "UTIL-001" not in {f.rule for f in decision.fix_first}


def test_no_evidence_means_no_measured_fix_first(test_catalog: Catalog, rulebase: RuleBase) -> None:
    decision = advise_text(SWEEP, test_catalog, rulebase)
    assert decision.fix_first == ()
    assert decision.measured == ()


def test_rejected_lists_every_losing_shape_and_class_with_rules(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise_text(LATENCY_40, test_catalog, rulebase)
    rejected = {r.option: r for r in decision.rejected}
    # One job: independent jobs and a data-parallel job are no purchase for it, so they
    # are not listed as rejected.
    assert set(rejected) == {
        "multi-gpu-model-parallel",
        "consumer",
        "datacenter",
    }
    assert all(r.because for r in rejected.values())
    assert "FIT-001" in rejected["consumer"].because


def test_same_inputs_same_bytes(test_catalog: Catalog, rulebase: RuleBase) -> None:
    first = advise_text(LATENCY_40, test_catalog, rulebase).to_json()
    second = advise_text(LATENCY_40, test_catalog, rulebase).to_json()
    assert first == second


def test_sensitivity_is_found_by_rerunning(test_catalog: Catalog, rulebase: RuleBase) -> None:
    decision = advise_text(LATENCY_40, test_catalog, rulebase)
    flips = {(s.input, s.direction): s for s in decision.sensitivity}
    # Usable memory with headroom, not the label: the 32 GiB consumer card (31.45 GiB
    # usable) holds a job of at most 29.95 GiB; the 96 GiB card (94.93) one of 90.4.
    down = flips[("workload.vram_need_gib", "down")]
    assert down.flips_at == 29.9 and "consumer" in down.to
    up = flips[("workload.vram_need_gib", "up")]
    assert up.flips_at == 90.5 and up.to == "no card meets every requirement"
    # Each reported flip really flips, and one step nearer today's value it does not.
    for value, class_ in ((29.9, "consumer"), (30.0, "professional")):
        text = LATENCY_40.replace("= 40", f"= {value}")
        assert advise_text(text, test_catalog, rulebase).recommendation.class_ == class_


def test_approved_list_overlay_restricts_picks(tmp_path: Path, rulebase: RuleBase) -> None:
    (tmp_path / "t-pro-48.toml").write_text(
        'id = "t-pro-48"\npatch = true\napproved = true\nprice_usd = 5000\n'
    )
    catalog = load_catalog([tmp_path], base=FIXTURES / "catalog")
    decision = advise_text(LATENCY_40, catalog, rulebase)
    assert [p.sku for p in decision.picks] == ["t-pro-48"]
    assert decision.picks[0].price_usd == 5000 and decision.picks[0].price_kind == "negotiated"
    assert "CAT-001" in {f.rule for f in decision.findings}


def test_model_parallel_only_when_ready(test_catalog: Catalog, rulebase: RuleBase) -> None:
    text = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 45
parallelism = "model-parallel"
model_parallel_ready = true
[team]
multi_gpu_experience = "expert"
[platform]
psu_headroom_w = 2000
gpu_count_max = 4
[budget]
max_usd = 6000
"""
    decision = advise_text(text, test_catalog, rulebase)
    assert decision.recommendation.shape == "multi-gpu-model-parallel"
    assert decision.picks[0].count >= 2
    not_ready = advise_text(
        text.replace("model_parallel_ready = true", "model_parallel_ready = false"),
        test_catalog,
        rulebase,
    )
    assert not_ready.recommendation.shape != "multi-gpu-model-parallel"


def test_decisions_round_trip_through_their_schema(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    """A decision re-read from its JSON is the same decision."""
    for text in (LATENCY_40, SWEEP, LATENCY_40.replace("= 40", "= 200")):
        decision = advise_text(text, test_catalog, rulebase)
        again = Decision.model_validate_json(decision.to_json())
        assert again.to_json() == decision.to_json()


def test_output_models_are_validated_when_built() -> None:
    """The engine's values are checked against the published schema as a decision is
    built: a wrong type, a missing or an unknown field is an error, not a bad document."""
    from pydantic import ValidationError

    from gpuadvisor.decision.model import FactValue, Rejected

    assert FactValue(name="a", value=1, source="profile").unit == ""
    with pytest.raises(ValidationError):
        FactValue(name="a", value=[1], source="profile")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Rejected(option="x", because=())  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Rejected(option="x", because=(), reason="r", extra=1)  # type: ignore[call-arg]


def test_a_host_fact_outside_the_namespace_is_refused_by_name(test_catalog: Catalog) -> None:
    profile = parse_profile('schema = "gpuadvisor/profile/v1"\n' + LATENCY_40)
    known = {"host.gpu_count": 2}
    assert build_facts(profile, test_catalog, known).values["host.gpu_count"] == 2
    with pytest.raises(ValueError, match=r"\['host.gpu_colour', 'host.zz'\]"):
        build_facts(profile, test_catalog, {**known, "host.zz": 1, "host.gpu_colour": "red"})
