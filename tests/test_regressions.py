"""Replay every input that ever crashed or hung gpuadvisor (``fixtures/regressions``,
see its README): each must end with exit 0 or 2, no traceback, within seconds."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .hostile_support import PROFILE, Cli

REGRESSIONS = FIXTURES / "regressions"
CASES = sorted(p for p in REGRESSIONS.iterdir() if p.name != "README.md")


def test_every_regression_has_a_known_prefix() -> None:
    prefixes = ("evidence-", "profile-", "rule-", "template-")
    assert CASES, "the regression corpus is empty"
    assert all(case.name.startswith(prefixes) for case in CASES)


def _args(case: Path, tmp_path: Path) -> list[str]:
    profile = tmp_path / "profile.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    base = ["advise", str(profile), "--no-sensitivity"]
    if case.name.startswith("evidence-"):
        return [*base, "--evidence", str(case)]
    if case.name.startswith("profile-"):
        return ["advise", str(case), "--no-sensitivity"]
    folder = tmp_path / "overlay"
    folder.mkdir()
    if case.name.startswith("rule-"):
        shutil.copy(case, folder / "JOBS-001.toml")
        return ["rules", "lint", str(folder)]
    shutil.copy(case, folder / "report.md.j2")
    return [*base, "--template", str(folder)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_regression_replays_cleanly(cli: Cli, tmp_path: Path, case: Path) -> None:
    start = time.perf_counter()
    result = cli(*_args(case, tmp_path))
    elapsed = time.perf_counter() - start
    assert result.exit_code in (0, 2), result.stderr
    assert "internal error" not in result.stderr
    assert "Traceback" not in result.stderr
    if result.exit_code == 2:
        assert result.stderr.startswith("gpuadvisor: error: ")
    assert elapsed < 10, f"{case.name} took {elapsed:.1f} s"
