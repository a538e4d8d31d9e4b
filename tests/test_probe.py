"""gpuadvisor probe without a GPU: the NVML gateway against the real pynvml error classes,
and named scenarios played by the stand-in (tests/fixtures/nvml)."""

from __future__ import annotations

import ctypes.util
import inspect
import itertools
import sys
import types
from typing import Any

import pynvml
import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.host.schema import Gpu
from gpuadvisor.probe import nvml as probe_nvml
from gpuadvisor.probe.gpu import cpu_ranges
from gpuadvisor.probe.nvml import GpuLost, NotAvailable, Nvml, NvmlUnusable
from gpuadvisor.probe.sampler import check_window, run_probe
from gpuadvisor.probe.summary import p95
from tests.nvml_standin import FakeTime, load_scenario
from tests.probe_support import Run, run_scenario

SCENARIOS = [
    "consumer-no-ecc",
    "datacenter-ecc-mig",
    "two-gpu-sys-no-p2p",
    "throttling-thermal",
    "gpu-lost-mid-sampling",
]


def _module(**functions: Any) -> types.ModuleType:
    """A module with the real NVMLError classes and the given functions."""
    module = types.ModuleType("fake_pynvml")
    for name in dir(pynvml):
        if name.startswith(("NVMLError", "NVMLLibraryMismatchError")):
            setattr(module, name, getattr(pynvml, name))
    for name, function in functions.items():
        setattr(module, name, function)
    return module


def _raising(error: str) -> Any:
    def function(*args: Any) -> Any:
        raise getattr(pynvml, f"NVMLError_{error}")()

    return function


def _gpu(run: Run, index: int = 0) -> Gpu:
    return run.result.snapshot.gpus[index]


# --- the gateway ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("NotSupported", "Not Supported"),
        ("NotFound", "Not Found"),
        ("NoPermission", "Insufficient Permissions"),
        ("FunctionNotFound", "Function Not Found"),
    ],
)
def test_gateway_turns_unsupported_calls_into_a_reason(error: str, reason: str) -> None:
    nvml = Nvml(_module(nvmlDeviceGetEccMode=_raising(error)))
    result = nvml.call("nvmlDeviceGetEccMode", object())
    assert result == NotAvailable("nvmlDeviceGetEccMode", reason, error)
    assert str(result) == f"nvmlDeviceGetEccMode: {reason}"
    assert result.permanent
    assert result.not_supported == (error == "NotSupported")


def test_gateway_keeps_a_transient_error_as_a_reason_worth_asking_again() -> None:
    result = Nvml(_module(nvmlDeviceGetPowerUsage=_raising("Unknown"))).call(
        "nvmlDeviceGetPowerUsage", object()
    )
    assert isinstance(result, NotAvailable)
    assert (result.reason, result.permanent) == ("Unknown Error", False)


def test_gateway_raises_gpu_lost() -> None:
    nvml = Nvml(_module(nvmlDeviceGetTemperature=_raising("GpuIsLost")))
    with pytest.raises(GpuLost, match="nvmlDeviceGetTemperature: GPU is lost"):
        nvml.call("nvmlDeviceGetTemperature", object(), 0)


@pytest.mark.parametrize("error", ["LibraryNotFound", "DriverNotLoaded", "LibRmVersionMismatch"])
def test_gateway_raises_unusable_for_a_missing_library_or_driver(error: str) -> None:
    with pytest.raises(NvmlUnusable) as caught:
        Nvml(_module(nvmlInit=_raising(error))).call("nvmlInit")
    assert caught.value.error == error


def test_gateway_lets_bugs_through_and_counts_calls() -> None:
    def broken(*args: Any) -> Any:
        raise TypeError("a bug, not an NVML answer")

    nvml = Nvml(_module(nvmlDeviceGetName=broken, nvmlDeviceGetUUID=lambda h: "GPU-1"))
    assert nvml.call("nvmlDeviceGetUUID", object()) == "GPU-1"
    with pytest.raises(TypeError):
        nvml.call("nvmlDeviceGetName", object())
    assert nvml.calls == 2


def test_gateway_reads_a_library_mismatch_as_function_not_found() -> None:
    def unversioned(*args: Any) -> Any:
        raise pynvml.NVMLLibraryMismatchError("Unversioned function called ...")

    result = Nvml(_module(nvmlDeviceGetComputeRunningProcesses=unversioned)).call(
        "nvmlDeviceGetComputeRunningProcesses", object()
    )
    assert isinstance(result, NotAvailable)
    assert (result.error, result.permanent) == ("FunctionNotFound", True)


def test_gateway_reports_a_function_this_nvidia_ml_py_lacks() -> None:
    result = Nvml(_module()).call("nvmlDeviceGetSomethingNew", object())
    assert result == NotAvailable("nvmlDeviceGetSomethingNew", "not in this nvidia-ml-py version")
    assert result.permanent


def test_nvml_constants_match_the_real_bindings() -> None:
    pairs = {
        "CLOCK_SM": "NVML_CLOCK_SM",
        "CLOCK_MEM": "NVML_CLOCK_MEM",
        "TEMPERATURE_GPU": "NVML_TEMPERATURE_GPU",
        "THRESHOLD_SHUTDOWN": "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",
        "THRESHOLD_SLOWDOWN": "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN",
        "THRESHOLD_GPU_MAX": "NVML_TEMPERATURE_THRESHOLD_GPU_MAX",
        "ERROR_CORRECTED": "NVML_MEMORY_ERROR_TYPE_CORRECTED",
        "ERROR_UNCORRECTED": "NVML_MEMORY_ERROR_TYPE_UNCORRECTED",
        "COUNTER_VOLATILE": "NVML_VOLATILE_ECC",
        "COUNTER_AGGREGATE": "NVML_AGGREGATE_ECC",
        "RETIRED_MULTIPLE_SINGLE_BIT": "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS",
        "RETIRED_DOUBLE_BIT": "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR",
        "PCIE_TX_BYTES": "NVML_PCIE_UTIL_TX_BYTES",
        "PCIE_RX_BYTES": "NVML_PCIE_UTIL_RX_BYTES",
        "FEATURE_ENABLED": "NVML_FEATURE_ENABLED",
        "AFFINITY_SCOPE_NODE": "NVML_AFFINITY_SCOPE_NODE",
        "EVENT_XID_CRITICAL_ERROR": "nvmlEventTypeXidCriticalError",
        "NVLINK_MAX_LINKS": "NVML_NVLINK_MAX_LINKS",
    }
    for ours, theirs in pairs.items():
        assert getattr(probe_nvml, ours) == getattr(pynvml, theirs), ours
    # nvidia-ml-py spells READ as the tuple (0,): the reason the values are our own.
    assert pynvml.NVML_P2P_CAPS_INDEX_READ in (0, (0,))
    assert probe_nvml.P2P_CAPS_INDEX_READ == 0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_call_exists_in_real_pynvml_with_that_many_arguments(scenario: str) -> None:
    run = run_scenario(scenario)
    for name, count in sorted(set(run.nvml.calls)):
        signature = inspect.signature(getattr(pynvml, name))
        signature.bind(*([None] * count))  # TypeError when the arity is wrong


# --- scenarios -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "missing",
    [[], ["nvmlDeviceGetCurrentClocksEventReasons"]],
    ids=["driver-535-and-later", "driver-before-535-throttle-reasons"],
)
def test_consumer_card_without_ecc(missing: list[str]) -> None:
    scenario = load_scenario("consumer-no-ecc")
    scenario["missing_functions"] = missing
    if missing:  # nor the v3 process list; nvidia-ml-py's wrapper then raises a mismatch
        table = scenario["gpus"][0]
        processes = table["nvmlDeviceGetComputeRunningProcesses"]
        table["nvmlDeviceGetComputeRunningProcesses"] = {"error": "LibraryMismatch"}
        table["nvmlDeviceGetComputeRunningProcesses_v2"] = processes
    run = run_scenario(scenario, seconds=5)
    gpu = _gpu(run)
    assert (gpu.name, gpu.pci_bus_id, gpu.memory_total_mib) == (
        "NVIDIA GeForce RTX 3090",
        "00000000:09:00.0",
        24576,
    )
    assert (gpu.ecc_mode, gpu.ecc_mode_pending, gpu.mig_mode) == ("unsupported",) * 3
    assert gpu.ecc_errors.aggregate_uncorrectable is None
    assert gpu.unavailable["ecc_errors.aggregate_uncorrectable"] == (
        "nvmlDeviceGetTotalEccErrors: Not Supported"
    )
    assert gpu.remapped_rows.pending is None
    assert "remapped_rows.pending" in gpu.unavailable
    assert gpu.utilisation.gpu_pct == pytest.approx(81.33)
    assert (gpu.utilisation.gpu_p95_pct, gpu.utilisation.gpu_min_pct) == (99.0, 0.0)
    assert gpu.memory_used_mib == 20121  # the high-water mark
    assert gpu.throttle_reasons["sw_power_cap"].fraction == 0.5
    assert gpu.throttle_reasons["gpu_idle"].fraction == pytest.approx(1 / 6, abs=1e-4)
    assert gpu.pcie.gen_current == 4  # the first sample was at Gen1, idle
    assert (gpu.pcie.tx_kBps, gpu.pcie.rx_kBps) == (1750.0, 41750.0)
    assert gpu.power.draw_w == pytest.approx(291.61)
    assert gpu.power.enforced_limit_w == 350.0
    assert (gpu.temperature.slowdown_c, gpu.temperature.shutdown_c) == (95.0, 98.0)
    assert (gpu.numa_node, gpu.cpu_affinity, gpu.persistence_mode) == (0, "0-15", True)
    assert [(p.pid, p.name, p.used_memory_mib) for p in gpu.processes or []] == [
        (4242, "python3", 20104)
    ]
    assert [s.t_s for s in gpu.samples or []] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert run.result.snapshot.driver_version == "590.44.01"
    assert run.result.snapshot.cuda_version == "13.1"


def test_unsupported_sampled_calls_are_not_asked_again() -> None:
    run = run_scenario("consumer-no-ecc", seconds=5)
    names = [name for name, _ in run.nvml.calls]
    assert names.count("nvmlDeviceGetUtilizationRates") == 6
    scenario = load_scenario("two-gpu-sys-no-p2p")
    run = run_scenario(scenario, seconds=5)
    names = [name for name, _ in run.nvml.calls]
    assert names.count("nvmlDeviceGetPcieThroughput") == 4  # TX and RX, once per GPU


def test_datacenter_card_with_ecc_and_mig() -> None:
    gpu = _gpu(run_scenario("datacenter-ecc-mig"))
    assert (gpu.ecc_mode, gpu.mig_mode, gpu.persistence_mode) == ("enabled", "enabled", False)
    assert gpu.ecc_errors.model_dump() == {
        "volatile_correctable": 0,
        "volatile_uncorrectable": 0,
        "aggregate_correctable": 3,
        "aggregate_uncorrectable": 0,
    }
    assert (gpu.remapped_rows.correctable, gpu.remapped_rows.pending) == (2, False)
    assert gpu.retired_pages.single_bit is None  # Ampere remaps rows instead
    assert [(m.gpu_instance_id, m.memory_total_mib) for m in gpu.mig_devices or []] == [
        (3, 19968),
        (4, 19968),
        (5, 19968),
        (6, 19968),
    ]
    # NVML has no utilisation for a GPU split into MIG instances.
    assert gpu.utilisation.gpu_pct is None
    assert gpu.unavailable["utilisation.gpu_pct"] == "nvmlDeviceGetUtilizationRates: Not Supported"
    assert gpu.samples and gpu.samples[0].util_pct is None and gpu.samples[0].power_w == 67.03
    assert gpu.nvlink_active_links == 12
    assert gpu.processes == []


def test_two_gpus_with_p2p_disabled_on_sys_topology() -> None:
    snapshot = run_scenario("two-gpu-sys-no-p2p", seconds=3).result.snapshot
    assert [(p.a, p.b, p.link) for p in snapshot.topology.pairs] == [("GPU0", "GPU1", "SYS")]
    assert [(p.a, p.b, p.status) for p in snapshot.topology.p2p] == [("GPU0", "GPU1", "NS")]
    assert [(g.numa_node, g.cpu_affinity) for g in snapshot.gpus] == [(0, "0-15"), (1, "16-31")]
    assert snapshot.topology.numa_affinity == {"GPU0": "0", "GPU1": "1"}
    assert [g.utilisation.gpu_pct for g in snapshot.gpus] == [94.5, 0.75]
    assert [g.ecc_mode for g in snapshot.gpus] == ["disabled", "disabled"]


def test_a_throttling_card() -> None:
    gpu = _gpu(run_scenario("throttling-thermal", seconds=10))
    reasons = {name: state.fraction for name, state in gpu.throttle_reasons.items()}
    assert reasons["sw_thermal_slowdown"] == pytest.approx(9 / 11, abs=1e-4)
    assert reasons["hw_thermal_slowdown"] == pytest.approx(6 / 11, abs=1e-4)
    assert reasons["sw_power_cap"] == 0.0  # measured, not missing
    assert gpu.clocks.sm_mhz == pytest.approx(1520.45)
    assert gpu.clocks.max_sm_mhz == 2100.0
    assert max(s.temp_c or 0 for s in gpu.samples or []) == 93.0


def test_a_gpu_lost_mid_sampling() -> None:
    run = run_scenario("gpu-lost-mid-sampling", seconds=5)
    healthy, lost = run.result.snapshot.gpus
    assert len(healthy.samples or []) == 6  # sampling goes on for the others
    assert [s.t_s for s in lost.samples or []] == [0.0, 1.0, 2.0]
    assert lost.unavailable["processes"].startswith("GPU lost at 3.0 s")
    assert lost.ecc_errors.volatile_uncorrectable is None
    events = [(e.kind, e.code, e.pci_bus_id) for e in run.result.snapshot.events]
    assert events == [("gpu-lost", None, "00000000:C1:00.0"), ("xid", 79, "00000000:C1:00.0")]
    xid = run.result.snapshot.events[1]
    assert (xid.xid_class, xid.time) == ("hardware", "2026-01-01T00:16:43+00:00")
    calls_after_loss = run.nvml.calls.count(("nvmlDeviceGetUtilizationRates", 1))
    assert calls_after_loss == 6 + 4  # GPU0 six times, GPU1 until it answered "lost"


def test_library_missing_is_invalid_input_pointing_to_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    with pytest.raises(InputError) as caught:
        run_probe(5, 1)
    assert caught.value.exit_code == 2
    assert "nvidia-ml-py" in str(caught.value)
    assert "gpuadvisor import" in str(caught.value)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("LibraryNotFound", "libnvidia-ml.so.1"),
        ("DriverNotLoaded", "driver is not loaded"),
        ("LibRmVersionMismatch", "without a reboot"),
    ],
)
def test_no_nvml_here_is_invalid_input_pointing_to_import(error: str, words: str) -> None:
    with pytest.raises(InputError) as caught:
        run_scenario({"init_error": error, "gpus": []})
    assert words in str(caught.value)
    assert "gpuadvisor import" in str(caught.value)


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has NVML"
)
def test_the_real_bindings_without_a_driver_fail_cleanly() -> None:
    with pytest.raises(InputError, match="libnvidia-ml"):
        run_probe(1, 1)


def test_no_gpu_is_invalid_input() -> None:
    with pytest.raises(InputError, match="sees no GPU"):
        run_scenario({"gpus": []})


def test_nvml_is_shut_down_even_when_the_probe_fails() -> None:
    from tests.nvml_standin import StandIn

    nvml = StandIn({"gpus": []})
    with pytest.raises(InputError):
        run_probe(1, 1, nvml_module=nvml)
    assert nvml.shutdown


# --- the window ------------------------------------------------------------------------


def test_default_window_takes_31_samples_in_no_real_time() -> None:
    run = run_scenario("throttling-thermal", seconds=30, interval_s=1)
    assert (run.result.samples, run.result.elapsed_s, run.result.interrupted) == (31, 30.0, False)
    assert sum(run.time.slept) == pytest.approx(30.0)
    assert run.progress[-1] == (30.0, 30.0)
    assert len(run.progress) == 31
    assert "31 sample(s) every 1 s over 30.0 s" in run.result.snapshot.notes[0]


def test_slow_sampling_skips_slots_instead_of_bunching() -> None:
    class SlowTime(FakeTime):
        def monotonic(self) -> float:
            self.now += 0.35  # every clock read costs a third of a second
            return self.now

    slow = SlowTime()
    run = run_scenario("throttling-thermal", seconds=10, interval_s=1, time=slow)
    times = [s.t_s or 0.0 for s in _gpu(run).samples or []]
    assert all(b - a >= 1.0 - 1e-9 for a, b in itertools.pairwise(times))
    assert times[-1] <= 10.0 + 1.0


def test_ctrl_c_ends_early_and_keeps_what_was_collected() -> None:
    class Interrupting(FakeTime):
        def sleep(self, seconds: float) -> None:
            if len(self.slept) == 2:
                raise KeyboardInterrupt
            super().sleep(seconds)

    run = run_scenario("datacenter-ecc-mig", seconds=30, time=Interrupting())
    assert (run.result.samples, run.result.interrupted) == (3, True)
    gpu = _gpu(run)
    assert len(gpu.samples or []) == 3
    assert gpu.ecc_errors.aggregate_correctable == 3  # the end-of-window reads still ran
    assert "interrupted (asked for 30 s)" in run.result.snapshot.notes[0]


@pytest.mark.parametrize(
    ("seconds", "interval", "field"),
    [
        (0.5, 0.1, "--seconds"),
        (100_000, 1, "--seconds"),
        (float("nan"), 1, "--seconds"),
        (10, 0.01, "--interval"),
        (10, 20, "--interval"),
        (100, 61, "--interval"),
    ],
)
def test_window_limits(seconds: float, interval: float, field: str) -> None:
    with pytest.raises(InputError) as caught:
        check_window(seconds, interval)
    assert caught.value.field == field


# --- what the probe cannot use -----------------------------------------------------------


def test_an_out_of_range_value_is_dropped_with_its_reason() -> None:
    scenario = load_scenario("consumer-no-ecc")
    scenario["gpus"][0]["nvmlDeviceGetTemperatureThreshold"]["by_arg"]["1"] = 65535
    gpu = _gpu(run_scenario(scenario))
    assert gpu.temperature.slowdown_c is None
    assert gpu.unavailable["temperature.slowdown_c"].startswith("NVML value rejected")
    assert gpu.temperature.shutdown_c == 98.0


def test_xid_watch_incomplete_leaves_xid_counts_unknown() -> None:
    scenario = load_scenario("two-gpu-sys-no-p2p")
    del scenario["gpus"][1]["nvmlDeviceGetSupportedEventTypes"]
    snapshot = run_scenario(scenario).result.snapshot
    assert snapshot.provenance == {}
    assert any("Xid events not watched on GPU1" in note for note in snapshot.notes)
    complete = run_scenario("two-gpu-sys-no-p2p").result.snapshot
    assert complete.provenance == {"events": ["nvml"]}


def test_helpers() -> None:
    assert cpu_ranges([8, 0, 1, 2, 3, 10, 11]) == "0-3,8,10-11"
    assert cpu_ranges([]) == ""
    assert p95([float(v) for v in range(1, 21)]) == 19.0
    assert p95([42.0]) == 42.0


def _with_replays(series: list[int]) -> dict[str, Any]:
    data = load_scenario("consumer-no-ecc")
    data["gpus"][0]["nvmlDeviceGetPcieReplayCounter"] = {"series": series}
    return data


def test_the_replay_rate_is_the_counters_growth_over_the_window() -> None:
    # Read as the window starts (1,000) and after it (1,040): 40 replays in 30 s.
    gpu = _gpu(run_scenario(_with_replays([1000, 1040]), seconds=30, interval_s=5))
    assert (gpu.pcie.replay_counter, gpu.pcie.replays_per_min) == (1040, 80.0)


def test_a_steady_replay_counter_is_a_rate_of_zero_not_unknown() -> None:
    gpu = _gpu(run_scenario(_with_replays([67, 67]), seconds=10))
    assert (gpu.pcie.replay_counter, gpu.pcie.replays_per_min) == (67, 0.0)


def test_a_counter_reset_during_the_window_leaves_the_rate_unknown_and_says_why() -> None:
    gpu = _gpu(run_scenario(_with_replays([500, 3]), seconds=10))
    assert gpu.pcie.replays_per_min is None
    assert gpu.unavailable["pcie.replays_per_min"] == (
        "Replays Since Reset went back from 500 to 3 during the window (reset): no rate"
    )


def test_a_gpu_lost_before_the_end_has_no_replay_rate_and_says_why() -> None:
    lost = _gpu(run_scenario("gpu-lost-mid-sampling", seconds=5), 1)
    assert lost.pcie.replays_per_min is None
    assert lost.unavailable["pcie.replays_per_min"].startswith("GPU lost at 3.0 s")
