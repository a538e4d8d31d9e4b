"""A fired rule's advice does not read as the recommendation when the pick is another kind.

COST-001 fires whenever no professional feature is needed ("Buy consumer cards for this
tier"), but in a 4-GPU tower no consumer card may be stacked four high (AIR-004), so the
pick is a professional blower card. The finding then says, in its effect, that its
advice was not followed and why (the rejection's own words), in every format.
"""

from __future__ import annotations

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render

from .conftest import REPO
from .test_examples import EXAMPLES, evidence_for


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def _decision(name: str) -> Decision:
    return advise(
        REPO / "examples" / f"{name}.toml", evidence=evidence_for(name), sensitivity=False
    )


def test_four_gpu_tower_says_the_consumer_advice_was_not_followed_and_why() -> None:
    decision = _decision("four-gpu-tower")
    assert decision.recommendation.class_ == "professional"
    cost = next(f for f in decision.findings if f.rule == "COST-001")
    expected = (
        "not followed (consumer: its best option serves 2 of 4 jobs against 4 for the chosen)"
    )
    assert cost.effect.endswith("; " + expected)
    rejected = {r.option: r.reason for r in decision.rejected}
    assert rejected["consumer"] in expected
    for fmt in ("md", "html", "json"):
        text = render(decision, fmt)
        assert isinstance(text, str)
        assert "not followed (consumer: its best option serves 2 of 4 jobs" in text, fmt


@pytest.mark.parametrize("name", EXAMPLES)
def test_a_preference_says_not_followed_exactly_when_all_it_favours_lost(name: str) -> None:
    """Not followed: what it favours lost, or it counts against the chosen kind, or
    nothing is bought at all; and then its action says so before the advice."""
    decision = _decision(name)
    chosen = {decision.recommendation.shape, decision.recommendation.class_}
    rejected = {r.option for r in decision.rejected}
    keeps = decision.recommendation.action == "keep"
    for finding in decision.findings:
        if finding.kind != "preference":
            continue
        parts = finding.effect.split("; ")
        favoured = [
            p.split(" (")[0].removeprefix("favours ") for p in parts if p.startswith("favours ")
        ]
        against = [
            p.split(" (")[0].removeprefix("counts against ")
            for p in parts
            if p.startswith("counts against ")
        ]
        moves = bool(favoured or against)
        lost = favoured and not chosen & set(favoured) and rejected & set(favoured)
        expected = (keeps and moves) or bool(lost) or bool(chosen & set(against))
        assert ("not followed (" in finding.effect) == expected, (name, finding.effect)
        assert finding.action.startswith("Not followed here (") == expected, finding.action
