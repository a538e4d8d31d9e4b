"""The purchase summary of the report page and the levers under "What would change the
answer" (issue #30's decisions on the page): the cards over every machine a purchase
equips, the hosts in words, the order's line items with their prices and the total, the
budget held to the whole need, the time limit with the speed bound in words, a card
nobody can say is still made, and each lever with its card and price. Built from the
bundled examples' decisions; the page's own walk is in ``test_web_flow.py`` and
``test_web_buyer_walk.py``.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision, LineItem
from gpuadvisor.pipeline import advise
from gpuadvisor.web.purchase import Line, lever_changes, purchase_lines
from gpuadvisor.web.report_view import buyer_view
from gpuadvisor.web.wording import wording

from .conftest import REPO


@functools.cache
def decided(name: str) -> Decision:
    return advise(REPO / "examples" / f"{name}.toml")


def lines(decision: Decision, budget: float | None, slo_ms: float | None = None) -> dict[str, Line]:
    return {line.label: line for line in purchase_lines(decision, budget, slo_ms)}


def with_pick(decision: Decision, **changes: object) -> Decision:
    pick = decision.picks[0].model_copy(update=changes)
    return decision.model_copy(update={"picks": (pick, *decision.picks[1:])})


# -- several machines, the line items, the total -----------------------------------------


def test_five_seats_are_bought_as_five_cards_one_in_each_workstation() -> None:
    view = buyer_view(decided("cad-seats"), budget_usd=4000)
    assert view.verdict == "Buy 5 × NVIDIA RTX 2000 Ada Generation"
    shown = {line.label: line for line in view.summary}
    assert shown["Quantity"].value == "1 card in each of 5 workstations, 5 cards"
    assert shown["Line items"].items == ("5 × NVIDIA RTX 2000 Ada Generation: $3,125",)
    assert shown["Total price"].value == "$3,125 for all 5 machines"
    assert shown["Budget"].value == "within $4,000 ($875 left)"
    assert shown["Capacity"].value.startswith("1 card in each of 5 workstations (5 cards)")
    one = lines(decided("cad-certified"), 20000)  # one machine: nothing said of machines
    assert one["Quantity"].value == "1 card" and "machines" not in one["Total price"].value


def test_every_line_item_is_listed_with_its_count_and_price() -> None:
    """Sync boards and bridges join the cards in the list: whatever it holds is shown."""
    decision = decided("cad-certified")
    pick = decision.picks[0]
    items = (
        *pick.line_items,
        LineItem(name="NVIDIA Quadro Sync II", count=1, usd=1100.0),
        LineItem(name="NVIDIA NVLink bridge", count=2, usd=None),
    )
    shown = lines(with_pick(decision, line_items=items), None)["Line items"].items
    assert shown[1:] == ("1 × NVIDIA Quadro Sync II: $1,100", "2 × NVIDIA NVLink bridge: on quote")
    assert shown[0].startswith(f"{pick.line_items[0].count} × {pick.name}: $")


# -- the budget for the whole need -------------------------------------------------------


def test_a_shortfall_holds_the_budget_to_every_wanted_job() -> None:
    decision = decided("hyperparameter-sweep")  # 4 of 8 runs; two towers' cards $5,000
    whole = lines(decision, 8000)["Budget for the whole need"]
    assert whole == Line(
        "Budget for the whole need",
        "2 machines like this one serve all 8 jobs, about $5,000 in cards: within $8,000 "
        "($3,000 left)",
        "good",
    )
    caveats = buyer_view(decision, budget_usd=8000).caveats
    assert caveats[0] == (
        "This purchase serves 4 of the 8 jobs wanted: 2 machines like this one serve them all."
    )


def test_a_whole_need_over_the_budget_says_by_how_much() -> None:
    decision = decided("hyperparameter-sweep")
    capacity = decision.recommendation.capacity
    assert capacity is not None
    over = capacity.model_copy(update={"whole_need_within_budget": False})
    decision = decision.model_copy(
        update={"recommendation": decision.recommendation.model_copy(update={"capacity": over})}
    )
    whole = lines(decision, 4000)["Budget for the whole need"]
    assert (whole.value.endswith("over $4,000 by $1,000"), whole.tone) == (True, "bad")


def test_a_whole_need_priced_on_quote_is_not_checked() -> None:
    whole = lines(decided("demand-beyond-one-host"), 10000)["Budget for the whole need"]
    assert whole.value == (
        "10 machines like this one serve all 40 jobs: not checked, their cards are priced on quote"
    )
    assert "Budget for the whole need" not in lines(decided("cad-seats"), 4000)


# -- the time limit ----------------------------------------------------------------------


def test_a_met_time_limit_says_what_the_speed_bound_allows() -> None:
    target = lines(decided("llm-latency-endpoint"), 10000, 2000)["Time limit for one answer"]
    assert target == Line(
        "Time limit for one answer",
        "met: answers start within 2 s: at most 36 tokens after a full-length question "
        "(4,096 tokens)",
        "good",
    )


def test_a_time_limit_no_card_meets_is_said_with_what_even_the_pick_takes(
    tmp_path: Path,
) -> None:
    text = (REPO / "examples" / "llm-latency-endpoint.toml").read_text(encoding="utf-8")
    profile = tmp_path / "fast.toml"
    profile.write_text(text.replace("latency_slo_ms = 2000", "latency_slo_ms = 400"))
    decision = advise(profile)
    assert decision.recommendation.meets_target is False
    target = lines(decision, 10000, 400)["Time limit for one answer"]
    assert target.tone == "bad"
    assert target.value.startswith(
        "no card meets the 400 ms target: even this card takes at least "
    )
    assert target.value.endswith(" s to read a full-length question (4,096 tokens)")


def test_a_time_limit_without_a_described_model_is_not_checked() -> None:
    target = lines(decided("cad-certified"), None, 1500)["Time limit for one answer"]
    assert target.value.startswith("1.5 s, not checked")
    assert "Time limit for one answer" not in lines(decided("cad-certified"), None)


def test_another_kind_that_misses_the_time_limit_says_so() -> None:
    decision = decided("llm-latency-endpoint")
    alternatives = [a for a in decided("hyperparameter-sweep").alternatives if a.best]
    slow = alternatives[0].model_copy(
        update={"best": alternatives[0].best.model_copy(update={"meets_target": False})}  # type: ignore[union-attr]
    )
    view = buyer_view(decision.model_copy(update={"alternatives": (slow,)}), budget_usd=None)
    assert view.others[0].endswith(", too slow for the time limit")


# -- a card nobody can say is still made -------------------------------------------------


def test_an_availability_risk_comes_first_before_ordering() -> None:
    decision = with_pick(decided("cad-seats"), availability_risk=True, status="unknown")
    caveats = buyer_view(decision, budget_usd=4000).caveats
    assert caveats[0] == (
        "Nobody could say whether the NVIDIA RTX 2000 Ada Generation is still made, and it "
        "has been on the market since 2024: for 5 years of service, ask the supplier for "
        "stock and spares over the whole service life before ordering, or choose a current "
        "card."
    )
    assert not [c for c in caveats if c.startswith("Availability unknown")]
    plain = buyer_view(decided("cad-seats"), budget_usd=4000).caveats
    assert not [c for c in plain if c.startswith("Nobody could say")]


# -- what the buyer could change ---------------------------------------------------------


def test_each_lever_is_said_with_its_card_and_price_and_change_where_it_is_an_answer() -> None:
    changes = lever_changes(decided("hyperparameter-sweep"), wording(), {}, ["budget.max_usd"])
    assert [(c.sentence, c.field) for c in changes] == [
        (
            "Raise the budget to $10,000 (now $8,000) → 4 × NVIDIA RTX 4000 Ada Generation, "
            "$5,000; it serves 4 of 8 jobs; the cards for all of them, over 2 hosts like "
            "this, cost $10,000.",
            "budget.max_usd",
        )
    ]
    assert lever_changes(decided("hyperparameter-sweep"), wording(), {}, [])[0].field is None


def test_renting_names_no_price_to_buy_and_a_quote_says_so() -> None:
    (rent,) = lever_changes(decided("cfd-double-precision"), wording(), {}, [])
    assert rent.sentence.startswith("If the jobs run only a few times a month, rent a GPU")
    assert rent.sentence.endswith("→ 1 × H100 80 GB class, rented.")
    decision = decided("hyperparameter-sweep")
    quoted = decision.levers[0].model_copy(update={"total_usd": None, "short": ""})
    (change,) = lever_changes(decision.model_copy(update={"levers": (quoted,)}), wording(), {}, [])
    assert change.sentence.endswith("4 × NVIDIA RTX 4000 Ada Generation, price on quote.")


@pytest.mark.parametrize("name", ["hyperparameter-sweep", "cad-seats"])
def test_the_appendix_of_inputs_stays_out_of_the_page(name: str) -> None:
    decision = decided(name)
    assert decision.sensitivity  # the downloads keep it
    view = buyer_view(decision, budget_usd=None)
    assert len(view.changes) == len(decision.levers)
