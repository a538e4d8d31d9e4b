"""The installed package, when its wheel was compiled with mypyc (hatch_build.py), decides
exactly as the sources do: every bundled example (with the what-would-change scan) and
generated profiles with host evidence, compared as JSON.

``python -m pytest`` imports the source tree; the installed copy is run in a separate,
isolated interpreter (``-I``: no source tree on its path). Skipped, saying why, when the
installed package is pure Python (an editable install, ``GPUADVISOR_PURE_PYTHON=1``, or
no C compiler when it was built): there is nothing compiled to compare.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO

#: 2026-12-01, the date both sides decide on (prices' ages, generated_at).
EPOCH = "1796083200"


def _compiled_files() -> list[str]:
    try:
        files = importlib.metadata.distribution("gpuadvisor").files or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [
        str(f) for f in files if str(f).startswith("gpuadvisor/") and f.suffix in (".so", ".pyd")
    ]


#: What each side runs: the decisions of every input, as JSON.
_DECIDE = """
import json, sys
from pathlib import Path
import gpuadvisor.engine.memo, gpuadvisor.decision.build
from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.evidence import load_evidence
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.pipeline import advise

def run(job):
    out = {"modules": [gpuadvisor.engine.memo.__file__, gpuadvisor.decision.build.__file__]}
    out["examples"] = [
        advise(Path(p), sensitivity=True).model_dump(mode="json") for p in job["examples"]
    ]
    catalog, rules = load_catalog(), load_rules()
    host = derive_host_facts(load_evidence([Path(p) for p in job["evidence"]]))
    advisor = Advisor(Engine(catalog, rules))
    decisions = []
    for index, data in enumerate(job["profiles"]):
        profile = Profile.model_validate(data)
        facts = build_facts(profile, catalog, host.values, host.sources)
        decision = decide(profile, advisor, facts, sensitivity=index < job["scanned"])
        decisions.append(decision.model_dump(mode="json"))
    out["profiles"] = decisions
    return out
"""


def _job() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("bench", REPO / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = random.Random(20261201)
    return {
        "examples": [str(p) for p in sorted((REPO / "examples").glob("*.toml"))],
        "evidence": [str(REPO / p) for p in bench.EVIDENCE],
        "profiles": [bench.random_profile(rng) for _ in range(150)],
        "scanned": 10,
    }


@pytest.mark.slow
def test_the_compiled_package_decides_as_the_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuadvisor.engine.memo

    if not gpuadvisor.engine.memo.__file__.endswith(".py"):
        pytest.skip(
            "this run imports the compiled package itself; the run over the sources compares"
        )
    compiled = _compiled_files()
    if not compiled:
        pytest.skip(
            "the installed gpuadvisor is pure Python (an editable install, "
            "GPUADVISOR_PURE_PYTHON=1, or no C compiler when its wheel was built)"
        )
    job = _job()
    (tmp_path / "job.json").write_text(json.dumps(job))
    script = _DECIDE + (
        "\njob = json.loads(Path('job.json').read_text())"
        "\nPath('out.json').write_text(json.dumps(run(job)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["SOURCE_DATE_EPOCH"] = EPOCH
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    installed = json.loads((tmp_path / "out.json").read_text())
    # The installed side ran the compiled modules, not sources.
    assert all(not m.endswith(".py") for m in installed["modules"]), installed["modules"]

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    namespace: dict[str, Any] = {}
    exec(_DECIDE, namespace)
    source = json.loads(json.dumps(namespace["run"](job)))
    assert all(m.endswith(".py") for m in source["modules"]), source["modules"]
    assert len(installed["examples"]) == len(job["examples"])
    for path, mine, theirs in zip(
        job["examples"], source["examples"], installed["examples"], strict=True
    ):
        assert theirs == mine, path
    for index, (mine, theirs) in enumerate(
        zip(source["profiles"], installed["profiles"], strict=True)
    ):
        assert theirs == mine, index


#: What a copy of the checkout leaves out: caches, environments, build output.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "out", "__pycache__", ".*_cache", ".hypothesis", "*.so"
)


@pytest.mark.slow
def test_a_machine_without_a_c_compiler_gets_the_pure_wheel(tmp_path: Path) -> None:
    """mypyc failing (here: a C compiler that always fails) makes a pure-Python wheel
    with a warning, never a failed install, and leaves no compiled file in the sources."""
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCES)
    env = {k: v for k, v in os.environ.items() if k != "GPUADVISOR_PURE_PYTHON"}
    env["CC"] = "false"  # every compile step exits 1
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", str(source)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = tmp_path.glob("gpuadvisor-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert "could not be compiled with mypyc" in done.stdout + done.stderr
    assert not [p for p in source.rglob("*") if p.suffix in (".so", ".pyd")]
    assert (source / "pyproject.toml").is_file()  # put back after the build hid it
