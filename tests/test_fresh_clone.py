"""A newcomer's first minutes (issue #34): a fresh clone, the README's set-up command as
written, a checkout that installing leaves clean, and every tour line run by the
installed ``gpuadvisor`` script from the clone's root.

The clone is of the committed ``HEAD`` (what CI checks out), so uncommitted changes in
a working tree are not what this tests. pip needs the package index, or its cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO
from .test_readme_tour import README, nvml_works, tour_runs

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git to clone the repository"),
    pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout: nothing to clone"),
]


def setup_commands(text: str) -> list[str]:
    """The ```sh blocks of the README's set-up section: install-and-run, then the tests."""
    start = re.search(r"^## Set-up[^\n]*$", text, re.M)
    assert start, "README.md has no '## Set-up' section"
    end = re.search(r"^## ", text[start.end() :], re.M)
    section = text[start.end() : start.end() + end.start()] if end else text[start.end() :]
    return [b.strip() for b in re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["GPUADVISOR_NO_CACHE"] = "1"
    return env


def _bash(line: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _status(clone: Path) -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=no"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_setup_section_is_two_commands() -> None:
    install, tests = setup_commands(README.read_text(encoding="utf-8"))
    assert (
        install.startswith("python3 -m venv .venv && ") and "gpuadvisor advise examples/" in install
    )
    assert tests == ".venv/bin/python -m pytest"
    # CI runs exactly the README's test command.
    assert tests in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_fresh_clone_readme_setup_and_tour(tmp_path: Path) -> None:
    clone = tmp_path / "gpuadvisor"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    install, _ = setup_commands((clone / "README.md").read_text(encoding="utf-8"))

    done = _bash(install, clone, timeout=1200)
    assert done.returncode == 0, f"the README's set-up command failed:\n{done.stderr[-4000:]}"
    # pip's progress comes first on stdout, then the report.
    assert "\n# GPU purchase recommendation: Support-chat LLM endpoint\n" in done.stdout
    assert _status(clone) == "", "installing changed the checkout:\n" + _status(clone)

    script = clone / ".venv" / "bin" / "gpuadvisor"
    probe_here = nvml_works()
    failures: list[str] = []
    for run in tour_runs((clone / "README.md").read_text(encoding="utf-8")):
        line = run.line
        # As the README says: after `. .venv/bin/activate`, or as .venv/bin/gpuadvisor.
        command = f". .venv/bin/activate && {line}"
        expected = 2 if line.startswith("gpuadvisor probe") and not probe_here else 0
        result = _bash(command, clone)
        if result.returncode != expected or "Traceback" in result.stderr:
            failures.append(f"{line}: exit {result.returncode}\n{result.stderr[-1500:]}")
    assert script.is_file()
    assert not failures, "tour lines that fail in a fresh clone:\n\n" + "\n\n".join(failures)
    assert (clone / "report.pdf").read_bytes().startswith(b"%PDF-")
    assert (clone / "acme.pdf").read_bytes().startswith(b"%PDF-")
