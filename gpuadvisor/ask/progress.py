"""Where a person stands in the questionnaire: the section a question belongs to
(workload, requirements, platform, budget) and "question 7 of about 27".

The count ahead is an estimate, and says so ("about"): it counts the questions that
apply to the answers so far, with the documented defaults for those not given yet, so
an answer that opens or closes a branch changes it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, NamedTuple

from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.question import HARDWARE, Question
from gpuadvisor.ask.questions import QUESTIONS

#: The sections, in the order they come, with the title a page or a terminal shows.
SECTIONS: Final = (
    ("workload", "Workload"),
    ("requirements", "Requirements"),
    ("platform", "Platform"),
    ("budget", "Budget"),
)
SECTION_TITLES: Final = dict(SECTIONS)
#: The section of each profile table; the request's title and requester open the
#: workload section, its closing notes end the budget section.
_BY_TABLE: Final = {
    "workload": "workload",
    "requirements": "requirements",
    "team": "requirements",
    "platform": "platform",
    "budget": "budget",
}
#: The count of identical machines is asked with the jobs it spreads.
_BY_FIELD: Final = {
    "meta.title": "workload",
    "meta.requester": "workload",
    "platform.hosts": "workload",
    "meta.notes": "budget",
}
#: What a group of questions is called where it starts.
GROUP_TITLES: Final = {HARDWARE: "Optional hardware details"}
#: What is said as a group starts.
GROUP_INTROS: Final = {
    HARDWARE: "Optional hardware details: the vendor of the box or IT knows these; for "
    'any you cannot answer, keep "don\'t know" (the usual values are assumed and the '
    "profile says they were not known)."
}


def section_of(question: Question) -> str:
    """The section ``question`` belongs to (a key of :data:`SECTIONS`)."""
    if question.field in _BY_FIELD:
        return _BY_FIELD[question.field]
    return _BY_TABLE[question.field.partition(".")[0]]


class Progress(NamedTuple):
    """Question ``number`` of about ``total``, in ``section`` (its key and title)."""

    number: int
    total: int
    section: str
    title: str
    group: str

    def line(self) -> str:
        """``Question 7 of about 27 · Workload``, as the terminal prints it."""
        where = self.title + (f" · {self.group}" if self.group else "")
        return f"Question {self.number} of about {self.total} · {where}"


def ahead(stated: Mapping[str, Any], after: int, skip: Collection[str] = ()) -> int:
    """Questions after index ``after`` that the answers so far make relevant.

    A question that waits on an answer not given yet (``depends_on``) counts when that
    answer is still to be asked (the question at ``after`` among them); ``skip`` names
    fields that are not asked (a starting profile's, kept as they are).
    """
    answers = Answers(stated)
    coming = {q.field for q in QUESTIONS[max(after, 0) :] if q.field not in skip}
    count = 0
    for question in QUESTIONS[after + 1 :]:
        if question.field in skip:
            continue
        waits = all(answers.known(p) or p in coming for p in question.depends_on)
        if waits and question.when(answers):
            count += 1
    return count


def progress(
    stated: Mapping[str, Any], at: int, answered: int, skip: Collection[str] = ()
) -> Progress:
    """Where the question at index ``at`` stands, ``answered`` questions having been
    answered before it."""
    question = QUESTIONS[at]
    section = section_of(question)
    number = answered + 1
    return Progress(
        number,
        number + ahead(stated, at, skip),
        section,
        SECTION_TITLES[section],
        GROUP_TITLES.get(question.group, ""),
    )
