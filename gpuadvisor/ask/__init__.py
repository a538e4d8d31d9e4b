"""The questionnaire behind ``gpuadvisor ask``: the questions are data, the flow is pure.

:data:`QUESTIONS` (:mod:`.questions`) lists one :class:`Question` per profile field, in
the order they are asked, each with a plain-language prompt, a one-line "why it matters
/ what to answer when unsure", and a predicate over the answers so far that decides
whether it applies. :func:`interview` (:mod:`.flow`) walks them through a
:class:`Dialogue` (the only I/O it does), checks every answer with the field's own
pydantic type and constraints as the profile file would (:mod:`.fields`, after
:mod:`.convert` has turned the typed text into a value), and returns a validated
:class:`~gpuadvisor.inputs.profile.Profile` (:func:`run_interview`: with the fields left
unknown); :func:`profile_document` (:mod:`.document`) writes it as commented TOML, the
unknown fields as commented-out lines that say so. ``cli`` supplies the terminal (or
stdin) side of the dialogue and writes the result.
"""

from __future__ import annotations

from gpuadvisor.ask.convert import converter_for, show
from gpuadvisor.ask.document import ASK_HEADER, profile_document
from gpuadvisor.ask.fields import UNSTATED, Answers, Predicate, always, check_value, field_info
from gpuadvisor.ask.flow import (
    INTRO,
    SCRIPTED_REFUSALS,
    Dialogue,
    Interview,
    as_document,
    ask_question,
    interview,
    run_interview,
)
from gpuadvisor.ask.questions import QUESTIONS, Converter, Question
from gpuadvisor.ask.start import starting_answers

__all__ = [
    "ASK_HEADER",
    "INTRO",
    "QUESTIONS",
    "SCRIPTED_REFUSALS",
    "UNSTATED",
    "Answers",
    "Converter",
    "Dialogue",
    "Interview",
    "Predicate",
    "Question",
    "always",
    "as_document",
    "ask_question",
    "check_value",
    "converter_for",
    "field_info",
    "interview",
    "profile_document",
    "run_interview",
    "show",
    "starting_answers",
]
