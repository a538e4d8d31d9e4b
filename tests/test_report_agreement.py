"""For every worked example, the four formats say the same thing: headline, picks and
findings, all taken from one decision."""

from __future__ import annotations

import html
import io
import json

import pypdf
import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.pipeline import advise
from gpuadvisor.render.markdown import escape as escape_inline
from gpuadvisor.render.report import render

from .conftest import REPO

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
