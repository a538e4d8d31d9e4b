"""Issue #30's answers and decisions on the page, over HTTP on loopback: how many identical
machines (the jobs question then counts over all of them and refuses fewer), the supply's
rating instead of the power left for the GPUs (the profile downloaded holds one of the
two), five CAD seats in the report's purchase summary, and the levers under "What would
change the answer" with a Change button where a lever sets an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.inputs.textio import load_document
from gpuadvisor.web.app import create_app

from .conftest import REPO
from .test_web_wording import visible_text
from .web_support import REQUEST_SECONDS, Page, Walker, answers_of, live_server

WORKSTATION = {
    "workload.kind": "training",
    "workload.objective": "throughput",
    "workload.vram_need_gib": "20",
    "platform.chassis": "workstation",
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app()) as base:
        yield base


@pytest.fixture()
def client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=REQUEST_SECONDS) as http:
        yield http


@pytest.fixture()
def walker(client: httpx.Client) -> Walker:
    return Walker(client)


def walk_to(walker: Walker, field: str, answers: dict[str, str]) -> Page:
    page = walker.post("/start")
    while page.asks != field:
        assert page.asks is not None, f"{field} was not asked"
        data = {"walk": page.hidden["walk"], "answer": answers.get(page.asks, "")}
        if page.kind in ("choice", "yes-no") and not data["answer"]:
            data["answer"] = page.checked or ""
        page = walker.post("/answer", data=data)
    return page


def summary(report: Page) -> dict[str, str]:
    """The purchase summary's lines, label to value, as a person reads them."""
    found = re.search(r'<dl class="purchase">(.*?)</dl>', report.html, re.S)
    assert found, report.html
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", found.group(1), re.S)
    return {visible_text(k): visible_text(v) for k, v in pairs}


def test_the_jobs_question_counts_over_all_machines_and_refuses_fewer(walker: Walker) -> None:
    page = walk_to(walker, "workload.concurrent_jobs", {**WORKSTATION, "platform.hosts": "5"})
    assert '<p class="aside" id="aside">Count them over all 5 machines together' in page.html
    assert "Left empty, it takes the default: 5." in visible_text(page.html)
    refused = walker.post("/answer", data={"walk": page.hidden["walk"], "answer": "2"})
    assert refused.asks == "workload.concurrent_jobs"
    assert refused.alerts == [
        "Not accepted: fewer jobs than the 5 machines this purchase equips: count the jobs, "
        "seats or users over all machines together (5 or more), or don't know. Please "
        "answer again."
    ]
    one = walk_to(walker, "workload.concurrent_jobs", WORKSTATION)
    assert 'class="aside"' not in one.html


def test_more_machines_than_jobs_is_refused_when_the_machines_are_changed(walker: Walker) -> None:
    done = walker.walk({**WORKSTATION, "workload.concurrent_jobs": "2"})
    token = done.hidden.get("w") or done.hidden["walk"]
    page = walker.get("/edit", params={"w": token, "f": "platform.hosts", "to": "answers"})
    assert page.asks == "platform.hosts"
    refused = walker.post("/answer", data={"walk": page.hidden["walk"], "answer": "3"})
    assert refused.asks == "platform.hosts" and refused.alerts[0].startswith(
        "Not accepted: that is more machines than the 2 jobs wanted at the same time"
    )


def test_a_supply_rating_on_the_page_writes_one_power_figure(
    walker: Walker, client: httpx.Client
) -> None:
    done = walker.walk({**WORKSTATION, "platform.psu_w": "1000 W", "platform.circuit_w": "1800"})
    assert "platform.psu_headroom_w" not in walker.asked
    assert {"platform.cpu_w", "platform.system_w"} <= set(walker.asked)
    row = re.search(r'data-field="platform.psu_w">.*?<strong>(.*?)</strong>', done.html, re.S)
    assert row and row.group(1) == "1000 W"  # as typed, without "(read as 1000 W)"
    toml = client.post("/download/toml", data={"walk": done.hidden["walk"]}).text
    assert "\npsu_w = 1000.0  #" in toml
    assert "\n# psu_headroom_w = 800.0  # (not stated: psu_w stands in for it)" in toml
    profile = parse_profile(toml)
    assert profile.platform.psu_w == 1000 and profile.platform.circuit_w == 1800


def test_a_supply_rating_not_known_is_no_assumption_of_the_report(walker: Walker) -> None:
    done = walker.walk({**WORKSTATION, "platform.psu_headroom_w": "900"})
    assert walker.asked.index("platform.psu_w") + 1 == walker.asked.index("platform.psu_headroom_w")
    text = visible_text(walker.report(done).html)
    assumed = text[text.index("Assumed where you answered don't know") :]
    assert "power supply rating" not in assumed and "PCIe generation" in assumed


def test_five_cad_seats_walked_on_the_page_are_five_workstations_in_the_summary(
    walker: Walker,
) -> None:
    answers = answers_of(load_document(REPO / "examples" / "cad-seats.toml")[0])
    report = walker.report(walker.walk(answers))
    assert "platform.hosts" in walker.asked
    verdict = re.search(r'id="verdict">([^<]*)<', report.html)
    assert verdict and verdict.group(1) == "Buy 5 × NVIDIA RTX 2000 Ada Generation"
    shown = summary(report)
    assert shown["Quantity"] == "1 card in each of 5 workstations, 5 cards"
    assert shown["Line items"] == "5 × NVIDIA RTX 2000 Ada Generation: $3,125"
    assert shown["Total price"] == "$3,125 for all 5 machines"
    assert shown["Budget"] == "within $4,000 ($875 left)"


def test_a_lever_on_the_report_names_its_card_and_price_with_change(walker: Walker) -> None:
    answers = answers_of(load_document(REPO / "examples" / "hyperparameter-sweep.toml")[0])
    report = walker.report(walker.walk(answers))
    found = re.search(r'<section id="changes">(.*?)</section>', report.html, re.S)
    assert found, "no levers on the page"
    assert visible_text(found.group(1)).endswith(
        "Raise the budget to $10,000 (now $8,000) → 4 × NVIDIA RTX 4000 Ada Generation, "
        "$5,000; it serves 4 of 8 jobs; the cards for all of them, over 2 hosts like this, "
        "cost $10,000. Change"
    )
    assert 'name="f" value="budget.max_usd"' in found.group(1)
    assert summary(report)["Budget for the whole need"].endswith("within $8,000 ($3,000 left)")
