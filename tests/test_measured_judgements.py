"""The judgements built on measured evidence (issue #15), on captures of the shapes the
issue names:

- ``judge-rtx-4090-load-q.txt``: GPU 0 of ``8x-rtx-4090_535.154.05_q.txt`` in the shared
  real captures (leptonai/gpud testdata, Apache-2.0), rewritten as the same card under
  load: 98 % busy, SM 2,745 of 3,105 MHz "Max Clocks", 66 °C, every clock-event reason
  Not Active (how a healthy GeForce card reads).
- ``judge-rtx-4090-util34-q.txt``: the same card in one snapshot at 34 %.
- ``judge-mpstat-all-cpus-busy.txt``: ``mpstat -P ALL 5 1`` on an 8-CPU host, every CPU
  93-98 % busy over the interval (sysstat's documented layout, with its Average block).
- ``8x-h100-80gb-hbm3_535.161.08_q.txt`` (shared real captures): eight idle HGX H100s at
  67 of 700 W whose only active reasons are HW Slowdown and HW Power Brake Slowdown.
- ``examples/evidence/thermal-throttled-workstation``: a -q snapshot with thermal
  slowdown active beside a dmon window with thermal violations in 5 of 8 samples.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.evidence import load_evidence
from gpuadvisor.host.schema import Gpu, HostSnapshot, ReasonState, Sample, Utilisation
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.pipeline import advise

from .conftest import REAL_FIXTURES, REPO
from .evidence_support import FIXTURES

GEFORCE_LOAD = FIXTURES / "judge-rtx-4090-load-q.txt"
GEFORCE_34 = FIXTURES / "judge-rtx-4090-util34-q.txt"
MPSTAT_BUSY = FIXTURES / "judge-mpstat-all-cpus-busy.txt"
H100_BRAKE = REAL_FIXTURES / "smi-text" / "8x-h100-80gb-hbm3_535.161.08_q.txt"
THERMAL = REPO / "examples" / "evidence" / "thermal-throttled-workstation"

TRAINING = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 16
"""


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(TRAINING)
    return path


def _decide(profile: Path, catalog: Catalog, rules: RuleBase, *evidence: Path) -> Decision:
    return advise(profile, evidence=evidence, sensitivity=False, catalog=catalog, rules=rules)


def _rules(decision: Decision) -> set[str]:
    return {f.rule for f in (*decision.fix_first, *decision.findings)}


def _facts(*files: Path) -> dict[str, object]:
    return dict(derive_host_facts(load_evidence(list(files))).values)


# -- clocks: the card's own reasons and sustained clocks, never Max Clocks -----------


def test_a_healthy_geforce_below_its_max_clocks_is_not_throttling(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    facts = _facts(GEFORCE_LOAD)
    assert facts["gpu.sm_clock_ratio_busy"] == pytest.approx(2745 / 3105, abs=1e-3)
    assert facts["gpu.clock_held_fraction"] == 0.0
    assert facts["gpu.clock_basis"] == "snapshot"
    decision = _decide(profile, test_catalog, rulebase, GEFORCE_LOAD)
    assert not _rules(decision) & {"THERM-001", "THERM-002", "POWER-001", "POWER-002"}


def test_clock_drop_is_judged_against_the_cards_own_sustained_clock() -> None:
    steady = Gpu(
        index=0,
        samples=[Sample(util_pct=97, sm_clock_mhz=mhz) for mhz in (2790, 2760, 2745, 2775)],
    )
    sagging = Gpu(
        index=1,
        samples=[Sample(util_pct=99, sm_clock_mhz=mhz) for mhz in (2640, 2235, 1830, 1800)],
    )
    values = derive_host_facts(HostSnapshot(gpus=[steady])).values
    assert values["gpu.sm_clock_sustained_ratio"] == pytest.approx(2767.5 / 2790, abs=1e-3)
    assert values["gpu.clock_basis"] == "window"
    both = derive_host_facts(HostSnapshot(gpus=[steady, sagging])).values
    assert both["gpu.sm_clock_sustained_ratio"] == pytest.approx(2126.25 / 2640, abs=1e-3)


def test_throttling_workstation_still_fires_the_clock_rule(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = _decide(profile, test_catalog, rulebase, *sorted(THERMAL.glob("*")))
    fired = {f.rule: f for f in decision.fix_first}
    assert {"THERM-001", "THERM-002"} <= set(fired)
    assert "gpu.clock_basis = window" in fired["THERM-002"].evidence


# -- power: a cap under load, an external brake, an idle card --------------------------


def test_idle_h100s_with_the_power_brake_are_not_at_their_power_cap(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    facts = _facts(H100_BRAKE)
    assert facts["gpu.power_cap_fraction"] == 0.0
    assert facts["gpu.power_cap_draw_ratio"] < 0.15  # 67-72 of 700 W: idle, not capped
    assert facts["gpu.power_brake_basis"] == "snapshot"
    assert facts["gpu.power_brake_idle"] is True
    assert facts["gpu.power_brake_fraction"] is None  # no busy GPU
    decision = _decide(profile, test_catalog, rulebase, H100_BRAKE)
    fired = _rules(decision)
    assert "POWER-001" not in fired
    assert "POWER-002" not in fired  # the brake does not slow an idle card
    assert "POWER-004" in fired  # but it is said, as an external signal
    brake = next(f for f in decision.findings if f.rule == "POWER-004")
    assert "outside the GPU" in brake.rationale


def _one(**fields: object) -> dict[str, object]:
    return dict(derive_host_facts(HostSnapshot(gpus=[Gpu(index=0, **fields)])).values)  # type: ignore[arg-type]


def test_power_cap_under_load_is_told_from_the_brake_and_from_idle() -> None:
    busy = Utilisation(gpu_pct=99)
    capped = _one(
        utilisation=busy,
        power={"draw_w": 447.0, "enforced_limit_w": 450.0},
        throttle_reasons={"sw_power_cap": ReasonState(active=True)},
    )
    assert capped["gpu.power_cap_fraction"] == 1.0
    assert capped["gpu.power_cap_basis"] == "snapshot"
    assert capped["gpu.power_cap_draw_ratio"] == pytest.approx(447 / 450, abs=1e-3)
    braked = _one(
        utilisation=busy,
        power={"draw_w": 250.0, "enforced_limit_w": 700.0},
        throttle_reasons={
            "sw_power_cap": ReasonState(active=False),
            "hw_power_brake_slowdown": ReasonState(active=True),
        },
    )
    assert braked["gpu.power_cap_fraction"] == 0.0
    assert braked["gpu.power_brake_fraction"] == 1.0
    assert braked["gpu.power_brake_idle"] is None
    window = _one(
        samples=[Sample(util_pct=98, power_w=440.0) for _ in range(6)],
        power={"enforced_limit_w": 450.0},
        throttle_reasons={"sw_power_cap": ReasonState(fraction=0.45)},
    )
    assert window["gpu.power_cap_basis"] == "window"
    assert window["gpu.power_cap_draw_ratio"] == pytest.approx(440 / 450, abs=1e-3)


def test_a_snapshot_never_says_much_of_its_time(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase, tmp_path: Path
) -> None:
    """A -q snapshot of a busy card at its cap is advice to measure (POWER-003), not the
    fix-first "much of its time" (POWER-001)."""
    text = GEFORCE_LOAD.read_text()
    text = text.replace(
        "        SW Power Cap                      : Not Active",
        "        SW Power Cap                      : Active",
    ).replace(
        "Power Draw                        : 412.37 W",
        "Power Draw                        : 446.90 W",
    )
    capture = tmp_path / "capped-q.txt"
    capture.write_text(text)
    decision = _decide(profile, test_catalog, rulebase, capture)
    fired = _rules(decision)
    assert "POWER-001" not in fired
    assert "POWER-003" in fired


# -- fractions are shares, never counts --------------------------------------------------


def test_a_window_share_governs_a_snapshot_flag() -> None:
    """The -q snapshot says thermal slowdown is active; the dmon window says 5 of 8
    samples. The share is 62.5 %, as the per-GPU table says, not 1."""
    facts = _facts(*sorted(THERMAL.glob("*")))
    assert facts["gpu.thermal_limited_fraction"] == 0.625
    assert facts["gpu.thermal_basis"] == "window"


def test_shares_are_printed_as_percentages(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = _decide(profile, test_catalog, rulebase, *sorted(THERMAL.glob("*")))
    therm = next(f for f in decision.fix_first if f.rule == "THERM-001")
    assert "active in 62.5 % of the readings" in therm.rationale
    assert " of samples" not in therm.rationale
    assert "gpu.thermal_limited_fraction = 62.5 %" in therm.evidence
    shown = {m.name: m for m in decision.measured}
    assert shown["gpu.thermal_limited_fraction"].value == 0.625  # JSON keeps the number
    assert shown["gpu.thermal_limited_fraction"].unit == "share"
    [gpu] = decision.gpus
    reasons = next(v for v in gpu.values if v.name == "clock-event reasons active")
    assert "sw_thermal_slowdown (62.5 % of the window)" in str(reasons.value)


# -- CPU-bound from a CPU window, with the GPU figure one snapshot ---------------------


def test_cpu_bound_from_an_mpstat_window_beside_a_gpu_snapshot(
    profile: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    facts = _facts(GEFORCE_34, MPSTAT_BUSY)
    assert facts["host.cpu_busy_min_pct"] == 93.1
    assert facts["host.cpu_util_basis"] == "window"
    assert facts["host.gpu_util_basis"] == "snapshot"
    decision = _decide(profile, test_catalog, rulebase, GEFORCE_34, MPSTAT_BUSY)
    fired = {f.rule: f for f in decision.fix_first}
    assert "CPU-002" in fired
    assert "CPU-001" not in fired  # that one wants the GPU figure over a window too
    finding = fired["CPU-002"]
    assert "host.gpu_util_basis = snapshot" in finding.evidence
    assert "host.cpu_util_basis = window" in finding.evidence
    assert "confidence is medium" in finding.rationale


# -- every measured finding says what it rests on --------------------------------------

#: Facts whose value depends on when it was read, and the fact saying what they rest on.
BASIS_OF = {
    "host.gpu_util_mean_pct": "host.gpu_util_basis",
    "host.util_samples": "host.gpu_util_basis",
    "host.gpu_idle_beside_busy": "host.gpu_util_basis",
    "host.cpu_saturated_cores": "host.cpu_util_basis",
    "host.cpu_busy_min_pct": "host.cpu_util_basis",
    "host.iowait_pct": "host.cpu_util_basis",
    "gpu.thermal_limited_fraction": "gpu.thermal_basis",
    "gpu.power_cap_fraction": "gpu.power_cap_basis",
    "gpu.power_brake_fraction": "gpu.power_brake_basis",
    "gpu.clock_held_fraction": "gpu.clock_basis",
    "gpu.sm_clock_sustained_ratio": "gpu.clock_basis",
}
MEASURED_PREFIXES = ("THERM-", "POWER-", "CPU-", "UTIL-")


def test_every_measured_rule_shows_what_its_readings_rest_on(rulebase: RuleBase) -> None:
    """Fix-first rules and the measured preference rules read or show the basis fact of
    every time-dependent fact they judge, so the finding says snapshot or window."""
    missing = []
    for rule in rulebase.rules:
        if rule.kind != "fix-first" and not rule.id.startswith(MEASURED_PREFIXES):
            continue
        shown = set(rule.fact_names) | set(rule.placeholders)
        for name in rule.when.names:
            basis = BASIS_OF.get(name)
            if basis is not None and basis not in shown:
                missing.append(f"{rule.id}: {name} without {basis}")
    assert not missing, missing


def test_basis_facts_follow_the_number_of_readings() -> None:
    snap = HostSnapshot(gpus=[Gpu(index=0, utilisation=Utilisation(gpu_pct=34))])
    assert derive_host_facts(snap).values["host.gpu_util_basis"] == "snapshot"
    series = HostSnapshot(gpus=[Gpu(index=0, samples=[Sample(util_pct=30), Sample(util_pct=40)])])
    assert derive_host_facts(series).values["host.gpu_util_basis"] == "window"
    assert derive_host_facts(HostSnapshot()).values["host.gpu_util_basis"] is None


# -- PCIe replays: a rate, not a count since reset -------------------------------------


def test_a_link_retrying_40_times_a_minute_is_fixed_before_buying(
    profile: Path, tmp_path: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    def decide(**pcie: object) -> Decision:
        path = tmp_path / "host.json"
        snapshot = HostSnapshot(gpus=[Gpu(index=0, pcie=pcie), Gpu(index=1)])  # type: ignore[arg-type]
        path.write_text(snapshot.model_dump_json(by_alias=True))
        return _decide(profile, test_catalog, rulebase, path)

    fired = {f.rule: f for f in decide(replay_counter=90210, replays_per_min=40.0).fix_first}
    assert " ".join(fired["PCIE-003"].rationale.split()).startswith(
        "The PCIe link retried 40 times a minute on its worst GPU over the window. "
        "A replay is the link resending a packet that arrived damaged; NVIDIA's DCGM "
        "health check warns above 8 a minute."
    )
    # A large count since the last reset, growing by a few a minute, is not a fault.
    quiet = decide(replay_counter=90210, replays_per_min=2.5)
    assert "PCIE-003" not in _rules(quiet)
    assert _one(pcie={"replays_per_min": 2.5})["gpu.pcie_replays_per_min_max"] == 2.5
    assert _one(pcie={"replay_counter": 90210})["gpu.pcie_replays_per_min_max"] is None
