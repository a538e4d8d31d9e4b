"""The web page's questionnaire logic: the same questions, conditions, values and
messages as ``gpuadvisor ask``, one answer per request; and the signed state a page
carries between requests.

The oracle for every answer is the command line's own ``ask_question``, driven through
a dialogue that gives one line and then ends.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuadvisor.ask import QUESTIONS, UNSTATED, Answers, Question, ask_question, field_info
from gpuadvisor.ask import flow as cli_flow
from gpuadvisor.ask.fields import literal_values
from gpuadvisor.ask.flow import accepts_unknown
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.examples import profile_text
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.web import views
from gpuadvisor.web import walk as steps
from gpuadvisor.web.tokens import Signer, StaleToken
from gpuadvisor.web.uploads import shown_name

#: Typed answers tried on every question: empty, help, the unknown word, numbers with
#: and without units, out of range, not numbers, choices by name and number, typos.
TEXTS = (
    "", "?", "unknown", "2", "40 GB", "-4", "lots", "1e999", "2.5", "$25,000", "15,000",
    "yes", "Y", "maybe", "no", "none", "training", "trainng", "12", "pcie 4",
    "front-to-back", "CAD App, Other", "x" * 300,
)  # fmt: skip

#: Earlier answers the questions are asked after (the suggestion for rack airflow
#: depends on them).
CONTEXTS: tuple[dict[str, Any], ...] = (
    {},
    {"workload.kind": "inference", "platform.chassis": "rack-2u"},
)


class _OneLine:
    """A dialogue that answers once, then ends (the command line's end of input)."""

    def __init__(self, line: str) -> None:
        self.line: str | None = line
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, prompt: str) -> str | None:
        line, self.line = self.line, None
        return line


def cli_outcome(question: Question, stated: dict[str, Any], current: Any, text: str) -> Any:
    """("value", v) or ("refused", message) from the command line's ask_question."""
    dialogue = _OneLine(text)
    try:
        value = ask_question(dialogue, question, Answers(stated), current)
    except InputError:
        return ("refused", dialogue.said[-1].strip())
    return ("value", value)


def web_outcome(question: Question, stated: dict[str, Any], current: Any, text: str) -> Any:
    try:
        return ("value", steps.check_answer(question, Answers(stated), current, text)[0])
    except steps.Refused as refused:
        return ("refused", refused.message)


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.field)
def test_every_answer_gets_the_value_or_message_the_command_line_gives(question: Question) -> None:
    for stated in CONTEXTS:
        currents: list[tuple[Any, Any]] = [(cli_flow.NO_ANSWER, steps.NO_DEFAULT)]
        accepted = cli_outcome(question, stated, cli_flow.NO_ANSWER, "2")
        if accepted[0] == "value" and accepted[1] is not UNSTATED:
            currents.append((accepted[1], accepted[1]))
        for cli_current, web_current in currents:
            for text in TEXTS:
                expected = cli_outcome(question, stated, cli_current, text)
                assert web_outcome(question, stated, web_current, text) == expected, text


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.field)
def test_every_question_is_shown_from_its_data(question: Question) -> None:
    index = QUESTIONS.index(question)
    view = views.view_of(steps.Walk(at=index))
    assert view is not None
    assert (view.field, view.prompt, view.why) == (question.field, question.prompt, question.why)
    values = literal_values(field_info(question.field).annotation)
    if values:
        assert view.kind == "choice"
        if question.unknown_answer:
            extra: tuple[str, ...] = (question.unknown_answer,)
        else:
            extra = ("don't know",) if accepts_unknown(question) else ()
        assert tuple(c.value for c in view.choices) == (*values, *extra)
        labels = dict(question.choices)
        assert all(c.label == labels.get(c.value, c.label) for c in view.choices)
    assert view.details == (field_info(question.field).description or "")


def _walk_through(answers: dict[str, str], walk: steps.Walk | None = None) -> steps.Walk:
    walk = walk or steps.begin()
    for _ in range(200):
        if walk.question is None:
            return walk
        walk = steps.answer(walk, answers.get(walk.question.field, ""))
    raise AssertionError("no end")


def _fields(walk: steps.Walk) -> list[str]:
    return [QUESTIONS[i].field for i in walk.asked]


REQUIRED = {
    "workload.kind": "inference",
    "workload.objective": "latency",
    "workload.vram_need_gib": "40",
}


def test_conditional_questions_appear_as_earlier_answers_make_them_relevant() -> None:
    latency = _walk_through(REQUIRED)
    throughput = _walk_through({**REQUIRED, "workload.objective": "throughput"})
    assert "workload.latency_slo_ms" in _fields(latency)
    assert "workload.latency_slo_ms" not in _fields(throughput)
    assert "platform.airflow" not in _fields(latency)  # chassis left unknown
    rack = _walk_through({**REQUIRED, "platform.chassis": "rack-2u"})
    assert "platform.airflow" in _fields(rack)
    assert rack.stated["platform.airflow"] == "front-to-back"  # the rack suggestion


def test_the_walk_asks_in_the_command_lines_order() -> None:
    class Recording(_OneLine):
        def __init__(self) -> None:
            super().__init__("")
            self.asked: list[str] = []
            self.prompts = {q.prompt: q.field for q in QUESTIONS}

        def say(self, text: str) -> None:
            if text in self.prompts:
                self.asked.append(self.prompts[text])

        def ask(self, prompt: str) -> str | None:
            return {**REQUIRED, "platform.chassis": "workstation"}.get(self.asked[-1], "")

    dialogue = Recording()
    cli_profile = cli_flow.interview(dialogue)
    walk = _walk_through({**REQUIRED, "platform.chassis": "workstation"})
    assert _fields(walk) == dialogue.asked
    assert steps.profile_of(walk) == cli_profile


def test_back_re_asks_with_the_current_answer_and_drops_answers_no_longer_relevant() -> None:
    walk = steps.begin()
    while walk.question is not None and walk.question.field != "workload.latency_slo_ms":
        walk = steps.answer(walk, REQUIRED.get(walk.question.field, ""))
    walk = steps.answer(walk, "2000")
    assert walk.stated["workload.latency_slo_ms"] == 2000
    walk = steps.back(steps.back(walk))  # to the objective
    assert walk.question is not None and walk.question.field == "workload.objective"
    view = views.view_of(walk)
    assert view is not None and view.selected == "latency"
    assert view.empty_means == "keeps the current answer: latency"
    walk = steps.answer(walk, "throughput")
    assert "workload.latency_slo_ms" not in walk.stated
    assert walk.question is not None and walk.question.field != "workload.latency_slo_ms"


def test_a_starting_profile_is_asked_only_what_it_leaves_open_unless_reviewed() -> None:
    start = {"workload.kind": "training", "workload.objective": "throughput"}
    walk = steps.begin(start, start_name="partial.toml")
    first = walk.question
    assert first is not None and first.field == "meta.title"
    done = _walk_through({"workload.vram_need_gib": "20"}, walk)
    assert "workload.kind" not in _fields(done)
    assert "workload.vram_need_gib" in _fields(done)
    reviewed = steps.begin(start, review=True)
    while reviewed.question is not None and reviewed.question.field != "workload.kind":
        reviewed = steps.answer(reviewed, "")
    view = views.view_of(reviewed)
    assert view is not None and view.selected == "training"


def test_a_refused_answer_leaves_the_walk_where_it_was() -> None:
    walk = steps.begin()
    while walk.question is not None and walk.question.field != "workload.vram_need_gib":
        walk = steps.answer(walk, REQUIRED.get(walk.question.field, ""))
    with pytest.raises(steps.Refused, match="answer with a number"):
        steps.answer(walk, "lots")
    # GB are decimal, as the command line reads them: 48 GB = 44.7 GiB.
    assert steps.answer(walk, "48 GB").stated["workload.vram_need_gib"] == pytest.approx(
        44.7, abs=0.01
    )


# -- the signed state --------------------------------------------------------------


def test_a_walk_round_trips_through_its_token() -> None:
    signer = Signer()
    walk = _walk_through({**REQUIRED, "requirements.isv_apps": "A, B", "meta.title": "é <b>"})
    again = signer.unpack_walk(signer.pack_walk(walk))
    assert again == walk
    assert steps.profile_of(again) == steps.profile_of(walk)


def test_tokens_from_another_process_changed_or_for_another_purpose_are_refused() -> None:
    signer = Signer()
    token = signer.pack_walk(steps.begin())
    with pytest.raises(StaleToken):
        Signer().unpack_walk(token)  # another process: another key
    body, _, mac = token.partition(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    for bad in (f"{flipped}.{mac}", f"{body}.{mac[::-1]}", "", "x", "é.é", token + "x"):
        with pytest.raises(StaleToken):
            signer.unpack_walk(bad)
    with pytest.raises(StaleToken):
        signer.unpack_decision(token)  # a walk is no decision


def test_a_decision_round_trips_through_its_token() -> None:
    from gpuadvisor.pipeline import advise

    from .conftest import REPO

    decision = advise(REPO / "examples" / "llm-latency-endpoint.toml")
    signer = Signer()
    assert signer.unpack_decision(signer.pack_decision(decision)) == decision


def test_the_answers_make_the_profile_the_toml_download_holds() -> None:
    walk = _walk_through({**REQUIRED, "meta.notes": 'say "hi"\\'})
    profile = steps.profile_of(walk)
    assert parse_profile(profile_text(profile)) == profile


# -- names of uploads ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("nvidia-smi-q.txt", "nvidia-smi-q.txt"),
        ("../../etc/passwd", "passwd"),
        ("/etc/hostname", "hostname"),
        ("C:\\captures\\q.txt", "q.txt"),
        ("..", "upload-03"),
        ("", "upload-03"),
        (None, "upload-03"),
        ("a\x00b\u202ec\nd.txt", "abcd.txt"),
        ("x" * 500, "x" * 120),
    ],
)
def test_an_upload_is_cited_by_the_last_part_of_its_name_only(sent: str | None, shown: str) -> None:
    assert shown_name(sent, 3) == shown
