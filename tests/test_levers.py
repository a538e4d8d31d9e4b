"""What would change the answer, in the buyer's terms (issue #30 §4, CONTRACT §7 levers).

Each lever is a change a buyer can make (a lower precision, LoRA instead of a full
fine-tune, an 8-bit optimizer, fewer conversations, a shorter context, the budget, a rack
server, renting), with the card it brings and its price; it appears only where it
applies and only when it changes the answer. Field names stay out of its sentence: they
are in its ``inputs`` and in the report's appendix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuadvisor.decision.build import Advisor
from gpuadvisor.decision.model import Decision, Lever
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.leverdata import break_even_hours_per_month, lever_data
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.examples import list_examples
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render
from gpuadvisor.sizing import estimate_memory

from .conftest import REPO
from .test_examples import evidence_for

CATALOG = load_catalog()
ADVISOR = Advisor(Engine(CATALOG, load_rules()))
EXAMPLES = [name for name, _ in list_examples()]

HEADER = 'schema = "gpuadvisor/profile/v1"\n'
#: A field name as a profile spells it (workload.vram_need_gib, budget.max_usd, ...).
FIELD_NAME = re.compile(r"\b(workload|requirements|platform|budget|team)\.[a-z_]+|_gib\b")


def _decide(tmp_path: Path, text: str, name: str = "p.toml") -> Decision:
    path = tmp_path / name
    path.write_text(HEADER + text, encoding="utf-8")
    return advise(path, advisor=ADVISOR)


def _example(name: str) -> Decision:
    return advise(REPO / "examples" / f"{name}.toml", evidence=evidence_for(name), advisor=ADVISOR)


def _kinds(decision: Decision) -> list[str]:
    return [lever.kind for lever in decision.levers]


def _lever(decision: Decision, kind: str) -> Lever:
    return next(lever for lever in decision.levers if lever.kind == kind)


SERVED_8B = """
[workload]
kind = "inference"
objective = "throughput"
[workload.model]
name = "llama-3.1-8b"
context_tokens = 32768
concurrent_sequences = 4
[platform]
chassis = "workstation"
[budget]
max_usd = 10000.0
"""

FULL_FINETUNE_13B = """
[workload]
kind = "training"
objective = "throughput"
[workload.model]
params_b = 13.0
task = "full-finetune"
[budget]
max_usd = 10000.0
"""


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


# -- the data the levers rest on ---------------------------------------------------------


def test_rental_examples_hold_and_every_rated_card_is_in_the_catalog() -> None:
    data = lever_data()
    assert data.rental.examples
    for example in data.rental.examples:
        hours = break_even_hours_per_month(
            example.lifecycle_usd, example.years, example.cards, example.usd_per_second * 3600
        )
        assert round(hours, 1) == example.break_even_hours_per_month, example.name
    ids = {sku.id for sku in CATALOG.skus}
    for rate in data.rental.rate:
        assert set(rate.skus) <= ids, rate.class_
    rated = [sku for rate in data.rental.rate for sku in rate.skus]
    assert len(rated) == len(set(rated)), "a card rents as one class"


# -- model levers: re-sized with gpuadvisor.sizing ---------------------------------------


def test_a_served_model_gets_precision_kv_cache_conversation_and_context_levers(
    tmp_path: Path,
) -> None:
    decision = _decide(tmp_path, SERVED_8B)
    assert decision.picks[0].segment != "consumer"
    assert _kinds(decision)[:4] == ["precision", "kv-cache", "sequences", "context"]
    precision = _lever(decision, "precision")
    assert precision.inputs == {"workload.model.precision": "int8"}
    assert precision.current == {"workload.model.precision": "bf16"}
    assert "8-bit integer" in precision.change and "instead of 16-bit" in precision.change
    kv = _lever(decision, "kv-cache")
    assert kv.inputs == {"workload.model.kv_cache_precision": "fp8"}
    for lever in decision.levers:
        assert lever.sku is not None and lever.sku != decision.picks[0].sku
        assert lever.total_usd is not None and lever.count >= 1
        assert lever.vram_need_gib is not None
        assert lever.vram_need_gib < decision.sizing.vram_need_gib  # type: ignore[operator]
        assert not FIELD_NAME.search(lever.change), lever.change


def test_fewer_conversations_and_a_shorter_context_stop_exactly_at_the_boundary(
    tmp_path: Path,
) -> None:
    """The lever's value is the largest that brings the new answer: one more
    conversation (one more context step) needs more than the scan's boundary."""
    decision = _decide(tmp_path, SERVED_8B)
    boundary = next(
        s.flips_at
        for s in decision.sensitivity
        if s.input == "workload.vram_need_gib" and s.direction == "down"
    )
    sequences = _lever(decision, "sequences")
    assert sequences.inputs == {"workload.model.concurrent_sequences": 3}
    assert sequences.vram_need_gib is not None and sequences.vram_need_gib <= boundary
    context = _lever(decision, "context")
    tokens = context.inputs["workload.model.context_tokens"]
    assert isinstance(tokens, int) and tokens % lever_data().serving.context_step_tokens == 0
    step = lever_data().serving.context_step_tokens
    wider = SERVED_8B.replace("context_tokens = 32768", f"context_tokens = {tokens + step}")
    model = parse_profile(HEADER + wider).workload.model
    assert model is not None
    assert round(estimate_memory(model).total_gib, 2) > boundary


def test_no_precision_lever_below_the_current_precision_and_no_lora_lever_for_serving() -> None:
    decision = _example("llm-latency-endpoint")  # Llama 3.1 70B already in int4
    assert "precision" not in _kinds(decision)
    assert "method" not in _kinds(decision) and "optimizer" not in _kinds(decision)


def test_a_full_fine_tune_gets_lora_and_qlora_levers_with_their_cards(tmp_path: Path) -> None:
    decision = _decide(tmp_path, FULL_FINETUNE_13B)
    assert not decision.picks  # 239 GiB: nothing fits
    methods = [lever for lever in decision.levers if lever.kind == "method"]
    assert [m.inputs for m in methods] == [
        {"workload.model.task": "lora"},
        {"workload.model.task": "qlora"},
    ]
    for lever in methods:
        assert lever.pick.startswith("1 × NVIDIA") and lever.total_usd
        assert "instead of training every weight" in lever.change
    assert methods[1].total_usd < methods[0].total_usd  # type: ignore[operator]


def test_an_8_bit_optimizer_lever_for_adam_training_that_it_changes(tmp_path: Path) -> None:
    decision = _decide(
        tmp_path,
        """
[workload]
kind = "training"
objective = "throughput"
[workload.model]
name = "qwen2.5-7b"
task = "full-finetune"
context_tokens = 2048
activation_checkpointing = true
[platform]
chassis = "workstation"
[budget]
max_usd = 10000.0
""",
    )
    assert not decision.picks  # about 125 GiB with 32-bit Adam states
    optimizer = _lever(decision, "optimizer")
    assert optimizer.inputs == {}  # no profile field states the optimizer
    assert "8-bit optimizer" in optimizer.change
    assert optimizer.sku is not None and optimizer.vram_need_gib is not None
    assert optimizer.vram_need_gib < decision.sizing.vram_need_gib  # type: ignore[operator]


# -- levers on the purchase --------------------------------------------------------------


def test_the_budget_lever_is_the_scan_s_boundary_with_its_card() -> None:
    decision = _example("demand-beyond-one-host")
    budget = _lever(decision, "budget")
    flip = next(
        s for s in decision.sensitivity if s.input == "budget.max_usd" and s.direction == "up"
    )
    assert budget.inputs == {"budget.max_usd": flip.flips_at}
    assert budget.change.startswith(f"Raise the budget to ${flip.flips_at:,.0f}")
    assert budget.pick in flip.to and budget.total_usd == flip.flips_at


def test_a_rack_lever_only_where_the_desk_machine_limits_the_answer(tmp_path: Path) -> None:
    limited = _decide(
        tmp_path,
        """
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 20.0
concurrent_jobs = 4
[platform]
chassis = "tower"
airflow = "restricted"
gpu_count_max = 2
psu_headroom_w = 600
[budget]
max_usd = 20000.0
""",
    )
    rack = _lever(limited, "rack")
    assert rack.inputs["platform.chassis"] == "rack-2u"
    assert rack.current["platform.chassis"] == "tower"
    assert "server itself is not priced" in rack.change
    assert rack.source and rack.source.startswith("https://")
    assert rack.count > limited.picks[0].count
    # Unattended work only, and never when the host already holds cards.
    for name in ("cad-certified", "thermal-throttled-workstation", "second-rtx-4090"):
        assert "rack" not in _kinds(_example(name)), name


def test_renting_for_batch_jobs_says_at_how_many_hours_a_month_buying_pays() -> None:
    decision = _example("cfd-double-precision")
    rent = _lever(decision, "rent")
    pick = decision.picks[0]
    assert rent.total_usd is None and rent.sku is None and rent.count == pick.count
    assert rent.usd_per_hour == pytest.approx(0.00116 * 3600)
    years = decision.lifecycle_years
    assert pick.lifecycle_cost_usd is not None and years is not None
    hours = pick.lifecycle_cost_usd / (years * 12 * pick.count * rent.usd_per_hour)
    assert rent.break_even_hours_per_month == round(hours, 1)
    assert f"above {round(hours)} hours a month" in rent.change
    assert "runs of 36 hours" in rent.change and "few times a month" in rent.change
    assert rent.source == lever_data().rental.source


@pytest.mark.parametrize(
    "name",
    ["llm-latency-endpoint", "vdi-many-users", "add-two-rtx-a5000", "cad-certified"],
)
def test_no_rent_lever_for_services_desk_work_or_cards_added_to_a_host(name: str) -> None:
    assert "rent" not in _kinds(_example(name))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_lever_changes_the_answer_and_speaks_the_buyer_s_terms(name: str) -> None:
    decision = _example(name)
    top = decision.picks[0] if decision.picks else None
    for lever in decision.levers:
        assert not FIELD_NAME.search(lever.change), (name, lever.change)
        if lever.kind != "rent":
            assert top is None or (lever.sku, lever.count) != (top.sku, top.count), name
        assert lever.kind in {
            "precision", "kv-cache", "method", "checkpointing", "optimizer",
            "sequences", "context", "budget", "rack", "rent",
        }  # fmt: skip


def test_without_the_scan_there_are_no_levers() -> None:
    decision = advise(REPO / "examples" / "cfd-double-precision.toml", sensitivity=False)
    assert decision.levers == ()


# -- the report: levers first, field names in the appendix -------------------------------


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_the_report_lists_levers_before_the_appendix_of_field_names(fmt: str) -> None:
    decision = _example("cfd-double-precision")
    text = render(decision, fmt)
    assert isinstance(text, str)
    levers = text.index("What would change the recommendation")
    appendix = text.index("Appendix: inputs that would change the recommendation")
    signoff = text.index("Sign-off", appendix)
    assert levers < appendix < signoff
    body = text[levers:appendix]
    assert "hours a month on each card" in body
    assert "workload.vram" not in body and "budget.max" not in body
    assert "workload" in text[appendix:signoff]


def test_the_undecided_method_example_is_sized_as_lora_and_prices_qlora() -> None:
    decision = _example("finetune-method-undecided")
    assert decision.sizing.assumptions[0].startswith("The training method is not decided")
    qlora = _lever(decision, "method")
    assert qlora.inputs == {"workload.model.task": "qlora"}
    assert qlora.current == {"workload.model.task": "unknown"}
    assert qlora.total_usd is not None and qlora.total_usd < decision.picks[0].total_price_usd  # type: ignore[operator]


def test_a_lever_that_still_falls_short_says_so() -> None:
    """demand-beyond-one-host: more budget changes the pick, but 40 replicas still need
    several hosts; the lever must not read as one that serves them all."""
    from gpuadvisor.decision.words import describe_lever

    decision = advise(
        REPO / "examples" / "demand-beyond-one-host.toml",
        evidence=evidence_for("demand-beyond-one-host"),
    )
    budget = next(lever for lever in decision.levers if lever.kind == "budget")
    assert budget.short.startswith("it serves ") and " of 40 jobs" in budget.short
    assert "hosts like this, cost $" in budget.short
    assert budget.short in describe_lever(budget)
