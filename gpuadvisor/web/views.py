"""What a page shows of a walk: the question (prompt, help, choices, what an empty
answer does, where it stands) and the answers so far, each from the questions' data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_origin

from gpuadvisor.ask import QUESTIONS, UNSTATED, Answers, Question, field_info, show
from gpuadvisor.ask.fields import base_type, is_optional, literal_values
from gpuadvisor.ask.flow import accepts_unknown
from gpuadvisor.ask.progress import GROUP_INTROS, SECTIONS, Progress, section_of
from gpuadvisor.ask.units import DONT_KNOW
from gpuadvisor.web.walk import NO_DEFAULT, Walk, default_of, progress_of

Kind = Literal["choice", "yes-no", "names", "number", "text", "memory"]

#: The memory question: a number, or "describe the model" (one choice on the page).
MEMORY: Final = "workload.vram_need_gib"
#: What the page sends for "describe the model instead".
DESCRIBE: Final = "describe"


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    current: bool


@dataclass(frozen=True)
class QuestionView:
    """One question as a page shows it, built from the question's data alone."""

    field: str
    prompt: str
    #: A line under the prompt for the answers so far ("Count them over all 5 machines").
    aside: str
    why: str
    #: What the profile field means (its description), for "More about this question".
    details: str
    kind: Kind
    choices: tuple[Choice, ...]
    #: The choice selected when the page opens (a current answer, else the default).
    selected: str | None
    #: What an empty answer does, in words ("takes the default: 1"; None: it is refused).
    empty_means: str | None
    units: tuple[str, ...]
    optional_number: bool
    #: Whether "don't know" is an answer here.
    dont_know: bool
    progress: Progress | None
    sections: tuple[Section, ...]
    #: The group's introduction where a group starts (optional hardware details).
    group_intro: str
    #: Whether the rest of the group can be skipped with "don't know" at once.
    in_group: bool
    #: The memory question: whether "describe the model" is the current answer.
    describing: bool


def kind_of(question: Question) -> Kind:
    if question.field == MEMORY:
        return "memory"
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


def _choices(question: Question, kind: Kind) -> tuple[Choice, ...]:
    annotation = field_info(question.field).annotation
    choices: tuple[Choice, ...] = ()
    if kind == "choice":
        labels = dict(question.choices)
        choices = tuple(Choice(v, labels.get(v, "")) for v in literal_values(annotation))
        if question.unknown_answer is not None:
            choices += (Choice(question.unknown_answer, "not decided yet"),)
    elif kind == "yes-no":
        choices = (Choice("yes", ""), Choice("no", ""))
    dont_know = question.unknown_answer is None and accepts_unknown(question)
    if kind in ("choice", "yes-no") and dont_know:
        choices += (Choice(DONT_KNOW, "leave it open: the usual value is assumed"),)
    return choices


def view_of(walk: Walk) -> QuestionView | None:
    question = walk.question
    if question is None:
        return None
    kind = kind_of(question)
    current = walk.current()
    default = default_of(question, Answers(walk.stated))
    shown = current if current is not NO_DEFAULT else default
    unknown_word = question.unknown_answer or DONT_KNOW
    if shown is NO_DEFAULT:
        selected, empty_means = None, None
    elif shown is UNSTATED:
        selected = unknown_word
        verb = "keeps the current answer" if current is not NO_DEFAULT else "takes the default"
        empty_means = f"{verb}: {unknown_word}"
    else:
        selected = show(shown)
        verb = "keeps the current answer" if current is not NO_DEFAULT else "takes the default"
        empty_means = f"{verb}: {selected}"
    describing = kind == "memory" and MEMORY in walk.stated and walk.stated[MEMORY] is None
    if describing:
        selected, empty_means = DESCRIBE, "keeps the current answer: describe the model"
    place = progress_of(walk)
    starts_group = bool(question.group) and (
        not walk.asked or QUESTIONS[walk.asked[-1]].group != question.group
    )
    return QuestionView(
        field=question.field,
        prompt=question.prompt,
        aside=question.aside_for(Answers(walk.stated)),
        why=question.why,
        details=field_info(question.field).description or "",
        kind=kind,
        choices=_choices(question, kind),
        selected=selected,
        empty_means=empty_means,
        units=question.units,
        optional_number=kind == "number" and is_optional(field_info(question.field).annotation),
        dont_know=accepts_unknown(question),
        progress=place,
        sections=tuple(
            Section(key, title, place is not None and place.section == key)
            for key, title in SECTIONS
        ),
        group_intro=GROUP_INTROS.get(question.group, "") if starts_group else "",
        in_group=bool(question.group),
        describing=describing,
    )


@dataclass(frozen=True)
class Summary:
    field: str
    section: str
    prompt: str
    answer: str
    source: str


def _shown(walk: Walk, path: str) -> str:
    if path in walk.unknown:
        return DONT_KNOW
    value = walk.stated[path]
    if path == MEMORY and value is None:
        return "describe the model (estimated from it)"
    text = show(value) + next((u for end, u in _UNITS if path.endswith(end)), "")
    typed = walk.typed.get(path)
    if typed and "".join(typed.split()).lower() == "".join(text.split()).lower():
        return text  # "650 W" read as 650 W: nothing to say
    return f"{typed} (read as {text})" if typed else text


#: The unit a kept value is shown with beside what was typed ("48 GB (read as 44.7 GiB)").
_UNITS: Final = (("_gib", " GiB"), ("_usd", " US dollars"), ("_w", " W"))


def summary_of(walk: Walk) -> tuple[Summary, ...]:
    """Every answer, in question order, as it was typed, with where it came from."""
    rows = []
    for question in QUESTIONS:
        path = question.field
        if walk.settled(path):
            source = "starting profile" if path in walk.given else "answered here"
            title = dict(SECTIONS)[section_of(question)]
            rows.append(Summary(path, title, question.prompt, _shown(walk, path), source))
    return tuple(rows)
