"""The report in the page speaks to buyers (issue #31): every fact it can show has a
label, every rule action that names a fact or a command has a web wording, and no
bundled example's report page shows a rule code, a score, a fact name, a command-line
flag or command in its text (the raw values behind "details" excepted). The downloads
keep the full detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from gpuadvisor.engine.factspec import ALL_FACTS
from gpuadvisor.engine.rules import PLACEHOLDER, load_rules
from gpuadvisor.inputs.textio import load_document
from gpuadvisor.web.app import create_app
from gpuadvisor.web.wording import wording

from .conftest import REPO
from .web_support import REQUEST_SECONDS, Walker, answers_of, evidence_files, live_server

#: What must not reach a buyer's page.
FORBIDDEN = re.compile(
    r"\b[A-Z]+(?:-[A-Z]+)*-\d{3}\b"  # a rule code
    r"|\b(?:workload|requirements|platform|budget|team|host|gpu|sku|catalog|option)\.[a-z_]"
    r"|(?<![\w-])--[a-z]"  # a command-line flag
    r"|\bgpuadvisor (?:probe|advise|import|ask|serve|rules|catalog|schema|size|init)\b"
    r"|\bscored [+-]?\d|\([+-]\d+\)"  # a score
    r"|single-larger-gpu|two-independent-jobs|multi-gpu-(?:model|data)-parallel"
    r"|_policy\.toml"
)
EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
ENGINE_IDS = sorted(
    set(
        re.findall(
            r'rule="(ENGINE-[A-Z0-9-]+)"',
            "".join(p.read_text() for p in (REPO / "gpuadvisor" / "decision").glob("*.py")),
        )
    )
)


def test_every_fact_a_page_can_show_has_a_label() -> None:
    shown = [f.name for f in ALL_FACTS if not f.name.startswith(("option.", "sku."))]
    labels = wording().facts
    assert [name for name in shown if name not in labels] == []
    assert [name for name in labels if name not in {f.name for f in ALL_FACTS}] == []


def test_every_rule_action_reaches_the_page_in_web_words() -> None:
    say = wording()
    rules = load_rules()
    for rule in rules.rules:
        action = PLACEHOLDER.sub("8", rule.data.action)
        shown = say.action(rule.id, action, {})
        assert not FORBIDDEN.search(shown), (rule.id, shown)
    known = {rule.id for rule in rules.rules} | set(ENGINE_IDS)
    assert [rule for rule in say.actions if rule not in known] == []


def test_every_engine_conclusion_has_a_web_action() -> None:
    assert ENGINE_IDS, "no engine findings found in gpuadvisor/decision"
    assert [rule for rule in ENGINE_IDS if rule not in wording().actions] == []


def test_command_line_terms_are_replaced_longest_first() -> None:
    say = wording()
    text = "or add an approved SKU through --catalog."
    assert say.words(text) == "or ask your administrator to add a card to the approved list."
    assert say.words("Run gpuadvisor probe and advise again.") == (
        "Run a capture taken during a typical job and make the report again."
    )
    assert say.words("FIT-004 and workload.vram_need_gib", {"FIT-004": "Fits"}) == (
        "\u201cFits\u201d and memory one job needs"
    )


class _Visible(HTMLParser):
    """The text a person can read on the page: no attributes, no style, and nothing
    inside a ``details`` element of class ``raw`` (the raw values) but its summary."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._raw = 0
        self._summary = False
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "details" and (self._raw or "raw" in classes):
            self._raw += 1
        if tag == "summary":
            self._summary = True
        if tag in ("style", "script", "title"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "details" and self._raw:
            self._raw -= 1
        if tag == "summary":
            self._summary = False
        if tag in ("style", "script", "title"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and (not self._raw or self._summary):
            self.parts.append(data)


def visible_text(html: str) -> str:
    reader = _Visible()
    reader.feed(html)
    return " ".join(" ".join(reader.parts).split())


def test_the_visible_text_reader_leaves_out_only_the_raw_values() -> None:
    html = (
        '<p title="FIT-004">a</p><details><summary>Why</summary>b</details>'
        '<details class="raw"><summary>Raw values</summary><code>gpu.x</code></details><p>c</p>'
    )
    assert visible_text(html) == "a Why b Raw values c"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_server(create_app()) as base:
        yield base


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_no_example_report_page_shows_a_code_a_fact_name_or_a_command(
    url: str, example: Path
) -> None:
    captures = sorted((REPO / "examples" / "evidence" / example.stem).glob("*"))
    with httpx.Client(base_url=url, timeout=REQUEST_SECONDS) as client:
        walker = Walker(client)
        page = walker.walk(answers_of(load_document(example)[0]))
        report = walker.report(page, evidence_files(captures))
    assert report.status == 200 and not report.alerts, report.html
    assert 'id="verdict"' in report.html
    text = visible_text(report.html)
    found = sorted({m.group(0) for m in FORBIDDEN.finditer(text)})
    assert found == [], [text[max(0, text.find(f) - 80) : text.find(f) + 40] for f in found]
