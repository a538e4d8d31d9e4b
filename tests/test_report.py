"""Reports in Markdown, HTML and JSON: golden files, section order, runbook, charts."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.render import charts
from gpuadvisor.render.report import render
from gpuadvisor.render.view import (
    Runbook,
    RunbookItem,
    build_view,
    comparison_columns,
    runs,
    select_runbook,
)

from .conftest import TEST_DATE
from .golden_util import GOLDEN_EXAMPLES, Golden, example_decision, with_evidence

SECTIONS = (
    "Summary",
    "Fix this first",
    "Why",
    "Options rejected",
    "How the options compare",
    "Memory one job needs",
    "What would change the recommendation",
    "Measured evidence",
    "Operating runbook",
    "Inputs and provenance",
    "Appendix: inputs that would change the recommendation",
    "Sign-off",
)


@pytest.fixture()
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden.from_request(request)


@pytest.fixture(scope="module")
def decisions(test_catalog: Catalog, rulebase: RuleBase) -> dict[str, Decision]:
    made = {name: example_decision(name, test_catalog, rulebase) for name in GOLDEN_EXAMPLES}
    made["llm-latency-endpoint-with-evidence"] = with_evidence(made["llm-latency-endpoint"])
    return made


GOLDEN_CASES = [*GOLDEN_EXAMPLES, "llm-latency-endpoint-with-evidence"]


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_report_matches_golden_file(
    name: str, fmt: str, decisions: dict[str, Decision], golden: Golden
) -> None:
    golden.check(f"report/{name}.{fmt}", render(decisions[name], fmt))


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_same_decision_same_bytes(fmt: str, decisions: dict[str, Decision]) -> None:
    decision = decisions["llm-latency-endpoint-with-evidence"]
    assert render(decision, fmt) == render(decision, fmt)


def _headings(text: str, fmt: str) -> list[str]:
    if fmt == "md":
        return re.findall(r"^## (.+)$", text, flags=re.M)
    return re.findall(r"<h2>(.+?)</h2>", text)


@pytest.mark.parametrize("fmt", ["md", "html"])
@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_sections_in_the_agreed_order(fmt: str, name: str, decisions: dict[str, Decision]) -> None:
    decision = decisions[name]
    expected = [s for s in SECTIONS if s != "Fix this first" or decision.fix_first]
    if not decision.sizing.breakdown:  # shown only when the profile describes its model
        expected.remove("Memory one job needs")
    assert _headings(render(decision, fmt), fmt) == expected


def test_summary_names_pick_count_prices_and_confidence(decisions: dict[str, Decision]) -> None:
    decision = decisions["vdi-many-users"]
    top = decision.picks[0]
    summary = render(decision, "md").split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert f"{top.count} × {top.name}" in summary
    assert f"${top.price_usd:,.0f}" in summary.replace("\\$", "$")
    assert f"${top.total_price_usd:,.0f}" in summary.replace("\\$", "$")
    assert f"Confidence is **{decision.recommendation.confidence}**" in summary


def test_fix_first_comes_before_why_and_names_the_rule(decisions: dict[str, Decision]) -> None:
    text = render(decisions["input-bound-training"], "md")
    fix = text.index("## Fix this first")
    assert text.index("## Summary") < fix < text.index("## Why")
    assert "`IO-001`" in text[fix : text.index("## Why")]


def test_every_finding_is_in_why_with_rule_and_rationale(decisions: dict[str, Decision]) -> None:
    decision = decisions["virtual-production-genlock"]
    html = render(decision, "html")
    why = html.split('<section id="why">', 1)[1].split("</section>", 1)[0]
    for finding in decision.findings:
        assert f"<code>{finding.rule}</code>" in why
        assert " ".join(finding.rationale.split())[:60].replace("'", "&#39;") in " ".join(
            why.split()
        )


def test_comparison_has_picks_and_closest_rejected(decisions: dict[str, Decision]) -> None:
    decision = decisions["vdi-many-users"]
    columns = comparison_columns(decision)
    assert [c.pick for c in columns if c.chosen] == list(decision.picks)
    rejected = [c for c in columns if not c.chosen]
    assert rejected and all(c.role == "Rejected" for c in rejected)
    text = render(decision, "md")
    table = text.split("## How the options compare", 1)[1].split("\n## ", 1)[0]
    for label in ("Memory per card", "Bandwidth per card", "ECC", "Frame lock", "vGPU"):
        assert f"| {label} |" in table
    for label in ("Cooling", "Slots per card", "Board power", "Unit price", "Lifecycle cost"):
        assert f"| {label}" in table


def test_json_is_the_decision(decisions: dict[str, Decision]) -> None:
    decision = decisions["llm-latency-endpoint-with-evidence"]
    data = json.loads(render(decision, "json"))
    assert data["schema"] == "gpuadvisor/decision/v1"
    assert Decision.model_validate(data) == decision


def test_measured_evidence_section_renders_what_is_present(decisions: dict[str, Decision]) -> None:
    plain = render(decisions["llm-latency-endpoint"], "md")
    assert "No host evidence was attached" in plain
    measured = render(decisions["llm-latency-endpoint-with-evidence"], "md")
    section = measured.split("## Measured evidence", 1)[1].split("\n## ", 1)[0]
    assert "`host.iowait_pct` | 1.2 % | iostat.txt" in section
    assert "### GPU 0: NVIDIA RTX A5000 (00000000:17:00.0)" in section
    assert "121 samples over 600 s from smi.csv" in section
    assert "| SM clock (MHz) | 1,710 |" in section


def test_time_series_chart_only_when_samples_exist(decisions: dict[str, Decision]) -> None:
    plain = render(decisions["llm-latency-endpoint"], "html")
    assert plain.count("<svg") == 2  # scores and memory
    sampled = render(decisions["llm-latency-endpoint-with-evidence"], "html")
    assert sampled.count("<svg") == 3
    assert "Temperature (°C): min 45 · mean" in sampled


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def test_html_is_self_contained(decisions: dict[str, Decision]) -> None:
    html = render(decisions["vdi-many-users"], "html")
    parser = _Tags()
    parser.feed(html)
    assert {"script", "link", "iframe", "img"}.isdisjoint(parser.tags)
    # Text may quote a URL (a source, an assumption); nothing may be fetched from one.
    assert re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html) is None
    assert re.search(r"url\(\s*['\"]?(?:https?:)?//", html) is None
    assert "@import" not in html


# -- charts ---------------------------------------------------------------------------


def test_scores_chart_marks_the_chosen_and_the_excluded(decisions: dict[str, Decision]) -> None:
    chart = charts.scores_chart(decisions["llm-latency-endpoint"])
    assert chart is not None
    statuses = {bar.label: bar.status for bar in chart.bars}
    assert statuses["one larger GPU · professional"] == "chosen"
    assert statuses["one larger GPU · consumer"] == "excluded"
    # One job: no option of independent jobs or of a data-parallel job is made, so those
    # kinds are not charted (one larger GPU and model split, in three classes each).
    assert len(chart.bars) == 6


def test_memory_chart_flags_options_short_of_the_need(decisions: dict[str, Decision]) -> None:
    decision = decisions["llm-latency-endpoint"]
    columns = comparison_columns(decision)
    chart = charts.memory_chart(columns, 100.0)
    assert chart is not None and chart.marker is not None
    assert {bar.status for bar in chart.bars} == {"short"}
    assert charts.memory_chart(columns, None) is None


def test_long_series_are_reduced_keeping_extremes() -> None:
    points = [(float(t), 100.0 if t == 777 else 50.0) for t in range(5000)]
    reduced = charts._reduce(points)
    assert len(reduced) <= charts.MAX_POINTS + 2
    assert (777.0, 100.0) in reduced


# -- runbook --------------------------------------------------------------------------


def test_runbook_follows_the_findings(decisions: dict[str, Decision]) -> None:
    def ids(name: str) -> list[str]:
        view = build_view(decisions[name], _bundled_runbook(), None)
        return [item.id for item in view.runbook]

    assert {"driver-pinning", "monitoring"} <= set(ids("llm-latency-endpoint"))
    assert "input-pipeline" in ids("input-bound-training")
    assert "input-pipeline" not in ids("llm-latency-endpoint")
    assert "vgpu-service" in ids("vdi-many-users")
    assert "frame-lock" in ids("virtual-production-genlock")
    assert "frame-lock" not in ids("vdi-many-users")


def test_runbook_names_the_rules_that_called_for_an_item(decisions: dict[str, Decision]) -> None:
    view = build_view(decisions["input-bound-training"], _bundled_runbook(), None)
    item = next(i for i in view.runbook if i.id == "input-pipeline")
    assert item.because == ("IO-001",)


def test_fit_checks_every_option_meets_do_not_tailor_the_runbook(
    decisions: dict[str, Decision],
) -> None:
    runbook = Runbook(
        item=(RunbookItem(id="power", title="t", why="w", steps=("s",), categories=("power",)),)
    )
    decision = decisions["llm-latency-endpoint"]
    assert any(f.rule == "FIT-003" for f in decision.findings)  # power, severity info
    assert select_runbook(runbook, decision) == ()


def test_runbook_commands_are_code_in_every_format(decisions: dict[str, Decision]) -> None:
    decision = decisions["llm-latency-endpoint"]
    assert "`apt-mark hold`" in render(decision, "md")
    assert "<code>apt-mark hold</code>" in render(decision, "html")
    assert runs("a `b` c") == runs("a  `b`\nc")
    assert [r.code for r in runs("run `x` now")] == [False, True, False]


def _bundled_runbook() -> Runbook:
    from gpuadvisor.inputs.textio import parse_toml
    from gpuadvisor.render.view import parse_runbook
    from gpuadvisor.resources import data_dir

    path = data_dir("reports") / "runbook.toml"
    return parse_runbook(parse_toml(path.read_text(encoding="utf-8"), str(path)), str(path))


def test_bundled_runbook_is_valid_and_every_item_can_show() -> None:
    runbook = _bundled_runbook()
    assert len({item.id for item in runbook.item}) == len(runbook.item)
    for item in runbook.item:
        assert item.always or item.categories or item.shapes or item.classes, item.id
        assert item.steps, item.id


def test_runbook_with_an_unknown_category_is_refused() -> None:
    from gpuadvisor.render.view import parse_runbook

    with pytest.raises(InputError, match="categories"):
        parse_runbook(
            {
                "item": [
                    {"id": "x", "title": "t", "why": "w", "steps": ["s"], "categories": ["gpu"]}
                ]
            },
            "runbook.toml",
        )


# -- date -----------------------------------------------------------------------------


def test_the_date_shown_is_the_decisions_own(
    decisions: dict[str, Decision], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendering reads no clock and no environment: a decision made on one day renders
    with that day whenever it is rendered (tests/test_report_signoff.py: how it is set)."""
    decision = decisions["llm-latency-endpoint"]
    assert decision.provenance.generated_at == TEST_DATE
    md, html = render(decision, "md"), render(decision, "html")
    assert f"Date: {TEST_DATE}" in md and TEST_DATE in html
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert render(decision, "md") == md and render(decision, "html") == html
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    assert render(decision, "md") == md


def test_typst_is_imported_only_for_pdf() -> None:
    import subprocess
    import sys

    from .conftest import REPO

    script = (
        "import sys; from pathlib import Path;"
        "from gpuadvisor.inputs.catalog import load_catalog;"
        "from gpuadvisor.pipeline import advise;"
        "import gpuadvisor.cli;"
        "from gpuadvisor.render.report import render;"
        "d = advise(Path('examples/llm-latency-endpoint.toml'),"
        " catalog=load_catalog(base=Path('tests/fixtures/catalog')), sensitivity=False);"
        "[render(d, f) for f in ('md', 'html', 'json')];"
        "assert 'typst' not in sys.modules, 'typst imported'"
    )
    subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, check=True, env={"PYTHONPATH": str(REPO)}
    )


def test_each_format_imports_only_what_it_needs() -> None:
    """JSON needs no template machinery (not even Jinja2), Markdown no chart geometry:
    what a format does not use is not paid for at import on every run."""
    import subprocess
    import sys

    from .conftest import REPO

    script = (
        "import sys; from pathlib import Path;"
        "from gpuadvisor.inputs.catalog import load_catalog;"
        "from gpuadvisor.pipeline import advise;"
        "import gpuadvisor.cli;"
        "from gpuadvisor.render.report import render;"
        "d = advise(Path('examples/llm-latency-endpoint.toml'),"
        " catalog=load_catalog(base=Path('tests/fixtures/catalog')), sensitivity=False);"
        "render(d, 'json');"
        "loaded = [m for m in ('jinja2', 'gpuadvisor.render.env') if m in sys.modules];"
        "assert not loaded, loaded;"
        "render(d, 'md');"
        "assert 'jinja2' in sys.modules;"
        "assert 'gpuadvisor.render.charts' not in sys.modules, 'charts imported for md'"
    )
    subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, check=True, env={"PYTHONPATH": str(REPO)}
    )


# -- unusual decisions ----------------------------------------------------------------


def _decide(text: str, catalog: Catalog, rules: RuleBase) -> Decision:
    from gpuadvisor.decision.build import decide
    from gpuadvisor.engine.core import Engine
    from gpuadvisor.engine.facts import build_facts
    from gpuadvisor.inputs.profile import parse_profile

    profile = parse_profile('schema = "gpuadvisor/profile/v1"\n' + text)
    facts = build_facts(profile, catalog, None)
    return decide(
        profile, Engine(catalog, rules), facts, profile_sha256="0" * 64, sensitivity=False
    )


NO_FIT = """
[meta]
title = "Too big"
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = 200
"""

MODEL_PARALLEL = """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 45
parallelism = "model-parallel"
model_parallel_ready = true
[team]
multi_gpu_experience = "expert"
[platform]
psu_headroom_w = 2000
gpu_count_max = 4
[budget]
max_usd = 6000
"""


@pytest.mark.parametrize("fmt", ["md", "html", "pdf"])
def test_no_fitting_option_still_gives_a_full_report(
    fmt: str, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    if fmt == "pdf":
        pytest.importorskip("typst")
    decision = _decide(NO_FIT, test_catalog, rulebase)
    assert decision.picks == ()
    out = render(decision, fmt)
    if fmt != "pdf":
        assert isinstance(out, str)
        assert "No purchase can be recommended until a requirement changes" in out
        assert "nothing to compare" in out
        assert "ENGINE-NOFIT-001" in out


def test_model_parallel_pick_shows_the_memory_of_the_group(
    test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = _decide(MODEL_PARALLEL, test_catalog, rulebase)
    assert decision.recommendation.shape == "multi-gpu-model-parallel"
    top = decision.picks[0]
    assert top.vram_per_job_gib is not None and top.vram_per_job_gib > top.vram_gib
    rows = {row.label: row.cells for row in build_view(decision, _bundled_runbook(), None).rows}
    # The pooled, usable memory of the group against one card's label.
    assert rows["Usable / needed per job"][0].split(" / ")[0] != rows["Memory per card"][0]
    chart = charts.memory_chart(comparison_columns(decision), decision.vram_need_gib)
    assert chart is not None and chart.bars[0].status == "chosen"


def test_decision_without_report_extensions_renders(decisions: dict[str, Decision]) -> None:
    """A decision/v1 document from before vram_need_gib and friends existed."""
    old = decisions["llm-latency-endpoint"].model_copy(
        update={
            "vram_need_gib": None,
            "lifecycle_years": None,
            "picks": tuple(
                p.model_copy(update={"vram_per_job_gib": None})
                for p in decisions["llm-latency-endpoint"].picks
            ),
        }
    )
    html = render(old, "html")
    assert html.count("<svg") == 1  # no memory chart without the need
    assert "Lifecycle cost</th>" in html
