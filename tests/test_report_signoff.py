"""A document a manager can sign: the sign-off block, the prices used with their age on
the report date, and the evidence named by file (the full path once, in the inputs)."""

from __future__ import annotations

import datetime as dt
import html
import io
import re

import pypdf
import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.pipeline import advise
from gpuadvisor.render.provenance import prices_used, short_names
from gpuadvisor.render.report import render

from .conftest import REPO, TEST_DATE
from .golden_util import example_decision

EVIDENCE = REPO / "examples" / "evidence" / "thermal-throttled-workstation"


@pytest.fixture(scope="module")
def decision(test_catalog: Catalog, rulebase: RuleBase) -> Decision:
    return example_decision("vdi-many-users", test_catalog, rulebase)


@pytest.fixture(scope="module")
def measured(test_catalog: Catalog) -> Decision:
    """A real capture given by absolute paths, as a shell's tab completion writes them."""
    files = sorted(p.resolve() for p in EVIDENCE.iterdir())
    return advise(
        REPO / "examples" / "thermal-throttled-workstation.toml",
        evidence=files,
        catalog=test_catalog,
        sensitivity=False,
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def pdf_text(decision: Decision) -> str:
    reader = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))
    return flat(" ".join(page.extract_text() for page in reader.pages))


def formats(decision: Decision) -> dict[str, str]:
    return {
        "md": flat(render(decision, "md").replace("\\", "")),
        "html": flat(html.unescape(re.sub(r"<[^>]+>", " ", render(decision, "html")))),
        "pdf": pdf_text(decision),
    }


# -- sign-off -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["md", "html", "pdf"])
def test_sign_off_block_names_who_signs_and_what(decision: Decision, fmt: str) -> None:
    text = formats(decision)[fmt]
    block = text[text.rindex("Sign-off") :]
    for words in ("Prepared by", "Approved by"):
        assert words in block
    if fmt != "md":  # Markdown has a table to fill in instead of lines
        assert block.upper().count("SIGNATURE") == 2 and block.upper().count("NAME") == 2
    assert decision.inputs.profile_sha256 in block
    p = decision.provenance
    assert f"gpuadvisor {p.gpuadvisor} · catalog {p.catalog} · rules {p.rules}" in block
    assert f"Report date: {TEST_DATE}" in block
    top = decision.picks[0]
    assert f"{top.count} × {top.name}" in block and f"${top.total_price_usd:,.0f}" in block


def test_sign_off_is_the_last_section_of_html(decision: Decision) -> None:
    page = render(decision, "html")
    assert re.findall(r"<h2>(.+?)</h2>", page)[-1] == "Sign-off"
    assert page.index('id="signoff"') > page.index('id="inputs"')


# -- prices used ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["md", "html", "pdf"])
def test_prices_used_lists_each_pick_with_kind_and_age(decision: Decision, fmt: str) -> None:
    text = formats(decision)[fmt]
    table = text[text.index("Prices used") :]
    assert f"Age on {TEST_DATE}" in table
    report_day = dt.date.fromisoformat(TEST_DATE)
    for rank, pick in enumerate(decision.picks, start=1):
        age = (report_day - dt.date.fromisoformat(pick.price_date)).days
        row = (
            f"Pick #{rank} {pick.count} × {pick.name} ${pick.price_usd:,.0f} "
            f"{pick.price_kind} {pick.price_date} {age:,} days"
        )
        assert row in table.replace(" | ", " "), row


def test_price_age_in_words(decision: Decision) -> None:
    def aged(price_date: str) -> str:
        pick = decision.picks[0].model_copy(update={"price_date": price_date})
        return prices_used(decision.model_copy(update={"picks": (pick,)}))[0].age

    assert aged("2026-11-30") == "1 day"
    assert aged(TEST_DATE) == "0 days"
    assert aged("2024-01-15") == "1,051 days"
    assert aged("2026-12-02") == "dated 1 day after the report"
    assert aged("not a date") == "unknown"


# -- evidence by file name ------------------------------------------------------------


def test_short_names_are_file_names_unless_two_share_one() -> None:
    names = short_names(
        ["/cap/a/nvidia-smi-q.txt", "/cap/b/nvidia-smi-q.txt", "/cap/a/dmesg.txt", "iostat.txt"]
    )
    assert names == {
        "/cap/a/nvidia-smi-q.txt": "a/nvidia-smi-q.txt",
        "/cap/b/nvidia-smi-q.txt": "b/nvidia-smi-q.txt",
        "/cap/a/dmesg.txt": "dmesg.txt",
        "iostat.txt": "iostat.txt",
    }
    assert short_names(["C:\\caps\\smi.txt"]) == {"C:\\caps\\smi.txt": "smi.txt"}


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_evidence_tables_name_files_and_the_inputs_give_each_path_once(
    measured: Decision, fmt: str
) -> None:
    text = render(measured, fmt)
    assert measured.measured and measured.gpus
    for ref in measured.inputs.evidence:
        assert ref.file.startswith("/")
        shown = ref.file.replace("_", "\\_") if fmt == "md" else ref.file
        assert text.count(shown) == 1, ref.file
        name = ref.file.rsplit("/", 1)[1]
        assert text.count(name.replace("_", "\\_") if fmt == "md" else name) > 10
    inputs = text[text.index("Inputs and provenance") :]
    for ref in measured.inputs.evidence:
        assert ref.file.replace("_", "\\_") in inputs or ref.file in inputs


def test_pdf_gives_each_evidence_path_once(measured: Decision) -> None:
    text = pdf_text(measured).replace(" ", "")
    for ref in measured.inputs.evidence:
        assert text.count(ref.file.replace(" ", "")) == 1, ref.file
