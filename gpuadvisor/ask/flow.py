"""The interview loop: each question that applies, asked through a :class:`Dialogue`
(the only I/O), answered, checked and asked again until accepted; an existing profile
as the starting answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple, Protocol, get_origin

from pydantic import TypeAdapter, ValidationError

from gpuadvisor.ask.convert import converter_for, show
from gpuadvisor.ask.fields import (
    UNSTATED,
    Answers,
    base_type,
    check_value,
    field_info,
    literal_values,
)
from gpuadvisor.ask.progress import GROUP_INTROS, progress
from gpuadvisor.ask.questions import QUESTIONS, Question
from gpuadvisor.ask.start import read_start
from gpuadvisor.ask.units import DONT_KNOW, Converted, is_unknown
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, Profile, profile_from_data


class Dialogue(Protocol):
    """Where the questions go and the answers come from."""

    def say(self, text: str) -> None:
        """Show a line of text."""

    def ask(self, prompt: str) -> str | None:
        """Show ``prompt`` and return one answer line, or None at end of input."""


#: No answer yet, and no default: the question needs one.
NO_ANSWER: Final = object()

#: Answers from a script (stdin that is not a terminal) are refused at most this many
#: times in a row for one question before the run stops: a script cannot read the
#: complaint and correct itself, and `yes ''` would otherwise be asked forever.
SCRIPTED_REFUSALS: Final = 3

_END_HINT: Final = "give one answer per line (an empty line takes the default)"

INTRO: Final = (
    "Answer each question and press Enter. An empty answer takes the default shown; "
    "'?' explains a question in more detail; \"don't know\" leaves an answer open where "
    "the question has a default."
)


def default_answer(question: Question, answers: Answers) -> Any:
    """What an empty answer means for a question not answered before: a value, UNSTATED,
    or NO_ANSWER when the question needs one (the command line and the web page)."""
    if question.unknown_answer is not None:
        return UNSTATED
    if question.suggest is not None:
        suggested = question.suggest(answers)
        if suggested is not None:
            return suggested
    info = field_info(question.field)
    if info.is_required():
        return NO_ANSWER
    return info.get_default(call_default_factory=True)


def _present(
    dialogue: Dialogue, question: Question, answers: Answers, current: Any, default: Any
) -> None:
    dialogue.say("")
    dialogue.say(question.prompt)
    if aside := question.aside_for(answers):
        dialogue.say(f"  {aside}")
    dialogue.say(f"  Why: {question.why}")
    info = field_info(question.field)
    values = literal_values(info.annotation)
    if values:
        labels = dict(question.choices)
        width = max(len(v) for v in values)
        for number, value in enumerate(values, start=1):
            label = labels.get(value, "")
            dialogue.say(f"  {number:>2}) {value:<{width}}  {label}".rstrip())
        if question.unknown_answer is not None:
            dialogue.say(f"      {question.unknown_answer:<{width}}  not decided yet")
    elif base_type(info.annotation) is bool:
        dialogue.say("  Answer yes or no.")
    elif get_origin(base_type(info.annotation)) is tuple:
        dialogue.say("  Separate several names with commas; 'none' for no names.")
    if current is not NO_ANSWER:
        dialogue.say(f"  Enter keeps the current answer: {show(current)}")
    elif default is UNSTATED:
        dialogue.say(f"  Default: {question.unknown_answer or DONT_KNOW}")
    elif default is not NO_ANSWER:
        dialogue.say(f"  Default: {show(default)}")
    else:
        dialogue.say("  An answer is needed.")


def details(question: Question) -> str:
    """What ``?`` shows: the profile field and its description."""
    info = field_info(question.field)
    return f"In the profile this is {question.field}: {info.description or ''}"


def _stop(question: Question, message: str, hint: str | None = None) -> InputError:
    """The run ends at ``question``: exit 2 naming the field and the question itself."""
    return InputError(
        f'{message}, at the question "{question.prompt}"; nothing was written',
        field=question.field,
        hint=hint,
    )


def _joined(reason: str) -> str:
    """``reason`` ready to be followed by another sentence (no "?." or "..")."""
    return reason if reason.endswith((".", "?", "!")) else reason + "."


def accepts_unknown(question: Question) -> bool:
    """Whether "don't know" is an answer to ``question`` (it is, unless the field is
    required; the memory question reads it itself: describe the model)."""
    return question.unknown_answer is not None or not field_info(question.field).is_required()


def accepted_words(question: Question) -> str:
    """What a question takes, in words, for a refusal that names them."""
    info = field_info(question.field)
    values = literal_values(info.annotation)
    base = base_type(info.annotation)
    if values:
        return "one of " + ", ".join(values)
    if base is bool:
        return "yes or no"
    if base in (int, float):
        return "a number"
    return "a few words"


def read_answer(question: Question, answers: Answers, text: str) -> tuple[Any, str | None]:
    """A typed answer (not empty, not ``?``) read for ``question``: the value (UNSTATED
    for "not known") and the note of a conversion, or ValueError with the reason. The
    command line and the web page read every answer through this.

    "don't know", "unsure" and their kin (:func:`~gpuadvisor.ask.units.is_unknown`)
    leave the field open, or take the question's suggestion where it has one; a
    question that needs an answer refuses them, naming what it takes.
    """
    if question.unknown_answer is not None and text.strip().lower() == question.unknown_answer:
        return UNSTATED, None
    if is_unknown(text) and not question.reads_unknown:
        if not accepts_unknown(question):
            raise ValueError(f"this question needs an answer ({accepted_words(question)})")
        if question.suggest is not None:
            suggested = question.suggest(answers)
            if suggested is not None:
                return suggested, None
        return UNSTATED, None
    value, note = parse_answer(question, text)
    problem = question.check(value, answers) if question.check is not None else None
    if problem:
        raise ValueError(problem)
    return value, note


def drop_replaced(question: Question, value: Any, stated: dict[str, Any]) -> str | None:
    """Take out of ``stated`` the answers a stated value of ``question`` stands in for
    (:attr:`Question.replaces`: a profile holds one of them, or ``advise`` refuses it);
    what was taken out, in words, or None."""
    if value is UNSTATED or not value:
        return None
    gone = [(words, stated.pop(path)) for path, words in question.replaces if path in stated]
    if not gone:
        return None
    said = "; ".join(f"{words} ({show(was)})" for words, was in gone)
    return f"Left out the earlier answer for {said}: this answer stands in for it."


def parse_answer(question: Question, text: str) -> tuple[Any, str | None]:
    """A typed answer converted and checked against the profile field: the value, and
    the note of a unit conversion ("24 GB = 22.35 GiB") when one was made. A refused
    answer raises ValueError with the reason. The questionnaire on the command line and
    the web page both read answers through this."""
    raw = converter_for(question)(text)
    note = None
    if isinstance(raw, Converted):
        raw, note = raw.value, raw.note
    return check_value(question.field, raw), note


def refusal(question: Question, exc: ValueError) -> str:
    """What a refused answer is told, on the command line and on the web page: why,
    and what else the question takes ("or don't know")."""
    reason = str(exc)
    other = question.also or (DONT_KNOW if accepts_unknown(question) else "")
    if other and reason.endswith("?"):
        reason = f"{reason} Or {other}"
    elif other:
        reason = f"{reason.rstrip('.')}, or {other}"
    return f"Not accepted: {_joined(reason)} Please answer again."


def ask_question(
    dialogue: Dialogue,
    question: Question,
    answers: Answers,
    current: Any,
    *,
    scripted: bool = False,
    earlier: str | None = None,
) -> Any:
    """The validated answer to one question (UNSTATED for "not known yet").

    A wrong answer is explained and the question asked again. End of input is an
    InputError naming the field and the question left without an answer. With
    ``scripted`` (answers from a file or a pipe, which cannot read the complaints), an
    empty line where an answer is needed ends the run at once and a wrong answer ends
    it after :data:`SCRIPTED_REFUSALS` tries, so a script never loops. ``earlier`` is
    why a starting file's value for this field was not accepted, said if the run ends.
    """
    default = default_answer(question, answers)
    _present(dialogue, question, answers, current, default)
    refusals = 0
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise _stop(
                question,
                "input ended before the questionnaire was complete",
                hint=_END_HINT,
            )
        text = line.strip()
        if text == "?":
            dialogue.say(f"  {details(question)}")
            continue
        if not text:
            if current is not NO_ANSWER:
                return current
            if default is not NO_ANSWER:
                return default
            if scripted:
                raise _stop(
                    question,
                    "an empty answer where one is needed (this question has no default)",
                    hint=f"the starting file's value was not accepted: {earlier}"
                    if earlier
                    else "answer it on its line of the input, or give it in the --from file",
                )
            dialogue.say("  This one needs an answer.")
            continue
        try:
            value, note = read_answer(question, answers, text)
        except ValueError as exc:
            refusals += 1
            if scripted and refusals >= SCRIPTED_REFUSALS:
                raise _stop(
                    question,
                    f"{refusals} answers in a row were not accepted (the last: {text!r}: {exc})",
                    hint=_END_HINT,
                ) from None
            dialogue.say(f"  {refusal(question, exc)}")
            continue
        if note is not None:
            dialogue.say(f"  {note}")
        return value


def as_document(stated: Mapping[str, Any]) -> dict[str, Any]:
    """Answers keyed by field path, as the nested data a profile file holds."""
    document: dict[str, Any] = {"schema": PROFILE_SCHEMA}
    for path, value in stated.items():
        *tables, name = path.split(".")
        target = document
        for table in tables:  # a section, then a nested table such as [workload.model]
            target = target.setdefault(table, {})
        target[name] = value
    return document


class Interview(NamedTuple):
    """What an interview found: the validated profile, and the fields left unknown.

    ``unknown`` lists the fields whose question was answered with its unknown answer,
    and those that depend on one of them (:attr:`Question.depends_on`), that no
    starting file states either: the profile holds the model's defaults for them, and
    the written document says they were not known.
    """

    profile: Profile
    unknown: tuple[str, ...]


def interview(
    dialogue: Dialogue,
    *,
    start: Mapping[str, Any] | None = None,
    start_name: str = "",
    start_text: str | None = None,
    review: bool | None = None,
    questions: tuple[Question, ...] = QUESTIONS,
    scripted: bool = False,
) -> Profile:
    """Ask every question that applies and return the validated profile (see
    :func:`run_interview`)."""
    return run_interview(
        dialogue,
        start=start,
        start_name=start_name,
        start_text=start_text,
        review=review,
        questions=questions,
        scripted=scripted,
    ).profile


def run_interview(
    dialogue: Dialogue,
    *,
    start: Mapping[str, Any] | None = None,
    start_name: str = "",
    start_text: str | None = None,
    review: bool | None = None,
    questions: tuple[Question, ...] = QUESTIONS,
    scripted: bool = False,
) -> Interview:
    """Ask every question that applies; the validated profile and what stayed unknown.

    With ``start`` (the parsed document of an existing profile), questions it already
    answers are skipped unless ``review`` is true; when ``review`` is None and there is
    something to review, the dialogue asks whether to go through those answers too, and
    then each of them offers "keep the current answer" as its default. ``scripted``:
    the answers come from a script, which never gets a question asked twice for want
    of an answer (see :func:`ask_question`).
    """
    stated: dict[str, Any] = {}
    refused: dict[str, str] = {}
    if start is not None:
        stated, notes, refused = read_start(start, name=start_name, text=start_text)
        for note in notes:
            dialogue.say(note)
    dialogue.say(INTRO)
    if stated and review is None:
        review = _ask_review(
            dialogue, len(stated), start_name or "the starting profile", scripted=scripted
        )
    unknown: list[str] = []
    kept = frozenset(stated) if not review else frozenset()
    answered = 0
    group = ""
    for at, question in enumerate(questions):
        answers = Answers(stated)
        if question.depends_on and not all(answers.known(p) for p in question.depends_on):
            if set(question.depends_on) & set(unknown) and question.field not in stated:
                unknown.append(question.field)
            continue
        if not question.when(answers):
            continue
        current = stated.get(question.field, NO_ANSWER)
        if current is not NO_ANSWER and not review:
            continue
        if questions is QUESTIONS:
            dialogue.say("")
            dialogue.say(progress(stated, at, answered, kept).line())
        if question.group and question.group != group:
            dialogue.say(GROUP_INTROS[question.group])
        group = question.group
        answered += 1
        value = ask_question(
            dialogue,
            question,
            answers,
            current,
            scripted=scripted,
            earlier=refused.get(question.field),
        )
        if value is UNSTATED:
            stated.pop(question.field, None)
            unknown.append(question.field)
        else:
            stated[question.field] = value
            if (left_out := drop_replaced(question, value, stated)) is not None:
                dialogue.say(f"  {left_out}")
    profile = profile_from_data(as_document(stated), name=start_name or "<answers>")
    return Interview(profile, tuple(unknown))


def _ask_review(dialogue: Dialogue, count: int, name: str, *, scripted: bool = False) -> bool:
    """Whether to go through the answers the starting profile already gives."""
    plural = "s" if count != 1 else ""
    dialogue.say("")
    dialogue.say(f"{name} already answers {count} question{plural}. Go through those too?")
    dialogue.say(
        "  Why: answer no to be asked only what is missing; yes shows each answer with "
        "'keep the current answer' as the default."
    )
    dialogue.say("  Answer yes or no.")
    dialogue.say("  Default: no")
    refusals = 0
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise InputError(
                "input ended before the questionnaire was complete, at the question "
                f'"{name} already answers ... Go through those too?"; nothing was written',
                hint=_END_HINT,
            )
        if not line.strip():
            return False
        try:
            return bool(_YES_NO.validate_python(line.strip().lower()))
        except ValidationError:
            refusals += 1
            if scripted and refusals >= SCRIPTED_REFUSALS:
                raise InputError(
                    f"{refusals} answers in a row were not accepted (answer yes or no) at "
                    f'the question "{name} already answers ... Go through those too?"; '
                    "nothing was written",
                    hint=_END_HINT,
                ) from None
            dialogue.say("  Not accepted: answer yes or no. Please answer again.")


_YES_NO: Final = TypeAdapter(bool)
