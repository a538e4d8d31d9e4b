"""The questionnaire one page at a time: where a walk through :data:`QUESTIONS` stands,
how one typed answer is checked, and how one answer is changed afterwards.

``gpuadvisor ask`` runs its questions in one loop (:func:`gpuadvisor.ask.interview`);
a page answers one question per request, so the loop's state is a value here
(:class:`Walk`) that the page carries between requests (:mod:`.tokens`). Every question,
its condition, help, choices and checks come from the questionnaire's data; nothing
here knows a particular question. :func:`check_answer` gives the same values and the
same messages as the command line's ``ask_question`` (``tests/test_web_walk.py`` holds
the two equal over every question and a range of answers).

Changing one answer (:func:`edit`) stands the walk on that question; once it is
answered, the walk asks only what the change makes relevant and has not been answered
yet, then returns to where the change was asked from (the answers, or the report).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from gpuadvisor.ask import QUESTIONS, UNSTATED, Answers, Question, as_document, show
from gpuadvisor.ask.flow import (
    NO_ANSWER,
    default_answer,
    details,
    drop_replaced,
    read_answer,
    refusal,
)
from gpuadvisor.ask.progress import Progress, progress
from gpuadvisor.ask.units import DONT_KNOW
from gpuadvisor.inputs.profile import Profile, profile_from_data


class _NoDefault:
    """An empty answer is not enough: the question needs one."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()

#: The messages of ``gpuadvisor ask`` (gpuadvisor.ask.flow), word for word.
NEEDS_AN_ANSWER: Final = "This one needs an answer."
#: Longest typed text a page keeps to show again (an answer is far shorter).
MAX_TYPED_CHARS: Final = 600

Returning = Literal["", "answers", "report"]


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
    ``review``: whether those are asked again (with their value as the default);
    ``unknown``: fields answered "don't know" (left out of the profile, which says so);
    ``typed``: what was typed where it reads differently from the value kept ("48 GB",
    "10k"); ``said``: the note of the last answer's conversion, shown once;
    ``returning``: where a changed answer returns ("answers" or "report"); ``captures``
    and ``capture_names``: the uploaded captures kept for the report (see
    :mod:`.captures`) and the names they are cited by.
    """

    stated: Mapping[str, Any] = field(default_factory=dict)
    at: int | None = None
    asked: tuple[int, ...] = ()
    given: frozenset[str] = frozenset()
    review: bool = False
    start_name: str = ""
    notes: tuple[str, ...] = ()
    unknown: frozenset[str] = frozenset()
    typed: Mapping[str, str] = field(default_factory=dict)
    said: str = ""
    returning: Returning = ""
    captures: str = ""
    capture_names: tuple[str, ...] = ()

    @property
    def question(self) -> Question | None:
        return None if self.at is None else QUESTIONS[self.at]

    def current(self) -> Any:
        """The answer the shown question already has (from Back, a change or the
        starting profile): a value, UNSTATED for "don't know", or NO_DEFAULT."""
        question = self.question
        if question is None:
            return NO_DEFAULT
        if question.field in self.stated:
            return self.stated[question.field]
        return UNSTATED if question.field in self.unknown else NO_DEFAULT

    def settled(self, path: str) -> bool:
        """Whether ``path`` has an answer: a value, "don't know", or a starting
        profile's value that stands without asking."""
        return path in self.stated or path in self.unknown


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
    """Stand on the next question after ``after`` that applies and is not skipped.

    A question passed over because earlier answers no longer make it relevant loses an
    answer given on the page (going Back and choosing "throughput" drops the latency
    target); a starting profile's values are kept, as ``ask --from`` keeps them. While
    an answer is being changed (``returning``), questions already answered are passed
    over too: only what the change makes relevant is asked.
    """
    stated = dict(walk.stated)
    unknown = set(walk.unknown)
    for index in range(after + 1, len(QUESTIONS)):
        question = QUESTIONS[index]
        if not question.applies(Answers(stated)):
            if question.field not in walk.given:
                stated.pop(question.field, None)
                unknown.discard(question.field)
            continue
        if _skips(walk, question) or question.field in SERVER_PATHS:
            continue
        if walk.returning and (question.field in stated or question.field in unknown):
            continue
        return replace(walk, stated=stated, unknown=frozenset(unknown), at=index)
    return replace(walk, stated=stated, unknown=frozenset(unknown), at=None)


def answer(walk: Walk, text: str) -> Walk:
    """The walk after ``text`` answers the shown question (Refused if not accepted)."""
    question, at = walk.question, walk.at
    if question is None or at is None:
        raise Refused("every question is answered already")
    value, note = check_answer(question, Answers(walk.stated), walk.current(), text)
    stated, unknown, typed = dict(walk.stated), set(walk.unknown), dict(walk.typed)
    path = question.field
    typed.pop(path, None)
    if value is UNSTATED:
        stated.pop(path, None)
        unknown.add(path)
    else:
        stated[path] = value
        unknown.discard(path)
        written = " ".join(text.split())
        if written and written.lower() != " ".join(show(value).split()).lower():
            typed[path] = written[:MAX_TYPED_CHARS]
        left_out = drop_replaced(question, value, stated)
        if value:  # what it stands in for is neither stated nor assumed now
            unknown.difference_update(p for p, _ in question.replaces)
        note = " ".join(n for n in (note, left_out) if n) or None
    moved = replace(
        walk,
        stated=stated,
        unknown=frozenset(unknown),
        typed=typed,
        asked=(*walk.asked, at),
        said=note or "",
    )
    return _advance(moved, at)


def skip_group(walk: Walk) -> Walk:
    """The walk after "don't know" answers the shown question and every one after it in
    its group (the optional hardware details), each as if answered on its page."""
    question = walk.question
    if question is None or not question.group:
        return walk
    group = question.group
    said = []
    while walk.question is not None and walk.question.group == group:
        walk = answer(walk, DONT_KNOW)
        said.append(walk.said)
    return replace(walk, said=" ".join(s for s in said if s))


def back(walk: Walk) -> Walk:
    """The walk standing on the question answered before this one (or unchanged)."""
    if not walk.asked:
        return walk
    return replace(walk, at=walk.asked[-1], asked=walk.asked[:-1], said="")


def edit(walk: Walk, path: str, returning: Returning) -> Walk:
    """The walk standing on the question of ``path``, to change its answer; once that
    is answered, the walk asks what the change makes relevant, then returns to
    ``returning``. A field the answers make irrelevant leaves the walk unchanged."""
    for index, question in enumerate(QUESTIONS):
        if question.field == path and question.applies(Answers(walk.stated)):
            return replace(walk, at=index, returning=returning, said="")
    return walk


def finished(walk: Walk) -> Walk:
    """The same answers, standing on none of the questions (the answers page)."""
    return replace(walk, at=None, said="", returning="")


def progress_of(walk: Walk) -> Progress | None:
    """ "Question 7 of about 27 · Workload" for the question shown (None on the answers
    page)."""
    if walk.at is None:
        return None
    skip = walk.given if not walk.review else frozenset()
    return progress(walk.stated, walk.at, len(walk.asked), skip)


def default_of(question: Question, answers: Answers) -> Any:
    """What an empty answer means for a question not answered before: a value,
    UNSTATED, or NO_DEFAULT (as ``ask`` decides it)."""
    found = default_answer(question, answers)
    return NO_DEFAULT if found is NO_ANSWER else found


def check_answer(
    question: Question, answers: Answers, current: Any, text: str
) -> tuple[Any, str | None]:
    """The validated value ``text`` gives the question (UNSTATED: "not known yet"),
    and the note of a conversion ("Read 48 GB as 44.7 GiB") when one was made.

    The same rules, in the same order, as the command line: empty keeps the current
    answer or takes the default; ``?`` explains; "don't know" leaves the field open
    where the question allows it; anything else is converted and checked against the
    profile field's own type and bounds.
    """
    text = text.strip()
    if text == "?":
        raise Refused(details(question))
    if not text:
        if current is not NO_DEFAULT:
            return current, None
        default = default_of(question, answers)
        if default is NO_DEFAULT:
            raise Refused(NEEDS_AN_ANSWER)
        return default, None
    try:
        return read_answer(question, answers, text)
    except ValueError as exc:
        raise Refused(refusal(question, exc)) from None


def profile_of(walk: Walk) -> Profile:
    """The validated profile the answers make (InputError naming the field if not)."""
    return profile_from_data(as_document(walk.stated), name=walk.start_name or "the answers")
