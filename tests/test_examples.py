"""The worked examples: each one's recommendation is pinned, and three are pinned whole.

``pytest --update-golden`` rewrites the files from the current output; review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render

from .conftest import REPO

GOLDEN = Path(__file__).resolve().parent / "golden_examples"
EXAMPLES = [name for name, _ in list_examples()]
FULL = (
    "llm-latency-endpoint",
    "hyperparameter-sweep",
    "input-bound-training",
    "thermal-throttled-workstation",
)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evidence paths are quoted in reports as given: keep them relative and stable."""
    monkeypatch.chdir(REPO)


def evidence_for(name: str) -> list[Path]:
    """Captures shipped for an example live in examples/evidence/<name>/ (relative paths)."""
    folder = Path("examples") / "evidence" / name
    return sorted(folder.glob("*")) if (REPO / folder).is_dir() else []


def _summary(name: str) -> dict[str, object]:
    decision = advise(
        REPO / "examples" / f"{name}.toml", evidence=evidence_for(name), sensitivity=False
    )
    r = decision.recommendation
    capacity = r.capacity
    return {
        "shape": r.shape,
        "class": r.class_,
        "gpu_count": r.gpu_count,
        "top_pick": decision.picks[0].sku if decision.picks else None,
        "fix_first": [f.rule for f in decision.fix_first],
        "action": r.action,
        "served": (
            f"{capacity.jobs_served} of {capacity.jobs_wanted} on {capacity.cards} cards, "
            f"{capacity.hosts_needed} host(s)"
            if capacity
            else None
        ),
        "kept": sum(e.count for e in r.existing if e.kept),
    }


def test_there_are_at_least_twelve_worked_examples() -> None:
    assert len(EXAMPLES) >= 12
    for name in (
        "thermal-throttled-workstation",
        "input-bound-host",
        "second-rtx-4090",
        "add-two-rtx-a5000",
    ):
        assert evidence_for(name), f"{name} ships its captures"


def test_expected_recommendations(request: pytest.FixtureRequest) -> None:
    path = GOLDEN / "recommendations.json"
    actual = {name: _summary(name) for name in EXAMPLES}
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert actual == expected


@pytest.mark.parametrize("name", FULL)
@pytest.mark.parametrize("fmt", ["json", "md"])
def test_golden_reports(name: str, fmt: str, request: pytest.FixtureRequest) -> None:
    decision = advise(REPO / "examples" / f"{name}.toml", evidence=evidence_for(name))
    text = render(decision, fmt)  # type: ignore[arg-type]
    path = GOLDEN / f"{name}.{fmt}"
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()
