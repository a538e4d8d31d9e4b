"""The walk a buyer can follow (issue #31), over HTTP on loopback: every form answered by
a redirect to a GET page (so Back and reload work), where each question stands, one
answer changed with one click from the answers page or the report, the optional
hardware details skipped at once, "don't know" and budgets as typed, foreign Origins
refused, captures from two machines warned before the report, and the server's bounded
state (the captures kept, the decision caches renewed).
"""

from __future__ import annotations

import html
import random
import re
import string
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.web.app import create_app
from gpuadvisor.web.captures import CaptureStore, Kept
from gpuadvisor.web.pages import GONE, Decider

from .conftest import REPO
from .web_support import REQUEST_SECONDS, Page, Walker, evidence_files, live_server, read_page

EVIDENCE = REPO / "examples" / "evidence"
A5000 = EVIDENCE / "add-two-rtx-a5000" / "nvidia-smi-q.xml"
RTX4090 = EVIDENCE / "second-rtx-4090" / "nvidia-smi-q.txt"
REQUIRED = {
    "workload.kind": "training",
    "workload.objective": "throughput",
    "workload.vram_need_gib": "20",
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


def progress(page: Page) -> str:
    found = re.search(r'<p class="step" id="progress">([^<]*)</p>', page.html)
    assert found, "no progress on a question page"
    return found.group(1)


def answers_page(walker: Walker, answers: dict[str, str] | None = None) -> Page:
    page = walker.walk(answers or REQUIRED)
    assert page.report_action, page.html
    return page


def edit(walker: Walker, page: Page, field: str, to: str) -> Page:
    token = page.hidden.get("w") or page.hidden["walk"]
    return walker.get("/edit", params={"w": token, "f": field, "to": to})


def shown_answer(page: Page, field: str) -> str:
    found = re.search(
        rf'data-field="{re.escape(field)}">.*?<strong>(.*?)</strong>', page.html, re.S
    )
    assert found, field
    return html.unescape(found.group(1))


# -- POST, redirect, GET ------------------------------------------------------------------


def test_every_form_is_answered_with_a_redirect_to_a_page_that_can_be_reloaded(
    client: httpx.Client,
) -> None:
    started = client.post("/start")
    assert started.status_code == 303 and started.headers["location"].startswith("/walk?w=")
    first = client.get(started.headers["location"])
    again = client.get(started.headers["location"])
    assert first.status_code == again.status_code == 200
    assert first.text == again.text  # a GET changes nothing: reload and Back are safe
    token = read_page(first).hidden["walk"]
    answered = client.post("/answer", data={"walk": token, "answer": "A title"})
    assert answered.status_code == 303 and answered.headers["location"].startswith("/walk?w=")
    refused = client.post("/answer", data={"walk": token, "answer": "x" * 300})
    assert refused.status_code == 303  # a refusal too: its message travels signed


def test_a_refused_answer_is_shown_again_on_a_get_page_and_a_forged_message_is_refused(
    walker: Walker, client: httpx.Client
) -> None:
    page = walker.post("/start")
    while page.asks != "workload.concurrent_jobs":
        page = walker.post(
            "/answer",
            data={"walk": page.hidden["walk"], "answer": REQUIRED.get(page.asks or "", "")},
        )
    response = client.post("/answer", data={"walk": page.hidden["walk"], "answer": "two"})
    where = response.headers["location"]
    shown = read_page(client.get(where))
    assert shown.asks == "workload.concurrent_jobs"
    assert shown.alerts == [
        "Not accepted: answer with a whole number, like 2, or don't know. Please answer again."
    ]
    assert 'value="two"' in shown.html
    query = parse_qs(urlsplit(where).query)
    forged = client.get("/walk", params={"w": query["w"][0], "m": "Call 555-0100 now"})
    assert forged.status_code == 400 and "Call 555" not in forged.text


def test_every_question_says_where_it_stands(walker: Walker) -> None:
    page = walker.post("/start")
    numbers = []
    while page.asks is not None:
        found = re.fullmatch(r"Question (\d+) of about (\d+)", progress(page))
        assert found, progress(page)
        numbers.append(int(found.group(1)))
        assert 'aria-current="step"' in page.html
        for section in ("Workload", "Requirements", "Platform", "Budget"):
            assert f">{section}<" in page.html or f">{section}<span" in page.html
        page = walker.post(
            "/answer", data={"walk": page.hidden["walk"], "answer": REQUIRED.get(page.asks, "")}
        )
    assert numbers == list(range(1, len(numbers) + 1))
    assert found.group(1) == found.group(2)  # the last question: the estimate is exact


# -- changing one answer -------------------------------------------------------------------


def test_one_answer_is_changed_from_the_answers_page_with_one_click(walker: Walker) -> None:
    done = answers_page(walker)
    question = edit(walker, done, "budget.max_usd", "answers")
    assert question.asks == "budget.max_usd"
    assert progress(question).startswith("Changing one answer")
    back = walker.post("/answer", data={"walk": question.hidden["walk"], "answer": "€25k"})
    assert back.report_action and back.asks is None  # straight back to the answers
    assert shown_answer(back, "budget.max_usd") == "€25k (read as 25000 US dollars)"


def test_a_change_that_opens_a_question_asks_it_then_returns(walker: Walker) -> None:
    done = answers_page(walker)
    question = edit(walker, done, "workload.objective", "answers")
    opened = walker.post("/answer", data={"walk": question.hidden["walk"], "answer": "latency"})
    assert opened.asks == "workload.latency_slo_ms"  # relevant now, never answered
    back = walker.post("/answer", data={"walk": opened.hidden["walk"], "answer": "1500"})
    assert back.asks is None and back.report_action
    assert shown_answer(back, "workload.latency_slo_ms") == "1500"


def test_one_answer_is_changed_from_the_report_and_the_captures_stay(walker: Walker) -> None:
    done = answers_page(walker)
    report = walker.report(done, evidence_files([A5000]))
    assert report.status == 200 and 'id="verdict"' in report.html
    question = edit(walker, report, "workload.concurrent_jobs", "report")
    assert question.asks == "workload.concurrent_jobs"
    again = walker.post("/answer", data={"walk": question.hidden["walk"], "answer": "3"})
    assert 'id="verdict"' in again.html  # back on the report, made again
    assert "nvidia-smi-q.xml" in again.html  # with the captures kept, not asked again
    assert shown_answer(again, "workload.concurrent_jobs") == "3"


# -- answers as typed --------------------------------------------------------------------


def test_the_hardware_details_are_skipped_at_once_and_written_as_not_known(
    walker: Walker, client: httpx.Client
) -> None:
    page = walker.post("/start")
    answers = {**REQUIRED, "platform.chassis": "workstation"}
    while page.asks != "platform.psu_headroom_w":
        page = walker.post(
            "/answer",
            data={"walk": page.hidden["walk"], "answer": answers.get(page.asks or "", "")},
        )
    assert "Optional hardware details" in page.html and 'value="skip"' in page.html
    after = walker.post("/answer", data={"walk": page.hidden["walk"], "go": "skip"})
    assert after.asks == "budget.max_usd"
    done = walker.walk({}, after)
    for field in ("platform.psu_headroom_w", "platform.cpu_sockets", "platform.pcie_gen"):
        assert shown_answer(done, field) == "don't know"
    toml = client.post("/download/toml", data={"walk": done.hidden["walk"]}).text
    assert "\n# psu_headroom_w = 800.0  # (not known yet" in toml
    assert parse_profile(toml).platform.psu_headroom_w == 800


def test_the_memory_question_is_one_choice_and_the_answers_show_what_was_typed(
    walker: Walker,
) -> None:
    page = walker.post("/start")
    while page.asks != "workload.vram_need_gib":
        page = walker.post(
            "/answer",
            data={
                "walk": page.hidden["walk"],
                "answer": {"workload.kind": "inference", "workload.objective": "latency"}.get(
                    page.asks or "", ""
                ),
            },
        )
    assert page.kind == "memory" and 'name="mode" value="describe"' in page.html
    described = walker.post(
        "/answer", data={"walk": page.hidden["walk"], "mode": "describe", "answer": ""}
    )
    assert described.asks == "workload.model.family"
    typed = walker.post(
        "/answer", data={"walk": page.hidden["walk"], "mode": "number", "answer": "48 GB"}
    )
    assert "Your last answer: Read 48 GB as 44.7 GiB" in typed.html
    done = walker.walk({}, typed)
    assert shown_answer(done, "workload.vram_need_gib") == "48 GB (read as 44.7 GiB)"


# -- the server's guard and its bounded state -------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "status"),
    [("http://evil.example", 403), ("null", 403), ("http://127.0.0.1:1", 403), (None, 303)],
)
def test_a_post_from_another_site_is_refused(
    client: httpx.Client, url: str, origin: str | None, status: int
) -> None:
    headers = {"origin": origin} if origin else {}
    response = client.post("/start", headers=headers)
    assert response.status_code == status
    if status == 403:
        assert "sent to gpuadvisor by a page of another web site" in response.text
    same = client.post("/start", headers={"origin": url})
    assert same.status_code == 303


def test_captures_from_two_machines_are_warned_before_the_report(walker: Walker) -> None:
    done = answers_page(walker)
    warned = walker.report(done, evidence_files([A5000, RTX4090]))
    assert 'id="verdict"' not in warned.html  # no report yet
    found = re.search(r'id="mixed">(.*?)</p>', warned.html, re.S)
    assert found
    warning = " ".join(found.group(1).split())
    assert "nvidia-smi-q.xml shows 2 × NVIDIA RTX A5000" in warning
    assert "nvidia-smi-q.txt shows 1 × NVIDIA GeForce RTX 4090" in warning
    onward = re.search(r'href="(/report\?[^"]+ok=1)"', warned.html)
    assert onward
    report = walker.get(onward.group(1).replace("&amp;", "&"))
    assert 'id="verdict"' in report.html
    one = walker.report(done, evidence_files([A5000]))
    assert 'id="verdict"' in one.html  # one machine: straight to the report


def test_a_report_whose_captures_are_no_longer_kept_asks_for_them_again() -> None:
    store = CaptureStore(max_uploads=1)
    with (
        live_server(create_app(store=store)) as base,
        httpx.Client(base_url=base, timeout=REQUEST_SECONDS) as http,
    ):
        walker = Walker(http)
        done = answers_page(walker)
        first = walker.report(done, evidence_files([A5000]))
        walker.report(done, evidence_files([RTX4090]))  # a second upload: the first goes
        gone = walker.get("/report", params={"w": first.hidden["w"]})
    assert gone.report_action and gone.alerts == [GONE]


def test_the_capture_store_is_bounded_in_uploads_bytes_and_time() -> None:
    now = [0.0]
    store = CaptureStore(max_uploads=2, max_bytes=10, keep_seconds=60, clock=lambda: now[0])
    a = store.put(Kept((("a", b"1234"),), ""))
    b = store.put(Kept((("b", b"1234"),), ""))
    c = store.put(Kept((("c", b"12"),), ""))
    assert a and b and c and store.get(a) is None and store.get(b) is not None  # two at most
    d = store.put(Kept((("d", b"12345678"),), ""))
    assert d and store.get(b) is None and store.get(c) is not None and store.bytes == 10
    assert store.put(Kept((("e", b"x" * 11),), "")) is None  # larger than the store
    now[0] = 61.0
    assert store.get(d) is None and len(store) == 0 and store.bytes == 0


def test_the_decision_caches_are_renewed_after_a_bounded_number_of_decisions() -> None:
    from gpuadvisor.decision.build import Advisor
    from gpuadvisor.engine.core import Engine
    from gpuadvisor.engine.rules import load_rules
    from gpuadvisor.inputs.catalog import load_catalog
    from gpuadvisor.inputs.profile import load_profile

    first = Advisor(Engine(load_catalog(), load_rules()))
    decider = Decider(first, renew_after=2)
    profile = load_profile(REPO / "examples" / "llm-latency-endpoint.toml")
    made = [decider.decide(profile, "x", []) for _ in range(3)]
    assert decider.advisor is not first and decider.made == 1
    assert decider.advisor.engine.catalog is first.engine.catalog  # only the caches go
    assert made[0] == made[2]


def test_long_answers_travel_in_the_address_and_an_overlong_one_is_refused(
    walker: Walker,
) -> None:
    rng = random.Random(31)  # text that does not compress away

    def text(n: int) -> str:
        return "".join(rng.choices(string.ascii_letters, k=n))

    names = ", ".join(f"App {text(72)}" for _ in range(50))  # 3,948 characters
    notes = text(3990)
    answers = {
        **REQUIRED,
        "workload.kind": "cad-cae",
        "requirements.certified_drivers": "yes",
        "requirements.isv_apps": names,
        "meta.notes": notes,
    }
    done = answers_page(walker, answers)
    assert not walker.refusals, walker.refusals
    assert len(done.hidden["walk"]) > 8 * 1024  # half uvicorn's default request head
    assert shown_answer(done, "meta.notes") == notes
    question = edit(walker, done, "meta.notes", "answers")
    refused = walker.post("/answer", data={"walk": question.hidden["walk"], "answer": "y" * 4001})
    assert refused.asks == "meta.notes"
    assert refused.alerts == ["Not accepted: an answer here is at most 4,000 characters."]
