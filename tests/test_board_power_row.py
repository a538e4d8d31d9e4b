"""The comparison table's "Board power, all cards" is what every card the option runs on
draws, the host's kept cards included: the same figure as the summary's fit line, not
the cards bought alone (a kept RTX 4090 beside a 140 W card is 590 W, not 140 W)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.pipeline import advise
from gpuadvisor.render.view import comparison_columns, comparison_rows
from gpuadvisor.vocabulary import format_value

from .test_examples import EXAMPLES, evidence_for


def _power_row(name: str) -> tuple[list[str], list[str]]:
    decision = advise(
        Path("examples") / f"{name}.toml", evidence=evidence_for(name), sensitivity=False
    )
    columns = comparison_columns(decision)
    rows = {r.label: r.cells for r in comparison_rows(columns, decision.lifecycle_years)}
    expected = [f"{format_value(c.pick.board_power_w)} W" for c in columns]
    return list(rows["Board power, all cards"]), expected


@pytest.mark.parametrize("name", EXAMPLES)
def test_board_power_counts_every_card_the_option_runs_on(name: str) -> None:
    shown, expected = _power_row(name)
    assert shown == expected


def test_a_kept_rtx_4090_counts_in_the_board_power() -> None:
    shown, _ = _power_row("second-rtx-4090")
    # 1 × RTX PRO 4000 Blackwell (140 W) beside the kept RTX 4090 (450 W); keeping the
    # 4090 alone draws its 450 W, not nothing.
    assert shown[0] == "590 W"
    assert "450 W" in shown
    assert "0 W" not in shown
