"""`pip install gpuadvisor` without extras does everything: reads nvidia-smi XML and
dcgm-exporter scrapes, writes PDF, probes (issue #16, item 1).

The wheel is built from this checkout (``pip wheel --no-deps``) and installed WITHOUT
extras into a fresh virtualenv (pip fetches the dependencies from the package index);
the installed console script then runs from an empty folder, away from this checkout.
The four packages that used to be extras are still imported only by the command that
needs them (see also ``tests/test_evidence_lazy.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import FIXTURES, REPO

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

#: The packages that were extras before issue #16, and the module each one provides.
FORMER_EXTRAS = {
    "nvidia-ml-py": "pynvml",
    "typst": "typst",
    "defusedxml": "defusedxml",
    "prometheus-client": "prometheus_client",
}

XML_CAPTURE = FIXTURES / "evidence" / "xml-twin-two-gpu-q.xml"
DCGM_CAPTURE = FIXTURES / "evidence" / "two-gpu-dcgm.prom"
EXAMPLE = REPO / "examples" / "llm-latency-endpoint.toml"


def _clean_env() -> dict[str, str]:
    """The environment without anything that would point Python at this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(
    args: list[str | Path], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _ok(done: subprocess.CompletedProcess[str], what: str) -> None:
    assert done.returncode == 0, f"{what}: exit {done.returncode}\n{done.stderr[-4000:]}"


def test_the_former_extras_are_core_dependencies() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {
        req.split(";")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
        for req in project["dependencies"]
    }
    assert set(FORMER_EXTRAS) <= names
    # The extras stay, empty, so `pip install 'gpuadvisor[pdf]'` keeps working.
    extras = project["optional-dependencies"]
    for alias in ("nvml", "pdf", "evidence", "all"):
        assert extras[alias] == [], alias


def test_help_imports_none_of_the_former_extras() -> None:
    script = (
        "import json, sys\n"
        "sys.argv = ['gpuadvisor', '--help']\n"
        "from gpuadvisor.launch import run\n"
        "try:\n"
        "    run()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {sorted(FORMER_EXTRAS.values())!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.slow
def test_the_plain_wheel_reads_xml_and_dcgm_and_writes_pdf(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    _ok(
        _run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", REPO, "-w", wheels],
            cwd=tmp_path,
        ),
        "pip wheel",
    )
    (wheel,) = wheels.glob("gpuadvisor-*.whl")
    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", venv], cwd=tmp_path), "python -m venv")
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    # No extras: the bare wheel name.
    _ok(
        _run([bin_dir / "python", "-m", "pip", "install", "--quiet", wheel], cwd=tmp_path),
        "pip install",
    )

    work = tmp_path / "work"
    work.mkdir()
    where = _run(
        [bin_dir / "python", "-c", "import gpuadvisor; print(gpuadvisor.__file__)"], cwd=work
    )
    _ok(where, "import gpuadvisor")
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    script = bin_dir / "gpuadvisor"
    xml = _run([script, "import", XML_CAPTURE, "-o", work / "xml.json"], cwd=work)
    _ok(xml, "import nvidia-smi -q -x")
    xml_host = json.loads((work / "xml.json").read_text(encoding="utf-8"))
    assert [s["kind"] for s in xml_host["sources"]] == ["nvidia-smi-xml"]
    assert len(xml_host["gpus"]) == 2

    dcgm = _run([script, "import", DCGM_CAPTURE, "-o", work / "dcgm.json"], cwd=work)
    _ok(dcgm, "import dcgm-exporter scrape")
    dcgm_host = json.loads((work / "dcgm.json").read_text(encoding="utf-8"))
    assert [s["kind"] for s in dcgm_host["sources"]] == ["dcgm-prom"]
    assert dcgm_host["gpus"]

    pdf = _run(
        [script, "advise", EXAMPLE, "--evidence", XML_CAPTURE, "-f", "pdf", "-o", work / "r.pdf"],
        cwd=work,
    )
    _ok(pdf, "advise --format pdf")
    assert (work / "r.pdf").read_bytes().startswith(b"%PDF-")

    # The NVML bindings are there too: what probe imports.
    _ok(_run([bin_dir / "python", "-c", "import pynvml"], cwd=work), "import pynvml")
