"""The interview loop: each question that applies, asked through a :class:`Dialogue`
(the only I/O), answered, checked and asked again until accepted; an existing profile
as the starting answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol, get_origin

from pydantic import TypeAdapter, ValidationError

from gpuadvisor.ask.convert import converter_for, show
from gpuadvisor.ask.fields import (
    UNSTATED,
    Answers,
    base_type,
    check_value,
    field_info,
    literal_values,
    nested_model,
)
from gpuadvisor.ask.questions import QUESTIONS, Question
from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, SECTIONS, Profile, profile_from_data
from gpuadvisor.inputs.textio import locate_field


class Dialogue(Protocol):
    """Where the questions go and the answers come from."""

    def say(self, text: str) -> None:
        """Show a line of text."""

    def ask(self, prompt: str) -> str | None:
        """Show ``prompt`` and return one answer line, or None at end of input."""


_MISSING: Final = object()

INTRO: Final = (
    "Answer each question and press Enter. An empty answer takes the default shown; "
    "'?' explains a question in more detail."
)


def _default(question: Question, answers: Answers) -> Any:
    """What an empty answer means for a question not answered before (or _MISSING)."""
    if question.unknown_answer is not None:
        return UNSTATED
    if question.suggest is not None:
        suggested = question.suggest(answers)
        if suggested is not None:
            return suggested
    info = field_info(question.field)
    if info.is_required():
        return _MISSING
    return info.get_default(call_default_factory=True)


def _present(dialogue: Dialogue, question: Question, current: Any, default: Any) -> None:
    dialogue.say("")
    dialogue.say(question.prompt)
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
    if current is not _MISSING:
        dialogue.say(f"  Enter keeps the current answer: {show(current)}")
    elif default is UNSTATED:
        dialogue.say(f"  Default: {question.unknown_answer}")
    elif default is not _MISSING:
        dialogue.say(f"  Default: {show(default)}")
    else:
        dialogue.say("  An answer is needed.")


def _details(question: Question) -> str:
    info = field_info(question.field)
    return f"  In the profile this is {question.field}: {info.description or ''}"


def ask_question(dialogue: Dialogue, question: Question, answers: Answers, current: Any) -> Any:
    """The validated answer to one question (UNSTATED for "not known yet").

    A wrong answer is explained and the question asked again; end of input is an
    InputError naming the field that was left without an answer.
    """
    default = _default(question, answers)
    _present(dialogue, question, current, default)
    convert = converter_for(question)
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise InputError(
                "input ended before the questionnaire was complete; nothing was written",
                field=question.field,
                hint="give one answer per line (an empty line takes the default)",
            )
        text = line.strip()
        if text == "?":
            dialogue.say(_details(question))
            continue
        if not text:
            if current is not _MISSING:
                return current
            if default is not _MISSING:
                return default
            dialogue.say("  This one needs an answer.")
            continue
        if question.unknown_answer is not None and text.lower() == question.unknown_answer:
            return UNSTATED
        try:
            return check_value(question.field, convert(text))
        except ValueError as exc:
            dialogue.say(f"  Not accepted: {exc}. Please answer again.")


def starting_answers(
    document: Mapping[str, Any], *, name: str, text: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The answers an existing (possibly partial) profile already gives.

    Unknown sections or keys and a wrong schema are errors, as in ``advise``; a value
    the model does not accept is dropped with a note, so its question is asked again.
    Returns the answers keyed by field path and the notes to show.
    """
    stated: dict[str, Any] = {}
    notes: list[str] = []

    def where(*loc: str) -> int | None:
        return locate_field(text, loc) if text is not None else None

    for key, value in document.items():
        if key == "schema":
            if value != PROFILE_SCHEMA:
                raise InputError(
                    f"unsupported schema {value!r}",
                    file=name,
                    line=where("schema"),
                    field="schema",
                    hint=f"this gpuadvisor reads '{PROFILE_SCHEMA}'",
                )
            continue
        if key not in SECTIONS:
            raise InputError(
                "unknown key",
                file=name,
                line=where(key),
                field=key,
                hint=did_you_mean(key, ["schema", *SECTIONS]),
            )
        if not isinstance(value, dict):
            raise InputError(f"expected a table [{key}]", file=name, line=where(key), field=key)
        fields = SECTIONS[key].model_fields
        for field, raw in value.items():
            path = f"{key}.{field}"
            if field not in fields:
                raise InputError(
                    "unknown key",
                    file=name,
                    line=where(key, field),
                    field=path,
                    hint=did_you_mean(field, fields),
                )
            if nested_model(path) is not None and isinstance(raw, dict):
                _nested_answers(stated, notes, path, raw, name=name, where=where)
                continue
            try:
                stated[path] = check_value(path, raw, strict=True)
            except ValueError as exc:
                notes.append(f"{name}: {path}: not accepted ({exc}); it is asked again.")
    if any(path.startswith("workload.model.") for path in stated):
        # A described model stands in for the memory need, as in a profile file.
        stated.setdefault("workload.vram_need_gib", None)
    return stated, notes


def _nested_answers(
    stated: dict[str, Any],
    notes: list[str],
    path: str,
    table: Mapping[str, Any],
    *,
    name: str,
    where: Any,
) -> None:
    """The answers a nested table (``[workload.model]``) gives, one per field."""
    fields = nested_model(path).model_fields
    for field, raw in table.items():
        leaf = f"{path}.{field}"
        if field not in fields:
            raise InputError(
                "unknown key",
                file=name,
                line=where(*leaf.split(".")),
                field=leaf,
                hint=did_you_mean(field, fields),
            )
        try:
            stated[leaf] = check_value(leaf, raw, strict=True)
        except ValueError as exc:
            notes.append(f"{name}: {leaf}: not accepted ({exc}); it is asked again.")


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


def interview(
    dialogue: Dialogue,
    *,
    start: Mapping[str, Any] | None = None,
    start_name: str = "",
    start_text: str | None = None,
    review: bool | None = None,
    questions: tuple[Question, ...] = QUESTIONS,
) -> Profile:
    """Ask every question that applies and return the validated profile.

    With ``start`` (the parsed document of an existing profile), questions it already
    answers are skipped unless ``review`` is true; when ``review`` is None and there is
    something to review, the dialogue asks whether to go through those answers too, and
    then each of them offers "keep the current answer" as its default.
    """
    stated: dict[str, Any] = {}
    if start is not None:
        stated, notes = starting_answers(start, name=start_name, text=start_text)
        for note in notes:
            dialogue.say(note)
    dialogue.say(INTRO)
    if stated and review is None:
        review = _ask_review(dialogue, len(stated), start_name or "the starting profile")
    for question in questions:
        answers = Answers(stated)
        if not question.when(answers):
            continue
        current = stated.get(question.field, _MISSING)
        if current is not _MISSING and not review:
            continue
        value = ask_question(dialogue, question, answers, current)
        if value is UNSTATED:
            stated.pop(question.field, None)
        else:
            stated[question.field] = value
    return profile_from_data(as_document(stated), name=start_name or "<answers>")


def _ask_review(dialogue: Dialogue, count: int, name: str) -> bool:
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
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise InputError(
                "input ended before the questionnaire was complete; nothing was written",
                hint="give one answer per line (an empty line takes the default)",
            )
        if not line.strip():
            return False
        try:
            return bool(_YES_NO.validate_python(line.strip().lower()))
        except ValidationError:
            dialogue.say("  Not accepted: answer yes or no. Please answer again.")


_YES_NO: Final = TypeAdapter(bool)
