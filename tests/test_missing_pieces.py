"""A missing system piece is exit 2 with what to do; only a bug exits 1 (issue #16, item 2).

"Missing" covers no NVIDIA driver (or no libnvidia-ml) for ``probe``, and a dependency
that the installation lacks although gpuadvisor declares it (nvidia-ml-py, typst,
defusedxml, prometheus-client: a broken or hand-pruned environment). Each is simulated by
making the import fail (``sys.modules[name] = None``), through the real command line.
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.evidence import detect
from gpuadvisor.probe.sampler import OFFLINE_HINT

from .conftest import FIXTURES, REPO, CliResult

Cli = Callable[..., CliResult]

XML = FIXTURES / "evidence" / "xml-twin-two-gpu-q.xml"
DCGM = FIXTURES / "evidence" / "two-gpu-dcgm.prom"
TEXT = FIXTURES / "evidence" / "two-gpu-q.txt"
PROFILE = REPO / "examples" / "llm-latency-endpoint.toml"


def _block(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """``import module`` (and any of its submodules) fails from now on in this test."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, module, None)


def _refused_as_input(result: CliResult, *fragments: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def test_xml_without_defusedxml_is_exit_2_naming_the_package_and_the_way_out(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _block(monkeypatch, "defusedxml")
    result = cli("import", str(XML), "-o", str(tmp_path / "host.json"))
    _refused_as_input(result, str(XML), "defusedxml", "pip install", "nvidia-smi -q")
    assert not (tmp_path / "host.json").exists()


def test_dcgm_without_prometheus_client_is_exit_2(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _block(monkeypatch, "prometheus_client")
    result = cli("import", str(DCGM))
    _refused_as_input(result, str(DCGM), "prometheus-client", "pip install")


def test_pdf_without_typst_is_exit_2(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _block(monkeypatch, "typst")
    result = cli("advise", str(PROFILE), "-f", "pdf", "-o", str(tmp_path / "r.pdf"))
    _refused_as_input(result, "typst", "pip install")
    assert not (tmp_path / "r.pdf").exists()


def test_probe_without_the_nvml_bindings_is_exit_2(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _block(monkeypatch, "pynvml")
    result = cli("probe", "--seconds", "1")
    _refused_as_input(result, "nvidia-ml-py", "pip install", "gpuadvisor import")


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has NVML"
)
def test_probe_without_a_driver_is_exit_2_in_a_real_process() -> None:
    """The real bindings on a machine without libnvidia-ml, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "probe", "--seconds", "1"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "cannot probe" in done.stderr and "libnvidia-ml.so.1" in done.stderr
    # What to do: where to run it, and the route without NVML.
    assert "NVIDIA driver" in done.stderr and "gpuadvisor import" in done.stderr


def test_the_probe_fallback_recommends_a_capture_that_needs_no_other_package(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The hint's own capture, read with every former extra made unimportable."""
    assert "nvidia-smi -q >" in OFFLINE_HINT and "-q -x" not in OFFLINE_HINT
    assert detect(TEXT.read_text(encoding="utf-8"), TEXT.name) == "nvidia-smi-q"
    for module in ("defusedxml", "prometheus_client", "typst", "pynvml"):
        _block(monkeypatch, module)
    result = cli("import", str(TEXT), "-o", str(tmp_path / "host.json"))
    assert result.exit_code == 0, result.stderr


def test_a_bug_is_still_exit_1(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuadvisor.cli.commands_meta as meta

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(meta, "load_overlaid_rules", broken)
    result = cli("version")
    assert result.exit_code == 1
    assert "internal error: ZeroDivisionError" in result.stderr
