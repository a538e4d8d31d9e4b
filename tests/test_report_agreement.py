"""For every worked example, the four formats say the same thing: headline, picks and
findings, all taken from one decision; and, where the evidence files disagree, the same
conflicting evidence."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

import pypdf
import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.pipeline import advise
from gpuadvisor.render.markdown import escape as escape_inline
from gpuadvisor.render.purchase import line_items_text
from gpuadvisor.render.report import render
from gpuadvisor.vocabulary import format_value

from .conftest import REPO
from .evidence_support import FIXTURES as EVIDENCE

EXAMPLES = [name for name, _ in list_examples()]


def _decision(name: str) -> Decision:
    folder = REPO / "examples" / "evidence" / name
    evidence = sorted(folder.glob("*")) if folder.is_dir() else []
    return advise(REPO / "examples" / f"{name}.toml", evidence=evidence, sensitivity=False)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", EXAMPLES)
def test_formats_agree_on_headline_picks_and_findings(name: str) -> None:
    decision = _decision(name)
    as_json = json.loads(render(decision, "json"))
    md = _flat(render(decision, "md"))
    page = _flat(html.unescape(render(decision, "html")))
    reader = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))
    pdf = _flat(" ".join(p.extract_text() for p in reader.pages))

    headline = _flat(decision.recommendation.headline)
    assert as_json["recommendation"]["headline"] == decision.recommendation.headline
    assert _flat(escape_inline(headline)) in md
    assert headline in page
    assert headline in pdf
    for pick in decision.picks:
        assert pick.sku in {p["sku"] for p in as_json["picks"]}
        for text in (page, pdf):
            assert pick.name in text
        assert _flat(escape_inline(pick.name)) in md
    rules = [f.rule for f in (*decision.fix_first, *decision.findings)]
    assert [f["rule"] for f in (*as_json["fix_first"], *as_json["findings"])] == rules
    for rule in rules:
        for text in (page, pdf):
            assert rule in text, (rule, name)
        assert _flat(escape_inline(rule)) in md or rule in md


@pytest.mark.parametrize("name", EXAMPLES)
def test_formats_agree_on_capacity_fit_and_the_cheapest_option(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTRACT §6: the capacity (and shortfall), the usable memory, the cards in the host
    and the enough-card line are in every format, from the one decision."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    decision = _decision(name)
    as_json = json.loads(render(decision, "json"))
    md = _flat(render(decision, "md"))
    page = _flat(html.unescape(render(decision, "html")))
    reader = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))
    pdf = _flat(" ".join(p.extract_text() for p in reader.pages))
    r = decision.recommendation
    assert r.capacity is not None
    capacity = as_json["recommendation"]["capacity"]
    assert capacity == {
        "jobs_wanted": r.capacity.jobs_wanted,
        "jobs_served": r.capacity.jobs_served,
        "cards": r.capacity.cards,
        "hosts": r.capacity.hosts,
        "cards_per_host": r.capacity.cards_per_host,
        "hosts_needed": r.capacity.hosts_needed,
        "shortfall": r.capacity.shortfall,
        "hosts_cards_usd": r.capacity.hosts_cards_usd,
        "whole_need_within_budget": r.capacity.whole_need_within_budget,
        "unit": r.capacity.unit,
        "summary": r.capacity.summary,
    }
    assert as_json["recommendation"]["action"] == r.action
    assert as_json["recommendation"]["existing"] == [
        {"name": e.name, "count": e.count, "kept": e.kept, "sku": e.sku} for e in r.existing
    ]
    for pick, data in zip(decision.picks, as_json["picks"], strict=True):
        for key in ("usable_vram_gib", "headroom_gib", "slots_total", "hosts", "hosts_words"):
            assert data[key] == getattr(pick, key)
        # CONTRACT §7: what is bought, over every host, the cards first.
        assert data["line_items"] == [
            {"name": i.name, "count": i.count, "usd": i.usd} for i in pick.line_items
        ]
        if pick.count:
            assert pick.line_items[0].name == pick.name
            assert pick.line_items[0].count == pick.count * pick.hosts
    texts = [f"Capacity: {r.capacity.summary}"]
    if decision.picks[0].hosts > 1:  # a purchase over several hosts lists what it buys
        texts.append(f"Bought: {line_items_text(decision.picks[0])}.")
    if decision.enough is not None:
        texts.append(decision.enough.text)
        assert as_json["enough"]["text"] == decision.enough.text
    # PDF text extraction breaks a hyphenated word at a line end ("two-independent- jobs").
    unbroken = pdf.replace("- ", "-")
    for line in texts:
        assert _flat(escape_inline(line)) in md, (name, line)
        assert _flat(line) in page, (name, line)
        assert _flat(line).replace("- ", "-") in unbroken, (name, line)
    top = decision.picks[0]
    jobs = f"{top.jobs_served} of {top.jobs_wanted}"
    for text in (md, page, pdf):
        assert "Jobs served" in text and jobs in text


def _squeezed(text: str) -> str:
    """Without any white space: a PDF table cell may break a long value across lines."""
    return "".join(text.split())


def test_formats_agree_on_the_conflicting_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two captures of different cards at one bus id, and two that disagree on one
    reading: JSON lists both conflicts as CONTRACT §6 says, and Markdown, HTML and PDF
    each show a "Conflicting evidence" section with every GPU, field, value and file."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.chdir(tmp_path)
    names = {
        "judge-rtx-4090-load-q.txt": "a.txt",
        "judge-rtx-a5000-same-bus-q.txt": "b.txt",
        "two-gpu-q.txt": "c.txt",
        "two-gpu-dcgm.prom": "d.prom",
    }
    for source, name in names.items():
        (tmp_path / name).write_bytes((EVIDENCE / source).read_bytes())
    decision = advise(
        REPO / "examples" / "llm-latency-endpoint.toml",
        evidence=[Path(name) for name in names.values()],
        sensitivity=False,
    )
    conflicts = json.loads(render(decision, "json"))["evidence_conflicts"]
    assert [(c["gpu"], c["field"]) for c in conflicts] == [
        ("00000000:01:00.0", "name"),
        ("00000000:01:00.0", "uuid"),
        (None, "driver_version"),  # host-wide: the two hosts run different drivers
        (None, "cuda_version"),
        ("00000000:17:00.0", "utilisation.gpu_pct"),
        (None, "driver_version"),
    ]
    assert conflicts == [c.model_dump(mode="json") for c in decision.evidence_conflicts]
    md = _flat(render(decision, "md"))
    page = _flat(html.unescape(render(decision, "html")))
    reader = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))
    pdf = _squeezed(" ".join(p.extract_text() for p in reader.pages))
    for text, show in ((md, _md_text), (page, str), (pdf, _squeezed)):
        assert show("Conflicting evidence") in text
        for conflict in conflicts:
            assert show(conflict["gpu"] or "host") in text
            field = f"`{conflict['field']}`" if text is md else show(conflict["field"])
            assert field in text, field
            for value in conflict["values"]:
                shown = f"{format_value(value['value'])} ({value['file']})"
                assert show(shown) in text, shown
    quiet = advise(REPO / "examples" / "llm-latency-endpoint.toml", sensitivity=False)
    assert quiet.evidence_conflicts == ()
    for fmt in ("md", "html"):
        assert "Conflicting evidence" not in render(quiet, fmt)


def _md_text(text: str) -> str:
    return _flat(escape_inline(text))
