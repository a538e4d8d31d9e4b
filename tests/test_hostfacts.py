"""Host facts: every fact present, and each derivation rule pinned on small snapshots."""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.engine.factspec import HOST_FACTS
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.evidence import load_evidence
from gpuadvisor.host.schema import (
    Clocks,
    EccErrors,
    Event,
    Gpu,
    HostInfo,
    HostSnapshot,
    NumaBinding,
    P2PPair,
    Pcie,
    Power,
    Process,
    ReasonState,
    Sample,
    Source,
    Temperature,
    TopoLink,
    Topology,
    TopoPair,
    Utilisation,
)

from .evidence_support import FIXTURES

NAMES = [spec.name for spec in HOST_FACTS]


def facts(**snapshot: Any) -> dict[str, Any]:
    return derive_host_facts(HostSnapshot(**snapshot)).values


def test_no_evidence_means_every_fact_unknown() -> None:
    result = derive_host_facts(None)
    assert list(result.values) == NAMES
    assert result.values["host.evidence_present"] is False
    assert all(v is None for k, v in result.values.items() if k != "host.evidence_present")
    assert result.sources == {}


def test_every_fact_is_derived_from_a_real_snapshot() -> None:
    snapshot = load_evidence(sorted(FIXTURES.glob("two-gpu-*")))
    result = derive_host_facts(snapshot)
    assert list(result.values) == NAMES
    assert result.values["host.evidence_present"] is True
    for name, value in result.values.items():
        if value is not None:
            assert result.sources[name], name
    assert result.sources["gpu.pcie_width_degraded"] == (str(FIXTURES / "two-gpu-q.txt"),)
    assert set(result.sources["gpu.power_limited_fraction"]) == {
        str(FIXTURES / "two-gpu-q.txt"),
        str(FIXTURES / "two-gpu-dmon-violations.txt"),
    }


def test_fact_types_match_the_spec() -> None:
    snapshot = load_evidence(sorted(FIXTURES.glob("two-gpu-*")))
    values = derive_host_facts(snapshot).values
    for spec in HOST_FACTS:
        value = values[spec.name]
        if value is None:
            continue
        expected = {"number": (int, float), "bool": (bool,), "string": (str,)}[spec.type]
        assert isinstance(value, expected), spec.name
        if spec.type == "number":
            assert not isinstance(value, bool), spec.name
        if spec.choices:
            assert value in spec.choices, spec.name


def _gpu(**fields: Any) -> Gpu:
    return Gpu(**fields)


IDLE_GEN1 = _gpu(
    index=0,
    pcie=Pcie(gen_current=1, gen_max=4, width_current=16, width_max=16),
    utilisation=Utilisation(gpu_pct=0),
    power=Power(draw_w=20, enforced_limit_w=230),
)
BUSY_GEN3 = _gpu(
    index=1,
    pcie=Pcie(gen_current=3, gen_max=4, width_current=16, width_max=16),
    utilisation=Utilisation(gpu_pct=80),
)
BUSY_BY_POWER = _gpu(
    index=2,
    pcie=Pcie(gen_current=3, gen_max=4),
    utilisation=Utilisation(gpu_pct=20),
    power=Power(draw_w=150, limit_w=230),
)
BUSY_AT_MAX = _gpu(
    index=3, pcie=Pcie(gen_current=4, gen_max=4), utilisation=Utilisation(gpu_pct=99)
)


def test_pcie_generation_is_judged_only_under_load() -> None:
    assert facts(gpus=[IDLE_GEN1])["gpu.pcie_gen_degraded_under_load"] is None
    assert facts(gpus=[IDLE_GEN1, BUSY_AT_MAX])["gpu.pcie_gen_degraded_under_load"] is False
    assert facts(gpus=[IDLE_GEN1, BUSY_GEN3])["gpu.pcie_gen_degraded_under_load"] is True
    assert facts(gpus=[BUSY_BY_POWER])["gpu.pcie_gen_degraded_under_load"] is True
    unknown_load = _gpu(pcie=Pcie(gen_current=1, gen_max=4))
    assert facts(gpus=[unknown_load])["gpu.pcie_gen_degraded_under_load"] is None


def test_pcie_width_is_judged_idle_or_busy() -> None:
    narrow_idle = _gpu(pcie=Pcie(width_current=8, width_max=16), utilisation=Utilisation(gpu_pct=0))
    result = facts(gpus=[narrow_idle, BUSY_AT_MAX])
    assert result["gpu.pcie_width_degraded"] is True
    assert result["gpu.pcie_width_current_min"] == 8
    assert facts(gpus=[IDLE_GEN1])["gpu.pcie_width_degraded"] is False
    assert facts(gpus=[BUSY_AT_MAX])["gpu.pcie_width_degraded"] is None


def _pairs(*cells: tuple[str, str, TopoLink, int | None]) -> Topology:
    return Topology(pairs=[TopoPair(a=a, b=b, link=link, nvlinks=n) for a, b, link, n in cells])


def test_worst_gpu_pair_link() -> None:
    nv: tuple[str, str, TopoLink, int | None] = ("GPU0", "GPU1", "NV#", 12)
    assert facts(topology=_pairs(nv))["host.gpu_pair_worst_link"] == "NV"
    mixed = _pairs(nv, ("GPU0", "GPU2", "PIX", None), ("GPU1", "GPU2", "NODE", None))
    assert facts(topology=mixed)["host.gpu_pair_worst_link"] == "NODE"
    with_nic = _pairs(nv, ("GPU0", "NIC0", "SYS", None))
    assert facts(topology=with_nic)["host.gpu_pair_worst_link"] == "NV"  # NICs ignored
    assert facts(topology=Topology())["host.gpu_pair_worst_link"] is None


def test_p2p_ok_over_gpu_pairs() -> None:
    ok = Topology(p2p=[P2PPair(a="GPU0", b="GPU1", status="OK")])
    assert facts(topology=ok)["host.p2p_ok"] is True
    mixed = Topology(p2p=[*ok.p2p, P2PPair(a="GPU0", b="GPU2", status="CNS")])
    assert facts(topology=mixed)["host.p2p_ok"] is False


def test_throttle_fractions_count_a_snapshot_as_one_sample() -> None:
    hot = _gpu(
        index=0,
        throttle_reasons={
            "hw_thermal_slowdown": ReasonState(active=True),
            "sw_power_cap": ReasonState(active=False),
        },
    )
    measured = _gpu(index=1, throttle_reasons={"sw_power_cap": ReasonState(fraction=0.25)})
    result = facts(gpus=[hot, measured])
    assert result["gpu.thermal_limited_fraction"] == 1.0
    assert result["gpu.power_limited_fraction"] == 0.25
    generic = _gpu(throttle_reasons={"hw_slowdown": ReasonState(active=True)})
    assert facts(gpus=[generic])["gpu.thermal_limited_fraction"] is None  # cause unknown


def test_temperature_margin() -> None:
    plain = _gpu(
        temperature=Temperature(gpu_c=84, slowdown_c=91),
        samples=[Sample(temp_c=86), Sample(temp_c=80)],
    )
    assert facts(gpus=[plain])["gpu.temp_margin_c"] == 5.0  # hottest sample counts
    tlimit = _gpu(temperature=Temperature(gpu_c=59, tlimit_margin_c=26, slowdown_tlimit_c=-2))
    assert facts(gpus=[tlimit])["gpu.temp_margin_c"] == 28.0
    assert facts(gpus=[plain, tlimit])["gpu.temp_margin_c"] == 5.0
    assert facts(gpus=[_gpu(temperature=Temperature(gpu_c=50))])["gpu.temp_margin_c"] is None


def test_sm_clock_ratio_only_while_busy() -> None:
    clocks = Clocks(sm_mhz=1400, max_sm_mhz=2000)
    idle = _gpu(clocks=clocks, utilisation=Utilisation(gpu_pct=5))
    assert facts(gpus=[idle])["gpu.sm_clock_ratio_busy"] is None
    busy = _gpu(clocks=clocks, utilisation=Utilisation(gpu_pct=90))
    assert facts(gpus=[busy])["gpu.sm_clock_ratio_busy"] == 0.7
    series = _gpu(
        clocks=Clocks(max_sm_mhz=2000),
        samples=[
            Sample(util_pct=95, sm_clock_mhz=1800),
            Sample(util_pct=10, sm_clock_mhz=200),
            Sample(util_pct=90, sm_clock_mhz=1600),
        ],
    )
    assert facts(gpus=[series])["gpu.sm_clock_ratio_busy"] == 0.85


def test_power_and_memory_facts() -> None:
    a = _gpu(
        index=0,
        power=Power(draw_w=220, limit_w=250, enforced_limit_w=230),
        memory_total_mib=24576,
        memory_used_mib=23890,
    )
    b = _gpu(
        index=1,
        power=Power(draw_instant_w=30, limit_w=300),
        memory_total_mib=24576,
        memory_used_mib=1200,
    )
    result = facts(gpus=[a, b])
    assert result["gpu.power_draw_ratio"] == pytest.approx(220 / 230, abs=1e-3)
    assert result["gpu.memory_used_max_pct"] == pytest.approx(97.209, abs=1e-3)
    assert result["host.memory_used_spread_pct"] == pytest.approx(92.326, abs=1e-3)
    assert result["gpu.memory_total_max_gib"] == 24.0


def test_utilisation_facts_use_samples_when_present() -> None:
    busy = _gpu(
        index=0,
        utilisation=Utilisation(gpu_pct=0),
        samples=[Sample(util_pct=90), Sample(util_pct=70)],
    )
    idle = _gpu(index=1, utilisation=Utilisation(gpu_pct=2))
    result = facts(gpus=[busy, idle])
    assert result["host.gpu_util_max_pct"] == 80.0
    assert result["host.gpu_util_min_pct"] == 2.0
    assert result["host.gpu_util_mean_pct"] == pytest.approx(54.0)  # (90 + 70 + 2) / 3
    assert result["host.gpu_idle_beside_busy"] is True


def test_ecc_facts() -> None:
    on = _gpu(
        index=0,
        ecc_mode="enabled",
        ecc_errors=EccErrors(
            volatile_uncorrectable=2, aggregate_uncorrectable=5, aggregate_correctable=7
        ),
    )
    off = _gpu(index=1, ecc_mode="disabled")
    none = _gpu(index=2, ecc_mode="unsupported")
    result = facts(gpus=[on, off, none])
    assert result["gpu.ecc_enabled_all"] is False
    assert result["gpu.ecc_supported_any"] is True
    assert result["gpu.ecc_uncorrectable_total"] == 5  # aggregate already holds volatile
    assert result["gpu.ecc_correctable_aggregate"] == 7
    assert facts(gpus=[none])["gpu.ecc_supported_any"] is False
    assert facts(gpus=[none])["gpu.ecc_enabled_all"] is None


def test_xid_counts_need_a_kernel_log() -> None:
    assert facts(gpus=[_gpu(index=0)])["host.xid_count"] is None
    scanned = [Source(file="dmesg.log", kind="kernel-log", sha256="0" * 64)]
    assert facts(sources=scanned)["host.xid_count"] == 0
    events = [
        Event(kind="xid", code=79, text="x", xid_class="hardware"),
        Event(kind="xid", code=48, text="x", xid_class="hardware"),
        Event(kind="xid", code=119, text="x", xid_class="driver"),
        Event(kind="xid", code=13, text="x", xid_class="application"),
        Event(kind="xid", code=74, text="x", xid_class="hardware"),
        Event(kind="aer", text="x", severity="corrected"),
        Event(kind="aer", text="x", severity="uncorrected-fatal"),
    ]
    result = facts(sources=scanned, events=events)
    assert (result["host.xid_count"], result["host.xid_hardware_count"]) == (5, 3)
    assert (result["host.xid_bus_count"], result["host.xid_ecc_count"]) == (1, 1)
    assert (result["host.xid_gsp_count"], result["host.xid_driver_count"]) == (1, 1)
    assert (result["host.xid_nvlink_count"], result["host.xid_application_count"]) == (1, 1)
    assert (result["host.aer_corrected_count"], result["host.aer_uncorrected_count"]) == (1, 1)


def test_processes_per_gpu() -> None:
    two = _gpu(
        index=0,
        processes=[Process(pid=1, type="C"), Process(pid=2, type="C"), Process(pid=3, type="G")],
    )
    empty = _gpu(index=1, processes=[])
    result = facts(gpus=[two, empty])
    assert result["host.processes_max_per_gpu"] == 2  # the graphics process is not counted
    assert result["host.gpus_without_process"] == 1
    quiet = facts(gpus=[empty, _gpu(index=2, processes=[])])
    assert quiet["host.gpus_without_process"] == 0


@pytest.mark.parametrize(
    ("bound", "gpu_nodes", "expected"),
    [
        ([0], [1], True),
        ([0, 1], [0, 1], False),
        ([0], [0, 1], None),
        (None, [0], None),
        ([0], [], None),
    ],
)
def test_numa_binding_remote(
    bound: list[int] | None, gpu_nodes: list[int], expected: bool | None
) -> None:
    gpus = [_gpu(index=i, numa_node=node) for i, node in enumerate(gpu_nodes)]
    host = HostInfo(numa_binding=NumaBinding(membind=bound))
    assert facts(gpus=gpus, host=host)["host.numa_binding_remote"] is expected


def test_persistence_and_counts() -> None:
    gpus = [
        _gpu(index=0, persistence_mode=False),
        _gpu(index=1, persistence_mode=True),
        _gpu(index=2),
    ]
    result = facts(gpus=gpus)
    assert result["host.persistence_off_count"] == 1
    assert result["host.gpu_count"] == 3
    assert facts()["host.gpu_count"] is None  # no GPU listing: unknown, not zero
