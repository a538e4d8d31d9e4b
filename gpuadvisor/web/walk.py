"""The questionnaire one page at a time: where a walk through :data:`QUESTIONS` stands,
how one typed answer is checked, and what a page needs to show a question.

``gpuadvisor ask`` runs its questions in one loop (:func:`gpuadvisor.ask.interview`);
a page answers one question per request, so the loop's state is a value here
(:class:`Walk`) that the page carries between requests (:mod:`.tokens`). Every question,
its condition, help, choices and checks come from the questionnaire's data; nothing
here knows a particular question. :func:`check_answer` gives the same values and the
same messages as the command line's ``ask_question`` (``tests/test_web_walk.py`` holds
the two equal over every question and a range of answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, get_origin

from gpuadvisor.ask import (
    QUESTIONS,
    UNSTATED,
    Answers,
    Question,
    as_document,
    field_info,
    show,
)
from gpuadvisor.ask.fields import base_type, is_optional, literal_values
from gpuadvisor.ask.flow import NO_ANSWER, default_answer, details, read_answer, refusal
from gpuadvisor.inputs.profile import Profile, profile_from_data


class _NoDefault:
    """An empty answer is not enough: the question needs one."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()

#: The messages of ``gpuadvisor ask`` (gpuadvisor.ask.flow), word for word.
NEEDS_AN_ANSWER: Final = "This one needs an answer."


class Refused(ValueError):
    """The answer was not accepted; ``message`` says why, as the command line does."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Walk:
    """Where one person's questionnaire stands.

    ``stated``: the answers so far by field path (a starting profile's among them);
    ``at``: the index in ``questions`` of the question shown now, None once every
    question that applies is answered; ``asked``: the questions answered on the page, in
    order (what Back steps through); ``given``: fields the starting profile stated;
    ``review``: whether those are asked again (with their value as the default).
    """

    stated: Mapping[str, Any] = field(default_factory=dict)
    at: int | None = None
    asked: tuple[int, ...] = ()
    given: frozenset[str] = frozenset()
    review: bool = False
    start_name: str = ""
    notes: tuple[str, ...] = ()

    @property
    def question(self) -> Question | None:
        return None if self.at is None else QUESTIONS[self.at]

    def current(self) -> Any:
        """The answer the shown question already has (from Back or the starting
        profile), or NO_DEFAULT."""
        question = self.question
        if question is None or question.field not in self.stated:
            return NO_DEFAULT
        return self.stated[question.field]


#: Answers that name a file on the machine that reads them: never asked on the page, and
#: dropped from an uploaded profile (a visitor must not make the server open a path).
SERVER_PATHS: Final = frozenset({"workload.model.hf_config"})


def begin(
    stated: Mapping[str, Any] | None = None,
    *,
    review: bool = False,
    start_name: str = "",
    notes: tuple[str, ...] = (),
) -> Walk:
    """A new walk, standing on the first question that applies. A starting profile's
    paths to files (``hf_config``) are left out with a note: the page never opens a
    path a visitor names."""
    stated = dict(stated or {})
    for path in SERVER_PATHS & set(stated):
        del stated[path]
        notes = (*notes, f"{path}: left out; the web page reads no file named in a profile")
    walk = Walk(
        stated=stated, given=frozenset(stated), review=review, start_name=start_name, notes=notes
    )
    return _advance(walk, -1)


def _skips(walk: Walk, question: Question) -> bool:
    """Whether a starting profile's answer stands without asking (``ask --from``)."""
    return question.field in walk.given and not walk.review


def _advance(walk: Walk, after: int) -> Walk:
    """Stand on the first question after ``after`` that applies and is not skipped.

    A question passed over because earlier answers no longer make it relevant loses an
    answer given on the page (going Back and choosing "throughput" drops the latency
    target); a starting profile's values are kept, as ``ask --from`` keeps them.
    """
    stated = dict(walk.stated)
    for index in range(after + 1, len(QUESTIONS)):
        question = QUESTIONS[index]
        if not question.applies(Answers(stated)):
            if question.field not in walk.given:
                stated.pop(question.field, None)
            continue
        if _skips(walk, question) or question.field in SERVER_PATHS:
            continue
        return replace(walk, stated=stated, at=index)
    return replace(walk, stated=stated, at=None)


def answer(walk: Walk, text: str) -> Walk:
    """The walk after ``text`` answers the shown question (Refused if not accepted)."""
    question, at = walk.question, walk.at
    if question is None or at is None:
        raise Refused("every question is answered already")
    value = check_answer(question, Answers(walk.stated), walk.current(), text)
    stated = dict(walk.stated)
    if value is UNSTATED:
        stated.pop(question.field, None)
    else:
        stated[question.field] = value
    return _advance(replace(walk, stated=stated, asked=(*walk.asked, at)), at)


def back(walk: Walk) -> Walk:
    """The walk standing on the question answered before this one (or unchanged)."""
    if not walk.asked:
        return walk
    return replace(walk, at=walk.asked[-1], asked=walk.asked[:-1])


def default_of(question: Question, answers: Answers) -> Any:
    """What an empty answer means for a question not answered before: a value,
    UNSTATED, or NO_DEFAULT (as ``ask`` decides it)."""
    found = default_answer(question, answers)
    return NO_DEFAULT if found is NO_ANSWER else found


def check_answer(question: Question, answers: Answers, current: Any, text: str) -> Any:
    """The validated value ``text`` gives the question (UNSTATED: "not known yet").

    The same rules, in the same order, as the command line: empty keeps the current
    answer or takes the default; ``?`` explains; the question's "unknown" word leaves
    the field unstated; anything else is converted and checked against the profile
    field's own type and bounds.
    """
    text = text.strip()
    if text == "?":
        raise Refused(details(question))
    if not text:
        if current is not NO_DEFAULT:
            return current
        default = default_of(question, answers)
        if default is NO_DEFAULT:
            raise Refused(NEEDS_AN_ANSWER)
        return default
    try:
        value, _note = read_answer(question, answers, text)
    except ValueError as exc:
        raise Refused(refusal(question, exc)) from None
    return value


def profile_of(walk: Walk) -> Profile:
    """The validated profile the answers make (InputError naming the field if not)."""
    return profile_from_data(as_document(walk.stated), name=walk.start_name or "the answers")


# -- what a page shows ----------------------------------------------------------------

Kind = Literal["choice", "yes-no", "names", "number", "text"]


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class QuestionView:
    """One question as a page shows it, built from the question's data alone."""

    field: str
    prompt: str
    why: str
    details: str
    kind: Kind
    choices: tuple[Choice, ...]
    #: The choice selected when the page opens (a current answer, else the default).
    selected: str | None
    #: What an empty answer does, in words ("takes the default: 1"; None: it is refused).
    empty_means: str | None
    units: tuple[str, ...]
    optional_number: bool


def kind_of(question: Question) -> Kind:
    annotation = field_info(question.field).annotation
    if literal_values(annotation):
        return "choice"
    base = base_type(annotation)
    if base is bool:
        return "yes-no"
    if get_origin(base) is tuple:
        return "names"
    if base in (int, float):
        return "number"
    return "text"


def view_of(walk: Walk) -> QuestionView | None:
    question = walk.question
    if question is None:
        return None
    kind = kind_of(question)
    annotation = field_info(question.field).annotation
    choices: tuple[Choice, ...] = ()
    if kind == "choice":
        labels = dict(question.choices)
        choices = tuple(Choice(v, labels.get(v, "")) for v in literal_values(annotation))
        if question.unknown_answer is not None:
            choices += (Choice(question.unknown_answer, "not decided yet"),)
    elif kind == "yes-no":
        choices = (Choice("yes", ""), Choice("no", ""))
    current = walk.current()
    default = default_of(question, Answers(walk.stated))
    shown = current if current is not NO_DEFAULT else default
    if shown is NO_DEFAULT:
        selected, empty_means = None, None
    elif shown is UNSTATED:
        selected = question.unknown_answer
        empty_means = f"takes the default: {question.unknown_answer}"
    else:
        selected = show(shown)
        verb = "keeps the current answer" if current is not NO_DEFAULT else "takes the default"
        empty_means = f"{verb}: {selected}"
    return QuestionView(
        field=question.field,
        prompt=question.prompt,
        why=question.why,
        details=details(question),
        kind=kind,
        choices=choices,
        selected=selected,
        empty_means=empty_means,
        units=question.units,
        optional_number=kind == "number" and is_optional(annotation),
    )


@dataclass(frozen=True)
class Summary:
    prompt: str
    answer: str
    source: str


def summary_of(walk: Walk) -> tuple[Summary, ...]:
    """Every stated answer, in question order, with where it came from."""
    rows = []
    for question in QUESTIONS:
        if question.field in walk.stated:
            source = "starting profile" if question.field in walk.given else "answered here"
            rows.append(Summary(question.prompt, show(walk.stated[question.field]), source))
    return tuple(rows)
