"""Displays and accessories (issue #30 §2): ``requirements.displays`` at
``requirements.display_mode`` bounds each host's cards from below, a sync board is a
line item with ``requirements.display_sync``, and an NVLink pair gets its bridge."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.decision.seats import accessory_items, line_items_of, order_total, price_words
from gpuadvisor.engine.displays import cards_for_displays, outputs_at
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.policy import bundled_policy
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.pipeline import advise

from .conftest import REPO, CliResult

CATALOG = load_catalog()
SKUS = {s.id: s for s in CATALOG.skus}


def test_the_video_wall_example_buys_three_cards_of_four_outputs_and_a_sync_board() -> None:
    decision = advise(REPO / "examples" / "video-wall.toml", sensitivity=False)
    top = decision.picks[0]
    assert (top.sku, top.count, top.hosts) == ("rtx-4000-ada", 3, 1)
    assert [(i.name, i.count, i.usd) for i in top.line_items] == [
        ("NVIDIA RTX 4000 Ada Generation", 3, pytest.approx(3750.0)),
        ("Sync board for the NVIDIA RTX 4000 Ada Generation (not in the catalog)", 1, None),
    ]
    assert top.total_price_usd == pytest.approx(3750.0)
    assert decision.recommendation.gpu_count == 3
    assert decision.recommendation.headline.startswith(
        "Buy 3 × NVIDIA RTX 4000 Ada Generation for the 12 displays (20 GiB each, "
        "professional class, about $3,750 plus a sync board on quote): "
    )
    # Every pick shown drives the 12 panels: 3 cards of 4 outputs each.
    assert all(p.count == 3 for p in decision.picks)


def _wall(tmp_path: Path, *, cards: int, mode: str = "4k60") -> Path:
    text = (REPO / "examples" / "video-wall.toml").read_text(encoding="utf-8")
    text = text.replace("gpu_count_max = 4", f"gpu_count_max = {cards}")
    text = text.replace('display_mode = "4k60"', f'display_mode = "{mode}"')
    path = tmp_path / "wall.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_host_of_two_cards_cannot_drive_twelve_4k_panels(tmp_path: Path) -> None:
    decision = advise(_wall(tmp_path, cards=2), sensitivity=False)
    assert decision.picks == ()
    assert decision.recommendation.headline.startswith("No card in the catalog meets")


def test_8k_panels_on_cards_without_an_8k_figure_are_not_assumed(tmp_path: Path) -> None:
    decision = advise(_wall(tmp_path, cards=4, mode="8k60"), sensitivity=False)
    assert decision.picks == ()
    assert any("DISP-002" in r.because for r in decision.rejected)


def test_cards_for_displays_is_the_ceiling_of_panels_over_outputs() -> None:
    card = SKUS["rtx-4000-ada"]
    assert outputs_at(card, "any") == 4 and outputs_at(card, "8k60") is None
    assert cards_for_displays(card, 12, "4k60") == 3
    assert cards_for_displays(card, 13, "any") == 4
    assert cards_for_displays(card, 4, "4k60") == 1
    assert cards_for_displays(card, 0, "any") == 1
    assert cards_for_displays(SKUS["h100-pcie"], 2, "any") == 1  # no outputs: rejected later


FACTS = {"requirements.display_sync": True, "platform.nvlink_possible": True}


def test_a_listed_sync_board_is_counted_per_four_cards_and_per_host() -> None:
    option = Option("single-larger-gpu", SKUS["rtx-a6000"], 3, 40.0, 2, hosts=2)
    items = accessory_items(option, FACTS, bundled_policy(), CATALOG.accessories)
    assert [(i.name, i.count, i.usd) for i in items] == [("NVIDIA Quadro Sync II", 2, None)]
    assert line_items_of(option, items)[0].count == 6
    assert order_total(option, items) == pytest.approx(6 * 4649.0)
    assert price_words(option, items) == (
        "6 cards, about $27,894 in total plus 2 sync boards on quote"
    )


def test_an_nvlink_pair_gets_the_bridge_that_clears_the_card() -> None:
    facts = {**FACTS, "requirements.display_sync": False}
    pair = Option("multi-gpu-model-parallel", SKUS["rtx-a6000"], 2, 80.0, 1, cards_per_job=2)
    items = accessory_items(pair, facts, bundled_policy(), CATALOG.accessories)
    assert [(i.name, i.count) for i in items] == [("NVIDIA RTX A6000 NVLink Bridge (2-slot)", 1)]
    wide = Option("multi-gpu-model-parallel", SKUS["geforce-rtx-3090"], 2, 40.0, 1, cards_per_job=2)
    items = accessory_items(wide, facts, bundled_policy(), CATALOG.accessories)
    assert [i.name for i in items] == ["NVIDIA GeForce RTX 3090 NVLink Bridge (4-slot)"]
    no_bridge = {**facts, "platform.nvlink_possible": False}
    assert accessory_items(pair, no_bridge, bundled_policy(), CATALOG.accessories) == ()


def test_the_profile_schema_names_the_display_fields(cli: Callable[..., CliResult]) -> None:
    result = cli("schema", "profile")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    requirements = schema["$defs"]["Requirements"]["properties"]
    assert requirements["displays"]["default"] == 0
    assert requirements["display_mode"]["enum"] == ["any", "4k60", "8k60"]


def test_a_display_mode_outside_the_list_is_a_clear_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    result = cli("advise", str(_wall(tmp_path, cards=4, mode="5k60")))
    assert result.exit_code == 2
    assert "wall.toml" in result.stderr and "requirements.display_mode" in result.stderr
    assert "Traceback" not in result.stderr
