"""Answers as buyers type them (issue #31): "don't know" and "unsure", budgets such as
"10k", "$10,000" and "€10000", the memory question as one choice, the optional hardware
details asked together and only of the boxes they mean something for, and where a
question stands ("Question 7 of about 27 · Workload"). The command line and the web
page read answers through the same code, so these hold for both.
"""

from __future__ import annotations

import pytest

from gpuadvisor.ask import QUESTIONS, UNSTATED, Answers, Question, run_interview
from gpuadvisor.ask.flow import read_answer, refusal
from gpuadvisor.ask.progress import SECTIONS, section_of
from gpuadvisor.ask.question import HARDWARE

from .test_ask import MINIMAL, ScriptedDialogue

BY_FIELD = {q.field: q for q in QUESTIONS}


def asked(answers: dict[str, str]) -> ScriptedDialogue:
    dialogue = ScriptedDialogue(answers)
    dialogue.interview = run_interview(dialogue)  # type: ignore[attr-defined]
    return dialogue


def read(field: str, text: str, stated: dict[str, object] | None = None) -> object:
    value, _note = read_answer(BY_FIELD[field], Answers(stated or {}), text)
    return value


def refused(field: str, text: str) -> str:
    question = BY_FIELD[field]
    with pytest.raises(ValueError) as caught:
        read_answer(question, Answers({}), text)
    return refusal(question, caught.value)


# -- "don't know" ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed", ["don't know", "I don't know", "I don\u2019t know.", "Unsure", "not sure", "idk"]
)
def test_dont_know_and_unsure_leave_a_question_with_a_default_open(typed: str) -> None:
    for field in ("workload.interactive", "requirements.lifecycle_years", "platform.pcie_gen"):
        assert read(field, typed) is UNSTATED, field


def test_dont_know_takes_the_suggestion_where_a_question_has_one() -> None:
    assert read("platform.airflow", "unsure", {"platform.chassis": "rack-2u"}) == "front-to-back"


def test_dont_know_is_written_as_not_known_in_the_profile() -> None:
    flow = asked(
        {**MINIMAL, "workload.vram_need_gib": "8", "requirements.lifecycle_years": "unsure"}
    )
    assert "requirements.lifecycle_years" in flow.interview.unknown  # type: ignore[attr-defined]
    assert flow.interview.profile.requirements.lifecycle_years == 3  # type: ignore[attr-defined]


def test_a_question_that_needs_an_answer_refuses_dont_know_naming_what_it_takes() -> None:
    message = refused("workload.kind", "don't know")
    assert message.startswith("Not accepted: this question needs an answer (one of training, ")
    assert "mixed" in message


@pytest.mark.parametrize(
    ("field", "typed", "message"),
    [
        (
            "requirements.fleet_homogeneity",
            "maybe",
            "Not accepted: answer yes or no, or don't know. Please answer again.",
        ),
        (
            "workload.concurrent_jobs",
            "4.5",
            "Not accepted: answer with a whole number, like 2, or don't know. Please answer again.",
        ),
        (
            "requirements.ecc",
            "maybee",
            "Not accepted: 'maybee' is not one of the choices (required, preferred, no), or "
            "don't know. Please answer again.",
        ),
        (
            "workload.vram_need_gib",
            "lots",
            "Not accepted: answer with a number, like 2.5, or describe, to describe the AI "
            "model instead. Please answer again.",
        ),
        (
            "workload.objective",
            "fast",
            "Not accepted: 'fast' is not one of the choices (latency, throughput, correctness, "
            "fleet-simplicity). Please answer again.",
        ),
    ],
)
def test_every_refusal_names_the_words_the_question_accepts(
    field: str, typed: str, message: str
) -> None:
    assert refused(field, typed) == message


# -- money -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("10k", "Read 10k as 10,000 US dollars (gpuadvisor counts money in US dollars)."),
        ("10 K", "Read 10 K as 10,000 US dollars (gpuadvisor counts money in US dollars)."),
        ("$10,000", None),
        ("10,000 USD", None),
        ("10000", "Read 10000 as 10,000 US dollars (gpuadvisor counts money in US dollars)."),
        (
            "€10000",
            "Read €10000 as 10,000 US dollars: gpuadvisor prices cards in US dollars and "
            "converts no currency, so answer in dollars if the exchange rate of the euro "
            "matters.",
        ),
        ("EUR 10,000", None),  # said as for €, checked below
    ],
)
def test_budgets_are_read_as_buyers_write_them_and_the_currency_is_said(
    typed: str, said: str | None
) -> None:
    value, note = read_answer(BY_FIELD["budget.max_usd"], Answers({}), typed)
    assert value == 10_000
    if typed.startswith("EUR"):
        assert note is not None and "converts no currency" in note
    else:
        assert note == said


def test_a_budget_that_is_no_amount_is_refused() -> None:
    assert "answer with a number" in refused("budget.max_usd", "ten grand")
    assert "greater than 0" in refused("budget.max_usd", "-5k")


def test_the_budget_note_is_said_on_the_command_line() -> None:
    flow = asked({**MINIMAL, "workload.vram_need_gib": "8", "budget.max_usd": "€12.5k"})
    assert flow.interview.profile.budget.max_usd == 12_500  # type: ignore[attr-defined]
    assert any("converts no currency" in line for line in flow.said)


# -- the memory question ---------------------------------------------------------------


@pytest.mark.parametrize("typed", ["describe", "Describe the model", "don't know", "unsure"])
def test_the_memory_question_is_a_number_or_a_described_model(typed: str) -> None:
    flow = asked(
        {
            "workload.kind": "inference",
            "workload.objective": "throughput",
            "workload.vram_need_gib": typed,
            "workload.model.name": "llama-3.1-8b",
        }
    )
    assert "workload.model.family" in flow.asked
    assert flow.interview.profile.workload.model is not None  # type: ignore[attr-defined]


# -- the optional hardware details ------------------------------------------------------


def _path(chassis: str, **more: str) -> list[str]:
    return asked(
        {**MINIMAL, "workload.vram_need_gib": "8", "platform.chassis": chassis, **more}
    ).asked


def test_the_optional_hardware_details_are_asked_together_at_the_end_of_the_platform() -> None:
    fields = [q.field for q in QUESTIONS]
    group = [q.field for q in QUESTIONS if q.group == HARDWARE]
    assert set(group) == {
        "platform.psu_w",
        "platform.psu_headroom_w",
        "platform.gpu_slots_total",
        "platform.circuit_w",
        "platform.cpu_sockets",
        "platform.cpu_w",
        "platform.system_w",
        "platform.pcie_gen",
    }
    start = fields.index(group[0])
    assert fields[start : start + len(group)] == group
    assert all(section_of(BY_FIELD[f]) == "platform" for f in group)
    assert section_of(QUESTIONS[start + len(group)]) != "platform"  # they close the section
    for field in group:
        assert BY_FIELD[field].unknown_answer == "don't know"


def test_enter_on_a_hardware_detail_is_dont_know() -> None:
    flow = asked({**MINIMAL, "workload.vram_need_gib": "8", "platform.chassis": "workstation"})
    unknown = set(flow.interview.unknown)  # type: ignore[attr-defined]
    assert {"platform.psu_headroom_w", "platform.pcie_gen", "platform.cpu_sockets"} <= unknown
    assert any(line.startswith("Optional hardware details:") for line in flow.said)


def test_hardware_details_are_not_asked_of_boxes_they_do_not_apply_to() -> None:
    tower, rack = _path("tower"), _path("rack-2u")
    assert "platform.circuit_w" in tower and "platform.circuit_w" not in rack
    assert "platform.cpu_sockets" not in tower and "platform.cpu_sockets" in rack
    single = _path("workstation", **{"platform.gpu_count_max": "1"})
    assert "platform.gpu_slots_total" not in single
    assert "platform.gpu_slots_total" in _path("workstation", **{"platform.gpu_count_max": "4"})


# -- where a question stands -------------------------------------------------------------


def test_every_question_has_a_section_and_the_sections_come_in_order() -> None:
    order = [key for key, _ in SECTIONS]
    assert order == ["workload", "requirements", "platform", "budget"]
    seen = [order.index(section_of(q)) for q in QUESTIONS]
    assert seen == sorted(seen)


@pytest.mark.parametrize("chassis", ["unknown", "tower", "rack-4u"])
def test_each_question_says_its_number_of_about_how_many_and_its_section(chassis: str) -> None:
    flow = asked({**MINIMAL, "workload.vram_need_gib": "8", "platform.chassis": chassis})
    lines = [line for line in flow.said if line.startswith("Question ")]
    assert len(lines) == len(flow.asked)
    for number, (line, field) in enumerate(zip(lines, flow.asked, strict=True), start=1):
        title = dict(SECTIONS)[section_of(BY_FIELD[field])]
        assert line.startswith(f"Question {number} of about "), line
        assert f"· {title}" in line
    # Once the branching answers are in, the estimate is the count itself.
    assert lines[-1] == f"Question {len(lines)} of about {len(lines)} · Budget"


def test_questions_are_data_with_every_new_field_defaulted() -> None:
    plain = Question("meta.title", "p", "w")
    assert (plain.group, plain.reads_unknown, plain.also) == ("", False, "")
