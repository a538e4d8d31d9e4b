"""A handful of hostile inputs through a real ``python -m gpuadvisor`` process: what a
user sees on the terminal is one line of error, exit code 2, and never a traceback
(the in-process tests catch SystemExit; this proves nothing else reaches stderr)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO
from .hostile_support import RULE, Inputs, make_inputs


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout, not an installed copy
    env.pop("GPUADVISOR_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "gpuadvisor", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_subprocess_runs_this_checkout(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    found = subprocess.run(
        [sys.executable, "-c", "import gpuadvisor; print(gpuadvisor.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=True,
    ).stdout.strip()
    assert Path(found).resolve().is_relative_to(REPO.resolve())


CASES: dict[str, Callable[[Inputs], list[str]]] = {
    "missing-profile": lambda i: ["advise", str(i.root / "nope.toml")],
    "malformed-toml": lambda i: ["advise", str(i.write("p.toml", "[workload\n"))],
    "deep-json": lambda i: ["advise", str(i.write("p.json", '{"a":' * 50_000))],
    "binary-evidence": lambda i: ["import", str(i.write("b.bin", bytes(range(256)) * 64))],
    "billion-laughs": lambda i: [
        "import",
        str(
            i.write(
                "q.xml",
                '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaa">'
                '<!ENTITY b "&a;&a;&a;&a;">]>\n<nvidia_smi_log>&b;</nvidia_smi_log>\n',
            )
        ),
    ],
    "rule-calls-import": lambda i: [
        "rules",
        "lint",
        str(
            i.write(
                "r/JOBS-001.toml",
                RULE.replace('when = "', "when = \"__import__('os').system('id') and ", 1),
            ).parent
        ),
    ],
    "template-reaches-python": lambda i: [
        "advise",
        str(i.profile),
        "--no-sensitivity",
        "--template",
        str(i.write("t/report.md.j2", "{{ cycler.__init__.__globals__ }}").parent),
    ],
    "output-below-a-file": lambda i: ["init", "-o", str(i.profile / "x.toml")],
    "nan-filter": lambda i: ["catalog", "list", "--min-vram", "nan"],
    "huge-number-in-capture": lambda i: [
        "import",
        str(i.write("q.csv", "index, memory.total [MiB]\n0, 1e400 MiB\n")),
    ],
}


@pytest.mark.parametrize("case", CASES)
def test_no_traceback_reaches_the_terminal(inputs: Inputs, case: str) -> None:
    result = _run(CASES[case](inputs), inputs.root)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("gpuadvisor: error: "), result.stderr
    assert len(result.stderr.strip().splitlines()) <= 3, result.stderr


def test_usage_errors_are_exit_2_without_a_traceback(inputs: Inputs) -> None:
    result = _run(["advise", str(inputs.profile), "--format", "docx"], inputs.root)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "docx" in result.stderr
