"""The words of a decision say what decided it (issue #30 §4).

- The headline's reason is what decided between the chosen kind of purchase and the
  runner-up: capacity, a constraint that left no other kind, or (only when the score
  decided) the rule that moved the chosen kind furthest ahead.
- A rule's generic action never reads as the recommendation when the pick went another
  way: it says "Not followed here" and why, before its advice.
- A keep-the-cards answer reads as one in every place: no kind of purchase over "buy
  nothing", no unit price beside a total of $0, no "0 × card" in the sign-off.
- A training method not yet decided is sized as LoRA, and the report says so.
- The used market for cards no longer made, and GeForce's driver licence on data-center
  use, are said where they apply.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

import pypdf
import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render

from .conftest import REPO
from .test_examples import EXAMPLES, evidence_for

HEADER = 'schema = "gpuadvisor/profile/v1"\n'


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def _example(name: str) -> Decision:
    return advise(
        REPO / "examples" / f"{name}.toml", evidence=evidence_for(name), sensitivity=False
    )


def _decide(tmp_path: Path, text: str) -> Decision:
    path = tmp_path / "p.toml"
    path.write_text(HEADER + text, encoding="utf-8")
    return advise(path, sensitivity=False)


def _title(decision: Decision, rule: str) -> str:
    return next(f.title for f in decision.findings if f.rule == rule)


# -- the headline names what decided -----------------------------------------------------


def test_capacity_decides_the_class_and_the_headline_says_so() -> None:
    """Consumer cards scored higher (COST-001) but serve fewer jobs in the tower."""
    decision = _example("four-gpu-tower")
    headline = decision.recommendation.headline
    assert decision.scores["class"]["consumer"] > decision.scores["class"]["professional"]
    # The runner-up (by the engine's order: the whole need within the budget first) is
    # named; the consumer class lost on capacity, which its rejection says.
    assert "it serves all 4 jobs, where the best " in headline
    consumer = next(r for r in decision.rejected if r.option == "consumer")
    assert "its best option serves 2 of 4 jobs" in consumer.reason, consumer.reason
    assert _title(decision, "JOBS-001").lower().rstrip(".") not in headline.lower()


def test_a_shortfall_headline_gives_the_capacity_once() -> None:
    headline = _example("hyperparameter-sweep").recommendation.headline
    assert "it serves more jobs than any other option (the best consumer option serves 2)" in (
        headline
    )
    assert headline.count("serves 4 of 8") == 1


def test_when_no_other_kind_is_left_the_headline_says_the_requirements_decided() -> None:
    decision = _example("ecc-simulation")
    assert decision.alternatives and all(a.best is None for a in decision.alternatives)
    assert (
        "no other kind of purchase meets every requirement: the data-center options that "
        "would rank above it fail on cooling" in decision.recommendation.headline
    )
    both = _example("llm-latency-endpoint").recommendation.headline
    assert (
        "the consumer options that would rank above it fail on memory, the data-center ones "
        "on cooling" in both
    )


def test_when_the_score_decides_the_rule_that_moved_it_furthest_is_the_reason() -> None:
    """One card against a data-parallel pair: FRAG-001 and TEAM-002 both favour one card
    by 1, but TEAM-002 also counts 2 against the pair, so it moved the answer most."""
    decision = _example("big-model-no-sharding")
    assert decision.recommendation.shape == "single-larger-gpu"
    headline = decision.recommendation.headline.lower()
    assert _title(decision, "TEAM-002").lower().rstrip(".") in headline
    assert _title(decision, "FRAG-001").lower().rstrip(".") not in headline


# -- a rule's action never contradicts the pick ------------------------------------------


def test_the_consumer_advice_above_a_professional_pick_says_it_was_not_followed() -> None:
    decision = _example("four-gpu-tower")
    assert decision.recommendation.class_ == "professional"
    cost = next(f for f in decision.findings if f.rule == "COST-001")
    assert cost.action.startswith(
        "Not followed here (consumer: its best option serves 2 of 4 jobs against 4 for the "
        "chosen). The advice, where it applies: buy consumer cards"
    )
    md = render(decision, "md")
    assert isinstance(md, str)
    assert "**Action:** Buy consumer cards" not in md


def test_buying_nothing_marks_every_purchase_advice_as_not_followed() -> None:
    decision = _example("thermal-throttled-workstation")
    assert decision.recommendation.action == "keep"
    preferences = [f for f in decision.findings if f.kind == "preference"]
    assert {f.rule for f in preferences} >= {"COST-001", "HEAT-001", "JOBS-002"}
    for finding in preferences:
        assert finding.action.startswith(
            "Not followed here (nothing is bought: the cards already in the host meet the need)."
        ), finding.rule


# -- a keep answer in the report ---------------------------------------------------------


def _pdf_text(decision: Decision) -> str:
    reader = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))  # type: ignore[arg-type]
    return " ".join(" ".join(p.extract_text() for p in reader.pages).split())


#: Examples whose host evidence can make keeping the cards the answer.
WITH_CARDS = [name for name in EXAMPLES if (REPO / "examples" / "evidence" / name).is_dir()]


def test_a_keep_answer_reads_as_one_in_every_format() -> None:
    keeps = [d for d in map(_example, WITH_CARDS) if d.recommendation.action == "keep"]
    assert keeps, "thermal-throttled-workstation keeps its card"
    for decision in keeps:
        _reads_as_keep(decision)


def _reads_as_keep(decision: Decision) -> None:
    top = decision.picks[0]
    md = render(decision, "md")
    page = html.unescape(render(decision, "html"))  # type: ignore[arg-type]
    assert isinstance(md, str)
    texts = {"md": md.replace("\\", ""), "html": page, "pdf": _pdf_text(decision)}
    kind = "one larger GPU · consumer"  # the kind of the cards kept, not a purchase
    assert f"Recommended: {kind}" not in md
    assert f'<span class="v">{kind}</span>' not in page
    assert "· recommended" not in page  # the score chart's note on the chosen kind
    assert "kept in the host: buy nothing" in page
    for fmt, text in texts.items():
        flat = " ".join(text.split())
        assert f"0 × {top.name}" not in flat, fmt
        assert "buy nothing: keep the cards in the host" in flat, fmt
        assert f"buy nothing, keep the {top.kept_count} × {top.kept_name} in the host" in flat
    assert "– (kept, not bought)" in md and "$0 (nothing bought)" in md.replace("\\", "")
    assert "$1,599" not in md.replace("\\", "")  # no unit price for a card not bought
    assert "### Prices used" not in md


# -- a training method not decided -------------------------------------------------------

UNKNOWN_13B = """
[workload]
kind = "training"
objective = "throughput"
[workload.model]
params_b = 13.0
task = "unknown"
[budget]
max_usd = 10000.0
"""


def test_an_unknown_training_method_is_sized_as_lora_and_says_so(tmp_path: Path) -> None:
    decision = _decide(tmp_path, UNKNOWN_13B)
    need = decision.sizing.vram_need_gib
    assert need is not None and 40 < need < 80  # not the 239 GiB of a full fine-tune
    assert decision.picks, "a LoRA job of a 13B model fits one card"
    assert "lora (rank 16), assumed" in decision.sizing.model
    first = decision.sizing.assumptions[0]
    assert first.startswith("The training method is not decided (task = unknown)")
    assert "sized as LoRA" in first and "about 239.2 GiB instead" in first
    full = _decide(tmp_path, UNKNOWN_13B.replace('"unknown"', '"full-finetune"'))
    assert full.sizing.vram_need_gib is not None and full.sizing.vram_need_gib > 230


# -- said where it applies ---------------------------------------------------------------


def test_a_kept_card_no_longer_made_points_to_the_used_market_and_has_no_price_flag() -> None:
    from gpuadvisor.decision.words import pick_flags

    decision = _example("thermal-throttled-workstation")
    flags = pick_flags(decision.picks[0])
    assert flags == (
        "Production ended 2024-10: a spare or a second identical card now comes from "
        "remaining stock or the used market (second-hand, without the maker's warranty, "
        "at a price the catalog does not know).",
    )
    life = next(f for f in _example("second-rtx-4090").findings if f.rule == "LIFE-002")
    assert "still sold used" in life.rationale


GEFORCE_SERVICE = """
[workload]
kind = "inference"
objective = "throughput"
vram_need_gib = 10.0
concurrent_jobs = 2
[platform]
chassis = "workstation"
gpu_count_max = 2
[budget]
max_usd = 1000.0
"""


def test_a_geforce_pick_for_a_shared_service_names_the_driver_licence(tmp_path: Path) -> None:
    decision = _decide(tmp_path, GEFORCE_SERVICE)
    assert "GeForce" in decision.picks[0].name
    licence = next(f for f in decision.findings if f.rule == "ENGINE-LICENCE-001")
    assert licence.category == "driver" and licence.severity == "warning"
    assert "https://www.nvidia.com/en-us/drivers/geforce-license/" in licence.rationale
    assert "2.1.3" in licence.action
    one_user = _decide(
        tmp_path, GEFORCE_SERVICE.replace("concurrent_jobs = 2", "concurrent_jobs = 1")
    )
    assert "GeForce" in one_user.picks[0].name
    assert all(f.rule != "ENGINE-LICENCE-001" for f in one_user.findings)
    # Professional and data-center picks in racks and shared services: nothing to say.
    for name in ("vdi-many-users", "dense-1u-inference", "four-gpu-tower"):
        decision = _example(name)
        assert "GeForce" not in decision.picks[0].name
        assert all(f.rule != "ENGINE-LICENCE-001" for f in decision.findings), name
