"""``gpuadvisor probe`` end to end: the stand-in -> host/v1 file -> the evidence loader
-> host facts; and the command line (progress, Ctrl-C, errors, atomic output)."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor import cli
from gpuadvisor.cli.commands_evidence import probe as probe_command
from gpuadvisor.cli.commands_evidence import progress_line
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.evidence import detect, dump_snapshot, load_evidence, parse_text
from gpuadvisor.host.schema import HOST_SCHEMA, HostSnapshot
from gpuadvisor.probe import sampler as probe
from tests.nvml_standin import FakeTime, StandIn, load_scenario
from tests.probe_support import CapturedHost, fake_clock, run_scenario


def _facts_through_a_file(scenario: str, tmp_path: Path, seconds: float = 5) -> dict[str, Any]:
    snapshot = run_scenario(scenario, seconds=seconds).result.snapshot
    path = tmp_path / "probe.json"
    path.write_text(dump_snapshot(snapshot), encoding="utf-8")
    return derive_host_facts(load_evidence([path])).values


def test_probe_output_is_detected_as_host_v1_and_round_trips() -> None:
    snapshot = run_scenario("gpu-lost-mid-sampling").result.snapshot
    text = dump_snapshot(snapshot)
    assert json.loads(text)["schema"] == HOST_SCHEMA
    assert detect(text) == "gpuadvisor-host"
    assert parse_text(text, "probe.json") == snapshot
    assert HostSnapshot.model_validate_json(text) == snapshot


def test_two_gpus_on_sys_without_p2p_facts(tmp_path: Path) -> None:
    facts = _facts_through_a_file("two-gpu-sys-no-p2p", tmp_path, seconds=3)
    assert facts["host.gpu_count"] == 2
    assert facts["host.p2p_ok"] is False
    assert facts["host.gpu_pair_worst_link"] == "SYS"
    assert facts["host.gpu_idle_beside_busy"] is True
    assert facts["host.gpus_without_process"] == 1
    assert facts["gpu.ecc_supported_any"] is True
    assert facts["gpu.ecc_enabled_all"] is False
    assert facts["host.xid_count"] == 0  # watched on every GPU, none seen
    assert facts["host.persistence_off_count"] == 0
    assert facts["gpu.pcie_gen_degraded_under_load"] is False  # GPU1 idle: not judged
    # The host side, from the captured 2-CPU VM:
    assert (facts["host.cpu_sockets"], facts["host.numa_nodes"], facts["host.cpu_cores"]) == (
        1,
        1,
        2,
    )
    assert facts["host.cpu_util_mean_pct"] == 40.31  # 181 busy of 449 ticks
    assert facts["host.iowait_pct"] == 2.45  # 11 of 449


def test_throttling_card_facts(tmp_path: Path) -> None:
    facts = _facts_through_a_file("throttling-thermal", tmp_path, seconds=10)
    assert facts["gpu.thermal_limited_fraction"] == pytest.approx(0.818, abs=1e-3)
    assert facts["gpu.temp_margin_c"] == 2.0
    assert facts["gpu.sm_clock_ratio_busy"] == pytest.approx(1520.45 / 2100, abs=1e-3)
    assert facts["gpu.power_limited_fraction"] == 0.0


def test_consumer_card_facts(tmp_path: Path) -> None:
    facts = _facts_through_a_file("consumer-no-ecc", tmp_path)
    assert facts["gpu.ecc_supported_any"] is False
    assert facts["gpu.ecc_enabled_all"] is None
    assert facts["gpu.ecc_uncorrectable_total"] is None
    assert facts["gpu.power_limited_fraction"] == 0.5
    assert facts["gpu.pcie_gen_degraded_under_load"] is False
    assert facts["gpu.memory_used_max_pct"] == pytest.approx(81.873, abs=1e-3)


def test_lost_gpu_facts(tmp_path: Path) -> None:
    facts = _facts_through_a_file("gpu-lost-mid-sampling", tmp_path)
    assert (facts["host.xid_count"], facts["host.xid_bus_count"]) == (1, 1)
    assert facts["host.xid_hardware_count"] == 1


def test_datacenter_card_facts(tmp_path: Path) -> None:
    facts = _facts_through_a_file("datacenter-ecc-mig", tmp_path)
    assert facts["gpu.ecc_enabled_all"] is True
    assert facts["gpu.ecc_correctable_aggregate"] == 3
    assert (facts["gpu.remap_pending"], facts["gpu.remap_failure"]) == (False, False)
    assert facts["host.gpu_util_mean_pct"] is None  # MIG: NVML has no utilisation


# --- the command line ------------------------------------------------------------------


@pytest.fixture()
def nvml_here(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeTime]:
    """Make ``gpuadvisor probe`` find the stand-in, fake time and the captured host."""

    def install(scenario: str = "two-gpu-sys-no-p2p", time: FakeTime | None = None) -> FakeTime:
        time = time or FakeTime()
        nvml = StandIn(load_scenario(scenario), time)
        monkeypatch.setattr(probe, "load_nvml", lambda: nvml)
        monkeypatch.setattr(probe, "Clock", lambda: fake_clock(time))
        monkeypatch.setattr(probe, "HostReader", CapturedHost)
        return time

    return install


def _cli(*args: str, tty: bool = False) -> tuple[int, str, str]:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return tty

    out, err = io.StringIO(), Terminal()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            cli.main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    return code, out.getvalue(), err.getvalue()


def test_cli_writes_host_v1_atomically(nvml_here: Callable[..., FakeTime], tmp_path: Path) -> None:
    nvml_here()
    target = tmp_path / "probe.json"
    code, out, err = _cli("probe", "--seconds", "3", "--interval", "1", "-o", str(target))
    assert code == 0
    assert out == ""
    assert "probe: 4 sample(s) of 2 GPU(s) over 3.0 s" in err
    assert f"wrote {target}" in err
    assert "\r" not in err  # no progress bar when stderr is not a terminal
    assert detect(target.read_text(encoding="utf-8")) == "gpuadvisor-host"
    assert [p.name for p in tmp_path.iterdir()] == ["probe.json"]  # no temporary left


def test_cli_writes_to_stdout_without_o(nvml_here: Callable[..., FakeTime]) -> None:
    nvml_here()
    code, out, _ = _cli("probe", "-s", "2")
    assert code == 0
    assert json.loads(out)["schema"] == HOST_SCHEMA


def test_cli_progress_bar_on_a_terminal(nvml_here: Callable[..., FakeTime]) -> None:
    nvml_here()
    code, _, err = _cli("probe", "-s", "2", tty=True)
    assert code == 0
    assert "\rprobe [" in err
    assert "2/2 s, 0 s left" in err
    assert "\r\x1b[K" in err  # the bar is cleared before the summary


def test_progress_line() -> None:
    assert progress_line(9, 30, width=10) == "probe [###-------]   9/30 s, 21 s left"
    assert progress_line(30, 30, width=4) == "probe [####]  30/30 s, 0 s left"


def test_cli_ctrl_c_still_writes_what_was_collected(
    nvml_here: Callable[..., FakeTime], tmp_path: Path
) -> None:
    class Interrupting(FakeTime):
        def sleep(self, seconds: float) -> None:
            if self.slept:
                raise KeyboardInterrupt
            super().sleep(seconds)

    nvml_here(time=Interrupting())
    target = tmp_path / "probe.json"
    code, _, err = _cli("probe", "-s", "30", "-o", str(target))
    assert code == 0
    assert "stopped early by Ctrl-C" in err
    data = json.loads(target.read_text(encoding="utf-8"))
    assert len(data["gpus"][0]["samples"]) == 2


def test_cli_without_nvml_exits_2_with_the_offline_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    code, out, err = _cli("probe", "-s", "2")
    assert (code, out) == (2, "")
    assert "gpuadvisor import" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("args", [["-s", "0"], ["-s", "10", "-i", "0.001"], ["-s", "abc"]])
def test_cli_rejects_a_bad_window(args: list[str], nvml_here: Callable[..., FakeTime]) -> None:
    nvml_here()
    code, out, _ = _cli("probe", *args)
    assert (code, out) == (2, "")


def test_cli_defaults_are_the_probe_defaults() -> None:
    import inspect

    parameters = inspect.signature(probe_command).parameters
    assert parameters["seconds"].default == probe.DEFAULT_SECONDS
    assert parameters["interval"].default == probe.DEFAULT_INTERVAL_S


def test_a_real_ctrl_c_in_a_real_process(tmp_path: Path) -> None:
    """SIGINT to a running ``gpuadvisor probe`` (real time, the stand-in for NVML)."""
    import signal
    import subprocess
    import time

    target = tmp_path / "probe.json"
    script = (
        "import sys\n"
        "from gpuadvisor import cli\nfrom gpuadvisor.probe import sampler as probe\n"
        "from tests.nvml_standin import StandIn, load_scenario\n"
        "from tests.probe_support import CapturedHost\n"
        "probe.load_nvml = lambda: StandIn(load_scenario('two-gpu-sys-no-p2p'))\n"
        "probe.HostReader = CapturedHost\n"
        "print('started', flush=True)\n"
        "cli.main(sys.argv[1:])\n"
    )
    repo = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", script, "probe", "-s", "60", "-i", "0.1", "-o", str(target)],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "started\n"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert "stopped early by Ctrl-C" in err
    samples = json.loads(target.read_text(encoding="utf-8"))["gpus"][0]["samples"]
    assert 2 <= len(samples) < 600
