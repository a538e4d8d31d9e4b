"""Displays and accessories (issue #30 §2): ``requirements.displays`` at
``requirements.display_mode`` bounds each host's cards from below, a sync board is a
line item with ``requirements.display_sync``, and an NVLink pair gets its bridge."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.decision.seats import accessory_items, line_items_of, price_words
from gpuadvisor.decision.words import pick_flags
from gpuadvisor.engine.displays import Outfit, cards_for_displays, outputs_at
from gpuadvisor.engine.makers import OptionMaker, OverHosts
from gpuadvisor.engine.option import Option
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.pipeline import advise
from gpuadvisor.render.purchase import chosen_label, signoff_line
from gpuadvisor.vocabulary import Shape

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
    assert decision.recommendation.headline == (
        "No card in the catalog can drive the displays: 12 displays at 4K60 need 3 cards "
        "of 4 outputs; this host takes 2. Split the displays over more hosts, or choose a "
        "chassis that takes 3 cards."
    )
    nofit = next(f for f in decision.findings if f.rule == "ENGINE-NOFIT-001")
    assert nofit.rationale.startswith(
        "The displays decide it: 12 displays at 4K60 need 3 cards of 4 outputs; this host takes 2."
    )
    # Where the host takes the cards, the generic sentence stays.
    wide = advise(_wall(tmp_path, cards=4, mode="8k60"), sensitivity=False)
    assert wide.recommendation.headline.startswith("No card in the catalog meets every")


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


SYNC = Outfit(sync=True, nvlink=True)


def _option(
    shape: Shape, sku: str, count: int, *, outfit: Outfit = SYNC, hosts: int = 1, per_job: int = 1
) -> Option:
    """An option made as the engine makes it, with the catalog's accessories."""
    make = OverHosts(OptionMaker(CATALOG.accessories), hosts, 2, outfit)
    return make.option(shape, SKUS[sku], count, 40.0, 1, cards_per_job=per_job)


def test_a_listed_sync_board_is_counted_per_four_cards_and_per_host() -> None:
    option = _option("single-larger-gpu", "rtx-a6000", 3, hosts=2)
    items = accessory_items(option)
    assert [(i.name, i.count, i.usd) for i in items] == [("NVIDIA Quadro Sync II", 2, None)]
    assert line_items_of(option, items)[0].count == 6
    assert option.total_price_usd == pytest.approx(6 * 4649.0)
    assert option.extras_on_quote and option.price_incomplete
    assert price_words(option) == ("6 cards, about $27,894 in total plus 2 sync boards on quote")


def test_an_nvlink_pair_gets_the_bridge_that_clears_the_card() -> None:
    bridged = Outfit(sync=False, nvlink=True)
    pair = _option("multi-gpu-model-parallel", "rtx-a6000", 2, outfit=bridged, per_job=2)
    items = accessory_items(pair)
    assert [(i.name, i.count) for i in items] == [("NVIDIA RTX A6000 NVLink Bridge (2-slot)", 1)]
    wide = _option("multi-gpu-model-parallel", "geforce-rtx-3090", 2, outfit=bridged, per_job=2)
    assert [i.name for i in accessory_items(wide)] == [
        "NVIDIA GeForce RTX 3090 NVLink Bridge (4-slot)"
    ]
    plain = _option("multi-gpu-model-parallel", "rtx-a6000", 2, outfit=Outfit(), per_job=2)
    assert accessory_items(plain) == () and not plain.price_incomplete


def _priced_board(usd: float) -> Catalog:
    """The bundled catalog with a sync board for the RTX 4000 Ada at ``usd``."""
    board = next(a for a in CATALOG.accessories if a.kind == "sync-board")
    priced = board.model_copy(
        update={
            "id": "test-sync-board",
            "fits": (*board.fits, "rtx-4000-ada"),
            "price_usd": usd,
            "price_date": dt.date(2026, 11, 1),
            "price_kind": "list",
            "price_source": "https://example.com/test-sync-board",
        }
    )
    return dataclasses.replace(CATALOG, accessories=(*CATALOG.accessories, priced))


def test_a_priced_sync_board_counts_in_the_engine_total_and_the_budget() -> None:
    catalog = _priced_board(1200.0)
    option = OverHosts(OptionMaker(catalog.accessories), 1, 1, SYNC).option(
        "single-larger-gpu", SKUS["rtx-4000-ada"], 3, 16.0, 1
    )
    assert option.cards_price_usd == pytest.approx(3750.0)
    assert option.total_price_usd == pytest.approx(4950.0)
    assert option.facts()["option.total_price_usd"] == pytest.approx(4950.0)
    assert not option.extras_on_quote
    decision = advise(REPO / "examples" / "video-wall.toml", sensitivity=False, catalog=catalog)
    top = decision.picks[0]
    cards = top.line_items[0].usd
    assert cards is not None and top.total_price_usd == pytest.approx(cards + 1200.0)
    assert top.line_items[1].name == "NVIDIA Quadro Sync II"
    assert "with the NVIDIA Quadro Sync II" in decision.recommendation.headline


def test_cards_within_the_budget_but_not_with_their_sync_board_are_rejected() -> None:
    # 3 x RTX 4000 Ada is $3,750, within the $8,000; with a $5,000 board it is not.
    decision = advise(
        REPO / "examples" / "video-wall.toml", sensitivity=False, catalog=_priced_board(5000.0)
    )
    assert all(p.sku != "rtx-4000-ada" for p in decision.picks)
    assert all(p.total_price_usd is None or p.total_price_usd <= 8000.0 for p in decision.picks)


def test_a_sync_board_on_quote_caps_confidence_and_says_the_budget_is_not_complete() -> None:
    decision = advise(REPO / "examples" / "video-wall.toml", sensitivity=False)
    assert decision.recommendation.confidence != "high"
    flags = " ".join(pick_flags(decision.picks[0]))
    assert (
        "Budget checked without the Sync board for the NVIDIA RTX 4000 Ada Generation (not "
        "in the catalog): priced on quote, it comes on top of the $3,750 held to the budget."
    ) in flags


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


def test_the_video_wall_report_reads_as_three_cards_for_its_panels() -> None:
    decision = advise(REPO / "examples" / "video-wall.toml", sensitivity=False)
    top = decision.picks[0]
    # (a) the kind of purchase says what it is, not "one larger GPU"; the enum stays.
    assert decision.recommendation.shape == "single-larger-gpu"
    assert top.kind_words == "3 cards to drive 12 displays"
    assert chosen_label(decision) == "3 cards to drive 12 displays · professional"
    assert signoff_line(decision) == (
        "3 cards to drive 12 displays · professional: 3 × NVIDIA RTX 4000 Ada Generation, "
        "$3,750 plus accessories on quote"
    )
    # (b), (c) no "buy one faster card" and no "a second card would sit idle".
    fired = {f.rule for f in decision.findings}
    assert "FRAME-001" not in fired and "JOBS-002" not in fired
    assert all("one faster card" not in f.action for f in decision.findings)
    # (d) the 4K60 count rests on the card's plain outputs, and the report says so.
    assert (
        "The catalog has no 4K 60 Hz display figure for the NVIDIA RTX 4000 Ada Generation: "
        "each of its 4 outputs is counted as one 4K60 panel (a DisplayPort 1.4a or newer "
        "output carries one). Check the card's datasheet before ordering for the wall."
    ) in decision.assumptions


def test_one_card_for_its_displays_keeps_frame_pacing_advice(tmp_path: Path) -> None:
    text = (REPO / "examples" / "video-wall.toml").read_text(encoding="utf-8")
    path = tmp_path / "desk.toml"
    path.write_text(text.replace("displays = 12", "displays = 4"), encoding="utf-8")
    decision = advise(path, sensitivity=False)
    assert decision.picks[0].count == 1 and decision.picks[0].kind_words == ""
    assert "FRAME-001" in {f.rule for f in decision.findings}
