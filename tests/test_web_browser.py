"""The page in a real browser: Playwright for Python driving the system's Chromium
(Debian's ``chromium``, installed by ``.ci/run``; nothing is downloaded at run time).

Four invented buyers walk the page at 1280 and 390 px, as issues #31 and #30 asked: an
AI team (an LLM endpoint, its memory estimated from the model), a CAD office (a
workstation, its hardware details skipped, a budget in euros), a lab uploading captures
from ``examples/evidence/`` (first two that come from different machines, which is
warned before the report, then the right one) and five CAD seats (five identical
workstations, the power supply's rating instead of the power left, a vendor's minimum
card), whose report shows the machines and the line items. On every page: no horizontal overflow
(``tests/visual/overflow.js``, as the report's visual check), no script error; on every
question: where it stands ("Question 7 of about 27", the sections). Each buyer changes
one answer from the answers page and one from the report with one click each, never
with Back, and the browser's own Back button works (POST, redirect, GET). The report
page speaks to buyers (``tests/test_web_wording.py``'s check on its text). A
screenshot of each step is kept in ``out/web-walk/<buyer>/<width>/`` (ignored by git;
``GPUADVISOR_SCREENSHOTS=DIR`` elsewhere); ``GPUADVISOR_WEB_PAGE_PNG=docs/web-page.png``
writes the README's picture of the report page at 1280 px. Skipped, with the reason,
where there is no Chromium (``GPUADVISOR_CHROMIUM`` names another binary) or no
Playwright; in CI (``CI`` set) a missing Chromium fails instead.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.ask import QUESTIONS
from gpuadvisor.pipeline import advise
from gpuadvisor.web.app import create_app

from .conftest import REPO
from .test_web_wording import FORBIDDEN
from .web_support import live_server

CHROMIUM = Path(os.environ.get("GPUADVISOR_CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(os.environ.get("GPUADVISOR_SCREENSHOTS", REPO / "out" / "web-walk"))
WEB_PAGE_PNG = os.environ.get("GPUADVISOR_WEB_PAGE_PNG")
#: Milliseconds Playwright waits for one page or element (pages answer in milliseconds).
WAIT_MS = 30_000
WIDTHS = (1280, 390)
OVERFLOW_JS = (REPO / "tests" / "visual" / "overflow.js").read_text(encoding="utf-8")

if not CHROMIUM.exists() and os.environ.get("CI"):
    # .ci/run installs it: in CI a missing browser is a failure, not a skip.
    raise RuntimeError(f"no Chromium at {CHROMIUM} in CI; .ci/run should have installed it")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does), "
    "or set GPUADVISOR_CHROMIUM",
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pypdf = pytest.importorskip("pypdf")
EVIDENCE = REPO / "examples" / "evidence"
PROMPTS = {q.field: q.prompt for q in QUESTIONS}
PROGRESS = re.compile(r"^(Question \d+ of about \d+|Changing one answer · .+)$")


@dataclass(frozen=True)
class Buyer:
    name: str
    #: Typed answers by field ("describe" to describe the model; a choice's value).
    answers: dict[str, str]
    #: A wrong answer typed once, and the start of what the page says about it.
    wrong: tuple[str, str, str]
    #: One answer changed from the answers page, one from the report: (field, new).
    change_on_answers: tuple[str, str]
    change_on_report: tuple[str, str]
    #: What the report says once the answers page's change is made.
    expect_in_report: str
    skip_hardware: bool = False
    captures: tuple[Path, ...] = ()
    #: Captures attached first that come from different machines (warned, replaced).
    mixed: tuple[Path, ...] = ()
    #: What the first report's purchase summary says: (line, words in its value).
    summary: tuple[tuple[str, str], ...] = ()


BUYERS = (
    Buyer(
        "ai-team",
        {
            "meta.title": "Support-chat LLM endpoint",
            "meta.requester": "ML platform team",
            "workload.kind": "inference",
            "workload.objective": "latency",
            "workload.latency_slo_ms": "2000",
            "workload.interactive": "yes",
            "workload.vram_need_gib": "describe",
            "workload.model.family": "llm",
            "workload.model.name": "llama-3.1-70b",
            "workload.model.precision": "int4",
            "workload.model.context_tokens": "8k",
            "workload.model.concurrent_sequences": "8",
            "requirements.ecc": "preferred",
            "platform.chassis": "rack-2u",
            "platform.gpu_count_max": "4",
            "platform.psu_headroom_w": "I don't know",
            "budget.max_usd": "$60,000",
        },
        ("workload.concurrent_jobs", "two", "Not accepted: answer with a whole number"),
        ("budget.max_usd", "80k"),
        ("workload.concurrent_jobs", "2"),
        "80k (read as 80000 US dollars)",
    ),
    Buyer(
        "cad-office",
        {
            "meta.title": "CAD workstations for the design office",
            "workload.kind": "cad-cae",
            "workload.objective": "correctness",
            "workload.interactive": "yes",
            "workload.vram_need_gib": "24 GB",
            "requirements.certified_drivers": "yes",
            "requirements.isv_apps": "SolidWorks, Siemens NX",
            "requirements.ecc": "required",
            "platform.chassis": "workstation",
            "platform.gpu_count_max": "1",
            "budget.max_usd": "€8000",
        },
        ("requirements.lifecycle_years", "several", "Not accepted: answer with a number"),
        ("workload.vram_need_gib", "32 GB"),
        ("budget.max_usd", "12k"),
        "32 GB (read as 29.8 GiB)",
        skip_hardware=True,
    ),
    Buyer(
        "lab-captures",
        {
            "meta.title": "Two more GPUs for a workstation with two RTX A5000",
            "meta.requester": "Visualisation studio",
            "workload.kind": "rendering",
            "workload.objective": "throughput",
            "workload.vram_need_gib": "16",
            "workload.concurrent_jobs": "4",
            "workload.job_hours": "2",
            "requirements.lifecycle_years": "4",
            "platform.chassis": "workstation",
            "platform.airflow": "open",
            "platform.max_gpu_slot_width": "2",
            "platform.gpu_count_max": "4",
            "platform.psu_headroom_w": "1200",
            "budget.max_usd": "7000",
        },
        (
            "workload.job_hours",
            "a couple",
            "Not accepted: answer with a number, like 2.5, or don't",
        ),
        ("requirements.lifecycle_years", "5"),
        ("workload.concurrent_jobs", "3"),
        "5",
        captures=(EVIDENCE / "add-two-rtx-a5000" / "nvidia-smi-q.xml",),
        mixed=(
            EVIDENCE / "add-two-rtx-a5000" / "nvidia-smi-q.xml",
            EVIDENCE / "second-rtx-4090" / "nvidia-smi-q.txt",
        ),
    ),
    Buyer(
        "cad-seats",
        {
            "meta.title": "Five CAD seats for the design office",
            "meta.requester": "Engineering IT",
            "workload.kind": "cad-cae",
            "workload.objective": "fleet-simplicity",
            "workload.interactive": "yes",
            "workload.vram_need_gib": "12",
            "platform.hosts": "5 workstations",
            "workload.frame_pacing_critical": "yes",
            "requirements.certified_drivers": "yes",
            "requirements.isv_apps": "SOLIDWORKS",
            "requirements.min_card_memory_gb": "16 GB",
            "requirements.lifecycle_years": "5",
            "requirements.fleet_homogeneity": "yes",
            "platform.chassis": "workstation",
            "platform.max_gpu_slot_width": "2",
            "platform.gpu_count_max": "1",
            "platform.psu_w": "650 W",
            "budget.max_usd": "4000",
        },
        ("workload.concurrent_jobs", "3", "Not accepted: fewer jobs than the 5 machines"),
        ("budget.max_usd", "5k"),
        ("requirements.lifecycle_years", "4"),
        "5k (read as 5000 US dollars)",
        summary=(
            ("Quantity", "1 card in each of 5 workstations, 5 cards"),
            ("Line items", "5 × NVIDIA RTX 2000 Ada Generation: $3,125"),
            ("Total price", "$3,125 for all 5 machines"),
            ("Budget", "within $5,000"),
        ),
    ),
)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app()) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield launched
        finally:
            launched.close()


class Steps:
    """Numbered screenshots of one walk, and the checks every page gets."""

    def __init__(self, page: Any, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.page = page
        self.folder = folder
        self.number = 0

    def shot(self, what: str) -> None:
        """The page checked for overflow, then kept as a picture."""
        found = layout(self.page)
        assert found == [], (what, found)
        self.number += 1
        name = re.sub(r"[^a-z0-9.-]+", "-", what.lower())
        path = self.folder / f"{self.number:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)


def layout(page: Any) -> list[str]:
    """What tests/visual/overflow.js finds on the page (it leaves no trace behind),
    but for a text box holding more than it shows: a text box scrolls what is typed
    into it by design (Chromium computes its overflow as "clip", so the script, which
    spares boxes that scroll, cannot tell)."""
    page.evaluate(OVERFLOW_JS)
    found = page.evaluate(
        "() => { const out = document.getElementById('gpuadvisor-layout');"
        " const text = out.textContent; out.remove(); return text; }"
    )
    return [f for f in json.loads(found)["findings"] if not TEXT_BOX.match(f)]


TEXT_BOX = re.compile(r"^overflows its box by \d+px: input#answer ")


@pytest.fixture()
def context(browser: Any, request: Any) -> Iterator[Any]:
    width = request.param
    opened = browser.new_context(viewport={"width": width, "height": 900}, accept_downloads=True)
    opened.set_default_timeout(WAIT_MS)
    yield opened
    opened.close()


def submit(page: Any, action: Any) -> None:
    with page.expect_navigation():
        action()


def words(text: str) -> str:
    return " ".join(text.split())


def answer_here(page: Any, kind: str, typed: str) -> None:
    """Put ``typed`` into the question on the page (nothing: leave what is there)."""
    if kind in ("choice", "yes-no"):
        if typed:
            page.check(f'input[name="answer"][value="{typed}"]')
    elif kind == "memory":
        if typed == "describe":
            page.check('input[name="mode"][value="describe"]')
        else:
            page.check('input[name="mode"][value="number"]')
            page.fill("#answer", typed)
    else:
        page.fill("#answer", typed)


def on_question(page: Any) -> tuple[str, str] | None:
    form = page.locator("form.question")
    if form.count() == 0:
        return None
    return form.get_attribute("data-field"), form.get_attribute("data-kind")


def check_progress(page: Any) -> None:
    """Where the question stands, on every question."""
    assert PROGRESS.match(words(page.locator("#progress").text_content() or ""))
    sections = page.locator("ol.sections li")
    assert sections.count() == 4
    assert page.locator('ol.sections li[aria-current="step"]').count() == 1


def walk_questions(page: Any, buyer: Buyer, steps: Steps) -> None:
    """From the first question to the answers page, as a person answers."""
    wrong_field, wrong_text, wrong_message = buyer.wrong
    wrong_done = backed = False
    for _ in range(100):
        here = on_question(page)
        if here is None:
            break
        field, kind = here
        check_progress(page)
        assert page.locator("h1").inner_text() == PROMPTS[field]
        if field == wrong_field and not wrong_done:
            answer_here(page, kind, wrong_text)
            submit(page, lambda: page.click("button.primary"))
            assert on_question(page) == (field, kind)
            assert words(page.locator(".refused").inner_text()).startswith(wrong_message)
            steps.shot(f"{field}-refused")
            wrong_done = True
        if page.locator("button[value=skip]").count() and buyer.skip_hardware:
            steps.shot(f"{field}-skip-the-hardware-details")
            submit(page, lambda: page.click("button[value=skip]"))
            continue
        answer_here(page, kind, buyer.answers.get(field, ""))
        steps.shot(field)
        submit(page, lambda: page.click("button.primary"))
        assert page.locator(".refused").count() == 0, page.locator(".refused").inner_text()
        if field == "workload.objective" and not backed:
            # The browser's own Back: the question before, no resubmission, and on.
            page.go_back()
            assert on_question(page) == (field, kind)
            assert page.locator(f'input[value="{buyer.answers[field]}"]').is_checked()
            submit(page, lambda: page.click("button.primary"))
            backed = True
    else:
        raise AssertionError("the questionnaire did not end")
    assert wrong_done and backed


def change(page: Any, where: str, field: str, typed: str, steps: Steps) -> None:
    """One click on the answer's Change button, the new answer, saved: back where it
    was changed from (no Back pressed)."""
    submit(page, lambda: page.click(f'{where} .answer[data-field="{field}"] button.change'))
    here = on_question(page)
    assert here is not None and here[0] == field
    check_progress(page)
    assert words(page.locator("#progress").text_content() or "").startswith("Changing one answer")
    answer_here(page, here[1], typed)
    steps.shot(f"change-{field}")
    submit(page, lambda: page.click("button.primary"))
    while (here := on_question(page)) is not None:  # what the change made relevant
        check_progress(page)
        steps.shot(f"then-{here[0]}")
        submit(page, lambda: page.click("button.primary"))


def purchase(page: Any) -> dict[str, str]:
    """The purchase summary as shown: each line's label and its value's words."""
    lines = page.locator("dl.purchase .line")
    return {
        words(lines.nth(i).locator("dt").inner_text()): words(
            lines.nth(i).locator("dd").inner_text()
        )
        for i in range(lines.count())
    }


def check_report(page: Any, buyer: Buyer) -> None:
    assert page.locator("#verdict").inner_text().strip()
    labels = page.locator("dl.purchase dt").all_inner_texts()
    assert "Confidence" in labels and "Capacity" in labels
    if not page.locator("#verdict").inner_text().startswith("Nothing"):
        assert {"Quantity", "Unit price", "Total price", "Budget"} <= set(labels)
    text = words(page.locator("main").inner_text())
    assert not FORBIDDEN.search(text), FORBIDDEN.findall(text)
    assert page.locator("iframe").count() == 0  # in the page, not in a frame


@pytest.mark.parametrize("context", WIDTHS, indirect=True, ids=lambda w: f"{w}px")
@pytest.mark.parametrize("buyer", BUYERS, ids=lambda b: b.name)
def test_a_buyer_walks_to_the_report_and_changes_answers_without_back(
    context: Any, url: str, buyer: Buyer
) -> None:
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    width = page.viewport_size["width"]
    steps = Steps(page, SHOTS / buyer.name / str(width))
    page.goto(url + "/")
    steps.shot("start")
    submit(page, lambda: page.click("text=Start the questionnaire"))
    walk_questions(page, buyer, steps)

    assert page.locator("h1").inner_text() == "Your answers"
    steps.shot("answers")
    field, typed = buyer.change_on_answers
    change(page, "form.answers", field, typed, steps)
    assert page.locator("h1").inner_text() == "Your answers"
    row = page.locator(f'form.answers .answer[data-field="{field}"] .given')
    assert buyer.expect_in_report in words(row.inner_text())
    steps.shot("answers-after-a-change")

    if buyer.mixed:
        page.set_input_files('input[name="evidence"]', [str(p) for p in buyer.mixed])
        submit(page, lambda: page.click("text=Make the report"))
        warning = words(page.locator("#mixed").inner_text())
        assert "different machines or cards" in warning and "RTX 4090" in warning
        steps.shot("captures-from-two-machines")
        submit(page, lambda: page.click("text=Attach other captures"))
        assert page.locator("h1").inner_text() == "Your answers"
    if buyer.captures:
        page.set_input_files('input[name="evidence"]', [str(p) for p in buyer.captures])
        steps.shot("measurements")
    submit(page, lambda: page.click("text=Make the report"))
    check_report(page, buyer)
    shown = purchase(page)
    for label, said in buyer.summary:  # the machines and the line items, at each width
        assert said in shown.get(label, ""), (label, shown)
    if buyer.summary:
        page.locator("dl.purchase").screenshot(path=str(steps.folder / "purchase.png"))
    steps.shot("report")
    if WEB_PAGE_PNG and width == 1280 and buyer.captures:
        page.screenshot(path=WEB_PAGE_PNG)
    if buyer.captures:
        assert buyer.captures[0].name in page.locator("#captures").inner_text()

    field, typed = buyer.change_on_report
    before = page.url
    change(page, "#answers", field, typed, steps)
    assert page.url.split("?")[0].endswith("/report")
    check_report(page, buyer)
    row = page.locator(f'#answers .answer[data-field="{field}"] .given')
    assert words(row.inner_text()).startswith(typed)
    if buyer.captures:  # kept through the change, not asked for again
        assert buyer.captures[0].name in page.locator("#captures").inner_text()
    steps.shot("report-after-a-change")
    page.go_back()  # the browser's Back: the question that was changed, a GET page
    assert on_question(page) is not None
    page.go_back()
    assert page.url == before and page.locator("#verdict").count() == 1

    if width == 1280 and buyer.name == "lab-captures":
        with page.expect_download() as pdf_download:
            page.click("button:has-text('PDF')")
        pdf = Path(pdf_download.value.path()).read_bytes()
        (steps.folder / "report.pdf").write_bytes(pdf)
        text = words(" ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages))
        assert words(page.locator("#headline").inner_text())[:40] in text
    assert problems == []  # no script error, no blocked resource, on any page


@pytest.mark.parametrize("context", [1280], indirect=True, ids=lambda w: f"{w}px")
def test_a_broken_profile_upload_is_explained_then_a_good_one_starts_the_walk(
    context: Any, url: str, tmp_path: Path
) -> None:
    page = context.new_page()
    steps = Steps(page, SHOTS / "start-from-a-profile")
    broken = tmp_path / "broken.toml"
    broken.write_text('[workload]\nkind = "training\n', encoding="utf-8")
    partial = tmp_path / "partial.toml"
    partial.write_text(
        '[workload]\nkind = "training"\nobjective = "throughput"\nvram_need_gib = 20\n',
        encoding="utf-8",
    )
    page.goto(url + "/")
    page.set_input_files('input[name="profile"]', str(broken))
    submit(page, lambda: page.click("text=Start from this profile"))
    message = page.locator(".refused").inner_text()
    assert message.startswith("broken.toml:2: invalid TOML"), message
    steps.shot("broken-profile")
    page.set_input_files('input[name="profile"]', str(partial))
    submit(page, lambda: page.click("text=Start from this profile"))
    assert page.locator("form.question").get_attribute("data-field") == "meta.title"
    steps.shot("first-open-question")
    for _ in range(60):
        if page.locator("form.question").count() == 0:
            break
        assert page.locator("form.question").get_attribute("data-field") not in (
            "workload.kind",
            "workload.objective",
            "workload.vram_need_gib",
        )
        submit(page, lambda: page.click("button.primary"))
    steps.shot("answers")
    assert page.locator("form.answers").inner_text().count("from the starting profile") == 3
    assert "20 GiB" in page.locator('.answer[data-field="workload.vram_need_gib"]').inner_text()


@pytest.mark.parametrize("context", [1280], indirect=True, ids=lambda w: f"{w}px")
def test_the_lab_report_is_the_command_lines_decision(context: Any, url: str) -> None:
    """The lab's answers and capture, unchanged, give the headline ``advise`` gives."""
    lab = BUYERS[2]
    page = context.new_page()
    page.goto(url + "/")
    submit(page, lambda: page.click("text=Start the questionnaire"))
    while (here := on_question(page)) is not None:
        answer_here(page, here[1], lab.answers.get(here[0], ""))
        submit(page, lambda: page.click("button.primary"))
    page.set_input_files('input[name="evidence"]', [str(p) for p in lab.captures])
    submit(page, lambda: page.click("text=Make the report"))
    expected = advise(
        REPO / "examples" / "add-two-rtx-a5000.toml", evidence=list(lab.captures)
    ).recommendation
    assert words(page.locator("#headline").inner_text()) == words(expected.headline)
    assert (
        page.locator("#verdict")
        .inner_text()
        .startswith(f"Buy {expected.gpu_count} × " if expected.gpu_count else "Nothing")
    )
