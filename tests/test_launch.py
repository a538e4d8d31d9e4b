"""The program entry point runs the CLI with the collector tuned, and leaves it on."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

from gpuadvisor import launch


def test_main_runs_with_the_collector_on_and_a_higher_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    def fake_main() -> None:
        seen["enabled"] = gc.isenabled()
        seen["threshold"] = gc.get_threshold()[0]
        seen["plugins"] = os.environ.get("PYDANTIC_DISABLE_PLUGINS")

    monkeypatch.setattr("gpuadvisor.cli.main", fake_main)
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    before = gc.get_threshold()
    try:
        launch.run()
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
        gc.enable()
    assert seen == {"enabled": True, "threshold": launch.YOUNG_THRESHOLD, "plugins": "__all__"}


def test_importing_the_cli_leaves_the_environment_alone() -> None:
    """Only the program (launch.run) disables pydantic plugins; a program that imports
    gpuadvisor.cli keeps its environment as it was."""
    from .conftest import REPO

    script = (
        "import os, sys; before = dict(os.environ);"
        "import gpuadvisor.cli, gpuadvisor.cli.app;"
        "assert 'gpuadvisor.launch' not in sys.modules;"
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_errors_still_exit_with_their_code(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_main() -> None:
        sys.exit(2)

    monkeypatch.setattr("gpuadvisor.cli.main", failing_main)
    before = gc.get_threshold()
    try:
        with pytest.raises(SystemExit) as stopped:
            launch.run()
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
        gc.enable()
    assert stopped.value.code == 2


def test_python_dash_m_goes_through_the_launcher() -> None:
    from .conftest import REPO

    done = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "advise", "examples/llm-latency-endpoint.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# GPU purchase recommendation")


def _modules_after_preload(args: list[str]) -> set[str]:
    """The gpuadvisor modules a fresh process holds after cli.preload(args)."""
    from .conftest import REPO

    script = (
        "import sys, json; from gpuadvisor.cli import preload;"
        "before = set(sys.modules); preload(json.loads(sys.argv[1]));"
        "print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith('gpuadvisor'))))"
    )
    import json

    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_preload_imports_what_advise_runs_on_before_the_freeze() -> None:
    """advise's modules are imported before launch freezes what imports made (so the
    collector never scans them); the evidence modules only when evidence is given; a
    command's help, another command, or no command imports nothing."""
    plain = _modules_after_preload(["advise", "profile.toml"])
    assert {"gpuadvisor.pipeline", "gpuadvisor.render.report"} <= plain
    assert "gpuadvisor.evidence" not in plain
    for evidence in (["--evidence", "x.txt"], ["-e", "x.txt"], ["--evidence=x.txt"], ["-ex"]):
        found = _modules_after_preload(["advise", "profile.toml", *evidence])
        assert {"gpuadvisor.evidence", "gpuadvisor.engine.hostfacts"} <= found, evidence
    for args in (["advise", "--help"], ["rules", "list"], ["--help"], []):
        assert _modules_after_preload(args) == set(), args
