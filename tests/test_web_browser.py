"""The page in a real browser: Playwright for Python driving the system's Chromium
(Debian's ``chromium``, installed by ``.ci/run``; nothing is downloaded at run time).

Two worked examples are walked from the first question to the PDF download as a person
would: choices clicked, numbers typed and sent with Enter, one wrong answer typed,
explained on the page and corrected, the example's captures attached. The report's
headline must be the one ``gpuadvisor advise`` gives for the same profile and captures,
and the downloaded PDF's text must carry it. A screenshot of each step is kept in
``out/web-walk/<example>/`` (ignored by git; ``GPUADVISOR_SCREENSHOTS=DIR`` elsewhere).
Skipped, with the reason, where there is no Chromium (``GPUADVISOR_CHROMIUM`` names
another binary) or no Playwright; in CI (``CI`` set) a missing Chromium fails instead.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.ask import QUESTIONS, show
from gpuadvisor.inputs.profile import load_profile, parse_profile
from gpuadvisor.inputs.textio import load_document
from gpuadvisor.pipeline import advise
from gpuadvisor.web.app import create_app

from .conftest import REPO
from .web_support import answers_of, live_server

CHROMIUM = Path(os.environ.get("GPUADVISOR_CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(os.environ.get("GPUADVISOR_SCREENSHOTS", REPO / "out" / "web-walk"))
#: Milliseconds Playwright waits for one page or element (pages answer in milliseconds).
WAIT_MS = 30_000

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


@dataclass(frozen=True)
class Example:
    name: str
    captures: tuple[Path, ...]
    wrong_field: str
    wrong_answer: str
    message: str

    @property
    def profile(self) -> Path:
        return REPO / "examples" / f"{self.name}.toml"


EXAMPLES = (
    Example(
        "thermal-throttled-workstation",
        (EVIDENCE / "thermal-throttled-workstation" / "nvidia-smi-q.txt",),
        "workload.vram_need_gib",
        "about eighteen",
        "Not accepted: answer with a number, like 2.5. Please answer again.",
    ),
    Example(
        "input-bound-host",
        (
            EVIDENCE / "input-bound-host" / "nvidia-smi-dmon.txt",
            EVIDENCE / "input-bound-host" / "iostat-x.txt",
        ),
        "workload.concurrent_jobs",
        "4.5",
        "Not accepted: answer with a whole number, like 2. Please answer again.",
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


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1000, "height": 720}, accept_downloads=True)
    context.set_default_timeout(WAIT_MS)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []  # no script error, no blocked resource, on any page


class Steps:
    """Numbered screenshots of one walk."""

    def __init__(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.folder = folder
        self.number = 0

    def shot(self, page: Any, what: str) -> None:
        self.number += 1
        name = re.sub(r"[^a-z0-9.-]+", "-", what.lower())
        page.screenshot(path=str(self.folder / f"{self.number:02d}-{name}.png"), full_page=True)


def submit(page: Any, action: Any) -> None:
    with page.expect_navigation():
        action()


def words(text: str) -> str:
    return " ".join(text.split())


PROMPTS = {q.field: q.prompt for q in QUESTIONS}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_a_person_walks_from_the_first_question_to_the_signed_pdf(
    page: Any, url: str, example: Example
) -> None:
    steps = Steps(SHOTS / example.name)
    answers = answers_of(load_document(example.profile)[0])
    page.goto(url + "/")
    steps.shot(page, "start")
    submit(page, lambda: page.click("text=Start the questionnaire"))
    wrong_done = False
    for _ in range(100):
        form = page.locator("form.question")
        if form.count() == 0:
            break
        field, kind = form.get_attribute("data-field"), form.get_attribute("data-kind")
        assert page.locator("h1").inner_text() == PROMPTS[field]
        typed = answers.get(field, "")
        if field == example.wrong_field and not wrong_done:
            page.fill("#answer", example.wrong_answer)
            submit(page, lambda: page.keyboard.press("Enter"))
            assert page.locator("form.question").get_attribute("data-field") == field
            assert words(page.locator(".refused").inner_text()) == example.message
            assert page.input_value("#answer") == example.wrong_answer  # kept to correct
            steps.shot(page, f"{field}-refused")
            wrong_done = True
        if kind in ("choice", "yes-no"):
            if typed:
                page.check(f'input[name="answer"][value="{typed}"]')
            steps.shot(page, field)
            submit(page, lambda: page.click("button.primary"))
        else:
            page.fill("#answer", typed)
            steps.shot(page, field)
            submit(page, lambda: page.keyboard.press("Enter"))  # Enter means Next
        assert page.locator(".refused").count() == 0, page.locator(".refused").inner_text()
    else:
        raise AssertionError("the questionnaire did not end")
    assert wrong_done
    assert "Every question is answered" in page.locator("h1").inner_text()
    page.set_input_files('input[name="evidence"]', [str(p) for p in example.captures])
    steps.shot(page, "measurements")
    submit(page, lambda: page.click("text=Make the report"))
    steps.shot(page, "report")

    expected = words(
        advise(example.profile, evidence=list(example.captures)).recommendation.headline
    )
    assert words(page.locator("#headline").inner_text()) == expected
    shown = page.frame_locator("iframe.report").locator("body").inner_text()
    assert expected in words(shown)
    with page.expect_download() as pdf_download:
        page.click("button:has-text('PDF')")
    pdf = Path(pdf_download.value.path()).read_bytes()
    (steps.folder / "report.pdf").write_bytes(pdf)
    text = words(" ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages))
    assert expected in text
    with page.expect_download() as toml_download:
        page.click("button:has-text('Download the profile')")
    toml = Path(toml_download.value.path()).read_text(encoding="utf-8")
    assert parse_profile(toml) == load_profile(example.profile)


def test_a_broken_profile_upload_is_explained_then_a_good_one_starts_the_walk(
    page: Any, url: str, tmp_path: Path
) -> None:
    steps = Steps(SHOTS / "start-from-a-profile")
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
    steps.shot(page, "broken-profile")
    page.set_input_files('input[name="profile"]', str(partial))
    submit(page, lambda: page.click("text=Start from this profile"))
    assert page.locator("form.question").get_attribute("data-field") == "meta.title"
    steps.shot(page, "first-open-question")
    for _ in range(60):
        if page.locator("form.question").count() == 0:
            break
        assert page.locator("form.question").get_attribute("data-field") not in (
            "workload.kind",
            "workload.objective",
            "workload.vram_need_gib",
        )
        submit(page, lambda: page.click("button.primary"))
    steps.shot(page, "finish")
    assert page.locator("table.answers").inner_text().count("starting profile") == 3
    assert show(20.0) in page.locator("table.answers").inner_text()
