"""Properties that must hold for every profile, checked over generated profiles."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.decision.build import decide
from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.inputs.profile import Profile

from .conftest import FIXTURES

RULES = load_rules()
CATALOGS = {"fixture": load_catalog(base=FIXTURES / "catalog"), "bundled": load_catalog()}

profiles = st.fixed_dictionaries(
    {
        "workload": st.fixed_dictionaries(
            {
                "kind": st.sampled_from(
                    [
                        "training",
                        "inference",
                        "rendering",
                        "cad-cae",
                        "simulation",
                        "visualization",
                        "vdi",
                        "media",
                        "mixed",
                    ]
                ),
                "objective": st.sampled_from(
                    ["latency", "throughput", "correctness", "fleet-simplicity"]
                ),
                "vram_need_gib": st.floats(min_value=0.5, max_value=200, allow_nan=False),
                "concurrent_jobs": st.integers(min_value=1, max_value=40),
                "parallelism": st.sampled_from(["none", "data-parallel", "model-parallel"]),
                "model_parallel_ready": st.booleans(),
                "sync_heavy": st.booleans(),
                "job_hours": st.floats(min_value=0.1, max_value=500),
                "frame_pacing_critical": st.booleans(),
                "io_pattern": st.sampled_from(
                    ["local-nvme", "network-fs", "object-store", "in-memory"]
                ),
                "small_files": st.booleans(),
            }
        ),
        "requirements": st.fixed_dictionaries(
            {
                "ecc": st.sampled_from(["required", "preferred", "no"]),
                "silent_corruption_unacceptable": st.booleans(),
                "certified_drivers": st.booleans(),
                "display_sync": st.booleans(),
                "vgpu": st.booleans(),
                "lifecycle_years": st.integers(min_value=1, max_value=10),
                "fleet_homogeneity": st.booleans(),
                "downtime_cost_per_hour_usd": st.sampled_from([0.0, 100.0, 500.0, 5000.0]),
            }
        ),
        "platform": st.fixed_dictionaries(
            {
                "chassis": st.sampled_from(
                    ["tower", "workstation", "rack-1u", "rack-2u", "rack-4u"]
                ),
                "airflow": st.sampled_from(["open", "front-to-back", "restricted"]),
                "max_gpu_slot_width": st.integers(min_value=1, max_value=4),
                "gpu_count_max": st.integers(min_value=1, max_value=8),
                "psu_headroom_w": st.floats(min_value=50, max_value=5000),
                "cpu_sockets": st.integers(min_value=1, max_value=2),
                "nvlink_possible": st.booleans(),
            }
        ),
        "team": st.fixed_dictionaries(
            {"multi_gpu_experience": st.sampled_from(["none", "some", "expert"])}
        ),
        "budget": st.fixed_dictionaries({"max_usd": st.floats(min_value=200, max_value=200_000)}),
    }
)

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def run(data: dict[str, Any], catalog: Catalog) -> Decision:
    profile = Profile.model_validate(data)
    return decide(profile, Engine(catalog, RULES), build_facts(profile, catalog), sensitivity=False)


def check_invariants(data: dict[str, Any], decision: Decision) -> None:
    req, plat = data["requirements"], data["platform"]
    if not decision.picks:
        assert any(f.rule == "ENGINE-NOFIT-001" for f in decision.findings)
        return
    for pick in decision.picks:
        if req["ecc"] == "required" or req["silent_corruption_unacceptable"]:
            assert pick.ecc
        if req["display_sync"]:
            assert pick.frame_lock
        if req["vgpu"]:
            assert pick.vgpu
        if plat["chassis"] in ("rack-1u", "rack-2u"):
            assert pick.cooling != "open-air"
        if plat["airflow"] != "front-to-back":
            assert pick.cooling != "passive"
        assert pick.slot_width <= plat["max_gpu_slot_width"]
        assert pick.tdp_w * pick.count <= plat["psu_headroom_w"]
        # A card on quote has no price to hold against the budget (FIT-004 keeps it,
        # and the report says "budget not checked").
        if pick.total_price_usd is None:
            assert pick.price_kind == "quote-needed"
        else:
            assert pick.total_price_usd <= data["budget"]["max_usd"]
        assert pick.count <= plat["gpu_count_max"]
        per_job = (
            pick.vram_gib * pick.count * 0.85
            if decision.recommendation.shape == "multi-gpu-model-parallel"
            else pick.vram_gib
        )
        assert per_job >= data["workload"]["vram_need_gib"] - 1e-6


@SETTINGS
@given(profiles, st.sampled_from(sorted(CATALOGS)))
def test_engine_never_crashes_and_hard_requirements_hold(data: dict[str, Any], which: str) -> None:
    check_invariants(data, run(data, CATALOGS[which]))


@SETTINGS
@given(profiles)
def test_same_inputs_give_byte_identical_json(data: dict[str, Any]) -> None:
    catalog = CATALOGS["fixture"]
    assert run(data, catalog).to_json() == run(data, catalog).to_json()


def _top_memory(decision: Decision) -> float | None:
    if not decision.picks:
        return None
    top = decision.picks[0]
    if decision.recommendation.shape == "multi-gpu-model-parallel":
        return top.vram_gib * top.count
    return top.vram_gib


@SETTINGS
@given(profiles, st.floats(min_value=1.0, max_value=3.0))
def test_raising_memory_need_never_lowers_top_pick_memory(
    data: dict[str, Any], factor: float
) -> None:
    catalog = CATALOGS["fixture"]
    before = _top_memory(run(data, catalog))
    bigger = {
        **data,
        "workload": {
            **data["workload"],
            "vram_need_gib": data["workload"]["vram_need_gib"] * factor,
        },
    }
    after = _top_memory(run(bigger, catalog))
    if before is not None and after is not None:
        assert after >= before


#: Facts sensitivity changes, with values that cross the catalog's thresholds.
_TRIAL_CHANGES = st.one_of(
    st.tuples(st.just("workload.vram_need_gib"), st.sampled_from([4.0, 16.5, 24.5, 48.5, 90.0])),
    st.tuples(st.just("workload.concurrent_jobs"), st.sampled_from([1, 2, 3, 8, 16])),
    st.tuples(st.just("budget.max_usd"), st.sampled_from([999.0, 2500.0, 9000.0, 60000.0])),
    st.tuples(st.just("platform.gpu_count_max"), st.sampled_from([1, 2, 4, 8])),
    st.tuples(st.just("platform.psu_headroom_w"), st.sampled_from([150.0, 450.0, 1600.0])),
    st.tuples(st.just("requirements.lifecycle_years"), st.sampled_from([1, 3, 7])),
    st.tuples(
        st.just("workload.objective"),
        st.sampled_from(["latency", "throughput", "correctness", "fleet-simplicity"]),
    ),
    st.tuples(st.just("requirements.vgpu"), st.booleans()),
    st.tuples(st.just("requirements.display_sync"), st.booleans()),
    st.tuples(st.just("platform.airflow"), st.sampled_from(["open", "front-to-back"])),
)
