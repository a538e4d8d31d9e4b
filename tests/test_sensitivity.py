"""What would change the answer, exactly: every reported threshold changes the answer, and
the value one step nearer today's does not (#17, item 6).

The scan bisects each numeric input to its step (engine.sensitivity.STEP); these tests run
the real engine on both sides of every boundary it reports, for every bundled example.
"""

from __future__ import annotations

import pytest

from gpuadvisor.engine.core import Core, Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.engine.sensitivity import STEP, Flip, neighbour, scan
from gpuadvisor.evidence import load_evidence
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.pipeline import read_profile

from .conftest import REPO

EXAMPLES = [name for name, _ in list_examples()]
CATALOG = load_catalog()
ENGINE = Engine(CATALOG, load_rules())


def scanned(name: str) -> tuple[Core, list[Flip]]:
    profile, _ = read_profile(REPO / "examples" / f"{name}.toml")
    folder = REPO / "examples" / "evidence" / name
    host = None
    if folder.is_dir():
        host = derive_host_facts(load_evidence(sorted(folder.glob("*"))))
    facts = build_facts(
        profile, CATALOG, host.values if host else None, host.sources if host else None
    )
    core = ENGINE.run(facts.values)
    return core, scan(ENGINE, core)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_threshold_changes_the_answer_and_the_step_before_does_not(name: str) -> None:
    core, flips = scanned(name)
    base = core.outcome()
    facts = dict(core.facts)
    numeric = [f for f in flips if f.direction != "change"]
    assert numeric, f"{name}: no numeric threshold found"
    for flip in numeric:
        at = ENGINE.outcome({**facts, flip.input: flip.flips_at}).key()
        assert at != base, (flip.input, flip.flips_at)
        assert at == flip.outcome.key(), (flip.input, flip.flips_at)
        before = neighbour(flip)
        assert ENGINE.outcome({**facts, flip.input: before}).key() == base, (
            flip.input,
            flip.flips_at,
            before,
        )


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_choice_flip_changes_the_answer(name: str) -> None:
    core, flips = scanned(name)
    base = core.outcome()
    for flip in (f for f in flips if f.direction == "change"):
        changed = ENGINE.outcome({**dict(core.facts), flip.input: flip.flips_at}).key()
        assert changed != base, (flip.input, flip.flips_at)


def test_thresholds_sit_on_the_inputs_own_step() -> None:
    """A reported value is today's value plus a whole number of steps: $1, 0.1 GiB, 1 W."""
    for name in ("hyperparameter-sweep", "llm-latency-endpoint", "vdi-many-users"):
        _, flips = scanned(name)
        for flip in flips:
            if flip.direction == "change":
                continue
            assert isinstance(flip.current, (int, float))
            assert isinstance(flip.flips_at, (int, float))
            steps = abs(float(flip.flips_at) - float(flip.current)) / STEP[flip.input]
            assert abs(steps - round(steps)) < 1e-6, (name, flip)


def test_a_budget_threshold_is_the_nearest_not_a_grid_point() -> None:
    """The issue's case: 'if the budget falls to 4,094' where the answer already changed
    at 4,499. The reported value is where the current pick stops fitting."""
    core, flips = scanned("llm-latency-endpoint")
    budget = next(f for f in flips if f.input == "budget.max_usd" and f.direction == "down")
    top = core.top
    assert top is not None
    assert budget.flips_at == top.total_price_usd - 1


def test_every_scanned_input_is_a_fact() -> None:
    """A misspelt name would be skipped silently (requirements.needs_fp64 for
    workload.needs_fp64 was): every scanned input is a fact of the profile."""
    from gpuadvisor.engine.factspec import FACTS_BY_NAME
    from gpuadvisor.engine.sensitivity import CHOICE_INPUTS, NUMERIC_INPUTS

    for name in (*NUMERIC_INPUTS, *CHOICE_INPUTS):
        assert name in FACTS_BY_NAME, name
    assert {"workload.needs_fp64", "platform.nvlink_possible"} <= set(CHOICE_INPUTS)
